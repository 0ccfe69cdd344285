#include "cli/drift_output.h"

#include <fmt/core.h>

#include <cstdio>

#include "common/text.h"

namespace cli {

namespace {

/// A suite of a project where other suites have enough points: its own "no
/// change" would mean nothing, so it is named.
void print_suites_too_short(const sweep::DriftReport& r) {
  if (r.evaluated_checkins < 2) return;  // said for the whole project already
  for (const auto& [suite, n] : r.evaluated_by_suite)
    if (n < 2)
      fmt::print("  suite {}: {} evaluated check-in{} so far: no change of it can show yet\n", suite,
                 n == 0 ? "no" : "one", n == 0 ? "s" : "");
}

void print_findings(const sweep::DriftReport& r, bool news_only) {
  if (!r.analysed) return;  // the sweep said why
  if (r.findings.empty()) {
    if (r.evaluated_checkins == 0)
      fmt::print("drift: nothing to analyse: no check-in of the project was evaluated with its policy\n");
    else if (r.evaluated_checkins == 1)
      fmt::print("drift: one evaluated check-in so far: a change needs two to show\n");
    else
      fmt::print("drift: no change at or above the project's thresholds\n");
    print_suites_too_short(r);
    return;
  }
  auto unevaluated = r.bisect_unevaluated > 0
                         ? fmt::format(" ({} more tried gave no evaluation)", r.bisect_unevaluated)
                         : std::string();
  auto found_over = r.alerts_found_over > 0
                        ? fmt::format(" and {} already over (recorded, resolved, not sent)", r.alerts_found_over)
                        : std::string();
  auto recovered = r.alerts_recovered > 0
                       ? fmt::format("; {} resolved: their failure is gone at a later check-in", r.alerts_recovered)
                       : std::string();
  fmt::print("drift: {} change(s); bisection evaluated {} check-in(s){}; {} new alert(s){}{}\n", r.findings.size(),
             r.bisect_evaluations, unevaluated, r.alerts_opened, found_over, recovered);
  // NEW marks what a reader must act on: an alert found already over says
  // so in its sentence, and is no news.
  int known = 0;
  for (const auto& f : r.findings) {
    bool news = f.new_alert && f.recovered_at.empty();
    if (news_only && !news) {
      ++known;
      continue;
    }
    fmt::print("  {} {}{}\n", news ? "NEW" : "   ", common::printable(f.sentence()),
               f.evaluations > 0 ? fmt::format(" [{} of {} check-ins evaluated]", f.evaluations, f.range_size) : "");
  }
  if (known > 0)
    fmt::print("  and {} change(s) known before or already over (`driftwatch alerts` lists them)\n", known);
  print_suites_too_short(r);
}

}  // namespace

void print_drift(const sweep::DriftReport& r, bool news_only) {
  print_findings(r, news_only);
  // Also where the analysis found nothing or did not run: what a sweep
  // retried of last night's is told.
  print_notifications(r.notifications);
}

void print_notifications(const sweep::Delivery& d) {
  if (d.sent + d.failed > 0)
    fmt::print("notifications: {}{}\n", notifications_text(d), d.failed > 0 ? " (retried by the next sweep)" : "");
}

std::string notifications_text(const sweep::Delivery& d) {
  return fmt::format("{} sent{}, {} failed{}", d.sent,
                     d.ends_sent > 0 ? fmt::format(" ({} of them the end of an alert)", d.ends_sent) : "", d.failed,
                     d.failed_on_one_channel > 0
                         ? fmt::format(", {} of them taken by one of its two channels", d.failed_on_one_channel)
                         : "");
}

bool report_stuck_notifications(const sweep::Delivery& d) {
  if (d.failing_repeatedly == 0) return false;
  std::fflush(stdout);
  fmt::print(stderr,
             "driftwatch: {} alert(s) not delivered after {} or more attempts (last: {}): fix [notify] in the "
             "project file, or read them with `driftwatch alerts`\n",
             d.failing_repeatedly, sweep::kDeliveryAttemptsBeforeFailing, common::printable(d.last_error));
  return true;
}

}  // namespace cli
