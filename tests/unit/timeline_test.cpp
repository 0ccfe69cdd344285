// A project's toolchains as an ordered line of check-ins, and how check-ins
// are named to people.
#include "sweep/timeline.h"

#include <doctest/doctest.h>

namespace {

sweep::ProjectFile nightlies() {
  sweep::ProjectFile p;
  p.toolchains = {{"/n/c", "c", "2026-01-19"},
                  {"/n/undated", "undated", ""},
                  {"/n/b", "b", "2026-01-12"},
                  {"/n/a", "a", "2026-01-12"}};
  return p;
}

}  // namespace

TEST_CASE("toolchains are ordered by date then label, each dated at its day's midnight UTC, undated ones left out") {
  auto h = sweep::toolchain_history(nightlies());
  REQUIRE(h.size() == 3);
  CHECK(h[0].subject == "a");
  CHECK(h[1].subject == "b");
  CHECK(h[2].subject == "c");
  CHECK(h[2].time == 1768780800);  // 2026-01-19T00:00:00Z
  CHECK(h[0].sha == sweep::toolchain_id("/n/a"));
  CHECK(h[0].sha != h[1].sha);
  CHECK(sweep::is_toolchain_id(h[0].sha));
  auto out = sweep::undated_left_out(nightlies());
  REQUIRE(out.size() == 1);
  CHECK(out[0].label == "undated");
}

TEST_CASE("toolchains none of which is dated are read in the file's order, not by label") {
  sweep::ProjectFile p;
  p.toolchains = {{"/r/19.1.9", "19.1.9", ""}, {"/r/19.1.10", "19.1.10", ""}};
  auto h = sweep::toolchain_history(p);
  REQUIRE(h.size() == 2);
  CHECK(h[0].subject == "19.1.9");
  CHECK(h[1].subject == "19.1.10");
  CHECK(sweep::undated_left_out(p).empty());
}

TEST_CASE("a toolchain is named by its label, a commit by its short sha") {
  auto id = sweep::toolchain_id("/n/a");
  CHECK(sweep::checkin_name(id, "2026-01-12") == "toolchain 2026-01-12");
  CHECK(sweep::checkin_name(id, "") == id.substr(0, 12));  // no label recorded
  const std::string sha = "0123456789abcdef0123456789abcdef01234567";
  CHECK_FALSE(sweep::is_toolchain_id(sha));
  CHECK(sweep::checkin_name(sha, "Raise the threshold") == "0123456789ab");
  // The identity is the directory's, however it is spelled.
  CHECK(sweep::toolchain_id("/n/a/") == sweep::toolchain_id("/n//a"));
}

TEST_CASE("a change's place reads as its culprit, else its range, else its first bad check-in") {
  const std::string a = "0123456789abcdef0123456789abcdef01234567", b = "fedcba9876543210fedcba9876543210fedcba98";
  auto tc = sweep::toolchain_id("/n/c");
  CHECK(sweep::change_place_text({a, "[Inliner] Raise", 1768780800, "", "", b, "", false, false}) ==
        "0123456789ab 2026-01-19 [Inliner] Raise");
  CHECK(sweep::change_place_text({tc, "c", 1768780800, "", "", tc, "c", false, false}) == "toolchain c");
  CHECK(sweep::change_place_text({"", "", 0, a, "", b, "", false, false}) ==
        "one of 0123456789ab..fedcba987654 (only the last of them was evaluated)");
  CHECK(sweep::change_place_text({"", "", 0, a, "", b, "", false, true}) ==
        "one of 0123456789ab..fedcba987654 (a module failing in between was last measured at the last good one)");
  // A change spread over the range has no one culprit in it.
  CHECK(sweep::change_place_text({"", "", 0, a, "", b, "", true, false}) ==
        "0123456789ab..fedcba987654 (spread over several check-ins, each step below the threshold)");
  CHECK(sweep::change_place_text({"", "", 0, "", "", tc, "c", false, false}) ==
        "toolchain c (the first check-in measured; none before it is known good)");
}

TEST_CASE("a build-broken alert says how many samples in a row did not build, not that it is broken still") {
  CHECK(sweep::broken_samples_text(3) == " and stayed broken for 3 sampled check-ins in a row");
  CHECK(sweep::broken_samples_text(1).empty());
  CHECK(sweep::broken_samples_text(0).empty());  // not recorded: an older driftwatch's alert
}

TEST_CASE("a failure's end names what ended, and leaves out the modules a later alert took") {
  const std::string a = "0123456789abcdef0123456789abcdef01234567";
  CHECK(sweep::recovered_text("build-broken", a, "", 0) == "; it builds again at 0123456789ab");
  CHECK(sweep::recovered_text("modules-failing", a, "", 1) == "; it compiles again at 0123456789ab");
  CHECK(sweep::recovered_text("modules-failing", a, "", 3) == "; they all compile again at 0123456789ab");
  CHECK(sweep::recovered_text("compiler-failing", a, "", 3, 2) ==
        "; at 0123456789ab all compile again but 2 that fail again from a later check-in on (a later alert's)");
  CHECK(sweep::recovered_text("modules-failing", "", "", 3).empty());  // still seen
  CHECK(sweep::recovered_text("uplift-dropped", a, "", 0).empty());    // a level has no end
}
