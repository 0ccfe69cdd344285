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
  CHECK(p->notify.resolved);
  CHECK(p->notify.command_timeout == std::chrono::seconds(30));
  CHECK(p->notify.webhook_timeout == std::chrono::seconds(10));
  CHECK(p->toolchains.empty());
  CHECK(p->retry_backoff == 10);
  CHECK(p->stale_after_seconds == 0);
}

TEST_CASE("the end of a failure alert is sent unless notify.resolved is false") {
  auto p = parse_project_file(std::string(kMinimal) + "[notify]\nresolved = false\n", "driftwatch.toml", "/proj");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK_FALSE(p->notify.resolved);
  CHECK(error_of(std::string(kMinimal) + "[notify]\nresolved = \"no\"\n").find("notify.resolved") != std::string::npos);
}

TEST_CASE("the hook's and the webhook's time per alert are durations above zero") {
  auto p = parse_project_file(std::string(kMinimal) + "[notify]\ncommand_timeout = \"2m\"\nwebhook_timeout = \"3s\"\n",
                              "driftwatch.toml", "/proj");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->notify.command_timeout == std::chrono::seconds(120));
  CHECK(p->notify.webhook_timeout == std::chrono::seconds(3));
  for (const char* key : {"command_timeout", "webhook_timeout"})
    for (const char* bad : {"\"0s\"", "\"30\"", "\"soon\"", "30"})
      CHECK(error_of(std::string(kMinimal) + "[notify]\n" + key + " = " + bad + "\n") ==
            std::string("driftwatch.toml:8: notify.") + key +
                " must be a duration above zero such as \"30s\" or \"2m\", not " + bad);
}

TEST_CASE("a stale branch's age is a duration above zero, or empty for never") {
  auto p = parse_project_file(std::string(kMinimal) + "[sampling]\nstale_after = \"3d\"\n", "driftwatch.toml", "/proj");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->stale_after_seconds == 3 * 86400);
  auto never =
      parse_project_file(std::string(kMinimal) + "[sampling]\nstale_after = \"\"\n", "driftwatch.toml", "/proj");
  REQUIRE_MESSAGE(never.ok(), never.error().message);
  CHECK(never->stale_after_seconds == 0);
  const std::string expected =
      "driftwatch.toml:8: sampling.stale_after must be a duration above zero such as \"3d\" or \"36h\", or \"\" for "
      "never";
  for (const char* bad : {"\"0d\"", "\"3\"", "\"a week\"", "3"})
    CHECK(error_of(std::string(kMinimal) + "[sampling]\nstale_after = " + bad + "\n") == expected + ", not " + bad);
}

TEST_CASE("a failed job's retry backoff is a duration") {
  auto p = parse_project_file(std::string(kMinimal) + "[run]\nretry_backoff = \"2m\"\n", "driftwatch.toml", "/proj");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->retry_backoff == 120);
  CHECK(error_of(std::string(kMinimal) + "[run]\nretry_backoff = \"soon\"\n") ==
        "driftwatch.toml:8: run.retry_backoff must be a duration such as \"30s\", \"5m\" or \"1h\", not \"soon\"");
  CHECK(error_of(std::string(kMinimal) + "[run]\nretry_backoff = \"1h\"\n") ==
        "driftwatch.toml: run.retry_backoff must be at most 10m");
  CHECK(error_of(std::string(kMinimal) + "[run]\nretry_backoff = \"30\"\n") ==
        "driftwatch.toml:8: run.retry_backoff must be a duration such as \"30s\", \"5m\" or \"1h\", not \"30\"");
  CHECK(error_of(std::string(kMinimal) + "[run]\nretry_backoff = \"-5s\"\n") ==
        "driftwatch.toml:8: run.retry_backoff must be a duration such as \"30s\", \"5m\" or \"1h\", not \"-5s\"");
}

TEST_CASE("relative paths are taken from the project file's directory and names stay names") {
  auto p = parse_project_file(kMinimal, "driftwatch.toml", "/proj");
  REQUIRE(p.ok());
  CHECK(p->repo == "/proj/compiler");
  CHECK(p->policy == "/proj/p.policy");
  CHECK(p->suites == std::vector<std::string>{"holdout", "/proj/mine"});
  CHECK(p->name == "proj");  // the directory's name when [project] has none
  auto slashed = parse_project_file(kMinimal, "driftwatch.toml", "/work/proj/");
  REQUIRE(slashed.ok());
  CHECK(slashed->name == "proj");  // not "" (nor a default every such project would share)
}

TEST_CASE("an empty project name is refused, not replaced by a name other projects would share") {
  CHECK(error_of("[project]\nname = \"\"\n" + std::string(kMinimal)).find("project.name '' must not be empty") !=
        std::string::npos);
  auto at_root = parse_project_file(kMinimal, "driftwatch.toml", "/");
  REQUIRE_FALSE(at_root.ok());
  CHECK(at_root.error().message.find("must not be empty") != std::string::npos);
}

