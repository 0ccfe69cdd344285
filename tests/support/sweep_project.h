#pragma once
// A driftwatch project on the scripted 8-week history, for end-to-end tests
// of sweeps, bisection and alerts: the 5-module testdata suite, its own
// database and data directory, a project file written by `driftwatch init`.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/text.h"
#include "tests/support/policy_file.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_db.h"

namespace testing {

/// A project on the 8-week history with the 5-module testdata suite, its
/// own database and data directory.
struct Project {
  TempDir dir;
  std::string dsn, data, repo, config;
  /// `history`: a file under tests/data (a variant of the 8-week history),
  /// or an absolute path.
  explicit Project(const std::string& history = "history-8w.toml") {
    std::string name;
    testing::fresh_database(true, &name);
    dsn = "host=" + testing::test_cluster_dir() + "/postgres user=postgres dbname=" + name;
    data = "--data-dir=" + (dir / "data").string();
    repo = (dir / "repo").string();
    auto history_file =
        history.starts_with("/") ? history : std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/" + history;
    REQUIRE(run_driftwatch({"sample-history", repo, "--history", history_file}).exit_code == 0);
    std::string src = std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/testdata";
    std::string json = "[";
    for (const char* f : {"hashtable", "ini", "json", "sort", "utf8"})
      json += std::string(json.size() > 1 ? "," : "") + "{\"directory\": \"" + src + "\", \"file\": \"" + f +
              ".c\", \"command\": \"cc -Oz -c " + f + ".c\"}";
    std::ofstream(dir / "compile_commands.json") << json << "]";
    auto s = run(
        {"suite", "build", "--from-compile-commands", (dir / "compile_commands.json").string(), "--name", "testdata"});
    REQUIRE_MESSAGE(s.exit_code == 0, s.output);
    // A frozen policy of the tests' own, so that retraining the shipped one
    // never moves what these tests expect.
    auto init = run({"init", (dir / "proj").string(), "--repo", repo, "--name", "toy", "--policy",
                     std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy"});
    REQUIRE_MESSAGE(init.exit_code == 0, init.output);
    config = (dir / "proj" / "driftwatch.toml").string();
    set("names = [\"holdout\"]", "names = [\"testdata\"]");
    set("every = \"1w\"", "every = \"2w\"");
    // Retries after 1 s, 2 s: what the tests check is that a job is tried
    // again, not how long a machine is given to recover.
    set("retry_backoff = \"10s\"", "retry_backoff = \"1s\"");
  }
  /// Replaces text in the project file.
  void set(const std::string& from, const std::string& to) {
    std::ifstream in(config);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto at = text.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
    std::ofstream(config) << text;
  }
  /// A small sweep: two monthly check-ins, no bisection (2 builds, 2 evaluations).
  void make_small() {
    set("every = \"2w\"", "every = \"1m\"");
    set("bisect = true", "bisect = false");
  }
  /// Tracks the tests' frozen policy as if trained at `sha` (the training
  /// check-in its metadata names replaced; its hash changes with it).
  void track_policy_trained_at(const std::string& sha) {
    const std::string frozen = std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy";
    std::ifstream in(frozen, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    auto policy = dir / ("trained-at-" + sha.substr(0, 12) + ".policy");
    std::ofstream(policy, std::ios::binary) << edited_policy(text, "0613a3f6180afd22cd4ad03b2fdb87e4a89e6f6d", sha);
    set(frozen, policy.string());
  }
  /// A toolchain directory whose `dwcc` (a copy of `dwcc`) sleeps `seconds`
  /// before each compile.
  std::filesystem::path slow_toolchain(const std::string& dwcc, int seconds) {
    auto slow = dir / ("slow-" + std::to_string(seconds));
    std::filesystem::create_directories(slow / "bin");
    std::filesystem::copy_file(dwcc, slow / "bin" / "dwcc.real");
    std::ofstream(slow / "bin" / "dwcc") << "#!/bin/sh\nsleep " << seconds
                                         << "\nexec \"$(dirname \"$0\")/dwcc.real\" \"$@\"\n";
    std::filesystem::permissions(slow / "bin" / "dwcc", std::filesystem::perms::owner_all);
    return slow;
  }
  /// Two prebuilt toolchains (copies of `dwcc`) in place of the history:
  /// jobs that take seconds, not a build.
  void use_prebuilt_toolchains(const std::string& dwcc) {
    set("repo = \"" + repo + "\"", "repo = \"\"");
    std::ofstream out(config, std::ios::app);
    for (const char* date : {"2026-01-05", "2026-01-12"}) {
      auto prefix = dir / (std::string("nightly-") + date);
      std::filesystem::create_directories(prefix / "bin");
      std::filesystem::copy_file(dwcc, prefix / "bin" / "dwcc");
      out << "[[toolchains]]\ndir = \"" << prefix.string() << "\"\nlabel = \"nightly " << date << "\"\ndate = \""
          << date << "\"\n";
    }
  }
  std::vector<std::string> args(std::vector<std::string> a, const std::string& db) const {
    a.insert(a.begin(), {data, "--db", db});
    return a;
  }
  common::ProcessResult run(std::vector<std::string> a) { return run_driftwatch(args(std::move(a), dsn)); }
  common::ProcessResult sweep(const std::string& db, std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"sweep", "--config", config, "-j", "2"};
    a.insert(a.end(), extra.begin(), extra.end());
    return run_driftwatch(args(a, db));
  }
  /// A sweep of the project's own database that must succeed (its output in
  /// the failure's message).
  common::ProcessResult sweep_ok(std::vector<std::string> extra = {}) {
    auto r = sweep(dsn, std::move(extra));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    return r;
  }
  /// What `git -C <repo> args…` prints, trimmed.
  std::string git(const std::vector<std::string>& a) const {
    common::ProcessSpec g;
    g.argv = {"git", "-C", repo};
    g.argv.insert(g.argv.end(), a.begin(), a.end());
    return common::trim(common::run_process(g).take().output);
  }
  /// An empty check-in on top of the history, which no sweep has seen
  /// (tonight's, say): HEAD moves to it. Returns its sha.
  std::string commit_on_top(const std::string& subject) const {
    auto sha = git({"-c", "user.name=N", "-c", "user.email=n@example.org", "commit-tree", "HEAD^{tree}", "-p", "HEAD",
                    "-m", subject});
    REQUIRE(sha.size() == 40);
    git({"update-ref", "HEAD", sha});
    return sha;
  }
  /// A query on the project's own database.
  std::string psql(const std::string& sql) const { return psql(dsn, sql); }
  static std::string psql(const std::string& db, const std::string& sql) {
    common::ProcessSpec p;
    p.argv = {"psql", "-X", "-At", db, "-c", sql};
    return common::trim(common::run_process(p).take().output);
  }
  /// Everything a sweep records that does not depend on timing.
  static std::string recorded(const std::string& db) {
    return psql(db,
                "SELECT string_agg(x, E'\\n' ORDER BY x) FROM ("
                " SELECT 'build ' || c.sha || ' ' || b.outcome AS x FROM builds b JOIN commits c ON c.id = b.commit_id"
                " UNION ALL SELECT 'eval ' || c.sha || ' ' || s.name || ' ' || e.status || ' ' || "
                "   round((e.summary->'summary'->>'uplift')::numeric, 9)"
                "   FROM evaluations e JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = b.commit_id"
                "   JOIN suites s ON s.id = e.suite_id"
                " UNION ALL SELECT 'result ' || c.sha || ' ' || bm.name || ' ' || r.heuristic || ' ' || r.outcome"
                "   FROM module_results r JOIN evaluations e ON e.id = r.evaluation_id"
                "   JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = b.commit_id"
                "   JOIN benchmarks bm ON bm.id = r.benchmark_id"
                " UNION ALL SELECT 'measure ' || c.sha || ' ' || bm.name || ' ' || m.heuristic || ' ' || m.metric || "
                "   ' ' || m.value FROM measurements m JOIN evaluations e ON e.id = m.evaluation_id"
                "   JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = b.commit_id"
                "   JOIN benchmarks bm ON bm.id = m.benchmark_id WHERE m.metric <> 'compile_seconds'"
                " UNION ALL SELECT 'job ' || key || ' ' || state FROM jobs"
                " UNION ALL SELECT 'alert ' || fingerprint || ' ' || kind || ' ' || state FROM alerts) t");
  }
};

/// Another fresh database on the test server; its DSN.
std::string second_database(std::string* name);

}  // namespace testing
