// An imported ml-compiler-opt corpus is compiled the way it says: each
// module's own -cc1 line (.cmd) when the recipe's compiler takes one (clang,
// here Debian's clang-19 as a prebuilt toolchain), and a plain warning when
// it cannot (dwcc, the sample compiler).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/sweep_project.h"

using testing::Project;
namespace fs = std::filesystem;

namespace {

std::string policy_file() {
  return std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/policies/sample-compiler-v1.0.policy";
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

/// The testdata sources as a corpus: bitcode from clang-19 at -O2 before any
/// optimization (no size attributes, the same for every corpus) and each
/// module's -cc1 line from the real clang-19 compile driftwatch recorded for
/// the testdata suite (at -Oz), with `opt_level` in place of -Oz.
fs::path corpus_at(Project& p, const std::string& opt_level) {
  auto from = p.dir / "data/suites/testdata";
  auto to = p.dir / ("corpus" + opt_level);
  fs::create_directories(to);
  fs::copy_file(from / "corpus_description.json", to / "corpus_description.json");
  auto description = nlohmann::json::parse(read(from / "corpus_description.json"));
  REQUIRE(description["modules"].size() == 5);
  for (const auto& m : description["modules"]) {
    auto name = m.get<std::string>();
    auto source = fs::path(DRIFTWATCH_SOURCE_DIR) / "samples/testdata" / name;
    REQUIRE_MESSAGE(fs::exists(source), source);
    common::ProcessSpec clang;
    clang.argv = {"clang-19", "-O2", "-Xclang", "-disable-llvm-passes", "-emit-llvm", "-c", source.string(), "-o",
                  (to / (name + ".bc")).string()};
    auto compiled = common::run_process(clang).take();
    REQUIRE_MESSAGE(compiled.ok(), compiled.output);
    // .cmd: NUL-separated args
    auto cmd = read(from / (name + ".cmd"));
    auto at = cmd.find(std::string("\0-Oz", 4));
    REQUIRE_MESSAGE(at != std::string::npos, name);
    cmd.replace(at + 1, 3, opt_level);
    std::ofstream(to / (name + ".cmd"), std::ios::binary) << cmd;
  }
  return to;
}

nlohmann::json eval_json(Project& p, const std::vector<std::string>& build, const std::string& suite) {
  std::vector<std::string> args = {"eval", "--suite", suite, "--policy", policy_file(), "--json"};
  args.insert(args.end(), build.begin(), build.end());
  auto r = p.run(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto json = r.output.substr(r.output.find('{'));
  return nlohmann::json::parse(json);
}

}  // namespace

TEST_CASE("a corpus's own -cc1 lines are honoured by clang and said to be ignored by dwcc") {
  Project p;
  for (auto [level, suite] : {std::pair{"-Oz", "corpus-oz"}, std::pair{"-O2", "corpus-o2"}}) {
    auto corpus = corpus_at(p, level);
    auto imported = p.run({"suite", "build", "--import-corpus", corpus.string(), "--name", suite});
    REQUIRE_MESSAGE(imported.exit_code == 0, imported.output);
  }
  // Debian's clang-19 as a prebuilt llvm-project toolchain.
  auto llvm = p.dir / "llvm-19";
  fs::create_directories(llvm / "bin");
  for (const char* tool : {"clang", "opt", "llc"})
    fs::create_symlink(std::string("/usr/lib/llvm-19/bin/") + tool, llvm / "bin" / tool);
  std::vector<std::string> clang = {"--build", llvm.string(), "--recipe", "llvm-project"};
  auto oz = eval_json(p, clang, "corpus-oz");
  auto o2 = eval_json(p, clang, "corpus-o2");
  CHECK(oz["warnings"].empty());
  CHECK_MESSAGE(o2["warnings"].empty(), o2["warnings"].dump());
  CHECK(oz["summary"]["modules"] == 5);
  CHECK(o2["summary"]["modules"] == 5);
  // -O2 inlines and unrolls for speed: more code than -Oz, under both heuristics.
  CHECK(o2["summary"]["total_default"].get<long>() > oz["summary"]["total_default"].get<long>());
  CHECK(o2["summary"]["total_learned"].get<long>() > oz["summary"]["total_learned"].get<long>());

  // Training compiles each module as evaluation does, with its own line: the
  // default sizes it collects add up to the evaluation's.
  auto out = p.dir / "corpus.policy";
  auto trained = p.run({"train", "--build", llvm.string(), "--recipe", "llvm-project", "--suite", "corpus-o2", "--out",
                        out.string(), "--iterations", "0", "--clone-epochs", "1", "--search-trials", "1",
                        "--imitation-epochs", "1", "-j", "2"});
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  std::ifstream collected(p.dir / "data/training/corpus-1/collected.json");
  auto j = nlohmann::json::parse(collected);
  long total = 0;
  for (const auto& m : j["modules"]) total += m["default_text"].get<long>();
  CHECK(j["modules"].size() == 5);
  CHECK(total == o2["summary"]["total_default"].get<long>());

  // dwcc takes bitcode and its own flags only: the numbers come with a warning, printed and stored.
  auto dwcc = p.dir / "dwcc";
  fs::create_directories(dwcc / "bin");
  fs::copy_file(DWCC_BIN, dwcc / "bin" / "dwcc");
  auto r = p.run({"eval", "--build", dwcc.string(), "--suite", "corpus-o2", "--policy", policy_file()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("warning: the compiler cannot take the corpus's own command lines: its 5 modules were "
                      "compiled with the recipe's one line (" +
                      (dwcc / "bin/dwcc").string() + " {input} -o {output} -Oz), not as their .cmd says (") !=
        std::string::npos);
  CHECK(r.output.find(" -O2 ") != std::string::npos);
  auto stored = nlohmann::json::parse(p.psql(
      "SELECT e.summary FROM evaluations e JOIN suites s ON s.id = e.suite_id WHERE s.name = 'corpus-o2' "
      "AND e.summary->>'build' = '" + dwcc.string() + "'"));
  REQUIRE(stored["warnings"].size() == 1);
  CHECK(stored["warnings"][0].get<std::string>().find("cannot take the corpus's own command lines") != std::string::npos);

  // Module lines edited in place (suite.json unchanged) measure something
  // else: the suite gets a new identity, so no series mixes the two.
  auto oz_dir = p.dir / "data/suites/corpus-oz", o2_dir = p.dir / "data/suites/corpus-o2";
  for (const auto& e : fs::recursive_directory_iterator(o2_dir))
    if (e.path().extension() == ".cmd")
      fs::copy_file(e.path(), oz_dir / fs::relative(e.path(), o2_dir), fs::copy_options::overwrite_existing);
  auto edited = eval_json(p, clang, "corpus-oz");
  CHECK(p.psql("SELECT count(DISTINCT manifest_hash) FROM suites WHERE name = 'corpus-oz'") == "2");
  CHECK(edited["summary"]["total_default"] == o2["summary"]["total_default"]);
}

TEST_CASE("a corpus whose override is ml-compiler-opt's [\"<UNSPECIFIED>\"] placeholder is refused on import") {
  Project p;
  auto corpus = p.dir / "thinlto";
  fs::create_directories(corpus);
  std::ofstream(corpus / "a.bc") << "BC";
  std::ofstream(corpus / "a.thinlto.bc") << "BC";
  std::ofstream(corpus / "corpus_description.json")
      << R"({"global_command_override": ["<UNSPECIFIED>"], "has_thinlto": true, "modules": ["a"]})";
  auto r = p.run({"suite", "build", "--import-corpus", corpus.string(), "--name", "thin"});
  CHECK(r.exit_code == 2);
  CHECK(r.output == "driftwatch: " + (corpus / "corpus_description.json").string() +
                        ": 'global_command_override' is the placeholder [\"<UNSPECIFIED>\"] that ml-compiler-opt "
                        "writes for ThinLTO corpora: replace it with the -cc1 args that compile every module\n");
  CHECK_FALSE(fs::exists(p.dir / "data/suites/thin"));
}

TEST_CASE("a ThinLTO corpus, and a module line driftwatch would not run, are refused on import, not at each check-in") {
  Project p;
  auto corpus = p.dir / "thin-with-lines";
  fs::create_directories(corpus);
  std::ofstream(corpus / "a.bc") << "BC";
  std::ofstream(corpus / "a.thinlto.bc") << "BC";
  std::ofstream(corpus / "a.cmd") << std::string("-cc1\0-O2", 8);
  std::ofstream(corpus / "corpus_description.json") << R"({"has_thinlto": true, "modules": ["a"]})";
  auto thin = p.run({"suite", "build", "--import-corpus", corpus.string(), "--name", "thin"});
  CHECK(thin.exit_code == 2);
  CHECK(thin.output.find("is a ThinLTO corpus (has_thinlto): its modules compile against their .thinlto.bc index") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(p.dir / "data/suites/thin"));

  std::ofstream(corpus / "corpus_description.json") << R"({"has_thinlto": false, "modules": ["a"]})";
  std::ofstream(corpus / "a.cmd") << std::string("-cc1\0-O2\0-load\0/tmp/evil.so", 27);
  auto plugin = p.run({"suite", "build", "--import-corpus", corpus.string(), "--name", "plugin"});
  CHECK(plugin.exit_code == 2);
  CHECK(plugin.output == "driftwatch: corpus " + corpus.string() +
                             ": module a: its command line has '-load', which driftwatch does not run\n");
  CHECK_FALSE(fs::exists(p.dir / "data/suites/plugin"));
  // The ML inliner's own options (driftwatch sets them: given twice, only
  // the learned compile would fail), files written beside the object, and
  // driftwatch's placeholders.
  for (std::string bad : {"-enable-ml-inliner=release", "-opt-record-file=a.yaml", "-stats-file=a.stats", "{output}"}) {
    std::string line = std::string("-cc1\0-O2\0-mllvm\0", 16) + bad;
    std::ofstream(corpus / "a.cmd") << line;
    auto refused = p.run({"suite", "build", "--import-corpus", corpus.string(), "--name", "flags"});
    CHECK(refused.exit_code == 2);
    CHECK(refused.output == "driftwatch: corpus " + corpus.string() + ": module a: its command line has '" + bad +
                                "', which driftwatch does not run\n");
  }
  CHECK_FALSE(fs::exists(p.dir / "data/suites/flags"));

  std::ofstream(corpus / "a.cmd") << std::string("-O2\0-x\0ir", 9);
  auto no_cc1 = p.run({"suite", "build", "--import-corpus", corpus.string(), "--name", "nocc1"});
  CHECK(no_cc1.exit_code == 2);
  CHECK(no_cc1.output.find("module a: its command line does not start with -cc1 (-O2 -x ir)") != std::string::npos);
}

TEST_CASE(
    "a corpus module that is not bitcode (a Git LFS pointer) is refused on import, not blamed on every check-in") {
  Project p;
  auto corpus = p.dir / "lfs";
  fs::create_directories(corpus);
  std::ofstream(corpus / "a.bc") << "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12345\n";
  std::ofstream(corpus / "a.cmd") << std::string("-cc1\0-Oz", 8);
  std::ofstream(corpus / "corpus_description.json") << R"({"has_thinlto": false, "modules": ["a"]})";
  auto r = p.run({"suite", "build", "--import-corpus", corpus.string(), "--name", "lfs"});
  CHECK(r.exit_code == 2);
  CHECK(r.output == "driftwatch: module a: " + (corpus / "a.bc").string() +
                        " is not LLVM bitcode (a Git LFS pointer of a clone made without git-lfs?); nothing was "
                        "imported\n");
  CHECK_FALSE(fs::exists(p.dir / "data/suites/lfs"));
  // Options an import would ignore are refused, not ignored.
  auto described = p.run({"suite", "build", "--import-corpus", corpus.string(), "--name", "lfs", "--description", "x"});
  CHECK(described.exit_code == 2);
  CHECK(described.output.find("--description is not taken with --import-corpus") != std::string::npos);
  auto rebuilt = p.run({"suite", "build", "--import-corpus", corpus.string(), "--name", "lfs", "--rebuild"});
  CHECK(rebuilt.exit_code == 2);
  CHECK(rebuilt.output.find("--rebuild is for the default suites") != std::string::npos);
  auto named = p.run({"suite", "build", "smoke", "--name", "mine"});
  CHECK(named.exit_code == 2);
  CHECK(named.output.find("--name and --description name a suite built with") != std::string::npos);
}
