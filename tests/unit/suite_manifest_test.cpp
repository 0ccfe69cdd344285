// Suite manifests and ml-compiler-opt corpus descriptions: parsing and
// validation without files.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/text.h"
#include "evaluator/corpus.h"
#include "evaluator/suite.h"

using namespace evaluator;

namespace {

const std::string kHashA(64, 'a');
const std::string kHashB(64, 'b');

Suite sample_suite() {
  Suite s;
  s.name = "tiny";
  s.description = "two modules";
  s.origin = {"debian-packages", "", {{"bzip2", "1.0.8-5"}}, "abc"};
  s.modules = {{"bzip2/b.c", kHashB, Language::C, "bzip2", "b.c", {"bzip2/prog"}},
               {"bzip2/a.cpp", kHashA, Language::Cxx, "bzip2", "a.cpp", {"bzip2/prog"}}};
  s.link_groups = {{"bzip2/prog", LinkKind::Program, {"-lm"}}};
  s.metrics = MetricSettings{"Oz", {"text_bytes"}};
  normalize_suite(s);
  return s;
}

std::string error_of(const std::string& text) {
  auto r = parse_suite_manifest(text, "suite.json");
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

std::string with(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("a suite manifest round-trips sorted with languages derived from the modules") {
  auto s = sample_suite();
  auto text = format_suite_manifest(s);
  auto back = parse_suite_manifest(text, "suite.json");
  REQUIRE(back.ok());
  CHECK(back->name == "tiny");
  REQUIRE(back->modules.size() == 2);
  CHECK(back->modules[0].name == "bzip2/a.cpp");  // sorted by name
  CHECK(back->modules[0].language == Language::Cxx);
  CHECK(back->languages == std::vector<Language>{Language::C, Language::Cxx});
  CHECK(back->origin.packages.at(0).version == "1.0.8-5");
  CHECK(back->link_groups.at(0).flags == std::vector<std::string>{"-lm"});
  CHECK(back->metrics->opt_level == "Oz");
  CHECK(link_group_members(*back, "bzip2/prog") == std::vector<std::string>{"bzip2/a.cpp", "bzip2/b.c"});
  CHECK(format_suite_manifest(*back) == text);  // deterministic bytes
  CHECK(describe_modules(*back) == "2 modules (1 c, 1 c++)");
}

TEST_CASE("a manifest entry with a bad hash or language or name is refused naming the module") {
  auto text = format_suite_manifest(sample_suite());
  auto e = error_of(with(text, kHashA, "1234"));
  CHECK(e.find("module bzip2/a.cpp") != std::string::npos);
  CHECK(e.find("sha256") != std::string::npos);
  e = error_of(with(text, "\"language\": \"c++\"", "\"language\": \"fortran\""));
  CHECK(e.find("module bzip2/a.cpp: language") != std::string::npos);
  e = error_of(with(text, "\"name\": \"bzip2/a.cpp\"", "\"name\": \"../a.cpp\""));
  CHECK(e.find("'../a.cpp'") != std::string::npos);
  e = error_of(with(text, "\"name\": \"bzip2/a.cpp\"", "\"name\": \"bzip2/b.c\""));
  CHECK(e.find("module bzip2/b.c is listed twice") != std::string::npos);
}

TEST_CASE("link groups must be declared and used") {
  auto text = format_suite_manifest(sample_suite());
  auto e = error_of(with(text, "\"link_groups\": [\n        \"bzip2/prog\"", "\"link_groups\": [\n        \"nope\""));
  CHECK(e.find("undeclared link group nope") != std::string::npos);
  auto s = sample_suite();
  s.link_groups.push_back({"unused", LinkKind::Program, {}});
  auto st = validate_suite(s);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message.find("link group unused has no modules") != std::string::npos);
}

TEST_CASE("the manifest format and origin and suite name are checked") {
  auto text = format_suite_manifest(sample_suite());
  CHECK(error_of(with(text, "\"format\": 1", "\"format\": 2")).find("format 2 is not supported") != std::string::npos);
  CHECK(error_of("[1]").find("not a JSON object") != std::string::npos);
  CHECK(error_of(with(text, "\"name\": \"tiny\"", "\"name\": \"Tiny Suite\"")).find("invalid suite name") !=
        std::string::npos);
  CHECK(check_suite_name("holdout-2").ok());
  CHECK_FALSE(check_suite_name(".hidden").ok());
  CHECK_FALSE(check_suite_name("a/b").ok());
}

TEST_CASE("an ml-compiler-opt corpus description parses with or without an override") {
  auto d = parse_corpus_description(R"({"modules": ["lib/a.o", "b.o"], "has_thinlto": false})", "cd.json");
  REQUIRE(d.ok());
  CHECK(d->modules == std::vector<std::string>{"lib/a.o", "b.o"});
  CHECK_FALSE(d->global_command_override);
  auto o = parse_corpus_description(R"({"global_command_override": ["-cc1", "-O2"], "has_thinlto": true,
                                       "modules": ["x"], "some_future_key": 1})",
                                    "cd.json");
  REQUIRE(o.ok());
  CHECK(o->has_thinlto);
  CHECK(*o->global_command_override == std::vector<std::string>{"-cc1", "-O2"});
  CHECK(d->unknown_keys.empty());
  CHECK(o->unknown_keys == std::vector<std::string>{"some_future_key"});  // listed for the import to name
  auto back = parse_corpus_description(format_corpus_description(*o), "again");
  REQUIRE(back.ok());
  CHECK(back->modules == o->modules);
}

