// driftwatch init and sweep end to end: a scripted 8-week history, the real
// sample compiler, a real suite, PostgreSQL; sweeps killed and resumed.
#include <doctest/doctest.h>
#include <signal.h>

#include <cctype>
#include <chrono>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "common/read_file.h"
#include "common/text.h"
#include "tests/support/policy_file.h"
#include "tests/support/sweep_project.h"

using testing::Project;
using testing::run_driftwatch;
using testing::second_database;

TEST_CASE("a monthly sweep SIGKILLed midway and rerun records exactly the rows of an uninterrupted one") {
  // Issues 9 and 10: the same rows, the same change point bisected to the
  // same culprit and one open alert; a third run with --new does nothing.
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  auto whole = p.sweep(p.dsn);
  INFO(whole.output);
  REQUIRE(whole.exit_code == 0);
  auto expected = Project::recorded(p.dsn);
  CHECK(expected.find("measure ") != std::string::npos);
  // December's and January's last check-ins differ: the merge of the cost-model branch moved the sizes.
  CHECK(whole.output.find("NEW ") != std::string::npos);
  CHECK(whole.output.find("Merge branch 'side/cost-model'") != std::string::npos);
  // Two check-ins lie between December's and January's samples: at most ceil(log2 3) = 2 evaluations.
  CHECK(whole.output.find("check-ins evaluated]") != std::string::npos);
  CHECK((whole.output.find("[1 of 2 check-ins evaluated]") != std::string::npos ||
         whole.output.find("[2 of 2 check-ins evaluated]") != std::string::npos));
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM alerts WHERE state = 'open'") == "1");
  CHECK(Project::psql(p.dsn, "SELECT c.subject FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id") ==
        "Merge branch 'side/cost-model'");
  // Bisection measured check-ins between the two samples, through the same jobs.
  CHECK(std::stoi(Project::psql(p.dsn, "SELECT count(*) FROM jobs WHERE kind = 'build'")) > 2);

  // The same project into another database and a fresh data directory, killed once some jobs are done.
  std::string other_name;
  auto other = second_database(&other_name);
  p.data = "--data-dir=" + (p.dir / "data2").string();
  std::filesystem::create_directories(p.dir / "data2");
  std::filesystem::create_symlink(p.dir / "data" / "suites", p.dir / "data2" / "suites");
  common::ProcessSpec spec;
  spec.argv = p.args({"sweep", "--config", p.config, "-j", "2"}, other);
  spec.argv.insert(spec.argv.begin(), DRIFTWATCH_BIN);
  auto child = common::Child::start(spec).take();
  int done = 0;
  for (int i = 0; i < 1500 && !child.try_wait() && done < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto n = Project::psql(other, "SELECT count(*) FROM jobs WHERE state IN ('done', 'skipped')");
    if (!n.empty() && std::isdigit(static_cast<unsigned char>(n[0]))) done = std::stoi(n);
  }
  REQUIRE_MESSAGE(done >= 1, "the sweep did not get going");
  kill(child.pid(), SIGKILL);
  auto killed = child.wait();
  REQUIRE_MESSAGE(killed.signal == SIGKILL, "the sweep finished before it could be killed midway");
  CHECK(Project::recorded(other) != expected);
  // Read before the rerun, the report does not say "no change was found" of
  // what nobody analysed (helper 149).
  auto md = [&] {
    auto out = p.dir / "report-other";
    auto r = run_driftwatch(p.args({"report", "--config", p.config, "--out", out.string(), "--format", "md"}, other));
    REQUIRE_MESSAGE(r.exit_code == 0, r.output);
    return common::read_file(out / "report.md").take();
  };
  auto pending = md();
  CHECK(pending.find("has not finished (it runs still, or was killed): what it measured is not analysed") !=
        std::string::npos);
  CHECK(pending.find("no change of the uplift or the sizes was found") == std::string::npos);

  auto rerun = p.sweep(other);
  INFO(rerun.output);
  REQUIRE(rerun.exit_code == 0);
  CHECK(rerun.output.find(std::to_string(done) + " already done") != std::string::npos);
  CHECK(Project::recorded(other) == expected);
  CHECK(md().find("not analysed for drift yet") == std::string::npos);

  auto third = p.sweep(other, {"--new"});
  CHECK(third.exit_code == 0);
  CHECK(third.output.find("nothing new since the last sweep") != std::string::npos);
  // A stale checkout is the usual reason: where the branch stands is said.
  CHECK(third.output.find(" from 20") != std::string::npos);
  CHECK(third.output.find("driftwatch never fetches") != std::string::npos);
  CHECK(Project::recorded(other) == expected);

  auto alerts = run_driftwatch(p.args({"alerts", "--config", p.config, "--exit-code"}, other));
  CHECK(alerts.exit_code == 1);
  CHECK(alerts.output.find("Merge branch 'side/cost-model'") != std::string::npos);

  // A second project tracking the same policy on the same suite reuses every
  // job and keeps its own series of points beside the first's.
  p.set("name = \"toy\"", "name = \"toy-again\"");
  auto again = p.sweep(other);
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  CHECK(Project::psql(other, "SELECT count(DISTINCT project) FROM drift_points") == "2");
  CHECK(Project::psql(other, "SELECT count(DISTINCT n) FROM (SELECT project, count(*) AS n FROM drift_points "
                             "GROUP BY project) t") == "1");
}

