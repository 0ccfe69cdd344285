// The progress bar of sweeps and bisections. It writes to standard error:
// these tests check what it does with its counts, not what it prints.
#include <doctest/doctest.h>

#include "sweep/progress.h"

TEST_CASE("a progress bar given more finished jobs than it started with stretches instead of throwing") {
  // Local workers also run jobs an interrupted sweep left queued, so more
  // jobs can finish than the sweep planned. The bar's unfilled part was
  // then a negative length, and an interactive sweep died on length_error.
  for (bool terminal : {true, false}) {
    INFO("terminal: " << terminal);
    sweep::Progress p(terminal, false);
    p.start(1);
    CHECK_NOTHROW(p.step("eval one"));
    CHECK_NOTHROW(p.step("eval left queued by an interrupted sweep"));
    CHECK_NOTHROW(p.detail("eval", 3, 5));
    CHECK_NOTHROW(p.step("and another"));
    // The bar stretched to what finished: 3 of 3, never 3 of 1.
    CHECK(p.counts() == std::pair<int, int>{3, 3});
    p.extend(2);  // bisection's evaluations joined
    CHECK(p.counts() == std::pair<int, int>{3, 5});
  }
}
