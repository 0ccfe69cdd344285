// A project's policy lineage: one active policy, promotions that expect the
// active one they replace (so two racing promotions cannot both win), and
// the retraining decisions.
#include "db/policies.h"

#include <doctest/doctest.h>

#include <atomic>
#include <set>
#include <thread>

#include "db/drift.h"
#include "db/embedded.h"
#include "db/store.h"
#include "tests/support/test_db.h"

namespace {

db::LineageRow row(const std::string& hash, db::Id parent, const std::string& state) {
  db::LineageRow r;
  r.project = "toy";
  r.name = "p-" + hash;
  r.content_hash = hash;
  r.parent_id = parent;
  r.file = "/data/policies/" + hash + ".policy";
  r.trained_commit = "c-" + hash;
  r.state = state;
  return r;
}

/// An uplift-dropped alert of `policy` on suite `manifest`.
db::AlertRow alert_row(const std::string& fingerprint, const std::string& project, const std::string& policy,
                       const std::string& manifest) {
  db::AlertRow r;
  r.suite_manifest_hash = manifest;
  r.fingerprint = fingerprint;
  r.project = project;
  r.kind = "uplift-dropped";
  r.policy_hash = policy;
  r.metric = "uplift";
  r.details_json = "{}";
  return r;
}

/// Opens alert "range" of project toy on policy A and suite S, to be
/// delivered; returns it and its id.
std::pair<db::AlertRow, db::Id> open_deliverable_alert(db::Database& database) {
  db::upsert_policy(database, "a", "A", "c-a", "{}");
  std::vector<db::Id> ids;
  db::upsert_suite(database, "hold", "S", "{}", {}, &ids);
  auto wide = alert_row("range", "toy", "A", "S");
  wide.notify = true;
  REQUIRE(db::open_alert(database, wide));
  return {wide, db::list_alerts(database, "toy", {}).front().id};
}

}  // namespace

TEST_CASE("promotions replace the active policy they expect, and only that one") {
  std::string name;
  auto database = testing::fresh_database(true, &name);
  auto root = db::add_to_lineage(database, row("root", 0, "active"), "{}");
  auto a = db::add_to_lineage(database, row("a", root, "candidate"), "{}");
  auto b = db::add_to_lineage(database, row("b", root, "candidate"), "{}");
  REQUIRE(db::active_policy(database, "toy")->id == root);
  CHECK(db::find_lineage(database, "toy", a)->parent_id == root);

  // Two candidates trained from the same active policy: the first promotion wins, the second sees it.
  CHECK(db::promote(database, "toy", a, root, "wins"));
  CHECK_FALSE(db::promote(database, "toy", b, root, "wins too"));
  CHECK(db::active_policy(database, "toy")->id == a);
  CHECK(db::find_lineage(database, "toy", root)->state == "retired");
  CHECK(db::find_lineage(database, "toy", b)->state == "candidate");
  // Another project's row is never promoted under this one.
  CHECK_FALSE(db::promote(database, "other", b, 0, "x"));
  CHECK(db::find_lineage(database, "toy", b)->state == "candidate");
  // The active row is left alone by a verdict.
  db::set_lineage_state(database, a, "rejected", "{}", "no");
  CHECK(db::active_policy(database, "toy")->id == a);

  // Racing from two connections, both expecting `a`: exactly one promotes.
  auto c = db::add_to_lineage(database, row("c", a, "candidate"), "{}");
  auto d = db::add_to_lineage(database, row("d", a, "candidate"), "{}");
  auto target = db::EmbeddedCluster(testing::test_cluster_dir() + "/postgres").target(name);
  std::atomic<int> won{0};
  std::vector<std::thread> racers;
  for (db::Id id : {c, d})
    racers.emplace_back([&, id] {
      auto conn = db::Database::connect(target).take();
      if (db::promote(conn, "toy", id, a, "race")) ++won;
    });
  for (auto& t : racers) t.join();
  CHECK(won == 1);
  auto active = db::active_policy(database, "toy")->id;
  CHECK((active == c || active == d));
  CHECK(db::find_lineage(database, "toy", a)->state == "retired");
}

