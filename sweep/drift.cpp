#include "sweep/drift.h"

#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "builder/recipe.h"
#include "common/json_text.h"
#include "common/text.h"
#include "db/drift.h"
#include "db/jobs.h"
#include "policy/model.h"
#include "reports/broken_builds.h"
#include "reports/module_changes.h"
#include "sweep/alert_matching.h"
#include "sweep/compat_features.h"
#include "sweep/evaluation_reuse.h"
#include "sweep/notify.h"
#include "sweep/plan.h"
#include "sweep/recording.h"
#include "sweep/series_sizes.h"
#include "sweep/suite_selection.h"
#include "sweep/sweep.h"
#include "sweep/timeline.h"
#include "tracker/git.h"
#include "tracker/sampling.h"

namespace sweep {
using json = nlohmann::json;

std::string Finding::details_json() const {
  auto level = [](const reports::Level& l) {
    return json{{"uplift", l.uplift}, {"total_default", l.total_default}, {"total_learned", l.total_learned}};
  };
  // evaluation_error quotes a compiler's words, in any encoding.
  return common::json_text(json{{"suite", suite},
                                {"kind", kind},
                                {"before", level(before)},
                                {"after", level(after)},
                                {"uplift_delta", change.uplift_delta},
                                {"default_delta", change.default_delta},
                                {"learned_delta", change.learned_delta},
                                {"last_good", last_good},
                                {"first_bad", first_bad},
                                {"culprit", culprit},
                                {"range_first", range_first},
                                {"last_good_label", last_good_label},
                                {"first_bad_label", first_bad_label},
                                {"range_first_label", range_first_label},
                                {"subject", subject},
                                {"author", author},
                                {"time", time},
                                {"win_to_loss", win_to_loss},
                                {"loss_to_win", loss_to_win},
                                {"most_affected", most_affected},
                                {"features_missing", features_missing},
                                {"features_new", features_new},
                                {"newly_failing", newly_failing},
                                {"failing", failing},
                                {"evaluation_error", evaluation_error},
                                {"broken_samples", broken_samples},
                                {"recovered_at", recovered_at},
                                {"recovered_at_label", recovered_at_label},
                                {"recovered_taken", recovered_taken},
                                {"decisions_before", decisions_before},
                                {"decisions_after", decisions_after},
                                {"not_compared", not_compared},
                                {"carried_forward", carried},
                                {"range_size", range_size},
                                {"spread", spread},
                                {"across_samples", across_samples},
                                {"bisect_evaluations", evaluations}});
}

std::string Finding::sentence() const {
  std::string where = change_place_text(
      {culprit, subject, time, range_first, range_first_label, first_bad, first_bad_label, spread, !carried.empty()});
  std::string what;
  auto recovered = recovered_text(kind, recovered_at, recovered_at_label, newly_failing, recovered_taken);
  if (kind == "build-broken") return "the build broke at " + where + broken_samples_text(broken_samples) + recovered;
  if (kind == "policy-unusable")
    return "the policy cannot run on " + suite + " from " + where + ": " + evaluation_error + recovered;
  if (kind == "feature-set-changed")
    what = fmt::format("the compiler's features changed on {} ({} newly missing, {} newly sent)", suite,
                       features_missing.size(), features_new.size());
  else if (kind == "uplift-dropped" || kind == "uplift-rose")
    what = "uplift on " + suite + " " +
           reports::uplift_change_text(kind == "uplift-dropped", spread, change.uplift_delta, before.uplift,
                                       after.uplift, reports::relative_move(before.total_default, after.total_default),
                                       reports::relative_move(before.total_learned, after.total_learned));
  else if (kind == "modules-failing" || kind == "compiler-failing")
    what = failing_modules_text(kind, newly_failing, suite);
  else if (kind == "modules-flipped")
    what = fmt::format("{} modules of {} turned from win to loss (uplift {} → {})", win_to_loss.size(), suite,
                       common::signed_percent(before.uplift), common::signed_percent(after.uplift));
  else
    what = fmt::format("sizes on {} moved: default {}, learned {} (uplift {} → {})", suite,
                       common::signed_percent(change.default_delta), common::signed_percent(change.learned_delta),
                       common::signed_percent(before.uplift), common::signed_percent(after.uplift));
  // Ties on every module, the policy never asked: not a policy that got
  // worse but a compiler that stopped consulting it.
  return what + reports::unasked_note(decisions_before, decisions_after) + ": " + where + recovered;
}

namespace {

reports::Level level_of(const db::SeriesPoint& p) { return {p.uplift, p.total_default, p.total_learned}; }

/// Whose compiles fail: the policy's (its loss), or the compiler's own
/// under its default heuristic (the compiler's regression).
enum class Failing { Learned, Default };

/// One suite's analysis: the series in first-parent order, refined by bisection.
class SuiteAnalysis {
 public:
  /// `position`: each check-in's index in `history`, built once for every suite.
  SuiteAnalysis(const DriftOptions& o, db::Database& db, const std::vector<tracker::CommitInfo>& history,
                const std::map<std::string, std::size_t>& position, db::Id repository_id, PlanInput plan,
                std::string suite_name)
      : o_(o), db_(db), history_(history), position_(position), repository_id_(repository_id), plan_(std::move(plan)),
        suite_(std::move(suite_name)),
        samples_(o.samples.begin(), o.samples.end()) {}

  std::vector<Finding> run(DriftReport& report) {
    load();
    // Each pass bisects every change that still has unmeasured check-ins
    // between its two sides; a range can hold several changes, which the
    // next pass sees once bisection has measured the check-ins between them.
    // Where the policy stopped running at all is bisected too; either kind
    // of bisection may reveal a change of the other, so both are detected again.
    constexpr int kMaxPasses = 128;
    bool done = !o_.bisect;
    for (int pass = 0; pass < kMaxPasses && !done; ++pass) {
      bool narrowed = false;
      for (const auto& c : changes()) {
        if (!asked_for(c.first, c.second) || unknown_between(c.first, c.second).empty() ||
            !bisected_.insert(c).second)
          continue;
        // Ends whose own levels are equal (a spread change whose parts cancel
        // out there, one step up and a drift back down) have no check-in
        // between nearer either: bisecting would spend builds to call every
        // one new. The alert stays a range over them.
        auto ends = compared(c.first, c.second);
        if (reports::verdict_against(ends.after, ends.before) == reports::Verdict::Old) continue;
        bisect(c.first, c.second, midpoint_verdict(c.first, c.second), report);
        narrowed = true;
        break;  // the series changed: detect again
      }
      for (auto who : {Failing::Learned, Failing::Default})
        for (const auto& c : failing_steps(who)) {
          if (narrowed) break;
          // Begun a few a sample: no check-in made it alone.
          if (c.across_samples || !asked_for(c.before, c.after) || unknown_between(c.before, c.after).empty() ||
              !bisected_.insert({c.before, c.after}).second)
            continue;
          bisect(c.before, c.after, failing_verdict(c.before, c.modules, who), report);
          narrowed = true;
        }
      for (const auto& s : unusable_starts()) {
        if (narrowed) break;
        if (!s.last_done || !asked_for(*s.last_done, s.first_failed) ||
            unknown_between(*s.last_done, s.first_failed).empty() ||
            !bisected_.insert({*s.last_done, s.first_failed}).second)
          continue;
        bisect(*s.last_done, s.first_failed, usable_verdict(), report);
        narrowed = true;
      }
      done = !narrowed;
    }
    if (!done && o_.workers.progress)
      o_.workers.progress->line(fmt::format("warning: bisection on {} stopped after {} passes; the changes left are "
                                            "reported as ranges (run `driftwatch bisect` to go on)",
                                            suite_, kMaxPasses));
    record_series();
    report.evaluated_checkins = std::max(report.evaluated_checkins, evaluated().size());
    report.evaluated_by_suite[suite_] = evaluated().size();
    return findings();
  }

