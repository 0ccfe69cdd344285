#pragma once
// What a change did to the suite's modules, from the per-module sizes of the
// evaluations just before and just after it: which modules flipped between
// win and loss, whose ratio moved most, and the totals. Also whether the
// compiler's feature set changed across it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "evaluator/uplift.h"

namespace reports {

/// One module's ratio (learned / default, evaluator::ModuleSizes::ratio) and sizes on both sides.
struct ModuleMove {
  std::string name;
  double ratio_before = 1;
  double ratio_after = 1;
  std::int64_t default_before = 0, default_after = 0, learned_before = 0, learned_after = 0;
  double delta() const { return ratio_after - ratio_before; }  ///< > 0: the learned heuristic got worse here
  /// Bytes moved under both heuristics: what a size change (the ratio held) is ranked by.
  std::int64_t bytes_moved() const;
  /// "a.c: .text default 100 → 90 B, learned 95 → 93 B (learned/default
  /// 0.9500 → 1.0333)": bytes always, the ratio only where it moved.
  std::string text() const;
};

/// Bytes of the whole suite under each heuristic.
struct SuiteTotals {
  std::int64_t default_bytes = 0;
  std::int64_t learned_bytes = 0;
};

/// The modules behind one change. Win: learned < default; loss: learned > default.
struct ModuleChanges {
  std::vector<std::string> win_to_loss;  ///< a win before, a loss after (a tie on either side is neither), by name
  std::vector<std::string> loss_to_win;  ///< a loss before, a win after, by name
  std::vector<ModuleMove>
      largest_moves;                     ///< modules with a ratio on both sides that moved: largest |delta| first, then most bytes moved, then by name; at most top_k
  std::vector<std::string> appeared;     ///< only after, by name
  std::vector<std::string> disappeared;  ///< only before, by name
  SuiteTotals before, after;             ///< over every module of each side
};

/// Compares the modules before and after a change; error when a side names a module twice.
common::Result<ModuleChanges> module_changes(const std::vector<evaluator::ModuleSizes>& before,
                                             const std::vector<evaluator::ModuleSizes>& after, std::size_t top_k);

/// The moves of a size change (its alert lists bytes): most bytes moved
/// under both heuristics first, then as given; at most top_k.
std::vector<ModuleMove> by_bytes_moved(std::vector<ModuleMove> moves, std::size_t top_k);

/// Feature names the compiler sends on each side, compared as sets.
struct FeatureSetChange {
  std::vector<std::string> added;                                      ///< sent after, not before, sorted
  std::vector<std::string> removed;                                    ///< sent before, not after, sorted
  bool changed() const { return !added.empty() || !removed.empty(); }  ///< order alone is no change
};

/// The features added and removed between two compiler builds (binding is by name, so order is ignored).
FeatureSetChange feature_set_changed(const std::vector<std::string>& before, const std::vector<std::string>& after);

}  // namespace reports
