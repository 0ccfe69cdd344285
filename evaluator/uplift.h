#pragma once
// The uplift maths of an evaluation: pure functions on sizes, unit-tested
// without I/O. Ratio = learned / default per module (lower is better);
// uplift = 1 - geometric mean of the ratios (MLGO's figure), so +1% means
// the learned heuristic makes code 1% smaller than the default on average.
//
// Zero-size modules (no .text under a heuristic: a TU of only data or
// declarations) have no meaningful ratio, and MLGO's +0.01 smoothing gives
// them an absurd one (0 → 10 bytes is ×1001, enough to move a 97-module suite
// by ~8%). So they stay out of the geometric mean: 0 under both is a tie, 0
// under one only is a win or a loss; all of them count in wins/ties/losses and
// in the totals, and `zero_size` says how many there were.
#include <cstdint>
#include <string>
#include <vector>

namespace evaluator {

struct ModuleSizes {
  std::string name;
  std::int64_t default_bytes = 0;
  std::int64_t learned_bytes = 0;
  /// Both sizes non-zero: the module has a ratio in the geometric mean.
  bool in_geomean() const { return default_bytes > 0 && learned_bytes > 0; }
  /// learned / default; 1 for 0 and 0, infinity for a default of 0 against more.
  double ratio() const;
};

struct UpliftSummary {
  int modules = 0;  ///< modules measured under both heuristics
  double geomean_ratio = 1;  ///< over the modules in_geomean(); 1 when there are none
  double uplift = 0;  ///< 1 - geomean_ratio
  std::int64_t total_default = 0, total_learned = 0;
  double total_uplift = 0;  ///< 1 - total_learned / total_default
  int wins = 0, ties = 0, losses = 0;
  int zero_size = 0;          ///< modules with 0 bytes under either heuristic: out of the geometric mean
  double no_worse_share = 0;  ///< (wins + ties) / modules: "matches or beats the default on N%"
  std::vector<ModuleSizes> worst;  ///< largest ratios above 1, worst first
};

/// Summarizes modules; `worst_count` caps the list of worst regressions.
UpliftSummary summarize(const std::vector<ModuleSizes>& modules, int worst_count = 5);

/// A module's package: its name up to the first '/' (the default suites name
/// modules <package>/<path in the package>; a project's own suite, its
/// top-level directories), or "." for a module at the top level, so that a
/// project of flat sources is not broken down file by file.
std::string package_of(const std::string& module);

struct PackageSummary {
  std::string package;
  UpliftSummary summary;
};
/// summarize() per package, in package-name order: where a suite-wide figure
/// comes from (one package can carry a suite's loss).
std::vector<PackageSummary> summarize_by_package(const std::vector<ModuleSizes>& modules, int worst_count = 0);

}  // namespace evaluator
