#include "reports/drift.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "common/text.h"

namespace reports {

namespace {

double relative(std::int64_t before, std::int64_t after) {
  return before > 0 ? static_cast<double>(after) / before - 1 : (after > 0 ? 1.0 : 0.0);
}

}  // namespace

std::vector<LevelChange> level_changes(const std::vector<Level>& s, const DriftThresholds& t) {
  std::vector<LevelChange> out;
  for (std::size_t i = 1; i < s.size(); ++i) {
    LevelChange c;
    c.index = i;
    c.uplift_delta = s[i].uplift - s[i - 1].uplift;
    c.default_delta = relative(s[i - 1].total_default, s[i].total_default);
    c.learned_delta = relative(s[i - 1].total_learned, s[i].total_learned);
    // A threshold of 0 still needs a step: equal levels are no change.
    c.uplift_moved = c.uplift_delta != 0 && std::abs(c.uplift_delta) >= t.min_uplift_change;
    c.default_moved = c.default_delta != 0 && std::abs(c.default_delta) >= t.min_total_change;
    c.learned_moved = c.learned_delta != 0 && std::abs(c.learned_delta) >= t.min_total_change;
    if (c.uplift_moved || c.default_moved || c.learned_moved) out.push_back(c);
  }
  return out;
}

std::vector<FoundStep> find_steps(const std::vector<bool>& sample, const CompareLevels& levels,
                                  const DriftThresholds& t, const CompareLevelsWithin& within) {
  std::vector<FoundStep> out;
  std::size_t n = sample.size();
  std::vector<std::optional<LevelChange>> step_at(n);  // the consecutive step ending at this index
  for (std::size_t i = 1; i < n; ++i) {
    auto [a, b] = levels(i - 1, i);
    if (auto found = level_changes({a, b}, t); !found.empty()) {
      found.front().index = i;
      out.push_back({i - 1, i, found.front(), false});
      step_at[i] = found.front();
    }
  }
  // Between two samples: what of the samples' change the steps inside do not
  // carry, figure by figure (a size step inside does not carry an uplift
  // drop made in small parts beside it, nor a rise the drop it hides).
  std::optional<std::size_t> last;
  for (std::size_t i = 0; i < n; ++i) {
    if (!sample[i]) continue;
    if (last && i > *last + 1) {
      auto [a, b] = levels(*last, i);
      LevelChange rest;
      rest.uplift_delta = b.uplift - a.uplift;
      rest.default_delta = relative(a.total_default, b.total_default);
      rest.learned_delta = relative(a.total_learned, b.total_learned);
      double default_ratio = 1 + rest.default_delta, learned_ratio = 1 + rest.learned_delta;
      for (auto j = *last + 1; j <= i; ++j) {
        if (!step_at[j]) continue;
        // What the step carries of the samples' change: its move over their modules.
        auto carried = *step_at[j];
        if (within) {
          auto [x, y] = within(j - 1, j, *last, i);
          carried.uplift_delta = y.uplift - x.uplift;
          carried.default_delta = relative(x.total_default, y.total_default);
          carried.learned_delta = relative(x.total_learned, y.total_learned);
        }
        if (carried.uplift_moved) rest.uplift_delta -= carried.uplift_delta;
        if (carried.default_moved) default_ratio /= 1 + carried.default_delta;
        if (carried.learned_moved) learned_ratio /= 1 + carried.learned_delta;
      }
      rest.default_delta = default_ratio - 1;
      rest.learned_delta = learned_ratio - 1;
      rest.index = i;
      // What the steps carry whole leaves rounding, not a change.
      auto left = [](double delta, double threshold) {
        return std::abs(delta) > 1e-9 && std::abs(delta) >= threshold;
      };
      rest.uplift_moved = left(rest.uplift_delta, t.min_uplift_change);
      rest.default_moved = left(rest.default_delta, t.min_total_change);
      rest.learned_moved = left(rest.learned_delta, t.min_total_change);
      if (rest.uplift_moved || rest.default_moved || rest.learned_moved) out.push_back({*last, i, rest, true});
    }
    last = i;
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.after < y.after; });
  return out;
}

