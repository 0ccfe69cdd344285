#pragma once
// One evaluation: every module of a suite compiled by one compiler build
// with its default heuristic and with the learned policy serving the ML
// channel (once, where the policy took every default decision); sizes read
// from the objects; linked sizes where the suite links. Parallel across modules, deterministic in its results; one failing module
// never stops the rest.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "evaluator/object_size.h"
#include "evaluator/suite.h"
#include "evaluator/uplift.h"
#include "policy/compiler.h"
#include "policy/feature_binding.h"

namespace evaluator {

// The one table of module outcomes, as stored in the database (the
// module_results CHECK constraint lists the same names).
inline constexpr const char* kOutcomeOk = "ok";
/// The compiler exited non-zero or died of a signal, or exited 0 without
/// writing its object.
inline constexpr const char* kOutcomeCrashed = "compiler-crashed";
inline constexpr const char* kOutcomeTimeout = "timeout";
/// The compile succeeded but never opened the ML channel: the ML flags did
/// nothing, so its object says nothing about the policy.
inline constexpr const char* kOutcomeNotConsulted = "policy-not-consulted";
/// The policy refused the compiler's features (another feature set).
inline constexpr const char* kOutcomeRefused = "policy-refused";
/// The ML channel broke: FIFOs, a malformed stream, a policy that failed.
inline constexpr const char* kOutcomeChannelError = "channel-error";
/// The compiler said it succeeded and wrote an object that cannot be read.
inline constexpr const char* kOutcomeBadObject = "object-unreadable";
/// driftwatch itself failed on this module (a filesystem error, say).
inline constexpr const char* kOutcomeInternalError = "internal-error";
/// How the message of a compile the machine failed begins when it failed so
/// again, tried alone: the load that can time out or kill a compile was gone,
/// so it is the compiler's (a hang under its default heuristic, say), not
/// the machine's, and it is stored and reused as the compiler's.
inline constexpr const char* kFailedAgainAloneNote = "failed so again when compiled alone";
/// How much longer the limit of that last try is while another job runs on
/// the machine (EvaluationOptions::machine_shared).
inline constexpr int kSharedMachineTimeoutFactor = 3;
/// How the failure of an evaluation whose compiler compiled no module even
/// under its default heuristic begins: the compiler is broken, not the policy
/// (drift treats that check-in as one that did not build).
inline constexpr const char* kCompilerBrokenError = "the compiler compiles no module even without the policy";
/// The outcomes that are always the machine's doing, not the compiler's on
/// the module (HeuristicResult::machine_failure; reuse never copies them).
inline constexpr const char* kMachineOutcomes[] = {kOutcomeTimeout, kOutcomeChannelError, kOutcomeBadObject,
                                                   kOutcomeInternalError};
inline constexpr const char* kOutcomes[] = {kOutcomeOk,           kOutcomeCrashed,      kOutcomeTimeout,
                                            kOutcomeNotConsulted, kOutcomeRefused,      kOutcomeChannelError,
                                            kOutcomeBadObject,    kOutcomeInternalError};

struct HeuristicResult {
  std::string outcome = kOutcomeOk;
  std::string message;  ///< the compiler's, when not ok
  ObjectSizes sizes;
  double seconds = 0;
  std::size_t decisions = 0;
  bool consulted = false;  ///< learned: the compiler opened the ML channel and sent its header
  /// Default: not compiled. The learned compile took the default's decision
  /// at every call site, so its object is the default's (EvaluationOptions::default_slot).
  bool shared = false;
  bool ok() const { return outcome == kOutcomeOk; }
  bool not_consulted() const { return outcome == kOutcomeNotConsulted; }
  /// Failed by the machine rather than by the compiler and the module: a
  /// timeout under load, a compile SIGKILLed (the OOM killer), a broken
  /// FIFO, an unreadable object, driftwatch's own failure (kMachineOutcomes,
  /// or a crash whose message has policy::kSigkillMarker); never one that
  /// failed so again alone (kFailedAgainAloneNote).
  bool machine_failure() const;
  /// Failed where neither the compiler nor the policy had a part: driftwatch
  /// itself or the disk (an unreadable object, internal-error). Never counted
  /// as the policy's loss. A timeout, a broken channel and a SIGKILL are: a
  /// policy that inlines without end can cause each, and one that persists
  /// when the compile is tried again alone is no longer the load's doing.
  bool failed_outside_compiler() const;
};

struct ModuleResult {
  std::string name;
  HeuristicResult by_default, learned;
  bool both_ok() const { return by_default.ok() && learned.ok(); }
  /// The default compiled it and the policy's compile failed (a crash, a
  /// hang, a broken channel): a loss for the policy wherever modules are
  /// counted for a decision. Not consulted is not the policy's doing.
  bool learned_failed() const {
    return by_default.ok() && !learned.ok() && !learned.not_consulted() && !learned.failed_outside_compiler();
  }
};

struct LinkResult {
  std::string group;
  bool ok = false;
  std::string message;
  std::int64_t default_text = 0, learned_text = 0;
};

/// Makes a fresh runner for the learned policy; called once per compile,
/// from several threads. The report receives the feature binding.
using RunnerFactory = std::function<std::unique_ptr<policy::Runner>(policy::CompatReport* report)>;

struct EvaluationOptions {
  const Suite* suite = nullptr;
  std::filesystem::path suite_dir;
  policy::CompilerInvocation compiler;
  RunnerFactory learned;
  std::filesystem::path work_dir;  ///< objects and FIFOs
  int jobs = 1;
  std::function<void(int done, int total, const ModuleResult&)> progress;
  /// Where the compiler sends its default decision (policy::detect_default_slot),
  /// for a policy that asks for it; with a compiler whose recipe says
  /// share_agreeing_defaults. A learned compile that took the default's
  /// decision at every call site followed the default heuristic's trajectory:
  /// its object is the default's, and the default compile is not repeated.
  /// A few such modules are compiled anyway and must match byte for byte,
  /// or every default is compiled. Unset: every module compiles twice.
  std::optional<policy::DefaultDecisionSlot> default_slot;
  bool compile_every_default = false;  ///< compile the default even where it would be shared
  /// Whether other work of driftwatch's runs on this machine now (another
  /// worker's job): a compile that times out again when tried alone then
  /// may still be the load's, and is tried once more with a limit
  /// kSharedMachineTimeoutFactor times as long. Unset: alone.
  std::function<bool()> machine_shared;
};

/// How many modules whose learned compile took every default decision have
/// their default compiled anyway, to check that the compiler's ML mode and
/// its default make the same object.
inline constexpr int kSharedDefaultChecks = 3;

struct EvaluationResult {
  std::vector<ModuleResult> modules;  ///< in suite order
  policy::CompatReport compat;        ///< merged over every learned compile; unknown when none reported
  std::vector<LinkResult> links;
  UpliftSummary summary;         ///< over modules that compiled under both heuristics
  UpliftSummary linked_summary;  ///< over link groups that linked under both
  std::vector<PackageSummary> packages;  ///< `summary` per package of the suite
  int failed = 0;                ///< modules with a failed compile under either heuristic
  int not_consulted = 0;         ///< modules whose learned compile never asked the policy (not in `failed`)
  int defaults_shared = 0;       ///< modules whose default was the learned compile's object (HeuristicResult::shared)
  int defaults_checked = 0;      ///< modules that could have shared it, compiled anyway and found identical
  /// Compiles the machine failed (HeuristicResult::machine_failure) that were
  /// never tried again alone: more than the retry budget. Their modules count
  /// as failed though nothing says the compiler or the policy failed them; a
  /// sweep's job tries the whole evaluation again instead (sweep/evaluation_run).
  int machine_failures_untried = 0;
  double seconds = 0;
  double link_seconds = 0;  ///< of `seconds`, spent linking the link groups
  /// What the numbers do not reflect, e.g. a corpus's own command lines the compiler could not take.
  std::vector<std::string> warnings;
};

/// The error case is an evaluation that failed as a whole: a policy that
/// cannot run on this compiler at all (its message carries the compatibility
/// report), a compiler that never consulted the policy, or no module that
/// compiled under both heuristics.
common::Result<EvaluationResult> evaluate(const EvaluationOptions& options);

/// Whether a module's default object may be the learned one where the policy
/// took every default decision: the recipe says so, every default was not
/// asked for, and the suite was made at -Oz (corpus_made_at_oz). The policy
/// must defer to the default too, which the caller knows its own way. The
/// evaluation and its reuse key both ask here, so that they agree.
bool may_share_defaults(const policy::CompilerInvocation& compiler, bool compile_every_default,
                        const std::filesystem::path& suite_dir, const Suite& suite);

/// .text of the modules that compiled under both heuristics, in suite order:
/// what every uplift of `r` is computed over.
std::vector<ModuleSizes> measured_sizes(const EvaluationResult& r);

/// Counts the failed and unconsulted modules of `r` and summarizes the rest,
/// as a whole and per package: evaluate() once its compiles are done, and an
/// evaluation rebuilt from stored rows.
void tally(EvaluationResult& r);

/// Links each group of the suite from the objects of each heuristic and
/// measures the linked .text (per-module sizes double-count COMDAT code).
std::vector<LinkResult> link_groups(const Suite& suite, const std::vector<ModuleResult>& modules,
                                    const std::filesystem::path& work_dir);

}  // namespace evaluator
