#include "policy/policy_runner.h"

#include <algorithm>
#include <cmath>

#include "policy/gate.h"

namespace policy {
namespace {

class PolicyRunner : public Runner {
 public:
  PolicyRunner(const PolicyModel& model, CompatReport* report, PolicyRunnerOptions options)
      : model_(model), report_(report), options_(std::move(options)) {}

  common::Status begin(const ChannelHeader& header) override {
    const auto& meta = model_.metadata();
    auto unusable = options_.unusable;
    if (options_.distrust_include_default_slot && header.find("inlining_default") >= 0)
      unusable.push_back(slot_feature_name(DefaultDecisionSlot::CalleeBasicBlockCount));
    binding_ = bind_features(meta.features, header, unusable);
    if (report_) *report_ = binding_.report;
    if (!binding_.report.usable()) {
      const auto& r = binding_.report;
      auto lost = r.missing.size() + r.corrupted.size();
      // Named, at most eight of each: those it does not send, and those it
      // sends in a form the policy cannot use (another shape, a vector).
      auto list = [](const std::vector<std::string>& v) {
        std::string out;
        for (std::size_t i = 0; i < v.size() && i < 8; ++i) out += (i ? ", " : "") + v[i];
        return out + (v.size() > 8 ? ", …" : "");
      };
      std::string which;
      if (!r.missing.empty()) which += "missing: " + list(r.missing);
      if (!r.corrupted.empty()) which += (which.empty() ? "" : "; ") + std::string("unusable: ") + list(r.corrupted);
      return common::Error{"policy " + meta.name + " was trained on another feature set: the compiler sends " +
                           std::to_string(meta.features.size() - lost) + " of its " +
                           std::to_string(meta.features.size()) + " features (" + which + ")"};
    }
    // A gate tests raw values against thresholds: it has no training mean to
    // fill a feature it tests with, and 0 would pass or fail that test at
    // every site, another rule under the same policy hash. Asked only where
    // a feature is lost: the check reads the training record and the weights.
    std::vector<bool> gate_reads;
    if (!binding_.report.compatible() && gate_fit_from_training(meta.training)) gate_reads = model_.features_read();
    for (std::size_t i = 0; i < gate_reads.size(); ++i) {
      if (!gate_reads[i] || binding_.source[i] >= 0) continue;
      const auto& c = binding_.report.corrupted;
      bool corrupted = std::find(c.begin(), c.end(), meta.features[i]) != c.end();
      return common::Error{"policy " + meta.name + " is a gate on " + meta.features[i] + ", which the compiler " +
                           (corrupted ? "sends unusable" : "does not send") + ": it cannot run here"};
    }
    // The policy answers one decision; an advice tensor of another shape
    // would be filled with it element by element, meaning something else.
    if (header.advice.element_count() != 1)
      return common::Error{"the compiler asks for advice '" + header.advice.name + "' of " +
                           std::to_string(header.advice.element_count()) + " elements; policy " + meta.name +
                           " gives one decision"};
    inputs_.assign(meta.features.size(), 0.0f);
    default_index_ = -1;
    if (meta.margin > 0) {
      if (header.find("inlining_default") < 0)
        return common::Error{"policy " + meta.name +
                             " defers to the compiler's default decision where it is unsure, and the compiler does "
                             "not send it (run it with -inliner-interactive-include-default)"};
      if (!options_.default_slot)
        return common::Error{"policy " + meta.name +
                             " defers to the compiler's default decision, and where this compiler puts it is unknown "
                             "(policy serve: --default-slot)"};
      default_index_ = header.find(slot_feature_name(*options_.default_slot));
      if (default_index_ < 0)
        return common::Error{std::string("the compiler sends no ") + slot_feature_name(*options_.default_slot)};
    }
    return common::Ok{};
  }

  bool wants_default_decision() const override { return model_.metadata().margin > 0; }

  double advise(const Observation& o) override {
    normalize_inputs(model_.metadata(), binding_, o.features, inputs_.data());
    double offset = 0;
    if (default_index_ >= 0) {
      const auto& d = o.features[default_index_];
      offset = !d.empty() && d[0] > 0.5 ? model_.metadata().margin : -model_.metadata().margin;
    }
    double score = model_.score(inputs_.data()) + offset;
    // A feature the model cannot score (NaN: an infinite float feature of a
    // compiler other than LLVM) keeps the default's decision where it is sent.
    if (std::isnan(score)) score = default_index_ >= 0 ? offset : -1;
    int action = score > 0 ? 1 : 0;
    if (options_.sampler) {
      double p = 1.0 / (1.0 + std::exp(-score));
      action = std::uniform_real_distribution<double>(0, 1)(*options_.sampler) < p ? 1 : 0;
    }
    if (options_.trace) {
      options_.trace->inputs.insert(options_.trace->inputs.end(), inputs_.begin(), inputs_.end());
      options_.trace->actions.push_back(action);
      options_.trace->offsets.push_back(static_cast<float>(offset));
    }
    return action;
  }

 private:
  const PolicyModel& model_;
  CompatReport* report_;
  PolicyRunnerOptions options_;
  FeatureBinding binding_;
  std::vector<float> inputs_;
  int default_index_ = -1;  ///< header index of the default decision, for a policy with a margin
};

}  // namespace

void normalize_inputs(const PolicyMetadata& meta, const FeatureBinding& binding,
                      const std::vector<std::vector<double>>& features, float* out) {
  for (std::size_t i = 0; i < meta.features.size(); ++i) {
    int src = binding.source[i];
    // A missing feature sits at its training mean: 0 after normalization.
    out[i] = src < 0 || features[src].empty()
                 ? 0.0f
                 : static_cast<float>((transform_feature(features[src][0]) - meta.mean[i]) / meta.scale[i]);
  }
}

std::unique_ptr<Runner> make_policy_runner(const PolicyModel& model, CompatReport* report,
                                           PolicyRunnerOptions options) {
  return std::make_unique<PolicyRunner>(model, report, std::move(options));
}

std::unique_ptr<Runner> make_policy_runner_copy(const PolicyModel& model, CompatReport* report,
                                                PolicyRunnerOptions options) {
  struct Owning : Runner {
    PolicyModel copy;
    std::unique_ptr<Runner> inner;
    Owning(const PolicyModel& m, CompatReport* r, PolicyRunnerOptions o)
        : copy(m), inner(make_policy_runner(copy, r, std::move(o))) {}
    common::Status begin(const ChannelHeader& h) override { return inner->begin(h); }
    double advise(const Observation& o) override { return inner->advise(o); }
    bool wants_default_decision() const override { return inner->wants_default_decision(); }
  };
  return std::make_unique<Owning>(model, report, std::move(options));
}

}  // namespace policy
