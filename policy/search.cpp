#include "policy/search.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <mutex>
#include <numeric>

#include "common/atomic_file.h"

namespace policy {
namespace fs = std::filesystem;

namespace {

/// Compiles with `prefix` replayed and the default heuristic beyond it; the
/// log receives every answer given. nullopt when the compile or measure fails.
std::optional<std::int64_t> try_decisions(const TrainOptions& o, const ModuleData& m, DefaultDecisionSlot slot,
                                          const std::vector<double>& prefix, DecisionLog& log, const fs::path& dir) {
  auto obj = dir / "module.o";
  auto r = compile_logged(m.name, m.bitcode, compiler_for(o, m.cc1_args), obj, dir,
                          [&] { return make_replay_runner(prefix, make_echo_runner(slot)); }, log,
                          /*include_default=*/true);
  if (!r.ok) return std::nullopt;
  auto size = o.measure_text(obj);
  if (!size) return std::nullopt;
  return *size;
}

SearchedModule unchanged(const ModuleData& m, int trials, std::vector<int> rejected, std::vector<TriedFlip> tried) {
  return {m.echo_text, m.default_decisions, m.features, trials, 0, {}, std::move(rejected), std::move(tried)};
}

/// The clean features of the best trajectory: replayed without
/// include-default, which corrupts callee_basic_block_count on LLVM 19.
bool fill_clean_features(const TrainOptions& o, const ModuleData& m, SearchedModule& s, const fs::path& dir) {
  DecisionLog clean;
  std::vector<double> all(s.decisions.begin(), s.decisions.end());
  auto obj = dir / "module.o";
  auto r = compile_logged(m.name, m.bitcode, compiler_for(o, m.cc1_args), obj, dir,
                          [&] { return make_replay_runner(all, make_constant_runner(0)); }, clean,
                          /*include_default=*/false);
  if (!r.ok || clean.decisions.size() != s.decisions.size()) return false;
  auto size = o.measure_text(obj);
  if (!size || *size != s.text) return false;  // the compiler must reproduce the searched object
  s.features = std::move(clean.features);
  return true;
}

/// The decisions most worth flipping in a module: those where the policy
/// is least sure of the default's answer, i.e. near the heuristic's boundary
/// (flips far from it are unlikely to help, and a policy could not learn them).
std::vector<int> flip_candidates(const PolicyModel& model, const ModuleData& m, int count) {
  auto width = model.metadata().features.size();
  std::vector<float> x;
  append_normalized(model.metadata(), m.features, x);
  std::vector<double> other(m.features.size());
  for (std::size_t i = 0; i < other.size(); ++i) {
    double score = model.score(x.data() + i * width);  // > 0: inline
    other[i] = m.default_decisions[i] ? -score : score;  // the logit of the answer the default did not give
  }
  std::vector<int> order(other.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return other[a] > other[b]; });
  order.resize(std::min<std::size_t>(order.size(), static_cast<std::size_t>(count)));
  return order;
}

}  // namespace

int search_trials(std::size_t decisions, int max_trials, double decision_budget) {
  if (decisions == 0) return 0;
  auto affordable = static_cast<int>(decision_budget / static_cast<double>(decisions));
  return std::clamp(affordable, std::min(2, max_trials), max_trials);
}

SearchedModule search_module(const TrainOptions& o, const ModuleData& m, DefaultDecisionSlot slot,
                             std::vector<int> candidates, const fs::path& dir) {
  std::sort(candidates.begin(), candidates.end());
  std::vector<double> best(m.default_decisions.begin(), m.default_decisions.end());
  std::int64_t best_text = m.echo_text;
  int trials = 0;
  std::vector<int> flipped, rejected;
  std::vector<TriedFlip> tried;
  for (int index : candidates) {
    // A kept flip can shorten the trajectory: later indices may no longer exist.
    if (index >= static_cast<int>(best.size())) break;
    std::vector<double> prefix(best.begin(), best.begin() + index + 1);
    prefix.back() = prefix.back() > 0.5 ? 0 : 1;
    DecisionLog log;
    auto text = try_decisions(o, m, slot, prefix, log, dir);
    ++trials;
    tried.emplace_back(index, text ? std::optional<std::int64_t>(*text - best_text) : std::nullopt);
    // A shrink below the minimum gain is kept out: a few bytes are within
    // what a register allocation or an alignment alone can make.
    if (text && *text <= best_text - std::max<std::int64_t>(1, o.search_min_gain)) {
      best = log.decisions;
      best_text = *text;
      flipped.push_back(index);
    } else {
      rejected.push_back(index);
    }
  }
  if (flipped.empty()) return unchanged(m, trials, rejected, tried);
  SearchedModule s{best_text, {}, {}, trials, static_cast<int>(flipped.size()), flipped, rejected, tried};
  for (double d : best) s.decisions.push_back(d > 0.5 ? 1 : 0);
  if (!fill_clean_features(o, m, s, dir)) return unchanged(m, trials, rejected, tried);
  return s;
}

