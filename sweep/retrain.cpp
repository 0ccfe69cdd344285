#include "sweep/retrain.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "builder/recipe.h"
#include "common/atomic_file.h"
#include "common/data_dir.h"
#include "common/text.h"
#include "db/drift.h"
#include "db/jobs.h"
#include "db/policies.h"
#include "evaluator/evaluation.h"
#include "evaluator/object_size.h"
#include "reports/drift.h"
#include "sweep/candidate_key.h"
#include "sweep/compiler_build.h"
#include "sweep/evaluation_run.h"
#include "sweep/lineage.h"
#include "sweep/recording.h"
#include "sweep/suite_selection.h"
#include "tracker/git.h"

namespace sweep {
namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

policy::TrainOptions training_settings(const std::string& name) {
  policy::TrainOptions o;
  if (name == "shipped") {
    // For a network policy, the residual one's command (README): 8 flips
    // tried per module keep the greedy search of the 21-package training
    // suite to what 24 cost on its first eight packages, and the whole
    // training under an hour on 2 cores; a 32×32 network with weight decay,
    // chosen on validation. (The shipped policy is a gate: refitted as one.)
    o.search_trials = 8;
    o.iterations = 0;
    o.residual_margin = 3;
    o.metadata.hidden = {32, 32};
    o.imitation_epochs = 60;
    o.weight_decay = 1e-4;
    o.flip_weight = 4;
  } else if (name == "small") {
    o.search_trials = 2;
    o.search_budget = 200;
    o.imitation_epochs = 10;
    o.iterations = 1;
    o.eval_every = 1;
  } else {
    throw common::Fatal("unknown training settings '" + name + "' (shipped or small)");
  }
  return o;
}

namespace {

/// Beside the work directory (which training clears when it cannot resume):
/// the candidate's creation time, stamped once per candidate.
fs::path creation_file(const fs::path& work_dir) { return work_dir.string() + ".created"; }

/// The candidate's creation time: the one stamped when its training began,
/// when it resumes. A fresh stamp would give a candidate killed while it
/// was judged another content hash on the rerun, and its recorded lineage
/// row would be left "being evaluated" for ever beside the new one.
std::string candidate_creation_time(const fs::path& work_dir, bool resumed) {
  auto file = creation_file(work_dir);
  if (resumed) {
    std::ifstream in(file);
    std::string created;
    if (std::getline(in, created) && !created.empty()) return created;
  }
  auto now = common::iso_utc_now();
  fs::create_directories(file.parent_path());
  common::write_file_atomically(file, now + "\n").take();
  return now;
}

/// The candidate judged: neither its checkpoints nor its stamp are needed.
void remove_work_dir(const fs::path& work_dir) {
  std::error_code ec;
  fs::remove_all(work_dir, ec);
  fs::remove(creation_file(work_dir), ec);
}

/// The project's work directories (and their stamps) other than `keep`:
/// "<project>-<hash12>-<sha12>-<settings>". Another project's never match,
/// whatever its name: the part after the project's name must be this shape.
void remove_other_work_dirs(const fs::path& root, const std::string& project, const fs::path& keep) {
  auto hex12 = [](std::string_view s) {
    return s.size() == 12 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  };
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    auto name = e.path().filename().string();
    if (!name.starts_with(project + "-") || e.path() == keep || e.path() == creation_file(keep)) continue;
    std::string_view rest(name);
    rest.remove_prefix(project.size() + 1);
    if (rest.ends_with(".created")) rest.remove_suffix(8);
    if (rest.size() < 27 || !hex12(rest.substr(0, 12)) || rest[12] != '-' || !hex12(rest.substr(13, 12)) ||
        rest[25] != '-')
      continue;
    fs::remove_all(e.path(), ec);
  }
}

void say(const RetrainOptions& o, const std::string& line) {
  if (o.log) o.log(line);
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// True when some suite holds an evaluated check-in of the policy.
bool has_evaluations(db::Database& db, std::optional<db::Id> repository_id, const std::string& recipe_hash,
                     const std::string& policy_hash, const std::vector<SelectedSuite>& suites) {
  for (const auto& s : suites)
    for (const auto& p : series_of_repository(db, repository_id, recipe_hash, policy_hash, s.manifest_hash))
      if (p.evaluated || !p.evaluation_error.empty()) return true;  // a policy that cannot run was measured too
  return false;
}

/// A diverged training leaves weights that answer NaN: ask the model once.
bool finite_model(const policy::PolicyModel& m) {
  std::vector<float> zeros(m.metadata().features.size(), 0.0f);
  return std::isfinite(m.score(zeros.data()));
}

json figures_json(const RetrainReport& r) {
  json suites = json::array();
  for (const auto& h : r.holdout)
    suites.push_back({{"suite", h.suite},
                      {"active_uplift", h.active_uplift},
                      {"candidate_uplift", h.candidate_uplift},
                      {"active_losses", h.active_losses},
                      {"candidate_losses", h.candidate_losses},
                      {"modules", h.modules}});
  return {{"checkin", r.checkin},
          {"active", {{"uplift", r.active.uplift}, {"losses", r.active.losses}, {"hash", r.active_hash}}},
          {"candidate", {{"uplift", r.candidate.uplift}, {"losses", r.candidate.losses}}},
          {"train_uplift", r.train_uplift},
          {"train_uplift_on", r.train_uplift_on},
          {"holdout", suites},
          {"train_seconds", r.train_seconds}};
}

}  // namespace

RetrainReport run_retrain(db::Database& db, const RetrainOptions& o) {
  auto start = Clock::now();
  const auto& p = o.project;
  RetrainReport report;
  auto promote_mode = o.promote.empty() ? p.retrain.promote : o.promote;
  if (promote_mode != "auto" && promote_mode != "never")
    throw common::Fatal("--promote must be auto or never, not '" + promote_mode + "'");
  if (p.repo.empty())
    throw common::Fatal(
        "retrain needs compiler.repo in the project file: it trains at a check-in (with toolchains only, train at "
        "one with `driftwatch train --build <its directory>` and track the new policy file)");
  // Held by this connection until it closes, however the process ends.
  if (!db::try_lock_retrain(db, p.name))
    throw common::Fatal("another retrain of project '" + p.name + "' is running; nothing changed");
  auto settings = training_settings(p.retrain.settings);

  // Everything that can be missing is checked before anything is built, trained or recorded.
  policy::load_network_runtime();
  auto training = select_suite(o.data_dir, p.retrain.training_suite);
  std::optional<SelectedSuite> validation;
  if (!p.retrain.validation_suite.empty()) validation = select_suite(o.data_dir, p.retrain.validation_suite);
  std::vector<SelectedSuite> holdout;
  for (const auto& s : p.holdout_suites()) {
    holdout.push_back(select_suite(o.data_dir, s));
    if (holdout.back().manifest_hash == training.manifest_hash)
      throw common::Fatal("held-out suite '" + s + "' is the training suite '" + p.retrain.training_suite +
                          "': a candidate must be judged on code it did not train on");
    if (validation && holdout.back().manifest_hash == validation->manifest_hash)
      throw common::Fatal("held-out suite '" + s + "' is the validation suite '" + p.retrain.validation_suite +
                          "': training must never choose on the code it is judged on");
  }
  auto repo = tracker::GitRepo::open(p.repo).take();
  auto recipe = builder::load_recipe(p.recipe).take();
  auto tracked = tracked_policy(db, p);
  // Its network too (and with it LibTorch), before anything is built, trained
  // or recorded: the candidate is judged against it.
  (void)policy::PolicyModel::load(tracked.file).take();
  // What sweeps measure: the project's suites. Held-out suites of its own
  // (retrain.holdout) are evaluated here, never by a sweep, so asking for
  // their measurements would refuse every retrain for good.
  std::vector<SelectedSuite> swept;
  for (const auto& s : p.suites) swept.push_back(select_suite(o.data_dir, s));
  if (!has_evaluations(db, recorded_repository(db, repo, repo.tracked(p.branch).take()), recipe.content_hash,
                       tracked.content_hash, swept))
    throw common::Fatal("no measured check-in of project '" + p.name + "' with its active policy " +
                        tracked.content_hash.substr(0, 12) + ": run `driftwatch sweep` first; nothing changed");
  std::string rev = !o.at.empty() ? o.at : repo.tracked(p.branch).take();
  auto sha = repo.resolve(rev);
  if (!sha) throw common::Fatal(sha.error().message + "; nothing changed");
  if (!o.at.empty()) {
    // The candidate's training check-in becomes its baseline, which `decide`
    // finds on the tracked first-parent line only: off it, its drift could
    // never be judged.
    auto line = repo.cloned_history(repo.tracked(p.branch).take()).take();
    if (std::none_of(line.begin(), line.end(), [&](const auto& c) { return c.sha == *sha; }))
      throw common::Fatal("--at " + rev + " is not on the first-parent history of " +
                          (p.branch.empty() ? std::string("HEAD") : p.branch) +
                          ", where `decide` measures drift from; nothing changed");
  }
  report.checkin = *sha;
  int jobs = jobs_or_cores(o.jobs > 0 ? o.jobs : p.jobs);
  SelectedBuild build;
  try {
    build = select_build(o.data_dir, {*sha, p.repo, p.recipe, jobs}, &db, o.log);
  } catch (const common::Fatal& e) {
    throw common::Fatal("cannot retrain at " + sha->substr(0, 12) + ": " + e.what() +
                        "; no candidate was trained, nothing changed");
  }

  auto active = ensure_lineage(db, p, o.data_dir);
  report.active_hash = active.content_hash;
  report.active_id = active.lineage_id;

  // What the candidate is trained from, where, and judged on: with the seed,
  // it decides the candidate.
  CandidateInputs inputs{training.named(), {}, "", p.retrain.settings};
  for (const auto& h : holdout) inputs.holdout.push_back(h.named());
  if (validation) inputs.validation = validation->named();
  const auto key = candidate_key(inputs);
  // Trained again, it would be the candidate already judged: rejected, or
  // promoted and rolled back by a person. A nightly `decide --act` would
  // spend hours on it each night, and promote again what was rolled back.
  for (const auto& row : db::list_lineage(db, p.name)) {
    bool rejected = row.state == "rejected" && !row.reason.starts_with(db::kAbandonedReason) &&
                    !row.reason.starts_with(db::kNotJudgedReason);
    // One that won and waits for a person (`--promote never`) is not trained
    // again each night either.
    bool waiting = row.state == "candidate" && was_judged(row);
    if (row.parent_id != active.lineage_id || row.trained_commit != *sha ||
        (!rejected && !waiting && row.state != "retired"))
      continue;
    if (!same_candidate(row.suites_json, key)) continue;
    report.state = waiting ? "candidate" : "rejected";
    report.trained = false;
    report.candidate_id = row.id;
    report.candidate_hash = row.content_hash;
    report.reason = fmt::format(
        "not trained again: lineage #{}, trained at {} from the active policy on the same suites and settings, was {} "
        "({}); retrain at a later check-in, or change its suites or settings",
        row.id, sha->substr(0, 12),
        rejected  ? "rejected"
        : waiting ? "judged and waits to be promoted (`driftwatch policy promote " + std::to_string(row.id) + "`)"
                  : "rolled back",
        row.reason);
    report.seconds = seconds_since(start);
    return report;
  }

  // Train, warm-started from the active policy; the work directory is this
  // retrain's own, so an interrupted one resumes from its checkpoint.
  policy::TrainOptions t = settings;
  t.modules = training_modules(training, build.compiler);
  if (validation) t.validation = training_modules(*validation, build.compiler);
  t.compiler = build.compiler;
  t.measure_text = [](const fs::path& obj) -> common::Result<std::int64_t> {
    auto s = evaluator::measure_object(obj);
    if (!s) return s.error();
    return s->text;
  };
  t.work_dir =
      o.data_dir / "retrain" /
      fmt::format("{}-{}-{}-{}", p.name, active.content_hash.substr(0, 12), sha->substr(0, 12), p.retrain.settings);
  t.jobs = jobs;
  t.warm_start = active.file;
  t.warm_start_if_same_features = true;
  // A gate is refitted as a gate, on the same grid: its network holds
  // thresholds, not weights to warm-start from (the parent stays its lineage).
  if (auto active_model = policy::PolicyModel::load(active.file))
    if (auto fit = policy::gate_fit_from_training(active_model->metadata().training)) {
      t.gate = fit->grid;
      t.no_worse_bar = fit->no_worse_bar;
    }
  t.metadata.name = p.name + "-" + sha->substr(0, 12);
  t.metadata.compiler_repo = repo.location().string();
  t.metadata.compiler_commit = *sha;
  t.metadata.corpus = training.named();
  t.progress = o.train_progress;
  // An interrupted retrain of this very candidate goes on; state left under
  // other settings (a suite rebuilt since) is not read but cleared.
  t.resume_if_same = true;
  report.resumed = policy::can_resume(t);
  t.metadata.created = candidate_creation_time(t.work_dir, report.resumed);
  say(o, fmt::format("{} a candidate at {} on suite {} ({} modules), warm-started from {}, {} settings",
                     report.resumed ? "resuming" : "training", sha->substr(0, 12), training.suite.name, t.modules.size(),
                     active.content_hash.substr(0, 12), p.retrain.settings));
  // Where the candidate is kept: made (or refused) now, not after an
  // hour of training (a data directory no sweep registered a policy in).
  common::ensure_writable_dir(o.data_dir / "policies", "policy directory");
  auto train_start = Clock::now();
  auto trained = policy::train(t);
  if (!trained)
    throw common::Fatal("training the candidate failed: " + trained.error().message +
                        "; the active policy is unchanged");
  report.train_seconds = seconds_since(train_start);
  if (!trained->warm_started && !report.resumed)
    say(o, "the active policy reads features this compiler does not send: the candidate was trained afresh");
  if (!std::isfinite(trained->uplift) || !finite_model(trained->model))
    throw common::Fatal("training diverged (uplift " + fmt::format("{}", trained->uplift) +
                        ", the model's answers are not finite numbers); the active policy is unchanged, the "
                        "checkpoints are in " +
                        t.work_dir.string());
  report.train_uplift = trained->uplift;
  report.train_uplift_on = trained->on_validation ? p.retrain.validation_suite : p.retrain.training_suite;

  auto& candidate = trained->model;
  // Per process: two projects' retrains at the same head share a data directory.
  auto tmp = o.data_dir / "policies" /
             ("candidate-" + sha->substr(0, 12) + "-" + std::to_string(getpid()) + ".policy.tmp");
  candidate.save(tmp).take();
  auto kept = kept_policy_file(o.data_dir, candidate.metadata().content_hash);
  fs::rename(tmp, kept);
  report.candidate_hash = candidate.metadata().content_hash;
  if (report.candidate_hash == active.content_hash)  // the same bytes as the active's kept file
    throw common::Fatal(
        "training left the active policy unchanged (same content); nothing to promote, nothing changed");
  report.candidate_file = kept.string();
  db::LineageRow row;
  row.project = p.name;
  row.name = candidate.metadata().name;
  row.content_hash = report.candidate_hash;
  row.parent_id = active.lineage_id;
  row.file = kept.string();
  row.trained_commit = *sha;
  row.suites_json = key;
  row.state = "candidate";
  row.reason = db::kBeingEvaluated;
  report.candidate_id =
      db::add_to_lineage(db, row, candidate.metadata().training.empty() ? "{}" : candidate.metadata().training);
  // What a retrain cut short left (under this project's retrain lock, so no
  // other retrain's): its candidate, never judged, and its work directory.
  for (auto id : db::abandon_unjudged_candidates(db, p.name, report.candidate_id))
    say(o, fmt::format("lineage #{}: abandoned, never judged (its retrain was cut short)", id));
  remove_other_work_dirs(o.data_dir / "retrain", p.name, t.work_dir);

  // Both policies at the same build, on code the candidate never saw.
  EvaluationRunOptions eo;
  eo.data_dir = o.data_dir;
  eo.jobs = jobs;
  // A module that the policy's compile breaks (a crash, a hang) is a loss
  // too: a candidate must not win by making the compiler fail.
  auto broken = [](const evaluator::EvaluationResult& r) {
    return static_cast<int>(
        std::count_if(r.modules.begin(), r.modules.end(), [](const auto& m) { return m.learned_failed(); }));
  };
  auto losses = [&](const evaluator::EvaluationResult& r) { return r.summary.losses + broken(r); };
  std::vector<reports::SuiteFigures> per_suite;
  // A candidate that could not be judged is rejected with the error that
  // stopped it, never left "being evaluated" for a hand promotion without
  // figures: `policy list` says why.
  try {
    auto active_model = policy::PolicyModel::load(active.file).take();
    for (const auto& h : holdout) {
      say(o, "evaluating the active policy and the candidate on " + h.suite.name);
      // The active policy may not run here at all: that is what `decide`'s
      // features rule retrains for. It then wins nothing and every module
      // counts as its loss, and the candidate is judged against that.
      // A compiler that compiles no module of the suite even without a
      // policy judges neither policy: an error (exit 2, the training kept
      // for a rerun), never "the policy cannot run here".
      auto compiler_broken = [&](const EvaluationFailed& e) {
        if (e.compiler_broken)
          throw common::Fatal("cannot judge the candidate on " + h.suite.name + " at " + build.label + ": " + e.what() +
                              "; the training is kept for a rerun");
      };
      std::optional<StoredEvaluation> a;
      try {
        a = evaluate_and_store(db, build, h, active_model, eo);
      } catch (const EvaluationFailed& e) {
        compiler_broken(e);
        say(o, "the active policy cannot run on " + h.suite.name + " here (" + e.what() +
                   "): it counts as no uplift, every module a loss");
      }
      std::optional<StoredEvaluation> stored;
      try {
        stored = evaluate_and_store(db, build, h, candidate, eo);
      } catch (const EvaluationFailed& e) {
        compiler_broken(e);
        // A verdict, not an error: the candidate is rejected (exit 1), and a
        // scheduler does not train it again as after a failure.
        report.state = "rejected";
        report.reason = "the candidate cannot run on " + h.suite.name + " here: " + e.what();
        report.seconds = seconds_since(start);
        db::set_lineage_state(db, report.candidate_id, report.state, "{}", report.reason);
        remove_work_dir(t.work_dir);
        return report;
      }
      auto& c = *stored;
      reports::HeldOutFigures active_figures, candidate_figures;
      if (a) {
        // Both uplifts over the modules both evaluations measured: a module one
        // of them failed must not leave that side's figure alone (its losses
        // count above).
        auto levels =
            reports::compare_levels(evaluator::measured_sizes(a->result), evaluator::measured_sizes(c.result));
        active_figures = {levels.before.uplift, losses(a->result), a->result.summary.modules, broken(a->result)};
        candidate_figures = {levels.after.uplift, losses(c.result), c.result.summary.modules, broken(c.result)};
      } else {
        int modules = static_cast<int>(h.suite.modules.size());
        active_figures = {0, modules, modules, modules};
        candidate_figures = {c.result.summary.uplift, losses(c.result), c.result.summary.modules, broken(c.result)};
      }
      report.holdout.push_back({h.suite.name, active_figures.uplift, candidate_figures.uplift, active_figures.losses,
                                candidate_figures.losses, candidate_figures.modules});
      report.active.uplift += active_figures.uplift / holdout.size();
      report.candidate.uplift += candidate_figures.uplift / holdout.size();
      report.active.losses += active_figures.losses;
      report.candidate.losses += candidate_figures.losses;
      report.active.modules += active_figures.modules;
      report.candidate.modules += candidate_figures.modules;
      report.active.failed += active_figures.failed;
      report.candidate.failed += candidate_figures.failed;
      per_suite.push_back({h.suite.name, active_figures, candidate_figures});
    }
  } catch (const std::exception& e) {
    try {
      db::set_lineage_state(db, report.candidate_id, "rejected", "{}",
                            std::string(db::kNotJudgedReason) + ": " + e.what());
    } catch (...) {  // the database itself may be what failed; the error rethrown says so
    }
    throw;
  }
  reports::PromotionSettings promotion{p.retrain.margin, p.retrain.max_extra_losing};
  auto verdict = reports::judge_candidate_per_suite(report.active, report.candidate, per_suite, promotion);
  report.reason = verdict.reason;
  report.seconds = seconds_since(start);
  auto figures = figures_json(report).dump();
  // The verdict's own state at once: a loser left `candidate` (the database
  // lost before the rewrite below) would read as one a person may promote.
  db::set_lineage_state(db, report.candidate_id, verdict.promote ? "candidate" : "rejected", figures, verdict.reason);
  if (verdict.promote && promote_mode == "auto") {
    if (db::promote(db, p.name, report.candidate_id, report.active_id, verdict.reason)) {
      report.promoted = true;
      report.state = "active";
    } else {
      report.state = "rejected";
      report.reason =
          "the project's active policy changed while this candidate was trained (another promotion or "
          "a rollback); not promoted";
    }
  } else if (verdict.promote) {
    report.state = "candidate";
    report.reason = "not promoted (--promote never): " + verdict.reason;
  } else {
    report.state = "rejected";
  }
  if (!report.promoted) db::set_lineage_state(db, report.candidate_id, report.state, figures, report.reason);
  remove_work_dir(t.work_dir);  // done: the candidate is kept
  return report;
}

}  // namespace sweep
