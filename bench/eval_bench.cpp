// Evaluation figures on built suites, with the sample compiler dwcc:
//  1. throughput of an evaluation (2 compiles per module, the learned one
//     served over the ML channel, sizes measured) against `xargs -P JOBS`
//     running the same number of plain compiler commands, and the same
//     evaluation where the modules on which the policy took every default
//     decision are compiled once (the default) — alternating, in one run;
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
  fmt::print("| suite | modules | eval, every default compiled | of which linking | xargs -P{0}, as many compiles | "
             "overhead (without linking) | eval, agreeing modules once | compiles | shared/every |\n",
             jobs);
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  // A policy that defers to the default decision needs to know where this compiler sends it.
  policy::PolicyRunnerOptions runner_options;
  {
    policy::CompilerInvocation cc;
    cc.argv = {dwcc, "{input}", "-o", "{output}", "-Oz"};
    runner_options.default_slot = policy::detect_default_slot(cc, work / "probe").take();
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double total_eval = 0;
  for (const auto& dir : suites) {
    auto suite = evaluator::load_suite(dir).take();
    std::vector<double> eval_times, shared_times, xargs_times, link_times;
    int compiles = 0;
    for (int r = 0; r < repeats; ++r) {
      for (bool every : {true, false}) {
        evaluator::EvaluationOptions o;
        o.suite = &suite;
        o.suite_dir = dir;
        o.compiler.argv = {dwcc, "{input}", "-o", "{output}", "-Oz"};
        // At -Oz, as the sample compiler's recipe vouches (share_agreeing_defaults):
        // without it the "agreeing modules once" column would compile everything.
        o.compiler.share_agreeing_defaults = true;
        o.work_dir = work / "eval";
        o.jobs = jobs;
        o.learned = [&model, &runner_options](policy::CompatReport* report) {
          return policy::make_policy_runner_copy(model, report, runner_options);
        };
        o.default_slot = runner_options.default_slot;
        o.compile_every_default = every;
        auto t = Clock::now();
        auto result = evaluator::evaluate(o).take();
        (every ? eval_times : shared_times).push_back(since(t));
        if (every) link_times.push_back(result.link_seconds);
        else compiles = static_cast<int>(2 * suite.modules.size()) - result.defaults_shared;
        fs::remove_all(work / "eval");
      }
      xargs_times.push_back(run_xargs(dwcc, suite, dir, work / "xargs", jobs));
    }
    double e = median(eval_times), x = median(xargs_times), l = median(link_times), sh = median(shared_times);
    total_eval += sh;
    fmt::print("| {} | {} | {:.1f} s | {:.1f} s | {:.1f} s | {:+.1f}% | {:.1f} s | {} of {} | {:.2f}x |\n", suite.name,
               suite.modules.size(), e, l, x, 100 * ((e - l) / x - 1), sh, compiles, 2 * suite.modules.size(),
               sh / e);
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
      auto runner = policy::make_policy_runner_copy(model, nullptr, runner_options);
      t_policy += policy::compile_with_runner(cc, bc, obj, *runner, work / "serial").seconds;
    }
    fmt::print("| {} | {:.1f} s | {:.1f} s | {:.1f} s | {:.3f}x | {:.3f}x |\n", suite.name, t_default, t_constant,
               t_policy, t_constant / t_default, t_policy / t_default);
    std::fflush(stdout);
  }
  fs::remove_all(work);
  return 0;
}
