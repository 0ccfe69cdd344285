#include "policy/training_data.h"

#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

namespace policy {
namespace fs = std::filesystem;

void parallel_for(int n, int jobs, const std::function<void(int)>& f) {
  std::atomic<int> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, jobs); ++t)
    threads.emplace_back([&] {
      for (int i; (i = next++) < n;) f(i);
    });
  for (auto& t : threads) t.join();
}

double geomean(const std::vector<double>& ratios) {
  if (ratios.empty()) return 1;
  double log_sum = 0;
  for (double r : ratios) log_sum += std::log(r);
  return std::exp(log_sum / ratios.size());
}

common::Result<TrainingData> collect_training_data(const TrainOptions& o, DefaultDecisionSlot slot) {
  TrainingData data;
  std::vector<std::optional<ModuleData>> per_module(o.modules.size());
  std::vector<std::string> errors(o.modules.size());
  std::vector<std::string> names;
  std::mutex names_mutex;
  auto dir = o.work_dir / "collect";
  fs::create_directories(dir);

  parallel_for(static_cast<int>(o.modules.size()), o.jobs, [&](int i) {
    const auto& m = o.modules[i];
    auto obj = dir / (std::to_string(i) + ".o");
    auto plain = compile_default(o.compiler, m.bitcode, obj);
    if (!plain.ok) return void(errors[i] = plain.error);
    auto size = o.measure_text(obj);
    if (!size) return void(errors[i] = size.error().message);
    DecisionLog echoed;
    auto echo = make_logging_runner(make_echo_runner(slot), echoed);
    auto e = compile_with_runner(o.compiler, m.bitcode, obj, *echo, dir, /*include_default=*/true);
    if (!e.ok) return void(errors[i] = e.error);
    DecisionLog clean;
    std::vector<double> decisions(echoed.decisions.begin(), echoed.decisions.end());
    auto replay = make_logging_runner(make_replay_runner(decisions, make_constant_runner(0)), clean);
    auto c = compile_with_runner(o.compiler, m.bitcode, obj, *replay, dir, /*include_default=*/false);
    if (!c.ok) return void(errors[i] = c.error);
    if (clean.decisions.size() != echoed.decisions.size())
      return void(errors[i] = "replaying the default decisions asked " + std::to_string(clean.decisions.size()) +
                              " questions instead of " + std::to_string(echoed.decisions.size()));
    ModuleData md{m.name, m.bitcode, *size, clean.features, {}};
    for (double d : clean.decisions) md.default_decisions.push_back(d > 0.5 ? 1 : 0);
    per_module[i] = std::move(md);
    std::lock_guard lock(names_mutex);
    if (names.empty()) names = clean.feature_names;
  });
  for (std::size_t i = 0; i < o.modules.size(); ++i) {
    if (per_module[i]) data.modules.push_back(std::move(*per_module[i]));
    else data.skipped.push_back(o.modules[i].name + ": " + errors[i]);
  }
  data.feature_names = names;
  if (data.modules.empty())
    return common::Error{"no training module could be compiled" +
                         (data.skipped.empty() ? std::string() : " (first: " + data.skipped.front() + ")")};
  return data;
}

}  // namespace policy