std::pair<std::size_t, std::size_t> moving_span(const std::vector<const FilledPoint*>& points) {
  if (points.size() < 2) return {0, points.empty() ? 0 : points.size() - 1};
  auto same = [&](std::size_t k) {
    const auto &x = points[k]->sizes, &y = points[k + 1]->sizes;
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const auto& a, const auto& b) {
      return a.name == b.name && a.default_bytes == b.default_bytes && a.learned_bytes == b.learned_bytes;
    });
  };
  std::size_t first = 0, last = points.size() - 1;
  while (first < last && same(first)) ++first;
  while (last > first && same(last - 1)) --last;
  if (first == last) return {0, points.size() - 1};
  return {first, last};
}

std::vector<FoundStep> slow_drifts(const std::vector<bool>& sample, const CompareLevels& levels,
                                   const std::vector<FoundStep>& steps, double min_uplift_change) {
  std::vector<FoundStep> out;
  std::optional<std::size_t> from;
  for (std::size_t i = 0; i < sample.size(); ++i) {
    if (!sample[i]) continue;
    if (!from) {
      from = i;
      continue;
    }
    // An uplift step after the reference: its alert tells the move up to it.
    bool stepped = std::any_of(steps.begin(), steps.end(), [&](const FoundStep& s) {
      return s.change.uplift_moved && s.after > *from && s.after <= i;
    });
    if (stepped) {
      from = i;
      continue;
    }
    auto [a, b] = levels(*from, i);
    double delta = b.uplift - a.uplift;
    if (delta == 0 || std::abs(delta) < min_uplift_change) continue;
    // The drift begins at the last sample from which the move to here still
    // reaches the threshold: samples before it were flat, or moved less
    // than the threshold, and are no part of the range people are sent to.
    std::size_t start = *from;
    for (std::size_t j = i; j-- > *from + 1;) {
      if (!sample[j]) continue;
      auto [ja, jb] = levels(j, i);
      double moved = jb.uplift - ja.uplift;
      if ((moved < 0) == (delta < 0) && moved != 0 && std::abs(moved) >= min_uplift_change) {
        start = j;
        delta = moved;
        break;
      }
    }
    LevelChange c;
    c.index = i;
    c.uplift_delta = delta;
    c.uplift_moved = true;
    FoundStep drift{start, i, c, true};
    drift.across_samples = true;
    out.push_back(std::move(drift));
    from = i;
  }
  return out;
}

std::vector<FoundStep> failing_steps(const std::vector<bool>& sample, const NewlyFailing& newly_failing, int threshold,
                                     const CompilesAt& compiles_at) {
  std::vector<FoundStep> out;
  auto step = [&](std::size_t before, std::size_t after, std::vector<std::string> modules, bool spread) {
    LevelChange c;
    c.index = after;
    c.uplift_delta = static_cast<double>(modules.size());
    c.uplift_moved = true;
    std::sort(modules.begin(), modules.end());
    out.push_back({before, after, c, spread, std::move(modules)});
  };
  std::size_t n = sample.size();
  std::vector<std::vector<std::string>> named(n);  // by the step ending at each index, when one was found
  for (std::size_t i = 1; i < n; ++i) {
    auto now = newly_failing(i - 1, i);
    if (static_cast<int>(now.size()) >= threshold) {
      named[i] = now;
      step(i - 1, i, std::move(now), false);
    }
  }
  std::optional<std::size_t> last;
  for (std::size_t i = 0; i < n; ++i) {
    if (!sample[i]) continue;
    if (last && i > *last + 1) {
      std::set<std::string> left;
      for (auto& m : newly_failing(*last, i)) left.insert(m);
      for (auto j = *last + 1; j <= i; ++j)
        for (const auto& m : named[j]) left.erase(m);
      if (static_cast<int>(left.size()) >= threshold) step(*last, i, {left.begin(), left.end()}, true);
    }
    last = i;
  }
  // Modules that begin failing a few at a time, each sample below the
  // threshold (a crash coming back one module a night, or spreading): no
  // step above names them, as samples in a row have none between them.
  // Counted from where each began failing, less those a step names, they
  // reach it at some sample: a spread step from the sample before the
  // earliest of them. A module that compiles again leaves the count.
  std::map<std::string, std::size_t> since;  // failing module -> the last sample it compiled at
  std::set<std::string> carried;             // failing modules a step names, this run of failing
  last.reset();
  for (std::size_t i = 0; i < n; ++i) {
    if (!sample[i]) continue;
    if (last) {
      // Off the failing list is not compiling: a module the default failed
      // on too, or whose result the machine lost, may fail there still. So
      // where that is known, a module leaves the count where it compiles.
      if (compiles_at)
        std::erase_if(since, [&](const auto& failing) { return compiles_at(i, failing.first); });
      else
        for (const auto& m : newly_failing(i, *last)) since.erase(m);  // failing at the sample before, not here
      for (const auto& m : newly_failing(*last, i)) since.emplace(m, *last);
      for (const auto& s : out)
        if (s.after > *last && s.after <= i) carried.insert(s.modules.begin(), s.modules.end());
      // A module a step inside named that compiles again by this sample is
      // carried no longer: failing again, it counts anew.
      std::erase_if(carried, [&](const std::string& m) { return !since.count(m); });
      std::vector<std::string> left;
      std::size_t from = i;
      for (const auto& [m, at] : since)
        if (!carried.count(m)) {
          left.push_back(m);
          from = std::min(from, at);
        }
      if (static_cast<int>(left.size()) >= threshold && from < *last) {
        carried.insert(left.begin(), left.end());
        std::map<std::string, std::size_t> began;
        for (const auto& m : left) began[m] = since.at(m);
        step(from, i, std::move(left), true);
        out.back().across_samples = true;
        out.back().began = std::move(began);
      }
    }
    last = i;
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.after < y.after; });
  return out;
}

