#pragma once
// Delivering alerts to people: the project's command hook (the alert as JSON
// on its standard input) and its webhook (a JSON POST; Slack- and
// Mattermost-compatible with webhook_format = "slack"). A delivery that fails
// is logged and retried by the next sweep; one that has failed on
// kDeliveryAttemptsBeforeFailing attempts fails the sweep too, or alerts
// could go unseen night after night by a team that reads only its channel.
#include <string>

#include "db/drift.h"
#include "sweep/alert_text.h"
#include "sweep/project_file.h"

namespace sweep {

inline constexpr int kDeliveryAttemptsBeforeFailing = 3;

struct Delivery {
  int sent = 0, failed = 0;  ///< notices: alerts opened, and ends of alerts
  int ends_sent = 0;         ///< of `sent`, ends
  /// Of `failed`, those one channel took this time while another failed
  /// (retried on that one alone).
  int failed_on_one_channel = 0;
  /// Of those that failed, alerts that a channel has not taken on any of at
  /// least kDeliveryAttemptsBeforeFailing attempts (a channel that took it
  /// is not tried again), and the last one's reason.
  int failing_repeatedly = 0;
  std::string last_error;
};

/// Delivers every pending alert of the project, then every pending end of
/// one (notify.resolved); records each attempt.
Delivery deliver_pending_alerts(const ProjectFile& project, db::Database& db);

/// POSTs `body` as JSON; the error names the URL (never its query) and the
/// reason. `hung`, if given: set when the server took longer than the timeout.
common::Status post_json(const std::string& url, const std::string& body, double timeout_seconds, bool* hung = nullptr);

}  // namespace sweep
