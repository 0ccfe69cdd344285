// What `alerts show` says is owed to each channel of an alert's opening and end.
#include "sweep/delivery_channels.h"

#include <doctest/doctest.h>

#include "db/drift.h"

namespace {

/// A build-broken alert whose opening the hook took and the webhook did
/// not (it was down), still open.
db::AlertView half_told() {
  db::AlertView a;
  a.kind = "build-broken";
  a.state = "open";
  a.state_by = "driftwatch";
  a.notify_state = "pending";
  a.resolution_notify_state = "none";
  a.hook_sent = a.hook_told = true;
  return a;
}

/// Found over by driftwatch since.
void found_over(db::AlertView& a) {
  a.state = "resolved";
  a.note = std::string(db::kRecoveredNotePrefix) + "it builds again at 0123456789ab";
  a.resolution_notify_state = "pending";
}

}  // namespace

TEST_CASE("an open alert's pending opening is due to the channel that has not taken it, on channels the project has") {
  auto a = half_told();
  auto opening = sweep::opening_states(a, true, true);
  CHECK(opening.hook == "sent");
  CHECK(opening.webhook == "due");
  CHECK(opening.text() == " (hook sent, webhook due)");
  CHECK(sweep::opening_states(a, true, false).webhook == "not owed");  // no webhook any more
  CHECK(sweep::end_states(a, opening).text() == "");                   // no end while it is open
}

TEST_CASE("found over, an alert owes its late opening and then its end to the channel that never had it") {
  auto a = half_told();
  found_over(a);
  auto opening = sweep::opening_states(a, true, true);
  CHECK(opening.webhook == "due");
  auto end = sweep::end_states(a, opening);
  CHECK(end.hook == "due");
  CHECK(end.webhook == "due");
  a.resolution_hook_sent = true;
  CHECK(sweep::end_states(a, opening).text() == " (hook sent, webhook due)");
}

TEST_CASE("a late opening a person acted on first is owed to nobody, and neither is its end there") {
  auto a = half_told();
  found_over(a);
  a.late_opening_theirs = true;
  auto opening = sweep::opening_states(a, true, true);
  CHECK(opening.webhook == "not owed");
  auto end = sweep::end_states(a, opening);
  CHECK(end.webhook == "not owed");
  CHECK(end.hook == "due");  // the hook had the opening: its end is still owed
}

TEST_CASE("an alert a person resolved owes no opening") {
  auto a = half_told();
  a.state = "resolved";
  a.state_by = "ana";
  a.note = "fixed by hand";
  CHECK(sweep::opening_states(a, true, true).webhook == "not owed");
}