TEST_CASE("decisions are recorded with their evidence, keep included") {
  auto database = testing::fresh_database();
  auto root = db::add_to_lineage(database, row("root", 0, "active"), "{}");
  auto keep = db::record_decision(database, "toy", root, "keep", "c1", "c2", R"({"verdict": "keep"})");
  auto retrain = db::record_decision(database, "toy", root, "retrain", "c2", "c3", R"({"verdict": "retrain"})");
  CHECK(retrain != keep);
  // Asked again with nothing changed: the same decision, not a second row.
  CHECK(db::record_decision(database, "toy", root, "retrain", "c2", "c3", R"({"verdict": "retrain"})") == retrain);
  CHECK(db::count_decisions(database, "toy") == 2);
  // Back to the first answer: a new decision, the project's history moved.
  auto back = db::record_decision(database, "toy", root, "keep", "c1", "c2", R"({"verdict": "keep"})");
  CHECK(back != keep);
  CHECK(db::count_decisions(database, "toy") == 3);
  // The lineage moved since (its figures replaced, as a retrain's judging
  // does): the same answer is news.
  auto judged = row("root", 0, "active");
  judged.figures_json = R"({"uplift": 0.02})";
  CHECK(db::add_to_lineage(database, judged, "{}") == root);
  CHECK(db::record_decision(database, "toy", root, "keep", "c1", "c2", R"({"verdict": "keep"})") != back);
  CHECK(db::count_decisions(database, "toy") == 4);
  CHECK(db::count_decisions(database, "other") == 0);
  // A policy named again keeps its row and its state; its figures are replaced.
  auto again = row("root", 0, "candidate");
  again.figures_json = R"({"uplift": 0.01})";
  CHECK(db::add_to_lineage(database, again, "{}") == root);
  CHECK(db::active_policy(database, "toy")->figures_json == R"({"uplift": 0.01})");
  CHECK(db::list_lineage(database, "toy").size() == 1);
}

TEST_CASE("a promotion resolves the open alerts of the policy it replaces, and no other's") {
  std::string name;
  auto database = testing::fresh_database(true, &name);
  auto root = db::add_to_lineage(database, row("root", 0, "active"), "{}");
  auto a = db::add_to_lineage(database, row("a", root, "candidate"), "{}");
  std::vector<db::Id> ids;
  db::upsert_suite(database, "hold", "S", "{}", {}, &ids);
  auto alert = [&](const std::string& fingerprint, const std::string& project, const std::string& policy) {
    REQUIRE(db::open_alert(database, alert_row(fingerprint, project, policy, "S")));
  };
  alert("f-root", "toy", "root");
  alert("f-other", "other", "root");  // the same policy tracked by another project
  REQUIRE(db::promote(database, "toy", a, root, "it won"));
  auto mine = db::list_alerts(database, "toy", {"open", "acknowledged"});
  CHECK(mine.empty());  // `alerts --exit-code` no longer fails on a series nobody tracks
  auto all = db::list_alerts(database, "toy", {});
  REQUIRE(all.size() == 1);
  CHECK(all[0].state == "resolved");
  CHECK(all[0].note == "its policy was replaced (it won)");
  CHECK(db::list_alerts(database, "other", {"open"}).size() == 1);

  // A sweep that began before the promotion opens nothing for the replaced policy.
  CHECK_FALSE(db::open_alert(database, alert_row("f-late", "toy", "root", "S")));
  CHECK(db::list_alerts(database, "toy", {}).size() == 1);

  // Rolled back: the alert closed only because its policy was replaced is open again.
  REQUIRE(db::promote(database, "toy", root, a, "rolled back"));
  auto back = db::list_alerts(database, "toy", {"open"});
  REQUIRE(back.size() == 1);
  CHECK(back[0].fingerprint == "f-root");
  CHECK(back[0].note == "its policy is tracked again (rolled back)");

  // The project file naming another policy closes them as a promotion does.
  db::add_to_lineage(database, row("b", 0, "active"), "{}");
  CHECK(db::list_alerts(database, "toy", {"open", "acknowledged"}).empty());
  CHECK(db::list_alerts(database, "toy", {})[0].note == "its policy was replaced (the project file names another)");
}

TEST_CASE("a policy the project file names anew gets its first sweep's alerts before decide records it") {
  auto database = testing::fresh_database();
  db::add_to_lineage(database, row("root", 0, "active"), "{}");
  std::vector<db::Id> ids;
  db::upsert_suite(database, "hold", "S", "{}", {}, &ids);
  // The project file now names "fresh": the sweep evaluates it, and only
  // `decide` adds it to the lineage (root is still the active one).
  db::upsert_policy(database, "fresh", "fresh", "abc", "{}");
  CHECK(db::open_alert(database, alert_row("f-fresh", "toy", "fresh", "S")));
  auto open = db::list_alerts(database, "toy", {"open"});
  REQUIRE(open.size() == 1);
  CHECK(open[0].fingerprint == "f-fresh");
}

