#include "policy/train.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <tuple>

#include "common/atomic_file.h"
#include "common/file_lock.h"
#include "common/hash.h"
#include "policy/choosing.h"
#include "policy/gate_policy.h"
#include "policy/policy_runner.h"
#include "policy/search.h"
#include "policy/torch_model_impl.h"
#include "policy/training_data.h"

namespace policy {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

/// A margin no score passes: the policy answers as the default everywhere,
/// chosen when no margin wins on the validation modules.
constexpr double kDeferAlways = 1e6;

/// Never a model input: LLVM 19 writes the default decision over it when the
/// compiler sends that decision, which a policy with a margin needs.
constexpr const char* kUnreliableFeature = "callee_basic_block_count";

/// MLGO's per-module reward: relative .text reduction against the default.
double reward(std::int64_t policy_size, std::int64_t default_size) {
  return 1.0 - (policy_size + 0.01) / (default_size + 0.01);
}

/// What REINFORCE maximizes: MLGO's reward, minus a price on every module
/// the policy makes larger than the default.
double shaped_reward(std::int64_t policy_size, std::int64_t default_size, const TrainOptions& o) {
  return reward(policy_size, default_size) - (policy_size > default_size ? o.loss_penalty : 0.0);
}

/// One value per (seed, iteration, module): sampling is the same whatever
/// order the threads run in, so a seed reproduces a run.
std::uint64_t mix(std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t h = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL;
  return (h ^ (c + 0x94D049BB133111EBULL)) * 0x94D049BB133111EBULL;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// Training that went numerically wrong: thrown before the bad step is
/// checkpointed, so the work directory keeps the last good state and the
/// caller's policy files are untouched.
struct Diverged : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool all_finite(const torch::Tensor& t) { return torch::isfinite(t).all().item<bool>(); }

/// Stops a phase whose loss is not a number, whose weights or answers on
/// `inputs` stopped being finite numbers, or (`exploded`) whose loss grew far
/// past where it started. Weights of 1e38 are finite, yet every answer of
/// theirs overflows: the answers are what a checkpoint must not keep.
void check_step(const char* phase, int step, double loss, torch::nn::Sequential& net,
                const torch::Tensor& inputs, bool exploded = false) {
  std::string what;
  if (!std::isfinite(loss)) {
    what = "its loss is " + std::to_string(loss);
  } else {
    torch::NoGradGuard no_grad;
    bool weights = true;
    for (const auto& p : net->parameters()) weights = weights && all_finite(p);
    if (!weights) what = "the model's weights are no longer finite numbers";
    else if (!all_finite(net->forward(inputs))) what = "the model's answers are no longer finite numbers";
    else if (exploded) what = "its loss exploded to " + std::to_string(loss);
  }
  if (!what.empty())
    throw Diverged("training diverged in " + std::string(phase) + " at step " + std::to_string(step) + ": " + what +
                   " (lower the learning rate)");
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

/// Normalized inputs (rows × features), labels, per-row loss weights and
/// per-row offsets added to the score (a residual policy's default side).
struct Dataset {
  std::vector<float> x;
  std::vector<std::int64_t> y;
  std::vector<float> w;
  std::vector<float> offset;
};

void add_rows(Dataset& d, const PolicyMetadata& meta, const std::vector<std::vector<double>>& rows,
              const std::vector<int>& labels, const std::vector<float>& weights) {
  append_normalized(meta, rows, d.x);
  d.y.insert(d.y.end(), labels.begin(), labels.end());
  d.w.insert(d.w.end(), weights.begin(), weights.end());
  d.offset.resize(d.y.size(), 0.0f);
}

/// The score is logit(inline) − logit(don't): an offset on the score is one
/// on the "inline" logit. Rows × 2.
torch::Tensor score_shift(const torch::Tensor& offsets) {
  return torch::stack({torch::zeros_like(offsets), offsets}, 1);
}

/// Weighted cross-entropy, Adam, shuffled minibatches (shuffle from `seed`).
void fit(PolicyModel& model, Dataset& d, int epochs, double smoothing, double weight_decay, std::uint64_t seed,
         const TrainOptions& o, const char* phase) {
  auto n = static_cast<long>(d.y.size());
  if (n == 0 || epochs == 0) return;
  auto f = static_cast<long>(model.metadata().features.size());
  auto x = torch::from_blob(d.x.data(), {n, f});
  auto y = torch::from_blob(d.y.data(), {n}, torch::kInt64);
  auto w = torch::from_blob(d.w.data(), {n});
  auto shift = score_shift(torch::from_blob(d.offset.data(), {n}));
  auto& net = model.impl().net;
  torch::optim::Adam opt(net->parameters(), torch::optim::AdamOptions(o.learning_rate).weight_decay(weight_decay));
  std::vector<std::int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  constexpr long kBatch = 512;
  auto start = Clock::now();
  double first_loss = 0;
  torch::Tensor batch;
  for (int epoch = 0; epoch < epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    auto perm = torch::from_blob(order.data(), {n}, torch::kInt64);
    double loss_sum = 0, right = 0;
    for (long b = 0; b < n; b += kBatch) {
      auto idx = perm.slice(0, b, std::min(n, b + kBatch));
      auto wb = w.index_select(0, idx);
      opt.zero_grad();
      batch = x.index_select(0, idx);
      auto logits = net->forward(batch) + shift.index_select(0, idx);
      auto yb = y.index_select(0, idx);
      right += (logits.argmax(1) == yb).sum().item<double>();
      auto per_row = torch::nn::functional::cross_entropy(logits, yb,
          torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(smoothing).reduction(torch::kNone));
      auto loss = (per_row * wb).sum() / wb.sum();
      double value = loss.item<double>();
      if (!std::isfinite(value)) check_step(phase, epoch + 1, value, net, batch);
      loss.backward();
      opt.step();
      loss_sum += value * idx.size(0);
    }
    // Cross-entropy starts near log 2; twenty times where the first epoch
    // ended is no longer learning.
    if (epoch == 0) first_loss = loss_sum / n;
    // The answers are checked on the last batch: weights that overflow do so on any input.
    check_step(phase, epoch + 1, loss_sum / n, net, batch, loss_sum / n > 20 * std::max(first_loss, 0.1));
    if (o.progress && (epoch % 10 == 9 || epoch + 1 == epochs)) {
      double per = seconds_since(start) / (epoch + 1);
      o.progress({phase, epoch + 1, epochs, -loss_sum / n, 0, per * (epochs - epoch - 1), right / n});
    }
  }
}

void behaviour_clone(PolicyModel& model, const TrainingData& data, const TrainOptions& o) {
  Dataset d;
  for (const auto& m : data.modules)
    add_rows(d, model.metadata(), m.features, m.default_decisions, std::vector<float>(m.features.size(), 1.0f));
  fit(model, d, o.clone_epochs, o.label_smoothing, 0.0, mix(o.seed, 0, 1), o, "clone");
}

/// Cross-entropy on the searched decisions, kept flips weighted up: they are
/// rare, and the whole improvement over the default. A residual policy's
/// score carries the default's side at the model's margin, as when served.
void imitate(PolicyModel& model, const std::vector<SearchedModule>& searched, const TrainOptions& o) {
  Dataset d;
  auto margin = static_cast<float>(model.metadata().margin);
  for (const auto& s : searched) {
    std::vector<float> w(s.decisions.size(), 1.0f);
    // Rejected indices were tried on earlier trajectories, which a later kept flip may have shortened.
    for (int i : s.rejected)
      if (i < static_cast<int>(w.size())) w[i] = static_cast<float>(o.verified_weight);
    for (int i : s.flipped) w[i] = static_cast<float>(o.flip_weight);
    auto first = d.y.size();
    add_rows(d, model.metadata(), s.features, s.decisions, w);
    // Every answer of the searched trajectory is the default's there, but for the kept flips.
    std::vector<bool> flipped(s.decisions.size(), false);
    for (int i : s.flipped) flipped[i] = true;
    for (std::size_t i = 0; i < s.decisions.size(); ++i)
      d.offset[first + i] = (s.decisions[i] == 1) != flipped[i] ? margin : -margin;
  }
  fit(model, d, o.imitation_epochs, 0.0, o.weight_decay, mix(o.seed, 0, 2), o, "imitate");
}

/// A greedy evaluation's figures, as the checkpoint and the metadata keep them.
nlohmann::json figures(const Outcome& e) {
  return {{"uplift_geomean", e.uplift}, {"uplift_total", e.total_uplift}, {"wins", e.wins},    {"ties", e.ties},
          {"losses", e.losses},         {"no_worse_share", e.no_worse()}, {"failed", e.failed}};
}

struct Checkpoint {
  int iteration = 0;
  std::vector<double> baselines;  ///< per module, of the reward
  nlohmann::json last;    ///< figures of the policy last evaluated
  nlohmann::json best;    ///< figures of the best policy so far
  nlohmann::json search;  ///< what the greedy search found
};

/// A checkpoint's files carry its iteration; checkpoint.json, renamed into
/// place last, names the complete set, so an interruption never mixes two.
fs::path checkpoint_file(const fs::path& dir, int iteration, const char* what) {
  return dir / ("checkpoint-" + std::to_string(iteration) + "-" + what);
}

void save_checkpoint(PolicyModel& model, const PolicyModel& best, const Checkpoint& c, torch::optim::Adam& opt,
                     const fs::path& dir) {
  model.save(checkpoint_file(dir, c.iteration, "current.policy")).take();
  PolicyModel(best).save(checkpoint_file(dir, c.iteration, "best.policy")).take();
  std::ostringstream optimizer;
  torch::save(opt, optimizer);
  common::write_file_atomically(checkpoint_file(dir, c.iteration, "optimizer.pt"), optimizer.str()).take();
  nlohmann::json j{{"iteration", c.iteration}, {"baselines", c.baselines}, {"last", c.last},
                   {"best", c.best},           {"search", c.search}};
  common::write_file_atomically(dir / "checkpoint.json", j.dump()).take();
  std::error_code ec;
  for (const char* what : {"current.policy", "best.policy", "optimizer.pt"})
    fs::remove(checkpoint_file(dir, c.iteration - 1, what), ec);
}

/// None when there is no checkpoint yet. One that cannot be read is refused:
/// starting over would orphan hours of iterations without a word.
common::Result<std::optional<Checkpoint>> load_checkpoint(const fs::path& dir) {
  auto file = dir / "checkpoint.json";
  std::ifstream in(file);
  if (!in) return std::optional<Checkpoint>();
  auto corrupt = common::Error{"cannot resume: " + file.string() + " is corrupt (train again without --resume)"};
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return corrupt;
  try {
    return std::optional<Checkpoint>(
        Checkpoint{j.at("iteration"), j.at("baselines"), j.at("last"), j.at("best"), j.at("search")});
  } catch (const nlohmann::json::exception&) {
    return corrupt;
  }
}

/// One REINFORCE iteration: every module compiled once with decisions sampled
/// from the policy; each module's advantage (reward minus its moving-average
/// baseline, normalized over the batch) scales the log-probability of its
/// actions. Returns the mean reward.
double reinforce_iteration(PolicyModel& model, torch::optim::Adam& opt, const TrainingData& data, Checkpoint& state,
                           int it, DefaultDecisionSlot slot, const TrainOptions& o) {
  auto n = data.modules.size();
  std::vector<Rollout> rollouts(n);
  auto order = largest_first(decision_counts(data));
  auto thrown = parallel_for(static_cast<int>(n), o.jobs, [&](int k) {
    int i = order[k];
    std::mt19937_64 rng(mix(o.seed, it, i));
    auto dir = o.work_dir / "sample" / std::to_string(i);
    fs::create_directories(dir);
    rollouts[i] = rollout(model, data.modules[i], o, &rng, dir, slot);
  });
  // A rollout that threw (a compile only the machine fails, failed twice)
  // stops training: left out of the gradient, it would make the same seed
  // give another policy. The last checkpoint resumes with --resume.
  if (auto why = first_error(thrown); !why.empty()) throw common::Fatal("sampling trajectories: " + why);
  std::vector<double> advantage(n, 0);
  double reward_sum = 0, square_sum = 0;
  int counted = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!rollouts[i].ok || rollouts[i].trace.actions.empty()) continue;
    double r = shaped_reward(rollouts[i].text, data.modules[i].default_text, o);
    advantage[i] = r - state.baselines[i];
    state.baselines[i] = 0.8 * state.baselines[i] + 0.2 * r;
    reward_sum += r;
    square_sum += advantage[i] * advantage[i];
    ++counted;
  }
  if (counted == 0) return 0;
  // Rewards are fractions of a percent and vary by module: normalizing keeps
  // the step size independent of the suite.
  double scale = 1.0 / (std::sqrt(square_sum / counted) + 1e-6);
  std::vector<float> x, adv, offsets;
  std::vector<std::int64_t> a;
  for (std::size_t i = 0; i < n; ++i) {
    if (advantage[i] == 0) continue;
    const auto& t = rollouts[i].trace;
    x.insert(x.end(), t.inputs.begin(), t.inputs.end());
    a.insert(a.end(), t.actions.begin(), t.actions.end());
    offsets.insert(offsets.end(), t.offsets.begin(), t.offsets.end());
    adv.insert(adv.end(), t.actions.size(), static_cast<float>(advantage[i] * scale));
  }
  if (a.empty()) return reward_sum / counted;
  if (offsets.size() != a.size()) throw std::logic_error("a sampled compile's trace lacks its margin terms");
  auto rows = static_cast<long>(a.size());
  auto xt = torch::from_blob(x.data(), {rows, static_cast<long>(model.metadata().features.size())});
  auto at = torch::from_blob(a.data(), {rows, 1}, torch::kInt64);
  auto advt = torch::from_blob(adv.data(), {rows});
  opt.zero_grad();
  auto shift = score_shift(torch::from_blob(offsets.data(), {rows}));
  auto logp = torch::log_softmax(model.impl().net->forward(xt) + shift, 1);
  // Summed over a module's decisions, averaged over modules: the gradient of
  // the expected per-module reward.
  auto loss = -(advt * logp.gather(1, at).squeeze(1)).sum() / counted;
  double value = loss.item<double>();
  if (!std::isfinite(value)) check_step("reinforce", it + 1, value, model.impl().net, xt);
  loss.backward();
  opt.step();
  check_step("reinforce", it + 1, value, model.impl().net, xt);
  return reward_sum / counted;
}

/// Whether a policy's network was trained with the default's side added
/// (its training record says so).
bool trained_residual(const PolicyMetadata& meta) {
  auto j = nlohmann::json::parse(meta.training.empty() ? "{}" : meta.training, nullptr, false);
  return j.is_object() && j.value("residual_margin", 0.0) > 0;
}

/// A fresh model for the training data: cloned from the default heuristic,
/// or copied from a warm-start policy.
common::Result<PolicyModel> initial_model(const TrainingData& data, const TrainOptions& o, const PolicyModel* parent) {
  PolicyMetadata meta = o.metadata;
  meta.seed = o.seed;
  if (!parent) {
    fill_normalization(meta, data);
    // A residual policy's clone only ranks the search's candidates and is
    // then replaced: it keeps the default width whatever the policy's, so
    // the search (the costly part) is the same for every policy width.
    if (o.residual_margin > 0) meta.hidden = PolicyMetadata{}.hidden;
    auto model = PolicyModel::create(meta);
    behaviour_clone(model, data, o);
    return model;
  }
  if (parent->metadata().features != data.feature_names)
    return common::Error{"warm-start policy " + o.warm_start->string() +
                         " was trained on another feature set than this compiler sends"};
  meta.mean = parent->metadata().mean;
  meta.scale = parent->metadata().scale;
  meta.features = parent->metadata().features;
  meta.hidden = parent->metadata().hidden;
  meta.parent = parent->metadata().content_hash;
  auto model = PolicyModel::create(meta);
  torch::NoGradGuard g;
  auto src = parent->impl().net->parameters();
  auto dst = model.impl().net->parameters();
  for (std::size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
  return model;
}

/// Warm start, search and imitation; the state REINFORCE starts from, its
/// baselines being the imitated policy's own rewards.
common::Result<PolicyModel> warm_up(const TrainingData& data, const TrainingData* validation, DefaultDecisionSlot slot,
                                    const TrainOptions& o, const PolicyModel* parent, Checkpoint& state) {
  auto model = initial_model(data, o, parent);
  if (!model) return model.error();
  auto searched = search_all(*model, data, slot, o);
  for (auto& s : searched) drop_columns(data, s.features);  // logged in the compiler's order
  if (o.residual_margin > 0) {
    // The clone ranked the search's candidates; a residual policy learns
    // from fresh weights what to add to the default, or from its parent's
    // when the parent was trained as one (a parent that decides alone
    // scores the default's boundary itself: the margin would count it twice).
    if (!parent || !trained_residual(parent->metadata())) {
      auto meta = model->metadata();
      meta.hidden = o.metadata.hidden;
      model = PolicyModel::create(meta);
    }
    model->metadata().margin = o.residual_margin;
  }
  std::vector<std::int64_t> text;
  int trials = 0, kept = 0;
  for (std::size_t i = 0; i < searched.size(); ++i) {
    text.push_back(std::min(searched[i].text, data.modules[i].default_text));
    trials += searched[i].trials, kept += searched[i].kept;
  }
  state.search = figures(summarize(data, text));
  state.search.update({{"trials", trials}, {"flips_kept", kept}});
  imitate(*model, searched, o);
  // The training modules' compile gives REINFORCE its baselines; with no
  // REINFORCE and validation modules to choose on, nobody reads it.
  state.baselines.assign(data.modules.size(), 0.0);
  std::optional<Outcome> on_training;
  if (o.iterations > 0 || !validation) {
    on_training = evaluate(*model, data, o, slot);
    for (std::size_t i = 0; i < on_training->text.size(); ++i)
      state.baselines[i] = shaped_reward(on_training->text[i], data.modules[i].default_text, o);
  }
  state.last = state.best = figures(validation ? evaluate(*model, *validation, o, slot) : *on_training);
  if (o.progress) o.progress({"imitated", 0, o.iterations, 0, state.last["uplift_geomean"], 0, 0, state.last["no_worse_share"]});
  return model;
}

/// The margin, chosen on the validation modules: the best geometric-mean
/// uplift among margins that leave at least `no_worse_bar` of them no larger
/// and the total no larger; when none does, the one that comes closest to
/// the bar without losing in total. Every margin tried is recorded in `grid`.
/// A residual policy's margins start at the one it was trained with.
double choose_margin(const PolicyModel& model, const TrainingData& validation, DefaultDecisionSlot slot,
                     const TrainOptions& o, const nlohmann::json& unmargined, nlohmann::json& grid) {
  grid = nlohmann::json::array();
  double trained = model.metadata().margin;
  auto row = unmargined;
  row["margin"] = trained;
  grid.push_back(row);
  // The last candidate defers everywhere: measured too, so the figures of
  // whatever is chosen are measured ones (the channel's echo of the default
  // need not equal the default compile).
  std::vector<double> margins;
  for (double m : o.margins) margins.push_back(trained + m);
  margins.push_back(kDeferAlways);
  for (std::size_t k = 0; k < margins.size(); ++k) {
    PolicyModel gated(model);
    gated.metadata().margin = margins[k];
    auto f = figures(evaluate(gated, validation, o, slot));
    f["margin"] = margins[k];
    grid.push_back(f);
    if (o.progress) o.progress({"margin", static_cast<int>(k + 1), static_cast<int>(margins.size()), 0,
                                f["uplift_geomean"], 0, 0, f["no_worse_share"]});
  }
  const nlohmann::json* chosen = nullptr;
  for (const auto& f : grid) {
    if (meets_bar(f, o.no_worse_bar) &&
        (!chosen || f["uplift_geomean"].get<double>() > (*chosen)["uplift_geomean"].get<double>()))
      chosen = &f;
  }
  for (const auto& f : grid) {  // none meets the bar: the closest that does not lose
    if (chosen && (*chosen)["no_worse_share"].get<double>() >= o.no_worse_bar) break;
    if (failed_compiles(f) > 0 || f["uplift_geomean"].get<double>() <= 0 || f["uplift_total"].get<double>() < 0)
      continue;
    if (!chosen || f["no_worse_share"].get<double>() > (*chosen)["no_worse_share"].get<double>()) chosen = &f;
  }
  return chosen ? (*chosen)["margin"].get<double>() : kDeferAlways;  // kDeferAlways's row is the grid's last
}

nlohmann::json training_json(const TrainOptions& o, const TrainingData& data, const Checkpoint& state,
                             DefaultDecisionSlot slot, const std::string& figures_prefix) {
  nlohmann::json j{
      {"method", "behaviour cloning of the default heuristic; per-module greedy search and imitation of the searched "
                 "decisions; REINFORCE with a per-module moving-average baseline and MLGO's .text reward"},
      {"clone_epochs", o.clone_epochs},         {"search_trials", o.search_trials},
      {"search_budget", o.search_budget},       {"search", state.search},
      {"imitation_epochs", o.imitation_epochs}, {"flip_weight", o.flip_weight},
      {"verified_weight", o.verified_weight},   {"iterations", o.iterations},
      {"learning_rate", o.learning_rate},       {"rl_learning_rate", o.rl_learning_rate},
      {"loss_penalty", o.loss_penalty},         {"modules", data.modules.size()},
      {"weight_decay", o.weight_decay},         {"residual_margin", o.residual_margin},
      {"skipped_modules", data.skipped},        {"default_decision_slot", slot_feature_name(slot)}};
  // Recorded when set, so a policy trained before the option reads the same.
  if (o.search_min_gain != 1) j["search_min_gain"] = o.search_min_gain;
  for (const auto& [key, value] : state.best.items()) j[figures_prefix + key] = value;
  return j;
}

/// Modules by name and content, in order: what a run's checkpoint and
/// search results are indexed by.
nlohmann::json modules_key(const std::vector<TrainModule>& modules) {
  nlohmann::json key = nlohmann::json::array();
  for (const auto& m : modules) {
    auto hash = common::sha256_file(m.bitcode);
    key.push_back({m.name, hash ? *hash : "", m.cc1_args});  // unreadable: collection says why
  }
  return key;
}

/// A program by its content (a rebuilt compiler may move to another path):
/// its first word, the file found, hashed; the rest of the line as it is.
nlohmann::json command_key(const std::vector<std::string>& argv) {
  nlohmann::json key = nlohmann::json::array();
  for (std::size_t i = 0; i < argv.size(); ++i) {
    auto hash = i == 0 ? common::sha256_file(argv[i]) : common::Result<std::string>(common::Error{""});
    key.push_back(hash ? "sha256:" + *hash : argv[i]);
  }
  return key;
}

/// Everything a resumed run must share with the one it continues, in two
/// parts. "search": what the collected data and the greedy search depend on
/// (the modules, the compiler, and the clone that ranks the search's
/// candidates). "model": what the checkpoints depend on besides (validation
/// modules, the imitation and REINFORCE options). Not --iterations nor
/// --eval-every: training longer is what --resume is for. A run may reuse
/// another's search with other model options once that run's checkpoints are
/// removed (bench/policy_variants.sh does).
nlohmann::json run_key(const TrainOptions& o) {
  auto warm = o.warm_start ? common::sha256_file(*o.warm_start) : common::Result<std::string>(std::string());
  // What every kind of training reads (JSON objects sort their keys, so the
  // order they are added in does not change the key).
  nlohmann::json key = {{"search",
                         {{"modules", modules_key(o.modules)},
                          {"compiler", command_key(o.compiler.argv)},
                          {"cc1", command_key(o.compiler.cc1)},
                          {"ml_flag_prefix", o.compiler.ml_flag_prefix},
                          {"options", {{"seed", o.seed}, {"warm_start", warm ? *warm : "unreadable"}}}}},
                        {"model", {{"validation", modules_key(o.validation)}, {"options", nlohmann::json::object()}}}};
  if (o.gate) {  // a gate reads none of the search's or the network's options: they do not stop a resume
    key["model"]["options"]["gate"] = {{"max_costs", o.gate->max_costs},
                                       {"max_callee_users", o.gate->max_callee_users},
                                       {"min_caller_users", o.gate->min_caller_users},
                                       {"no_worse_bar", o.no_worse_bar}};
    return key;
  }
  // The clone's width: a residual policy's keeps the default one (initial_model).
  auto clone_hidden = o.residual_margin > 0 ? PolicyMetadata{}.hidden : o.metadata.hidden;
  key["search"]["options"].update({{"clone_hidden", clone_hidden},
                                   {"clone_epochs", o.clone_epochs},
                                   {"label_smoothing", o.label_smoothing},
                                   {"learning_rate", o.learning_rate},
                                   {"search_trials", o.search_trials},
                                   {"search_budget", o.search_budget}});
  key["model"]["options"] = {{"hidden", o.metadata.hidden},
                             {"imitation_epochs", o.imitation_epochs},
                             {"flip_weight", o.flip_weight},
                             {"verified_weight", o.verified_weight},
                             {"weight_decay", o.weight_decay},
                             {"residual_margin", o.residual_margin},
                             {"rl_learning_rate", o.rl_learning_rate},
                             {"loss_penalty", o.loss_penalty}};
  // Options added since work directories were first made are written only
  // when set, so a directory an older driftwatch left still resumes (and
  // retrain does not throw its search away).
  if (o.search_min_gain != 1) key["search"]["options"]["search_min_gain"] = o.search_min_gain;
  return key;
}

/// What differs between a saved run key and this run's, for the refusal.
std::string what_differs(const nlohmann::json& saved, const nlohmann::json& now) {
  if (!saved.is_object()) return "settings it does not record (an older driftwatch)";
  static const std::tuple<const char*, const char*, const char*> kParts[] = {
      {"search", "modules", "other training modules"}, {"search", "compiler", "another compiler"},
      {"search", "cc1", "another compiler"},           {"search", "ml_flag_prefix", "another compiler"},
      {"search", "options", "other search options"},   {"model", "validation", "other validation modules"},
      {"model", "options", "other training options"}};
  for (const auto& [part, key, what] : kParts)
    if (saved.value(part, nlohmann::json::object()).value(key, nlohmann::json()) != now.at(part).at(key)) return what;
  return "other settings";
}

/// Takes the work directory for this run: another training with the same
/// --out name and seed would share its objects and checkpoints, so it is
/// refused while one holds it. A resumed run must be the run that left the
/// state (run.json); a fresh one clears what an earlier run left.
common::Result<common::FileLock> claim_work_dir(const TrainOptions& o, bool& resume) {
  auto lock = common::FileLock::try_acquire(o.work_dir / "lock");
  if (!lock) return lock.error();
  if (!*lock)
    return common::Error{"another training is using " + o.work_dir.string() +
                         " (the same --out name and seed): wait for it, or train under another --out name"};
  auto file = o.work_dir / "run.json";
  auto key = run_key(o);
  std::ifstream in(file);
  auto saved = fs::exists(file) ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  bool searched = fs::exists(o.work_dir / "search"), checkpointed = fs::exists(o.work_dir / "checkpoint.json") ||
                                                                   fs::exists(o.work_dir / "gate");
  bool same_search = saved.is_object() && saved.value("search", nlohmann::json()) == key.at("search");
  resume = o.resume || (o.resume_if_same && saved == key);
  // Resuming of its own accord (retrain), a run whose checkpoint cannot be
  // read starts its network over (its search is kept) rather than fail every
  // night until someone clears it; asked to (--resume), it is refused
  // (load_checkpoint).
  std::error_code ec;
  auto remove_checkpoints = [&] {
    fs::remove(o.work_dir / "checkpoint.json", ec);
    for (const auto& e : fs::directory_iterator(o.work_dir, ec))
      if (e.path().filename().string().rfind("checkpoint-", 0) == 0) fs::remove(e.path(), ec);
  };
  if (resume && !o.resume && !load_checkpoint(o.work_dir)) remove_checkpoints();
  if (o.resume && ((searched && !same_search) || (checkpointed && saved != key)))
    return common::Error{"cannot resume: the training state in " + o.work_dir.string() + " was made with " +
                         what_differs(saved, key) + "; train again without --resume"};
  if (!resume) {  // a fresh run: nothing an earlier one left is read
    remove_checkpoints();
    fs::remove_all(o.work_dir / "search", ec);
    fs::remove_all(o.work_dir / "gate", ec);
  }
  if (auto st = common::write_file_atomically(file, key.dump()); !st) return st.error();
  fs::remove(o.work_dir / "suite.json", ec);  // the record of older versions, superseded by run.json
  return std::move(**lock);
}

}  // namespace

bool can_resume(const TrainOptions& o) {
  auto file = o.work_dir / "run.json";
  std::ifstream in(file);
  if (!in) return false;
  bool has_state = fs::exists(o.work_dir / "checkpoint.json") || fs::exists(o.work_dir / "search") ||
                   fs::exists(o.work_dir / "gate");
  // An unreadable checkpoint is not resumed (claim_work_dir): the run starts over.
  return has_state && nlohmann::json::parse(in, nullptr, false) == run_key(o) &&  // both parts: retrain's own run
         load_checkpoint(o.work_dir).ok();
}

namespace {

/// TrainOptions::gate: thresholds fitted on the training modules, chosen on
/// the validation ones (or on the training ones when there are none).
common::Result<TrainResult> fit_gate(const TrainOptions& o, const TrainingData& data, const TrainingData* validation,
                                     DefaultDecisionSlot slot, const PolicyModel* parent) {
  for (const char* f : {kGateCost, kGateCalleeUsers, kGateCallerUsers})
    if (std::find(data.feature_names.begin(), data.feature_names.end(), f) == data.feature_names.end())
      return common::Error{std::string("a gate reads the compiler's ") + f + " feature, and this compiler does not send it"};
  PolicyMetadata meta = o.metadata;
  meta.seed = o.seed;
  meta.features = data.feature_names;
  if (parent) meta.parent = parent->metadata().content_hash;  // the lineage; its weights are not a gate's
  auto dir = o.work_dir / "gate";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return common::Error{"cannot create " + dir.string() + ": " + ec.message()};
  // Every compile is deterministic, so figures kept by an interrupted run
  // are the ones this run would measure.
  // Where the gate never opens its compile is the default echo's: the
  // modules it opens on are all that need compiling (few, for a tight rule).
  struct Measured {
    nlohmann::json figures;
    int compiled = 0;   ///< modules compiled by this run for it
    bool kept = false;  ///< read back from an interrupted run: nothing compiled
  };
  auto measure = [&](const GateRule* rule, const TrainingData& on, const char* where) {
    auto file = dir / (std::string(where) + "-" + (rule ? rule->key() : "closed") + ".json");
    if (std::ifstream in(file); in) {
      auto kept = nlohmann::json::parse(in, nullptr, false);
      if (kept.is_object() && kept.contains("uplift_geomean")) return Measured{kept, 0, true};
    }
    std::vector<std::optional<std::int64_t>> known(on.modules.size());
    for (std::size_t i = 0; i < on.modules.size(); ++i) {
      const auto& m = on.modules[i];
      if (!rule || !gate_opens_on(*rule, on.feature_names, m.features, m.default_decisions)) known[i] = m.echo_text;
    }
    Measured r{figures(evaluate(gate_policy(rule, meta), on, o, slot, known)), 0, false};
    r.compiled = static_cast<int>(std::count(known.begin(), known.end(), std::nullopt));
    if (auto st = common::write_file_atomically(file, r.figures.dump()); !st)
      throw std::runtime_error(st.error().message);
    return r;
  };
  auto candidates = gate_candidates(*o.gate);
  if (candidates.empty()) return common::Error{"the gate's grid is empty: give each threshold at least one value"};
  nlohmann::json grid = nlohmann::json::array();
  auto start = Clock::now();
  int measured = 0;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    const auto& c = candidates[k];
    auto m = measure(&c, data, "train");
    const auto& f = m.figures;
    grid.push_back({{"rule", c.describe()},
                    {"max_cost", c.max_cost},
                    {"max_callee_users", c.max_callee_users},
                    {"min_caller_users", c.min_caller_users},
                    {"train", f}});
    measured += m.kept ? 0 : 1;
    if (o.progress) {  // the ETA from the rules this run compiled (kept ones take no time)
      double per = measured ? seconds_since(start) / measured : 0.0;
      o.progress({"gate", static_cast<int>(k + 1), static_cast<int>(candidates.size()), 0, f["uplift_geomean"],
                  per * static_cast<double>(candidates.size() - k - 1), 0, f["no_worse_share"], c.describe(),
                  m.compiled, static_cast<int>(data.modules.size()), m.kept});
    }
  }
  const TrainingData& choose_on = validation ? *validation : data;
  const char* where = validation ? "validation" : "train";
  int chosen = -1;
  nlohmann::json chosen_figures;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    if (!meets_bar(grid[k]["train"], o.no_worse_bar)) continue;
    auto m = validation ? measure(&candidates[k], *validation, "validation") : Measured{grid[k]["train"]};
    const auto& f = m.figures;
    if (validation) {
      grid[k]["validation"] = f;
      if (o.progress) o.progress({"gate-validation", static_cast<int>(k + 1), static_cast<int>(candidates.size()), 0,
                                  f["uplift_geomean"], 0, 0, f["no_worse_share"], candidates[k].describe(),
                                  m.compiled, static_cast<int>(validation->modules.size()), m.kept});
    }
    if (meets_bar(f, o.no_worse_bar) &&
        (chosen < 0 || f["uplift_geomean"].get<double>() > chosen_figures["uplift_geomean"].get<double>()))
      chosen = static_cast<int>(k), chosen_figures = f;
  }
  // None meets the bar: a gate that never opens, measured like the others
  // (the channel's echo of the default need not equal the default compile).
  if (chosen < 0) chosen_figures = measure(nullptr, choose_on, where).figures;
  auto model = gate_policy(chosen < 0 ? nullptr : &candidates[chosen], meta);
  auto prefix = std::string(validation ? "validation_" : "train_");
  nlohmann::json training{
      {"method", "a gate on the compiler's default decision: also inline where the cost, the callee's users and the "
                 "caller's users pass three thresholds, fitted on the training modules (every rule of the grid "
                 "that meets the bar there) and chosen on the validation modules"},
      {"gate", chosen < 0 ? nlohmann::json(nullptr) : nlohmann::json(candidates[chosen].describe())},
      {"gate_grid", grid},
      {"no_worse_bar", o.no_worse_bar},
      {"modules", data.modules.size()},
      {"skipped_modules", data.skipped},
      {"default_decision_slot", slot_feature_name(slot)},
      {"margin", model.metadata().margin},
      {"chosen_on", validation ? "validation" : "training"}};
  for (const auto& [key, value] : chosen_figures.items()) training[prefix + key] = value;
  if (validation) {
    training["validation_modules"] = validation->modules.size();
    training["validation_skipped"] = validation->skipped.size();
  }
  model.metadata().training = training.dump();
  return TrainResult{std::move(model),
                     chosen_figures["uplift_geomean"],
                     chosen_figures["uplift_total"],
                     chosen_figures["wins"],
                     chosen_figures["ties"],
                     chosen_figures["losses"],
                     static_cast<int>(data.modules.size()),
                     static_cast<int>(data.skipped.size()),
                     validation != nullptr,
                     parent != nullptr};
}