  /// The recorded commits' ids by sha, for the alerts' references.
  std::map<std::string, db::Id> commit_ids() const {
    std::map<std::string, db::Id> out;
    for (const auto& [pos, p] : points_) out[p.sha] = p.commit_id;
    return out;
  }

 private:
  void load() {
    points_.clear();
    for (auto& p : db::load_series(db_, repository_id_, plan_.recipe_hash, plan_.policy_hash,
                                   plan_.suites[0].manifest_hash, &machine_))
      if (auto it = position_.find(p.sha); it != position_.end()) points_[it->second] = std::move(p);
    filled_.clear();
    auto ev = evaluated();
    std::vector<std::vector<evaluator::ModuleSizes>> measured;
    for (auto pos : ev) measured.push_back(sizes_of(points_.at(pos)));
    auto filled = reports::carried_forward(measured, ev);
    modules_ = 0;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      modules_ = std::max(modules_, filled[i].sizes.size());
      filled_[ev[i]] = std::move(filled[i]);
    }
  }

  std::vector<std::size_t> evaluated() const {
    std::vector<std::size_t> out;
    for (const auto& [pos, p] : points_)
      if (p.evaluated) out.push_back(pos);
    return out;
  }

  /// Two check-ins' levels over their modules, each failed one taken from
  /// where it was last measured (reports::carried_forward).
  reports::ComparedLevels compared(std::size_t a, std::size_t b) const {
    return reports::compare_levels(filled_.at(a).sizes, filled_.at(b).sizes);
  }

  struct Step {
    reports::LevelChange change;
    std::size_t before, after;  ///< positions of evaluated check-ins: consecutive, unless spread
    bool spread = false;        ///< crossed the threshold over several steps, none of them alone
    std::vector<std::string> modules;  ///< failing_steps(): the modules it carries (reports::FoundStep)
    bool across_samples = false;       ///< reports::slow_drifts(): over several samples, nothing to bisect
    std::map<std::string, std::size_t> began;  ///< failing_steps() across samples: each module's own start
  };

  /// Every change worth an alert (reports::find_steps), each pair compared
  /// over the modules both measured.
  std::vector<Step> steps() const {
    auto ev = evaluated();
    std::vector<Step> out;
    auto levels = [&](std::size_t a, std::size_t b) {
      auto c = compared(ev[a], ev[b]);
      return std::pair{c.before, c.after};
    };
    // A step inside two samples, over the modules both samples measured.
    auto within = [&](std::size_t a, std::size_t b, std::size_t from, std::size_t to) {
      std::set<std::string> both, at_from;
      for (const auto& m : filled_.at(ev[from]).sizes) at_from.insert(m.name);
      for (const auto& m : filled_.at(ev[to]).sizes)
        if (at_from.count(m.name)) both.insert(m.name);
      auto only = [&](std::size_t pos) {
        std::vector<evaluator::ModuleSizes> out;
        for (const auto& m : filled_.at(ev[pos]).sizes)
          if (both.count(m.name)) out.push_back(m);
        return out;
      };
      auto c = reports::compare_levels(only(a), only(b));
      return std::pair{c.before, c.after};
    };
    std::vector<bool> sample;
    for (auto pos : ev) sample.push_back(is_sample(pos));
    auto found = reports::find_steps(sample, levels, thresholds(), within);
    for (auto& d : reports::slow_drifts(sample, levels, found, thresholds().min_uplift_change))
      found.push_back(std::move(d));
    std::stable_sort(found.begin(), found.end(), [](const auto& x, const auto& y) { return x.after < y.after; });
    for (const auto& s : found) out.push_back({s.change, ev[s.before], ev[s.after], s.spread, {}, s.across_samples});
    return out;
  }

  /// Changes to bisect, as (position before, position after).
  std::vector<std::pair<std::size_t, std::size_t>> changes() const {
    std::vector<std::pair<std::size_t, std::size_t>> out;
    for (const auto& s : steps())
      if (!s.across_samples) out.emplace_back(s.before, s.after);
    return out;
  }

  /// One of the grid's samples (every measured check-in when the caller gave no grid).
  bool is_sample(std::size_t pos) const {
    return samples_.empty() || samples_.count(points_.at(pos).sha) > 0;
  }

  reports::DriftThresholds thresholds() const {
    return {o_.project.alerts.min_uplift_change, o_.project.alerts.min_total_change};
  }

  bool broken(std::size_t pos) const {
    auto it = points_.find(pos);
    return it != points_.end() && it->second.build_outcome != "ok";
  }

  /// Evaluated, or the policy could not run there: nothing left to measure.
  bool settled(std::size_t pos) const {
    auto it = points_.find(pos);
    return it != points_.end() && (it->second.evaluated || !it->second.evaluation_error.empty());
  }

  /// Whether bisecting from a to b was asked for (DriftOptions::bisect_from/to).
  bool asked_for(std::size_t a, std::size_t b) const {
    if (o_.bisect_from.empty()) return true;
    auto from = position_.find(o_.bisect_from), to = position_.find(o_.bisect_to);
    return from != position_.end() && to != position_.end() && a >= from->second && b <= to->second;
  }

  /// Positions strictly between a and b that are neither measured nor known broken.
  std::vector<std::size_t> unknown_between(std::size_t a, std::size_t b) const {
    std::vector<std::size_t> out;
    for (auto pos = a + 1; pos < b; ++pos)
      if (!tried_.count(pos) && !settled(pos) && !broken(pos)) out.push_back(pos);
    return out;
  }

  using VerdictOf = std::function<reports::Verdict(std::size_t)>;

  /// For bisecting a change from a to b: nearer a's level or b's
  /// (reports::midpoint_verdict), each over the modules it and a measured.
  VerdictOf midpoint_verdict(std::size_t a, std::size_t b) const {
    auto ends = compared(a, b);
    return [this, a, ends](std::size_t pos) {
      if (broken(pos) || !points_.count(pos) || !points_.at(pos).evaluated) return reports::Verdict::Skip;
      return reports::midpoint_verdict(compared(a, pos).after, ends.before, ends.after, thresholds());
    };
  }

  /// How many more modules the policy's compile must newly fail on for an
  /// alert: the project's `failing_modules` (one by default), but at most
  /// all modules but one. A failure is carried at its last size and moves no
  /// figure, so without this alert it would pass unsaid; all of them failing
  /// fails the evaluation whole (policy-unusable).
  int failing_threshold(Failing who) const {
    // A compile the compiler itself crashes or hangs on is its regression,
    // whatever the policy does: one module is enough.
    if (who == Failing::Default) return 1;
    int all_but_one = std::max(1, static_cast<int>(modules_) - 1);
    return std::max(1, std::min(o_.project.alerts.failing_modules, all_but_one));
  }

  /// Where the policy's compile began to fail on modules: between
  /// consecutive evaluated check-ins, or between two samples when no step
  /// inside carries it alone (bisection measured it in parts), as for levels.
  std::vector<Step> failing_steps(Failing who) const {
    auto ev = evaluated();
    std::vector<bool> sample;
    for (auto pos : ev) sample.push_back(is_sample(pos));
    // Which modules, not how many: a check-in that fixes three and breaks
    // three others is three new failures.
    auto newly = [&](std::size_t a, std::size_t b) { return newly_failing(ev[a], ev[b], who); };
    auto compiles_at = [&](std::size_t at, const std::string& m) { return compiles(points_.at(ev[at]), m, who); };
    std::vector<Step> out;
    for (const auto& s : reports::failing_steps(sample, newly, failing_threshold(who), compiles_at)) {
      out.push_back({s.change, ev[s.before], ev[s.after], s.spread, s.modules, s.across_samples, {}});
      for (const auto& [m, at] : s.began) out.back().began[m] = ev[at];
    }
    return out;
  }