TEST_CASE("a suite rebuilt under its name resolves the old build's open alerts of the project, and no other's") {
  auto database = testing::fresh_database();
  db::add_to_lineage(database, row("root", 0, "active"), "{}");
  std::vector<db::Id> ids;
  db::upsert_suite(database, "hold", "S-old", "{}", {}, &ids);
  db::upsert_suite(database, "hold", "S-new", "{}", {}, &ids);
  auto alert = [&](const std::string& fingerprint, const std::string& project, const std::string& manifest) {
    REQUIRE(db::open_alert(database, alert_row(fingerprint, project, "root", manifest)));
  };
  alert("old", "toy", "S-old");
  alert("new", "toy", "S-new");
  alert("elsewhere", "other", "S-old");
  CHECK(db::resolve_alerts_of_rebuilt_suite(database, "toy", "hold", "S-new") == 1);
  auto open = db::list_alerts(database, "toy", {"open"});
  REQUIRE(open.size() == 1);
  CHECK(open[0].fingerprint == "new");
  auto all = db::list_alerts(database, "toy", {"resolved"});
  REQUIRE(all.size() == 1);
  CHECK(all[0].note.find("its suite hold was rebuilt") == 0);
  CHECK(db::list_alerts(database, "other", {"open"}).size() == 1);
  CHECK(db::resolve_alerts_of_rebuilt_suite(database, "toy", "hold", "S-new") == 0);
}

namespace {

/// A database whose project "toy" tracks policy "root" on suite "hold" (S),
/// built by the recipes of `recipe_hashes`.
db::Database with_recipes(const std::vector<std::string>& recipe_hashes) {
  auto database = testing::fresh_database();
  db::add_to_lineage(database, row("root", 0, "active"), "{}");
  std::vector<db::Id> ids;
  db::upsert_suite(database, "hold", "S", "{}", {}, &ids);
  for (const auto& hash : recipe_hashes) db::upsert_recipe(database, "sample", hash, "body of " + hash);
  return database;
}

}  // namespace

TEST_CASE("a changed recipe resolves the project's alerts of the old recipe's builds, and changed back reopens them") {
  auto database = with_recipes({"R-old", "R-new"});
  auto alert = [&](const std::string& fingerprint, const std::string& project, const std::string& recipe) {
    auto a = alert_row(fingerprint, project, "root", "S");
    a.recipe_hash = recipe;
    REQUIRE(db::open_alert(database, a));
  };
  alert("old", "toy", "R-old");
  alert("new", "toy", "R-new");
  alert("unrecorded", "toy", "");
  alert("elsewhere", "other", "R-old");
  CHECK(db::follow_recipe(database, "toy", "R-new") == 1);
  auto open = db::list_alerts(database, "toy", {"open"});
  REQUIRE(open.size() == 2);
  CHECK(open[0].fingerprint == "unrecorded");
  CHECK(open[0].recipe_hash.empty());
  CHECK(open[1].fingerprint == "new");
  CHECK(open[1].recipe_hash == "R-new");
  auto resolved = db::list_alerts(database, "toy", {"resolved"});
  REQUIRE(resolved.size() == 1);
  CHECK(resolved[0].fingerprint == "old");
  CHECK(resolved[0].note.find("the project's recipe changed (now R-new)") == 0);
  CHECK(db::list_alerts(database, "other", {"open"}).size() == 1);
  CHECK(db::follow_recipe(database, "toy", "R-new") == 0);
  // Back to the old recipe: its alerts are found again under the same
  // fingerprints, so they are reopened, and the new recipe's resolved.
  CHECK(db::follow_recipe(database, "toy", "R-old") == 1);
  std::set<std::string> now_open;
  for (const auto& a : db::list_alerts(database, "toy", {"open"})) now_open.insert(a.fingerprint);
  CHECK(now_open == std::set<std::string>{"old", "unrecorded"});
  // One a person resolved stays resolved.
  auto old_id = db::list_alerts(database, "toy", {"open"});
  for (const auto& a : old_id)
    if (a.fingerprint == "old") REQUIRE(db::set_alert_state(database, "toy", a.id, "resolved", "ada", "fixed"));
  db::follow_recipe(database, "toy", "R-new");
  db::follow_recipe(database, "toy", "R-old");
  for (const auto& a : db::list_alerts(database, "toy", {"resolved"})) CHECK(a.fingerprint != "unrecorded");
  CHECK(db::list_alerts(database, "toy", {"open"}).size() == 1);
}

