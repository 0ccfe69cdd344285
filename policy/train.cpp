#include "policy/train.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <fstream>

#include "policy/policy_runner.h"
#include "policy/torch_model_impl.h"
#include "policy/training_data.h"

namespace policy {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

/// MLGO's per-module reward: relative .text reduction against the default.
double reward(std::int64_t policy_size, std::int64_t default_size) {
  return 1.0 - (policy_size + 0.01) / (default_size + 0.01);
}

/// One value per (seed, iteration, module): sampling is the same whatever
/// order the threads run in, so a seed reproduces a run.
std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t h = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL;
  return (h ^ (c + 0x94D049BB133111EBULL)) * 0x94D049BB133111EBULL;
}

void fill_normalization(PolicyMetadata& meta, const TrainingData& data) {
  auto n = data.feature_names.size();
  std::vector<double> sum(n, 0), sq(n, 0);
  std::size_t count = 0;
  for (const auto& m : data.modules)
    for (const auto& row : m.features) {
      for (std::size_t i = 0; i < n; ++i) {
        double t = transform_feature(row[i]);
        sum[i] += t;
        sq[i] += t * t;
      }
      ++count;
    }
  meta.features = data.feature_names;
  meta.mean.assign(n, 0);
  meta.scale.assign(n, 1);
  for (std::size_t i = 0; i < n && count > 0; ++i) {
    meta.mean[i] = sum[i] / count;
    double var = sq[i] / count - meta.mean[i] * meta.mean[i];
    meta.scale[i] = var > 1e-12 ? std::sqrt(var) : 1.0;
  }
}

/// The normalized inputs of every default decision, with their labels.
std::pair<torch::Tensor, torch::Tensor> clone_dataset(const PolicyMetadata& meta, const TrainingData& data) {
  std::vector<float> x;
  std::vector<std::int64_t> y;
  FeatureBinding identity;
  for (std::size_t i = 0; i < meta.features.size(); ++i) identity.source.push_back(static_cast<int>(i));
  std::vector<float> row(meta.features.size());
  for (const auto& m : data.modules)
    for (std::size_t d = 0; d < m.features.size(); ++d) {
      std::vector<std::vector<double>> as_tensors;
      for (double v : m.features[d]) as_tensors.push_back({v});
      normalize_inputs(meta, identity, as_tensors, row.data());
      x.insert(x.end(), row.begin(), row.end());
      y.push_back(m.default_decisions[d]);
    }
  auto n = static_cast<long>(y.size());
  return {torch::from_blob(x.data(), {n, static_cast<long>(meta.features.size())}).clone(),
          torch::from_blob(y.data(), {n}, torch::kInt64).clone()};
}

void behaviour_clone(PolicyModel& model, const TrainingData& data, const TrainOptions& o) {
  auto [x, y] = clone_dataset(model.metadata(), data);
  if (x.size(0) == 0) return;
  auto& net = model.impl().net;
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(o.learning_rate));
  auto start = Clock::now();
  for (int epoch = 0; epoch < o.clone_epochs; ++epoch) {
    opt.zero_grad();
    // Label smoothing keeps the cloned policy from saturating: REINFORCE then
    // still samples the other answer now and then, which is its exploration.
    auto loss = torch::nn::functional::cross_entropy(
        net->forward(x), y, torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(o.label_smoothing));
    loss.backward();
    opt.step();
    if (o.progress && (epoch % 50 == 49 || epoch + 1 == o.clone_epochs)) {
      double per = std::chrono::duration<double>(Clock::now() - start).count() / (epoch + 1);
      o.progress({"clone", epoch + 1, o.clone_epochs, -loss.item<double>(), 0, per * (o.clone_epochs - epoch - 1)});
    }
  }
}

struct Evaluation {
  double uplift = 0, total_uplift = 0;
};

