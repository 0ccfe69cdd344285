// The project file: every key of the template parses, and anything wrong is
// named with its key and line. Pure: no files.
#include <doctest/doctest.h>

#include "sweep/project_file.h"

using sweep::parse_project_file;

namespace {

const char* kMinimal = R"([compiler]
repo = "compiler"
[policy]
file = "p.policy"
[suites]
names = ["holdout", "./mine"]
)";

std::string error_of(const std::string& text) {
  auto p = parse_project_file(text, "driftwatch.toml", "/proj");
  REQUIRE_FALSE(p.ok());
  return p.error().message;
}

}  // namespace

TEST_CASE("the template driftwatch init writes is a valid project file with the documented defaults") {
  auto p = parse_project_file(sweep::project_file_template("llvm", "../llvm-project", "/p/a.policy"), "t.toml", "/proj/x");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->name == "llvm");
  CHECK(p->repo == "/proj/llvm-project");
  CHECK(p->policy == "/p/a.policy");
  CHECK(p->suites == std::vector<std::string>{"holdout"});
  CHECK(p->every == "1w");
  CHECK(p->recipe == "sample-compiler");
  CHECK(p->alerts.min_uplift_change == doctest::Approx(0.002));
  CHECK(p->alerts.bisect);
  CHECK(p->notify.webhook_format == "json");
  CHECK(p->toolchains.empty());
}

TEST_CASE("relative paths are taken from the project file's directory and names stay names") {
  auto p = parse_project_file(kMinimal, "driftwatch.toml", "/proj");
  REQUIRE(p.ok());
  CHECK(p->repo == "/proj/compiler");
  CHECK(p->policy == "/proj/p.policy");
  CHECK(p->suites == std::vector<std::string>{"holdout", "/proj/mine"});
  CHECK(p->name == "proj");  // the directory's name when [project] has none
}

TEST_CASE("unknown keys and sections, wrong types and bad values are named with their line") {
  CHECK(error_of(std::string(kMinimal) + "[sampling]\nevry = \"1w\"\n") ==
        "driftwatch.toml:8: unknown key 'sampling.evry'");
  CHECK(error_of(std::string(kMinimal) + "[samplin]\nevery = \"1w\"\n") == "driftwatch.toml:7: unknown section [samplin]");
  CHECK(error_of(std::string(kMinimal) + "[run]\njobs = \"two\"\n") == "driftwatch.toml:8: run.jobs must be a whole number");
  CHECK(error_of(std::string(kMinimal) + "[alerts]\nmin_uplift_change = 1.5\n") ==
        "driftwatch.toml:8: alerts.min_uplift_change must be a number between 0 and 1");
  CHECK(error_of(std::string(kMinimal) + "[sampling]\ntags = \"yes\"\n") ==
        "driftwatch.toml:8: sampling.tags must be true or false");
  CHECK(error_of(std::string(kMinimal) + "[notify]\nwebhook_format = \"xml\"\n") ==
        "driftwatch.toml: notify.webhook_format must be \"json\" or \"slack\"");
  CHECK(error_of(std::string(kMinimal) + "[notify]\nwebhook = \"ftp://x\"\n") ==
        "driftwatch.toml: notify.webhook must be an http:// or https:// URL");
  CHECK(error_of("[compiler]\nrepo = \"x\"\n[suites]\nnames = [\"s\"]\n") ==
        "driftwatch.toml: missing key 'policy.file' (the frozen policy to track)");
  CHECK(error_of("[policy]\nfile = \"p\"\n[suites]\nnames = [\"s\"]\n") ==
        "driftwatch.toml: set compiler.repo (a git repository) or list [[toolchains]]");
  CHECK(error_of("[compiler\nrepo = 1\n").rfind("driftwatch.toml:1: ", 0) == 0);
  CHECK(error_of("repo = \"x\"\n") == "driftwatch.toml:1: unknown key 'repo'");
}

TEST_CASE("toolchains are listed as [[toolchains]] tables with a directory") {
  auto p = parse_project_file(
      "[policy]\nfile = \"p\"\n[suites]\nnames = [\"s\"]\n[[toolchains]]\ndir = \"nightly/a\"\ndate = \"2026-01-05\"\n"
      "[[toolchains]]\ndir = \"/opt/b\"\nlabel = \"19.1.7\"\n",
      "driftwatch.toml", "/proj");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  REQUIRE(p->toolchains.size() == 2);
  CHECK(p->toolchains[0].dir == "/proj/nightly/a");
  CHECK(p->toolchains[0].label == "a");
  CHECK(p->toolchains[1].label == "19.1.7");
  CHECK(error_of("[policy]\nfile = \"p\"\n[suites]\nnames = [\"s\"]\n[[toolchains]]\nlabel = \"x\"\n") ==
        "driftwatch.toml:5: a [[toolchains]] entry needs dir");
  CHECK(error_of("[policy]\nfile = \"p\"\n[suites]\nnames = [\"s\"]\n[[toolchains]]\ndir = \"x\"\npath = \"y\"\n") ==
        "driftwatch.toml:7: unknown key 'toolchains.path' (expected dir, label, date)");
}
