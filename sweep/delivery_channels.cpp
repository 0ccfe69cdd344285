#include "sweep/delivery_channels.h"

#include <utility>

namespace sweep {

namespace {

std::string channel_state(bool sent, bool owed) { return sent ? "sent" : owed ? "due" : "not owed"; }

/// Found over by driftwatch (resolved with a "recovered: " note).
bool found_over(const db::AlertView& a) {
  return a.state == "resolved" && a.state_by == "driftwatch" && a.note.starts_with(db::kRecoveredNotePrefix);
}

}  // namespace

std::string ChannelStates::text() const {
  std::string out;
  for (const auto& [name, state] : {std::pair{"hook", hook}, std::pair{"webhook", webhook}})
    if (state != "not owed") out += (out.empty() ? "" : ", ") + std::string(name) + " " + state;
  return out.empty() ? "" : " (" + out + ")";
}

ChannelStates opening_states(const db::AlertView& a, bool has_hook, bool has_webhook) {
  bool pending = a.notify_state == "pending";
  auto owed = [&](bool configured, bool told) {
    return pending && configured && (a.state == "open" || (found_over(a) && !a.late_opening_theirs && !told));
  };
  return {channel_state(a.hook_sent, owed(has_hook, a.hook_told)),
          channel_state(a.webhook_sent, owed(has_webhook, a.webhook_told))};
}

ChannelStates end_states(const db::AlertView& a, const ChannelStates& opening) {
  bool owed = a.resolution_notify_state != "none";
  auto state = [&](bool told, bool sent, const std::string& opening_state) {
    if (!told && found_over(a) && opening_state == "due") return std::string("due");
    return channel_state(told && sent, owed && told);
  };
  return {state(a.hook_told, a.resolution_hook_sent, opening.hook),
          state(a.webhook_told, a.resolution_webhook_sent, opening.webhook)};
}

}  // namespace sweep
