#include "reports/bisection.h"

#include <cmath>
#include <string>

namespace reports {

Bisection::Bisection(std::size_t n) : verdicts_(n), hi_(n == 0 ? 0 : n - 1) {
  if (n == 0) throw common::Fatal("bisection needs at least the known-bad check-in");
}

std::optional<std::size_t> Bisection::next() const {
  if (lo_ >= hi_) return std::nullopt;
  // With k = hi - lo + 1 candidates, testing lo + ceil(k/2) - 1 leaves at most
  // ceil(k/2) of them whatever the verdict: ceil(log2 n) evaluations in all.
  const std::size_t k = hi_ - lo_ + 1, mid = lo_ + (k + 1) / 2 - 1;
  // Testable: [lo, hi - 1], not skipped. Nearest the midpoint, later side
  // first, then alternating.
  for (std::size_t d = 0; d <= hi_ - lo_; ++d) {
    if (mid + d < hi_ && !verdicts_[mid + d]) return mid + d;
    if (d > 0 && mid >= lo_ + d && !verdicts_[mid - d]) return mid - d;
  }
  return std::nullopt;
}

common::Status Bisection::mark(std::size_t i, Verdict v) {
  if (i < lo_ || i >= hi_ || verdicts_[i])
    return common::Error{"check-in " + std::to_string(i) + " is not a bisection candidate (first new is in [" +
                         std::to_string(lo_) + ", " + std::to_string(hi_) + "], untested ones only)"};
  verdicts_[i] = v;
  ++evaluations_;
  if (v == Verdict::Old) lo_ = i + 1;
  if (v == Verdict::New) hi_ = i;
  return common::Ok{};
}

Outcome Bisection::outcome() const { return {lo_, hi_, evaluations_, !next()}; }

Verdict classify(double value, double old_value, double new_value) {
  return std::abs(value - old_value) < std::abs(value - new_value) ? Verdict::Old : Verdict::New;
}

}  // namespace reports
