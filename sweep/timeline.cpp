#include "sweep/timeline.h"

#include <fmt/core.h>

#include <algorithm>
#include <iterator>
#include <tuple>

#include "common/hash.h"
#include "reports/drift.h"
#include "tracker/sampling.h"

namespace sweep {

namespace {
constexpr const char* kToolchainPrefix = "toolchain-";
}

std::string toolchain_id(const std::filesystem::path& dir) {
  auto normal = std::filesystem::absolute(dir).lexically_normal();
  // "nightly/" and "nightly" are one directory: the same series.
  if (!normal.has_filename() && normal.has_parent_path()) normal = normal.parent_path();
  return kToolchainPrefix + common::sha256_hex(normal.string()).substr(0, 30);
}

bool is_toolchain_id(const std::string& sha) { return sha.rfind(kToolchainPrefix, 0) == 0; }

std::string toolchains_location(const std::string& recipe_name) { return "toolchains:" + recipe_name; }

std::vector<Toolchain> toolchains_in_order(const ProjectFile& p) {
  auto list = p.toolchains;
  std::stable_sort(list.begin(), list.end(), [](const Toolchain& a, const Toolchain& b) {
    return std::tie(a.date, a.label) < std::tie(b.date, b.label);
  });
  return list;
}

std::vector<Toolchain> undated_left_out(const ProjectFile& p) {
  bool any_dated = std::any_of(p.toolchains.begin(), p.toolchains.end(), [](const auto& t) { return !t.date.empty(); });
  std::vector<Toolchain> out;
  if (any_dated)
    std::copy_if(p.toolchains.begin(), p.toolchains.end(), std::back_inserter(out),
                 [](const auto& t) { return t.date.empty(); });
  return out;
}

std::vector<tracker::CommitInfo> toolchain_history(const ProjectFile& p) {
  // Dated ones by date; with no dates at all, as the file lists them (a
  // label such as 19.1.10 does not sort as a version).
  bool any_dated = std::any_of(p.toolchains.begin(), p.toolchains.end(), [](const auto& t) { return !t.date.empty(); });
  std::vector<tracker::CommitInfo> out;
  for (const auto& t : any_dated ? toolchains_in_order(p) : p.toolchains) {
    if (any_dated && t.date.empty()) continue;  // undated_left_out
    tracker::CommitInfo c;
    c.sha = toolchain_id(t.dir);
    c.subject = t.label;
    // The project file was checked when it was read: its dates parse.
    if (!t.date.empty()) c.time = tracker::parse_date(t.date).take();
    out.push_back(std::move(c));
  }
  return out;
}

std::string checkin_name(const std::string& sha, const std::string& label) {
  if (is_toolchain_id(sha) && !label.empty()) return "toolchain " + label;
  return sha.substr(0, 12);
}

std::map<std::string, std::string> toolchain_labels(const ProjectFile& p) {
  std::map<std::string, std::string> out;
  for (const auto& t : p.toolchains) out[toolchain_id(t.dir)] = t.label;
  return out;
}

std::string change_place_text(const ChangePlace& c) {
  // A toolchain's label is its subject, and its date the label's business.
  if (!c.culprit.empty() && is_toolchain_id(c.culprit)) return checkin_name(c.culprit, c.culprit_subject);
  if (!c.culprit.empty())
    return c.culprit.substr(0, 12) + " " + tracker::format_date(c.culprit_time) + " " + c.culprit_subject;
  // A spread change has no one culprit: it is the range, not "one of" it.
  if (!c.range_first.empty())
    return (c.spread ? "" : "one of ") + checkin_name(c.range_first, c.range_first_label) + ".." +
           checkin_name(c.first_bad, c.first_bad_label) + " (" + reports::range_note(c.spread, c.carried) + ")";
  return checkin_name(c.first_bad, c.first_bad_label) + " (" + reports::kNotPinnedNote + ")";
}

std::string broken_samples_text(int n) {
  // One broken sample is the alert: "stayed" would claim more than was seen.
  if (n <= 1) return {};
  return fmt::format(" and stayed broken for {} sampled check-ins in a row", n);
}

std::string failing_modules_text(const std::string& kind, int n, const std::string& suite) {
  if (kind == "compiler-failing")
    return fmt::format(
        "the compiler fails on {} more module{} of {} with its default heuristic (a crash, or a hang also when "
        "compiled alone; left out of the uplift)",
        n, n == 1 ? "" : "s", suite);
  return fmt::format(
      "{} more module{} of {} fail{} to compile with the policy (a crash or a timeout; or a compile that never asked "
      "it; left out of the uplift)",
      n, n == 1 ? "" : "s", suite, n == 1 ? "s" : "");
}

bool recovers(const std::string& kind) {
  return kind == "build-broken" || kind == "policy-unusable" || kind == "modules-failing" || kind == "compiler-failing";
}

std::string recovered_text(const std::string& kind, const std::string& sha, const std::string& label, int modules,
                           int taken) {
  if (sha.empty() || !recovers(kind)) return {};
  auto at = checkin_name(sha, label);
  if (kind == "build-broken") return "; it builds again at " + at;
  if (kind == "policy-unusable") return "; it runs again at " + at;
  // "They all compile again" would be untrue beside a later alert of some of them.
  if (taken > 0 && taken < modules)
    return fmt::format("; at {} all compile again but {} that fail{} again from a later check-in on (a later alert's)",
                       at, taken, taken == 1 ? "s" : "");
  return (modules == 1 ? "; it compiles again at " : "; they all compile again at ") + at;
}

}  // namespace sweep