  /// The modules `who`'s compile fails on at `b` and did not at `a`.
  /// The modules `who`'s compile fails on at `pos`, sorted. A learned
  /// compile that stops asking the policy is as lost to it as one that
  /// fails: its module is compared at its last measured sizes.
  std::vector<std::string> failing_at(std::size_t pos, Failing who) const {
    const auto& p = points_.at(pos);
    if (who == Failing::Default) return p.default_failing;
    std::vector<std::string> lost;
    std::set_union(p.learned_failing.begin(), p.learned_failing.end(), p.learned_unasked.begin(),
                   p.learned_unasked.end(), std::back_inserter(lost));
    return lost;
  }

  /// Whether `who`'s compile of `module` is known to have worked at `p`
  /// (and, the policy's, to have asked it): not merely absent from the
  /// failures, as a timeout the machine may have caused, or a compile the
  /// machine failed, are in none of them and say nothing.
  static bool compiles(const db::SeriesPoint& p, const std::string& module, Failing who) {
    auto in = [&](const std::vector<std::string>& sorted) {
      return std::binary_search(sorted.begin(), sorted.end(), module);
    };
    auto at = std::lower_bound(p.modules.begin(), p.modules.end(), module,
                               [](const auto& m, const std::string& name) { return m.name < name; });
    bool both = at != p.modules.end() && at->name == module;
    if (who == Failing::Learned) return both && !in(p.learned_unasked);
    // The default compiled where both did, or where only the policy's failed,
    // never asked, or was failed by the machine.
    return both || in(p.learned_failing) || in(p.learned_unasked) || in(p.learned_unsure);
  }

  /// Whether a check-in shows a failure (true), shows it gone (false), or
  /// says nothing of it (nullopt: not measured, or a compile the machine
  /// failed).
  using Shows = std::function<std::optional<bool>(std::size_t pos, const db::SeriesPoint&)>;

  /// Where a failure found at `pos` ended: the first check-in after it,
  /// before `until` (the next finding of the same cause, which is that
  /// finding's to tell), for which `shows` is false; "" while none is.
  /// What fails after that is judged as any failure is: a crash back on as
  /// many modules, or a build broken for as many samples, as the project's
  /// alerts need is a finding and an alert of its own, with its own
  /// culprit; one on fewer is below the project's threshold, like any other,
  /// and does not take back the end of this one (whose culprit and count it
  /// does not share: an unrelated check-in crashing one of five modules).
  std::string recovered_since(std::size_t pos, std::optional<std::size_t> until, const Shows& shows) const {
    auto end = until ? points_.lower_bound(*until) : points_.end();
    for (auto it = points_.upper_bound(pos); it != end; ++it)
      if (auto failing = shows(it->first, it->second); failing && !*failing) return it->second.sha;
    return {};
  }

  std::vector<std::string> newly_failing(std::size_t a, std::size_t b, Failing who) const {
    const auto was = failing_at(a, who);
    const auto now = failing_at(b, who);
    std::vector<std::string> out;
    std::set_difference(now.begin(), now.end(), was.begin(), was.end(), std::back_inserter(out));
    // A default that timed out at `a` without being found hanging alone may
    // have hung already (the load's timeout, or one stored before hangs were
    // told apart): failing at `b` is not known to be new. A module hanging
    // for months is no news at the first check-in that tells it, and the
    // step is never pinned to the wrong side of `a`.
    // So too a learned compile the machine may have failed at `a`: a hang
    // under the policy, told only once retried alone, is no new failure.
    const auto& unsure = who == Failing::Default ? points_.at(a).default_unsure : points_.at(a).learned_unsure;
    std::erase_if(out, [&](const std::string& m) { return std::binary_search(unsure.begin(), unsure.end(), m); });
    return out;
  }

  /// For the modules a step carries, newly failing after `a`: New where that
  /// many of them fail. Only the step's own: modules an alert inside a
  /// spread range already names would make every check-in after it New.
  VerdictOf failing_verdict(std::size_t a, const std::vector<std::string>& modules, Failing who) const {
    return [this, a, modules, who](std::size_t pos) {
      if (broken(pos) || !points_.count(pos) || !points_.at(pos).evaluated) return reports::Verdict::Skip;
      auto now = newly_failing(a, pos, who);
      auto ours = std::count_if(now.begin(), now.end(),
                                [&](const auto& m) { return std::binary_search(modules.begin(), modules.end(), m); });
      return int(ours) >= failing_threshold(who) ? reports::Verdict::New : reports::Verdict::Old;
    };
  }

  /// For the policy's loss: New where the evaluation failed as a whole.
  VerdictOf usable_verdict() const {
    return [this](std::size_t pos) {
      if (broken(pos) || !points_.count(pos)) return reports::Verdict::Skip;
      const auto& p = points_.at(pos);
      if (p.evaluated) return reports::Verdict::Old;
      return p.evaluation_error.empty() ? reports::Verdict::Skip : reports::Verdict::New;
    };
  }

  /// Measures one check-in through the job table (build, then evaluate);
  /// its jobs join the report's, so a failed one fails the sweep too.
  void measure(std::size_t pos, DriftReport& report) {
    auto in = plan_;
    in.checkins = {{history_[pos].sha, "", "", 0}};
    in.priority = 10;  // before anything else queued for the project
    auto ids = db::enqueue_jobs(db_, o_.project.name, o_.sweep_id, plan_jobs(in));
    report.job_ids.insert(report.job_ids.end(), ids.begin(), ids.end());
    if (o_.workers.progress) {
      auto counts = db::count_jobs(db_, ids);
      o_.workers.progress->extend(counts.total() - counts.finished());
    }
    run_until_finished(o_.workers, db_, ids);
    load();
  }

  void bisect(std::size_t a, std::size_t b, const VerdictOf& verdict, DriftReport& report) {
    std::size_t n = b - a;  // candidates a+1 .. b; b is known to have the change
    reports::Bisection bis(n);
    for (std::size_t i = 0; i + 1 < n; ++i) {
      auto pos = a + 1 + i;
      if (broken(pos) || settled(pos)) (void)bis.mark(i, verdict(pos));
      else if (tried_.count(pos)) (void)bis.mark(i, reports::Verdict::Skip);
    }
    if (o_.workers.progress)
      o_.workers.progress->line(fmt::format("bisecting {} on {}: {} check-in(s) between {} and {}", suite_,
                                            "first-parent history", n - 1, history_[a].short_sha(),
                                            history_[b].short_sha()));
    int used = 0;
    while (auto i = bis.next()) {
      auto pos = a + 1 + *i;
      tried_.insert(pos);
      measure(pos, report);
      // A whole evaluation that failed is a measurement too (where the
      // policy stopped running, it is the evidence); no build is not.
      if (points_.count(pos) && (points_.at(pos).evaluated || !points_.at(pos).evaluation_error.empty())) {
        ++report.bisect_evaluations;
        ++used;
      } else {
        ++report.bisect_unevaluated;
      }
      (void)bis.mark(*i, verdict(pos));
    }
    // Credited to the first check-in measured with the change (the finding's
    // first bad one; the range before it holds only skipped check-ins), with
    // the size of the range between the two samples it started from.
    auto culprit = a + 1 + bis.outcome().last;
    evaluations_[culprit] += used;
    if (!between_.count(culprit)) between_[culprit] = int(n - 1);
  }

  void record_series() {
    auto ev = evaluated();
    std::set<std::size_t> change_at;
    for (const auto& c : changes()) change_at.insert(c.second);
    for (auto pos : ev) {
      const auto& p = points_.at(pos);
      bool cp = change_at.count(pos) > 0;
      db::record_drift_point(db_, o_.project.name, plan_.policy_hash, plan_.suites[0].manifest_hash, "uplift",
                             p.commit_id, int(pos), p.uplift, p.wins, p.ties, p.losses, cp);
      db::record_drift_point(db_, o_.project.name, plan_.policy_hash, plan_.suites[0].manifest_hash, "total_default",
                             p.commit_id, int(pos), double(p.total_default), p.wins, p.ties, p.losses, cp);
      db::record_drift_point(db_, o_.project.name, plan_.policy_hash, plan_.suites[0].manifest_hash, "total_learned",
                             p.commit_id, int(pos), double(p.total_learned), p.wins, p.ties, p.losses, cp);
    }
  }

