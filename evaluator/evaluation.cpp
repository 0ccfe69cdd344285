#include "evaluator/evaluation.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "common/hash.h"
#include "common/process.h"
#include "common/text.h"
#include "evaluator/corpus.h"

namespace evaluator {
namespace fs = std::filesystem;

namespace {

fs::path object_path(const fs::path& work, const char* heuristic, const std::string& module) {
  return work / heuristic / (module + ".o");
}

const char* outcome_of(policy::CompileFailure f) {
  switch (f) {
    case policy::CompileFailure::TimedOut: return kOutcomeTimeout;
    case policy::CompileFailure::Refused: return kOutcomeRefused;
    case policy::CompileFailure::Channel: return kOutcomeChannelError;
    case policy::CompileFailure::NotStarted:
    case policy::CompileFailure::Machine: return kOutcomeInternalError;
    default: return kOutcomeCrashed;
  }
}

HeuristicResult finish(const policy::CompileOutcome& c, const fs::path& object, bool learned) {
  HeuristicResult r;
  r.seconds = c.seconds;
  r.decisions = c.session.decisions;
  r.consulted = c.session.connected;
  if (!c.ok) {
    r.outcome = outcome_of(c.failure);
    r.message = c.error;
    return r;
  }
  // A module without call sites still opens the channel and sends the
  // header; a compiler that never did ignored the ML flags.
  if (learned && !c.session.connected) {
    r.outcome = kOutcomeNotConsulted;
    r.message = "the compiler never opened the ML channel (no header received)";
    return r;
  }
  auto sizes = measure_object(object);
  if (!sizes) {
    // Written, but not an object: the compiler's (or its recipe's) doing on
    // every attempt, as a compile that writes nothing is. Taken for the
    // machine's, it would fail the job every night and store nothing.
    if (auto what = not_an_object(object)) {
      r.outcome = kOutcomeCrashed;
      r.message = "the compiler exited 0 but wrote " + *what + ", not an object file (a compile line asking for -S, "
                  "-emit-llvm or -flto?)";
      return r;
    }
    r.outcome = kOutcomeBadObject;
    r.message = sizes.error().message;
    return r;
  }
  r.sizes = *sizes;
  return r;
}

/// One compile of one module under one heuristic; the objects go to
/// <work>/<heuristic>/<module>.o. A learned compile counts its departures
/// from the default into `departures` when its runner asks for the default.
HeuristicResult compile_one(const EvaluationOptions& o, const policy::CompilerInvocation& cc, const SuiteModule& m,
                            bool learned, policy::CompatReport* report, policy::DepartureCount* departures) {
  auto bitcode = o.suite_dir / (m.name + ".bc");
  auto object = object_path(o.work_dir, learned ? "learned" : "default", m.name);
  fs::create_directories(object.parent_path());
  if (!learned) return finish(policy::compile_default(cc, bitcode, object), object, false);
  auto runner = o.learned(report);
  if (departures && o.default_slot && runner->wants_default_decision())
    runner = policy::make_departure_counter(std::move(runner), *o.default_slot, *departures);
  return finish(policy::compile_with_runner(cc, bitcode, object, *runner, o.work_dir / "learned"), object, true);
}

/// The same, where anything thrown (filesystem errors, a policy that cannot
/// be copied) becomes this compile's outcome: an exception escaping a worker
/// thread would end the process.
HeuristicResult compile_guarded(const EvaluationOptions& o, const policy::CompilerInvocation& cc, const SuiteModule& m,
                                bool learned, policy::CompatReport* report,
                                policy::DepartureCount* departures = nullptr) {
  try {
    return compile_one(o, cc, m, learned, report, departures);
  } catch (const std::exception& e) {
    HeuristicResult r;
    r.outcome = kOutcomeInternalError;
    r.message = std::string("driftwatch failed on this compile: ") + e.what();
    return r;
  }
}

/// The default's result for a module whose learned compile took every
/// default decision: the learned object, copied to where the default's goes
/// (link groups read it there). Nullopt when it cannot be copied.
std::optional<HeuristicResult> shared_default(const EvaluationOptions& o, const std::string& module,
                                              const HeuristicResult& learned) {
  std::error_code ec;
  auto to = object_path(o.work_dir, "default", module);
  fs::create_directories(to.parent_path(), ec);
  fs::copy_file(object_path(o.work_dir, "learned", module), to, fs::copy_options::overwrite_existing, ec);
  if (ec) return std::nullopt;
  HeuristicResult r;
  r.sizes = learned.sizes;
  r.shared = true;
  return r;
}

bool same_bytes(const fs::path& a, const fs::path& b) {
  auto x = common::sha256_file(a), y = common::sha256_file(b);
  return x && y && *x == *y;
}

/// Compile tasks handed to worker threads, front first; a finished task may
/// add one (a module's default compile, once its learned one is known).
struct Task {
  int module;
  bool learned;
};
class TaskQueue {
 public:
  explicit TaskQueue(std::deque<Task> tasks) : tasks_(std::move(tasks)) {}
  /// The next task, waiting while others run that may add one; nullopt when all are done.
  std::optional<Task> take() {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [&] { return !tasks_.empty() || running_ == 0; });
    if (tasks_.empty()) return std::nullopt;
    auto t = tasks_.front();
    tasks_.pop_front();
    ++running_;
    return t;
  }
  void done(std::optional<Task> follow) {
    std::lock_guard lock(mutex_);
    if (follow) tasks_.push_back(*follow);
    --running_;
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Task> tasks_;
  int running_ = 0;
};

void run_tasks(TaskQueue& queue, int jobs, const std::function<std::optional<Task>(Task)>& run) {
  std::vector<std::thread> threads;
  // A job called off stops the compiles its threads run, and starts no more.
  const auto* stop = common::StopScope::current();
  for (int t = 0; t < std::max(1, jobs); ++t) {
    try {
      threads.emplace_back([&, stop] {
        common::StopScope scope(stop);
        while (auto task = queue.take()) queue.done(common::StopScope::stopped() ? std::nullopt : run(*task));
      });
    } catch (const std::system_error&) {
      // The system gives no more threads: those started do the work. Thrown
      // on with threads running, it would end the process (std::terminate).
      if (threads.empty()) throw;
      break;
    }
  }
  for (auto& t : threads) t.join();
}

}  // namespace

bool HeuristicResult::failed_outside_compiler() const {
  return outcome == kOutcomeInternalError || outcome == kOutcomeBadObject;
}

bool HeuristicResult::machine_failure() const {
  if (message.starts_with(kFailedAgainAloneNote)) return false;
  if (outcome == kOutcomeCrashed) return policy::ran_out_of_memory(message);
  return std::any_of(std::begin(kMachineOutcomes), std::end(kMachineOutcomes),
                     [&](const char* o) { return outcome == o; });
}

namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

/// An imported corpus says how each module compiles (its .cmd, or the
/// global override). With a compiler that takes a -cc1 line, each module is
/// compiled that way, as ml-compiler-opt's runner does; with one that cannot
/// (dwcc), every module gets the recipe's one line and a warning says so.
/// Suites driftwatch builds itself are meant for the recipe's line.
common::Result<std::vector<policy::CompilerInvocation>> corpus_commands(const EvaluationOptions& o,
                                                                        std::vector<std::string>& warnings) {
  std::vector<policy::CompilerInvocation> out;
  if (o.suite->origin.kind != "imported-corpus") return out;
  auto corpus = read_corpus(o.suite_dir);
  if (!corpus) return corpus.error();
  if (o.compiler.cc1.empty()) {
    auto first = read_module_command(o.suite_dir, *corpus, o.suite->modules.front().name);
    warnings.push_back("the compiler cannot take the corpus's own command lines: its " +
                       std::to_string(o.suite->modules.size()) + " modules were compiled with the recipe's one line (" +
                       joined(o.compiler.argv) + ")" +
                       (first && !first->empty()
                            ? ", not as their .cmd says (" + o.suite->modules.front().name + ": " + joined(*first) + ")"
                            : std::string()) +
                       "; a recipe whose [compile] has cc1 honours them");
    return out;
  }
  for (const auto& m : o.suite->modules) {
    auto args = read_module_command(o.suite_dir, *corpus, m.name);
    if (!args) return args.error();
    if (auto st = check_module_command(m.name, *args); !st) return st.error();
    out.push_back(o.compiler.with_module_args(*args));
  }
  return out;
}

/// Why the evaluation failed as a whole, or "" when it did not: then no
/// uplift it could report would mean anything. Transient when a module
/// failed by the machine's doing: another attempt may compile it.
common::Error whole_failure(const EvaluationResult& r) {
  const HeuristicResult* refused = nullptr;
  const ModuleResult *first_failed = nullptr, *first_unasked = nullptr;
  // Unasked: the default compile worked, the learned one never opened the
  // channel — it ignored the ML flags, or rejected them (a renamed option).
  int consulted = 0, unasked = 0;
  for (const auto& m : r.modules) {
    consulted += m.learned.consulted;
    // A compile killed before it sent the header (SIGKILL) is the machine's
    // doing, not a compiler that ignored the flags.
    if (m.by_default.ok() && !m.learned.consulted &&
        (m.learned.not_consulted() || (m.learned.outcome == kOutcomeCrashed && !m.learned.machine_failure()))) {
      ++unasked;
      if (!first_unasked) first_unasked = &m;
    }
    if (!refused && m.learned.outcome == kOutcomeRefused) refused = &m.learned;
    if (!first_failed && !m.both_ok()) first_failed = &m;
  }
  if (r.compat.known && !r.compat.usable())
    return {(refused ? refused->message + "; " : std::string()) + "compatibility: " + r.compat.summary()};
  if (consulted == 0 && unasked > 0)
    return {"the compiler never consulted the policy: check the ML flags (" + std::to_string(unasked) + " of " +
            std::to_string(r.modules.size()) + " learned compiles never opened the ML channel; first: " +
            first_unasked->name + ": " + first_unasked->learned.message + ")"};
  if (r.summary.modules > 0 || !first_failed) return {};
  // A failure of the machine is named first: it is why another attempt may do better.
  const HeuristicResult* shown = nullptr;
  for (const auto& m : r.modules)
    for (const auto* h : {&m.by_default, &m.learned})
      if (!shown && h->machine_failure()) shown = h, first_failed = &m;
  if (!shown) shown = first_failed->by_default.ok() ? &first_failed->learned : &first_failed->by_default;
  bool transient = shown->machine_failure();
  // The default heuristic never asks the policy: where it compiled nothing
  // and the compiler failed some of it by itself, the compiler is broken,
  // also when others hung or were killed. Never "the policy cannot run
  // here", which opens an alert and asks for a retraining. A machine failure
  // among them is worth another attempt; the last stores the compiler as
  // broken. Where the machine failed every default, it is the machine's.
  const ModuleResult* own = nullptr;  // the first default the compiler failed by itself
  for (const auto& m : r.modules)
    if (!own && !m.by_default.ok() && !m.by_default.machine_failure()) own = &m;
  bool no_default = std::none_of(r.modules.begin(), r.modules.end(), [](const auto& m) { return m.by_default.ok(); });
  if (own && no_default)
    return {std::string(kCompilerBrokenError) + " (first: " + own->name + ": " + own->by_default.outcome + ": " +
                own->by_default.message + ")",
            transient};
  auto said = [&] {
    return first_failed->name + ", " + (shown == &first_failed->learned ? "learned" : "default") + ": " +
           shown->outcome + ": " + shown->message + ")";
  };
  if (no_default) {
    // The machine failed every default, which never asks the policy: on no
    // attempt is this the policy's doing. Defaults that hang or are killed
    // on every attempt may be the compiler's own (a loop, memory without
    // end), as a build that times out on every attempt is recorded so too:
    // the last attempt stores a broken compiler. Failed by driftwatch or the
    // disk alone, they are the machine's, whatever the attempt.
    const ModuleResult* stuck = nullptr;
    for (const auto& m : r.modules)
      if (!stuck && !m.by_default.failed_outside_compiler()) stuck = &m;
    if (stuck)
      return {std::string(kCompilerBrokenError) + " (the machine failed, or it hung or was killed on, every default "
                                                  "compile; first: " + stuck->name + ": " + stuck->by_default.outcome +
                  ": " + stuck->by_default.message + ")",
              true};
    return {"no module compiled under both heuristics (the machine failed every default compile; first: " + said(), true,
            true};
  }
  // Where the learned compile failed outside the compiler (driftwatch, the
  // disk), or was killed before it asked the policy anything, the policy
  // had no part in it either. (One that hangs in ML mode before it asks,
  // every time, is the compiler's ML mode: the policy cannot run there.)
  bool outside_only = std::all_of(r.modules.begin(), r.modules.end(), [](const auto& m) {
    return !m.by_default.ok() || m.learned.ok() || m.learned.failed_outside_compiler() ||
           (m.learned.machine_failure() && m.learned.outcome != kOutcomeTimeout && !m.learned.consulted);
  });
  return {"no module compiled under both heuristics (" + std::string(transient ? "the machine failed " : "first: ") +
              said(),
          transient, transient && outside_only};
}

/// Compiles the default of a few modules whose default was shared, to
/// check the premise: where the policy took every default decision, the
/// compiler's ML mode makes the default's object, byte for byte. The
/// middle-sized of those that asked the policy anything are checked (the
/// largest would cost the most). One that differs means no shared default
/// can be trusted: every one is compiled, and a warning says so.
template <typename CompilerOf>
void check_shared_defaults(const EvaluationOptions& o, const std::vector<SuiteModule>& modules,
                           const std::vector<std::uintmax_t>& bytes, const CompilerOf& cc_of,
                           EvaluationResult& result) {
  std::vector<int> shared, asked;
  for (std::size_t i = 0; i < modules.size(); ++i)
    if (result.modules[i].by_default.shared) {
      shared.push_back(static_cast<int>(i));
      if (result.modules[i].learned.decisions > 0) asked.push_back(static_cast<int>(i));
    }
  auto& pool = asked.empty() ? shared : asked;
  std::stable_sort(pool.begin(), pool.end(), [&](int a, int b) { return bytes[a] < bytes[b]; });
  std::size_t n = std::min<std::size_t>(kSharedDefaultChecks, pool.size()), first = (pool.size() - n) / 2;
  std::vector<int> checked(pool.begin() + first, pool.begin() + first + n);
  std::mutex mutex;
  std::string diverged;
  auto compile_defaults = [&](const std::vector<int>& which, bool compare) {
    std::deque<Task> tasks;
    for (int i : which) tasks.push_back({i, false});
    TaskQueue queue(std::move(tasks));
    run_tasks(queue, o.jobs, [&](Task t) -> std::optional<Task> {
      auto r = compile_guarded(o, cc_of(t.module), modules[t.module], false, nullptr);
      bool same = r.ok() && same_bytes(object_path(o.work_dir, "default", modules[t.module].name),
                                       object_path(o.work_dir, "learned", modules[t.module].name));
      std::lock_guard lock(mutex);
      // A default the machine failed says nothing of the compiler.
      if (compare && !same && !r.machine_failure() && diverged.empty()) diverged = modules[t.module].name;
      result.modules[t.module].by_default = std::move(r);
      return std::nullopt;
    });
  };
  compile_defaults(checked, true);
  // Checks the machine failed every one of verify nothing: sharing then
  // rests on an unchecked premise, so every default is compiled instead.
  bool unverified = !checked.empty() && std::none_of(checked.begin(), checked.end(), [&](int i) {
    return result.modules[i].by_default.ok();
  });
  if (!diverged.empty() || unverified) {
    result.warnings.push_back(
        diverged.empty() ? "the machine failed every check of a shared default (" + std::to_string(checked.size()) +
                               " compiles): every module's default was compiled"
                         : "the compiler's default and its ML mode made different objects of " + diverged +
                               " although the policy took every default decision there: every module's default "
                               "was compiled");
    std::vector<int> rest;
    for (int i : shared)
      if (result.modules[i].by_default.shared) rest.push_back(i);
    compile_defaults(rest, false);
  }
  result.defaults_shared = result.defaults_checked = 0;
  for (const auto& m : result.modules) result.defaults_shared += m.by_default.shared;
  if (diverged.empty())
    for (int i : checked) result.defaults_checked += result.modules[i].by_default.ok();
}

}  // namespace