TEST_CASE("dates written as TOML dates read as the same dates written as strings") {
  auto p = parse_project_file(std::string(kMinimal) + "[sampling]\nsince = 2026-01-31\nuntil = 2026-03-01T06:30:00Z\n",
                              "driftwatch.toml", "/proj");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->since == "2026-01-31");
  CHECK(p->until == "2026-03-01T06:30:00");
  auto local = parse_project_file(std::string(kMinimal) + "[sampling]\nuntil = 2026-03-01T06:30:00\n", "d.toml", "/p");
  REQUIRE_MESSAGE(local.ok(), local.error().message);
  CHECK(local->until == "2026-03-01T06:30:00");
}

TEST_CASE("unknown keys and sections, wrong types and bad values are named with their line") {
  CHECK(error_of(std::string(kMinimal) + "[sampling]\nevry = \"1w\"\n") ==
        "driftwatch.toml:8: unknown key 'sampling.evry' ([sampling] takes every, since, until, from, tags, "
        "stale_after)");
  CHECK(error_of(std::string(kMinimal) + "[samplin]\nevery = \"1w\"\n") ==
        "driftwatch.toml:7: unknown section [samplin] (the file takes [project], [compiler], [policy], [suites], "
        "[sampling], [data"
        "base], [run], [alerts], [notify], [report], [decide], [retrain] and [[toolchains]])");
  CHECK(error_of(std::string(kMinimal) + "[run]\njobs = \"two\"\n") ==
        "driftwatch.toml:8: run.jobs must be a whole number from 0 (one per core) to 1024, not \"two\"");
  CHECK(error_of(std::string(kMinimal) + "[alerts]\nmin_uplift_change = 1.5\n") ==
        "driftwatch.toml:8: alerts.min_uplift_change must be a number between 0 and 1, not 1.5");
  CHECK(error_of(std::string(kMinimal) + "[sampling]\ntags = \"yes\"\n") ==
        "driftwatch.toml:8: sampling.tags must be true or false, not \"yes\"");
  // Checked when read, not once a sweep has started the database and built suites.
  CHECK(error_of(std::string(kMinimal) + "[sampling]\nevery = \"weekly\"\n") ==
        "driftwatch.toml:8: sampling.every must be a string \"N\", \"Nd\", \"Nw\" or \"Nm\" (every N check-ins, or "
        "the last of each N days, weeks or months), not \"weekly\"");
  // A bare number is an N, but TOML's integer is not the string the key takes: say so.
  CHECK(error_of(std::string(kMinimal) + "[sampling]\nevery = 7\n").find("sampling.every must be a string \"N\"") !=
        std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "[decide]\nin_a_row = -3\n") ==
        "driftwatch.toml:8: decide.in_a_row must be a whole number from 0 to 2147483647, not -3");
  CHECK(error_of(std::string(kMinimal) + "[sampling]\nsince = \"2026/01/01\"\n") ==
        "driftwatch.toml:8: sampling.since must be a UTC date, 2026-01-31 or 2026-01-31T12:00:00, not \"2026/01/01\"");
  CHECK(error_of(std::string(kMinimal) + "[[toolchains]]\ndir = \"/t\"\ndate = \"Jan 5\"\n") ==
        "driftwatch.toml:9: toolchains.date must be a UTC date, 2026-01-31 or 2026-01-31T12:00:00, not \"Jan 5\"");
  // The name names directories (Slurm's logs, the worktrees).
  CHECK(error_of(std::string(kMinimal) + "[project]\nname = \"../x\"\n") ==
        "driftwatch.toml: project.name '../x' must not be empty, '.' or '..', nor hold a '/' (it names directories)");
  // As -j: thousands of compile threads only fail to start, midway through a sweep.
  CHECK(error_of(std::string(kMinimal) + "[run]\njobs = 5000\n") ==
        "driftwatch.toml:8: run.jobs must be a whole number from 0 (one per core) to 1024, not 5000");
  CHECK(error_of(std::string(kMinimal) + "[sampling]\nsince = 2026-01-31T12:00:00+02:00\n") ==
        "driftwatch.toml:8: sampling.since must be a UTC date, 2026-01-31 or 2026-01-31T12:00:00, not "
        "2026-01-31T12:00:00+02:00");
  CHECK(error_of(std::string(kMinimal) + "[notify]\nwebhook_format = \"xml\"\n") ==
        "driftwatch.toml: notify.webhook_format must be \"json\" or \"slack\"");
  CHECK(error_of("[compiler]\nrepo = \"c\"\n[policy]\nfile = \"p.policy\"\n[suites]\nnames = [\"\"]\n") ==
        "driftwatch.toml: suites.names holds an empty name");
  CHECK(error_of(std::string(kMinimal) + "[retrain]\ntraining_suite = \"\"\n") ==
        "driftwatch.toml: retrain.training_suite must name a suite");
  CHECK(error_of(std::string(kMinimal) + "[alerts]\nflipped_modules = 0\n") ==
        "driftwatch.toml: alerts.flipped_modules must be at least 1");
  CHECK(error_of(std::string(kMinimal) + "[alerts]\nfailing_modules = 0\n") ==
        "driftwatch.toml: alerts.failing_modules must be at least 1");
  CHECK(error_of(std::string(kMinimal) + "[alerts]\nbroken_builds = 0\n") ==
        "driftwatch.toml: alerts.broken_builds must be at least 1 (0 would never raise a build-broken alert)");
  CHECK(error_of(std::string(kMinimal) + "[notify]\nwebhook = \"ftp://x\"\n") ==
        "driftwatch.toml: notify.webhook must be an http:// or https:// URL");
  CHECK(error_of("[compiler]\nrepo = \"x\"\n[suites]\nnames = [\"s\"]\n") ==
        "driftwatch.toml: missing key 'policy.file' (the frozen policy to track)");
  CHECK(error_of("[policy]\nfile = \"p\"\n[suites]\nnames = [\"s\"]\n") ==
        "driftwatch.toml: set compiler.repo (a git repository) or list [[toolchains]]");
  CHECK(error_of("[compiler]\nrepo = \"c\"\n[policy]\nfile = \"p\"\n[suites]\nnames = []\n") ==
        "driftwatch.toml: suites.names is missing or empty (name at least one suite)");
  CHECK(error_of("[compiler]\nrepo = \"c\"\n[policy]\nfile = \"p\"\n[suites]\nnames = [\"a\", \"b\", \"a\"]\n") ==
        "driftwatch.toml: suites.names lists 'a' twice");
  // Every link would lead to one page, or keep a placeholder nobody fills.
  CHECK(error_of(std::string(kMinimal) + "[report]\ncommit_url = \"https://x/commit/\"\n") ==
        "driftwatch.toml: report.commit_url must hold {sha}, where each link puts its commit");
  CHECK(error_of(std::string(kMinimal) + "[report]\ncommit_url = \"https://x/{sha}/{foo}\"\n") ==
        "driftwatch.toml: report.commit_url may hold only the placeholder {sha}");
  CHECK(error_of(std::string(kMinimal) + "[report]\ncommit_url = \"javascript:alert({sha})\"\n") ==
        "driftwatch.toml: report.commit_url must be an http:// or https:// URL");
  CHECK(parse_project_file(std::string(kMinimal) + "[report]\ncommit_url = \"https://x/{sha}/commit/{sha}\"\n",
                           "driftwatch.toml", "/proj")
            .ok());
  CHECK(error_of("[compiler\nrepo = 1\n").rfind("driftwatch.toml:1: ", 0) == 0);
  CHECK(error_of("repo = \"x\"\n").rfind("driftwatch.toml:1: unknown key 'repo' (the file takes [project], ", 0) == 0);
  // [[toolchain]] for [[toolchains]]: the answer names the right one.
  CHECK(error_of("[[toolchain]]\ndir = \"x\"\n").find("unknown key 'toolchain' (the file takes ") != std::string::npos);
  CHECK(error_of("[[toolchain]]\ndir = \"x\"\n").find(" and [[toolchains]])") != std::string::npos);
}