TEST_CASE("a corpus description that cannot be used is refused in one line") {
  auto err = [](const char* text) {
    auto d = parse_corpus_description(text, "cd.json");
    REQUIRE_FALSE(d.ok());
    return d.error().message;
  };
  CHECK(err(R"({"modules": []})").find("no modules") != std::string::npos);
  CHECK(err(R"({"has_thinlto": false})").find("missing array 'modules'") != std::string::npos);
  CHECK(err(R"({"modules": ["/abs/x"]})").find("relative") != std::string::npos);
  // ml-compiler-opt's placeholder for an override still to be filled in.
  CHECK(err(R"({"modules": ["a"], "global_command_override": "<UNSPECIFIED>"})").find("not filled in") !=
        std::string::npos);
}

TEST_CASE("the [\"<UNSPECIFIED>\"] override ml-compiler-opt writes for ThinLTO corpora is refused saying what to do") {
  auto d = parse_corpus_description(
      R"({"modules": ["a"], "has_thinlto": true, "global_command_override": ["<UNSPECIFIED>"]})", "cd.json");
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().message ==
        "cd.json: 'global_command_override' is the placeholder [\"<UNSPECIFIED>\"] that ml-compiler-opt writes for "
        "ThinLTO corpora: replace it with the -cc1 args that compile every module");
}

TEST_CASE(".cmd files are NUL-separated args") {
  std::string bytes = std::string("-cc1\0-O2\0-x\0ir", 14);
  CHECK(parse_cmd(bytes) == std::vector<std::string>{"-cc1", "-O2", "-x", "ir"});
  CHECK(parse_cmd(bytes + '\0') == parse_cmd(bytes));
  CHECK(format_cmd(parse_cmd(bytes)) == bytes);
  CHECK(parse_cmd("").empty());
}

TEST_CASE("a hostile manifest: link group names that escape are refused naming the group") {
  for (const std::string& bad :
       std::vector<std::string>{"../../etc/cron.d/x", "/abs/prog", "a/../../b", "bzip2/.git/hooks", "x/.GIT", "a\nb",
                                std::string("a\0b", 3), "a//b", "./a"}) {
    auto s = sample_suite();
    s.link_groups[0].name = bad;
    for (auto& m : s.modules) m.link_groups = {bad};
    auto e = error_of(format_suite_manifest(s));
    INFO(e);
    CHECK(e.find("link group name '") != std::string::npos);
    CHECK(e.find('\n') == std::string::npos);  // one line, even for a name with a newline
  }
  auto e = error_of(with(format_suite_manifest(sample_suite()), "bzip2/prog", "../prog"));
  CHECK(e.find("link group name '../prog'") != std::string::npos);
}

TEST_CASE("a link group named inside another (a and a/b) is refused: each is linked to a file of its name") {
  auto s = sample_suite();
  s.link_groups.push_back({"bzip2/prog/extra", LinkKind::Program, {}});
  s.modules[0].link_groups.push_back("bzip2/prog/extra");
  auto e = error_of(format_suite_manifest(s));
  CHECK(e == "suite.json: suite tiny: link group bzip2/prog/extra lies inside link group bzip2/prog (each is linked "
             "to a file of its name)");
  s.link_groups.back().name = "bzip2/program";  // a longer name beside it is fine
  s.modules[0].link_groups.back() = "bzip2/program";
  CHECK(parse_suite_manifest(format_suite_manifest(s), "suite.json").ok());
}