std::vector<SearchedModule> search_all(const PolicyModel& model, const TrainingData& data, DefaultDecisionSlot slot,
                                       const TrainOptions& o) {
  auto n = data.modules.size();
  std::vector<SearchedModule> found(n);
  std::vector<int> trials(n);
  std::vector<std::uintmax_t> cost(n);  // compiles × decisions: roughly the compile time
  for (std::size_t i = 0; i < n; ++i) {
    trials[i] = search_trials(data.modules[i].default_decisions.size(), o.search_trials, o.search_budget);
    cost[i] = trials[i] * data.modules[i].default_decisions.size();
  }
  double total_cost = std::accumulate(cost.begin(), cost.end(), 0.0), done_cost = 0, log_ratio = 0;
  int done = 0;
  std::mutex mutex;
  std::optional<common::Error> save_error;  // thrown once the workers are done, not from one of them
  auto start = std::chrono::steady_clock::now();
  auto order = largest_first(cost);
  auto thrown = parallel_for(static_cast<int>(n), o.jobs, [&](int k) {
    int i = order[k];
    const auto& m = data.modules[i];
    auto dir = o.work_dir / "search" / std::to_string(i);
    fs::create_directories(dir);
    if (auto saved = load_searched(dir / "result.json", m)) {
      found[i] = std::move(*saved);
    } else {
      PolicyModel local(model);  // score() is single-threaded
      found[i] = search_module(o, m, slot, flip_candidates(local, m, trials[i]), dir);
      if (auto saved = save_searched(found[i], m, dir / "result.json"); !saved) {
        std::lock_guard lock(mutex);
        if (!save_error) save_error = saved.error();
      }
    }
    std::lock_guard lock(mutex);
    done_cost += cost[i];
    log_ratio += std::log((std::min(found[i].text, m.default_text) + 0.01) / (m.default_text + 0.01));
    if (o.progress && (++done % 10 == 0 || done == static_cast<int>(n))) {
      double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      double eta = done_cost > 0 ? elapsed * (total_cost - done_cost) / done_cost : 0;
      o.progress({"search", done, static_cast<int>(n), -log_ratio / done, 1 - std::exp(log_ratio / n), eta});
    }
  });
  // A module whose search threw (a compile only the machine fails, failed
  // twice) stops training: kept as its default trajectory, it would make the
  // same seed train on other targets from one run to the next. The modules
  // searched are saved, for --resume.
  if (auto why = first_error(thrown); !why.empty()) throw common::Fatal("the greedy search: " + why);
  if (save_error) throw common::Fatal(save_error->message);
  return found;
}

common::Status save_searched(const SearchedModule& s, const ModuleData& m, const fs::path& file) {
  nlohmann::json tried = nlohmann::json::array();
  for (const auto& [index, change] : s.tried) tried.push_back({index, change ? nlohmann::json(*change) : nullptr});
  nlohmann::json j{{"module", m.name}, {"text", s.text},         {"trials", s.trials},
                   {"kept", s.kept},   {"rejected", s.rejected}, {"tried", tried}};
  // An unchanged module is the default trajectory, which collection recomputes.
  if (s.kept > 0) j.update({{"decisions", s.decisions}, {"features", s.features}, {"flipped", s.flipped}});
  return common::write_file_atomically(file, j.dump());
}

std::optional<SearchedModule> load_searched(const fs::path& file, const ModuleData& m) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  // Older runs did not record the module: theirs are taken as they were.
  if (j.contains("module") && j["module"] != m.name) return std::nullopt;
  SearchedModule s;
  try {
    s.text = j.at("text");
    s.trials = j.at("trials");
    s.kept = j.at("kept");
    s.rejected = j.at("rejected").get<std::vector<int>>();
    std::vector<TriedFlip> tried;
    if (j.contains("tried"))  // older runs did not record it
      for (const auto& t : j["tried"])
        tried.emplace_back(t.at(0).get<int>(), t.at(1).is_null() ? std::nullopt
                                                                 : std::optional<std::int64_t>(t.at(1).get<std::int64_t>()));
    if (s.kept == 0) return unchanged(m, s.trials, s.rejected, tried);
    s.tried = std::move(tried);
    s.decisions = j.at("decisions").get<std::vector<int>>();
    s.features = j.at("features").get<std::vector<std::vector<double>>>();
    s.flipped = j.at("flipped").get<std::vector<int>>();
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return s;
}

}  // namespace policy