common::Result<TrainResult> train_unguarded(const TrainOptions& given) {
  torch::set_num_threads(1);  // determinism, and the compiles want the cores
  std::error_code ec;
  fs::create_directories(given.work_dir, ec);
  if (ec) return common::Error{"cannot create training directory " + given.work_dir.string() + ": " + ec.message()};
  bool resume = false;
  auto claimed = claim_work_dir(given, resume);
  if (!claimed) return claimed.error();
  TrainOptions o = given;
  o.resume = resume;
  // The parent is read once, and first: a bad file fails before minutes of compiles.
  std::optional<PolicyModel> parent;
  if (o.warm_start) {
    auto loaded = PolicyModel::load(*o.warm_start);
    if (!loaded) return loaded.error();
    parent = std::move(*loaded);
  }
  auto slot = detect_default_slot(o.compiler, o.work_dir / "probe");
  if (!slot) return slot.error();
  if (o.progress) o.progress({"collect", 0, static_cast<int>(o.modules.size()), 0, 0, 0});
  auto data = collect_training_data(o, *slot);
  if (!data) return data.error();
  // A warm start keeps its parent's inputs: a parent that reads the
  // unreliable feature (made before it was dropped) gets no margin instead.
  bool reads_unreliable = false;
  if (parent) {
    const auto& f = parent->metadata().features;
    reads_unreliable = std::find(f.begin(), f.end(), kUnreliableFeature) != f.end();
  }
  if (!reads_unreliable) drop_feature(*data, kUnreliableFeature);
  if (reads_unreliable && o.residual_margin > 0)
    return common::Error{"a residual policy needs the compiler's default decision, and warm-start policy " +
                         o.warm_start->string() + " reads " + kUnreliableFeature +
                         ", which the compiler overwrites when it sends it; train without --residual-margin"};
  std::optional<TrainingData> validation;
  if (!o.validation.empty()) {
    TrainOptions vo = o;
    vo.modules = o.validation;
    vo.work_dir = o.work_dir / "validation";
    fs::create_directories(vo.work_dir, ec);
    if (o.progress) o.progress({"collect", 0, static_cast<int>(o.validation.size()), 0, 0, 0});
    auto v = collect_training_data(vo, *slot);
    if (!v) return common::Error{"validation modules: " + v.error().message};
    if (!reads_unreliable) drop_feature(*v, kUnreliableFeature);
    if (v->feature_names != data->feature_names)
      return common::Error{"the validation modules were compiled with another feature set than the training modules"};
    validation = std::move(*v);
  }
  if (o.gate) return fit_gate(o, *data, validation ? &*validation : nullptr, *slot, parent ? &*parent : nullptr);
  const TrainingData* choose_on = validation ? &*validation : &*data;
  if (parent && o.warm_start_if_same_features && parent->metadata().features != data->feature_names) {
    parent.reset();  // afresh: its inputs are not what this compiler sends
    if (reads_unreliable) {  // kept only for the parent's sake
      drop_feature(*data, kUnreliableFeature);
      if (validation) drop_feature(*validation, kUnreliableFeature);
    }
  }

  std::optional<Checkpoint> checkpoint;
  if (o.resume) {
    auto loaded = load_checkpoint(o.work_dir);
    if (!loaded) return loaded.error();
    checkpoint = *loaded;
  }
  Checkpoint state = checkpoint.value_or(Checkpoint{});
  auto saved = [&](const char* what) { return checkpoint_file(o.work_dir, state.iteration, what); };
  auto model = checkpoint ? PolicyModel::load(saved("current.policy"))
                          : warm_up(*data, validation ? &*validation : nullptr, *slot, o,
                                    parent ? &*parent : nullptr, state);
  if (!model) return model.error();
  auto best = checkpoint ? PolicyModel::load(saved("best.policy")) : PolicyModel(*model);
  if (!best) return best.error();
  torch::optim::Adam opt(model->impl().net->parameters(), torch::optim::AdamOptions(o.rl_learning_rate));
  try {
    if (checkpoint) torch::load(opt, saved("optimizer.pt").string());
  } catch (const std::exception&) {
    return common::Error{"cannot resume: the checkpoint's optimizer state " + saved("optimizer.pt").string() +
                         " is missing or corrupt (train again without --resume)"};
  }
  if (!checkpoint) save_checkpoint(*model, *best, state, opt, o.work_dir);  // resuming skips the warm-up

  auto start = Clock::now();
  int first = state.iteration;
  for (int it = state.iteration; it < o.iterations; ++it) {
    double mean_reward = reinforce_iteration(*model, opt, *data, state, it, *slot, o);
    state.iteration = it + 1;
    if (state.iteration % o.eval_every == 0 || state.iteration == o.iterations) {
      auto e = evaluate(*model, *choose_on, o, *slot);
      state.last = figures(e);
      if (better(figures(e), state.best)) state.best = figures(e), *best = PolicyModel(*model);
    }
    save_checkpoint(*model, *best, state, opt, o.work_dir);
    if (o.progress) {
      double per = seconds_since(start) / (state.iteration - first);
      o.progress({"reinforce", state.iteration, o.iterations, mean_reward, state.last["uplift_geomean"],
                  per * (o.iterations - state.iteration), 0, state.last["no_worse_share"]});
    }
  }

  auto training = training_json(o, *data, state, *slot, validation ? "validation_" : "train_");
  auto b = state.best;  // the figures reported: of the chosen checkpoint and margin
  if (validation && reads_unreliable) {
    training["chosen_on"] = "validation";
    training["margin"] = 0;
    training["margin_note"] = std::string("no margin: the warm-start policy reads ") + kUnreliableFeature +
                              ", which the compiler overwrites when it sends its default decision";
  } else if (validation) {
    nlohmann::json grid;
    best->metadata().margin = choose_margin(*best, *validation, *slot, o, state.best, grid);
    for (const auto& row : grid)
      if (row["margin"] == best->metadata().margin) b = row;
    for (const auto& [key, value] : b.items()) training["validation_" + key] = value;
    training["validation_modules"] = validation->modules.size();
    training["validation_skipped"] = validation->skipped.size();
    training["margin"] = best->metadata().margin;
    training["margin_grid"] = grid;
    training["chosen_on"] = "validation";
  } else {
    training["chosen_on"] = "training";
  }
  best->metadata().training = training.dump();
  best->metadata().seed = o.seed;
  return TrainResult{std::move(*best), b["uplift_geomean"], b["uplift_total"], b["wins"], b["ties"], b["losses"],
                     static_cast<int>(data->modules.size()), static_cast<int>(data->skipped.size()),
                     validation.has_value(), parent.has_value()};
}

}  // namespace

common::Result<TrainResult> train(const TrainOptions& o) {
  try {
    return train_unguarded(o);
  } catch (const Diverged& e) {
    return common::Error{std::string(e.what()) + "; the last good checkpoint is in " + o.work_dir.string()};
  } catch (const std::exception& e) {
    // LibTorch refusing a setting (say, a learning rate past float's range):
    // its message's first line, without the backtrace that follows.
    std::string what = e.what();
    return common::Error{"training failed: " + what.substr(0, what.find('\n'))};
  }
}

}  // namespace policy
