#include <doctest/doctest.h>

#include <cstring>

#include "policy/channel_protocol.h"
#include "policy/feature_binding.h"
#include "policy/compiler.h"
#include "policy/runner.h"

using namespace policy;

namespace {
ChannelHeader header(const std::vector<std::string>& names) {
  ChannelHeader h;
  for (const auto& n : names) h.features.push_back({n, "int64_t", {1}, 0});
  h.advice = {"inlining_decision", "int64_t", {1}, 0};
  return h;
}
}  // namespace

TEST_CASE("features bind by name, whatever the compiler's order") {
  auto b = bind_features({"a", "b", "c"}, header({"c", "a", "b"}));
  CHECK(b.source == std::vector<int>{1, 2, 0});
  CHECK(b.report.compatible());
  CHECK(b.report.usable());
  CHECK(b.report.bound == 3);
  CHECK(b.report.summary() == "all features bound");
}

TEST_CASE("a feature known to hold something else is neither bound nor called new") {
  // LLVM 19 with the default decision included: callee_basic_block_count
  // holds it. A policy trained without that feature was called "1 new,
  // ignored" at every evaluation, though the gate reads it as the default.
  auto b =
      bind_features({"a"}, header({"a", "callee_basic_block_count", "inlining_default"}), {"callee_basic_block_count"});
  // Still listed as ignored, as every stored evaluation lists it: drift
  // compares those lists across check-ins.
  CHECK(b.report.ignored == std::vector<std::string>{"callee_basic_block_count"});
  CHECK(b.report.distrusted == std::vector<std::string>{"callee_basic_block_count"});
  CHECK(b.report.corrupted.empty());
  CHECK(b.report.summary() ==
        "all features bound; callee_basic_block_count sent but not read (it holds the compiler's default decision, "
        "LLVM 19)");
  auto known =
      bind_features({"a", "callee_basic_block_count"}, header({"a", "callee_basic_block_count", "inlining_default"}),
                    {"callee_basic_block_count"});
  CHECK(known.report.corrupted == std::vector<std::string>{"callee_basic_block_count"});
}

TEST_CASE("a feature the compiler dropped is missing, a new one is ignored") {
  auto b = bind_features({"a", "b", "c"}, header({"a", "c", "callee_embedding", "inlining_default"}));
  CHECK(b.source == std::vector<int>{0, -1, 1});
  CHECK(b.report.missing == std::vector<std::string>{"b"});
  CHECK(b.report.ignored == std::vector<std::string>{"callee_embedding"});  // the default decision is never "new"
  CHECK_FALSE(b.report.compatible());
  CHECK(b.report.usable());
  CHECK(b.report.to_json() ==
        R"({"bound":2,"corrupted":[],"distrusted":[],"ignored":["callee_embedding"],"missing":["b"],"state":"known"})");
}

TEST_CASE("a corrupted feature is not bound, and a policy for another feature set is unusable") {
  auto b = bind_features({"a", "callee_basic_block_count"}, header({"a", "callee_basic_block_count"}),
                         {"callee_basic_block_count"});
  CHECK(b.source == std::vector<int>{0, -1});
  CHECK(b.report.corrupted == std::vector<std::string>{"callee_basic_block_count"});
  auto other = bind_features({"x", "y", "z"}, header({"a", "b", "z"}));
  CHECK_FALSE(other.report.usable());
}

TEST_CASE("a feature the compiler reshaped to a vector is corrupted, not read by its first element") {
  auto h = header({"a", "b", "c"});
  h.features[1].shape = {4};
  auto b = bind_features({"a", "b", "c"}, h);
  CHECK(b.source == std::vector<int>{0, -1, 2});
  CHECK(b.report.corrupted == std::vector<std::string>{"b"});
  CHECK(b.report.bound == 2);
  CHECK_FALSE(b.report.compatible());
  h.features[1].shape = {1, 1};  // another spelling of one element
  CHECK(bind_features({"a", "b", "c"}, h).report.compatible());
}

TEST_CASE("the channel header and events parse and garbage is named") {
  auto h = parse_header(
      R"({"features":[{"name":"sroa_savings","port":0,"shape":[1],"type":"int64_t"},{"name":"x","port":1,"shape":[2,3],"type":"float"}],"advice":{"name":"inlining_decision","port":0,"shape":[1],"type":"int64_t"}})");
  REQUIRE(h.ok());
  CHECK(h->features.size() == 2);
  CHECK(h->features[1].byte_size() == 24);
  CHECK(h->observation_bytes() == 32);
  CHECK(parse_event(R"({"context":""})")->kind == StreamEvent::Context);
  CHECK(parse_event(R"({"observation":7})")->index == 7);
  CHECK(parse_event("garbage").error().message.find("malformed ML channel stream") == 0);
  CHECK(parse_header("{}").error().message.find("malformed ML channel header") == 0);
  CHECK(parse_header(R"({"features":[{"name":"a","type":"complex","shape":[1]}],"advice":{"name":"d","type":"int64_t","shape":[1]}})")
            .error()
            .message.find("unsupported tensor type 'complex'") != std::string::npos);
  // A shape whose byte count would wrap round, or ask for terabytes.
  for (const char* shape : {"[4294967296,4294967296]", "[16777217]", "[4096,4097]"})
    CHECK(parse_header(std::string(R"({"features":[{"name":"a","type":"float","shape":)") + shape +
                       R"(}],"advice":{"name":"d","type":"int64_t","shape":[1]}})")
              .error()
              .message.find("holds more than 2^24 elements") != std::string::npos);
  CHECK(parse_header(R"({"features":[{"name":"e","type":"float","shape":[1,300]}],"advice":{"name":"d","type":"int64_t","shape":[1]}})")
            .ok());  // an IR2Vec embedding
  CHECK(parse_header(R"({"features":[],"advice":{"name":"d","type":"int64_t","shape":[2]}})")
            .error()
            .message.find("advice 'd' of 2 elements") != std::string::npos);
}