TEST_CASE("a hostile manifest: link flags outside the allowlist are refused naming the flag") {
  for (const std::string& bad : std::vector<std::string>{
           "-fuse-ld=/tmp/evil", "-B/tmp/evil", "-Wl,--plugin,/tmp/evil.so", "--ld-path=/tmp/ld", "-specs=/tmp/specs",
           "@/tmp/args", "-L/tmp/lib", "/tmp/evil.o", "-l", "-l../x", "-o", "-lm\n-B/tmp"}) {
    auto s = sample_suite();
    s.link_groups[0].flags = {"-lm", bad};
    auto e = error_of(format_suite_manifest(s));
    INFO(e);
    CHECK(e.find("suite tiny: link group bzip2/prog: flag " + common::quoted(bad) + " is not allowed") !=
          std::string::npos);
    CHECK(e.find('\n') == std::string::npos);
  }
  auto s = sample_suite();
  s.link_groups[0].flags = {"-lm", "-lstdc++", "-lz", "-pthread", "-lgcc_s", "-llua5.4"};
  CHECK(validate_suite(s).ok());
}

TEST_CASE("a hostile manifest or corpus: module names that escape or reach .git are refused naming them") {
  for (const std::string& bad :
       std::vector<std::string>{"../x", "a/../../x", "/etc/passwd", ".git/config", "sub/.Git/hooks/pre-commit", "a\nb",
                                std::string("a\0b", 3), "a\tb", "a\x7f"}) {
    INFO(common::quoted(bad));
    auto st = check_module_name(bad);
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message.find("module name " + common::quoted(bad)) == 0);
    auto s = sample_suite();
    s.modules[0].name = bad;
    auto e = error_of(format_suite_manifest(s));
    CHECK(e.find("module name " + common::quoted(bad)) != std::string::npos);
    nlohmann::json cd = {{"modules", {"ok.o", bad}}};
    auto d = parse_corpus_description(cd.dump(), "cd.json");
    REQUIRE_FALSE(d.ok());
    CHECK(d.error().message == "cd.json: " + st.error().message);
  }
  CHECK(check_module_name("lib/a.git/b.o").ok());  // only a whole '.git' segment is git's
  CHECK(check_module_name("lua5.4/src/lapi.c").ok());
}

TEST_CASE("a corpus module's dependency and split-DWARF outputs are taken out of its line, nothing else") {
  std::vector<std::string> removed;
  auto kept = without_build_outputs(
      {"-cc1", "-triple", "x86_64-pc-linux-gnu", "-dependency-file", "a.d", "-MT", "a.o", "-sys-header-deps",
       "-split-dwarf-file", "a.dwo", "-split-dwarf-output", "a.dwo", "-MT=b.o", "-O2", "-x", "c"},
      &removed);
  CHECK(kept == std::vector<std::string>{"-cc1", "-triple", "x86_64-pc-linux-gnu", "-O2", "-x", "c"});
  CHECK(removed == std::vector<std::string>{"-dependency-file", "-MT", "-sys-header-deps", "-split-dwarf-file",
                                            "-split-dwarf-output", "-MT"});
  CHECK(check_module_command("a", kept).ok());
  // A plugin is still refused: it runs code.
  CHECK_FALSE(check_module_command("a", without_build_outputs({"-cc1", "-load", "x.so"})).ok());
}

TEST_CASE("a .cmd file whose arguments are split by newlines, not NULs, is named so in one line") {
  auto bad = evaluator::check_module_command("a", {"-cc1\n-O2\n-x\nir"});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message ==
        "module a: its .cmd file separates arguments by newlines; they must be separated by NUL bytes (as LLVM's "
        "extract_ir.py writes them)");
  auto other = evaluator::check_module_command("b", {"-O2\n-x", "ir"});
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().message == "module b: its command line does not start with -cc1 (-O2 -x ir)");
  CHECK(evaluator::check_module_command("c", {"-cc1", "-O2"}).ok());
}

TEST_CASE("a module's bitcode is made at -Oz when its command's last -O level is -Oz") {
  using evaluator::made_at_oz;
  CHECK(made_at_oz({"-cc1", "-Oz", "-x", "ir"}));
  CHECK(made_at_oz({"-cc1", "-O2", "-Oz"}));
  CHECK_FALSE(made_at_oz({"-cc1", "-Oz", "-O2"}));
  CHECK_FALSE(made_at_oz({"-cc1", "-Os"}));
  CHECK_FALSE(made_at_oz({"-cc1", "-x", "ir"}));  // no level: not vouched for
}
