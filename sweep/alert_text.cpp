#include "sweep/alert_text.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "common/text.h"
#include "reports/drift.h"
#include "sweep/timeline.h"
#include "tracker/sampling.h"

namespace sweep {
using json = nlohmann::json;

namespace {

/// An alert's stored details; discarded (is_discarded()) when they do not parse.
json details_of(const std::string& details_json) {
  return json::parse(details_json.empty() ? "{}" : details_json, nullptr, false);
}

json alert_object(const db::AlertView& a) {
  auto details = details_of(a.details_json);
  return json{{"id", a.id},
              {"project", a.project},
              {"kind", a.kind},
              {"state", a.state},
              {"suite", a.suite},
              {"policy", a.policy},
              {"culprit",
               {{"sha", a.culprit_sha},
                {"subject", a.culprit_subject},
                {"author", a.culprit_author},
                {"date", a.culprit_time ? tracker::format_date(a.culprit_time) : ""}}},
              {"last_good", a.last_good_sha},
              {"first_bad", a.first_bad_sha},
              {"range_first", a.range_first_sha},
              {"magnitude", a.magnitude},
              {"summary", alert_sentence(a)},
              {"details", details.is_discarded() ? json::object() : details},
              {"note", a.note},
              {"created_at", a.created_at}};
}

}  // namespace

std::string alert_json(const db::AlertView& a) { return common::json_text(alert_object(a)); }

namespace {

/// The alert as its opening told it: an opening sent late, once driftwatch
/// found the failure over (a channel that was down), reads on every channel
/// as it did on those that took it on time; its end follows.
db::AlertView as_opened(const db::AlertView& a) {
  if (a.state != "resolved") return a;
  auto opened = a;
  opened.state = "open";
  opened.note.clear();
  auto d = details_of(a.details_json);
  if (d.is_object()) {
    for (const char* key : {"recovered_at", "recovered_at_label", "recovered_taken"}) d.erase(key);
    opened.details_json = common::json_text(d);
  }
  return opened;
}

}  // namespace

std::string notice_json(const db::AlertView& given, bool resolution) {
  const auto a = resolution ? given : as_opened(given);
  auto o = alert_object(a);
  o["event"] = resolution ? "resolved" : "opened";
  return common::json_text(o);
}

std::string notice_text(const db::AlertView& a, bool resolution) {
  // The project and the policy named: one channel often hears several of each.
  std::string head = "driftwatch (" + a.project + (a.policy.empty() ? "" : ", " + a.policy) + "): ";
  if (!resolution) return head + alert_sentence(as_opened(a));
  // The sentence says where it recovered once the details hold it; an
  // alert resolved before they did has it in its note only.
  auto d = details_of(a.details_json);
  if (d.is_object() && !d.value("recovered_at", "").empty()) return head + "over: " + alert_sentence(a);
  std::string why = a.note.rfind(db::kRecoveredNotePrefix, 0) == 0
                        ? a.note.substr(std::string(db::kRecoveredNotePrefix).size())
                        : a.note;
  return head + "over: " + alert_sentence(a) + (why.empty() ? "" : " (" + why + ")");
}

bool details_carried_forward(const std::string& details_json) {
  auto d = details_of(details_json);
  return d.is_object() && d.contains("carried_forward") && !d["carried_forward"].empty();
}

bool details_across_samples(const std::string& details_json) {
  auto d = details_of(details_json);
  return d.is_object() && d.value("across_samples", false);
}

std::string alert_sentence(const db::AlertView& a) {
  auto d = details_of(a.details_json);
  auto num = [&](const char* group, const char* key) {
    return d.is_discarded() || !d.contains(group) ? 0.0 : d[group].value(key, 0.0);
  };
  bool spread = !d.is_discarded() && d.value("spread", false);
  bool carried = details_carried_forward(a.details_json);
  std::string where =
      change_place_text({a.culprit_sha, common::last_line(a.culprit_subject), a.culprit_time, a.range_first_sha,
                         a.range_first_subject, a.first_bad_sha, a.first_bad_subject, spread, carried});
  // The compiler stopped asking the policy (Finding::sentence says so too).
  auto asked = [&](const char* key) { return d.is_discarded() ? std::int64_t(-1) : d.value(key, std::int64_t(-1)); };
  // A failure over when it was first found says so (Finding::recovered_at).
  auto recovered = d.is_discarded()
                       ? std::string()
                       : recovered_text(a.kind, d.value("recovered_at", ""), d.value("recovered_at_label", ""),
                                        d.value("newly_failing", 0), d.value("recovered_taken", 0));
  auto at = reports::unasked_note(asked("decisions_before"), asked("decisions_after")) + ": " + where + recovered;
  // Word for word as the sweep says it (Finding::sentence): a line of the
  // console is found in the hook's log, the report and `alerts` too.
  if (a.kind == "uplift-dropped" || a.kind == "uplift-rose")
    return "uplift on " + a.suite + " " +
           reports::uplift_change_text(
               a.kind == "uplift-dropped", spread, d.is_discarded() ? 0.0 : d.value("uplift_delta", 0.0),
               num("before", "uplift"), num("after", "uplift"),
               reports::relative_move(num("before", "total_default"), num("after", "total_default")),
               reports::relative_move(num("before", "total_learned"), num("after", "total_learned"))) +
           at;
  if (a.kind == "build-broken")
    return "the build broke at " + where + broken_samples_text(d.is_discarded() ? 0 : d.value("broken_samples", 0)) +
           recovered;
  if (a.kind == "policy-unusable")
    return "the policy cannot run on " + a.suite + " from " + where + ": " +
           (d.is_discarded() ? std::string("no reason recorded") : d.value("evaluation_error", "no reason recorded")) +
           recovered;
  auto listed = [&](const char* key) {
    return d.is_discarded() || !d.contains(key) || !d[key].is_array() ? std::size_t(0) : d[key].size();
  };
  if (a.kind == "feature-set-changed")
    return fmt::format("the compiler's features changed on {} ({} newly missing, {} newly sent){}", a.suite,
                       listed("features_missing"), listed("features_new"), at);
  if (a.kind == "modules-failing" || a.kind == "compiler-failing")
    return failing_modules_text(a.kind, d.is_discarded() ? 0 : d.value("newly_failing", 0), a.suite) + at;
  if (a.kind == "modules-flipped")
    return fmt::format("{} modules of {} turned from win to loss (uplift {} → {}){}",
                       d.is_discarded() || !d.contains("win_to_loss") ? 0 : d["win_to_loss"].size(), a.suite,
                       common::signed_percent(num("before", "uplift")), common::signed_percent(num("after", "uplift")),
                       at);
  return fmt::format("sizes on {} moved: default {}, learned {} (uplift {} → {}){}", a.suite,
                     common::signed_percent(d.is_discarded() ? 0.0 : d.value("default_delta", 0.0)),
                     common::signed_percent(d.is_discarded() ? 0.0 : d.value("learned_delta", 0.0)),
                     common::signed_percent(num("before", "uplift")), common::signed_percent(num("after", "uplift")),
                     at);
}

}  // namespace sweep