  /// The finding from a to b. `of_sizes`: a change read from the modules'
  /// sizes, whose range reaches back past a module carried at a; a change of
  /// the feature set or of the failing modules is read at a and b alone.
  Finding finding_between(std::size_t a, std::size_t b, bool of_sizes = true) const {
    const auto& before = points_.at(a);
    const auto& after = points_.at(b);
    Finding f;
    f.suite = suite_;
    f.last_good = before.sha;
    f.first_bad = after.sha;
    f.decisions_before = before.learned_decisions;
    f.decisions_after = after.learned_decisions;
    auto levels = compared(a, b);
    f.before = levels.before;
    f.after = levels.after;
    f.not_compared = levels.only_before;
    f.not_compared.insert(f.not_compared.end(), levels.only_after.begin(), levels.only_after.end());
    if (auto searched = search_between_samples(a, b)) {
      f.range_size = searched->first;
      f.evaluations = searched->second;
    } else {
      f.range_size = between_.count(b) ? between_.at(b) : int(b - a - 1);
      // Bisection credits the check-in it pinned; a change made in parts was
      // pinned inside the range, so everything credited within it counts.
      f.evaluations = 0;
      for (auto it = evaluations_.upper_bound(a); it != evaluations_.end() && it->first <= b; ++it)
        f.evaluations += it->second;
    }
    // A module that failed at a and comes back changed at b may have changed
    // anywhere after its last measurement: the range reaches back there, and
    // b (perhaps the check-in that fixed its crash) is not named alone.
    std::size_t from = a;
    if (const auto& carried = filled_.at(a).carried; of_sizes && !carried.empty()) {
      std::vector<std::string> moved;
      from = reports::change_reaches_back_to(a, carried, sizes_of(after), &moved);
      for (const auto& name : moved) {
        const auto& at = history_[carried.at(name).measured_at];
        f.carried.push_back(name + " (measured at " + checkin_name(at.sha, at.subject) + ")");
      }
    }
    if (from < a) {
      f.last_good = points_.at(from).sha;
      f.range_size = int(b - from - 1);
    }
    // Everything between is broken (or b is next): the culprit is b, or one of the range.
    bool exact = b == from + 1;
    if (exact) {
      f.culprit = after.sha;
      f.subject = after.subject;
      f.author = after.author;
      f.time = after.time;
    } else {
      f.range_first = history_[from + 1].sha;
    }
    auto moves = reports::module_changes(filled_.at(a).sizes, filled_.at(b).sizes, 5);
    if (moves) {
      f.win_to_loss = moves->win_to_loss;
      f.loss_to_win = moves->loss_to_win;
      for (const auto& m : moves->largest_moves) f.most_affected.push_back(m.text());
    }
    return f;
  }

  /// A spread change's range without the check-ins at either end that
  /// bisection measured flat (a docs-only check-in after the last part, a
  /// byte-identical compiler): from the last flat one to the last that
  /// moved. Its figures stay the samples', and so does what names its alert
  /// (Finding::samples_range); a range of one check-in would name a culprit
  /// no step found, and stays as it is.
  void narrow_to_moves(Finding& f, const Step& step) const {
    // Set narrowed or not: ends narrowed once and no longer (a part and its
    // revert measured inside since) are moved back by the same alert.
    f.samples_range = f.range_first + ".." + f.first_bad;
    std::vector<std::size_t> at;
    std::vector<const reports::FilledPoint*> points;
    for (auto pos : evaluated())
      if (pos >= step.before && pos <= step.after) {
        at.push_back(pos);
        points.push_back(&filled_.at(pos));
      }
    auto [first, last] = reports::moving_span(points);
    if ((at[first] == step.before && at[last] == step.after) || at[last] - at[first] < 2) return;
    auto narrowed = finding_between(at[first], at[last]);
    f.last_good = narrowed.last_good;
    f.first_bad = narrowed.first_bad;
    f.range_first = narrowed.range_first;
    f.range_size = narrowed.range_size;
    f.carried = narrowed.carried;
  }

  std::vector<Finding> findings() const {
    std::vector<Finding> out;
    auto ev = evaluated();
    auto level_steps = steps();
    std::vector<Finding> level;
    for (const auto& step : level_steps) {
      auto f = finding_between(step.before, step.after);
      f.spread = step.spread && f.culprit.empty();
      f.change = step.change;
      if (f.spread && !step.across_samples) narrow_to_moves(f, step);
      if (step.across_samples) {
        // Never bisected: what bisection spent in its range was another change's.
        f.across_samples = true;
        f.evaluations = 0;
        if (f.last_good == points_.at(step.before).sha) f.range_size = int(step.after - step.before - 1);
      }
      level.push_back(std::move(f));
    }
    // A spread range's own flips, not those of a step inside it.
    std::vector<reports::StepFlips> flips;
    for (std::size_t k = 0; k < level.size(); ++k)
      flips.push_back({level_steps[k].before, level_steps[k].after, level_steps[k].spread, level[k].win_to_loss});
    reports::keep_spread_flips_own(flips);
    for (std::size_t k = 0; k < level.size(); ++k) {
      level[k].win_to_loss = std::move(flips[k].win_to_loss);
      level[k].kind =
          reports::change_kind(level_steps[k].change, level[k].win_to_loss.size(), o_.project.alerts.flipped_modules);
      // A size change is told in bytes: the modules that moved most bytes,
      // not those whose ratio moved most (a few bytes of a small module).
      if (level[k].kind != "size-changed") continue;
      auto moves =
          reports::module_changes(filled_.at(level_steps[k].before).sizes, filled_.at(level_steps[k].after).sizes,
                                  std::numeric_limits<std::size_t>::max());
      if (!moves) continue;
      level[k].most_affected.clear();
      for (const auto& m : reports::by_bytes_moved(moves->largest_moves, 5)) level[k].most_affected.push_back(m.text());
    }
    for (auto& f : level) out.push_back(std::move(f));
    // The compiler's feature set, as the policy saw it at each evaluated check-in.
    for (std::size_t i = 1; i < ev.size(); ++i) {
      const auto& a = points_.at(ev[i - 1]);
      const auto& b = points_.at(ev[i]);
      auto before = compat_features(a.compat_json), after = compat_features(b.compat_json);
      if (before.lost == after.lost && before.added == after.added) continue;
      auto f = finding_between(ev[i - 1], ev[i], false);
      f.kind = "feature-set-changed";
      // What this change did: features a policy has ignored since its
      // training are not news at every later change.
      std::set_difference(after.lost.begin(), after.lost.end(), before.lost.begin(), before.lost.end(),
                          std::back_inserter(f.features_missing));
      std::set_difference(after.added.begin(), after.added.end(), before.added.begin(), before.added.end(),
                          std::back_inserter(f.features_new));
      // Features back, or gone from those the policy ignores: nothing to act on.
      if (f.features_missing.empty() && f.features_new.empty()) continue;
      out.push_back(std::move(f));
    }
    // Modules the policy's compile newly fails on: each is compared at its
    // last measured size, so no figure moves and no other alert says it.
    for (auto who : {Failing::Learned, Failing::Default}) {
      const auto steps = failing_steps(who);
      for (std::size_t k = 0; k < steps.size(); ++k) {
        const auto& step = steps[k];
        auto f = finding_between(step.before, step.after, false);
        f.spread = step.spread && f.culprit.empty();
        f.kind = who == Failing::Learned ? "modules-failing" : "compiler-failing";
        if (step.across_samples) {
          f.across_samples = true;  // never bisected
          f.evaluations = 0;
          if (f.last_good == points_.at(step.before).sha) f.range_size = int(step.after - step.before - 1);
        }
        // A spread range's own modules: those an alert inside it names are that alert's.
        f.failing = step.modules;
        f.newly_failing = static_cast<int>(f.failing.size());
        // Each module only until a later step fails it again (from just
        // after that step's last check-in without it: a spread step's
        // failure may begin anywhere after there): that step's alert tells
        // it from there, and this one is over once the others compile.
        std::map<std::string, std::size_t> until;
        for (std::size_t later = k + 1; later < steps.size(); ++later)
          for (const auto& m : steps[later].modules)
            if (std::binary_search(f.failing.begin(), f.failing.end(), m)) {
              // A step begun a few a sample knows where each module's began.
              auto began = steps[later].began.find(m);
              auto from = (began != steps[later].began.end() ? began->second : steps[later].before) + 1;
              auto [it, added] = until.emplace(m, from);
              if (!added) it->second = std::min(it->second, from);
            }
        f.recovered_at = recovered_since(
            step.after, std::nullopt, [&](std::size_t pos, const db::SeriesPoint& p) -> std::optional<bool> {
              if (!p.evaluated) return std::nullopt;
              std::vector<std::string> own;  // the modules still this finding's here
              for (const auto& m : f.failing)
                if (auto u = until.find(m); u == until.end() || pos < u->second) own.push_back(m);
              if (own.empty()) return std::nullopt;
              auto now = failing_at(pos, who);
              if (std::any_of(own.begin(), own.end(),
                              [&](const std::string& m) { return std::binary_search(now.begin(), now.end(), m); }))
                return true;
              if (std::all_of(own.begin(), own.end(), [&](const std::string& m) { return compiles(p, m, who); }))
                return false;
              return std::nullopt;  // a compile the machine failed, or the default's failure under the policy
            });
        // Of its modules a later alert took, those failing still where this
        // one ended: one fixed again by then compiles, as "all" says.
        for (const auto& [pos, p] : points_)
          if (!f.recovered_at.empty() && p.sha == f.recovered_at) {
            const auto now = failing_at(pos, who);
            f.recovered_taken = static_cast<int>(std::count_if(f.failing.begin(), f.failing.end(), [&](const auto& m) {
              auto u = until.find(m);
              return u != until.end() && u->second <= pos && std::binary_search(now.begin(), now.end(), m);
            }));
          }
        out.push_back(std::move(f));
      }
    }
    // Builds that broke and stayed broken for N samples of the grid.
    std::vector<reports::BuildPoint> builds;
    for (const auto& [pos, p] : points_) builds.push_back({pos, p.build_outcome == "ok", is_sample(pos)});
    const auto runs = reports::broken_runs(builds, o_.project.alerts.broken_builds);
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const auto& run = runs[k];
      Finding f;
      f.suite = suite_;
      f.kind = "build-broken";
      f.last_good = points_.at(run.last_ok).sha;
      pin(f, run.last_ok + 1, run.first_broken);
      f.first_bad = history_[run.first_broken].sha;
      f.broken_samples = o_.project.alerts.broken_builds;
      f.recovered_at = recovered_since(
          run.first_broken, k + 1 < runs.size() ? std::optional(runs[k + 1].first_broken) : std::nullopt,
          [](std::size_t, const db::SeriesPoint& p) -> std::optional<bool> { return p.build_outcome != "ok"; });
      out.push_back(std::move(f));
    }
    for (auto& f : unusable()) out.push_back(std::move(f));
    return out;
  }

