#include "sweep/reuse_key.h"

#include <doctest/doctest.h>

using namespace sweep;

namespace {

ReuseKeyInputs base() {
  ReuseKeyInputs in;
  in.artifact_digests = {{"compiler", std::string(64, 'a')}};
  in.compile = {"{compiler}", "{input}", "-o", "{output}", "-Oz"};
  in.timeout_ms = 120000;
  in.suite_manifest_hash = std::string(64, 'b');
  in.policy_hash = std::string(64, 'c');
  return in;
}

}  // namespace

TEST_CASE("the reuse key: the same inputs give the same key, each input that changes the objects another") {
  auto key = reuse_key(base());
  CHECK(key.size() == 64);
  CHECK(reuse_key(base()) == key);

  auto bytes = base();
  bytes.artifact_digests["compiler"] = std::string(64, 'd');
  CHECK(reuse_key(bytes) != key);
  auto extra = base();
  extra.artifact_digests["opt"] = std::string(64, 'a');
  CHECK(reuse_key(extra) != key);
  auto policy = base();
  policy.policy_hash = std::string(64, 'e');
  CHECK(reuse_key(policy) != key);
  auto command = base();
  command.compile.back() = "-O2";
  CHECK(reuse_key(command) != key);
  auto prefix = base();
  prefix.ml_flag_prefix = "-mllvm";
  CHECK(reuse_key(prefix) != key);
  auto suite = base();
  suite.suite_manifest_hash = std::string(64, 'f');
  CHECK(reuse_key(suite) != key);
  auto args = base();
  args.module_args_digest = std::string(64, '0');
  CHECK(reuse_key(args) != key);
  auto timeout = base();
  timeout.timeout_ms = 1000;
  CHECK(reuse_key(timeout) != key);
  auto cc1 = base();
  cc1.cc1 = {"{compiler}", "-cc1"};
  CHECK(reuse_key(cc1) != key);
  // An upgraded shared library under the same compiler bytes (a system LLVM).
  auto library = base();
  library.library_digests = {{"libLLVM.so.19.1", std::string(64, '1')}};
  auto upgraded = library;
  upgraded.library_digests.begin()->second = std::string(64, '2');
  CHECK(reuse_key(library) != key);
  CHECK(reuse_key(upgraded) != reuse_key(library));
  // Results that shared agreeing defaults are not taken where every default is to be compiled.
  auto shared = base();
  shared.shared_defaults = true;
  CHECK(reuse_key(shared) != key);

  auto none = base();
  none.artifact_digests.clear();
  CHECK(reuse_key(none).empty());
}

TEST_CASE("the compile command is keyed as configured: artifact paths become their names") {
  std::map<std::string, std::string> a{{"compiler", "/data/cache/abc/gen-1/bin/dwcc"}};
  std::map<std::string, std::string> b{{"compiler", "/data/cache/def/gen-7/bin/dwcc"}};
  std::vector<std::string> argv_a{"/data/cache/abc/gen-1/bin/dwcc", "{input}", "-o", "{output}", "-Oz"};
  std::vector<std::string> argv_b{"/data/cache/def/gen-7/bin/dwcc", "{input}", "-o", "{output}", "-Oz"};
  CHECK(with_artifact_names(argv_a, a) == with_artifact_names(argv_b, b));
  CHECK(with_artifact_names(argv_a, a).front() == "{compiler}");
  // A path inside a word, and a path that is a prefix of another artifact's.
  std::map<std::string, std::string> two{{"clang", "/t/bin/clang"}, {"clangxx", "/t/bin/clang++"}};
  auto words = with_artifact_names({"--driver=/t/bin/clang++", "/t/bin/clang", "x"}, two);
  CHECK(words == std::vector<std::string>{"--driver={clangxx}", "{clang}", "x"});
}

TEST_CASE("the compiler digest names one artifact by its own sha256, several by one digest of all") {
  CHECK(compiler_digest({{"compiler", "abc"}}) == "abc");
  auto two = compiler_digest({{"clang", "abc"}, {"opt", "def"}});
  CHECK(two.size() == 64);
  CHECK(two != compiler_digest({{"clang", "abc"}, {"opt", "xyz"}}));
}
