#include "evaluator/evaluation.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "common/text.h"

namespace evaluator {
namespace fs = std::filesystem;

namespace {

fs::path object_path(const fs::path& work, const char* heuristic, const std::string& module) {
  return work / heuristic / (module + ".o");
}

HeuristicResult finish(const policy::CompileOutcome& c, const fs::path& object) {
  HeuristicResult r;
  r.seconds = c.seconds;
  r.decisions = c.session.decisions;
  if (!c.ok) {
    r.outcome = c.timed_out ? kOutcomeTimeout : kOutcomeCrashed;
    r.message = c.error;
    return r;
  }
  auto sizes = measure_object(object);
  if (!sizes) {
    r.outcome = kOutcomeCrashed;
    r.message = sizes.error().message;
    return r;
  }
  r.sizes = *sizes;
  return r;
}

/// One compile of one module under one heuristic; the objects go to
/// <work>/<heuristic>/<module>.o.
HeuristicResult compile_one(const EvaluationOptions& o, const SuiteModule& m, bool learned,
                            policy::CompatReport* report) {
  auto bitcode = o.suite_dir / (m.name + ".bc");
  auto object = object_path(o.work_dir, learned ? "learned" : "default", m.name);
  fs::create_directories(object.parent_path());
  if (!learned) return finish(policy::compile_default(o.compiler, bitcode, object), object);
  auto runner = o.learned(report);
  return finish(policy::compile_with_runner(o.compiler, bitcode, object, *runner, o.work_dir / "learned"), object);
}

}  // namespace

common::Result<EvaluationResult> evaluate(const EvaluationOptions& o) {
  auto start = std::chrono::steady_clock::now();
  EvaluationResult result;
  const auto& modules = o.suite->modules;
  result.modules.resize(modules.size());
  if (modules.empty()) return common::Error{"suite " + o.suite->name + " has no modules"};

  // Every (module, heuristic) compile is a task, the largest modules first,
  // so the cores stay busy to the end; results land by index, so the outcome
  // does not depend on the order. The first module's learned compile fills
  // the report that says whether the policy could run here at all.
  std::vector<int> order(modules.size());
  std::vector<std::uintmax_t> bytes(modules.size());
  for (std::size_t i = 0; i < modules.size(); ++i) {
    order[i] = static_cast<int>(i);
    std::error_code ec;
    bytes[i] = fs::file_size(o.suite_dir / (modules[i].name + ".bc"), ec);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return bytes[a] > bytes[b]; });
  std::vector<int> remaining(modules.size(), 2);
  for (std::size_t i = 0; i < modules.size(); ++i) result.modules[i].name = modules[i].name;
  std::atomic<int> next{0};
  int done = 0;
  std::mutex mutex;
  std::vector<std::thread> threads;
  const int tasks = static_cast<int>(2 * modules.size());
  for (int t = 0; t < std::max(1, o.jobs); ++t)
    threads.emplace_back([&] {
      for (int k; (k = next++) < tasks;) {
        int i = order[k / 2];
        bool learned = k % 2 == 1;
        policy::CompatReport report;
        auto r = compile_one(o, modules[i], learned, &report);
        std::lock_guard lock(mutex);
        auto& m = result.modules[i];
        (learned ? m.learned : m.by_default) = std::move(r);
        if (learned && i == 0) result.compat = report;
        if (--remaining[i] == 0 && o.progress) o.progress(++done, static_cast<int>(modules.size()), m);
      }
    });
  for (auto& t : threads) t.join();
  if (result.compat.bound + result.compat.missing.size() + result.compat.corrupted.size() > 0 &&
      !result.compat.usable())
    return common::Error{result.modules[0].learned.message + "; compatibility: " + result.compat.summary()};

  std::vector<ModuleSizes> sizes;
  for (const auto& m : result.modules) {
    if (m.both_ok()) sizes.push_back({m.name, m.by_default.sizes.text, m.learned.sizes.text});
    else ++result.failed;
  }
  result.summary = summarize(sizes);
  auto link_start = std::chrono::steady_clock::now();
  result.links = link_groups(*o.suite, result.modules, o.work_dir);
  result.link_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - link_start).count();
  std::vector<ModuleSizes> linked;
  for (const auto& l : result.links)
    if (l.ok) linked.push_back({l.group, l.default_text, l.learned_text});
  result.linked_summary = summarize(linked);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::vector<LinkResult> link_groups(const Suite& suite, const std::vector<ModuleResult>& modules,
                                    const fs::path& work_dir) {
  std::vector<LinkResult> out;
  for (const auto& group : suite.link_groups) {
    LinkResult lr;
    lr.group = group.name;
    auto members = link_group_members(suite, group.name);
    bool cxx = false, all_ok = !members.empty();
    for (const auto& name : members) {
      for (const auto& m : suite.modules)
        if (m.name == name) cxx = cxx || m.language == Language::Cxx;
      for (const auto& r : modules)
        if (r.name == name) all_ok = all_ok && r.both_ok();
    }
    if (!all_ok) {
      lr.message = "a member module did not compile under both heuristics";
      out.push_back(lr);
      continue;
    }
    std::int64_t* sizes[] = {&lr.default_text, &lr.learned_text};
    const char* heuristics[] = {"default", "learned"};
    lr.ok = true;
    for (int h = 0; h < 2 && lr.ok; ++h) {
      auto binary = work_dir / "linked" / heuristics[h] / group.name;
      fs::create_directories(binary.parent_path());
      common::ProcessSpec link;
      link.argv = {cxx ? "clang++-19" : "clang-19", "-o", binary.string()};
      if (group.kind == LinkKind::SharedLibrary) link.argv.push_back("-shared");
      for (const auto& name : members) link.argv.push_back(object_path(work_dir, heuristics[h], name).string());
      link.argv.insert(link.argv.end(), group.flags.begin(), group.flags.end());
      link.timeout = std::chrono::minutes(2);
      auto r = common::run_process(link);
      if (!r || !r->ok()) {
        lr.ok = false;
        lr.message = "link failed: " + (r ? common::last_line(r->output) : r.error().message);
        break;
      }
      auto measured = measure_object(binary);
      if (!measured) {
        lr.ok = false;
        lr.message = measured.error().message;
        break;
      }
      *sizes[h] = measured->text;
    }
    out.push_back(lr);
  }
  return out;
}

}  // namespace evaluator
