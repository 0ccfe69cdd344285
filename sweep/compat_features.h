#pragma once
// What a stored feature-compatibility report (policy::CompatReport::to_json)
// says of the policy's features, read the same way by drift alerts, the
// report and decide. Pure.
#include <string>
#include <vector>

namespace sweep {

/// Both lists sorted, each name once.
struct CompatFeatures {
  /// Policy features the compiler no longer sends, then those it sends
  /// unusable (reshaped, or LLVM 19's include-default bug) as "name (unusable)".
  std::vector<std::string> lost;
  std::vector<std::string> added;  ///< sent by the compiler, unknown to the policy
};

/// An unreadable or "unknown" report reads as nothing lost and nothing added.
CompatFeatures compat_features(const std::string& compat_json);

}  // namespace sweep
