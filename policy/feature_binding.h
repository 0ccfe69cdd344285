#pragma once
// Binding a frozen policy's features to what a compiler build sends, by name.
// Feature sets grow and shrink between compiler versions; the binding says
// what was filled in and what was ignored, and that is drift too.
#include <string>
#include <vector>

#include "policy/channel_protocol.h"

namespace policy {

struct CompatReport {
  /// False until a compile's header was bound: nothing is known then, which
  /// must not read as "all features bound".
  bool known = false;
  std::vector<std::string> missing;    ///< the policy knows them, the compiler no longer sends them: filled with the training mean
  std::vector<std::string> ignored;    ///< the compiler sends them, the policy does not know them
  /// Sent but unusable (LLVM 19's include-default bug, or reshaped to more
  /// than one element): filled with the training mean.
  std::vector<std::string> corrupted;
  /// Of `ignored`, those known to hold something else (LLVM 19 writes the
  /// default decision over callee_basic_block_count): not new features.
  std::vector<std::string> distrusted;
  int bound = 0;                       ///< policy features the compiler feeds
  bool compatible() const { return missing.empty() && corrupted.empty(); }
  /// At least half of the policy's features are fed; otherwise the policy
  /// was made for another feature set and must not run.
  bool usable() const { return bound * 2 >= bound + static_cast<int>(missing.size() + corrupted.size()); }
  /// {"state": "known", "bound": N, "missing": [...], "ignored": [...], "corrupted": [...], "distrusted": [...]},
  /// or {"state": "unknown"}.
  std::string to_json() const;
  /// "2 features filled with the training mean (a, b); 1 ignored (c)", "all features bound" or "unknown (…)".
  std::string summary() const;
};

/// The report over several compiles of one policy: a feature missing (or
/// corrupted, or ignored) in any of them is so in the merge.
CompatReport merge(const CompatReport& a, const CompatReport& b);

struct FeatureBinding {
  /// For each policy feature, its index in the compiler's header, or -1 (missing).
  std::vector<int> source;
  CompatReport report;
};

/// Binds `policy_features` to `header`. `unusable` names header features not
/// to be trusted (e.g. callee_basic_block_count under LLVM 19's include-default bug).
FeatureBinding bind_features(const std::vector<std::string>& policy_features, const ChannelHeader& header,
                             const std::vector<std::string>& unusable = {});

}  // namespace policy
