#pragma once
// Per-module greedy search over inlining decisions, the source of the
// imitation targets of ml-compiler-opt's inlining-Oz-v1.2: replay the best
// decisions found so far by index, flip one, let the default heuristic answer
// beyond the replayed prefix, and keep the flip if the object's .text shrinks.
// A module's result never has more .text than its default. No LibTorch here.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "policy/training_data.h"

namespace policy {

/// One flip the search tried: the decision's index and the .text it gave
/// against the best before it (negative: smaller); nullopt when the compile failed.
using TriedFlip = std::pair<int, std::optional<std::int64_t>>;

struct SearchedModule {
  std::int64_t text = 0;     ///< .text of the best decisions (≤ the default's over the channel)
  std::vector<int> decisions;  ///< the best decisions, as the compiler asked them
  std::vector<std::vector<double>> features;  ///< clean features of that compile, per decision
  int trials = 0, kept = 0;    ///< compiles tried, flips kept
  std::vector<int> flipped;    ///< indices of the kept flips
  /// Indices whose flip did not shrink the object by the minimum gain: the
  /// answer there is verified (good enough that departing does not pay).
  std::vector<int> rejected;
  std::vector<TriedFlip> tried;  ///< every flip tried, in order
};

/// Searches one module, trying to flip the decisions in `candidates` (indices
/// into the default trajectory), in increasing index order. Returns the
/// default trajectory unchanged when no flip helps or a compile fails.
/// `dir` holds this module's object and FIFOs (one directory per module).
SearchedModule search_module(const TrainOptions& o, const ModuleData& m, DefaultDecisionSlot slot,
                             std::vector<int> candidates, const std::filesystem::path& dir);

/// How many flips a module of `decisions` questions gets: compile time grows
/// with the module, so big modules get fewer, keeping the phase in budget.
int search_trials(std::size_t decisions, int max_trials, double decision_budget);

/// Searches every module, `model` (the cloned default) choosing which decisions
/// to try; modules already searched in work_dir are read back (resume).
std::vector<SearchedModule> search_all(const PolicyModel& model, const TrainingData& data, DefaultDecisionSlot slot,
                                       const TrainOptions& o);

/// A searched module's result on disk (checkpoint: a resumed run skips it),
/// under the name of `m`, the module searched.
common::Status save_searched(const SearchedModule& s, const ModuleData& m, const std::filesystem::path& file);
/// nullopt when the file is missing, unreadable or another module's (files
/// are per position: a module skipped since would shift the rest); `m`
/// supplies an unchanged module's trajectory.
std::optional<SearchedModule> load_searched(const std::filesystem::path& file, const ModuleData& m);

}  // namespace policy