TEST_CASE("observations decode from little-endian bytes and advice encodes to the tensor type") {
  auto h = parse_header(R"({"features":[{"name":"a","type":"int64_t","shape":[1]},{"name":"b","type":"float","shape":[1]}],"advice":{"name":"d","type":"int64_t","shape":[1]}})").take();
  std::string bytes(12, '\0');
  std::int64_t a = -5;
  float b = 2.5f;
  std::memcpy(bytes.data(), &a, 8);
  std::memcpy(bytes.data() + 8, &b, 4);
  auto values = decode_observation(h, bytes);
  CHECK(values[0][0] == -5);
  CHECK(values[1][0] == 2.5);
  auto advice = encode_advice(h.advice, 1);
  REQUIRE(advice.size() == 8);
  std::int64_t back = 0;
  std::memcpy(&back, advice.data(), 8);
  CHECK(back == 1);
}

TEST_CASE("a report no compile filled is unknown, never \"all features bound\"") {
  CompatReport none;
  CHECK_FALSE(none.known);
  CHECK(none.to_json() == R"({"state":"unknown"})");
  CHECK(none.summary().rfind("unknown", 0) == 0);
  auto b = bind_features({"a"}, header({"a"}));
  CHECK(merge(none, b.report).summary() == "all features bound");
  CHECK(merge(b.report, none).to_json() == b.report.to_json());
}

TEST_CASE("merged reports: a feature missing, corrupted or ignored in any compile is so in the merge") {
  auto full = bind_features({"a", "b", "c"}, header({"a", "b", "c"})).report;
  auto no_b = bind_features({"a", "b", "c"}, header({"a", "c", "x"})).report;
  auto bad_c = bind_features({"a", "b", "c"}, header({"a", "b", "c"}), {"c"}).report;
  auto m = merge(merge(full, no_b), bad_c);
  CHECK(m.known);
  CHECK(m.missing == std::vector<std::string>{"b"});
  CHECK(m.corrupted == std::vector<std::string>{"c"});
  CHECK(m.ignored == std::vector<std::string>{"x"});
  CHECK(m.bound == 1);
  // Missing in one compile and corrupted in another counts once, as missing.
  auto no_c = bind_features({"a", "b", "c"}, header({"a", "b"})).report;
  auto m2 = merge(bad_c, no_c);
  CHECK(m2.missing == std::vector<std::string>{"c"});
  CHECK(m2.corrupted.empty());
  CHECK(m2.bound == 2);
}

TEST_CASE("a training log keeps the scalar features only: a vector one could not be served") {
  auto h = parse_header(
               R"({"features":[{"name":"cost_estimate","type":"int64_t","shape":[1]},)"
               R"({"name":"callee_embedding","type":"float","shape":[300]},)"
               R"({"name":"callee_users","type":"int64_t","shape":[1]}],)"
               R"("advice":{"name":"inlining_decision","type":"int64_t","shape":[1]}})")
               .take();
  DecisionLog log;
  auto logger = make_logging_runner(make_constant_runner(1), log);
  REQUIRE(logger->begin(h).ok());
  std::vector<std::vector<double>> features = {{25}, std::vector<double>(300, 0.5), {2}};
  std::string context = "m";
  CHECK(logger->advise({h, features, 0, context}) == 1);
  CHECK(log.feature_names == std::vector<std::string>{"cost_estimate", "callee_users"});
  REQUIRE(log.features.size() == 1);
  CHECK(log.features[0] == std::vector<double>{25, 2});
  // Bound as a policy trained on it binds: nothing unusable.
  CHECK(bind_features(log.feature_names, h).report.corrupted.empty());
}

TEST_CASE("where the compiler puts its default decision is read from the probe's log, never guessed") {
  DecisionLog log;
  log.feature_names = {"callee_basic_block_count", "cost_estimate", "inlining_default"};
  auto slot = [&](double bb, double fixed) {
    log.features = {{bb, 5, fixed}};
    return slot_from_log(log);
  };
  CHECK(slot(4, 1).take() == DefaultDecisionSlot::InliningDefault);  // fixed upstream
  CHECK(slot(1, 0).take() == DefaultDecisionSlot::CalleeBasicBlockCount);  // LLVM 19's bug
  // The probe's callee has more than one block: a compiler that writes the
  // decision nowhere shows that count, or nothing that says "inline".
  CHECK_FALSE(slot(4, 0).ok());
  CHECK_FALSE(slot(0, 0).ok());
  log.feature_names = {"cost_estimate"};
  CHECK_FALSE(slot(1, 1).ok());
}
