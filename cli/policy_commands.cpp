// driftwatch train | policy serve | policy info | policy list|show|promote|rollback
#include <fmt/core.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/build_selection.h"
#include "cli/commands.h"
#include "cli/finite.h"
#include "cli/project.h"
#include "common/file_lock.h"
#include "common/text.h"
#include "db/policies.h"
#include "db/store.h"
#include "evaluator/object_size.h"
#include "policy/channel_server.h"
#include "policy/model.h"
#include "policy/policy_runner.h"
#include "policy/train.h"
#include "sweep/lineage.h"
#include "sweep/suite_selection.h"

namespace cli {
namespace fs = std::filesystem;

namespace {

struct TrainArgs {
  BuildSelector build;
  std::string suite = "train", validation, out, name, warm_start;
  bool gate = false;
  policy::GateGrid gate_grid;
  policy::TrainOptions options;  ///< the tunables, bound to options below; defaults are the shipped policy's
};

/// The policy file's creation time: now, or SOURCE_DATE_EPOCH when set, so
/// that the same seed gives the same file, content hash included.
std::string creation_time() {
  const char* epoch = std::getenv("SOURCE_DATE_EPOCH");
  if (!epoch || !*epoch) return "";  // the model fills in "now"
  // A typo would otherwise stamp every policy 1970-01-01 without a word.
  char* end = nullptr;
  errno = 0;
  long long seconds = std::strtoll(epoch, &end, 10);
  if (*end != '\0' || errno == ERANGE || seconds < 0 || !std::isdigit(static_cast<unsigned char>(*epoch)))
    throw common::Fatal(std::string("SOURCE_DATE_EPOCH=") + epoch + " is not a number of seconds since 1970");
  return common::iso_utc(seconds);
}

void print_training_progress(const policy::TrainProgress& p) {
  if (p.phase == "collect") {
    fmt::print(stderr, "collecting the default heuristic's decisions on {} modules …\n", p.steps);
  } else if (p.phase == "clone" || p.phase == "imitate") {
    fmt::print(stderr, "[{} {:>3}/{}] loss {:.4f}  accuracy {:.2f}%  ETA {}\n", p.phase, p.step, p.steps,
               -p.mean_reward, 100 * p.accuracy, common::format_seconds(p.eta_seconds));
  } else if (p.phase == "search") {
    fmt::print(stderr, "[search {:>3}/{}] mean reward {:+.3f}%  uplift found {:+.3f}%  ETA {}\n", p.step, p.steps,
               100 * p.mean_reward, 100 * p.uplift, common::format_seconds(p.eta_seconds));
  } else if (p.phase == "margin") {
    fmt::print(stderr, "[margin {:>2}/{}] on validation: uplift {:+.3f}% ({:.1f}% no worse)\n", p.step, p.steps,
               100 * p.uplift, 100 * p.no_worse);
  } else if (p.phase == "gate" || p.phase == "gate-validation") {
    auto work = p.kept ? std::string("kept from the interrupted run")
                       : fmt::format("{} of {} modules compiled", p.compiled, p.modules);
    fmt::print(stderr, "[{} {:>2}/{}] {}: uplift {:+.3f}% ({:.1f}% no worse), {}{}\n", p.phase, p.step, p.steps,
               p.rule, 100 * p.uplift, 100 * p.no_worse, work,
               p.phase == "gate" ? "  ETA " + common::format_seconds(p.eta_seconds) : std::string());
  } else if (p.phase == "imitated") {
    fmt::print(stderr, "[imitated] uplift {:+.3f}%, {:.1f}% of modules no worse\n", 100 * p.uplift,
               100 * p.no_worse);
  } else {
    fmt::print(stderr, "[reinforce {:>2}/{}] mean reward {:+.3f}%  uplift {:+.3f}% ({:.1f}% no worse)  ETA {}\n",
               p.step, p.steps, 100 * p.mean_reward, 100 * p.uplift, 100 * p.no_worse,
               common::format_seconds(p.eta_seconds));
  }
}

/// Checked before the minutes to hours of training that end by writing it.
void check_output_file(const fs::path& out) {
  auto dir = out.parent_path().empty() ? fs::path(".") : out.parent_path();
  if (fs::is_directory(out)) throw common::Fatal("--out " + out.string() + " is a directory: name the policy file");
  if (!fs::is_directory(dir))
    throw common::Fatal("--out " + out.string() + ": the directory " + dir.string() + " does not exist");
  if (access(dir.c_str(), W_OK) != 0)
    throw common::Fatal("--out " + out.string() + ": cannot write in " + dir.string() + ": " + std::strerror(errno));
}

void run_train(Context& ctx, const TrainArgs& a) {
  if (a.gate && !a.warm_start.empty()) throw common::Fatal("--gate fits three thresholds afresh: it takes no --warm-start");
  check_output_file(a.out);
  policy::load_network_runtime();  // before the compiler (hours of LLVM) is built
  const std::string created = creation_time();
  // A mistyped or corrupt policy to start from is refused now, not after the
  // compiler (hours of LLVM) is built.
  if (!a.warm_start.empty()) (void)policy::PolicyModel::load(a.warm_start).take();
  // Loading refuses such a name (it is printed in terminals): refused before training, not after.
  if (common::has_control_characters(a.name))
    throw common::Fatal("--name holds control characters; give a printable name");
  // The suites before the compiler: a typo must not cost a compiler build first.
  auto suite = sweep::select_suite(ctx.data_dir(), a.suite);
  std::optional<sweep::SelectedSuite> validation;
  if (!a.validation.empty()) {
    validation = sweep::select_suite(ctx.data_dir(), a.validation);
    if (validation->manifest_hash == suite.manifest_hash)
      throw common::Fatal("the validation suite must not be the training suite (" + a.validation + ")");
  }
  auto database = ctx.database();
  auto build = select_build(ctx, a.build, &database);
  policy::TrainOptions o = a.options;
  if (a.gate) o.gate = a.gate_grid;
  std::erase(o.metadata.hidden, 0);  // --hidden 0: no hidden layer
  o.modules = sweep::training_modules(suite, build.compiler);
  std::string corpus = suite.named();
  if (validation) {
    o.validation = sweep::training_modules(*validation, build.compiler);
    corpus += ", validation " + validation->named();
  }
  o.compiler = build.compiler;
  o.measure_text = [](const fs::path& obj) -> common::Result<std::int64_t> {
    auto s = evaluator::measure_object(obj);
    if (!s) return s.error();
    return s->text;
  };
  o.work_dir = ctx.data_dir() / "training" / (fs::path(a.out).stem().string() + "-" + std::to_string(o.seed));
  o.jobs = sweep::jobs_or_cores(a.build.jobs);
  if (!a.warm_start.empty()) o.warm_start = a.warm_start;
  o.metadata.name = a.name.empty() ? fs::path(a.out).stem().string() : a.name;
  o.metadata.compiler_repo = build.repo;
  o.metadata.compiler_commit = build.commit;
  o.metadata.corpus = corpus;
  o.metadata.created = created;
  if (!ctx.quiet) o.progress = print_training_progress;
  fmt::print(stderr, "training on suite {} ({} modules) with compiler {}, seed {}\n", suite.suite.name,
             o.modules.size(), build.label, o.seed);
  auto result = policy::train(o).take();
  result.model.save(a.out).take();
  const auto& meta = result.model.metadata();
  // The session opened before training sat idle for its hours: a server
  // restarted or an idle timeout since must not read as a failed training.
  try {
    db::upsert_policy(database, meta.name, meta.content_hash, meta.compiler_commit, meta.training);
  } catch (const db::ConnectionLost&) {
    auto again = ctx.database();
    db::upsert_policy(again, meta.name, meta.content_hash, meta.compiler_commit, meta.training);
  }
  fmt::print("wrote {} ({}): {} features, trained on {} modules ({} skipped)\n", a.out, meta.content_hash.substr(0, 12),
             meta.features.size(), result.modules, result.skipped);
  if (auto fit = policy::gate_fit_from_training(meta.training)) {
    if (!fit->chosen.empty())
      fmt::print("gate: also inlines where {}; the default's decision everywhere else\n", fit->chosen);
    else
      fmt::print("gate: closed (no rule met the bar on the {} suite): the default's decision everywhere\n",
                 result.on_validation ? "validation" : "training");
  } else if (meta.margin > 0)
    fmt::print("margin {:g}: departs from the compiler's default only where its score passes it by that much{}\n",
               meta.margin, meta.margin >= 1e5 ? " (never: no margin won on the validation suite)" : "");
  fmt::print("uplift on the {} suite: {} geometric mean, {} total .text; {} wins, {} ties, {} losses\n",
             result.on_validation ? "validation" : "training", common::signed_percent(result.uplift),
             common::signed_percent(result.total_uplift), result.wins, result.ties, result.losses);
}

std::atomic<bool> g_interrupted{false};

// A compiler left without an answer waits on the channel for ever, and the
// next session would take it for a new compile: stop it, and say so.
std::string stop_stranded_compiler(const policy::ChannelFifos& fifos) {
  auto stopped = fifos.stop_peers();
  if (stopped.empty()) return "";
  return fmt::format(" (stopped the compiler, pid {}, which would wait on the channel for ever)",
                     fmt::join(stopped, ", "));
}

void run_serve(const std::string& policy_file, const std::string& channel, int timeout_s, bool once,
               const std::string& default_slot) {
  auto model = policy::PolicyModel::load(policy_file).take();
  // Said now, not as a refusal of every compile that connects.
  if (model.metadata().margin > 0 && default_slot.empty())
    throw common::Fatal("policy " + model.metadata().name +
                        " defers to the compiler's default decision: give --default-slot (callee_basic_block_count "
                        "for LLVM 19, inlining_default for later LLVMs)");
  policy::use_one_thread();
  signal(SIGINT, [](int) { g_interrupted = true; });
  signal(SIGTERM, [](int) { g_interrupted = true; });
  // A second server on the same channel would replace the first's FIFOs and
  // race it for every question (answers from either policy).
  // (No such directory: creating the FIFOs says so, and nothing is created.)
  bool lockable = std::filesystem::is_directory(std::filesystem::absolute(channel).parent_path());
  auto held = lockable ? common::FileLock::try_acquire(channel + ".lock").take() : std::optional<common::FileLock>();
  if (lockable && !held)
    throw common::Fatal("another driftwatch policy serve is using channel " + channel + " (" + channel +
                        ".lock): stop it, or serve on another --channel");
  auto fifos = policy::ChannelFifos::create(channel).take();
  fmt::print(stderr, "serving {} on {}.in/.out (Ctrl-C to stop)\n", model.metadata().name, channel);
  do {
    policy::CompatReport report;
    policy::PolicyRunnerOptions options;
    if (default_slot == "inlining_default") options.default_slot = policy::DefaultDecisionSlot::InliningDefault;
    if (default_slot == "callee_basic_block_count")
      options.default_slot = policy::DefaultDecisionSlot::CalleeBasicBlockCount;
    auto runner = policy::make_policy_runner(model, &report, options);
    std::string error;
    // --once: the timeout covers waiting and serving. Left running, it waits
    // for as long as it takes, and serves each compile for the timeout.
    auto deadline = once ? std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s)
                         : std::chrono::steady_clock::time_point::max();
    auto stats = policy::serve_session(
        fifos, *runner, deadline, [] { return !g_interrupted.load(); }, error,
        once ? std::nullopt : std::optional<std::chrono::steady_clock::duration>(std::chrono::seconds(timeout_s)));
    // A compilation served before the signal is still reported.
    if (g_interrupted && !stats.connected) break;
    if (stats.opened && !error.empty()) error += stop_stranded_compiler(fifos);
    if (once) {
      if (!error.empty()) throw common::Fatal(error);
      if (!stats.connected) throw common::Fatal("no compiler connected within " + std::to_string(timeout_s) + " s");
    } else if (!stats.opened) {
      if (!error.empty()) throw common::Fatal(error);  // a channel the server cannot open is the server's
      continue;
    } else if (!error.empty()) {
      // One compile that died or spoke nonsense is its own failure, not the
      // end of a server the next compiles rely on.
      fmt::print(stderr, "driftwatch: a compilation failed, serving on: {}\n", error);
      if (g_interrupted) break;
      continue;
    }
    if (!stats.connected) continue;  // opened and closed without a word: nothing to report
    fmt::print(stderr, "served a compilation: {} decisions, features: {}\n", stats.decisions, report.summary());
  } while (!once && !g_interrupted);
}

/// The training record for people, in one line: where its choices were
/// made and what they measured there. The whole record (a gate's grid, a
/// network's options) is `policy info --json`'s.
std::string training_summary(const std::string& record) {
  auto t = nlohmann::json::parse(record.empty() ? "{}" : record, nullptr, false);
  if (t.is_discarded() || !t.is_object()) return common::printable(record);
  if (t.empty()) return "(not recorded)";
  std::string out;
  auto number = [&](const char* key) { return t.contains(key) && t[key].is_number() ? t[key].get<double>() : 0.0; };
  if (t.contains("validation_uplift_geomean") && t["validation_uplift_geomean"].is_number())
    out = fmt::format(
        "chosen on {}: {} modules, {} geometric mean, {} in total, {}/{}/{} wins/ties/losses, {:.1f}% "
        "no worse; ",
        t.value("chosen_on", std::string("validation")), number("validation_modules"),
        common::signed_percent(number("validation_uplift_geomean")),
        common::signed_percent(number("validation_uplift_total")), number("validation_wins"), number("validation_ties"),
        number("validation_losses"), 100 * number("validation_no_worse_share"));
  else if (t.contains("chosen_on") && t["chosen_on"].is_string())
    out = "chosen on " + common::printable(t["chosen_on"].get<std::string>()) + "; ";
  return out + fmt::format("{} field(s) recorded: `driftwatch policy info --json` shows them", t.size());
}

void run_info(const std::string& file, bool json) {
  auto model = policy::PolicyModel::load(file).take();
  const auto& m = model.metadata();
  if (json) {
    nlohmann::json j{{"name", m.name},       {"content_hash", m.content_hash}, {"features", m.features},
                     {"hidden", m.hidden},   {"compiler_repo", m.compiler_repo}, {"compiler_commit", m.compiler_commit},
                     {"corpus", m.corpus},   {"seed", m.seed},                 {"parent", m.parent},
                     {"created", m.created}, {"margin", m.margin}, {"training", nlohmann::json::parse(m.training.empty() ? "{}" : m.training, nullptr, false)}};
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("policy      {}\ncontent     sha256:{}\nfeatures    {} ({})\nlayers      ", m.name, m.content_hash,
             m.features.size(), common::trim(fmt::format("{}", m.features.front())) + ", …");
  for (int h : m.hidden) fmt::print("{}-", h);
  // The repository's path is the training machine's: sweeps find the
  // check-in by its sha in whatever repository the project names.
  fmt::print(
      "2\ntrained at  {} ({})\ncorpus      {}\nseed        {}\nparent      {}\ncreated     {}\n",
      m.compiler_commit.empty() ? "(unknown check-in)" : m.compiler_commit,
      m.compiler_repo.empty() ? "repository unknown" : "of " + m.compiler_repo + " on the machine that trained it",
      m.corpus, m.seed, m.parent.empty() ? "(none)" : m.parent, common::utc_for_people(m.created));
  if (auto fit = policy::gate_fit_from_training(m.training))
    fmt::print("gate        {}\n", !fit->chosen.empty() ? "also inlines where " + fit->chosen +
                                                              "; the compiler's default decision everywhere else"
                                                        : std::string("closed: the compiler's default decision everywhere"));
  fmt::print("margin      {}\ntraining    {}\n",
             m.margin == 0
                 ? std::string("none (the model decides alone)")
                 : fmt::format("{:g} (departs from the compiler's default decision only beyond it)", m.margin),
             training_summary(m.training));
}

nlohmann::json lineage_json(const db::LineageRow& r) {
  auto parse = [](const std::string& t) { return nlohmann::json::parse(t.empty() ? "{}" : t, nullptr, false); };
  return {{"id", r.id},
          {"name", r.name},
          {"content_hash", r.content_hash},
          {"parent", r.parent_id == 0 ? nlohmann::json() : nlohmann::json(r.parent_id)},
          {"state", r.state},
          {"trained_commit", r.trained_commit},
          {"file", r.file},
          {"suites", parse(r.suites_json)},
          {"figures", parse(r.figures_json)},
          {"reason", r.reason},
          {"created", r.created_at},
          {"updated", r.updated_at}};
}

void print_lineage_row(const db::LineageRow& r) {
  auto figures = nlohmann::json::parse(r.figures_json.empty() ? "{}" : r.figures_json, nullptr, false);
  std::string held;
  if (figures.is_object() && figures.contains("candidate"))
    held = fmt::format("  held-out {} vs parent {}", common::signed_percent(figures["candidate"].value("uplift", 0.0)),
                       common::signed_percent(figures["active"].value("uplift", 0.0)));
  fmt::print("{:>4} {:<9} {} {:<28} parent {:<5} trained at {}{}\n", r.id, r.state, r.content_hash.substr(0, 12),
             r.name, r.parent_id == 0 ? std::string("-") : std::to_string(r.parent_id),
             r.trained_commit.empty() ? std::string("?") : r.trained_commit.substr(0, 12), held);
}

struct LineageArgs {
  ProjectArgs project;
  bool json = false;
  db::Id id = 0;
};

void run_list(Context& ctx, const LineageArgs& a) {
  auto project = a.project.load(ctx);
  auto database = ctx.database();
  sweep::ensure_lineage(database, project, ctx.data_dir(), true);
  auto rows = db::list_lineage(database, project.name);
  if (a.json) {
    auto out = nlohmann::json::array();
    for (const auto& r : rows) out.push_back(lineage_json(r));
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("policies of project {} (oldest first):\n", project.name);
  for (const auto& r : rows) print_lineage_row(r);
}

void run_show(Context& ctx, const LineageArgs& a) {
  auto project = a.project.load(ctx);
  auto database = ctx.database();
  auto row = db::find_lineage(database, project.name, a.id);
  if (!row) throw common::Fatal("project '" + project.name + "' has no policy " + std::to_string(a.id));
  if (a.json) {
    fmt::print("{}\n", lineage_json(*row).dump(2));
    return;
  }
  print_lineage_row(*row);
  fmt::print("file     {}\nsuites   {}\nfigures  {}\nreason   {}\ncreated  {}  updated {}\n", row->file,
             row->suites_json, row->figures_json, row->reason, common::utc_for_people(row->created_at),
             common::utc_for_people(row->updated_at));
}

void run_promote(Context& ctx, const LineageArgs& a) {
  auto project = a.project.load(ctx);
  auto database = ctx.database();
  auto row = sweep::promote_by_hand(database, project, ctx.data_dir(), a.id);
  fmt::print("policy {} ({}) is now the active policy of project {}\n", row.id, row.content_hash.substr(0, 12),
             project.name);
}

void run_rollback(Context& ctx, const LineageArgs& a) {
  auto project = a.project.load(ctx);
  auto database = ctx.database();
  auto row = sweep::roll_back(database, project, ctx.data_dir());
  fmt::print("rolled back: policy {} ({}) is the active policy of project {} again\n", row.id,
             row.content_hash.substr(0, 12), project.name);
}

}  // namespace

void attach_train(CLI::App& sub, Context& ctx) {
  auto a = std::make_shared<TrainArgs>();
  a->build.attach(sub);
  sub.add_option("--suite", a->suite, "training suite: a name or a suite directory (default: train)");
  sub.add_option("--validation", a->validation,
                 "suite of other code the best checkpoint and the margin are chosen on (e.g. validation); "
                 "without it they are chosen on the training suite and the policy has no margin");
  sub.add_option("--out", a->out, "where to write the policy file")->required();
  sub.add_option("--name", a->name, "the policy's name (default: the file's stem)");
  auto& o = a->options;
  sub.add_option("--seed", o.seed, "random seed; the same seed gives the same policy")->capture_default_str();
  sub.add_option("--clone-epochs", o.clone_epochs, "epochs of behaviour cloning of the default heuristic")
      ->check(CLI::Range(0, 100000))->capture_default_str();
  sub.add_option("--search-trials", o.search_trials, "greedy search: flips tried per module, at most")
      ->check(CLI::Range(0, 100000))->capture_default_str();
  sub.add_option("--search-budget", o.search_budget, "greedy search: trials x decisions per module, at most")
      ->check(cli::Finite)->check(CLI::Range(0.0, 1e9))->capture_default_str();
  sub.add_option("--search-min-gain", o.search_min_gain,
                 "greedy search: bytes of .text a flip must save to be kept (1: any shrink)")
      ->check(CLI::Range(1, 1 << 20))->capture_default_str();
  sub.add_option("--imitation-epochs", o.imitation_epochs, "epochs of imitation of the searched decisions")
      ->check(CLI::Range(0, 100000))->capture_default_str();
  sub.add_option("--flip-weight", o.flip_weight, "imitation weight of a flip the search kept")
      ->check(cli::Finite)->check(CLI::Range(0.0, 1e6))->capture_default_str();
  sub.add_option("--verified-weight", o.verified_weight, "imitation weight of an answer whose flip the search rejected")
      ->check(cli::Finite)->check(CLI::Range(0.0, 1e6))->capture_default_str();
  sub.add_option("--learning-rate", o.learning_rate, "Adam learning rate of cloning and imitation")
      ->check(cli::Finite)->check(CLI::Range(1e-7, 1.0))->capture_default_str();
  sub.add_option("--weight-decay", o.weight_decay, "Adam's L2 penalty on the weights in imitation")
      ->check(cli::Finite)->check(CLI::Range(0.0, 1.0))->capture_default_str();
  sub.add_option("--residual-margin", o.residual_margin,
                 "> 0: learn only where to depart from the compiler's default, trained and served with the "
                 "default's side at this margin (logit units)")
      ->check(cli::Finite)->check(CLI::Range(0.0, 100.0))->capture_default_str();
  sub.add_option("--hidden", o.metadata.hidden,
                 "the network's hidden layer widths, e.g. --hidden 16,16 (--hidden 0: linear)")
      ->delimiter(',')->check(CLI::Range(0, 4096))->capture_default_str();
  sub.add_option("--iterations", o.iterations, "REINFORCE iterations")->check(CLI::Range(0, 10000))->capture_default_str();
  sub.add_option("--rl-learning-rate", o.rl_learning_rate, "Adam learning rate of REINFORCE")
      ->check(cli::Finite)->check(CLI::Range(1e-7, 1.0))->capture_default_str();
  sub.add_option("--loss-penalty", o.loss_penalty, "REINFORCE: reward taken from a module made larger than the default")
      ->check(cli::Finite)->check(CLI::Range(0.0, 1.0))->capture_default_str();
  sub.add_option("--eval-every", o.eval_every, "greedy evaluation (and best-policy choice) every N iterations")
      ->check(CLI::Range(1, 10000))->capture_default_str();
  auto* gate = sub.add_flag("--gate", a->gate,
               "fit a gate on the compiler's default decision (inline also where cost, callee users and caller "
               "users pass three thresholds) instead of training a network");
  sub.add_option("--gate-costs", a->gate_grid.max_costs, "--gate: the cost thresholds tried (cost <= N)")
      ->needs(gate)
      ->delimiter(',')->check(CLI::Range(-1000, 1000))->capture_default_str();
  sub.add_option("--gate-callee-users", a->gate_grid.max_callee_users,
                 "--gate: the callee users thresholds tried (users <= N)")
      ->needs(gate)
      ->delimiter(',')->check(CLI::Range(0, 1000))->capture_default_str();
  sub.add_option("--gate-caller-users", a->gate_grid.min_caller_users,
                 "--gate: the caller users thresholds tried (users >= N; 0: any caller)")
      ->needs(gate)
      ->delimiter(',')->check(CLI::Range(0, 1000))->capture_default_str();
  sub.add_option("--no-worse-bar", o.no_worse_bar,
                 "the share of validation modules a margin or gate must leave no larger")
      ->check(cli::Finite)->check(CLI::Range(0.0, 1.0))->capture_default_str();
  sub.add_option("--warm-start", a->warm_start, "start from this policy instead of cloning the default");
  sub.add_flag("--resume", o.resume, "continue an interrupted run from its checkpoint (same options)");
  sub.callback([&ctx, a] { run_train(ctx, *a); });
}

void attach_policy(CLI::App& sub, Context& ctx) {
  require_one_subcommand(sub);
  auto serve = sub.add_subcommand("serve", "answer a compiler's inlining questions over LLVM's ML channel");
  auto file = std::make_shared<std::string>();
  auto channel = std::make_shared<std::string>();
  auto timeout = std::make_shared<int>(600);
  auto once = std::make_shared<bool>(false);
  serve->add_option("--policy", *file, "policy file")->required();
  serve->add_option("--channel", *channel, "channel base: the compiler gets -inliner-interactive-channel-base=BASE")
      ->required();
  serve->add_option("--timeout", *timeout,
                    "seconds to serve one compilation (default 600); with --once, also to wait for it")
      ->check(CLI::Range(1, 7 * 86400));
  serve->add_flag("--once", *once, "stop after one compilation");
  auto slot = std::make_shared<std::string>();
  serve->add_option("--default-slot", *slot,
                    "for a policy with a margin: where the compiler sends its default decision under "
                    "-inliner-interactive-include-default (LLVM 19: callee_basic_block_count, a bug; later: "
                    "inlining_default)")
      ->check(CLI::IsMember({"inlining_default", "callee_basic_block_count"}));
  serve->callback([=] { run_serve(*file, *channel, *timeout, *once, *slot); });

  auto info = sub.add_subcommand("info", "show a policy file's metadata");
  auto info_file = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  info->add_option("file", *info_file, "policy file")->required();
  info->add_flag("--json", *json, "machine-readable output");
  info->callback([=] { run_info(*info_file, *json); });

  auto list = sub.add_subcommand("list", "the project's policy lineage: parent, trained check-in, suites, figures");
  auto show = sub.add_subcommand("show", "one policy of the project's lineage");
  auto promote = sub.add_subcommand("promote", "make a policy of the lineage the project's active policy, by hand");
  auto rollback = sub.add_subcommand("rollback", "make the active policy's parent active again");
  auto args = std::make_shared<LineageArgs>();
  for (auto* c : {list, show, promote, rollback}) args->project.attach(*c);
  for (auto* c : {list, show}) c->add_flag("--json", args->json, "machine-readable output");
  for (auto* c : {show, promote}) c->add_option("id", args->id, "the policy's id in the lineage (policy list)")->required();
  list->callback([&ctx, args] { run_list(ctx, *args); });
  show->callback([&ctx, args] { run_show(ctx, *args); });
  promote->callback([&ctx, args] { run_promote(ctx, *args); });
  rollback->callback([&ctx, args] { run_rollback(ctx, *args); });
}

}  // namespace cli
