#include "reports/bisection.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>

using namespace reports;

namespace {

// Runs a bisection to the end with `verdict(i)` as the evaluation; fails the
// test if an index is proposed twice or a mark is refused.
Outcome run(std::size_t n, const std::function<Verdict(std::size_t)>& verdict) {
  Bisection b(n);
  std::set<std::size_t> tested;
  while (auto i = b.next()) {
    REQUIRE(*i < n - 1);  // the known-bad one needs no evaluation
    REQUIRE(tested.insert(*i).second);
    REQUIRE(b.mark(*i, verdict(*i)).ok());
  }
  return b.outcome();
}

std::size_t ceil_log2(std::size_t n) { return n <= 1 ? 0 : std::size_t(std::ceil(std::log2(double(n)))); }

}  // namespace

TEST_CASE("bisection finds every culprit within ceil(log2 n) evaluations") {
  for (std::size_t n = 1; n <= 40; ++n)
    for (std::size_t culprit = 0; culprit < n; ++culprit) {
      auto out = run(n, [&](std::size_t i) { return i >= culprit ? Verdict::New : Verdict::Old; });
      CAPTURE(n);
      CAPTURE(culprit);
      CHECK(out.done);
      CHECK(out.exact());
      CHECK(out.first == culprit);
      CHECK(out.evaluations <= ceil_log2(n));
    }
}

TEST_CASE("bisection of one check-in: the known-bad one is the culprit, no evaluation") {
  Bisection b(1);
  CHECK(!b.next());
  auto out = b.outcome();
  CHECK(out.done);
  CHECK(out.exact());
  CHECK(out.first == 0);
  CHECK(out.evaluations == 0);
}

TEST_CASE("skips at and around the culprit narrow it to a range holding it") {
  for (std::size_t culprit = 0; culprit < 20; ++culprit) {
    auto skipped = [&](std::size_t i) { return i + 1 >= culprit && i <= culprit + 1; };  // culprit-1 .. culprit+1
    auto out = run(20, [&](std::size_t i) {
      return skipped(i) ? Verdict::Skip : i >= culprit ? Verdict::New : Verdict::Old;
    });
    CAPTURE(culprit);
    CHECK(out.done);
    CHECK(out.first <= culprit);
    CHECK(culprit <= out.last);
    // The range is only as wide as the skips force: all but its last are skipped.
    for (std::size_t i = out.first; i < out.last; ++i) CHECK(skipped(i));
    CHECK(!out.exact());  // the culprit or its predecessor is always skipped
  }
}

TEST_CASE("random skips: the range always holds the culprit and is as narrow as the skips allow") {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 300; ++round) {
    std::size_t n = 1 + rng() % 50, culprit = rng() % n;
    std::vector<bool> broken(n);
    for (std::size_t i = 0; i + 1 < n; ++i) broken[i] = rng() % 4 == 0;
    auto out = run(n, [&](std::size_t i) {
      return broken[i] ? Verdict::Skip : i >= culprit ? Verdict::New : Verdict::Old;
    });
    CAPTURE(n);
    CAPTURE(culprit);
    CHECK(out.done);
    CHECK(out.first <= culprit);
    CHECK(culprit <= out.last);
    for (std::size_t i = out.first; i < out.last; ++i) CHECK(broken[i]);
    CHECK(out.evaluations <= n - 1);
  }
}

TEST_CASE("skips step to the nearest neighbour of the midpoint, alternating sides") {
  Bisection b(9);  // candidates 0..8; midpoint of 9 is 4
  CHECK(b.next() == 4u);
  REQUIRE(b.mark(4, Verdict::Skip).ok());
  CHECK(b.next() == 5u);
  REQUIRE(b.mark(5, Verdict::Skip).ok());
  CHECK(b.next() == 3u);
  REQUIRE(b.mark(3, Verdict::Skip).ok());
  CHECK(b.next() == 6u);
}

TEST_CASE("a range of only broken check-ins is the answer, not a culprit") {
  auto out = run(6, [](std::size_t) { return Verdict::Skip; });
  CHECK(out.done);
  CHECK(out.first == 0);
  CHECK(out.last == 5);
  CHECK(!out.exact());
  CHECK(out.evaluations == 5);
}

TEST_CASE("bisection refuses marks that are not for an untested candidate") {
  Bisection b(8);
  CHECK(!b.mark(7, Verdict::Old));  // the known-bad one
  CHECK(!b.mark(8, Verdict::Old));  // out of range
  REQUIRE(b.mark(3, Verdict::Old).ok());
  auto again = b.mark(3, Verdict::New);
  REQUIRE(!again);
  CHECK(again.error().message ==
        "check-in 3 is not a bisection candidate (first new is in [4, 7], untested ones only)");
  CHECK(!b.mark(1, Verdict::Old));  // already known to be old
  REQUIRE(b.mark(5, Verdict::New).ok());
  CHECK(!b.mark(6, Verdict::Old));  // after a new one: contradicts it
  auto out = b.outcome();
  CHECK(!out.done);
  CHECK(out.first == 4);
  CHECK(out.last == 5);
  CHECK(out.evaluations == 2);
}

TEST_CASE("classify: closer to the old level is old, a tie is new") {
  CHECK(classify(105, 100, 120) == Verdict::Old);
  CHECK(classify(90, 100, 120) == Verdict::Old);
  CHECK(classify(110, 100, 120) == Verdict::New);
  CHECK(classify(115, 100, 120) == Verdict::New);
  CHECK(classify(130, 100, 120) == Verdict::New);
  // The level may also fall.
  CHECK(classify(0.98, 1.0, 0.9) == Verdict::Old);
  CHECK(classify(0.91, 1.0, 0.9) == Verdict::New);
}
