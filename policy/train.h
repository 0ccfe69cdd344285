#pragma once
// `driftwatch train`: a policy for one compiler build and a training suite.
// 1. Behaviour cloning of the compiler's default decisions (warm start).
// 2. REINFORCE with a per-module moving-average baseline (as MLGO), the
//    reward being MLGO's per-module .text reduction against the default
//    heuristic: 1 - (policy + 0.01) / (default + 0.01).
// Deterministic for a seed; checkpoints after every iteration.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "policy/compiler.h"
#include "policy/model.h"

namespace policy {

struct TrainModule {
  std::string name;
  std::filesystem::path bitcode;
};

struct TrainProgress {
  std::string phase;  ///< "collect", "clone", "reinforce"
  int step = 0, steps = 0;
  double mean_reward = 0;   ///< of the sampled compiles this iteration
  double uplift = 0;        ///< geometric-mean .text reduction of the greedy policy, last evaluated
  double eta_seconds = 0;
};

struct TrainOptions {
  std::vector<TrainModule> modules;
  CompilerInvocation compiler;
  std::function<common::Result<std::int64_t>(const std::filesystem::path&)> measure_text;
  std::filesystem::path work_dir;  ///< scratch objects, FIFOs, checkpoints
  std::uint64_t seed = 1;
  int clone_epochs = 300;
  double label_smoothing = 0.1;  ///< of the cloning targets: the policy keeps exploring
  int iterations = 30;   ///< REINFORCE iterations
  int eval_every = 5;    ///< greedy evaluation (and best-model choice) every N iterations
  int jobs = 2;
  double learning_rate = 3e-3;
  bool resume = false;   ///< continue from work_dir's checkpoint
  std::optional<std::filesystem::path> warm_start;  ///< start from this policy instead of cloning
  PolicyMetadata metadata;  ///< name, compiler, corpus; features and normalization are filled in
  std::function<void(const TrainProgress&)> progress;
};

struct TrainResult {
  PolicyModel model;
  double uplift = 0;       ///< geometric-mean .text reduction on the training modules
  double total_uplift = 0; ///< reduction of the summed .text
  int modules = 0, skipped = 0;
};

common::Result<TrainResult> train(const TrainOptions& options);

}  // namespace policy
