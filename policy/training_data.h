#pragma once
// What training needs from compiling each module: its default size and the
// default heuristic's decisions with clean features; and compiling every
// module under a policy (greedy or sampled). No LibTorch here.
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "policy/compiler.h"
#include "policy/policy_runner.h"
#include "policy/train.h"

namespace policy {

struct ModuleData {
  std::string name;
  std::filesystem::path bitcode;
  std::int64_t default_text = 0;  ///< with the default heuristic, no ML channel: what rewards compare against
  std::int64_t echo_text = 0;     ///< the default's decisions answered over the channel (can differ: the ML
                                  ///< advisor is not the default advisor in every respect)
  std::vector<std::vector<double>> features;  ///< per decision, raw, in feature_names order
  std::vector<int> default_decisions;
  std::vector<std::string> cc1_args;  ///< TrainModule::cc1_args
};

/// How training compiles a module: as evaluation does, with its own -cc1
/// line when it has one, else with the recipe's line.
CompilerInvocation compiler_for(const TrainOptions& o, const std::vector<std::string>& cc1_args);

/// Runs `attempt`, one compile of `module` for training, and once more when
/// the machine failed it (a timeout under load, the OOM killer, a broken
/// channel, a full disk): a flip rejected or a rollout lost because of the
/// load would make the same seed give another policy. Throws common::Fatal
/// when the second attempt fails for a reason only the machine causes (no
/// binary, a full disk); a second hang or kill is the compile's result.
CompileOutcome compile_reproducibly(const std::string& module, const std::function<CompileOutcome()>& attempt);

/// A compile of `module` (its `bitcode`) through compile_reproducibly whose
/// answers `log` records; each attempt starts from a fresh log and a fresh
/// `inner` runner.
CompileOutcome compile_logged(const std::string& module, const std::filesystem::path& bitcode,
                              const CompilerInvocation& cc, const std::filesystem::path& obj,
                              const std::filesystem::path& dir, const std::function<std::unique_ptr<Runner>()>& inner,
                              DecisionLog& log, bool include_default);

/// The first error of a parallel_for, as one line naming how many failed;
/// "" when none did.
std::string first_error(const std::vector<std::string>& errors);

struct TrainingData {
  std::vector<std::string> feature_names;  ///< as the compiler sends them (without inlining_default)
  std::vector<ModuleData> modules;
  std::vector<std::string> skipped;  ///< "module: why"
  /// Columns of the compiler's rows that drop_feature removed, in removal order:
  /// rows logged later (the search's) are cut the same way with drop_columns.
  std::vector<std::size_t> dropped_columns;
};

/// For every module: compile with the default heuristic (size), with the
/// default decision echoed under -inliner-interactive-include-default (the
/// decisions), and again replaying those decisions without include-default
/// (clean features: LLVM 19 corrupts callee_basic_block_count otherwise).
/// Saved in the work directory; a resumed run with the same compiler and
/// modules reads it back instead.
common::Result<TrainingData> collect_training_data(const TrainOptions& options, DefaultDecisionSlot slot);

/// Runs f(i) for i in [0, n) on `jobs` threads; f must be thread-safe.
/// Returns, per i, what f(i) threw ("" when it returned): an exception
/// escaping a thread would end the process, so it is that task's error.
[[nodiscard]] std::vector<std::string> parallel_for(int n, int jobs, const std::function<void(int)>& f);

/// Appends the model inputs of raw feature rows (in metadata order) to `out`.
void append_normalized(const PolicyMetadata& meta, const std::vector<std::vector<double>>& rows,
                       std::vector<float>& out);

/// Indices by decreasing cost (stable): the schedule for parallel_for, so no
/// long compile is left alone at the end. Results never depend on the order.
std::vector<int> largest_first(const std::vector<std::uintmax_t>& cost);
/// Per module, its number of default decisions (a proxy for compile time).
std::vector<std::uintmax_t> decision_counts(const TrainingData& data);

/// Geometric mean of ratios.
double geomean(const std::vector<double>& ratios);

/// One compile of a module under a policy: greedy, or sampled from `sampler`
/// with the inputs and actions recorded (REINFORCE).
struct Rollout {
  bool ok = false;
  std::int64_t text = 0;
  TrainingTrace trace;
};
/// `slot` is needed by a policy with a margin (it defers to the default decision).
Rollout rollout(const PolicyModel& model, const ModuleData& m, const TrainOptions& o, std::mt19937_64* sampler,
                const std::filesystem::path& dir, std::optional<DefaultDecisionSlot> slot = std::nullopt);

/// .text of every module under a policy against its default.
struct Outcome {
  std::vector<std::int64_t> text;  ///< per module; a failed compile has the default's size here
  double uplift = 0;               ///< 1 - geometric mean of the ratios (zero-size modules left out)
  double total_uplift = 0;         ///< 1 - summed policy .text / summed default .text
  /// A failed compile is a loss, not a tie: counted as a tie it would raise
  /// the "no worse" share that picks the best model.
  int wins = 0, ties = 0, losses = 0;
  int failed = 0;  ///< of the losses, compiles that failed
  double no_worse() const { return text.empty() ? 1.0 : double(wins + ties) / static_cast<double>(text.size()); }
};
/// `failed[i]` marks a module whose compile failed (empty: none did).
Outcome summarize(const TrainingData& data, std::vector<std::int64_t> text, const std::vector<bool>& failed = {});
/// Compiles every module with the greedy policy (objects under `o.work_dir/eval`),
/// except those whose size under it is `known` (known[i] set): a caller that
/// can prove the compile's result, as a gate that never opens on a module.
Outcome evaluate(const PolicyModel& model, const TrainingData& data, const TrainOptions& o,
                 std::optional<DefaultDecisionSlot> slot = std::nullopt,
                 const std::vector<std::optional<std::int64_t>>& known = {});

/// Removes a feature from collected data (names and every row).
void drop_feature(TrainingData& data, const std::string& name);
/// Removes from rows in the compiler's order the columns drop_feature removed
/// from `data`; rows already of the model's width are left alone.
void drop_columns(const TrainingData& data, std::vector<std::vector<double>>& rows);

}  // namespace policy