  struct UnusableStart {
    std::optional<std::size_t> last_done;  ///< the evaluated check-in before, if any
    std::size_t first_failed = 0;
  };

  /// Where the policy stops running at all: the first whole-failed
  /// evaluation after a done one (or before any), once per run of them.
  std::vector<UnusableStart> unusable_starts() const {
    std::vector<UnusableStart> out;
    std::optional<std::size_t> last_done;
    bool failing = false;
    for (const auto& [pos, p] : points_) {
      if (p.evaluated) {
        last_done = pos;
        failing = false;
      } else if (!p.evaluation_error.empty() && !failing) {
        failing = true;
        out.push_back({last_done, pos});
      }
    }
    return out;
  }

  std::vector<Finding> unusable() const {
    std::vector<Finding> out;
    const auto starts = unusable_starts();
    for (std::size_t k = 0; k < starts.size(); ++k) {
      const auto& [last_done, pos] = starts[k];
      const auto& p = points_.at(pos);
      Finding f;
      f.suite = suite_;
      f.kind = "policy-unusable";
      f.evaluation_error = p.evaluation_error;
      f.first_bad = p.sha;
      f.recovered_at =
          recovered_since(pos, k + 1 < starts.size() ? std::optional(starts[k + 1].first_failed) : std::nullopt,
                          [](std::size_t, const db::SeriesPoint& q) -> std::optional<bool> {
                            if (q.evaluated) return false;
                            return q.evaluation_error.empty() ? std::nullopt : std::optional(true);
                          });
      if (last_done) {
        f.last_good = points_.at(*last_done).sha;
        f.before = level_of(points_.at(*last_done));
      }
      auto searched = last_done ? search_between_samples(*last_done, pos) : std::nullopt;
      f.evaluations = searched ? searched->second : evaluations_.count(pos) ? evaluations_.at(pos) : 0;
      // Failing from the first measured check-in: nothing was ever good, so
      // nothing is pinned (the root commit and the whole history were named).
      if (!last_done) {
        out.push_back(std::move(f));
        continue;
      }
      std::size_t from = *last_done + 1;
      pin(f, from, pos);
      if (searched)
        f.range_size = searched->first;
      else if (between_.count(pos))
        f.range_size = between_.at(pos);
      else if (from != pos) f.range_size = int(pos - from);
      out.push_back(std::move(f));
    }
    return out;
  }

  /// For a change found between `a` and `b` inside one interval of the
  /// grid: the check-ins strictly between its two samples, and how many of
  /// them were measured (an evaluation, or one that failed whole: by
  /// bisection, or by any earlier run or `eval` of the same series). Read
  /// from what is stored, not from this run's bisection: a sweep resumed
  /// after an interruption mid-bisection tells the same search as one that
  /// was not. nullopt when the samples are not known there (no grid, an end
  /// outside it, or a measured sample between a and b: a drift across
  /// samples).
  std::optional<std::pair<int, int>> search_between_samples(std::size_t a, std::size_t b) const {
    if (samples_.empty()) return std::nullopt;
    // The grid's measured positions, in order: a sample that did not build
    // or evaluate bounds nothing, as steps are judged between measured ones.
    std::vector<std::size_t> at;
    for (const auto& sha : samples_)
      if (auto it = position_.find(sha); it != position_.end())
        if (auto p = points_.find(it->second);
            p != points_.end() && (p->second.evaluated || !p->second.evaluation_error.empty()))
          at.push_back(it->second);
    std::sort(at.begin(), at.end());
    auto after = std::lower_bound(at.begin(), at.end(), b);  // the first sample at or after b
    if (after == at.end() || after == at.begin()) return std::nullopt;
    auto before = std::prev(after);  // the last sample before b
    if (*before > a) return std::nullopt;
    int measured = 0;
    for (auto it = points_.upper_bound(*before); it != points_.end() && it->first < *after; ++it)
      measured += it->second.evaluated || !it->second.evaluation_error.empty();
    return std::pair<int, int>{int(*after - *before - 1), measured};
  }

  /// Names the check-in at `pos` the culprit when it is the first not known
  /// good (`from`), else the range that starts at `from` (nothing between was tried).
  void pin(Finding& f, std::size_t from, std::size_t pos) const {
    const auto& first = history_[from];
    if (from == pos) f.culprit = first.sha, f.subject = first.subject, f.author = first.author, f.time = first.time;
    else f.range_first = first.sha;
  }

