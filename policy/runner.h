#pragma once
// A policy is "tensors in, decision out", as in LLVM's MLModelRunner: every
// way of answering the compiler sits behind this interface.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "policy/channel_protocol.h"

namespace policy {

/// One question from the compiler.
struct Observation {
  const ChannelHeader& header;
  const std::vector<std::vector<double>>& features;  ///< per header feature
  std::int64_t index;                                ///< within the context
  const std::string& context;
};

class Runner {
 public:
  virtual ~Runner() = default;
  /// Once per compilation, with the compiler's header. An error stops the
  /// compilation with that message (e.g. no default decision to echo).
  virtual common::Status begin(const ChannelHeader& header) { return common::Ok{}; }
  /// The decision (0/1 for the inliner).
  virtual double advise(const Observation& obs) = 0;
  /// True when it needs the compiler's own decision in every observation
  /// (the compile then runs with -inliner-interactive-include-default).
  virtual bool wants_default_decision() const { return false; }
};

/// Where a compiler build puts the default heuristic's decision when asked
/// with -inliner-interactive-include-default. LLVM 19 writes it over
/// `callee_basic_block_count` and leaves `inlining_default` 0 (fixed upstream
/// by PR #141453); later compilers use `inlining_default`.
enum class DefaultDecisionSlot { InliningDefault, CalleeBasicBlockCount };
const char* slot_feature_name(DefaultDecisionSlot slot);

/// Answers with the compiler's own default decision.
std::unique_ptr<Runner> make_echo_runner(DefaultDecisionSlot slot);
/// Answers `decision` every time (0: never inline, 1: always inline).
std::unique_ptr<Runner> make_constant_runner(double decision);
/// Answers `decisions` in order, then asks `rest` (for the tail and for
/// re-running a compilation with the same decisions).
std::unique_ptr<Runner> make_replay_runner(std::vector<double> decisions, std::unique_ptr<Runner> rest);

/// How often a runner's answers differed from the compiler's own default
/// decision over one compile: with none, the compile followed the default
/// heuristic's trajectory, decision for decision.
struct DepartureCount {
  bool default_seen = false;  ///< begin() found the default decision in the compiler's header
  std::size_t decisions = 0, departures = 0;
};
/// Wraps `inner` (which asks for the default decision), counting into
/// `count` the answers that are not the default decision sent at `slot`.
std::unique_ptr<Runner> make_departure_counter(std::unique_ptr<Runner> inner, DefaultDecisionSlot slot,
                                               DepartureCount& count);

/// What a logging runner saw: the features of every decision and the answer.
struct DecisionLog {
  std::vector<std::string> feature_names;
  std::vector<std::vector<double>> features;  ///< per decision, first element of each feature tensor
  std::vector<double> decisions;
};
/// Wraps `inner`, recording every observation and its answer into `log`.
std::unique_ptr<Runner> make_logging_runner(std::unique_ptr<Runner> inner, DecisionLog& log);

}  // namespace policy
