#pragma once
// The frozen policy answering the compiler: features bound by name, inputs
// normalized as in training, decision = "inline" when its score is positive.
#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "policy/feature_binding.h"
#include "policy/model.h"
#include "policy/runner.h"

namespace policy {

/// What a sampling runner did, for training: per decision the normalized
/// inputs (in the model's feature order) and the action taken.
struct TrainingTrace {
  std::vector<float> inputs;  ///< decisions × features, row-major
  std::vector<int> actions;
  /// The margin term added to each decision's score (0 without a margin):
  /// the gradient of a sampled action's probability goes through it.
  std::vector<float> offsets;
};

struct PolicyRunnerOptions {
  /// Header features not to trust.
  std::vector<std::string> unusable;
  /// When the compiler also sends its default decision, LLVM 19 writes it over
  /// callee_basic_block_count (see llvm-ml-protocol.md): distrust that feature then.
  bool distrust_include_default_slot = true;
  /// Where this compiler build puts its default decision (detect_default_slot):
  /// needed by a policy with a margin, which defers to that decision.
  std::optional<DefaultDecisionSlot> default_slot;
  /// Training: sample the decision from sigmoid(score) with this generator
  /// and record into `trace`. Null: decide greedily (frozen use).
  std::mt19937_64* sampler = nullptr;
  TrainingTrace* trace = nullptr;
};

/// `model` must outlive the runner and is used from one thread only
/// (copy the PolicyModel per thread). `report`, if given, receives the
/// binding's compatibility report at begin().
std::unique_ptr<Runner> make_policy_runner(const PolicyModel& model, CompatReport* report = nullptr,
                                           PolicyRunnerOptions options = {});

/// The same, owning its own copy of `model`: for a compile on another
/// thread (the network's input buffer is per model).
std::unique_ptr<Runner> make_policy_runner_copy(const PolicyModel& model, CompatReport* report = nullptr,
                                                PolicyRunnerOptions options = {});

/// The model's normalized input for one observation under a binding.
void normalize_inputs(const PolicyMetadata& meta, const FeatureBinding& binding,
                      const std::vector<std::vector<double>>& features, float* out);

}  // namespace policy