  const DriftOptions& o_;
  db::Database& db_;
  const std::vector<tracker::CommitInfo>& history_;
  const std::map<std::string, std::size_t>& position_;
  db::Id repository_id_;
  PlanInput plan_;
  std::string suite_;
  std::size_t modules_ = 0;  ///< the suite's modules, as its evaluated check-ins measured them
  std::map<std::size_t, db::SeriesPoint> points_;
  std::map<std::size_t, reports::FilledPoint> filled_;  ///< evaluated points' modules, failures filled in
  std::map<std::size_t, int> evaluations_;  ///< bisection's evaluations, by the check-in they pinned
  std::map<std::size_t, int> between_;      ///< check-ins between the samples bisection started from
  std::set<std::string> samples_;           ///< the grid's check-ins (DriftOptions::samples)
  std::set<std::size_t> tried_;             ///< measured by bisection, whatever came of it
  /// The (before, after) pairs bisected: a pair whose bisection left check-ins
  /// unmeasured (not needed for its verdict) is not bisected again.
  std::set<std::pair<std::size_t, std::size_t>> bisected_;
  /// Tells a compile the machine failed from one the compiler did (compiler-failing counts only those).
  const db::MachineFailureRule machine_ = machine_failure_rule();
};

/// A change of the compiler itself, whatever the suite that finds it.
bool compiler_wide(const std::string& kind) { return kind == "build-broken" || kind == "feature-set-changed"; }

/// What changed and where (the culprit, else the range): the same change
/// seen by a later sweep, or by another suite, has the same key.
std::string change_key(const Finding& f) {
  if (!f.samples_range.empty()) return f.kind + "|" + f.samples_range;
  return f.kind + "|" + (f.culprit.empty() ? f.range_first + ".." + f.first_bad : f.culprit);
}

/// Resolves the open and acknowledged alerts of the policy whose change
/// begins at or before `history[trained_at]`, its training check-in: one
/// first bad there (a `bisect --good` whose range ends there) is part of
/// the baseline too, and no analysis from there on would revisit it.
void resolve_alerts_before(db::Database& db, const std::string& project, const std::string& policy_hash,
                           const std::vector<tracker::CommitInfo>& history, std::size_t trained_at,
                           const std::string& what) {
  std::map<std::string, std::vector<std::pair<db::Id, std::string>>> by_sha;  // first bad: (alert, last good)
  for (const auto& a : db::list_alerts(db, project, {"open", "acknowledged"})) {
    const auto& sha = !a.first_bad_sha.empty() ? a.first_bad_sha : a.culprit_sha;
    if (a.policy_hash == policy_hash && !sha.empty()) by_sha[sha].emplace_back(a.id, a.last_good_sha);
  }
  // Of the check-ins before the training one, only those named as last good
  // by an alert first bad at it (not a copy of a history's whole prefix).
  std::set<std::string> good_at_training, before_training;
  if (auto at = by_sha.find(history[trained_at].sha); at != by_sha.end())
    for (const auto& alert : at->second) good_at_training.insert(alert.second);
  for (std::size_t i = 0; i < trained_at && !good_at_training.empty(); ++i)
    if (good_at_training.count(history[i].sha)) before_training.insert(history[i].sha);
  for (std::size_t i = 0; i <= trained_at && !by_sha.empty(); ++i)
    if (auto it = by_sha.find(history[i].sha); it != by_sha.end()) {
      for (const auto& [id, last_good] : it->second)
        // At the training check-in itself, only a change from before it (its
        // last good check-in earlier): one with nothing good before it (the
        // policy cannot run there at all) is the analysis's own, and stays.
        if (i < trained_at || before_training.count(last_good))
          db::set_alert_state(db, project, id, "resolved", "driftwatch",
                              (i < trained_at ? "before " : "at ") + what + " " + history[trained_at].short_sha() +
                                  ", from which drift is analysed");
      by_sha.erase(it);
    }
}

db::Id commit_id_of(const std::map<std::string, db::Id>& ids, const std::string& sha) {
  auto it = ids.find(sha);
  return it == ids.end() ? 0 : it->second;
}

}  // namespace

