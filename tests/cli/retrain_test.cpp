// decide, retrain and the policy lineage end to end: the 8-week history, a
// held-out suite and a training suite made from the testdata files split in
// two, the real sample compiler, real (tiny) training, PostgreSQL.
#include <doctest/doctest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <thread>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/text.h"
#include "tests/support/policy_file.h"
#include "tests/support/sweep_project.h"

using testing::Project;

namespace {

/// The project tracks suite "hold" (json, sort, utf8) and trains on
/// "trainset" (hashtable, ini): a candidate is judged on code it never saw.
void split_suites(Project& p) {
  std::string src = std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/testdata";
  auto make = [&](const std::string& name, std::vector<std::string> files) {
    std::string json = "[";
    for (const auto& f : files)
      json += std::string(json.size() > 1 ? "," : "") + "{\"directory\": \"" + src + "\", \"file\": \"" + f +
              ".c\", \"command\": \"cc -Oz -c " + f + ".c\"}";
    auto cc = p.dir / ("cc-" + name + ".json");
    std::ofstream(cc) << json << "]";
    auto s = p.run({"suite", "build", "--from-compile-commands", cc.string(), "--name", name});
    REQUIRE_MESSAGE(s.exit_code == 0, s.output);
  };
  make("hold", {"json", "sort", "utf8"});
  make("trainset", {"hashtable", "ini"});
  p.set("names = [\"testdata\"]", "names = [\"hold\"]");
  p.set("every = \"2w\"", "every = \"1m\"");  // December's and January's last check-ins
  p.set("bisect = true", "bisect = false");
  p.set("training_suite = \"train\"", "training_suite = \"trainset\"");
  p.set("settings = \"shipped\"", "settings = \"small\"");
}

nlohmann::json json_of(const common::ProcessResult& r) {
  // Progress goes to stderr, which the runner merges: the JSON is the text from the first '{' or '['.
  auto at = r.output.find_first_of("{[");
  REQUIRE_MESSAGE(at != std::string::npos, r.output);
  auto j = nlohmann::json::parse(r.output.substr(at), nullptr, false);
  REQUIRE_MESSAGE(!j.is_discarded(), r.output);
  return j;
}

}  // namespace