TEST_CASE("toolchains are listed as [[toolchains]] tables with a directory") {
  auto p = parse_project_file(
      "[policy]\nfile = \"p\"\n[suites]\nnames = [\"s\"]\n[[toolchains]]\ndir = \"nightly/a\"\ndate = \"2026-01-05\"\n"
      "[[toolchains]]\ndir = \"/opt/b\"\nlabel = \"19.1.7\"\n[[toolchains]]\ndir = \"/opt/nightly-c/\"\n",
      "driftwatch.toml", "/proj");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  REQUIRE(p->toolchains.size() == 3);
  // A trailing slash names the same directory, and its name is the label.
  CHECK(p->toolchains[2].dir == "/opt/nightly-c");
  CHECK(p->toolchains[2].label == "nightly-c");
  CHECK(p->toolchains[0].dir == "/proj/nightly/a");
  CHECK(p->toolchains[0].label == "a");
  CHECK(p->toolchains[1].label == "19.1.7");
  CHECK(error_of("[policy]\nfile = \"p\"\n[suites]\nnames = [\"s\"]\n[[toolchains]]\nlabel = \"x\"\n") ==
        "driftwatch.toml:5: a [[toolchains]] entry needs dir");
  CHECK(error_of("[policy]\nfile = \"p\"\n[suites]\nnames = [\"s\"]\n[[toolchains]]\ndir = \"x\"\npath = \"y\"\n") ==
        "driftwatch.toml:7: unknown key 'toolchains.path' (expected dir, label, date)");
}

