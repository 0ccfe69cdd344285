// The end of a failure alert (a build fixed, a crash gone) as a notice due
// to the channels its opening reached: when it is due, to whom, and once.
#include <doctest/doctest.h>

#include "db/drift.h"
#include "db/store.h"
#include "tests/support/test_db.h"

namespace {

const std::string kRecovered = std::string(db::kRecoveredNotePrefix) + "it builds again at 0123456789ab";

/// The build-broken alert of project toy, policy A and suite S, to be delivered.
db::AlertRow build_alert_row() {
  db::AlertRow r;
  r.fingerprint = "broken";
  r.project = "toy";
  r.kind = "build-broken";
  r.policy_hash = "A";
  r.suite_manifest_hash = "S";
  r.metric = "uplift";
  r.notify = true;
  return r;
}

/// Opens build_alert_row(); its id.
db::Id open_build_alert(db::Database& database) {
  db::upsert_policy(database, "a", "A", "c-a", "{}");
  std::vector<db::Id> ids;
  db::upsert_suite(database, "hold", "S", "{}", {}, &ids);
  REQUIRE(db::open_alert(database, build_alert_row()));
  return db::list_alerts(database, "toy", {}).front().id;
}

db::Delivered delivered(bool hook, bool webhook, bool end, const std::string& error = "") {
  db::Delivered d;
  d.hook = hook;
  d.webhook = webhook;
  d.resolution = end;
  d.error = error;
  d.fingerprint = "broken";
  return d;
}

db::AlertView alert(db::Database& database, db::Id id) { return *db::find_alert(database, "toy", id); }

}  // namespace

TEST_CASE("an alert's end is due, once, to the channels its opening reached, when driftwatch finds it over") {
  auto database = testing::fresh_database();
  auto id = open_build_alert(database);
  // The hook took the opening; the webhook was down.
  db::mark_delivery(database, id, delivered(true, false, false, "webhook down"));
  REQUIRE(alert(database, id).notify_state == "pending");
  // A person's resolution, and back: no end to tell.
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "ana", "fixed by hand"));
  CHECK(alert(database, id).resolution_notify_state == "none");
  REQUIRE(db::set_alert_state(database, "toy", id, "open", "ana", ""));
  // Found over by a sweep: due to the hook, not to the webhook that never had it.
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", kRecovered));
  auto due = alert(database, id);
  CHECK(due.resolution_notify_state == "pending");
  CHECK_FALSE(due.resolution_hook_sent);
  CHECK(due.resolution_webhook_sent);
  REQUIRE(db::undelivered_resolutions(database, "toy").size() == 1);
  auto claimed = db::claim_delivery(database, id, true);
  REQUIRE(claimed);
  CHECK(claimed->state == "resolved");
  CHECK_FALSE(db::claim_delivery(database, id, false));  // no opening is due of a resolved alert
  db::release_delivery(database, id);
  db::mark_delivery(database, id, delivered(true, false, true));
  CHECK(alert(database, id).resolution_notify_state == "sent");
  CHECK(db::undelivered_resolutions(database, "toy").empty());
  // Resolved again as over (the next sweep): refused, told once.
  CHECK_FALSE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", kRecovered));
  CHECK(alert(database, id).resolution_notify_state == "sent");
  // A person who doubts that end reopens it, and acknowledges it: doubted
  // either way, which the analysis reads to leave it theirs.
  CHECK_FALSE(alert(database, id).end_doubted);
  REQUIRE(db::set_alert_state(database, "toy", id, "open", "ana", "still seeing it?"));
  CHECK(alert(database, id).end_doubted);
  REQUIRE(db::set_alert_state(database, "toy", id, "acknowledged", "ana", ""));
  CHECK(alert(database, id).end_doubted);
  // driftwatch's own closing and reopening (a nightly off its line, then
  // back) keeps the doubt.
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", db::kLeftTheLineNote));
  auto again = build_alert_row();
  again.recovered = true;
  REQUIRE(db::open_alert(database, again));
  REQUIRE(alert(database, id).state == "open");
  CHECK(alert(database, id).end_doubted);
  // Ignored since the sweep read it: driftwatch does not resolve it over the person.
  REQUIRE(db::set_alert_state(database, "toy", id, "ignored", "ana", ""));
  CHECK_FALSE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", kRecovered));
  CHECK(alert(database, id).state == "ignored");
}

TEST_CASE("an alert found over while its opening was on its way: the end is due once the opening is recorded") {
  auto database = testing::fresh_database();
  auto id = open_build_alert(database);
  REQUIRE(db::claim_delivery(database, id));
  // The sweep resolves it meanwhile: told to nobody yet, so no end is due.
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", kRecovered));
  CHECK(alert(database, id).resolution_notify_state == "none");
  db::mark_delivery(database, id, delivered(false, true, false));
  db::release_delivery(database, id);
  auto due = alert(database, id);
  CHECK(due.resolution_notify_state == "pending");
  CHECK(due.resolution_hook_sent);  // the hook never had its opening
  CHECK_FALSE(due.resolution_webhook_sent);
}

TEST_CASE("an end delivered while the alert was opened again is not recorded on it, and ends let go are not sent") {
  auto database = testing::fresh_database();
  auto id = open_build_alert(database);
  db::mark_delivery(database, id, delivered(true, true, false));
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", kRecovered));
  REQUIRE(db::claim_delivery(database, id, true));
  REQUIRE(db::set_alert_state(database, "toy", id, "open", "driftwatch", "found again"));
  db::mark_delivery(database, id, delivered(true, true, true));
  db::release_delivery(database, id);
  auto reopened = alert(database, id);
  CHECK(reopened.resolution_notify_state == "none");
  CHECK_FALSE(reopened.resolution_hook_sent);
  // Over again: due anew to both channels. notify.resolved = false lets it go.
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", kRecovered));
  CHECK(alert(database, id).resolution_notify_state == "pending");
  CHECK(db::drop_pending_resolutions(database, "toy") == 1);
  CHECK(alert(database, id).resolution_notify_state == "none");
  CHECK(db::undelivered_resolutions(database, "toy").empty());
}