TEST_CASE(
    "decide says retrain when the uplift erodes, retrain promotes a better candidate, the next sweep measures from "
    "it") {
  Project p;
  split_suites(p);
  auto sweep = p.sweep(p.dsn);
  INFO(sweep.output);
  REQUIRE(sweep.exit_code == 0);
  // The cost-model merge of January took the shipped policy's uplift on the held-out suite further below zero.
  auto head = p.git({"rev-parse", "main"});

  auto d = p.run({"decide", "--config", p.config});
  INFO(d.output);
  CHECK(d.exit_code == 1);
  CHECK(d.output.find("RETRAIN") != std::string::npos);
  auto dj = json_of(p.run({"decide", "--config", p.config, "--json"}));
  CHECK(dj["verdict"] == "retrain");
  CHECK(dj["last"] == head);
  bool floor_fired = false;
  for (const auto& r : dj["suites"][0]["rules"])
    if (r["rule"] == "uplift_floor") floor_fired = r["fired"].get<bool>() && r["measured"].get<double>() < 0;
  CHECK(floor_fired);
  // Asked twice with nothing changed: one decision, its id the same both times.
  CHECK(p.psql("SELECT string_agg(verdict, ',' ORDER BY id) FROM retraining_decisions") == "retrain");
  CHECK(d.output.find("decision " + std::to_string(dj["decision_id"].get<long>()) + ":") != std::string::npos);

  // The report shows the recorded decision with the rule that fired, and the database lineage.
  auto out = p.dir / "decided-report";
  auto rep = p.run({"report", "--config", p.config, "--out", out.string(), "--format", "json,md"});
  INFO(rep.output);
  REQUIRE(rep.exit_code == 0);
  CHECK(rep.output.find("retraining: retrain (") != std::string::npos);
  CHECK(rep.output.find("fired: ") != std::string::npos);
  std::ifstream jf(out / "report.json");
  auto rj = nlohmann::json::parse(jf);
  REQUIRE(rj["decisions"].size() == 1);  // decide, then decide --json: one decision
  CHECK(rj["decisions"][0]["verdict"] == "retrain");
  CHECK(rj["decisions"][0]["rule"].get<std::string>().find("uplift_floor") != std::string::npos);
  bool floor_line = false;
  for (const auto& e : rj["decisions"][0]["evidence"])
    floor_line = floor_line || e.get<std::string>().find("uplift_floor measured -") != std::string::npos;
  CHECK(floor_line);
  REQUIRE(rj["policy"]["lineage"].size() >= 1);
  CHECK(rj["policy"]["lineage"][0]["note"].get<std::string>().rfind("active", 0) == 0);
  CHECK(rj["policy"]["lineage"][0]["content_hash"] == p.psql("SELECT po.content_hash FROM project_policies pp JOIN policies po ON po.id = pp.policy_id WHERE pp.state = 'active'"));
  std::ifstream mf(out / "report.md");
  std::string md((std::istreambuf_iterator<char>(mf)), std::istreambuf_iterator<char>());
  CHECK(md.find("## Retraining decision\n\n**retrain**") != std::string::npos);
  CHECK(md.find("rule: ") != std::string::npos);

  // Killed (SIGKILL) once training has checkpointed: nothing is recorded, and the rerun resumes.
  {
    common::ProcessSpec spec;
    spec.argv = p.args({"retrain", "--config", p.config, "-j", "2"}, p.dsn);
    spec.argv.insert(spec.argv.begin(), DRIFTWATCH_BIN);
    auto child = common::Child::start(spec).take();
    bool checkpointed = false;
    for (int i = 0; i < 30000 && !checkpointed && !child.try_wait(); ++i) {
      std::error_code ec;
      for (const auto& e : std::filesystem::directory_iterator(p.dir / "data" / "retrain", ec))
        checkpointed = checkpointed || std::filesystem::exists(e.path() / "checkpoint.json");
      if (!checkpointed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE_MESSAGE(checkpointed, "the retrain ended before its first checkpoint");
    kill(child.pid(), SIGKILL);
    CHECK(child.wait().signal == SIGKILL);
    CHECK(p.psql("SELECT count(*) FROM project_policies") == "1");  // only the active one: no candidate recorded
  }
  auto r = p.run({"retrain", "--config", p.config, "-j", "2"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("resuming a candidate") != std::string::npos);
  CHECK(r.output.find("PROMOTED") != std::string::npos);

  auto lineage = json_of(p.run({"policy", "list", "--config", p.config, "--json"}));
  REQUIRE(lineage.size() == 2);
  const auto& root = lineage[0];
  const auto& child = lineage[1];
  CHECK(root["state"] == "retired");
  CHECK(root["parent"].is_null());
  CHECK(child["state"] == "active");
  CHECK(child["parent"] == root["id"]);
  CHECK(child["trained_commit"] == head);
  CHECK(child["suites"]["training"].get<std::string>().rfind("trainset@", 0) == 0);
  CHECK(child["suites"]["holdout"][0].get<std::string>().rfind("hold@", 0) == 0);
  double candidate = child["figures"]["candidate"]["uplift"], active = child["figures"]["active"]["uplift"];
  CHECK(candidate >= active + 0.001);
  CHECK(std::filesystem::exists(child["file"].get<std::string>()));
  auto new_hash = child["content_hash"].get<std::string>();

  // The retired policy's "retrain" is not shown as the promoted one's decision.
  auto promoted_report = p.run({"report", "--config", p.config, "--out", (p.dir / "promoted").string(), "--format", "json"});
  INFO(promoted_report.output);
  REQUIRE(promoted_report.exit_code == 0);
  CHECK(promoted_report.output.find("retraining: not decided yet") != std::string::npos);
  std::ifstream pf(p.dir / "promoted" / "report.json");
  CHECK(nlohmann::json::parse(pf)["decisions"].empty());

  // The nightly `--new` sweep measures the promoted policy at its training
  // check-in, though nothing new has landed since the last sweep.
  auto nightly = p.sweep(p.dsn, {"--new"});
  INFO(nightly.output);
  REQUIRE(nightly.exit_code == 0);
  CHECK(nightly.output.find("measuring the policy's training check-in " + head.substr(0, 12)) != std::string::npos);
  auto at_baseline = "SELECT count(*) FROM evaluations e JOIN policies po ON po.id = e.policy_id JOIN builds b ON "
                     "b.id = e.build_id JOIN commits c ON c.id = b.commit_id WHERE e.status = 'done' AND c.sha = '" +
                     head + "' AND po.content_hash = '" + new_hash + "'";
  CHECK(p.psql(at_baseline) != "0");
  CHECK(p.sweep(p.dsn, {"--new"}).output.find("nothing new since the last sweep") != std::string::npos);

  // The next full sweep evaluates the promoted policy, its training check-in the baseline.
  auto again = p.sweep(p.dsn);
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  CHECK(std::stoi(p.psql("SELECT count(*) FROM evaluations e JOIN policies po ON po.id = e.policy_id "
                         "WHERE po.content_hash = '" +
                         new_hash + "' AND e.status = 'done'")) >= 2);
  auto kept = p.run({"decide", "--config", p.config, "--json"});
  CHECK(kept.exit_code == 0);
  auto kj = json_of(kept);
  CHECK(kj["verdict"] == "keep");
  CHECK(kj["policy_hash"] == new_hash);
  CHECK(kj["baseline"] == head);
  CHECK(kj["baseline_in_history"] == true);
}

TEST_CASE("a candidate that cannot win is rejected and recorded, the active policy stays, bad input changes nothing") {
  Project p;
  split_suites(p);
  // Nothing evaluated yet: retrain and decide say what is missing and record nothing.
  auto early = p.run({"retrain", "--config", p.config});
  CHECK(early.exit_code == 2);
  CHECK(common::last_line(early.output).find("no measured check-in of project 'toy'") != std::string::npos);
  CHECK(common::last_line(early.output).find("run `driftwatch sweep` first") != std::string::npos);
  CHECK(p.run({"decide", "--config", p.config}).exit_code == 2);
  CHECK(p.psql("SELECT count(*) FROM project_policies") == "0");

  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  p.set("margin = 0.001", "margin = 0.5");  // 50 points of uplift: out of reach
  // Judged on a held-out suite of its own, which no sweep measures: the
  // retrain was refused for want of its sweep measurements, for good.
  std::ofstream(p.dir / "cc-hold2.json") << "[{\"directory\": \"" << DRIFTWATCH_SOURCE_DIR
                                         << "/samples/testdata\", \"file\": \"json.c\", \"command\": \"cc -Oz -c "
                                            "json.c\"}]";
  REQUIRE(p.run({"suite", "build", "--from-compile-commands", (p.dir / "cc-hold2.json").string(), "--name", "hold2"})
              .exit_code == 0);
  p.set("holdout = []", "holdout = [\"hold2\"]");
  auto r = p.run({"retrain", "--config", p.config, "-j", "2"});
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("REJECTED: does not win by the margin") != std::string::npos);
  CHECK(r.output.find("on hold2") != std::string::npos);
  // A nightly `decide --act` retrains where a sweep last measured, not at
  // that night's head: with a new check-in on top (not swept), the candidate
  // rejected at the last measured one is not trained again.
  auto swept_head = p.git({"rev-parse", "HEAD"});
  p.commit_on_top("tonight");
  p.set("age = false", "age = true");
  p.set("max_age_checkins = 0", "max_age_checkins = 1");
  auto act = p.run({"decide", "--config", p.config, "--act"});
  INFO(act.output);
  CHECK(act.output.find("FIRED  age") != std::string::npos);
  CHECK(act.output.find("not trained again") != std::string::npos);
  CHECK(act.exit_code == 1);
  CHECK(p.psql("SELECT count(*) FROM project_policies") == "2");
  p.set("age = true", "age = false");
  p.set("max_age_checkins = 1", "max_age_checkins = 0");
  p.git({"update-ref", "HEAD", swept_head});
  p.set("holdout = [\"hold2\"]", "holdout = []");
  auto lineage = json_of(p.run({"policy", "list", "--config", p.config, "--json"}));
  REQUIRE(lineage.size() == 2);
  CHECK(lineage[0]["state"] == "active");
  CHECK(lineage[1]["state"] == "rejected");
  CHECK(lineage[1]["reason"].get<std::string>().find("margin 50 points") != std::string::npos);
  CHECK(lineage[1]["figures"]["candidate"].contains("uplift"));
  auto root_hash = lineage[0]["content_hash"].get<std::string>();
  auto decided = json_of(p.run({"decide", "--config", p.config, "--json"}));
  CHECK(decided["policy_hash"] == root_hash);

  // A head that does not build, a suite not built, rules that make no sense: named, nothing changed.
  auto before = p.psql("SELECT string_agg(id || state, ',' ORDER BY id) FROM project_policies");
  auto broken = p.git({"log", "--format=%H", "--grep=^\\[NFC\\] Rename", "main"});
  REQUIRE(broken.size() == 40);
  auto b = p.run({"retrain", "--config", p.config, "--at", broken});
  CHECK(b.exit_code == 2);
  CHECK(common::last_line(b.output).find("cannot retrain at " + broken.substr(0, 12)) != std::string::npos);
  CHECK(common::last_line(b.output).find("nothing changed") != std::string::npos);
  // A check-in off the tracked first-parent line (a side branch's) could never be a baseline.
  auto side = p.git({"-c", "user.name=Side", "-c", "user.email=side@example.org", "commit-tree", "main^{tree}", "-p",
                     "main", "-m", "side"});
  REQUIRE(side.size() == 40);
  auto off = p.run({"retrain", "--config", p.config, "--at", side});
  CHECK(off.exit_code == 2);
  CHECK(common::last_line(off.output).find("--at " + side + " is not on the first-parent history") !=
        std::string::npos);
  p.set("training_suite = \"trainset\"", "training_suite = \"nosuch\"");
  auto s = p.run({"retrain", "--config", p.config});
  CHECK(s.exit_code == 2);
  CHECK(common::last_line(s.output).find("nosuch") != std::string::npos);
  p.set("training_suite = \"nosuch\"", "training_suite = \"trainset\"");
  p.set("min_fraction = 0.5", "min_fraction = 1.5");
  auto bad = p.run({"decide", "--config", p.config});
  CHECK(bad.exit_code == 2);
  CHECK(common::last_line(bad.output).find("rule 'uplift_fraction': min_fraction must be above 0 and at most 1") !=
        std::string::npos);
  p.set("min_fraction = 1.5", "min_fraction = 0.5");
  CHECK(p.psql("SELECT string_agg(id || state, ',' ORDER BY id) FROM project_policies") == before);

  // A candidate left unjudged (its retrain killed before the verdict: no
  // figures yet) cannot be promoted, nor one whose judging failed.
  auto id = std::to_string(lineage[1]["id"].get<long>());
  auto figures = p.psql("SELECT figures::text FROM project_policies WHERE id = " + id);
  REQUIRE(figures.size() > 2);  // judged
  for (const char* state : {"candidate", "rejected"}) {
    p.psql("UPDATE project_policies SET state = '" + std::string(state) + "', figures = '{}' WHERE id = " + id);
    auto unjudged = p.run({"policy", "promote", id, "--config", p.config});
    CHECK(unjudged.exit_code == 2);
    CHECK(common::last_line(unjudged.output).find("policy " + id + " was never judged") != std::string::npos);
    CHECK(p.psql("SELECT state FROM project_policies WHERE id = " + id) == state);
  }
  // Judged and left a candidate, as `retrain --promote never` records one
  // that won: a person promotes it, then rolls back.
  p.psql("UPDATE project_policies SET state = 'candidate', figures = '" + figures + "' WHERE id = " + id);

  // Waiting for that person, it is not trained again by each night's retrain.
  auto count = p.psql("SELECT count(*) FROM project_policies");
  p.set("holdout = []", "holdout = [\"hold2\"]");  // as it was trained and judged
  auto waiting = p.run({"retrain", "--config", p.config, "-j", "2"});
  p.set("holdout = [\"hold2\"]", "holdout = []");
  INFO(waiting.output);
  CHECK(waiting.exit_code == 0);
  CHECK(waiting.output.find("not trained again: lineage #" + id) != std::string::npos);
  CHECK(waiting.output.find("waits to be promoted (`driftwatch policy promote " + id + "`)") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM project_policies") == count);
  CHECK(p.psql("SELECT state FROM project_policies WHERE id = " + id) == "candidate");

  auto judged = p.psql("SELECT reason FROM project_policies WHERE id = " + id);
  REQUIRE_FALSE(judged.empty());
  auto promoted = p.run({"policy", "promote", id, "--config", p.config});
  INFO(promoted.output);
  CHECK(promoted.exit_code == 0);
  CHECK(p.psql("SELECT id FROM project_policies WHERE state = 'active'") == id);
  // A person overruled its retrain's verdict: what the verdict said stays.
  CHECK(p.psql("SELECT reason FROM project_policies WHERE id = " + id) ==
        "promoted by hand; its retrain had said: " + judged);
  // Its kept file lost: the sweep says so, and rolling back is how out.
  auto kept = p.psql("SELECT file FROM project_policies WHERE id = " + id);
  std::string kept_bytes;
  {
    std::ifstream in(kept, std::ios::binary);
    kept_bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  REQUIRE(std::filesystem::remove(kept));
  auto lost = p.run({"decide", "--config", p.config});
  CHECK(lost.exit_code == 2);
  CHECK(common::last_line(lost.output).find("which no longer exists (`driftwatch policy rollback`") !=
        std::string::npos);
  auto back = p.run({"policy", "rollback", "--config", p.config});
  INFO(back.output);
  CHECK(back.exit_code == 0);
  std::ofstream(kept, std::ios::binary) << kept_bytes;
  CHECK(json_of(p.run({"policy", "list", "--config", p.config, "--json"}))[0]["state"] == "active");
  // The series still says retrain: trained again at the same check-in, on
  // the same suites and settings, it would be the candidate rolled back,
  // promoted again by the next `decide --act`. Said, not trained.
  p.set("holdout = []", "holdout = [\"hold2\"]");  // as it was trained and judged
  auto again = p.run({"retrain", "--config", p.config, "-j", "2"});
  p.set("holdout = [\"hold2\"]", "holdout = []");
  INFO(again.output);
  CHECK(again.exit_code == 1);
  CHECK(again.output.find("REJECTED: not trained again: lineage #" + id) != std::string::npos);
  CHECK(again.output.find("was rolled back") != std::string::npos);
  CHECK(again.output.find("candidate trained at") == std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM project_policies") == "2");
  auto none = p.run({"policy", "rollback", "--config", p.config});
  CHECK(none.exit_code == 2);
  CHECK(common::last_line(none.output).find("has no parent to roll back to") != std::string::npos);
  CHECK(p.run({"policy", "info", std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy"})
            .exit_code == 0);
}

TEST_CASE("retrain trains afresh where the active policy reads a feature the compiler no longer sends") {
  Project p;
  split_suites(p);
  // The active policy wants a feature this compiler does not send (as after
  // an upstream rename): decide's features rule says retrain for exactly
  // this, and warm-starting from it failed every night.
  std::ifstream in(std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto lost = (p.dir / "lost-feature.policy").string();
  std::ofstream(lost, std::ios::binary) << testing::edited_policy(text, "\"sroa_savings\"", "\"sroa_savingz\"");
  p.set(std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy", lost);
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto d = p.run({"decide", "--config", p.config, "--json"});
  CHECK(d.output.find("sroa_savingz") != std::string::npos);  // the features rule names what is gone
  auto r = p.run({"retrain", "--config", p.config, "-j", "2"});
  INFO(r.output);
  // Promoted, or rejected with figures: judged either way, and the exit status says which.
  auto state = p.psql("SELECT state FROM project_policies WHERE parent_id IS NOT NULL");
  REQUIRE((state == "active" || state == "rejected"));
  CHECK(r.exit_code == (state == "active" ? 0 : 1));
  CHECK(r.output.find("the candidate was trained afresh") != std::string::npos);  // not warm-started from it
  // The candidate was judged: figures and a verdict, never left "being evaluated".
  CHECK(p.psql("SELECT count(*) FROM project_policies WHERE reason = 'being evaluated'") == "0");
  CHECK(p.psql("SELECT count(*) FROM project_policies WHERE parent_id IS NOT NULL AND figures::text <> '{}' "
               "AND state IN ('active', 'rejected')") == "1");
}

TEST_CASE("decide judges a policy trained off the tracked line from the first evaluated check-in") {
  Project p;
  // Trained on another branch: its training check-in is not on this history.
  std::ifstream in(std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto elsewhere = (p.dir / "trained-elsewhere.policy").string();
  std::ofstream(elsewhere, std::ios::binary) << testing::edited_policy(
      text, "0613a3f6180afd22cd4ad03b2fdb87e4a89e6f6d", "ffffffffffffffffffffffffffffffffffffffff");
  p.set(std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy", elsewhere);
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto dj = json_of(p.run({"decide", "--config", p.config, "--json"}));
  CHECK(dj["baseline_in_history"] == false);
  REQUIRE(dj["suites"].size() == 1);
  // The rules measure from the baseline the header and the report name, not "not measured".
  CHECK(dj["suites"][0]["baseline_measured"] == true);
  bool fraction_seen = false;
  for (const auto& r : dj["suites"][0]["rules"]) {
    if (r["rule"] != "uplift_fraction") continue;
    fraction_seen = true;
    CHECK(r["detail"].get<std::string>().find("no baseline") == std::string::npos);
  }
  CHECK(fraction_seen);
}

TEST_CASE("a policy trained before the project's since is judged from the first swept check-in, not from nothing") {
  Project p;
  p.make_small();
  // The frozen policy, as if trained at this history's first check-in
  // (2025-12-01), a month before the range the project samples.
  auto first = p.git({"rev-list", "--max-parents=0", "main"});
  std::ifstream in(std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  auto early = (p.dir / "trained-early.policy").string();
  std::ofstream(early, std::ios::binary) << testing::edited_policy(text, "0613a3f6180afd22cd4ad03b2fdb87e4a89e6f6d", first);
  p.set(std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy", early);
  p.set("since = \"\"", "since = \"2026-01-01\"");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  // Not measured there: that would bisect and alert on history the project left out. Said.
  CHECK(s.output.find("warning: the policy's training check-in " + first.substr(0, 12) +
                      " lies outside the project's range") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM builds b JOIN commits c ON c.id = b.commit_id WHERE c.sha = '" + first + "'") ==
        "0");
  auto dj = json_of(p.run({"decide", "--config", p.config, "--json"}));
  CHECK(dj["baseline_in_history"] == true);
  REQUIRE(dj["suites"].size() == 1);
  // The rules measure from the first swept check-in, not "not measured".
  CHECK(dj["suites"][0]["baseline_measured"] == true);
  auto d = p.run({"decide", "--config", p.config});
  CHECK(dj["baseline_before_range"] == true);
  CHECK(d.output.find("(before the project's range: from the first check-in evaluated in it)") != std::string::npos);
}

TEST_CASE("decide --act does not retrain at the policy's own training check-in when nothing later is measured") {
  Project p;
  p.make_small();
  auto head = p.git({"rev-parse", "HEAD"});
  p.track_policy_trained_at(head);
  p.sweep_ok();
  // Two check-ins land that no sweep has measured yet: the age rule counts them.
  for (const char* subject : {"one", "two"}) p.commit_on_top(subject);
  p.set("age = false", "age = true");
  p.set("max_age_checkins = 0", "max_age_checkins = 1");
  auto act = p.run({"decide", "--config", p.config, "--act"});
  INFO(act.output);
  CHECK(act.output.find("FIRED  age") != std::string::npos);
  CHECK(act.output.find("not retrained: the newest measured check-in is the policy's own training check-in " +
                        head.substr(0, 12)) != std::string::npos);
  CHECK(act.exit_code == 1);
  CHECK(p.psql("SELECT count(*) FROM project_policies WHERE state <> 'active'") == "0");  // no candidate
}