TEST_CASE("jobs an interrupted sweep left queued are run by the next sweep --new, not left waiting for ever") {
  // The report said "waits in the queue" while each night's --new found
  // "nothing new" and nothing ran them.
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  p.set("bisect = true", "bisect = false");
  p.sweep_ok();
  auto done = [&] { return std::stoi(p.psql("SELECT count(*) FROM jobs WHERE state IN ('done', 'skipped')")); };
  int before = done();
  common::ProcessSpec spec;
  spec.argv = p.args({"sweep", "--config", p.config, "-j", "2", "--every", "1w"}, p.dsn);
  spec.argv.insert(spec.argv.begin(), DRIFTWATCH_BIN);
  auto child = common::Child::start(spec).take();
  for (int i = 0; i < 1500 && !child.try_wait() && done() == before; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(child.pid(), SIGKILL);
  REQUIRE_MESSAGE(child.wait().signal == SIGKILL, "the weekly sweep finished before it could be killed midway");
  auto queued = p.psql("SELECT count(*) FROM jobs WHERE state = 'queued'");
  REQUIRE(queued != "0");
  auto nightly = p.sweep(p.dsn, {"--new"});
  INFO(nightly.output);
  CHECK(nightly.exit_code == 0);
  CHECK(nightly.output.find("nothing new since the last sweep") == std::string::npos);
  // (Those queued, and the killed sweep's running one, taken back.)
  CHECK(nightly.output.find(" job(s) an earlier sweep left queued") != std::string::npos);
  CHECK(nightly.output.find(": no new check-in; takes up ") != std::string::npos);
  CHECK(nightly.output.find(": 0 check-in(s)") == std::string::npos);
  CHECK(nightly.output.find(": no new check-in; jobs: ") != std::string::npos);  // the summary
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE state = 'queued'") == "0");
  // And with none left, the next night's is nothing new again.
  CHECK(p.sweep(p.dsn, {"--new"}).output.find("nothing new since the last sweep") != std::string::npos);
}

TEST_CASE("an alert found after a bisection cut short tells the same search as one bisected in one run") {
  // The search between two samples is told from what is stored: a sweep
  // killed mid-bisection and run again said "[1 of 1 check-ins evaluated]"
  // where one run says "[1 of 2 …]" (or 2 of 2), as if the range were narrower.
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  p.sweep_ok();
  auto searched = [](const std::string& db) {
    return Project::psql(db,
                         "SELECT string_agg(kind || ' ' || (details->>'range_size') || ' ' || "
                         "(details->>'bisect_evaluations'), ', ' ORDER BY kind) FROM alerts WHERE state = 'open'");
  };
  auto expected = searched(p.dsn);
  REQUIRE(expected.find(" 2 ") != std::string::npos);  // two check-ins between December's and January's samples
  auto first_step =
      p.psql("SELECT payload->>'sha' FROM jobs WHERE priority = 10 AND kind = 'eval' ORDER BY id LIMIT 1");
  REQUIRE(first_step.size() == 40);

  // Another database: the samples, then bisection's first step alone (as a
  // sweep killed right after it leaves them), then the analysis goes on.
  std::string other_name;
  auto other = second_database(&other_name);
  p.set("bisect = true", "bisect = false");
  auto samples = p.sweep(other);
  INFO(samples.output);
  REQUIRE(samples.exit_code == 0);
  REQUIRE(Project::psql(other, "SELECT count(*) FROM alerts") == "1");  // the samples' range, not bisected
  auto step = run_driftwatch(
      p.args({"eval", "--repo", p.repo, "--recipe", "sample-compiler", "--build", first_step, "--suite", "testdata",
              "--policy", std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy"},
             other));
  INFO(step.output);
  REQUIRE(step.exit_code == 0);
  p.set("bisect = false", "bisect = true");
  auto rest = run_driftwatch(p.args({"bisect", "--config", p.config}, other));
  INFO(rest.output);
  REQUIRE(rest.exit_code == 0);
  CHECK(searched(other) == expected);
  CHECK(Project::psql(other,
                      "SELECT string_agg(c.subject, ', ') FROM alerts a JOIN commits c ON c.id = "
                      "a.culprit_commit_id WHERE a.state = 'open'") == "Merge branch 'side/cost-model'");
}

TEST_CASE("changes before the policy's training check-in are not bisected nor alerted on") {
  // The monthly sweep's one alert is the cost-model merge (see above); a
  // policy trained at the merge itself has nothing to drift from before it.
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  auto merge = p.git({"log", "--format=%H", "--grep=Merge branch 'side/cost-model'"});
  REQUIRE(merge.size() == 40);
  p.track_policy_trained_at(merge);
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  // December's sample was measured (the range starts before the training
  // check-in), and so was the merge, the baseline.
  CHECK(p.psql("SELECT count(*) FROM evaluations e JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = "
               "b.commit_id WHERE e.status = 'done' AND c.sha = '" +
               merge + "'") == "1");
  CHECK(s.output.find("drift is analysed from the policy's training check-in " + merge.substr(0, 12) +
                      " on: 1 sampled check-in(s) before it") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM alerts") == "0");
  CHECK(s.output.find("check-in(s) between") == std::string::npos);  // no bisection

  // A bisect asked for by hand up to the training check-in pins the change
  // there; that is the baseline too, and the next sweep closes its alert
  // (nothing from the training check-in on would revisit it).
  auto december = p.psql("SELECT sha FROM commits WHERE subject = 'Fix the build after the PassPipeline.h rename'");
  REQUIRE(december.size() == 40);
  auto b = p.run({"bisect", "--config", p.config, "--good", december, "--bad", merge});
  INFO(b.output);
  REQUIRE(b.exit_code == 0);
  REQUIRE(p.psql("SELECT c.sha || '|' || a.state FROM alerts a JOIN commits c ON c.id = a.first_bad_commit_id") ==
          merge + "|open");
  p.sweep_ok();
  CHECK(p.psql("SELECT state || '|' || state_by || '|' || (note LIKE 'at the policy''s training check-in%') FROM "
               "alerts") == "resolved|driftwatch|true");
  CHECK(p.run({"alerts", "--config", p.config, "--exit-code"}).exit_code == 0);
  // A one-off --since measures check-ins before the training check-in,
  // where the project's drift begins: said, as for a range's `since`.
  auto wider = p.sweep_ok({"--since", "2000-01-01", "-q"});
  INFO(wider.output);
  CHECK(wider.output.find("check-in(s) this sweep measures lie before the policy's training check-in " +
                          merge.substr(0, 12) + ", where the project's drift begins") != std::string::npos);
  // One after it leaves the project's range, and its baseline, as they are:
  // no warning that the training check-in lies outside (helper 152).
  auto last_day = p.git({"log", "-1", "--format=%cs", "main"});
  auto later = p.sweep_ok({"--since", last_day});
  INFO(later.output);
  CHECK(later.output.find("lies outside the project's range") == std::string::npos);
}

TEST_CASE(
    "an alert before the policy's training check-in, opened by a bisect asked for there, is resolved by the next "
    "sweep") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  auto head = p.git({"rev-parse", "main"});
  REQUIRE(head.size() == 40);
  p.track_policy_trained_at(head);
  p.sweep_ok();
  CHECK(p.psql("SELECT count(*) FROM alerts") == "0");
  // Asked for by hand, a range before the training check-in is bisected: the merge.
  auto december = p.psql("SELECT sha FROM commits WHERE subject = 'Fix the build after the PassPipeline.h rename'");
  REQUIRE(december.size() == 40);
  auto b = p.run({"bisect", "--config", p.config, "--good", december, "--bad", head});
  INFO(b.output);
  REQUIRE(b.exit_code == 0);
  REQUIRE(p.psql("SELECT c.subject || '|' || a.state FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id") ==
          "Merge branch 'side/cost-model'|open");
  // The nightly analysis starts at the training check-in again: the alert
  // would stay open for ever.
  p.sweep_ok();
  CHECK(p.psql("SELECT state || '|' || state_by FROM alerts") == "resolved|driftwatch");
  CHECK(p.run({"alerts", "--config", p.config, "--exit-code"}).exit_code == 0);

  // Its evaluation at its training check-in lost (interrupted), and it could
  // not run at the check-ins before it: nothing is measured since it was
  // trained, which is not a policy that cannot run now (a retrain for hours).
  p.psql(
      "UPDATE evaluations SET status = CASE WHEN build_id IN (SELECT b.id FROM builds b JOIN commits c ON c.id = "
      "b.commit_id WHERE c.sha = '" +
      head +
      "') THEN 'interrupted' ELSE 'failed' END, summary = '{\"error\": \"the policy reads callee_users, which the "
      "compiler does not send\"}'");
  REQUIRE(p.psql("SELECT string_agg(DISTINCT status, ',' ORDER BY status) FROM evaluations") == "failed,interrupted");
  auto d = p.run({"decide", "--config", p.config});
  INFO(d.output);
  CHECK(d.exit_code == 2);
  CHECK(common::last_line(d.output).find("since its training check-in " + head.substr(0, 12)) != std::string::npos);
}

TEST_CASE("--new after the project's sampling is edited plans the new grid's earlier points too") {
  Project p;
  p.make_small();
  p.set("since = \"\"", "since = \"2026-01-01\"");  // January's sample alone
  p.sweep_ok();
  auto december = [&] {
    return p.psql(
        "SELECT count(*) FROM evaluations e JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = "
        "b.commit_id WHERE e.status = 'done' AND c.subject = 'Fix the build after the PassPipeline.h rename'");
  };
  CHECK(december() == "0");
  // The range now starts with the history: December's sample lies before
  // the last swept head, and only a whole-range plan reaches it.
  p.set("since = \"2026-01-01\"", "since = \"\"");
  auto edited = p.sweep_ok({"--new"});
  CHECK(edited.output.find("the project's sampling changed since the last sweep") != std::string::npos);
  CHECK(edited.output.find("since \"2026-01-01\"") != std::string::npos);
  CHECK(december() == "1");
  // The same settings again: one grid, nothing new.
  auto again = p.sweep_ok({"--new"});
  CHECK(again.output.find("nothing new since the last sweep") != std::string::npos);
  CHECK(again.output.find("sampling changed") == std::string::npos);
}

TEST_CASE(
    "--new measures the project's policy where another one had the newer check-ins, and until moved later keeps the "
    "grid") {
  Project p;
  p.make_small();
  // Weekly, so that the grid holds a check-in that does not build (the
  // rename before its fix), December's weeks first.
  p.set("every = \"1m\"", "every = \"1w\"");
  p.set("until = \"\"", "until = \"2025-12-31\"");
  p.sweep_ok();
  auto broken = p.psql(
      "SELECT count(*) FROM builds b JOIN commits c ON c.id = b.commit_id WHERE b.outcome <> 'ok' "
      "AND c.subject LIKE '[NFC] Rename Pipeline.h%'");
  REQUIRE(broken == "1");
  // Nothing new: the reason is `until`, not the grid.
  auto quiet = p.sweep_ok({"--new"});
  CHECK(quiet.output.find("nothing new since the last sweep") != std::string::npos);
  CHECK(quiet.output.find("(until = \"2025-12-31\" ends the project's range before it)") != std::string::npos);

  // Another policy, and `until` taken off: January is new; December, swept
  // under the first policy, is measured under this one too, from its
  // training check-in on, but for the check-in that does not build: it has
  // nothing to measure. Moving `until` later is no new grid.
  const std::string frozen = std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy";
  auto week1 = p.git({"log", "-1", "--format=%H", "--grep=Add release notes", "main"});
  REQUIRE(week1.size() == 40);
  p.track_policy_trained_at(week1);
  p.set("until = \"2025-12-31\"", "until = \"\"");
  auto other = p.sweep_ok({"--new"});
  INFO(other.output);
  CHECK(other.output.find("sampling changed") == std::string::npos);
  CHECK(other.output.find("measuring 2 check-in(s) swept before too") != std::string::npos);
  // The check-in that does not build was not planned again: its only
  // evaluation job is the first policy's, skipped.
  auto rename = p.git({"log", "-1", "--format=%H", "--grep=Rename Pipeline.h", "main"});
  REQUIRE(rename.size() == 40);
  CHECK(p.psql("SELECT string_agg(state, ',') FROM jobs WHERE kind = 'eval' AND key LIKE '%@" + rename + ":%'") ==
        "skipped");
  auto head = p.git({"rev-parse", "HEAD"});
  auto policies_at = [&](const std::string& sha) {
    return p.psql(
        "SELECT count(DISTINCT e.policy_id) FROM evaluations e JOIN builds b ON b.id = e.build_id "
        "JOIN commits c ON c.id = b.commit_id WHERE e.status = 'done' AND c.sha = '" +
        sha + "'");
  };
  CHECK(policies_at(head) == "1");

  // Back to the first policy (a rollback, by hand): its series would end
  // in December, while January has the other policy's result only.
  p.set((p.dir / ("trained-at-" + week1.substr(0, 12) + ".policy")).string(), frozen);
  auto back = p.sweep_ok({"--new"});
  INFO(back.output);
  CHECK(back.output.find("measuring 3 check-in(s) swept before too") != std::string::npos);
  CHECK(policies_at(head) == "2");
  CHECK(p.sweep_ok({"--new"}).output.find("nothing new since the last sweep") != std::string::npos);
}

TEST_CASE("a project's drift, decide and report begin at its range: what was measured before it is not its own") {
  Project p;
  p.sweep_ok();  // the whole history, every two weeks, bisected: its changes alerted
  REQUIRE(p.psql("SELECT count(*) FROM alerts WHERE project = 'toy'") != "0");
  // A second project on the same repository whose range begins after the
  // merge (the last change): what the first measured before it would
  // otherwise be bisected and alerted on, and be its baseline.
  auto after_merge = p.psql(
      "SELECT to_char(committed_at + interval '1 day', 'YYYY-MM-DD') FROM commits WHERE subject LIKE 'Merge branch%'");
  REQUIRE(after_merge.size() == 10);
  p.set("name = \"toy\"", "name = \"late\"");
  p.set("since = \"\"", "since = \"" + after_merge + "\"");
  auto late = p.sweep_ok();
  INFO(late.output);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE project = 'late'") == "0");
  CHECK(late.output.find("drift: one evaluated check-in so far") != std::string::npos);
  auto first =
      p.psql("SELECT c.sha FROM commits c WHERE c.committed_at >= '" + after_merge +
             "' AND EXISTS (SELECT 1 FROM builds b "
             "JOIN evaluations e ON e.build_id = b.id WHERE b.commit_id = c.id AND e.status = 'done') ORDER BY "
             "c.committed_at LIMIT 1");
  REQUIRE(first.size() == 40);
  auto out = p.dir / "late-report";
  auto rep = p.run({"report", "--config", p.config, "--out", out.string()});
  REQUIRE_MESSAGE(rep.exit_code == 0, rep.output);
  std::ifstream in(out / "report.json");
  auto page = nlohmann::json::parse(in);
  REQUIRE(page["overview"].size() == 1);
  CHECK(page["overview"][0]["baseline"]["sha"] == first);
  // Its charts begin there too: the first project's earlier points are not drawn.
  REQUIRE_FALSE(page["suites"][0]["points"].empty());
  CHECK(page["suites"][0]["points"][0]["sha"] == first);
  // decide judges from the same check-in: its uplift is the baseline's.
  auto d = p.run({"decide", "--config", p.config});
  INFO(d.output);
  CHECK(d.output.find("from the first evaluated check-in of the project's range") != std::string::npos);
  CHECK(d.output.find("the baseline's uplift " + common::signed_percent(page["overview"][0]["baseline_uplift"])) !=
        std::string::npos);
  // The first project's own alerts of those changes stand.
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE project = 'toy' AND state = 'open'") != "0");
  // A one-off --since before the range measures check-ins its drift leaves out: said so.
  auto wider = p.sweep_ok({"--since", "2025-12-01", "-q"});
  INFO(wider.output);
  CHECK(wider.output.find("check-in(s) this sweep measures lie before the project's range (since = \"" + after_merge +
                          "\"): they are built and measured, but drift, alerts, decide and the report begin where the "
                          "range does; set sampling.since earlier") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE project = 'late'") == "0");
}

TEST_CASE("a quiet sweep tells only its new alerts: changes already known are counted, not told again") {
  Project p;
  auto first = p.sweep_ok();
  auto at = first.output.find("\n  NEW ");
  REQUIRE_MESSAGE(at != std::string::npos, first.output);
  auto told = first.output.substr(at + 7, first.output.find('\n', at + 1) - at - 7);
  auto again = p.sweep_ok({"-q"});
  INFO(again.output);
  CHECK(again.output.find(told) == std::string::npos);
  CHECK(again.output.find(" change(s) known before or already over (`driftwatch alerts` lists them)") !=
        std::string::npos);
  // Without -q, the whole list as before.
  CHECK(p.sweep_ok().output.find(told) != std::string::npos);
}

TEST_CASE("a branch that names a tag is said to never move when nothing is new") {
  Project p;
  p.set("branch = \"\"", "branch = \"v1.0\"");  // the import alone
  p.make_small();
  p.sweep_ok();
  auto again = p.sweep_ok({"--new"});
  CHECK(again.output.find("nothing new since the last sweep") != std::string::npos);
  CHECK(again.output.find("branch = \"v1.0\" names no branch, local or remote-tracking: a tag or a commit, it never "
                          "moves") != std::string::npos);
  CHECK(again.output.find("update the repository first") == std::string::npos);
}

TEST_CASE("a second sweep of a project exits at once with status 3 while the first runs") {
  Project p;
  common::ProcessSpec spec;
  spec.argv = p.args({"sweep", "--config", p.config, "-j", "1"}, p.dsn);
  spec.argv.insert(spec.argv.begin(), DRIFTWATCH_BIN);
  auto first = common::Child::start(spec).take();
  for (int i = 0; i < 300 && Project::psql(p.dsn, "SELECT count(*) FROM sweeps") == "0"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto second = p.sweep(p.dsn);
  // At once, not after the first finished: the first is still running.
  bool first_still_running = !first.try_wait().has_value();
  first.kill_group();
  INFO(second.output);
  CHECK(second.exit_code == 3);
  CHECK(second.output.find("another sweep of project 'toy' is running") != std::string::npos);
  CHECK(first_still_running);
}

TEST_CASE("sweep refuses a bad project file naming the key and its line") {
  Project p;
  p.set("every = \"2w\"", "evry = \"2w\"");
  auto r = p.sweep(p.dsn);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("driftwatch.toml:20: unknown key 'sampling.evry'") != std::string::npos);
  auto missing = p.run({"sweep", "--config", (p.dir / "nope.toml").string()});
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("nope.toml (no such file; `driftwatch init` writes one)") != std::string::npos);
  auto folder = p.run({"sweep", "--config", p.dir.path().string()});
  CHECK(folder.exit_code == 2);
  CHECK(folder.output.find(p.dir.path().string() + " is a directory, not a project file") != std::string::npos);
  // A truncated policy is refused by init, as by the loader, and nothing is written.
  {
    std::ifstream whole(std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy", std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(whole)), {});
    std::ofstream(p.dir / "truncated.policy", std::ios::binary) << text.substr(0, text.size() / 2);
  }
  auto truncated = p.run({"init", (p.dir / "proj2").string(), "--policy", (p.dir / "truncated.policy").string()});
  CHECK(truncated.exit_code == 2);
  CHECK(truncated.output.find("truncated.policy") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(p.dir / "proj2" / "driftwatch.toml"));
  auto again = p.run({"init", (p.dir / "proj").string()});
  CHECK(again.exit_code == 2);
  CHECK(again.output.find("exists; not overwritten") != std::string::npos);

  // A sampling that selects nothing measures nothing: a mistake, not "nothing new".
  p.set("evry = \"2w\"", "every = \"2w\"");
  p.set("until = \"\"", "until = \"2001-01-01\"");
  auto none = p.sweep(p.dsn);
  INFO(none.output);
  CHECK(none.exit_code == 2);
  CHECK(none.output.find("the sampling of project 'toy' selects no check-in of " + p.repo) != std::string::npos);
  CHECK(none.output.find("until = \"2001-01-01\"") != std::string::npos);
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM jobs") == "0");

  // A recipe that cannot compile modules is refused before anything is planned.
  p.set("until = \"2001-01-01\"", "until = \"\"");
  std::ifstream in(std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/recipes/sample-compiler.toml");
  std::string recipe((std::istreambuf_iterator<char>(in)), {});
  auto at = recipe.find("[compile]");
  REQUIRE(at != std::string::npos);
  auto no_compile = p.dir / "no-compile.toml";
  std::ofstream(no_compile) << recipe.substr(0, at);
  p.set("recipe = \"sample-compiler\"", "recipe = \"" + no_compile.string() + "\"");
  auto uncompiled = p.sweep(p.dsn);
  INFO(uncompiled.output);
  CHECK(uncompiled.exit_code == 2);
  CHECK(uncompiled.output.find("has no [compile] section: a sweep cannot compile") != std::string::npos);
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM jobs") == "0");
  // So is eval with it, before the check-in is built (an hour for LLVM).
  auto eval = p.run({"eval", "--repo", p.repo, "--build", "main", "--recipe", no_compile.string(), "--suite",
                     "testdata", "--policy", std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy"});
  INFO(eval.output);
  CHECK(eval.exit_code == 2);
  CHECK(common::last_line(eval.output).find("has no [compile] section: it cannot compile the suite's modules") !=
        std::string::npos);
  CHECK(eval.output.find("compiler: ") == std::string::npos);  // no build was started
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM builds") == "0");
}

TEST_CASE("an alert whose check-in a force-push took out of the branch is resolved, and opens again if it comes back") {
  Project p;
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  auto id = p.psql("SELECT min(id) FROM alerts WHERE state = 'open' AND culprit_commit_id IS NOT NULL");
  REQUIRE_FALSE(id.empty());
  auto culprit = p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id WHERE a.id = " + id);
  auto head = p.git({"rev-parse", "main"});
  // The branch reset to before the culprit, and built on: the culprit is in no history the project tracks.
  p.git({"update-ref", "refs/heads/main", culprit + "~1"});
  p.commit_on_top("Start again from here");
  auto rewritten = p.sweep(p.dsn);
  INFO(rewritten.output);
  CHECK(rewritten.exit_code == 0);
  CHECK(p.psql("SELECT state || ': ' || note FROM alerts WHERE id = " + id)
            .starts_with("resolved: its check-in is no longer in the tracked branch's history"));
  auto exit = p.run({"alerts", "--config", p.config, "--exit-code"});
  CHECK(exit.output.find(culprit.substr(0, 12)) == std::string::npos);
  // The old history pushed back: its change is found again, and so is its alert.
  p.git({"update-ref", "refs/heads/main", head});
  auto back = p.sweep(p.dsn);
  INFO(back.output);
  CHECK(back.exit_code == 0);
  CHECK(p.psql("SELECT state || ': ' || note FROM alerts WHERE id = " + id) == "open: found again");
  // Rewritten again, and its objects pruned (or a fresh clone): the repository lacks the culprit altogether.
  p.git({"update-ref", "refs/heads/main", culprit + "~1"});
  p.commit_on_top("Start again, for good");
  for (const auto& ref : common::split(p.git({"for-each-ref", "--format=%(refname)"}), '\n'))
    if (!ref.empty() && ref != "refs/heads/main") p.git({"update-ref", "-d", ref});  // tags, side branches
  p.git({"reflog", "expire", "--expire=now", "--all"});
  p.git({"gc", "--prune=now", "--quiet"});
  REQUIRE(p.git({"cat-file", "-t", culprit}).find("commit") == std::string::npos);
  auto pruned = p.sweep(p.dsn);
  INFO(pruned.output);
  CHECK(pruned.exit_code == 0);
  CHECK(p.psql("SELECT state || ': ' || note FROM alerts WHERE id = " + id)
            .starts_with("resolved: its check-in is no longer in the tracked branch's history"));
}

TEST_CASE("sweep --new on a night with nothing new analyses what a sweep stopped before its analysis measured") {
  Project p;
  p.make_small();
  p.sweep_ok();
  auto alerts = p.psql("SELECT count(*) FROM alerts");
  REQUIRE(alerts != "0");
  p.sweep_ok();
  // As a full sweep killed after its jobs, before its drift analysis, leaves
  // it: the one before it finished, with the same head.
  p.psql("TRUNCATE alerts CASCADE");
  p.psql("UPDATE sweeps SET state = 'interrupted' WHERE id = (SELECT max(id) FROM sweeps)");
  auto night = p.sweep_ok({"--new"});
  INFO(night.output);
  CHECK(night.output.find("stopped before it analysed what it measured: analysing it now") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM alerts") == alerts);
  // Analysed, the next night is a quiet one again.
  CHECK(p.sweep_ok({"--new"}).output.find("nothing new since the last sweep") != std::string::npos);
}

TEST_CASE("decide and report refuse a range that selects no check-in, as sweep does, rather than read every one") {
  Project p;
  p.make_small();
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  auto decisions = p.psql("SELECT count(*) FROM retraining_decisions");
  // After the history's last check-in (2026-01-26), before today: a slip of the year, say.
  p.set("since = \"\"", "since = \"2026-06-01\"");
  for (auto args : {std::vector<std::string>{"decide", "--config", p.config},
                    std::vector<std::string>{"report", "--config", p.config, "--out", (p.dir / "r").string()},
                    std::vector<std::string>{"sweep", "--config", p.config}}) {
    auto r = p.run(args);
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(common::last_line(r.output).find("selects no check-in") != std::string::npos);
  }
  CHECK(p.psql("SELECT count(*) FROM retraining_decisions") == decisions);
  CHECK_FALSE(std::filesystem::exists(p.dir / "r" / "index.html"));
}

TEST_CASE("sweep --new after a force-push names the lost check-in and deletes nothing") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  auto before = Project::recorded(p.dsn);
  auto git = [&](std::vector<std::string> args) {
    common::ProcessSpec g;
    g.argv = {"git", "-c", "user.name=Test", "-c", "user.email=test@example.org", "-C", p.repo};
    g.argv.insert(g.argv.end(), args.begin(), args.end());
    auto r = common::run_process(g).take();
    REQUIRE_MESSAGE(r.ok(), r.output);
    return common::trim(r.output);
  };
  auto swept = git({"rev-parse", "main"});
  // Rewrite the branch: main now points at an older check-in, the swept head is gone from its line.
  git({"update-ref", "refs/heads/main", "main~3"});
  auto r = p.sweep(p.dsn, {"--new"});
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("is not on the first-parent line of HEAD any more (force-pushed?)") != std::string::npos);
  CHECK(r.output.find("nothing was deleted") != std::string::npos);
  CHECK(Project::recorded(p.dsn) == before);

  // Merged back with its parents swapped (`git pull` into the older line,
  // then pushed): the swept head is there, behind the merge's second parent.
  auto merge = git(
      {"commit-tree", swept + "^{tree}", "-p", "main", "-p", swept, "-m", "Merge branch 'main' of upstream into work"});
  git({"update-ref", "refs/heads/main", merge});
  auto pulled = p.sweep(p.dsn, {"--new"});
  INFO(pulled.output);
  CHECK(pulled.exit_code == 2);
  CHECK(pulled.output.find("only through the second parent of merge " + merge.substr(0, 12) +
                           " (Merge branch 'main' of upstream into work)") != std::string::npos);
  CHECK(Project::recorded(p.dsn) == before);
}

TEST_CASE("a recipe's [compile] timeout bounds each module's compile") {
  Project p;
  // A toolchain whose compiler takes three seconds a compile, and a recipe
  // that allows one: every compile is cut at the recipe's limit.
  auto slow = p.slow_toolchain(DWCC_BIN, 3);
  std::ifstream shipped(std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/recipes/sample-compiler.toml");
  std::string recipe((std::istreambuf_iterator<char>(shipped)), {});
  recipe.replace(recipe.find("name = \"sample-compiler\""), 24, "name = \"hasty\"");
  recipe += "timeout = \"1s\"\n";  // the last table is [compile]
  REQUIRE(recipe.rfind("[compile]") > recipe.rfind("[artifacts]"));
  std::ofstream(p.dir / "hasty.toml") << recipe;
  auto e = p.run({"eval", "--build", slow.string(), "--recipe", (p.dir / "hasty.toml").string(), "--suite", "testdata",
                  "--policy", std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy"});
  INFO(e.output);
  CHECK(e.exit_code != 0);
  CHECK(e.output.find("timed out after 1.0 s") != std::string::npos);
}

TEST_CASE("eval and sweep take a prebuilt toolchain: any directory holding the recipe's artifacts") {
  Project p;
  auto prefix = p.dir / "nightly-2026-01-05";
  std::filesystem::create_directories(prefix / "bin");
  std::filesystem::copy_file(DWCC_BIN, prefix / "bin" / "dwcc");
  auto e = p.run({"eval", "--build", prefix.string(), "--suite", "testdata", "--policy",
                  std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy"});
  INFO(e.output);
  REQUIRE(e.exit_code == 0);
  CHECK(e.output.find("matches or beats the default on") != std::string::npos);

  auto empty = p.dir / "not-a-toolchain";
  std::filesystem::create_directories(empty);
  auto bad = p.run({"eval", "--build", empty.string(), "--suite", "testdata", "--policy",
                    std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("lacks the recipe's artifact 'compiler'") != std::string::npos);

  // A project of toolchains only: each is a sample of the sweep, ordered by date.
  p.set("repo = \"" + p.repo + "\"", "repo = \"\"");
  std::ofstream(p.config, std::ios::app) << "[[toolchains]]\ndir = \"" << prefix.string()
                                         << "\"\nlabel = \"nightly\"\ndate = \"2026-01-05\"\n[[toolchains]]\ndir = \""
                                         << empty.string() << "\"\ndate = \"2026-01-06\"\n";
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  CHECK(s.output.find("2 check-in(s)") != std::string::npos);
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM evaluations WHERE status = 'done'") == "1");
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM builds WHERE outcome = 'missing-artifact'") == "1");
  CHECK(s.output.find("lacks the recipe's artifact 'compiler'") != std::string::npos);  // the reason, said
  // A toolchain directory that is not there (not yet published) fails the
  // sweep naming it, is recorded as nothing, and the next sweep takes it.
  auto later = p.dir / "nightly-2026-01-07";
  std::ofstream(p.config, std::ios::app) << "[[toolchains]]\ndir = \"" << later.string()
                                         << "\"\ndate = \"2026-01-07\"\n";
  auto absent = p.sweep(p.dsn);
  INFO(absent.output);
  CHECK(absent.exit_code == 1);
  CHECK(absent.output.find("toolchain " + later.string() + " is not a directory") != std::string::npos);
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM builds") == "2");
  std::filesystem::create_directories(later / "bin");
  std::filesystem::copy_file(DWCC_BIN, later / "bin" / "dwcc");
  auto published = p.sweep(p.dsn);
  INFO(published.output);
  CHECK(published.exit_code == 0);
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM evaluations WHERE status = 'done'") == "2");
  // The directory that lacked the artifact holds it now (a nightly published
  // in stages, or repaired): `jobs retry` on its build job measures it.
  std::filesystem::create_directories(empty / "bin");
  std::filesystem::copy_file(DWCC_BIN, empty / "bin" / "dwcc");
  auto job =
      Project::psql(p.dsn, "SELECT id FROM jobs WHERE kind = 'build' AND result->>'outcome' = 'missing-artifact'");
  REQUIRE_FALSE(job.empty());
  auto retry = p.run({"jobs", "retry", job});
  INFO(retry.output);
  CHECK(retry.exit_code == 0);
  auto repaired = p.sweep(p.dsn);
  INFO(repaired.output);
  CHECK(repaired.exit_code == 0);
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM evaluations WHERE status = 'done'") == "3");
  // Drift is read along the toolchains' dates: two nightlies measured, the
  // same compiler, no change.
  CHECK(s.output.find("analysing drift along the toolchains' dates") != std::string::npos);
  CHECK(published.output.find("drift: no change at or above the project's thresholds") != std::string::npos);
  auto alerts = p.run({"alerts", "--config", p.config});
  INFO(alerts.output);
  CHECK(alerts.exit_code == 0);
  CHECK(alerts.output.find("no open or acknowledged alerts") != std::string::npos);
}

/// A toolchain directory whose `dwcc` passes `flags` after the compile's own.
std::filesystem::path nightly(const Project& p, const std::string& date, const std::string& flags = "") {
  auto prefix = p.dir / ("nightly-" + date);
  std::filesystem::create_directories(prefix / "bin");
  std::filesystem::copy_file(DWCC_BIN, prefix / "bin" / "dwcc.real");
  std::ofstream(prefix / "bin" / "dwcc") << "#!/bin/sh\nexec \"$(dirname \"$0\")/dwcc.real\" \"$@\" " << flags << "\n";
  std::filesystem::permissions(prefix / "bin" / "dwcc", std::filesystem::perms::owner_all);
  return prefix;
}

TEST_CASE("nightly toolchains: a change of the uplift between two nightlies is alerted, named by the later one") {
  Project p;
  p.set("repo = \"" + p.repo + "\"", "repo = \"\"");
  p.set("commit_url = \"\"", "commit_url = \"https://git.example.org/c/{sha}\"");
  // Listed out of order, labelled against their order: the dates order them.
  // The last nightly's default inlines far more (a threshold of 40, not
  // -Oz's), which moves the uplift.
  auto add = [&](const std::string& date, const std::string& label, const std::string& flags) {
    std::ofstream(p.config, std::ios::app) << "[[toolchains]]\ndir = \"" << nightly(p, date, flags).string()
                                           << "\"\nlabel = \"" << label << "\"\ndate = \"" << date << "\"\n";
  };
  add("2026-01-19", "alpha", "-inline-threshold=40");
  add("2026-01-05", "gamma", "");
  add("2026-01-12", "beta", "");
  auto s = p.sweep_ok();
  INFO(s.output);
  CHECK(s.output.find("drift: 1 change(s)") != std::string::npos);
  CHECK(s.output.find("NEW uplift on testdata rose") != std::string::npos);
  CHECK(s.output.find(": toolchain alpha") != std::string::npos);
  auto id = p.psql("SELECT id FROM alerts");
  REQUIRE_FALSE(id.empty());
  // Evaluated by hand since, by its directory: still named by its label.
  auto e = p.run({"eval", "--build", (p.dir / "nightly-2026-01-19").string(), "--suite", "testdata", "--policy",
                  std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy"});
  CHECK(e.exit_code == 0);
  auto show = p.run({"alerts", "--config", p.config, "show", id});
  INFO(show.output);
  CHECK(show.output.find("culprit: toolchain alpha (toolchain-") != std::string::npos);
  CHECK(show.output.find("last good: toolchain beta (toolchain-") != std::string::npos);
  // The next sweep measures nothing new and finds the same change again.
  auto again = p.sweep_ok();
  INFO(again.output);
  CHECK(again.output.find("drift: 1 change(s)") != std::string::npos);
  CHECK(again.output.find("NEW") == std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM alerts") == "1");
  // A nightly published late, between the two, with the change already in:
  // the change is now its, and the alert that named the later one is closed.
  add("2026-01-15", "delta", "-inline-threshold=40");
  auto backfilled = p.sweep_ok();
  INFO(backfilled.output);
  CHECK(backfilled.output.find("NEW uplift on testdata rose from -1.59% to +6.19% (total .text: default +10.35%, "
                               "learned +0.00%): toolchain delta") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE state = 'open'") == "1");
  CHECK(p.psql("SELECT state || ': ' || note FROM alerts WHERE id = " + id)
            .starts_with("resolved: the toolchains no longer show this change where it was found"));
  // Taken off the list again: the change is the later nightly's once more,
  // and its alert opens again rather than stay closed with nothing open.
  auto delta = "[[toolchains]]\ndir = \"" + (p.dir / "nightly-2026-01-15").string() +
               "\"\nlabel = \"delta\"\ndate = \"2026-01-15\"\n";
  p.set(delta, "");
  // By the nightly's own --new, with nothing new to measure: the edited list
  // is analysed all the same (helper 154), and the night after is quiet.
  auto withdrawn = p.sweep_ok({"--new"});
  INFO(withdrawn.output);
  CHECK(withdrawn.output.find("the project's toolchains were edited since the last sweep") != std::string::npos);
  CHECK(withdrawn.output.find("NEW uplift on testdata rose from -1.59% to +6.19% (total .text: default +10.35%, "
                              "learned +0.00%): toolchain alpha") != std::string::npos);
  CHECK(p.psql("SELECT state || ': ' || note FROM alerts WHERE id = " + id) == "open: found again");
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE state = 'open'") == "1");
  CHECK(p.sweep_ok({"--new"}).output.find("nothing new since the last sweep") != std::string::npos);
  std::ofstream(p.config, std::ios::app) << delta;
  p.sweep_ok();
  // An undated nightly beside dated ones has no place on the line: measured, said, left out.
  std::ofstream(p.config, std::ios::app) << "[[toolchains]]\ndir = \"" << nightly(p, "undated").string()
                                         << "\"\nlabel = \"epsilon\"\n";
  auto undated = p.sweep_ok();
  INFO(undated.output);
  CHECK(undated.output.find("warning: toolchain epsilon has no date: measured, but left out of drift analysis") !=
        std::string::npos);
  CHECK(undated.output.find("NEW") == std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE state = 'open'") == "1");
  // decide and the report read the same line, naming toolchains by label.
  auto d = p.run({"decide", "--config", p.config});
  INFO(d.output);
  // At the last nightly 2 of the 5 modules are worse than the default: below no_worse's 90%.
  CHECK(d.exit_code == 1);
  CHECK(d.output.find("RETRAIN") != std::string::npos);
  CHECK(d.output.find("evidence: toolchain alpha..toolchain alpha") != std::string::npos);
  auto act = p.run({"decide", "--config", p.config, "--act"});
  CHECK(act.exit_code == 2);
  CHECK(common::last_line(act.output).find("decide --act retrains at a check-in, which needs compiler.repo") !=
        std::string::npos);
  auto out = p.dir / "report";
  auto r = p.run({"report", "--config", p.config, "--out", out.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto md = [&] {
    std::ifstream in(out / "report.md");
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  CHECK(md().find("`toolchain delta`") != std::string::npos);
  CHECK(md().find("toolchain-") == std::string::npos);  // never the made-up sha, nor a link to it
  // In the browser: a column per nightly, and the culprit's tooltip names it.
  auto culprit =
      p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id WHERE a.state = 'open'");
  REQUIRE(culprit.starts_with("toolchain-"));
  common::ProcessSpec node;
  node.argv = {"node", std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/browser/report_check.mjs",
               (out / "index.html").string(), (p.dir / "shot.png").string(), culprit};
  node.timeout = std::chrono::minutes(3);
  auto b = common::run_process(node).take();
  INFO("node: ", b.output);
  REQUIRE(b.exit_code == 0);
  auto page = nlohmann::json::parse(common::last_line(b.output));
  CHECK(page["console_errors"].empty());
  CHECK(page["charts"]["testdata"]["uplift_points"] == 4);
  CHECK(page["tooltip"].get<std::string>().find("toolchain delta") != std::string::npos);
  // With the repository tracked too, the report charts its history and
  // still names the toolchains' alerts by label, unlinked.
  p.set("repo = \"\"", "repo = \"" + p.repo + "\"");
  p.make_small();
  p.sweep_ok();
  auto both = p.run({"report", "--config", p.config, "--out", out.string()});
  INFO(both.output);
  REQUIRE(both.exit_code == 0);
  CHECK(md().find("`toolchain delta`") != std::string::npos);
  CHECK(md().find("toolchain-") == std::string::npos);
}

TEST_CASE("a second project file of the same name is warned about, a project file that moved is not") {
  Project p;
  p.make_small();
  p.sweep_ok();
  // A second `init` elsewhere, or a copied directory: the same name, so the
  // same series, alerts and lineage.
  auto other = p.dir / "copy" / "driftwatch.toml";
  std::filesystem::create_directories(other.parent_path());
  std::filesystem::copy_file(p.config, other);
  auto copy = run_driftwatch(p.args({"sweep", "--config", other.string(), "-q"}, p.dsn));
  INFO(copy.output);
  CHECK(copy.exit_code == 0);
  CHECK(copy.output.find("warning: project 'toy' was last swept from " + p.config +
                         ", which is still there; this "
                         "sweep reads " +
                         other.string()) != std::string::npos);
  // The first file gone (the project moved there): nothing to warn about.
  std::filesystem::remove(p.config);
  auto moved = run_driftwatch(p.args({"sweep", "--config", other.string()}, p.dsn));
  INFO(moved.output);
  CHECK(moved.exit_code == 0);
  CHECK(moved.output.find("was last swept from") == std::string::npos);
}

TEST_CASE("a project of a repository and toolchains: sweep --new goes on from the repository's head") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  auto prefix = p.dir / "nightly-2026-03-02";
  std::filesystem::create_directories(prefix / "bin");
  std::filesystem::copy_file(DWCC_BIN, prefix / "bin" / "dwcc");
  std::ofstream(p.config, std::ios::app) << "[[toolchains]]\ndir = \"" << prefix.string()
                                         << "\"\nlabel = \"nightly\"\ndate = \"2026-03-02\"\n";
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  common::ProcessSpec git;
  git.argv = {"git", "-C", p.repo, "rev-parse", "main"};
  auto head = common::trim(common::run_process(git).take().output);
  CHECK(Project::psql(p.dsn, "SELECT head_sha FROM sweeps ORDER BY id DESC LIMIT 1") == head);
  auto again = p.sweep(p.dsn, {"--new"});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("nothing new since the last sweep (" + head.substr(0, 12) + ")") != std::string::npos);
}

TEST_CASE("commit subjects and authors holding HTML, quotes, newlines and invalid UTF-8 are stored and printed safely") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  // A check-in with hostile text on top of the history. `git commit` would
  // re-encode bytes that are not UTF-8 (as Latin-1), so the commit object is
  // written raw, as another tool or an old import may have written it.
  auto when = std::to_string(std::stoll(p.git({"log", "-1", "--format=%ct"})) + 3600);
  auto raw = p.dir / "hostile-commit";
  std::ofstream(raw, std::ios::binary)
      << "tree " << p.git({"rev-parse", "HEAD^{tree}"}) << "\nparent " << p.git({"rev-parse", "HEAD"})
      << "\nauthor Eve \xff \"q\" <eve@example.org> " << when << " +0000\ncommitter Eve \xff <eve@example.org> " << when
      << " +0000\n\n<script>alert(1)</script> 'q' \"qq\" \xfe\x01\x1b[31m\nsecond line\n";
  common::ProcessSpec git;
  git.argv = {"git", "-C", p.repo, "hash-object", "-t", "commit", "--literally", "-w", "--stdin"};
  git.stdin_file = raw;
  auto made = common::run_process(git).take();
  REQUIRE_MESSAGE(made.ok(), made.output);
  auto sha = common::trim(made.output);
  p.git({"update-ref", "HEAD", sha});
  REQUIRE(p.git({"rev-parse", "HEAD"}) == sha);
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  CHECK(s.output.find("  failed: ") == std::string::npos);
  // The byte that is not UTF-8 is stored as U+FFFD; the rest as it came.
  auto subject = Project::psql(p.dsn, "SELECT subject FROM commits WHERE subject LIKE '<script>%'");
  CHECK(subject.rfind("<script>alert(1)</script> 'q' \"qq\" \xef\xbf\xbd", 0) == 0);
  CHECK(subject.find('\x1b') != std::string::npos);
  auto author = Project::psql(p.dsn, "SELECT author FROM commits WHERE subject LIKE '<script>%'");
  INFO(author);
  CHECK(author.rfind("Eve \xef\xbf\xbd \"q", 0) == 0);  // git's own rules trim the name's trailing quote
  for (const char* json : {"--json", ""}) {
    std::vector<std::string> args = {"commits", "--repo", p.repo, "--every", "1m"};
    if (*json) args.push_back(json);
    auto c = p.run(args);
    INFO(c.output);
    CHECK(c.exit_code == 0);
    CHECK(c.output.find("<script>alert(1)</script>") != std::string::npos);
    CHECK(c.output.find('\x1b') == std::string::npos);  // no terminal escape reaches the terminal
    CHECK(c.output.find('\xfe') == std::string::npos);
  }
}

TEST_CASE(
    "the embedded PostgreSQL stopped mid-sweep: the sweep starts it again, finishes, and nothing is half-recorded") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  p.set("bisect = true", "bisect = false");
  // The embedded database of the data directory, which the test can restart.
  auto embedded = "host=" + (p.dir / "data" / "postgres").string() + " user=postgres dbname=driftwatch";
  auto dw = [&](std::vector<std::string> a) {
    a.insert(a.begin(), p.data);
    return run_driftwatch(a);
  };
  REQUIRE(dw({"db", "start"}).exit_code == 0);
  common::ProcessSpec spec;
  spec.argv = {DRIFTWATCH_BIN, p.data, "sweep", "--config", p.config, "-j", "2"};
  auto child = common::Child::start(spec).take();
  int done = 0;
  for (int i = 0; i < 1500 && !child.try_wait() && done < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto n = Project::psql(embedded, "SELECT count(*) FROM jobs WHERE state = 'done'");
    if (!n.empty() && std::isdigit(static_cast<unsigned char>(n[0]))) done = std::stoi(n);
  }
  REQUIRE_MESSAGE(done >= 1, "the sweep did not get going");
  REQUIRE_FALSE(child.try_wait());
  // Nobody starts it again but the sweep (before, it waited a minute and gave up).
  REQUIRE(dw({"db", "stop"}).exit_code == 0);
  auto r = child.wait();
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("reconnecting") != std::string::npos);
  // Why, in words: not libpqxx's riddle for a closed connection.
  CHECK(r.output.find("client encoding") == std::string::npos);
  CHECK(Project::psql(embedded, "SELECT count(*) FROM jobs WHERE state <> 'done'") == "0");
  CHECK(Project::psql(embedded, "SELECT count(*) FROM evaluations WHERE status = 'done'") == "2");
  // Every evaluation whole: 5 modules × 2 heuristics each.
  CHECK(Project::psql(embedded, "SELECT string_agg(n::text, ',') FROM (SELECT count(*) AS n FROM module_results "
                                "GROUP BY evaluation_id) t") == "10,10");
  auto again = run_driftwatch({p.data, "sweep", "--config", p.config});
  CHECK(again.output.find("4 jobs, 4 already done") != std::string::npos);
  dw({"db", "stop"});
}

TEST_CASE("sweep --new measures a check-in tagged after the nightly sweep passed it, once") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  p.set("tags = false", "tags = true");
  p.set("bisect = true", "bisect = false");
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  // A release tag pushed late, on a check-in between the monthly samples.
  common::ProcessSpec git;
  git.argv = {"git", "-C", p.repo, "tag", "v1.0.1", "main~6"};
  REQUIRE(common::run_process(git).take().ok());
  git.argv = {"git", "-C", p.repo, "rev-parse", "main~6"};
  auto tagged = common::trim(common::run_process(git).take().output);
  auto evaluated = [&] {
    return p.psql("SELECT count(*) FROM evaluations e JOIN builds b ON b.id = e.build_id JOIN commits c ON "
                  "c.id = b.commit_id WHERE e.status = 'done' AND c.sha = '" + tagged + "'");
  };
  REQUIRE(evaluated() == "0");
  auto late = p.sweep(p.dsn, {"--new"});
  INFO(late.output);
  CHECK(late.exit_code == 0);
  CHECK(late.output.find("measuring " + tagged.substr(0, 12) + " too: tagged v1.0.1 since it was swept past") !=
        std::string::npos);
  CHECK(evaluated() == "1");
  auto again = p.sweep(p.dsn, {"--new"});
  INFO(again.output);
  CHECK(again.output.find("nothing new since the last sweep") != std::string::npos);
}

TEST_CASE("a coarser one-off sweep leaves where --new starts: the next --new measures the grid's samples it skipped") {
  Project p;  // the project's grid: every 2 weeks
  p.set("bisect = true", "bisect = false");
  auto built = [&] { return p.psql("SELECT count(DISTINCT commit_id) FROM builds"); };  // broken ones too
  auto monthly = p.sweep(p.dsn, {"--every", "1m"});
  INFO(monthly.output);
  REQUIRE(monthly.exit_code == 0);
  CHECK(built() == "2");  // the two monthly samples, the last of which is also the grid's
  auto nightly = p.sweep(p.dsn, {"--new"});
  INFO(nightly.output);
  REQUIRE(nightly.exit_code == 0);
  CHECK(nightly.output.find("4 check-in(s) × 1 suite(s): 8 jobs, 2 already done") != std::string::npos);
  CHECK(built() == "5");  // and the grid's three others
  auto again = p.sweep(p.dsn, {"--new"});
  CHECK(again.output.find("nothing new since the last sweep") != std::string::npos);
}

TEST_CASE("a checkout moved to another path keeps its series and alerts: report, sweep --new and sweep go on there") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  p.sweep_ok();
  auto read_report = [&](const std::string& name) {
    auto out = p.dir / name;
    auto r = p.run({"report", "--config", p.config, "--out", out.string(), "--format", "json"});
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    std::ifstream in(out / "report.json");
    return nlohmann::json::parse(in);
  };
  auto before = read_report("before");
  REQUIRE(before["suites"].size() == 1);
  REQUIRE(before["suites"][0]["evaluated"].get<int>() > 1);
  REQUIRE(!before["alerts"].empty());
  auto counts = [&] {
    return p.psql("SELECT (SELECT count(*) FROM commits) || ' ' || (SELECT count(*) FROM evaluations) || ' ' || "
                  "(SELECT count(*) FROM alerts)");
  };
  auto recorded = counts();

  auto moved = (p.dir / "moved" / "compiler").string();
  std::filesystem::create_directories(p.dir / "moved");
  std::filesystem::rename(p.repo, moved);
  p.set("repo = \"" + p.repo + "\"", "repo = \"" + moved + "\"");
  auto after = read_report("after");
  CHECK(after["suites"][0]["evaluated"] == before["suites"][0]["evaluated"]);
  CHECK(after["suites"][0]["points"].size() == before["suites"][0]["points"].size());
  CHECK(after["alerts"].size() == before["alerts"].size());
  auto again = p.sweep(p.dsn, {"--new"});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("nothing new since the last sweep") != std::string::npos);
  CHECK(counts() == recorded);  // no second copy of the history, no alert raised anew
  // A full sweep records the new path; its jobs, keyed by path, run again on
  // the cached builds and reuse every evaluation.
  auto full = p.sweep_ok();
  INFO(full.output);
  CHECK(counts() == recorded);
  CHECK(p.psql("SELECT count(*) FROM repositories") == "1");
  CHECK(p.psql("SELECT location || ' ' || array_to_string(also_at, ',') || ' ' || (root <> '') FROM repositories") ==
        p.repo + " " + moved + " true");
  CHECK(full.output.find("build ok (cached)") != std::string::npos);
  // Every evaluation keeps its figures: none compiles the suite again (each
  // check-in's own row, measured with the same cached compiler, is kept).
  int evals = 0, kept = 0;
  for (const auto& line : common::split(full.output, '\n'))
    if (line.find("] eval ") != std::string::npos) {
      ++evals;
      kept += line.find("(kept its evaluation ") != std::string::npos;
    }
  CHECK(evals > 1);
  CHECK(kept == evals);
  CHECK(full.output.find("0 new alert(s)") != std::string::npos);
}

TEST_CASE("eval of a cache entry that builds of two recipes share is refused, not stored in either one's series") {
  Project p;
  p.make_small();
  p.sweep_ok();
  auto artifacts = p.psql("SELECT artifact_dir FROM builds ORDER BY id LIMIT 1");
  auto entry = std::filesystem::path(artifacts).parent_path().string();
  auto policy = std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy";
  // Built by one recipe so far: its evaluation joins that recipe's series.
  auto one = p.run({"eval", "--build", entry, "--suite", "testdata", "--policy", policy});
  INFO(one.output);
  REQUIRE(one.exit_code == 0);
  // The same recipe compiling at -Os: the same compiler build, so the same
  // cache entry, whose result.json keeps the first recipe's -Oz line.
  std::ifstream in(std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/recipes/sample-compiler.toml");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  std::string from = "-o {output} -Oz\"", to = "-o {output} -Os\"";
  auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  text.replace(at, from.size(), to);
  auto shared = text.find("share_agreeing_defaults = true");  // sound at -Oz only: refused at -Os
  REQUIRE(shared != std::string::npos);
  text.replace(shared, 30, "share_agreeing_defaults = false");
  auto recipe = (p.dir / "at-os.toml").string();
  std::ofstream(recipe) << text;
  // Named with the entry, that recipe would be ignored for the entry's own line: refused.
  auto as_os = p.run({"eval", "--build", entry, "--recipe", recipe, "--suite", "testdata", "--policy", policy});
  INFO(as_os.output);
  CHECK(as_os.exit_code == 2);
  CHECK(common::last_line(as_os.output).find("compiles as the recipe that built it, not as --recipe") !=
        std::string::npos);
  auto as_built =
      p.run({"eval", "--build", entry, "--recipe", "sample-compiler", "--suite", "testdata", "--policy", policy});
  INFO(as_built.output);
  CHECK(as_built.exit_code == 0);
  p.set("recipe = \"sample-compiler\"", "recipe = \"" + recipe + "\"");
  p.sweep_ok();
  REQUIRE(p.psql("SELECT count(DISTINCT recipe_id) FROM builds WHERE artifact_dir = '" + artifacts + "'") == "2");
  auto evaluations = p.psql("SELECT count(*) FROM evaluations");
  auto two = p.run({"eval", "--build", entry, "--suite", "testdata", "--policy", policy});
  INFO(two.output);
  CHECK(two.exit_code == 2);
  CHECK(common::last_line(two.output).find("is shared by builds of several recipes (") != std::string::npos);
  auto names = common::last_line(two.output);
  auto first = names.find("sample-compiler@");
  REQUIRE(first != std::string::npos);
  CHECK(names.find("sample-compiler@", first + 1) != std::string::npos);  // both recipes named
  CHECK(p.psql("SELECT count(*) FROM evaluations") == evaluations);
}

TEST_CASE("a tracked branch older than stale_after fails the sweep, which still measures, until the branch moves") {
  // A nightly whose `git fetch` stopped finds "nothing new" and exited 0 for ever.
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  p.set("stale_after = \"\"", "stale_after = \"30d\"");
  auto tip = p.git({"log", "-1", "--format=%h %cs", "HEAD"});
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 1);
  CHECK(common::last_line(s.output).find("driftwatch: the tip of HEAD in " + p.repo) == 0);
  CHECK(common::last_line(s.output).find("older than sampling.stale_after (30.0 days)") != std::string::npos);
  CHECK(s.output.find(", " + tip.substr(0, tip.find(' '))) != std::string::npos);
  // Measured all the same: the staleness is said, the work is not lost.
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM evaluations WHERE status = 'done'") != "0");
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM jobs WHERE state NOT IN ('done', 'skipped')") == "0");
  auto again = p.sweep(p.dsn, {"--new"});
  INFO(again.output);
  CHECK(again.exit_code == 1);
  CHECK(again.output.find("nothing new since the last sweep") != std::string::npos);
  CHECK(common::last_line(again.output).find("older than sampling.stale_after") != std::string::npos);
  CHECK(again.output.find("driftwatch never fetches: update the repository first") != std::string::npos);
  // Tonight's check-in lands: the branch is current again. This month is
  // not over, so monthly sampling has nothing new yet: said as that, not
  // as a repository to update.
  p.commit_on_top("tonight");
  auto fresh = p.sweep(p.dsn, {"--new"});
  INFO(fresh.output);
  CHECK(fresh.exit_code == 0);
  CHECK(fresh.output.find("stale_after") == std::string::npos);
  CHECK(fresh.output.find("nothing new since the last sweep") != std::string::npos);
  CHECK(fresh.output.find("(every = \"1m\" samples none of the check-ins after the last sweep yet)") !=
        std::string::npos);
  CHECK(fresh.output.find("never fetches") == std::string::npos);
}

TEST_CASE("a project's until ends its drift, decision and report, whatever another project measured after it") {
  Project p;
  p.set("bisect = true", "bisect = false");
  // Another project of the same series (repository, recipe, policy, suite)
  // sweeps the whole history, week 4's change of the uplift included.
  p.set("name = \"toy\"", "name = \"other\"");
  auto whole = p.sweep(p.dsn);
  INFO(whole.output);
  REQUIRE(whole.exit_code == 0);
  // This one's range ends with week 3.
  auto week3 = p.git({"log", "-1", "--format=%cs", "--grep=Describe the cost model", "main"});
  REQUIRE(week3.size() == 10);
  std::set<std::string> later;  // check-ins after the range
  for (const auto& line : common::split(p.git({"log", "--first-parent", "--format=%H %cs", "main"}), '\n'))
    if (line.size() > 41 && line.substr(41) > week3) later.insert(line.substr(0, 40));
  REQUIRE_FALSE(later.empty());
  auto first_bad = [&](const std::string& project) {
    return common::split(p.psql("SELECT string_agg(c.sha, ' ') FROM alerts a JOIN commits c ON c.id = "
                                "a.first_bad_commit_id WHERE a.project = '" +
                                project + "'"),
                         ' ');
  };
  auto after_range = [&](const std::vector<std::string>& shas) {
    return std::count_if(shas.begin(), shas.end(), [&](const std::string& s) { return later.count(s) > 0; });
  };
  REQUIRE(after_range(first_bad("other")) > 0);  // the series holds a change after the range
  p.set("name = \"other\"", "name = \"toy\"");
  p.set("until = \"\"", "until = \"" + week3 + "\"");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  CHECK(after_range(first_bad("toy")) == 0);
  auto decide = p.run({"decide", "--config", p.config, "--json"});
  INFO(decide.output);
  auto head = nlohmann::json::parse(decide.output.substr(decide.output.find('{')))["head"].get<std::string>();
  CHECK_FALSE(later.count(head));
  auto out = p.dir / "report";
  REQUIRE(p.run({"report", "--config", p.config, "--out", out.string(), "--format", "json"}).exit_code == 0);
  std::ifstream in(out / "report.json");
  auto report = nlohmann::json::parse(in);
  REQUIRE_FALSE(report["overview"].empty());
  for (const auto& o : report["overview"]) CHECK_FALSE(later.count(o["latest"]["sha"].get<std::string>()));
  for (const auto& a : report["alerts"]) CHECK_FALSE(later.count(a["first_bad"].get<std::string>()));
  // Nor does `bisect` reach past it: what it found there the next sweep would undo.
  auto first = p.git({"rev-list", "--max-parents=0", "main"});
  auto past = p.run({"bisect", "--config", p.config, "--good", first, "--bad", *later.begin()});
  INFO(past.output);
  CHECK(past.exit_code == 2);
  CHECK(past.output.find("lies after the project's until (" + week3 + "): move until, or bisect inside the range") !=
        std::string::npos);
}