/// Compiles every module with the greedy policy: geometric-mean and total .text reduction.
Evaluation evaluate(const PolicyModel& model, const TrainingData& data, const TrainOptions& o) {
  std::vector<double> ratios(data.modules.size(), 1.0);
  std::vector<std::int64_t> sizes(data.modules.size(), 0);
  auto dir = o.work_dir / "eval";
  fs::create_directories(dir);
  parallel_for(static_cast<int>(data.modules.size()), o.jobs, [&](int i) {
    const auto& m = data.modules[i];
    PolicyModel local(model);
    auto runner = make_policy_runner(local);
    auto obj = dir / (std::to_string(i) + ".o");
    auto r = compile_with_runner(o.compiler, m.bitcode, obj, *runner, dir);
    auto size = r.ok ? o.measure_text(obj) : common::Result<std::int64_t>(common::Error{r.error});
    sizes[i] = size ? *size : m.default_text;  // a failed compile counts as no change
    ratios[i] = (sizes[i] + 0.01) / (m.default_text + 0.01);
  });
  double total_default = 0, total_policy = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    total_default += data.modules[i].default_text;
    total_policy += sizes[i];
  }
  return {1 - geomean(ratios), 1 - total_policy / std::max(1.0, total_default)};
}

struct Checkpoint {
  int iteration = 0;
  std::vector<double> baselines;
  double best_uplift = -1e9;
  double last_uplift = 0;
};

void save_checkpoint(PolicyModel& model, const PolicyModel& best, const Checkpoint& c, torch::optim::Adam& opt,
                     const fs::path& dir) {
  model.save(dir / "checkpoint-current.policy").take();
  PolicyModel(best).save(dir / "checkpoint-best.policy").take();
  torch::save(opt, (dir / "checkpoint-optimizer.pt").string());
  nlohmann::json j{{"iteration", c.iteration}, {"baselines", c.baselines}, {"best_uplift", c.best_uplift},
                   {"last_uplift", c.last_uplift}};
  std::ofstream(dir / "checkpoint.json.tmp") << j.dump();
  fs::rename(dir / "checkpoint.json.tmp", dir / "checkpoint.json");
}

std::optional<Checkpoint> load_checkpoint(const fs::path& dir) {
  std::ifstream in(dir / "checkpoint.json");
  if (!in) return std::nullopt;
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return Checkpoint{j["iteration"], j["baselines"].get<std::vector<double>>(), j["best_uplift"], j["last_uplift"]};
}

}  // namespace

