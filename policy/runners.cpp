#include "policy/runner.h"

namespace policy {
namespace {

class EchoRunner : public Runner {
 public:
  explicit EchoRunner(DefaultDecisionSlot slot) : slot_(slot) {}
  common::Status begin(const ChannelHeader& h) override {
    index_ = h.find(slot_feature_name(slot_));
    if (index_ < 0 || h.find("inlining_default") < 0)
      return common::Error{"the compiler does not send its default decision (run it with -inliner-interactive-include-default)"};
    return common::Ok{};
  }
  double advise(const Observation& o) override { return o.features[index_][0]; }
  bool wants_default_decision() const override { return true; }

 private:
  DefaultDecisionSlot slot_;
  int index_ = -1;
};

class ConstantRunner : public Runner {
 public:
  explicit ConstantRunner(double d) : d_(d) {}
  double advise(const Observation&) override { return d_; }

 private:
  double d_;
};

class ReplayRunner : public Runner {
 public:
  ReplayRunner(std::vector<double> d, std::unique_ptr<Runner> rest) : d_(std::move(d)), rest_(std::move(rest)) {}
  common::Status begin(const ChannelHeader& h) override {
    next_ = 0;
    return rest_->begin(h);
  }
  double advise(const Observation& o) override {
    double tail = rest_->advise(o);  // always asked, so a stateful tail sees every observation
    return next_ < d_.size() ? d_[next_++] : tail;
  }
  bool wants_default_decision() const override { return rest_->wants_default_decision(); }

 private:
  std::vector<double> d_;
  std::unique_ptr<Runner> rest_;
  std::size_t next_ = 0;
};

class LoggingRunner : public Runner {
 public:
  LoggingRunner(std::unique_ptr<Runner> inner, DecisionLog& log) : inner_(std::move(inner)), log_(log) {}
  common::Status begin(const ChannelHeader& h) override {
    log_.feature_names.clear();
    scalars_.clear();
    // Scalars only: a policy binds one number per feature, so a vector (an
    // IR2Vec embedding of newer LLVMs) would be learned from its first
    // element, then never served (feature_binding refuses vectors).
    for (std::size_t i = 0; i < h.features.size(); ++i)
      if (h.features[i].element_count() == 1) {
        log_.feature_names.push_back(h.features[i].name);
        scalars_.push_back(i);
      }
    return inner_->begin(h);
  }
  double advise(const Observation& o) override {
    double d = inner_->advise(o);
    std::vector<double> row;
    row.reserve(scalars_.size());
    for (auto i : scalars_) row.push_back(i < o.features.size() && !o.features[i].empty() ? o.features[i][0] : 0.0);
    log_.features.push_back(std::move(row));
    log_.decisions.push_back(d);
    return d;
  }
  bool wants_default_decision() const override { return inner_->wants_default_decision(); }

 private:
  std::unique_ptr<Runner> inner_;
  DecisionLog& log_;
  std::vector<std::size_t> scalars_;  ///< the header's features of one element, in order
};

class DepartureCounter : public Runner {
 public:
  DepartureCounter(std::unique_ptr<Runner> inner, DefaultDecisionSlot slot, DepartureCount& count)
      : inner_(std::move(inner)), slot_(slot), count_(count) {}
  common::Status begin(const ChannelHeader& h) override {
    count_ = {};
    index_ = h.find("inlining_default") < 0 ? -1 : h.find(slot_feature_name(slot_));
    count_.default_seen = index_ >= 0;
    return inner_->begin(h);
  }
  double advise(const Observation& o) override {
    double d = inner_->advise(o);
    ++count_.decisions;
    // Without the default decision in an observation, nothing says the
    // answer was the default's: counted as a departure.
    bool by_default = index_ >= 0 && !o.features[index_].empty() && o.features[index_][0] > 0.5;
    if (index_ < 0 || o.features[index_].empty() || (d > 0.5) != by_default) ++count_.departures;
    return d;
  }
  bool wants_default_decision() const override { return inner_->wants_default_decision(); }

 private:
  std::unique_ptr<Runner> inner_;
  DefaultDecisionSlot slot_;
  DepartureCount& count_;
  int index_ = -1;
};

}  // namespace

const char* slot_feature_name(DefaultDecisionSlot slot) {
  return slot == DefaultDecisionSlot::InliningDefault ? "inlining_default" : "callee_basic_block_count";
}

std::unique_ptr<Runner> make_echo_runner(DefaultDecisionSlot slot) { return std::make_unique<EchoRunner>(slot); }
std::unique_ptr<Runner> make_constant_runner(double d) { return std::make_unique<ConstantRunner>(d); }
std::unique_ptr<Runner> make_replay_runner(std::vector<double> d, std::unique_ptr<Runner> rest) {
  return std::make_unique<ReplayRunner>(std::move(d), std::move(rest));
}
std::unique_ptr<Runner> make_logging_runner(std::unique_ptr<Runner> inner, DecisionLog& log) {
  return std::make_unique<LoggingRunner>(std::move(inner), log);
}

std::unique_ptr<Runner> make_departure_counter(std::unique_ptr<Runner> inner, DefaultDecisionSlot slot,
                                               DepartureCount& count) {
  return std::make_unique<DepartureCounter>(std::move(inner), slot, count);
}

}  // namespace policy