TEST_CASE("the retraining rules and settings are read, and rules that make no sense are refused naming the rule") {
  auto p = parse_project_file(sweep::project_file_template("llvm", "../llvm-project", "/p/a.policy"), "t.toml", "/proj/x");
  REQUIRE_MESSAGE(p.ok(), p.error().message);
  CHECK(p->decide.fraction_on);
  CHECK(p->decide.min_fraction == doctest::Approx(0.5));
  CHECK(p->decide.in_a_row == 2);
  CHECK(p->decide.min_uplift == doctest::Approx(0.0));
  CHECK(p->decide.min_no_worse == doctest::Approx(0.9));
  CHECK(p->decide.features_on);
  CHECK_FALSE(p->decide.age_on);  // off by default
  CHECK(p->retrain.promote == "auto");
  CHECK(p->retrain.margin == doctest::Approx(0.001));
  CHECK(p->retrain.max_extra_losing == 0);
  CHECK(p->retrain.training_suite == "train");
  CHECK(p->retrain.settings == "shipped");
  CHECK(p->retrain.validation_suite.empty());  // no validation suite unless named
  CHECK(p->holdout_suites() == std::vector<std::string>{"holdout"});

  auto q = parse_project_file(std::string(kMinimal) +
                                  "[decide]\nmin_uplift = -0.01\nin_a_row = 3\nage = true\nmax_age_days = 30\n"
                                  "[retrain]\npromote = \"never\"\nholdout = [\"h2\"]\ntraining_suite = \"holdout\"\n"
                                  "settings = \"small\"\nmax_extra_losing = 2\nvalidation_suite = \"validation\"\n",
                              "driftwatch.toml", "/proj");
  REQUIRE_MESSAGE(q.ok(), q.error().message);
  CHECK(q->decide.min_uplift == doctest::Approx(-0.01));
  CHECK(q->decide.in_a_row == 3);
  CHECK(q->decide.age_on);
  CHECK(q->decide.max_age_days == 30);
  CHECK(q->retrain.promote == "never");
  CHECK(q->holdout_suites() == std::vector<std::string>{"h2"});
  CHECK(q->retrain.settings == "small");
  CHECK(q->retrain.max_extra_losing == 2);
  CHECK(q->retrain.validation_suite == "validation");

  CHECK(error_of(std::string(kMinimal) + "[decide]\nmin_fraction = 1.5\n") ==
        "driftwatch.toml: [decide] rule 'uplift_fraction': min_fraction must be above 0 and at most 1, not 1.5");
  CHECK(error_of(std::string(kMinimal) + "[decide]\nin_a_row = 0\n") ==
        "driftwatch.toml: [decide] rule 'uplift_fraction': in_a_row must be at least 1, not 0");
  CHECK(error_of(std::string(kMinimal) + "[decide]\nage = true\n") ==
        "driftwatch.toml: [decide] rule 'age': it is on but neither max_age_checkins nor max_age_days is set");
  CHECK(error_of(std::string(kMinimal) + "[decide]\nmin_no_worse = 2\n").find("rule 'no_worse'") != std::string::npos);
  CHECK(error_of(std::string(kMinimal) + "[decide]\nmin_uplift = \"low\"\n") ==
        "driftwatch.toml:8: decide.min_uplift must be a number, not \"low\"");
  CHECK(error_of(std::string(kMinimal) + "[retrain]\npromote = \"always\"\n") ==
        "driftwatch.toml: retrain.promote must be \"auto\" or \"never\"");
  CHECK(error_of(std::string(kMinimal) + "[retrain]\nsettings = \"huge\"\n") ==
        "driftwatch.toml: retrain.settings must be \"shipped\" or \"small\"");
  CHECK(error_of(std::string(kMinimal) + "[retrain]\ntraining_suite = \"holdout\"\n") ==
        "driftwatch.toml: retrain.training_suite 'holdout' is also a held-out suite: a candidate must be judged on "
        "code it did not train on");
  CHECK(error_of(std::string(kMinimal) + "[retrain]\nvalidation_suite = \"holdout\"\n") ==
        "driftwatch.toml: retrain.validation_suite 'holdout' is also a held-out suite: training must never choose on "
        "the code it is judged on");
  CHECK(error_of(std::string(kMinimal) + "[retrain]\nvalidation_suite = \"train\"\n") ==
        "driftwatch.toml: retrain.validation_suite 'train' is the training suite: choices made on it would be made on "
        "the code trained on");
  CHECK(error_of(std::string(kMinimal) + "[retrain]\nmargin = 2\n") ==
        "driftwatch.toml:8: retrain.margin must be a number between 0 and 1, not 2");
}
