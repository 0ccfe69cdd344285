#pragma once
// Delivering alerts to people: the project's command hook (the alert as JSON
// on its standard input) and its webhook (a JSON POST; Slack- and
// Mattermost-compatible with webhook_format = "slack"). A delivery that fails
// is logged and retried by the next sweep; one that has failed on
// kDeliveryAttemptsBeforeFailing attempts fails the sweep too, or alerts
// could go unseen night after night by a team that reads only its channel.
#include <string>

#include "db/drift.h"
#include "sweep/project_file.h"

namespace sweep {

/// The alert as the hook and the webhook receive it, and `alerts --json` prints it.
std::string alert_json(const db::AlertView& alert);
/// One line for people: what moved, where, and the culprit.
std::string alert_sentence(const db::AlertView& alert);
/// Whether an alert's stored details (sweep::Finding::details_json) compare
/// modules at a size carried forward from an earlier check-in: its range
/// then starts at that measurement, which every sentence about it says.
bool details_carried_forward(const std::string& details_json);
/// Whether an alert's stored details are of a slow drift across samples
/// (sweep::Finding::across_samples), whose range moves with its anchor.
bool details_across_samples(const std::string& details_json);

inline constexpr int kDeliveryAttemptsBeforeFailing = 3;

struct Delivery {
  int sent = 0, failed = 0;
  /// Of those that failed, alerts that a channel has not taken on any of at
  /// least kDeliveryAttemptsBeforeFailing attempts (a channel that took it
  /// is not tried again), and the last one's reason.
  int failing_repeatedly = 0;
  std::string last_error;
};

/// Delivers every pending alert of the project; records each attempt.
Delivery deliver_pending_alerts(const ProjectFile& project, db::Database& db);

/// POSTs `body` as JSON; the error names the URL (never its query) and the
/// reason. `hung`, if given: set when the server took longer than the timeout.
common::Status post_json(const std::string& url, const std::string& body, double timeout_seconds, bool* hung = nullptr);

}  // namespace sweep
