// Which cached builds a prune removes, and sizes as people write them. Pure.
#include "builder/cache_prune.h"

#include <doctest/doctest.h>

using builder::CacheEntry;

TEST_CASE("a prune keeps the newest builds that fit and removes those older than the limit") {
  // Built at days 1, 2, 3 (seconds), 100 bytes each, listed in no particular order.
  std::vector<CacheEntry> e = {{"b", 100, 2 * 86400}, {"a", 100, 1 * 86400}, {"c", 100, 3 * 86400}};
  builder::PruneLimits size;
  size.max_bytes = 250;
  CHECK(builder::entries_to_prune(e, size, 4 * 86400) == std::vector<std::size_t>{1});  // the oldest, "a"
  size.max_bytes = 0;
  CHECK(builder::entries_to_prune(e, size, 4 * 86400).size() == 3);
  builder::PruneLimits age;
  age.max_age = 2 * 86400;  // older than two days just after day 4: a and b
  CHECK(builder::entries_to_prune(e, age, 4 * 86400 + 1) == std::vector<std::size_t>{0, 1});
  CHECK(builder::entries_to_prune(e, age, 4 * 86400) == std::vector<std::size_t>{1});  // b is two days old exactly
  CHECK(builder::entries_to_prune(e, {}, 4 * 86400).empty());
}

TEST_CASE("sizes are bytes or K, M, G, T in powers of 1024, anything else an error naming it") {
  CHECK(builder::parse_size("123").take() == 123);
  CHECK(builder::parse_size("2K").take() == 2048);
  CHECK(builder::parse_size("50G").take() == 50ull * 1024 * 1024 * 1024);
  CHECK(builder::parse_size("1t").take() == 1024ull * 1024 * 1024 * 1024);
  for (const char* bad : {"", "G", "5GB", "-1", "1.5G", "12X"}) {
    auto r = builder::parse_size(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("is not a size") != std::string::npos);
  }
  // Too large is refused, never wrapped round to a small limit that would remove everything.
  CHECK(builder::parse_size("1048576T").take() == builder::kMaxSize);
  for (const char* huge : {"1048577T", "16777216T", "17179869184G"}) {
    auto r = builder::parse_size(huge);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("is too large") != std::string::npos);
  }
}
