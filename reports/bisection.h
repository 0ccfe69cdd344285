#pragma once
// git bisect as a pure state machine over first-parent check-ins: the caller
// evaluates the check-in next() names and reports a Verdict with mark(); no
// git, no builds here. Candidates are indexed 0..n-1, oldest first: all lie
// strictly after the last known-good evaluated check-in, and n-1 is the
// known-bad one (it has the change and needs no evaluation).
#include <cstddef>
#include <optional>
#include <vector>

#include "common/result.h"

namespace reports {

/// What an evaluated check-in showed.
enum class Verdict {
  Old,   ///< does not have the change
  New,   ///< has the change
  Skip,  ///< could not be evaluated (does not build), as `git bisect skip`
};

/// Where the first check-in with the change is, as far as known.
struct Outcome {
  std::size_t first = 0;  ///< the first check-in with the change is one of [first, last]
  std::size_t last = 0;
  std::size_t evaluations = 0;  ///< verdicts marked so far, skips included
  bool done = false;            ///< nothing left to evaluate that could narrow [first, last]
  /// True when the culprit is known exactly: the range is one check-in.
  bool exact() const { return first == last; }
};

/// Binary search for the first New check-in; skipped check-ins are stepped
/// around like git does, nearest the midpoint first, and never retested.
class Bisection {
 public:
  /// n >= 1 candidates; the last one is known bad (n == 0 is a caller bug: throws common::Fatal).
  explicit Bisection(std::size_t n);

  /// The index to evaluate next, or none when done.
  std::optional<std::size_t> next() const;

  /// Records a verdict for a candidate still in range and not yet marked;
  /// anything else (an index out of range, a second verdict) is an error.
  common::Status mark(std::size_t i, Verdict v);

  /// The current answer; final once done.
  Outcome outcome() const;

 private:
  std::vector<std::optional<Verdict>> verdicts_;
  std::size_t lo_ = 0;  // every index < lo_ is Old (or the known-good point)
  std::size_t hi_ = 0;  // hi_ is New
  std::size_t evaluations_ = 0;
};

/// For a deterministic metric: Old when `value` is closer to the old level
/// than to the new one, else New (ties, and a non-comparable value, are New).
Verdict classify(double value, double old_value, double new_value);

}  // namespace reports
