// Evaluation figures on built suites, with the sample compiler dwcc:
//  1. throughput of an evaluation (2 compiles per module, the learned one
//     served over the ML channel, sizes measured) against `xargs -P JOBS`
//     running the same number of plain compiler commands — alternating, in one run;
//  2. compile time with the policy served vs the default heuristic: every
//     module compiled serially (nothing else running) by default, with the
//     default decisions echoed over the channel (same code, so this is LLVM's
//     ML feature extraction plus the protocol, no model), and with the policy;
//  3. wall time to evaluate one check-in on the given suites.
// Usage: eval_bench DWCC POLICY SUITE_DIR... [--jobs N] [--repeats N]
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "bench/positional_args.h"
#include "common/process.h"
#include "evaluator/evaluation.h"
#include "policy/model.h"
#include "policy/policy_runner.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double run_xargs(const std::string& dwcc, const evaluator::Suite& suite, const fs::path& suite_dir,
                 const fs::path& work, int jobs) {
  fs::create_directories(work);
  std::ofstream cmds(work / "commands");
  for (int copy = 0; copy < 2; ++copy)
    for (size_t i = 0; i < suite.modules.size(); ++i)
      cmds << dwcc << " " << (suite_dir / (suite.modules[i].name + ".bc")).string() << " -o "
           << (work / (std::to_string(copy) + "-" + std::to_string(i) + ".o")).string() << " -Oz\n";
  cmds.close();
  common::ProcessSpec x;
  x.argv = {"sh", "-c", "xargs -d '\\n' -n 1 -P " + std::to_string(jobs) + " sh -c < " + (work / "commands").string()};
  auto t = Clock::now();
  auto r = common::run_process(x).take();
  double s = since(t);
  if (!r.ok()) fmt::print(stderr, "xargs: {}\n", r.describe());
  fs::remove_all(work);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kUsage = "eval_bench DWCC POLICY SUITE_DIR... [--jobs N] [--repeats N]";
  if (argc < 4) {
    fmt::print(stderr, "usage: {}\n", kUsage);
    return 2;
  }
  std::string dwcc = argv[1];
  auto model = policy::PolicyModel::load(argv[2]).take();
  policy::use_one_thread();
  std::vector<fs::path> suites;
  int jobs = 2, repeats = 2;
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--jobs") jobs = bench::positive_number(bench::option_value(argc, argv, i, kUsage), kUsage);
    else if (a == "--repeats") repeats = bench::positive_number(bench::option_value(argc, argv, i, kUsage), kUsage);
    else suites.push_back(a);
  }
  std::string tmpl = "/tmp/dw-evalbench-XXXXXX";
  fs::path work = mkdtemp(tmpl.data());
  fmt::print("driftwatch eval_bench: policy {} ({}), {} jobs, {} alternating repeats\n\n", model.metadata().name,
             model.metadata().content_hash.substr(0, 12), jobs, repeats);
  fmt::print("| suite | modules | compiles | driftwatch eval | of which linking | xargs -P{} | overhead (without linking) |\n",
             jobs);
  fmt::print("|---|---:|---:|---:|---:|---:|---:|\n");
  double total_eval = 0;
  for (const auto& dir : suites) {
    auto suite = evaluator::load_suite(dir).take();
    std::vector<double> eval_times, xargs_times, link_times;
    for (int r = 0; r < repeats; ++r) {
      evaluator::EvaluationOptions o;
      o.suite = &suite;
      o.suite_dir = dir;
      o.compiler.argv = {dwcc, "{input}", "-o", "{output}", "-Oz"};
      o.work_dir = work / "eval";
      o.jobs = jobs;
      o.learned = [&model](policy::CompatReport* report) { return policy::make_policy_runner_copy(model, report); };
      auto t = Clock::now();
      auto result = evaluator::evaluate(o).take();
      eval_times.push_back(since(t));
      link_times.push_back(result.link_seconds);
      fs::remove_all(work / "eval");
      xargs_times.push_back(run_xargs(dwcc, suite, dir, work / "xargs", jobs));
    }
    std::sort(eval_times.begin(), eval_times.end());
    std::sort(xargs_times.begin(), xargs_times.end());
    std::sort(link_times.begin(), link_times.end());
    double e = eval_times[eval_times.size() / 2], x = xargs_times[xargs_times.size() / 2];
    double l = link_times[link_times.size() / 2];
    total_eval += e;
    fmt::print("| {} | {} | {} | {:.1f} s | {:.1f} s | {:.1f} s | {:+.1f}% |\n", suite.name, suite.modules.size(),
               2 * suite.modules.size(), e, l, x, 100 * ((e - l) / x - 1));
    std::fflush(stdout);
  }
  fmt::print("\none check-in on these suites: {:.1f} s with {} jobs\n", total_eval, jobs);

  fmt::print("\ncompile time, serial, summed over the suite:\n\n");
  fmt::print("| suite | default | channel, default echoed | channel, policy | echoed/default | policy/default |\n|---|---:|---:|---:|---:|---:|\n");
  for (const auto& dir : suites) {
    auto suite = evaluator::load_suite(dir).take();
    policy::CompilerInvocation cc;
    cc.argv = {dwcc, "{input}", "-o", "{output}", "-Oz"};
    fs::create_directories(work / "serial");
    auto slot = policy::detect_default_slot(cc, work / "serial").take();
    double t_default = 0, t_constant = 0, t_policy = 0;
    for (const auto& m : suite.modules) {
      auto bc = dir / (m.name + ".bc");
      auto obj = work / "serial" / "x.o";
      t_default += policy::compile_default(cc, bc, obj).seconds;
      auto echo = policy::make_echo_runner(slot);
      t_constant += policy::compile_with_runner(cc, bc, obj, *echo, work / "serial", true).seconds;
      auto runner = policy::make_policy_runner_copy(model, nullptr);
      t_policy += policy::compile_with_runner(cc, bc, obj, *runner, work / "serial").seconds;
    }
    fmt::print("| {} | {:.1f} s | {:.1f} s | {:.1f} s | {:.3f}x | {:.3f}x |\n", suite.name, t_default, t_constant,
               t_policy, t_constant / t_default, t_policy / t_default);
    std::fflush(stdout);
  }
  fs::remove_all(work);
  return 0;
}
