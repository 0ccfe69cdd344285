#pragma once
// How sweep and bisect tell people what the drift analysis found.
#include "sweep/drift.h"

namespace cli {

/// The changes found, one sentence each, with what bisection spent.
/// `news_only` (a quiet nightly): the new alerts' sentences alone, the
/// others counted, so that last month's changes are not told every night.
void print_drift(const sweep::DriftReport& report, bool news_only = false);
/// Alerts that a channel has failed to take, sweep after sweep: says so on
/// standard error, after everything on standard output, and returns true,
/// for a non-zero exit; false when deliveries are well.
bool report_stuck_notifications(const sweep::Delivery& delivery);
/// The notifications line, when anything was delivered or tried.
void print_notifications(const sweep::Delivery& delivery);
/// "3 sent (1 of them the end of an alert), 1 failed, 1 of them taken by
/// one of its two channels".
std::string notifications_text(const sweep::Delivery& delivery);

}  // namespace cli
