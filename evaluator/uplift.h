#pragma once
// The uplift maths of an evaluation: pure functions on sizes, unit-tested
// without I/O. Ratio = learned / default per module (lower is better);
// uplift = 1 - geometric mean of the ratios (MLGO's figure), so +1% means
// the learned heuristic makes code 1% smaller than the default on average.
#include <cstdint>
#include <string>
#include <vector>

namespace evaluator {

struct ModuleSizes {
  std::string name;
  std::int64_t default_bytes = 0;
  std::int64_t learned_bytes = 0;
  double ratio() const { return (learned_bytes + 0.01) / (default_bytes + 0.01); }
};

struct UpliftSummary {
  int modules = 0;  ///< modules measured under both heuristics
  double geomean_ratio = 1;
  double uplift = 0;  ///< 1 - geomean_ratio
  std::int64_t total_default = 0, total_learned = 0;
  double total_uplift = 0;  ///< 1 - total_learned / total_default
  int wins = 0, ties = 0, losses = 0;
  double no_worse_share = 0;  ///< (wins + ties) / modules: "matches or beats the default on N%"
  std::vector<ModuleSizes> worst;  ///< largest ratios above 1, worst first
};

/// Summarizes modules; `worst_count` caps the list of worst regressions.
UpliftSummary summarize(const std::vector<ModuleSizes>& modules, int worst_count = 5);

}  // namespace evaluator
