#pragma once
// What training needs from compiling each module: its default size and the
// default heuristic's decisions with clean features. No LibTorch here.
#include <cstdint>
#include <string>
#include <vector>

#include "policy/train.h"

namespace policy {

struct ModuleData {
  std::string name;
  std::filesystem::path bitcode;
  std::int64_t default_text = 0;
  std::vector<std::vector<double>> features;  ///< per decision, raw, in feature_names order
  std::vector<int> default_decisions;
};

struct TrainingData {
  std::vector<std::string> feature_names;  ///< as the compiler sends them (without inlining_default)
  std::vector<ModuleData> modules;
  std::vector<std::string> skipped;  ///< "module: why"
};

/// For every module: compile with the default heuristic (size), with the
/// default decision echoed under -inliner-interactive-include-default (the
/// decisions), and again replaying those decisions without include-default
/// (clean features: LLVM 19 corrupts callee_basic_block_count otherwise).
common::Result<TrainingData> collect_training_data(const TrainOptions& options, DefaultDecisionSlot slot);

/// Runs f(i) for i in [0, n) on `jobs` threads; f must be thread-safe.
void parallel_for(int n, int jobs, const std::function<void(int)>& f);

/// Geometric mean of ratios, and 1 - it (the uplift).
double geomean(const std::vector<double>& ratios);

}  // namespace policy