namespace {

/// One ordered line of check-ins drift is read along (sweep/timeline.h).
/// Whether the branch at `tip` no longer holds check-in `sha`: it does not
/// reach it, or (`whole`: a history that goes back to its root) the
/// repository lacks it altogether.
bool gone_from(const tracker::GitRepo& repo, const std::string& tip, const std::string& sha, bool whole) {
  if (auto reached = repo.reaches(tip, sha)) return !*reached;
  return whole && !repo.commit(sha).ok();
}

struct Line {
  db::Id repository_id = 0;
  std::vector<tracker::CommitInfo> history;
  std::size_t start = 0;  ///< analysed from here on: the policy's training check-in
  /// The repository; none for toolchains, with nothing between two of them to bisect.
  const tracker::GitRepo* repo = nullptr;
  std::string tip;  ///< the tracked branch's tip, past the range's end
};

/// Analyses every suite along one line, then opens, narrows and supersedes
/// the alerts of what it found.
void analyse_line(const DriftOptions& o, db::Database& db, const Line& line, const builder::Recipe& recipe,
                  const std::string& policy_hash, const std::vector<SelectedSuite>& selected,
                  std::set<std::string>& wide_changes, DriftReport& report) {
  const auto& p = o.project;
  const auto& history = line.history;
  std::map<std::string, std::size_t> position;
  for (std::size_t i = line.start; i < history.size(); ++i) position[history[i].sha] = i;
  const auto label = toolchain_labels(p);
  auto label_of = [&](const std::string& sha) { return label.count(sha) ? label.at(sha) : std::string(); };
  // The toolchains' labels and dates as the project file gives them now (an
  // edited label, a date added): what alerts and notifications name them by.
  if (!line.repo)
    for (const auto& c : history) db::upsert_commit(db, line.repository_id, {c.sha, {}, "", c.time, c.subject});
  const auto first_found = report.findings.size();
  for (std::size_t si = 0; si < p.suites.size(); ++si) {
    const auto& suite_name = p.suites[si];
    const auto& suite = selected[si];
    PlanInput plan;
    plan.repo = line.repo ? line.repo->location().string() : "";
    plan.recipe = p.recipe;
    plan.recipe_hash = recipe.content_hash;
    plan.policy = p.policy;
    plan.policy_hash = policy_hash;
    plan.suites = {{suite_name, suite.manifest_hash}};
    SuiteAnalysis analysis(o, db, history, position, line.repository_id, plan, suite.suite.name);
    auto findings = analysis.run(report);
    // A build that broke and the features the compiler sends are the
    // compiler's, whatever the suite: one change, one alert (under the first
    // suite that finds it), not one notification per suite. Only the opening
    // is left out: every finding still narrows and supersedes this suite's
    // older alerts.
    std::vector<bool> found_by_earlier_suite;
    for (const auto& f : findings) {
      found_by_earlier_suite.push_back(compiler_wide(f.kind) && !wide_changes.insert(change_key(f)).second);
    }
    auto ids = analysis.commit_ids();
    std::vector<FoundAt> suite_found;
    std::vector<db::AlertRow> rows;
    /// Fingerprint → the resolving note, and where it recovered as the
    /// details' keys (a hook's reader takes the check-in from there).
    std::map<std::string, std::pair<std::string, std::string>> recovered;
    for (auto& f : findings) {
      // A range may start at a check-in nobody built: recorded, so the alert names it.
      if (!f.range_first.empty() && !ids.count(f.range_first))
        for (const auto& c : history)
          if (c.sha == f.range_first)
            ids[c.sha] = line.repo ? record_commit(db, *line.repo, c)
                                   : db::upsert_commit(db, line.repository_id, {c.sha, {}, "", c.time, c.subject});
      f.last_good_label = label_of(f.last_good);
      f.first_bad_label = label_of(f.first_bad);
      f.range_first_label = label_of(f.range_first);
      db::AlertRow a;
      auto where = change_key(f);
      a.fingerprint = alert_fingerprint(p.name, plan.policy_hash, suite.manifest_hash, recipe.content_hash, where);
      a.legacy_fingerprint = p.name + "|" + plan.policy_hash + "|" + suite.manifest_hash + "|" + where;
      a.project = p.name;
      a.kind = f.kind;
      a.policy_hash = plan.policy_hash;
      a.suite_manifest_hash = suite.manifest_hash;
      a.recipe_hash = recipe.content_hash;
      a.metric = f.kind == "size-changed"                                      ? "text_bytes"
                 : f.kind == "modules-failing" || f.kind == "compiler-failing" ? "modules"
                                                                               : "uplift";
      a.last_good_commit_id = commit_id_of(ids, f.last_good);
      a.first_bad_commit_id = commit_id_of(ids, f.first_bad);
      a.culprit_commit_id = commit_id_of(ids, f.culprit);
      a.range_first_commit_id = commit_id_of(ids, f.range_first);
      a.magnitude = f.kind == "size-changed"
                        ? std::max(std::abs(f.change.default_delta), std::abs(f.change.learned_delta))
                    : f.kind == "modules-failing" || f.kind == "compiler-failing" ? f.newly_failing
                                                                                  : f.change.uplift_delta;
      f.recovered_at_label = label_of(f.recovered_at);
      a.details_json = f.details_json();
      // A failure over before any sweep alerted it (a year swept at once) is
      // recorded and resolved below, not sent to people as news.
      a.notify = p.notify.configured() && f.recovered_at.empty();
      a.recovered = !f.recovered_at.empty();
      if (a.recovered)
        recovered[a.fingerprint] = {
            db::kRecoveredNotePrefix +
                recovered_text(f.kind, f.recovered_at, f.recovered_at_label, f.newly_failing, f.recovered_taken)
                    .substr(2),
            common::json_text(nlohmann::json{{"recovered_at", f.recovered_at},
                                             {"recovered_at_label", f.recovered_at_label},
                                             {"recovered_taken", f.recovered_taken}})};
      suite_found.push_back(
          {a.kind, a.policy_hash, a.suite_manifest_hash, a.recipe_hash, a.fingerprint, f.culprit, f.range_first,
           f.first_bad});
      rows.push_back(std::move(a));
    }
    // Every finding first: an alert whose own change is found again is never
    // taken for a wider form of another.
    std::set<std::string> found_now, opened_now;
    for (const auto& found : suite_found) found_now.insert(found.fingerprint);
    for (std::size_t k = 0; k < findings.size(); ++k) {
      auto& f = findings[k];
      const auto& a = rows[k];
      // An ignored range is narrowed too and stays ignored, and so does one a
      // person resolved: the same change, pinned, is not a new alert to the
      // user who dismissed it. (One driftwatch resolved, superseded or of a
      // series that ended, is not the change's any more.)
      // Read once a finding: the one before may have opened or narrowed one.
      auto open = db::list_alerts(db, p.name, {});
      std::erase_if(open, [](const db::AlertView& v) { return v.state == "resolved" && v.state_by == "driftwatch"; });
      // A compiler-wide change alerted already under another suite (one
      // listed before this one), or a broken build under another policy:
      // not one driftwatch closed (its policy replaced, say), which leaves
      // the change alerted nowhere.
      bool alerted_elsewhere =
          compiler_wide(f.kind) && alerted_in_another_series(open, p.name, suite_found[k], change_key(f));
      if (auto id = narrowed_alert(open, suite_found[k], found_now, position)) {
        bool dismissed = std::any_of(open.begin(), open.end(), [&](const db::AlertView& v) {
          return v.id == *id && (v.state == "ignored" || v.state == "resolved");
        });
        // Pinned already in another series, the change is that alert's: this
        // one is done, not a second alert of the same pin.
        if ((alerted_elsewhere || !db::narrow_alert(db, *id, a, "narrowed by a later sweep: " + f.sentence())) &&
            !dismissed) {
          // The narrower alert exists already (opened by `bisect`, or under another suite): the wide one is done.
          db::set_alert_state(db, p.name, *id, "resolved", "driftwatch",
                              "superseded by the alert of the same change, pinned: " + f.sentence());
        }
        f.new_alert = false;
        report.findings.push_back(std::move(f));
        continue;
      }
      if (found_by_earlier_suite[k]) continue;
      if (alerted_elsewhere) {
        f.new_alert = false;  // reported, as this run's first suite to find it; alerted before
        report.findings.push_back(std::move(f));
        continue;
      }
      f.new_alert = db::open_alert(db, a);
      // A spread change found again with its ends moved (a check-in inside
      // measured since): its alert takes the range the console gives.
      if (!f.new_alert && !f.samples_range.empty()) db::repin_alert(db, a, f.sentence());
      if (f.new_alert) {
        opened_now.insert(a.fingerprint);
        ++(a.recovered ? report.alerts_found_over : report.alerts_opened);
      }
      report.findings.push_back(std::move(f));
    }
    // A failure a later check-in no longer shows (a build fixed, a crash
    // reverted) is over: its alert is resolved, saying where, rather than
    // left open beside a compiler that works again. Acknowledged ones too.
    // Read once for this and the next pass, which sees those still open.
    auto open = db::list_alerts(db, p.name, {"open", "acknowledged"});
    std::erase_if(open, [&](const db::AlertView& v) {
      auto it = recovered.find(v.fingerprint);
      if (it == recovered.end()) return false;
      // A person who reopened it doubts that end: it is theirs to resolve,
      // not driftwatch's to close again (and tell again) every night.
      if (v.end_doubted) return false;
      // Refused where a person moved it since the list was read: not counted.
      if (db::set_alert_state(db, p.name, v.id, "resolved", "driftwatch", it->second.first, it->second.second) &&
          !opened_now.count(v.fingerprint))
        ++report.alerts_recovered;  // one of this run's is found over, not news
      return true;
    });
    // A wide alert whose range bisection has since pinned as other changes
    // (of another kind, or already alerted) is done: said in its history.
    for (auto id :
         superseded_alerts(open, plan.policy_hash, suite.manifest_hash, recipe.content_hash, suite_found, position))
      db::set_alert_state(db, p.name, id, "resolved", "driftwatch",
                          "superseded: a later sweep pinned the changes in its range (see the newer alerts)");
    // Alerts of this series whose change this analysis no longer finds
    // where they put it, and which nothing above retires:
    // - a toolchain's: two nightlies side by side always pin a change
    //   exactly, so one whose change this line no longer shows (a nightly
    //   added between, re-dated, moved or taken off the list) would stay
    //   open for ever beside the alert of where the change is now;
    // - a slow drift across samples, told from where the last one ended: a
    //   sample measured late, a step found inside or an edited grid moves
    //   every later range, and the old alert would tell its erosion twice.
    //   Only this line's (another line's drifts are not in found_now) and
    //   only from its start on (what lies before is resolve_alerts_before's).
    for (const auto& v : db::list_alerts(db, p.name, {"open", "acknowledged"})) {
      if (!of_series(v, plan.policy_hash, suite.manifest_hash, recipe.content_hash) || found_now.count(v.fingerprint))
        continue;
      const auto& at = v.culprit_sha.empty() ? v.first_bad_sha : v.culprit_sha;
      if (!line.repo && is_toolchain_id(at))
        db::set_alert_state(db, p.name, v.id, "resolved", "driftwatch", db::kLeftTheLineNote);
      // - a repository's whose check-in the branch no longer reaches (reset,
      //   force-pushed), or that the repository no longer holds at all (its
      //   objects pruned since, a fresh clone) where the history is whole
      //   (a shallow clone's edge cuts off what is older): not before the
      //   range, nor after its end, but gone; `alerts --exit-code` would fail
      //   every night on it.
      else if (line.repo && !line.tip.empty() && !at.empty() && !is_toolchain_id(at) && !position.count(at) &&
               gone_from(*line.repo, line.tip, at, !line.history.empty() && line.history.front().parents.empty()))
        db::set_alert_state(db, p.name, v.id, "resolved", "driftwatch", db::kHistoryRewrittenNote);
      else if (position.count(v.first_bad_sha) && details_across_samples(v.details_json))
        db::set_alert_state(db, p.name, v.id, "resolved", "driftwatch", db::kDriftRetoldNote);
    }
  }
  // `bisect --good A --bad B` reports the changes of its range; those
  // elsewhere are alerted as a sweep would, but not its answer.
  if (!o.bisect_from.empty()) {
    auto from = position.find(o.bisect_from), to = position.find(o.bisect_to);
    auto outside = [&](const Finding& f) {
      auto at = position.find(f.first_bad);
      return from == position.end() || to == position.end() || at == position.end() || at->second <= from->second ||
             at->second > to->second;
    };
    report.findings.erase(std::remove_if(report.findings.begin() + static_cast<std::ptrdiff_t>(first_found),
                                         report.findings.end(), outside),
                          report.findings.end());
    auto opened = [&](bool over) {
      return static_cast<int>(std::count_if(report.findings.begin(), report.findings.end(), [&](const Finding& f) {
        return f.new_alert && f.recovered_at.empty() != over;
      }));
    };
    report.alerts_opened = opened(false);
    report.alerts_found_over = opened(true);
  }
}

}  // namespace

