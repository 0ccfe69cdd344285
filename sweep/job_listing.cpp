#include "sweep/job_listing.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "common/json_text.h"
#include "common/text.h"

namespace sweep {
using json = nlohmann::json;

namespace {

json payload_of(const db::JobRow& j) {
  auto p = json::parse(j.payload_json, nullptr, false);
  return p.is_object() ? p : json::object();
}

std::string seconds(double s) { return common::format_seconds(s < 0 ? 0 : s); }

/// What a done job found: a build's outcome, an evaluation's figures (a
/// toolchains-only project has no report to read them in).
std::string result_of(const db::JobRow& j) {
  auto r = json::parse(j.result_json.empty() ? "{}" : j.result_json, nullptr, false);
  if (!r.is_object()) return j.error;
  if (r.contains("uplift") && r["uplift"].is_number() && r.contains("total_uplift") && r["total_uplift"].is_number()) {
    auto out = fmt::format("uplift {}, total {}", common::signed_percent(r["uplift"].get<double>()),
                           common::signed_percent(r["total_uplift"].get<double>()));
    if (auto failed = r.value("failed_modules", 0); failed > 0) out += fmt::format(", {} module(s) failed", failed);
    return out;
  }
  if (r.contains("error") && r["error"].is_string()) return "evaluation failed: " + r["error"].get<std::string>();
  if (r.contains("outcome") && r["outcome"].is_string()) {
    auto outcome = r["outcome"].get<std::string>();
    auto message = r.value("message", std::string());
    return "build " + outcome + (outcome == "ok" || message.empty() ? "" : ": " + message);
  }
  return j.error;
}

/// Who holds a running job and for how long; why a job failed or waits;
/// what a done one found.
std::string status_of(const db::JobRow& j) {
  if (j.state == db::kJobRunning) {
    std::string lease = !j.lease_left_seconds          ? "no lease"
                        : *j.lease_left_seconds < 0 ? "lease expired " + seconds(-*j.lease_left_seconds) + " ago"
                                                     : "lease " + seconds(*j.lease_left_seconds) + " left";
    return j.owner + " for " + seconds(j.running_seconds) + ", " + lease;
  }
  if (j.state == db::kJobQueued) {
    std::string wait = j.lease_left_seconds && *j.lease_left_seconds > 0 ? "retry in " + seconds(*j.lease_left_seconds)
                       : j.depends_on                                  ? "after job " + std::to_string(*j.depends_on)
                                                                       : "";
    if (!j.error.empty()) wait += (wait.empty() ? "" : ": ") + j.error;
    return wait;
  }
  if (j.state == db::kJobDone) return result_of(j);
  return j.error;
}

}  // namespace

std::string job_what(const db::JobRow& j) {
  auto p = payload_of(j);
  std::string what = j.kind + " ";
  if (p.contains("toolchain")) what += p.value("label", p.value("toolchain", "")) + " (toolchain)";
  else what += p.value("sha", "").substr(0, 12);
  if (p.contains("suite")) what += " " + p.value("suite", "");
  return what;
}

std::string render_jobs_table(const std::vector<db::JobRow>& jobs, const db::JobCounts& c, const std::string& project,
                              bool truncated, db::Id sweep_id) {
  // Whose jobs the counts are: one sweep's are not "every project's".
  auto whose = sweep_id          ? fmt::format("sweep {}{}", sweep_id, project.empty() ? "" : " of project " + project)
               : project.empty() ? std::string("every project")
                                 : "project " + project;
  std::string out =
      fmt::format("jobs of {}: {} queued, {} running, {} done, {} skipped, {} failed{}\n", whose, c.queued, c.running,
                  c.done, c.skipped, c.failed, c.cancelled ? fmt::format(" ({} of them cancelled)", c.cancelled) : "");
  if (jobs.empty()) return out;
  out += fmt::format("{:>6}  {:<8}  {:<34}  {:>8}  {}\n", "id", "state", "what", "attempts", "who / why");
  for (const auto& j : jobs)
    out += fmt::format("{:>6}  {:<8}  {:<34}  {:>8}  {}\n", j.id, j.state, common::printable(job_what(j)),
                       fmt::format("{}/{}", j.attempts, j.max_attempts), common::printable(status_of(j)));
  if (truncated) out += fmt::format("… more jobs than these {} match: --limit 0 lists them all\n", jobs.size());
  return out;
}

std::string render_jobs_json(const std::vector<db::JobRow>& jobs, const db::JobCounts& c, bool truncated) {
  json out;
  out["truncated"] = truncated;
  out["counts"] = {{"queued", c.queued},   {"running", c.running}, {"done", c.done},
                   {"skipped", c.skipped}, {"failed", c.failed},   {"cancelled", c.cancelled}};
  out["jobs"] = json::array();
  for (const auto& j : jobs) {
    auto p = payload_of(j);
    json row = {{"id", j.id},
                {"project", j.project},
                {"kind", j.kind},
                {"state", j.state},
                {"what", job_what(j)},
                {"sha", p.value("sha", "")},
                {"suite", p.value("suite", "")},
                {"attempts", j.attempts},
                {"max_attempts", j.max_attempts},
                {"priority", j.priority},
                {"owner", j.owner.empty() ? json(nullptr) : json(j.owner)},
                {"running_seconds", j.state == db::kJobRunning ? json(j.running_seconds) : json(nullptr)},
                {"lease_left_seconds", j.lease_left_seconds ? json(*j.lease_left_seconds) : json(nullptr)},
                {"started_at", j.started_at.empty() ? json(nullptr) : json(j.started_at)},
                {"finished_at", j.finished_at.empty() ? json(nullptr) : json(j.finished_at)},
                {"error", j.error.empty() ? json(nullptr) : json(j.error)},
                {"result", j.result_json.empty() ? json(nullptr) : json::parse(j.result_json, nullptr, false)},
                {"depends_on", j.depends_on ? json(*j.depends_on) : json(nullptr)},
                {"sweep_id", j.sweep_id ? json(*j.sweep_id) : json(nullptr)}};
    out["jobs"].push_back(row);
  }
  return common::json_text(out, 2) + "\n";
}

}  // namespace sweep
