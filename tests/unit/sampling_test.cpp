#include <doctest/doctest.h>

#include <algorithm>

#include "tracker/sampling.h"

using namespace tracker;

namespace {

/// One check-in a day from 2026-01-01 (a Thursday), `n` days.
std::vector<CommitInfo> daily(int n) {
  std::vector<CommitInfo> out;
  auto start = parse_date("2026-01-01T12:00:00").take();
  for (int i = 0; i < n; ++i) {
    CommitInfo c;
    c.sha = "c" + std::to_string(i);
    c.time = start + i * 86400;
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> shas(const std::vector<CommitInfo>& h, const std::vector<size_t>& idx) {
  std::vector<std::string> out;
  for (auto i : idx) out.push_back(h[i].sha);
  return out;
}

}  // namespace

TEST_CASE("parse_every") {
  CHECK(parse_every("5")->count == 5);
  CHECK_FALSE(parse_every("5")->unit.has_value());
  CHECK(*parse_every("1w")->unit == PeriodUnit::Week);
  CHECK(*parse_every("2m")->unit == PeriodUnit::Month);
  CHECK(parse_every("2m")->count == 2);
  CHECK_FALSE(parse_every("0").ok());
  CHECK_FALSE(parse_every("w").ok());
  CHECK_FALSE(parse_every("3y").ok());
  CHECK(parse_every("3y").error().message.find("'3y'") != std::string::npos);
}

TEST_CASE("no rule takes every check-in") {
  auto h = daily(4);
  CHECK(sample(h, {}).size() == 4);
}

TEST_CASE("every N counts from the oldest and keeps the head") {
  auto h = daily(10);
  SamplingRule r;
  r.every = Every{4, std::nullopt};
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c0", "c4", "c8", "c9"});
  r.every = Every{3, std::nullopt};
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c0", "c3", "c6", "c9"});
}

TEST_CASE("a history that goes on (a nightly --new) never takes its newest check-in for being the newest") {
  auto h = daily(10);
  SamplingRule r;
  r.open_end = true;
  r.every = Every{4, std::nullopt};
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c0", "c4", "c8"});
  r.every = Every{3, std::nullopt};  // c9 is on the grid
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c0", "c3", "c6", "c9"});
  // 2026-01-01 is a Thursday: the week of c4..c9 (Mon 01-05 ..) is not over.
  r.every = Every{1, PeriodUnit::Week};
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c3"});
  // A tag is taken wherever it is.
  h.back().tags = {"v2"};
  r.tags = true;
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c3", "c9"});
  // Once a later week has begun (c11, c12: Mon 01-12, Tue 01-13), the week of
  // c4..c10 is over and yields c10; only the newest week waits.
  auto longer = daily(13);
  r = {};
  r.every = Every{1, PeriodUnit::Week};
  SamplingRule whole = r;
  r.open_end = true;
  CHECK(shas(longer, sample(longer, r)) == std::vector<std::string>{"c3", "c10"});
  CHECK(shas(longer, sample(longer, whole)) == std::vector<std::string>{"c3", "c10", "c12"});
}

TEST_CASE("on a quiet branch the newest check-in's week ends by the clock, and a nightly sweep takes it") {
  auto h = daily(10);  // c4..c9: the week of Mon 01-05 .. Sun 01-11
  SamplingRule r;
  r.every = Every{1, PeriodUnit::Week};
  r.open_end = true;
  r.now = h.back().time + 86400;  // Sunday 01-11: the week goes on
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c3"});
  r.now = h.back().time + 2 * 86400;  // Monday 01-12: it is over, and no check-in came
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c3", "c9"});
  r.now = h.back().time + 400 * 86400;  // a release branch a year later
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c3", "c9"});
  h.back().time = r.now.value() + 7 * 86400;  // the newest dated ahead of the clock: its week has not begun
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c3", "c8"});
}

TEST_CASE("a check-in dated in the future does not make a nightly sweep take the newest mid-week") {
  auto h = daily(10);  // c4..c9: the week of Mon 01-05, still going on
  h[2].time += 90 * 86400;  // a committer clock three months ahead
  SamplingRule r;
  r.every = Every{1, PeriodUnit::Week};
  r.open_end = true;
  auto picked = shas(h, sample(h, r));
  CHECK(std::find(picked.begin(), picked.end(), "c9") == picked.end());
  CHECK(std::find(picked.begin(), picked.end(), "c2") != picked.end());  // its own (future) week: the last of it
}

TEST_CASE("a newest check-in dated back does not close the week the clock is in") {
  auto h = daily(10);  // c4..c9: the week of Mon 01-05 .. Sun 01-11
  SamplingRule r;
  r.every = Every{1, PeriodUnit::Week};
  r.open_end = true;
  r.now = h[8].time + 3600;               // Saturday 01-10: the week goes on
  h.back().time = h[0].time - 7 * 86400;  // the newest kept a date of the week before the history
  auto picked = shas(h, sample(h, r));
  for (const char* mid_week : {"c4", "c5", "c6", "c7", "c8"})
    CHECK(std::find(picked.begin(), picked.end(), mid_week) == picked.end());
  CHECK(std::find(picked.begin(), picked.end(), "c3") != picked.end());
}

TEST_CASE("per week takes the last check-in of each ISO week") {
  // 2026-01-01 is a Thursday: week 1 = Thu..Sun (c0..c3), then Mon 01-05 .. Sun 01-11 (c4..c10).
  auto h = daily(12);
  SamplingRule r;
  r.every = Every{1, PeriodUnit::Week};
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c3", "c10", "c11"});
}

TEST_CASE("per month takes the last check-in of each calendar month") {
  auto h = daily(70);  // 2026-01-01 .. 2026-03-11
  SamplingRule r;
  r.every = Every{1, PeriodUnit::Month};
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c30", "c58", "c69"});
  r.every = Every{1, PeriodUnit::Day};
  CHECK(sample(h, r).size() == 70);
}

TEST_CASE("tags alone, and tags in addition to a period") {
  auto h = daily(40);
  h[5].tags = {"v1.0"};
  h[33].tags = {"v1.1"};
  SamplingRule r;
  r.tags = true;
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c5", "c33"});
  r.every = Every{1, PeriodUnit::Month};
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c5", "c30", "c33", "c39"});
}

TEST_CASE("check-ins already measured are skipped") {
  auto h = daily(10);
  SamplingRule r;
  r.every = Every{4, std::nullopt};
  r.skip = {"c0", "c4"};
  CHECK(shas(h, sample(h, r)) == std::vector<std::string>{"c8", "c9"});
}

TEST_CASE("dates") {
  CHECK(parse_date("2025-12-01").take() == 1764547200);
  CHECK(parse_date("2025-12-01T01:00:00").take() == 1764547200 + 3600);
  CHECK(parse_date("2025-12-01T01:00:00Z").take() == 1764547200 + 3600);
  CHECK(format_date(1764547200) == "2025-12-01");
  CHECK_FALSE(parse_date("2025-13-01").ok());
  CHECK_FALSE(parse_date("2025-02-30").ok());
  CHECK_FALSE(parse_date("yesterday").ok());
  CHECK_FALSE(parse_date("2025-12-01 junk").ok());
  CHECK_FALSE(parse_date("2026-03-1x").ok());  // not the 1st
  CHECK_FALSE(parse_date("2026-03-01T-5:00:00").ok());
  CHECK_FALSE(parse_date("+026-03-01").ok());
}