TEST_CASE("a person who ignores an end driftwatch found, then reopens the alert, doubts that end") {
  auto database = testing::fresh_database();
  auto id = open_build_alert(database);
  db::mark_delivery(database, id, delivered(true, false, false));
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", kRecovered));
  REQUIRE(db::set_alert_state(database, "toy", id, "ignored", "ana", "not over for me"));
  CHECK(alert(database, id).end_doubted);
  REQUIRE(db::set_alert_state(database, "toy", id, "open", "ana", ""));
  CHECK(alert(database, id).end_doubted);
}

TEST_CASE("an alert found over before its opening reached a channel is told to it: its opening, then its end") {
  auto database = testing::fresh_database();
  auto id = open_build_alert(database);
  // The hook took the opening; the webhook was down, and the sweep found it over.
  db::mark_delivery(database, id, delivered(true, false, false, "webhook down"));
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", kRecovered));
  REQUIRE(db::undelivered_alerts(database, "toy").size() == 1);
  REQUIRE(db::claim_delivery(database, id, false));
  db::release_delivery(database, id);
  // The hook hears the end first (the webhook still down for the opening).
  db::mark_delivery(database, id, delivered(false, false, false, "webhook down"));
  db::mark_delivery(database, id, delivered(true, false, true));
  REQUIRE(alert(database, id).resolution_notify_state == "sent");
  // Back up, the webhook takes the opening: its end is due to it alone.
  db::mark_delivery(database, id, delivered(false, true, false));
  auto due = alert(database, id);
  CHECK(due.notify_state == "sent");
  CHECK(due.resolution_notify_state == "pending");
  CHECK(due.resolution_hook_sent);
  CHECK_FALSE(due.resolution_webhook_sent);
  CHECK(db::undelivered_alerts(database, "toy").empty());
  db::mark_delivery(database, id, delivered(false, true, true));
  CHECK(alert(database, id).resolution_notify_state == "sent");
  // An opening again (narrowed, say) reaches channels told already: no second end.
  db::mark_delivery(database, id, delivered(true, true, false));
  CHECK(alert(database, id).resolution_notify_state == "sent");
}

TEST_CASE("an alert a person acted on before driftwatch found it over is not told later, one nobody touched is") {
  auto database = testing::fresh_database();
  auto id = open_build_alert(database);
  REQUIRE(db::set_alert_state(database, "toy", id, "acknowledged", "ana", "looking"));
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", kRecovered));
  CHECK(db::undelivered_alerts(database, "toy").empty());
  CHECK_FALSE(db::claim_delivery(database, id, false));
  // What `alerts show` reads to say no channel is owed it.
  CHECK(alert(database, id).late_opening_theirs);
  // Found again (a later analysis finds no end to it), and over again
  // before any channel took it: told, as nobody acted on it since.
  REQUIRE(db::open_alert(database, build_alert_row()));
  REQUIRE(alert(database, id).state == "open");
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", kRecovered));
  CHECK_FALSE(alert(database, id).late_opening_theirs);
  REQUIRE(db::undelivered_alerts(database, "toy").size() == 1);
  REQUIRE(db::claim_delivery(database, id, false));
  db::release_delivery(database, id);
  // Both channels take the opening: the end is due to both.
  db::mark_delivery(database, id, delivered(true, true, false));
  auto due = alert(database, id);
  CHECK(due.resolution_notify_state == "pending");
  CHECK_FALSE(due.resolution_hook_sent);
  CHECK_FALSE(due.resolution_webhook_sent);
  // A person's resolution is not driftwatch's: a pending opening stays untold.
  auto other = build_alert_row();
  other.fingerprint = "broken-2";
  REQUIRE(db::open_alert(database, other));
  auto other_id = db::list_alerts(database, "toy", {"open"}).front().id;
  REQUIRE(db::set_alert_state(database, "toy", other_id, "resolved", "ana", kRecovered));
  CHECK(alert(database, other_id).notify_state == "pending");
  CHECK_FALSE(db::claim_delivery(database, other_id, false));
  CHECK(db::undelivered_alerts(database, "toy").empty());
}

TEST_CASE("where a failure recovered goes into its alert's details with driftwatch's end, and out with a doubt") {
  auto database = testing::fresh_database();
  auto id = open_build_alert(database);
  db::mark_delivery(database, id, delivered(true, false, false));
  const std::string where = R"({"recovered_at": "0123456789abcdef0123456789abcdef01234567", "recovered_taken": 0})";
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "driftwatch", kRecovered, where));
  CHECK(alert(database, id).details_json.find("0123456789abcdef0123456789abcdef01234567") != std::string::npos);
  // A person who reopens it doubts that end: the alert no longer says it.
  REQUIRE(db::set_alert_state(database, "toy", id, "open", "ana", "still seeing it"));
  CHECK(alert(database, id).details_json.find("recovered_at") == std::string::npos);
  // The person's own resolution keeps the details as they are.
  REQUIRE(db::set_alert_state(database, "toy", id, "resolved", "ana", "fixed"));
  CHECK(alert(database, id).details_json == "{}");
}