void keep_spread_flips_own(std::vector<StepFlips>& steps) {
  for (auto& spread : steps) {
    if (!spread.spread) continue;
    for (const auto& inside : steps) {
      if (inside.spread || inside.before < spread.before || inside.after > spread.after) continue;
      std::erase_if(spread.win_to_loss, [&](const std::string& m) {
        return std::find(inside.win_to_loss.begin(), inside.win_to_loss.end(), m) != inside.win_to_loss.end();
      });
    }
  }
}

ComparedLevels compare_levels(const std::vector<evaluator::ModuleSizes>& before,
                              const std::vector<evaluator::ModuleSizes>& after) {
  std::map<std::string, const evaluator::ModuleSizes*> later;
  for (const auto& m : after) later[m.name] = &m;
  ComparedLevels out;
  std::vector<evaluator::ModuleSizes> a, b;
  for (const auto& m : before) {
    auto it = later.find(m.name);
    if (it == later.end()) {
      out.only_before.push_back(m.name);
      continue;
    }
    a.push_back(m);
    b.push_back(*it->second);
    later.erase(it);
  }
  for (const auto& [name, m] : later) out.only_after.push_back(name);
  // The geometric mean over the modules it holds on both sides: a module
  // with no .text on one side (a tie, 0 and 0) that gains some on the other
  // would add a ratio to one mean only, and move the uplift with no module
  // getting worse. The totals take every module.
  std::vector<evaluator::ModuleSizes> a_ratio, b_ratio;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].in_geomean() && b[i].in_geomean()) {
      a_ratio.push_back(a[i]);
      b_ratio.push_back(b[i]);
    }
  auto level = [](const std::vector<evaluator::ModuleSizes>& all, const std::vector<evaluator::ModuleSizes>& ratio) {
    auto totals = evaluator::summarize(all, 0);
    return Level{evaluator::summarize(ratio, 0).uplift, totals.total_default, totals.total_learned};
  };
  out.before = level(a, a_ratio);
  out.after = level(b, b_ratio);
  return out;
}

std::vector<FilledPoint> carried_forward(const std::vector<std::vector<evaluator::ModuleSizes>>& series,
                                         const std::vector<std::size_t>& positions) {
  std::vector<FilledPoint> out;
  std::map<std::string, CarriedSize> last;  // by name: the newest measurement so far, and where
  for (std::size_t i = 0; i < series.size(); ++i) {
    std::set<std::string> here;
    for (const auto& m : series[i]) {
      last[m.name] = {m, positions[i]};
      here.insert(m.name);
    }
    auto& point = out.emplace_back();
    for (const auto& [name, c] : last) {
      point.sizes.push_back(c.size);
      if (!here.count(name)) point.carried.emplace(name, c);
    }
  }
  return out;
}

