#pragma once
// `driftwatch train`: a policy for one compiler build and a training suite.
// 1. Behaviour cloning of the compiler's default decisions (warm start).
// 2. Per-module greedy search for smaller objects (decisions flipped one at a
//    time, kept when .text shrinks), then imitation of the searched decisions,
//    as ml-compiler-opt's inlining-Oz-v1.2.
// 3. REINFORCE with a per-module moving-average baseline (as MLGO), the
//    reward being MLGO's per-module .text reduction against the default
//    heuristic: 1 - (policy + 0.01) / (default + 0.01).
// 4. With validation modules: the best checkpoint is chosen on them, and a
//    margin by which the policy must beat the compiler's default decision
//    before departing from it (code unlike the training suite keeps the
//    default where the model is unsure).
// Deterministic for a seed; checkpoints after every searched module and
// every REINFORCE iteration. A step whose loss or weights stop being finite
// numbers (or a cloning loss that explodes) stops training with an error
// before it is checkpointed. callee_basic_block_count is never a model input:
// LLVM 19 overwrites it when the compiler sends its default decision, which
// a policy with a margin needs.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "policy/compiler.h"
#include "policy/gate.h"
#include "policy/model.h"

namespace policy {

struct TrainModule {
  std::string name;
  std::filesystem::path bitcode;
  /// The module's own -cc1 line (an imported corpus, with a recipe whose
  /// compiler takes one), as evaluation compiles it; empty: the recipe's line.
  std::vector<std::string> cc1_args;
};

struct TrainProgress {
  std::string phase;  ///< "collect", "clone", "search", "imitate", "reinforce"
  int step = 0, steps = 0;
  double mean_reward = 0;   ///< of the compiles this step (clone/imitate: minus the loss)
  double uplift = 0;        ///< geometric-mean .text reduction: of the greedy policy, last evaluated (search: found so far)
  double eta_seconds = 0;
  double accuracy = 0;      ///< clone/imitate: share of the targets the greedy policy answers
  double no_worse = 0;      ///< share of modules the greedy policy, last evaluated, left no larger
  std::string rule;         ///< gate: the rule measured
  int compiled = 0;         ///< gate: of the step's modules, those the rule opens on (the others need no compile)
  int modules = 0;          ///< gate: the step's modules
  bool kept = false;        ///< gate: figures an interrupted run kept, read back (nothing compiled)
};

struct TrainOptions {
  std::vector<TrainModule> modules;
  /// Modules of other packages that training never learns from: the best
  /// checkpoint and the margin are chosen on them. Empty: chosen on the
  /// training modules, and no margin.
  std::vector<TrainModule> validation;
  /// Margins tried on the validation modules, over the residual margin (the
  /// model as trained, margin 0 or the residual one, is always a candidate).
  std::vector<double> margins = {0.5, 1, 2, 3, 5, 8};
  /// The margin chosen is the one with the best geometric-mean uplift on
  /// validation among those leaving at least this share of its modules no larger.
  double no_worse_bar = 0.95;
  CompilerInvocation compiler;
  std::function<common::Result<std::int64_t>(const std::filesystem::path&)> measure_text;
  std::filesystem::path work_dir;  ///< scratch objects, FIFOs, checkpoints
  std::uint64_t seed = 1;
  int clone_epochs = 10;            ///< minibatch epochs: the clone only ranks the search's candidates
  double label_smoothing = 0.1;     ///< of the cloning targets
  int search_trials = 24;           ///< flips tried per module, at most
  double search_budget = 4000;      ///< trials × decisions per module: big modules get fewer trials
  /// Bytes of .text a flip must save to be kept: 1 keeps any shrink; more
  /// keeps only flips whose gain is larger than a register allocation or an
  /// alignment alone can make, and imitation then weighs the default's
  /// answer where a flip saved less as verified (departing does not pay).
  /// bench/flip_gains.py shows the flips by bytes saved.
  std::int64_t search_min_gain = 1;
  int imitation_epochs = 150;       ///< long: a policy that misses the default's answers loses modules
  double flip_weight = 4;           ///< imitation weight of a searched flip against a default answer
  double verified_weight = 4;       ///< imitation weight of a default answer whose flip the search rejected
  int iterations = 12;              ///< REINFORCE iterations, one sampled compile per module each
  int eval_every = 2;               ///< greedy evaluation (and best-model choice) every N iterations
  int jobs = 2;
  double learning_rate = 3e-3;      ///< Adam, for cloning and imitation
  double weight_decay = 0;          ///< Adam's L2 penalty in imitation: a smaller model of the flips generalizes
  /// > 0: a residual policy. Imitation starts from fresh weights and trains
  /// the score with the compiler's default side added at this many logit
  /// units, as it is served with this margin: the model learns only where to
  /// depart from the default (the default's own boundary it need not learn
  /// again, and cannot overfit). 0: the model imitates every decision alone.
  double residual_margin = 0;
  double rl_learning_rate = 1e-3;   ///< Adam, for REINFORCE
  /// Reward subtracted from a module that ends up larger than the default: a
  /// Lagrangian-style price on the "no worse on 90% of modules" constraint,
  /// which the mean reward alone ignores (small losses barely move it).
  double loss_penalty = 0.01;
  bool resume = false;   ///< continue from work_dir's checkpoint (refused if another run left it)
  /// Continue from work_dir's checkpoint when the same run left it, else
  /// start afresh (retrain, which cannot ask the user).
  bool resume_if_same = false;
  std::optional<std::filesystem::path> warm_start;  ///< start from this policy instead of cloning
  /// Retrain: a warm-start policy whose features are not the ones this
  /// compiler sends (an upstream rename: what the features rule retrains
  /// for) is not an error; training starts afresh instead.
  bool warm_start_if_same_features = false;
  /// Set: no network is trained. Every rule of this grid (gate.h) is
  /// measured on the training modules; those that meet the bar there (at
  /// least `no_worse_bar` of the modules no larger, the total no larger, a
  /// positive geometric mean) are measured on the validation modules, and
  /// the best there that meets it too is chosen; none: the policy keeps the
  /// default everywhere. Each rule's figures are kept in the work directory,
  /// so a resumed run measures only what is left.
  std::optional<GateGrid> gate;
  PolicyMetadata metadata;  ///< name, compiler, corpus; features and normalization are filled in
  std::function<void(const TrainProgress&)> progress;
};

struct TrainResult {
  PolicyModel model;
  /// The figures are of the validation modules (at the chosen margin) when
  /// there were any, else of the training modules.
  double uplift = 0;       ///< geometric-mean .text reduction
  double total_uplift = 0; ///< reduction of the summed .text
  int wins = 0, ties = 0, losses = 0;
  int modules = 0, skipped = 0;
  bool on_validation = false;
  bool warm_started = false;  ///< from `warm_start` (false: afresh, as warm_start_if_same_features allows)
};

common::Result<TrainResult> train(const TrainOptions& options);

/// True when `options.work_dir` holds the state of this very run (same
/// modules, compiler and options), so that training would resume it.
bool can_resume(const TrainOptions& options);

}  // namespace policy
