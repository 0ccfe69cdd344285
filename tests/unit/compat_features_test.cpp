// A stored feature-compatibility report, read once for drift alerts, the
// report and decide. Pure.
#include <doctest/doctest.h>

#include "sweep/compat_features.h"

TEST_CASE("features lost are the missing and the unusable ones, and the added ones are the ignored ones") {
  auto f = sweep::compat_features(
      R"({"state":"known","bound":3,"missing":["callee_users"],"corrupted":["sroa_savings"],"ignored":["callee_embedding"]})");
  CHECK(f.lost == std::vector<std::string>{"callee_users", "sroa_savings (unusable)"});
  CHECK(f.added == std::vector<std::string>{"callee_embedding"});
  // A reshaped feature alone is a change of the feature set too.
  CHECK(sweep::compat_features(R"({"corrupted":["sroa_savings"]})").lost !=
        sweep::compat_features(R"({"corrupted":[]})").lost);
}

TEST_CASE("an unknown, empty or unreadable report loses and adds nothing") {
  for (const char* text : {"", "{\"state\":\"unknown\"}", "not json", "[1,2]"}) {
    INFO(text);
    auto f = sweep::compat_features(text);
    CHECK(f.added.empty());
    CHECK(f.lost.empty());
  }
}

TEST_CASE("a report's entry that is not a feature name is passed over, the names beside it kept") {
  auto f = sweep::compat_features(R"({"missing":[1,"a"]})");
  CHECK(f.added.empty());
  CHECK(f.lost == std::vector<std::string>{"a"});
}

TEST_CASE("the order a compiler sends its features in is no change of its feature set") {
  auto a = sweep::compat_features(R"({"missing":["b","a"],"ignored":["y","x","x"]})");
  auto b = sweep::compat_features(R"({"missing":["a","b"],"ignored":["x","y"]})");
  CHECK(a.lost == b.lost);
  CHECK(a.added == b.added);
  CHECK(a.added == std::vector<std::string>{"x", "y"});
}