TEST_CASE("an alert opened before alerts had a recipe is the same alert when a sweep finds its change again") {
  auto database = with_recipes({"R"});
  REQUIRE(db::open_alert(database, alert_row("toy|root|S|uplift-dropped|c5", "toy", "root", "S")));  // no recipe
  auto again = alert_row("toy|root|S|R|uplift-dropped|c5", "toy", "root", "S");
  again.recipe_hash = "R";
  again.legacy_fingerprint = "toy|root|S|uplift-dropped|c5";
  CHECK_FALSE(db::open_alert(database, again));  // not new: not delivered again
  auto all = db::list_alerts(database, "toy", {});
  REQUIRE(all.size() == 1);
  CHECK(all[0].fingerprint == again.fingerprint);
  CHECK(all[0].recipe_hash == "R");
  // Another project's alert of the same legacy form is not taken.
  auto other = again;
  other.project = "other";
  other.fingerprint = "other|root|S|R|uplift-dropped|c5";
  other.legacy_fingerprint = "toy|root|S|uplift-dropped|c5";
  CHECK(db::open_alert(database, other));
}

TEST_CASE("a verdict quoting a compiler's bytes in another encoding than UTF-8 is stored, not refused") {
  auto database = testing::fresh_database();
  auto root = db::add_to_lineage(database, row("root", 0, "active"), "{}");
  auto c = db::add_to_lineage(database, row("c", root, "candidate"), "{}");
  // A candidate left "being evaluated" could be promoted by hand without figures.
  db::set_lineage_state(database, c, "rejected", "{}", "could not be judged: LLVM ERROR: caf\xe9.c");
  CHECK(db::find_lineage(database, "toy", c)->state == "rejected");
  CHECK(db::find_lineage(database, "toy", c)->reason.rfind("could not be judged: LLVM ERROR: caf", 0) == 0);
}

TEST_CASE("a policy file replaced by hand resolves the old policy's alerts, and put back reopens them") {
  auto database = testing::fresh_database();
  db::upsert_policy(database, "a", "A", "c-a", "{}");
  db::upsert_policy(database, "b", "B", "c-b", "{}");
  std::vector<db::Id> ids;
  db::upsert_suite(database, "hold", "S", "{}", {}, &ids);
  REQUIRE(db::open_alert(database, alert_row("of-a", "toy", "A", "S")));
  REQUIRE(db::open_alert(database, alert_row("of-b", "toy", "B", "S")));
  REQUIRE(db::open_alert(database, alert_row("elsewhere", "other", "A", "S")));
  CHECK(db::follow_policy(database, "toy", "B") == 1);
  auto open = db::list_alerts(database, "toy", {"open"});
  REQUIRE(open.size() == 1);
  CHECK(open[0].fingerprint == "of-b");
  auto resolved = db::list_alerts(database, "toy", {"resolved"});
  REQUIRE(resolved.size() == 1);
  CHECK(resolved[0].note == "its policy was replaced (the project's is now B)");
  CHECK(db::list_alerts(database, "other", {"open"}).size() == 1);
  CHECK(db::follow_policy(database, "toy", "B") == 0);
  // The old file put back: its alerts are the project's again.
  CHECK(db::follow_policy(database, "toy", "A") == 1);
  open = db::list_alerts(database, "toy", {"open"});
  REQUIRE(open.size() == 1);
  CHECK(open[0].fingerprint == "of-a");
}

TEST_CASE("a sweep that ends after its policy was replaced in the lineage leaves the alerts where the lineage put them") {
  auto database = testing::fresh_database();
  auto root = db::add_to_lineage(database, row("root", 0, "active"), "{}");
  auto next = db::add_to_lineage(database, row("next", root, "candidate"), "{}");
  std::vector<db::Id> ids;
  db::upsert_suite(database, "hold", "S", "{}", {}, &ids);
  REQUIRE(db::open_alert(database, alert_row("of-root", "toy", "root", "S")));
  // The sweep started tracking root; a promotion made next active meanwhile,
  // and another sweep found next's first change.
  REQUIRE(db::promote(database, "toy", next, root, "better on holdout"));
  REQUIRE(db::open_alert(database, alert_row("of-next", "toy", "next", "S")));
  auto open_now = [&] {
    std::set<std::string> out;
    for (const auto& a : db::list_alerts(database, "toy", {"open"})) out.insert(a.fingerprint);
    return out;
  };
  auto handed_over = open_now();
  CHECK(handed_over == std::set<std::string>{"of-next"});
  CHECK(db::follow_policy(database, "toy", "root") == 0);
  CHECK(open_now() == handed_over);
}