DriftReport analyse_drift(const DriftOptions& o, db::Database& db) {
  DriftReport report;
  const auto& p = o.project;
  // `bisect --good A --bad B` asks for a range of the repository's history.
  const bool toolchains = !p.toolchains.empty() && o.bisect_from.empty();
  if (p.repo.empty() && !toolchains) return report;
  report.analysed = true;
  auto recipe = builder::load_recipe(p.recipe).take();
  const auto policy_meta = policy::read_policy_metadata(p.policy).take();
  // Alerts of a series the project stopped tracking (a policy file replaced
  // by hand, a suite taken off its list) would stay open for ever: nothing
  // revisits them, the report leaves them out and `alerts --exit-code` fails.
  db::follow_policy(db, p.name, policy_meta.content_hash);
  std::vector<SelectedSuite> selected;
  std::vector<std::pair<std::string, std::string>> tracked_suites;
  for (const auto& suite_name : p.suites) {
    selected.push_back(select_suite(o.workers.data_dir, suite_name));
    tracked_suites.emplace_back(selected.back().suite.name, selected.back().manifest_hash);
  }
  db::follow_suites(db, p.name, tracked_suites);
  for (const auto& suite : selected)
    db::resolve_alerts_of_rebuilt_suite(db, p.name, suite.suite.name, suite.manifest_hash);
  db::follow_recipe(db, p.name, recipe.content_hash);
  std::set<std::string> wide_changes;  // changes of the compiler itself, found by an earlier suite or line
  if (!p.repo.empty()) {
    auto repo = tracker::GitRepo::open(p.repo).take();
    auto tip = repo.tracked(p.branch).take();
    auto repository_id = record_repository(db, repo, tip);  // a sweep writes: a moved checkout's path is recorded
    auto history = repo.cloned_history(tip).take();
    // Nor what lies after the range's `until` (another project's later
    // sweep; `bisect --bad` is refused there).
    {
      auto trained_sha = policy_meta.compiler_commit.empty() ? common::Result<std::string>(common::Error{""})
                                                             : repo.resolve(policy_meta.compiler_commit);
      history.resize(project_range_end(p, history, trained_sha ? *trained_sha : ""));
    }
    const auto empty_range = "no check-in of " + p.repo + " lies in the project's range (until = \"" + p.until + "\")";
    if (history.empty() && !toolchains) throw common::Fatal(empty_range);
    // Its toolchains are the project's still.
    if (history.empty())
      fmt::print(stderr, "warning: {}: only its toolchains are analysed\n", empty_range);
    else {
      // Drift is the policy's since it was trained: check-ins before its
      // training check-in (a range that starts earlier, or a policy just
      // promoted at the head) are left to the series as it was, not bisected
      // and alerted on, as `decide` and the report measure from there too.
      // A range asked for by hand (`bisect --good`) is analysed wherever it starts.
      auto position_of = [&](const std::string& rev) -> std::optional<std::size_t> {
        auto sha = rev.empty() ? common::Result<std::string>(common::Error{""}) : repo.resolve(rev);
        if (!sha) return std::nullopt;
        auto at = std::find_if(history.begin(), history.end(), [&](const auto& c) { return c.sha == *sha; });
        if (at == history.end()) return std::nullopt;
        return static_cast<std::size_t>(at - history.begin());
      };
      const auto trained = position_of(policy_meta.compiler_commit);
      const std::size_t trained_at = trained.value_or(0);
      // Nor is what lies before the project's range its drift: check-ins
      // measured there by a one-off `eval`, by another project's sweep of the
      // repository, or before `since` moved on would otherwise be bisected and
      // alerted on, notifying a new project of culprits from before it began.
      const std::size_t range_start = project_range_start(p, history, trained);
      // A range that selects nothing: its toolchains are analysed alone, as
      // when the range ends before the history begins; else it is a mistake.
      if (range_start >= history.size() && toolchains)
        fmt::print(stderr, "warning: the project's range selects no check-in of {}: only its toolchains are analysed\n",
                   p.repo);
      else {
        require_range_selects(p, history, range_start, "drift analysis");
        std::size_t start = range_start;
        if (auto from = position_of(o.bisect_from)) start = std::min(start, *from);
        if (start == trained_at && start > 0 && o.workers.progress) {
          std::set<std::string> samples(o.samples.begin(), o.samples.end());
          auto earlier = std::count_if(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(start),
                                       [&](const auto& c) { return samples.count(c.sha) > 0; });
          if (earlier > 0)
            o.workers.progress->line(fmt::format(
                "drift is analysed from the policy's training check-in {} on: {} sampled check-in(s) before it are "
                "not bisected or alerted on",
                history[start].short_sha(), earlier));
        }
        // So would alerts of changes before the training check-in, or before the
        // range, which no analysis reaches now (found when drift was analysed
        // over a wider range, or by a `bisect --good` before it); not while such
        // a bisect runs.
        if (o.bisect_from.empty() && trained_at > 0)
          resolve_alerts_before(db, p.name, policy_meta.content_hash, history, trained_at,
                                "the policy's training check-in");
        if (o.bisect_from.empty() && range_start > trained_at)
          resolve_alerts_before(db, p.name, policy_meta.content_hash, history, range_start,
                                "the first check-in of the project's range");
        auto tip_sha = repo.resolve(tip);
        analyse_line(o, db, {repository_id, std::move(history), start, &repo, tip_sha ? *tip_sha : ""}, recipe,
                     policy_meta.content_hash, selected, wide_changes, report);
      }
    }
  }
  if (toolchains) {
    // Nightlies in date order: a change between two is the later one's, and
    // no check-in lies between to bisect; the grid's samples are commits.
    // Said under --quiet too: a nightly's log must not read as analysed.
    for (const auto& t : undated_left_out(p))
      fmt::print(stderr,
                 "warning: toolchain {} has no date: measured, but left out of drift analysis, which orders the "
                 "toolchains by date (give it date = \"YYYY-MM-DD\")\n",
                 t.label);
    auto line_options = o;
    line_options.bisect = false;
    line_options.samples.clear();
    analyse_line(line_options, db,
                 {db::upsert_repository(db, toolchains_location(recipe.name)), toolchain_history(p), 0, nullptr},
                 recipe, policy_meta.content_hash, selected, wide_changes, report);
  }
  report.notifications = deliver_pending_alerts(p, db);
  return report;
}

}  // namespace sweep
