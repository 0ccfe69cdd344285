#include "evaluator/evaluation.h"

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

ModuleResult compile_module(const EvaluationOptions& o, const SuiteModule& m, policy::CompatReport* report) {
  ModuleResult out;
  out.name = m.name;
  auto bitcode = o.suite_dir / (m.name + ".bc");
  auto def = object_path(o.work_dir, "default", m.name);
  auto learned = object_path(o.work_dir, "learned", m.name);
  fs::create_directories(def.parent_path());
  fs::create_directories(learned.parent_path());
  out.by_default = finish(policy::compile_default(o.compiler, bitcode, def), def);
  auto runner = o.learned(report);
  out.learned = finish(policy::compile_with_runner(o.compiler, bitcode, learned, *runner, o.work_dir / "learned"), learned);
  return out;
}

}  // namespace

common::Result<EvaluationResult> evaluate(const EvaluationOptions& o) {
  auto start = std::chrono::steady_clock::now();
  EvaluationResult result;
  const auto& modules = o.suite->modules;
  result.modules.resize(modules.size());
  if (modules.empty()) return common::Error{"suite " + o.suite->name + " has no modules"};

  // All modules in parallel; the first learned compile to bind features
  // fills the report, which says afterwards whether the policy could run at all.
  std::atomic<int> next{0}, done{0};
  std::mutex mutex;
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, o.jobs); ++t)
    threads.emplace_back([&] {
      for (int i; (i = next++) < static_cast<int>(modules.size());) {
        policy::CompatReport report;
        auto r = compile_module(o, modules[i], &report);
        std::lock_guard lock(mutex);
        if (i == 0) result.compat = report;  // deterministic: always the first module's binding
        result.modules[i] = std::move(r);
        if (o.progress) o.progress(++done, static_cast<int>(modules.size()), result.modules[i]);
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