std::size_t change_reaches_back_to(std::size_t before, const std::map<std::string, CarriedSize>& carried,
                                   const std::vector<evaluator::ModuleSizes>& after_measured,
                                   std::vector<std::string>* moved) {
  std::size_t from = before;
  for (const auto& m : after_measured) {
    auto it = carried.find(m.name);
    if (it == carried.end()) continue;
    const auto& old = it->second.size;
    if (old.default_bytes == m.default_bytes && old.learned_bytes == m.learned_bytes) continue;  // back unchanged
    from = std::min(from, it->second.measured_at);
    if (moved) moved->push_back(m.name);
  }
  return from;
}

Verdict verdict_against(const Level& value, const Level& old_level) {
  // The uplift is computed from the same integers on both sides, so equal
  // sizes give bit-equal uplifts; the tolerance only absorbs summation order.
  bool same = std::abs(value.uplift - old_level.uplift) < 1e-12 && value.total_default == old_level.total_default &&
              value.total_learned == old_level.total_learned;
  return same ? Verdict::Old : Verdict::New;
}

Verdict midpoint_verdict(const Level& value, const Level& old_level, const Level& new_level,
                         const DriftThresholds& t) {
  // Each figure's move in units of its threshold: the uplift decides when it
  // crossed its own, else the figure that moved most.
  auto uplift = std::abs(new_level.uplift - old_level.uplift) / std::max(t.min_uplift_change, 1e-12);
  auto moved = [&](std::int64_t before, std::int64_t after) {
    return std::abs(relative(before, after)) / std::max(t.min_total_change, 1e-12);
  };
  auto by_default = moved(old_level.total_default, new_level.total_default);
  auto by_learned = moved(old_level.total_learned, new_level.total_learned);
  // Nothing to be nearer to: every check-in would read as the new side.
  if (verdict_against(new_level, old_level) == Verdict::Old) return Verdict::Skip;
  if (uplift >= 1 || (uplift >= by_default && uplift >= by_learned))
    return classify(value.uplift, old_level.uplift, new_level.uplift);
  if (by_default >= by_learned)
    return classify(double(value.total_default), double(old_level.total_default), double(new_level.total_default));
  return classify(double(value.total_learned), double(old_level.total_learned), double(new_level.total_learned));
}

std::string change_kind(const LevelChange& c, std::size_t win_to_loss, int flip_threshold) {
  if (c.uplift_moved) return c.uplift_delta < 0 ? "uplift-dropped" : "uplift-rose";
  if (flip_threshold > 0 && win_to_loss >= static_cast<std::size_t>(flip_threshold)) return "modules-flipped";
  return "size-changed";
}

std::string uplift_change_text(bool dropped, bool spread, double rest, double before, double after,
                               double default_delta, double learned_delta) {
  const char* moved = dropped ? "dropped" : "rose";
  // An uplift falls as much when the default's code shrinks (the compiler
  // improved its own heuristic) as when the policy's grows (the compiler
  // changed under it): which one it was is where the reader starts.
  auto d = common::signed_percent(default_delta), l = common::signed_percent(learned_delta);
  auto totals = d != "+0.00%" || l != "+0.00%" ? "total .text: default " + d + ", learned " + l : std::string();
  if (spread)
    return fmt::format("{} {:.2f} points in parts (samples {} → {}{})", moved, 100 * std::abs(rest),
                       common::signed_percent(before), common::signed_percent(after),
                       totals.empty() ? "" : "; " + totals);
  return fmt::format("{} from {} to {}{}", moved, common::signed_percent(before), common::signed_percent(after),
                     totals.empty() ? "" : " (" + totals + ")");
}

double relative_move(double before, double after) { return before > 0 ? after / before - 1 : 0; }

std::string unasked_note(std::int64_t decisions_before, std::int64_t decisions_after) {
  if (decisions_before <= 0 || decisions_after != 0) return {};
  return " (the compiler asked the policy nothing there, " + std::to_string(decisions_before) +
         " times before: it no longer consults it)";
}

}  // namespace reports