common::Result<TrainResult> train(const TrainOptions& o) {
  torch::set_num_threads(1);  // determinism, and the compiles want the cores
  std::error_code ec;
  fs::create_directories(o.work_dir, ec);
  if (ec) return common::Error{"cannot create training directory " + o.work_dir.string() + ": " + ec.message()};
  auto slot = detect_default_slot(o.compiler, o.work_dir / "probe");
  if (!slot) return slot.error();
  if (o.progress) o.progress({"collect", 0, static_cast<int>(o.modules.size()), 0, 0, 0});
  auto data = collect_training_data(o, *slot);
  if (!data) return data.error();

  PolicyMetadata meta = o.metadata;
  meta.seed = o.seed;
  std::optional<PolicyModel> model;
  auto checkpoint = o.resume ? load_checkpoint(o.work_dir) : std::nullopt;
  if (checkpoint) {
    model = PolicyModel::load(o.work_dir / "checkpoint-current.policy").take();
  } else if (o.warm_start) {
    auto parent = PolicyModel::load(*o.warm_start);
    if (!parent) return parent.error();
    if (parent->metadata().features != data->feature_names)
      return common::Error{"warm-start policy " + o.warm_start->string() +
                           " was trained on another feature set than this compiler sends"};
    meta.mean = parent->metadata().mean;
    meta.scale = parent->metadata().scale;
    meta.features = parent->metadata().features;
    meta.hidden = parent->metadata().hidden;
    meta.parent = parent->metadata().content_hash;
    model = PolicyModel::create(meta);
    {
      torch::NoGradGuard g;
      auto src = parent->impl().net->parameters();
      auto dst = model->impl().net->parameters();
      for (std::size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
    }
  } else {
    fill_normalization(meta, *data);
    model = PolicyModel::create(meta);
    behaviour_clone(*model, *data, o);
  }

  Checkpoint state = checkpoint.value_or(Checkpoint{0, std::vector<double>(data->modules.size(), 0.0)});
  PolicyModel best = o.resume && fs::exists(o.work_dir / "checkpoint-best.policy")
                         ? PolicyModel::load(o.work_dir / "checkpoint-best.policy").take()
                         : PolicyModel(*model);
  if (state.iteration == 0) {
    state.last_uplift = evaluate(*model, *data, o).uplift;
    state.best_uplift = state.last_uplift;
  }
  auto& net = model->impl().net;
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(o.learning_rate));
  if (checkpoint && fs::exists(o.work_dir / "checkpoint-optimizer.pt"))
    torch::load(opt, (o.work_dir / "checkpoint-optimizer.pt").string());

  auto dir = o.work_dir / "sample";
  fs::create_directories(dir);
  auto start = Clock::now();
  int first = state.iteration;
  for (int it = state.iteration; it < o.iterations; ++it) {
    std::vector<TrainingTrace> traces(data->modules.size());
    std::vector<double> rewards(data->modules.size(), 0);
    std::vector<char> usable(data->modules.size(), 0);
    parallel_for(static_cast<int>(data->modules.size()), o.jobs, [&](int i) {
      const auto& m = data->modules[i];
      PolicyModel local(*model);
      std::mt19937_64 rng(mix(o.seed, it, i));
      PolicyRunnerOptions sampling;
      sampling.sampler = &rng;
      sampling.trace = &traces[i];
      auto runner = make_policy_runner(local, nullptr, sampling);
      auto obj = dir / (std::to_string(i) + ".o");
      auto r = compile_with_runner(o.compiler, m.bitcode, obj, *runner, dir);
      if (!r.ok) return;
      auto size = o.measure_text(obj);
      if (!size) return;
      rewards[i] = reward(*size, m.default_text);
      usable[i] = !traces[i].actions.empty();
    });
    // REINFORCE: raise the log-probability of actions in proportion to how
    // much better the module did than its moving-average baseline.
    std::vector<float> x, adv;
    std::vector<std::int64_t> a;
    double reward_sum = 0;
    int counted = 0;
    for (std::size_t i = 0; i < data->modules.size(); ++i) {
      if (!usable[i]) continue;
      double advantage = rewards[i] - state.baselines[i];
      state.baselines[i] = 0.8 * state.baselines[i] + 0.2 * rewards[i];
      reward_sum += rewards[i];
      ++counted;
      x.insert(x.end(), traces[i].inputs.begin(), traces[i].inputs.end());
      for (int act : traces[i].actions) {
        a.push_back(act);
        adv.push_back(static_cast<float>(advantage * 100));  // rewards are fractions of a percent
      }
    }
    if (!a.empty()) {
      auto n = static_cast<long>(a.size());
      auto xt = torch::from_blob(x.data(), {n, static_cast<long>(model->metadata().features.size())});
      auto at = torch::from_blob(a.data(), {n, 1}, torch::kInt64);
      auto advt = torch::from_blob(adv.data(), {n});
      opt.zero_grad();
      auto logp = torch::log_softmax(net->forward(xt), 1);
      auto chosen = logp.gather(1, at).squeeze(1);
      auto entropy = -(logp.exp() * logp).sum(1).mean();
      auto loss = -(advt * chosen).mean() - 0.01 * entropy;
      loss.backward();
      opt.step();
    }
    state.iteration = it + 1;
    if (state.iteration % o.eval_every == 0 || state.iteration == o.iterations) {
      state.last_uplift = evaluate(*model, *data, o).uplift;
      if (state.last_uplift > state.best_uplift) {
        state.best_uplift = state.last_uplift;
        best = PolicyModel(*model);
      }
    }
    save_checkpoint(*model, best, state, opt, o.work_dir);
    if (o.progress) {
      double per = std::chrono::duration<double>(Clock::now() - start).count() / (state.iteration - first);
      o.progress({"reinforce", state.iteration, o.iterations, counted ? reward_sum / counted : 0, state.last_uplift,
                  per * (o.iterations - state.iteration)});
    }
  }

  auto final_eval = evaluate(best, *data, o);
  nlohmann::json training{{"method", "behaviour cloning of the default heuristic, then REINFORCE with a per-module "
                                     "moving-average baseline and MLGO's .text reward"},
                          {"clone_epochs", o.clone_epochs},
                          {"iterations", o.iterations},
                          {"learning_rate", o.learning_rate},
                          {"modules", data->modules.size()},
                          {"skipped_modules", data->skipped},
                          {"train_uplift_geomean", final_eval.uplift},
                          {"train_uplift_total", final_eval.total_uplift},
                          {"default_decision_slot", slot_feature_name(*slot)}};
  best.metadata().training = training.dump();
  best.metadata().seed = o.seed;
  TrainResult result{std::move(best), final_eval.uplift, final_eval.total_uplift,
                     static_cast<int>(data->modules.size()), static_cast<int>(data->skipped.size())};
  return result;
}

}  // namespace policy