TEST_CASE("a suite taken off the project's list resolves its alerts, and put back reopens that build's") {
  auto database = testing::fresh_database();
  db::add_to_lineage(database, row("root", 0, "active"), "{}");
  std::vector<db::Id> ids;
  db::upsert_suite(database, "hold", "S", "{}", {}, &ids);
  db::upsert_suite(database, "extra", "X", "{}", {}, &ids);
  db::upsert_suite(database, "extra", "X2", "{}", {}, &ids);
  REQUIRE(db::open_alert(database, alert_row("hold", "toy", "root", "S")));
  REQUIRE(db::open_alert(database, alert_row("extra", "toy", "root", "X")));
  REQUIRE(db::open_alert(database, alert_row("elsewhere", "other", "root", "X")));
  CHECK(db::follow_suites(database, "toy", {{"hold", "S"}}) == 1);
  auto open = db::list_alerts(database, "toy", {"open"});
  REQUIRE(open.size() == 1);
  CHECK(open[0].fingerprint == "hold");
  CHECK(db::list_alerts(database, "toy", {"resolved"})[0].note == "its suite is no longer the project's");
  CHECK(db::list_alerts(database, "other", {"open"}).size() == 1);
  // Listed again, but rebuilt since: that series is gone, its alert stays resolved.
  CHECK(db::follow_suites(database, "toy", {{"hold", "S"}, {"extra", "X2"}}) == 0);
  CHECK(db::list_alerts(database, "toy", {"open"}).size() == 1);
  // Listed again as it was: reopened.
  db::follow_suites(database, "toy", {{"hold", "S"}, {"extra", "X"}});
  CHECK(db::list_alerts(database, "toy", {"open"}).size() == 2);
}

TEST_CASE("an alert narrowed while it was being delivered stays due with its narrower pin") {
  auto database = testing::fresh_database();
  auto [wide, id] = open_deliverable_alert(database);
  auto claimed = db::claim_delivery(database, id);  // a delivery (`alerts notify`) runs its hook...
  REQUIRE(claimed);
  auto pinned = wide;
  pinned.fingerprint = "pinned";
  REQUIRE(db::narrow_alert(database, id, pinned, "narrowed by a later sweep"));  // ...while a sweep narrows it
  db::Delivered d;
  d.hook = true;
  d.fingerprint = claimed->fingerprint;
  db::mark_delivery(database, id, d);
  db::release_delivery(database, id);
  auto after = db::find_alert(database, "toy", id);
  REQUIRE(after);
  CHECK(after->fingerprint == "pinned");
  CHECK(after->notify_state == "pending");  // the pinned alert is still to be told
  CHECK_FALSE(after->hook_sent);
  // Delivered as it now is, it is sent.
  d.fingerprint = "pinned";
  db::mark_delivery(database, id, d);
  CHECK(db::find_alert(database, "toy", id)->notify_state == "sent");
}

TEST_CASE("candidates a cut-short retrain left unjudged are rejected by the next one, judged ones are not") {
  auto database = testing::fresh_database();
  auto root = db::add_to_lineage(database, row("root", 0, "active"), "{}");
  auto judging = [&](const std::string& hash) {
    auto r = row(hash, root, "candidate");
    r.reason = db::kBeingEvaluated;
    return db::add_to_lineage(database, r, "{}");
  };
  auto orphan = judging("orphan");
  auto kept_candidate = row("never", root, "candidate");
  kept_candidate.reason = "not promoted (--promote never): wins by the margin";
  auto never = db::add_to_lineage(database, kept_candidate, "{}");
  auto current = judging("current");
  auto other = row("other", 0, "candidate");
  other.project = "another";
  other.reason = db::kBeingEvaluated;
  auto elsewhere = db::add_to_lineage(database, other, "{}");
  CHECK(db::abandon_unjudged_candidates(database, "toy", current) == std::vector<db::Id>{orphan});
  CHECK(db::find_lineage(database, "toy", orphan)->state == "rejected");
  CHECK(db::find_lineage(database, "toy", orphan)->reason.find("abandoned") == 0);
  CHECK(db::find_lineage(database, "toy", current)->state == "candidate");  // this retrain's own
  CHECK(db::find_lineage(database, "toy", never)->state == "candidate");    // judged, kept by choice
  CHECK(db::find_lineage(database, "another", elsewhere)->state == "candidate");
  CHECK(db::active_policy(database, "toy")->id == root);
}

