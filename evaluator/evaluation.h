#pragma once
// One evaluation: every module of a suite compiled twice by one compiler
// build, with its default heuristic and with the learned policy serving the
// ML channel; sizes read from the objects; linked sizes where the suite links.
// Parallel across modules, deterministic in its results; one failing module
// never stops the rest.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "evaluator/object_size.h"
#include "evaluator/suite.h"
#include "evaluator/uplift.h"
#include "policy/compiler.h"
#include "policy/feature_binding.h"

namespace evaluator {

// The one table of module outcomes, as stored in the database.
inline constexpr const char* kOutcomeOk = "ok";
inline constexpr const char* kOutcomeCrashed = "compiler-crashed";
inline constexpr const char* kOutcomeTimeout = "timeout";

struct HeuristicResult {
  std::string outcome = kOutcomeOk;
  std::string message;  ///< the compiler's, when not ok
  ObjectSizes sizes;
  double seconds = 0;
  std::size_t decisions = 0;
  bool ok() const { return outcome == kOutcomeOk; }
};

struct ModuleResult {
  std::string name;
  HeuristicResult by_default, learned;
  bool both_ok() const { return by_default.ok() && learned.ok(); }
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
};

struct EvaluationResult {
  std::vector<ModuleResult> modules;  ///< in suite order
  policy::CompatReport compat;
  std::vector<LinkResult> links;
  UpliftSummary summary;         ///< over modules that compiled under both heuristics
  UpliftSummary linked_summary;  ///< over link groups that linked under both
  int failed = 0;                ///< modules with a failed compile under either heuristic
  double seconds = 0;
  double link_seconds = 0;  ///< of `seconds`, spent linking the link groups
};

/// The error case is for a policy that cannot run on this compiler at all
/// (another feature set): its message carries the compatibility report.
common::Result<EvaluationResult> evaluate(const EvaluationOptions& options);

/// Links each group of the suite from the objects of each heuristic and
/// measures the linked .text (per-module sizes double-count COMDAT code).
std::vector<LinkResult> link_groups(const Suite& suite, const std::vector<ModuleResult>& modules,
                                    const std::filesystem::path& work_dir);

}  // namespace evaluator
