#pragma once
// What people read of an alert: its one line and the JSON the hook, the
// webhook and `alerts --json` carry. Pure: from the stored alert alone.
#include <string>

#include "db/drift.h"

namespace sweep {

/// The alert as `alerts --json` prints it.
std::string alert_json(const db::AlertView& alert);
/// The alert as the hook and the webhook receive it: alert_json with
/// "event": "opened", or "resolved" for the notice of its end.
std::string notice_json(const db::AlertView& alert, bool resolution);
/// A notice's one line for Slack: "driftwatch (project): " and the alert's
/// sentence; its end's continues "over: " and adds why (the note).
std::string notice_text(const db::AlertView& alert, bool resolution);
/// One line for people: what moved, where, and the culprit.
std::string alert_sentence(const db::AlertView& alert);
/// Whether an alert's stored details (sweep::Finding::details_json) compare
/// modules at a size carried forward from an earlier check-in: its range
/// then starts at that measurement, which every sentence about it says.
bool details_carried_forward(const std::string& details_json);
/// Whether an alert's stored details are of a slow drift across samples
/// (sweep::Finding::across_samples), whose range moves with its anchor.
bool details_across_samples(const std::string& details_json);

}  // namespace sweep
