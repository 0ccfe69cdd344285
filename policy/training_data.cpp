#include "policy/training_data.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "common/atomic_file.h"

namespace policy {
namespace fs = std::filesystem;

std::vector<std::string> parallel_for(int n, int jobs, const std::function<void(int)>& f) {
  std::atomic<int> next{0};
  std::vector<std::string> errors(std::max(0, n));
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, jobs); ++t)
    threads.emplace_back([&] {
      for (int i; (i = next++) < n;) {
        try {
          f(i);
        } catch (const std::exception& e) {
          errors[i] = std::string("driftwatch failed: ") + e.what();
        } catch (...) {
          errors[i] = "driftwatch failed: an unknown exception";
        }
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

double geomean(const std::vector<double>& ratios) {
  if (ratios.empty()) return 1;
  double log_sum = 0;
  for (double r : ratios) log_sum += std::log(r);
  return std::exp(log_sum / ratios.size());
}

void append_normalized(const PolicyMetadata& meta, const std::vector<std::vector<double>>& rows,
                       std::vector<float>& out) {
  FeatureBinding identity;
  for (std::size_t i = 0; i < meta.features.size(); ++i) identity.source.push_back(static_cast<int>(i));
  std::vector<float> row(meta.features.size());
  std::vector<std::vector<double>> as_tensors(meta.features.size(), std::vector<double>(1));
  for (const auto& r : rows) {
    if (r.size() != meta.features.size())  // a bug, never input: rows are made for this model
      throw std::logic_error("a feature row of " + std::to_string(r.size()) + " values for a model of " +
                             std::to_string(meta.features.size()) + " features");
    for (std::size_t f = 0; f < r.size(); ++f) as_tensors[f][0] = r[f];
    normalize_inputs(meta, identity, as_tensors, row.data());
    out.insert(out.end(), row.begin(), row.end());
  }
}

std::vector<int> largest_first(const std::vector<std::uintmax_t>& cost) {
  std::vector<int> order(cost.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cost[a] > cost[b]; });
  return order;
}

CompileOutcome compile_reproducibly(const std::string& module, const std::function<CompileOutcome()>& attempt) {
  auto r = attempt();
  if (r.ok || !machine_failure(r)) return r;
  r = attempt();
  // A compile that hangs, is killed or breaks the channel twice may be the
  // decisions' own doing (a sampled trajectory that inlines without end):
  // its result, as a compile error is. What only the machine causes (no
  // binary, a full disk, no memory by the compiler's own words) is not.
  bool machine_alone = r.failure == CompileFailure::NotStarted || r.failure == CompileFailure::Machine;
  if (r.ok || !machine_alone) return r;
  throw common::Fatal("the machine failed a compile of " + module + " twice (" + r.error +
                      "): training stops rather than let the machine decide a result; free it and train again "
                      "(--resume keeps what was saved)");
}

CompileOutcome compile_logged(const std::string& module, const fs::path& bitcode, const CompilerInvocation& cc,
                              const fs::path& obj, const fs::path& dir,
                              const std::function<std::unique_ptr<Runner>()>& inner, DecisionLog& log,
                              bool include_default) {
  return compile_reproducibly(module, [&] {
    log = {};
    auto runner = make_logging_runner(inner(), log);
    return compile_with_runner(cc, bitcode, obj, *runner, dir, include_default);
  });
}

std::string first_error(const std::vector<std::string>& errors) {
  auto failed = std::count_if(errors.begin(), errors.end(), [](const std::string& e) { return !e.empty(); });
  if (failed == 0) return "";
  auto first = *std::find_if(errors.begin(), errors.end(), [](const std::string& e) { return !e.empty(); });
  return failed == 1 ? first : first + " (and " + std::to_string(failed - 1) + " more)";
}

namespace {

/// The default trajectory of one module, or a one-line error.
std::optional<ModuleData> collect_module(const TrainOptions& o, const TrainModule& m, DefaultDecisionSlot slot,
                                         const fs::path& dir, std::string& error, std::vector<std::string>& names) {
  auto obj = dir / "module.o";
  auto cc = compiler_for(o, m.cc1_args);
  auto plain = compile_reproducibly(m.name, [&] { return compile_default(cc, m.bitcode, obj); });
  if (!plain.ok) return error = plain.error, std::nullopt;
  auto default_size = o.measure_text(obj);
  if (!default_size) return error = default_size.error().message, std::nullopt;
  DecisionLog echoed;
  auto e = compile_logged(m.name, m.bitcode, cc, obj, dir, [&] { return make_echo_runner(slot); }, echoed,
                          /*include_default=*/true);
  if (!e.ok) return error = e.error, std::nullopt;
  DecisionLog clean;
  std::vector<double> decisions(echoed.decisions.begin(), echoed.decisions.end());
  auto c = compile_logged(m.name, m.bitcode, cc, obj, dir,
                          [&] { return make_replay_runner(decisions, make_constant_runner(0)); }, clean,
                          /*include_default=*/false);
  if (!c.ok) return error = c.error, std::nullopt;
  if (clean.decisions.size() != echoed.decisions.size())
    return error = "replaying the default decisions asked " + std::to_string(clean.decisions.size()) +
                   " questions instead of " + std::to_string(echoed.decisions.size()),
           std::nullopt;
  auto echo_size = o.measure_text(obj);
  if (!echo_size) return error = echo_size.error().message, std::nullopt;
  names = clean.feature_names;
  ModuleData md{m.name, m.bitcode, *default_size, *echo_size, std::move(clean.features), {}, m.cc1_args};
  for (double d : clean.decisions) md.default_decisions.push_back(d > 0.5 ? 1 : 0);
  return md;
}

}  // namespace

namespace {

/// What the collected data depends on: the compiler command and the modules.
std::string collection_key(const TrainOptions& o) {
  nlohmann::json key{{"compiler", o.compiler.argv}, {"prefix", o.compiler.ml_flag_prefix}};
  for (const auto& m : o.modules) key["modules"].push_back({m.name, m.bitcode.string(), m.cc1_args});
  return key.dump();
}

common::Status save_collected(const TrainingData& data, const TrainOptions& o, const fs::path& file) {
  nlohmann::json j{{"key", collection_key(o)}, {"features", data.feature_names}, {"skipped", data.skipped}};
  for (const auto& m : data.modules)
    j["modules"].push_back({{"name", m.name}, {"bitcode", m.bitcode.string()}, {"default_text", m.default_text},
                            {"echo_text", m.echo_text}, {"rows", m.features}, {"decisions", m.default_decisions},
                            {"cc1_args", m.cc1_args}});
  return common::write_file_atomically(file, j.dump());
}

/// The data a previous run collected with the same compiler and modules.
std::optional<TrainingData> load_collected(const TrainOptions& o, const fs::path& file) {
  std::ifstream in(file);
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.value("key", "") != collection_key(o)) return std::nullopt;
  TrainingData data;
  try {
    data.feature_names = j.at("features").get<std::vector<std::string>>();
    data.skipped = j.at("skipped").get<std::vector<std::string>>();
    for (const auto& m : j.at("modules"))
      data.modules.push_back({m.at("name"), m.at("bitcode").get<std::string>(), m.at("default_text"),
                              m.at("echo_text"), m.at("rows"), m.at("decisions"),
                              m.value("cc1_args", std::vector<std::string>{})});
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
  return data;
}

}  // namespace

common::Result<TrainingData> collect_training_data(const TrainOptions& o, DefaultDecisionSlot slot) {
  auto cache = o.work_dir / "collected.json";
  if (o.resume)
    if (auto saved = load_collected(o, cache)) return std::move(*saved);
  TrainingData data;
  std::vector<std::optional<ModuleData>> per_module(o.modules.size());
  std::vector<std::string> errors(o.modules.size());
  std::vector<std::vector<std::string>> names(o.modules.size());
  // Biggest bitcode first, so no large module is left alone at the end.
  std::vector<std::uintmax_t> bytes;
  for (const auto& m : o.modules) bytes.push_back(fs::exists(m.bitcode) ? fs::file_size(m.bitcode) : 0);
  auto order = largest_first(bytes);
  auto thrown = parallel_for(static_cast<int>(o.modules.size()), o.jobs, [&](int k) {
    int i = order[k];
    auto dir = o.work_dir / "collect" / std::to_string(i);
    fs::create_directories(dir);
    per_module[i] = collect_module(o, o.modules[i], slot, dir, errors[i], names[i]);
  });
  // A module that threw (a compile only the machine fails, failed twice) is
  // not skipped: the same inputs would then train on other modules from one
  // run to the next.
  if (auto why = first_error(thrown); !why.empty()) return common::Error{"collecting the training data: " + why};
  for (std::size_t i = 0; i < o.modules.size(); ++i) {
    if (per_module[i]) data.modules.push_back(std::move(*per_module[i]));
    else data.skipped.push_back(o.modules[i].name + ": " + errors[i]);
    if (data.feature_names.empty()) data.feature_names = names[i];
  }
  if (data.modules.empty())
    return common::Error{"no training module could be compiled" +
                         (data.skipped.empty() ? std::string() : " (first: " + data.skipped.front() + ")")};
  if (auto saved = save_collected(data, o, cache); !saved) return saved.error();
  return data;
}

CompilerInvocation compiler_for(const TrainOptions& o, const std::vector<std::string>& cc1_args) {
  return cc1_args.empty() ? o.compiler : o.compiler.with_module_args(cc1_args);
}

std::vector<std::uintmax_t> decision_counts(const TrainingData& data) {
  std::vector<std::uintmax_t> n;
  for (const auto& m : data.modules) n.push_back(m.default_decisions.size());
  return n;
}

Rollout rollout(const PolicyModel& model, const ModuleData& m, const TrainOptions& o, std::mt19937_64* sampler,
                const fs::path& dir, std::optional<DefaultDecisionSlot> slot) {
  Rollout out;
  PolicyModel local(model);  // the runner's model is used from this thread only
  PolicyRunnerOptions options;
  options.default_slot = slot;
  options.sampler = sampler;
  options.trace = sampler ? &out.trace : nullptr;
  auto obj = dir / "module.o";
  // A second attempt samples as the first did.
  std::optional<std::mt19937_64> sampler_at_start;
  if (sampler) sampler_at_start = *sampler;
  auto compiled = compile_reproducibly(m.name, [&] {
    if (sampler) *sampler = *sampler_at_start;
    out.trace = {};
    auto runner = make_policy_runner(local, nullptr, options);
    return compile_with_runner(compiler_for(o, m.cc1_args), m.bitcode, obj, *runner, dir);
  });
  if (!compiled.ok) return out;
  auto size = o.measure_text(obj);
  if (!size) return out;
  out.ok = true;
  out.text = *size;
  return out;
}

Outcome summarize(const TrainingData& data, std::vector<std::int64_t> text, const std::vector<bool>& failed) {
  Outcome out;
  std::vector<double> ratios;
  double total_default = 0, total_policy = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto d = data.modules[i].default_text;
    // As evaluator/uplift.h: a zero-size module has no ratio worth averaging.
    if (d > 0 && text[i] > 0) ratios.push_back(static_cast<double>(text[i]) / static_cast<double>(d));
    total_default += d;
    total_policy += text[i];
    if (i < failed.size() && failed[i]) {
      ++out.losses, ++out.failed;
      continue;
    }
    (text[i] < d ? out.wins : text[i] == d ? out.ties : out.losses)++;
  }
  out.uplift = 1 - geomean(ratios);
  out.total_uplift = 1 - total_policy / std::max(1.0, total_default);
  out.text = std::move(text);
  return out;
}

void drop_feature(TrainingData& data, const std::string& name) {
  auto it = std::find(data.feature_names.begin(), data.feature_names.end(), name);
  if (it == data.feature_names.end()) return;
  auto k = static_cast<std::size_t>(it - data.feature_names.begin());
  data.feature_names.erase(it);
  for (auto& m : data.modules)
    for (auto& row : m.features)
      if (k < row.size()) row.erase(row.begin() + static_cast<long>(k));
  data.dropped_columns.push_back(k);
}

void drop_columns(const TrainingData& data, std::vector<std::vector<double>>& rows) {
  auto sent = data.feature_names.size() + data.dropped_columns.size();
  for (auto& row : rows) {
    if (row.size() != sent) continue;  // already cut (rows taken from the collected data)
    for (auto k : data.dropped_columns) row.erase(row.begin() + static_cast<long>(k));
  }
}

Outcome evaluate(const PolicyModel& model, const TrainingData& data, const TrainOptions& o,
                 std::optional<DefaultDecisionSlot> slot, const std::vector<std::optional<std::int64_t>>& known) {
  std::vector<std::int64_t> text(data.modules.size());
  std::vector<char> failed(data.modules.size(), 0);  // not vector<bool>: written from several threads
  auto order = largest_first(decision_counts(data));
  auto thrown = parallel_for(static_cast<int>(data.modules.size()), o.jobs, [&](int k) {
    int i = order[k];
    if (static_cast<std::size_t>(i) < known.size() && known[i]) {
      text[i] = *known[i];
      return;
    }
    auto dir = o.work_dir / "eval" / std::to_string(i);
    fs::create_directories(dir);
    auto r = rollout(model, data.modules[i], o, nullptr, dir, slot);
    text[i] = r.ok ? r.text : data.modules[i].default_text;
    failed[i] = !r.ok;
  });
  // A rollout that threw (a compile only the machine fails, failed twice)
  // stops training: counted as a loss, it would let the load choose the
  // checkpoint or rule.
  if (auto why = first_error(thrown); !why.empty()) throw common::Fatal("measuring a policy: " + why);
  return summarize(data, std::move(text), std::vector<bool>(failed.begin(), failed.end()));
}

}  // namespace policy
