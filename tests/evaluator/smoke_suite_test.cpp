// The default smoke suite built for real from Debian source packages (needs
// the Debian mirror; ~15 s on 2 cores): the size the tests rely on, both
// languages, linkable programs, and a second build that does nothing.
#include <doctest/doctest.h>

#include "common/process.h"
#include "evaluator/corpus.h"
#include "evaluator/default_suites.h"
#include "evaluator/suite_builder.h"
#include "tests/support/temp_dir.h"

using namespace evaluator;
namespace fs = std::filesystem;

namespace {

common::ProcessResult run(std::vector<std::string> argv) {
  common::ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = std::chrono::minutes(2);
  return common::run_process(spec).take();
}

}  // namespace

TEST_CASE("the smoke suite builds from Debian sources and links and is cached") {
  testing::TempDir tmp;
  auto data = (tmp / "data").string();
  auto first = testing::run_driftwatch({"--data-dir", data, "suite", "build", "smoke", "-j", "2"});
  REQUIRE_MESSAGE(first.exit_code == 0, first.output);
  CHECK(first.output.find("smoke: bzip2: fetched") != std::string::npos);  // progress on stderr
  auto suite = load_suite(tmp / "data" / "suites" / "smoke").take();
  CHECK(suite.modules.size() >= 8);
  CHECK(suite.modules.size() <= 15);
  CHECK(suite.languages == std::vector<Language>{Language::C, Language::Cxx});
  CHECK(suite.origin.kind == "debian-packages");
  CHECK(suite.origin.packages.size() == 2);

  // bzip2's program, from objects compiled from the suite's bitcode, compresses and decompresses.
  auto members = link_group_members(suite, "bzip2/bzip2");
  REQUIRE(members.size() == 8);
  std::vector<std::string> link = {"clang-19"};
  for (const auto& m : members) {
    auto obj = (tmp / (fs::path(m).filename().string() + ".o")).string();
    auto c =
        run({"clang-19", "-Oz", "-c", module_file(tmp / "data" / "suites" / "smoke", m, ".bc").string(), "-o", obj});
    REQUIRE_MESSAGE(c.ok(), c.output);
    link.push_back(obj);
  }
  link.insert(link.end(), {"-o", (tmp / "bzip2").string()});
  auto l = run(link);
  REQUIRE_MESSAGE(l.ok(), l.output);
  auto bzip2 = (tmp / "bzip2").string();
  auto round = run({"sh", "-c", "echo driftwatch | " + bzip2 + " | " + bzip2 + " -d"});
  CHECK(round.output == "driftwatch\n");

  auto again = testing::run_driftwatch({"--data-dir", data, "suite", "build", "smoke"});
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("up to date") != std::string::npos);
  CHECK(again.output.find("fetched") == std::string::npos);
  auto list = testing::run_driftwatch({"--data-dir", data, "suite", "list"});
  CHECK(list.output.find("debian: bzip2 1.0.8") != std::string::npos);
}