TEST_CASE("an alert a later sweep re-pins counts its failed deliveries anew") {
  // Three failed attempts fail the sweep (sweep/notify.h); those of the old
  // pin must not count against the new one's delivery.
  auto database = testing::fresh_database();
  auto [wide, id] = open_deliverable_alert(database);
  db::Delivered failed;
  failed.error = "webhook down";
  failed.fingerprint = "range";
  for (int i = 0; i < 2; ++i) db::mark_delivery(database, id, failed);
  REQUIRE(db::find_alert(database, "toy", id)->notify_attempts == 2);
  auto pinned = wide;
  pinned.fingerprint = "pinned";
  REQUIRE(db::narrow_alert(database, id, pinned, "narrowed by a later sweep"));
  auto after = db::find_alert(database, "toy", id);
  CHECK(after->notify_state == "pending");
  CHECK(after->notify_attempts == 0);
}

TEST_CASE("a spread alert found again with its ends moved takes them quietly, while open or acknowledged") {
  auto database = testing::fresh_database();
  auto [spread, id] = open_deliverable_alert(database);
  auto repo = db::upsert_repository(database, "/srv/compiler");
  auto first = db::upsert_commit(database, repo, {"aaa", {}, "Ada <a@b>", 1700000000, "First part"});
  auto docs = db::upsert_commit(database, repo, {"bbb", {"aaa"}, "Ada <a@b>", 1700000100, "Docs only"});
  db::Delivered told;
  told.hook = true;
  told.fingerprint = spread.fingerprint;
  db::mark_delivery(database, id, told);
  REQUIRE(db::find_alert(database, "toy", id)->notify_state == "sent");
  auto moved = spread;
  moved.range_first_commit_id = first;
  moved.first_bad_commit_id = docs;
  REQUIRE(db::repin_alert(database, moved, "uplift dropped over aaa..bbb"));
  auto after = db::find_alert(database, "toy", id);
  CHECK(after->range_first_sha == "aaa");
  CHECK(after->first_bad_sha == "bbb");
  CHECK(after->notify_state == "sent");  // its change was told: not told again
  CHECK(db::alert_events(database, id).back().note ==
        "its range is now the one a later measurement gives: uplift dropped over aaa..bbb");
  // The same check-ins again: nothing to do, nothing in its history.
  auto events = db::alert_events(database, id).size();
  CHECK_FALSE(db::repin_alert(database, moved, "again"));
  CHECK(db::alert_events(database, id).size() == events);
  // Acknowledged, it follows too; resolved or ignored, it is the person's as it was.
  REQUIRE(db::set_alert_state(database, "toy", id, "acknowledged", "ana", ""));
  moved.first_bad_commit_id = first;
  CHECK(db::repin_alert(database, moved, "narrower"));
  for (const char* theirs : {"ignored", "resolved"}) {
    REQUIRE(db::set_alert_state(database, "toy", id, theirs, "ana", ""));
    moved.first_bad_commit_id = moved.first_bad_commit_id == docs ? first : docs;
    CHECK_FALSE(db::repin_alert(database, moved, "moved"));
  }
  CHECK(db::find_alert(database, "toy", id)->first_bad_sha == "aaa");
}

TEST_CASE("a quiet re-pin is not an opening: a person's act before it still makes a late opening theirs") {
  auto database = testing::fresh_database();
  auto [spread, id] = open_deliverable_alert(database);  // its opening pending: no channel took it yet
  auto repo = db::upsert_repository(database, "/srv/compiler");
  REQUIRE(db::set_alert_state(database, "toy", id, "acknowledged", "ana", "on it"));
  REQUIRE(db::set_alert_state(database, "toy", id, "open", "ana", "not mine after all"));
  auto moved = spread;
  moved.first_bad_commit_id = db::upsert_commit(database, repo, {"aaa", {}, "Ada <a@b>", 1700000000, "Part"});
  REQUIRE(db::repin_alert(database, moved, "moved"));
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch",
                              std::string(db::kRecoveredNotePrefix) + "gone at aaa"));
  CHECK(db::find_alert(database, "toy", id)->late_opening_theirs);
  CHECK(db::undelivered_alerts(database, "toy").empty());
}
