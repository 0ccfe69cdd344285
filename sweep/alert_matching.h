#pragma once
// Which open alerts a sweep's findings narrow or supersede: pure, on the
// alerts' and findings' places on first-parent history. A change an earlier
// sweep left as a range (bisection off or capped, broken builds between) is
// pinned by a later one; the open alert must follow, not stay open beside a
// new one for ever.
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "db/drift.h"

namespace sweep {

/// Where a finding lies: its culprit, or range_first .. first_bad, or (pinned
/// to nothing) first_bad alone; with the series and kind it belongs to.
struct FoundAt {
  std::string kind, policy_hash, suite_hash, recipe_hash, fingerprint;
  std::string culprit, range_first, first_bad;
};

/// An alert's identity: the same change (`where`: its pin or range) of the
/// same series is the same alert, whenever and however often it is found.
std::string alert_fingerprint(const std::string& project, const std::string& policy_hash, const std::string& suite_hash,
                              const std::string& recipe_hash, const std::string& where);

/// Whether the change `where` of a compiler-wide finding already has an
/// alert of its kind and recipe in another series, in any state: under
/// another suite (for a broken build or a changed feature set, the same
/// whatever the suite), or of another policy (for a broken build, which no
/// policy changes). It was opened under the first suite, and the policy, that
/// found it: a suite list reordered, a suite dropped or rebuilt, a policy
/// promoted must not open it again (their end resolved it, or a person did).
bool alerted_in_another_series(const std::vector<db::AlertView>& alerts, const std::string& project,
                               const FoundAt& found, const std::string& where);

/// An alert of the series of `policy_hash`, `suite_hash` and `recipe_hash`; one
/// whose recipe was not recorded (opened before driftwatch recorded it) is of
/// every recipe's.
bool of_series(const db::AlertView& v, const std::string& policy_hash, const std::string& suite_hash,
               const std::string& recipe_hash);

/// The open alert of the same kind and series, left as a range (or pinned to
/// nothing, with the finding's first_bad), whose range strictly holds the finding's and whose own change this analysis
/// no longer finds (its fingerprint is not in `found_now`: a range that holds another, separate change is still its
/// own); none when the finding is already alerted.
std::optional<db::Id> narrowed_alert(const std::vector<db::AlertView>& open, const FoundAt& found,
                                     const std::set<std::string>& found_now,
                                     const std::map<std::string, std::size_t>& position);

/// Open range alerts of the series (policy, suite, recipe) that no finding of this
/// analysis repeats but whose range holds one of them: bisection has pinned
/// what lay there (perhaps as another kind), so they are superseded.
std::vector<db::Id> superseded_alerts(const std::vector<db::AlertView>& open, const std::string& policy_hash,
                                      const std::string& suite_hash, const std::string& recipe_hash,
                                      const std::vector<FoundAt>& found,
                                      const std::map<std::string, std::size_t>& position);

}  // namespace sweep
