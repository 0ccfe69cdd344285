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

TEST_CASE("toolchains are ordered by date then label, undated first, each dated at its day's midnight UTC") {
  auto h = sweep::toolchain_history(nightlies());
  REQUIRE(h.size() == 4);
  CHECK(h[0].subject == "undated");
  CHECK(h[0].time == 0);
  CHECK(h[1].subject == "a");
  CHECK(h[2].subject == "b");
  CHECK(h[3].subject == "c");
  CHECK(h[3].time == 1768780800);  // 2026-01-19T00:00:00Z
  CHECK(h[1].sha == sweep::toolchain_id("/n/a"));
  CHECK(h[1].sha != h[2].sha);
  CHECK(sweep::is_toolchain_id(h[1].sha));
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