bool may_share_defaults(const policy::CompilerInvocation& compiler, bool compile_every_default,
                        const fs::path& suite_dir, const Suite& suite) {
  // The recipe vouches for its compile line, but not for the bitcode: a
  // suite made at -O2 (`--opt-level keep`) would measure its defaults wrong
  // if shared, as would an imported corpus's own lines.
  return compiler.share_agreeing_defaults && !compile_every_default &&
         corpus_made_at_oz(suite_dir, module_names(suite));
}

common::Result<EvaluationResult> evaluate(const EvaluationOptions& o) {
  auto start = std::chrono::steady_clock::now();
  EvaluationResult result;
  const auto& modules = o.suite->modules;
  result.modules.resize(modules.size());
  if (modules.empty()) return common::Error{"suite " + o.suite->name + " has no modules"};

  // Every (module, heuristic) compile is a task, the largest modules first,
  // so the cores stay busy to the end; results land by index, so the outcome
  // does not depend on the order. Every learned compile's feature binding
  // is merged, in suite order, into the report that says whether the policy
  // could run here.
  std::vector<int> order(modules.size());
  std::vector<std::uintmax_t> bytes(modules.size());
  // A suite that lost a module's bitcode, or whose corpus cannot be read, is
  // the suite's fault, not the check-in's: never stored as its result (each
  // compile would read as the compiler failing on it).
  auto suite_broken = [&](const std::string& why) {
    return common::Error{"suite " + o.suite->name + " (" + o.suite_dir.string() + "): " + why, true, true};
  };
  for (std::size_t i = 0; i < modules.size(); ++i) {
    order[i] = static_cast<int>(i);
    std::error_code ec;
    bytes[i] = fs::file_size(o.suite_dir / (modules[i].name + ".bc"), ec);
    if (ec) return suite_broken(modules[i].name + ".bc: " + ec.message() + "; build the suite again");
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return bytes[a] > bytes[b]; });
  auto own = corpus_commands(o, result.warnings);
  if (!own) return suite_broken(own.error().message);
  std::vector<int> remaining(modules.size(), 2);
  std::vector<policy::CompatReport> reports(modules.size());
  for (std::size_t i = 0; i < modules.size(); ++i) result.modules[i].name = modules[i].name;
  const auto& cc_of = [&](int i) -> const policy::CompilerInvocation& { return own->empty() ? o.compiler : (*own)[i]; };
  // With a policy that sends back the default decision, every learned
  // compile goes first; its default follows only where it departed (or as
  // one of the checks). Otherwise both compiles of a module go together.
  const bool share = o.default_slot && may_share_defaults(o.compiler, o.compile_every_default, o.suite_dir, *o.suite);
  std::deque<Task> tasks;
  for (int i : order) {
    if (!share) tasks.push_back({i, false});
    tasks.push_back({i, true});
  }
  std::vector<policy::DepartureCount> departures(modules.size());
  int done = 0;
  std::mutex mutex;
  TaskQueue queue(std::move(tasks));
  run_tasks(queue, o.jobs, [&](Task t) -> std::optional<Task> {
    auto r = compile_guarded(o, cc_of(t.module), modules[t.module], t.learned,
                             t.learned ? &reports[t.module] : nullptr, share ? &departures[t.module] : nullptr);
    std::lock_guard lock(mutex);
    auto& m = result.modules[t.module];
    (t.learned ? m.learned : m.by_default) = std::move(r);
    if (share && t.learned) {
      const auto& d = departures[t.module];
      std::optional<HeuristicResult> shared;
      if (m.learned.ok() && d.default_seen && d.departures == 0) shared = shared_default(o, m.name, m.learned);
      --remaining[t.module];
      if (!shared) return Task{t.module, false};
      m.by_default = std::move(*shared);
    }
    if (--remaining[t.module] == 0 && o.progress) o.progress(++done, static_cast<int>(modules.size()), m);
    return std::nullopt;
  });
  // Its results are dropped: a compile stopped is no result of the compiler's.
  auto called_off = [] { return common::Error{"stopped: the evaluation was called off", true, true}; };
  if (common::StopScope::stopped()) return called_off();
  if (share) check_shared_defaults(o, modules, bytes, cc_of, result);
  if (common::StopScope::stopped()) return called_off();
  // A compile the machine failed (a timeout under load, the OOM killer, a
  // full disk) says nothing of the compiler or the policy: it is tried once
  // more, alone, so the load that failed it is gone. Only when there are a
  // few (at most 16, each up to the compile timeout): many mean the machine
  // or the compiler is down, and one at a time would take hours.
  std::size_t budget = std::min<std::size_t>(16, std::max<std::size_t>(4, modules.size() / 20)), failed = 0;
  for (const auto& m : result.modules) failed += m.by_default.machine_failure() + m.learned.machine_failure();
  // The longer tries below: once two hung (three limits each), the
  // compiler hangs, and the rest are not given one (hours, with many).
  int longer_hung = 0;
  for (std::size_t i = 0; i < modules.size() && failed <= budget && !common::StopScope::stopped(); ++i)
    for (bool learned : {false, true}) {
      auto& h = learned ? result.modules[i].learned : result.modules[i].by_default;
      if (!h.machine_failure()) continue;
      bool unreadable = h.outcome == kOutcomeBadObject;
      h = compile_guarded(o, cc_of(static_cast<int>(i)), modules[i], learned, learned ? &reports[i] : nullptr);
      // An object that cannot be read, written again so when compiled alone,
      // is the compiler's (a code generator writing a bad object), not the
      // disk's: taken for the machine's, it failed the job on every attempt,
      // stored nothing, and the next sweep tried again for ever.
      if (unreadable && h.outcome == kOutcomeBadObject) {
        h.outcome = kOutcomeCrashed;
        h.message = "the compiler exited 0 but wrote an object that cannot be read, also when compiled again alone: " +
                    h.message;
      }
      // A compile that times out again alone, with the load gone, hangs:
      // under the default heuristic that is the compiler's regression (a
      // compiler-failing alert), and an identical compiler would hang too.
      // Killed again alone is left the machine's: memory is the machine's.
      // Alone in this evaluation is not alone on the machine while another
      // worker's job runs there (a build on every core): once more then,
      // with a limit kSharedMachineTimeoutFactor times as long, which the
      // load of one other job does not explain (it at most halves a core).
      if (h.outcome == kOutcomeTimeout && longer_hung < 2 && o.machine_shared && o.machine_shared()) {
        auto longer = cc_of(static_cast<int>(i));
        longer.timeout *= kSharedMachineTimeoutFactor;
        h = compile_guarded(o, longer, modules[i], learned, learned ? &reports[i] : nullptr);
        longer_hung += h.outcome == kOutcomeTimeout;
      }
      if (h.outcome == kOutcomeTimeout) h.message = std::string(kFailedAgainAloneNote) + ": " + h.message;
    }
  if (failed > budget) {
    result.machine_failures_untried = static_cast<int>(failed);
    result.warnings.push_back(fmt::format(
        "the machine failed {} compiles (timed out, killed or a broken channel), too many to try again one by one "
        "(at most {}): their modules are left out as failed",
        failed, budget));
  }
  for (const auto& report : reports) result.compat = policy::merge(result.compat, report);
  if (common::StopScope::stopped()) return called_off();

  tally(result);
  if (auto why = whole_failure(result); !why.message.empty()) return why;
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

std::vector<ModuleSizes> measured_sizes(const EvaluationResult& r) {
  std::vector<ModuleSizes> out;
  for (const auto& m : r.modules)
    if (m.both_ok()) out.push_back({m.name, m.by_default.sizes.text, m.learned.sizes.text});
  return out;
}

void tally(EvaluationResult& r) {
  r.failed = r.not_consulted = 0;
  for (const auto& m : r.modules) {
    if (m.both_ok()) continue;
    if (m.by_default.ok() && m.learned.not_consulted()) ++r.not_consulted;
    else ++r.failed;
  }
  auto sizes = measured_sizes(r);
  r.summary = summarize(sizes);
  r.packages = summarize_by_package(sizes);
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
