#pragma once
// Where an alert's opening and its end stand on each channel, as `alerts
// show` tells people: pure, from the alert's row and which channels the
// project has.
#include <string>

#include "db/drift.h"

namespace sweep {

/// Where a notice stands on each channel: "sent", "due" (still to be sent)
/// or "not owed" (no such channel; of an end, one its opening never reached;
/// of a late opening, one a person acted on first).
struct ChannelStates {
  std::string hook, webhook;
  /// " (hook due, webhook sent)": the channels owed it, for people; "" when none is.
  std::string text() const;
};

/// The opening's: owed while the alert is open and its delivery pending,
/// and, once driftwatch found it over, to the channels no opening of it
/// reached unless a person acted on it since it was opened (db's
/// kOpeningDue, which the delivery follows).
ChannelStates opening_states(const db::AlertView& a, bool has_hook, bool has_webhook);

/// The end's: owed to the channels its opening reached, and to those still
/// owed a late opening (the end follows it).
ChannelStates end_states(const db::AlertView& a, const ChannelStates& opening);

}  // namespace sweep
