#include "reports/module_changes.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <map>
#include <set>

namespace reports {
namespace {

enum class Standing { Win, Tie, Loss };

Standing standing(const evaluator::ModuleSizes& m) {
  return m.learned_bytes < m.default_bytes   ? Standing::Win
         : m.learned_bytes > m.default_bytes ? Standing::Loss
                                             : Standing::Tie;
}

common::Result<std::map<std::string, evaluator::ModuleSizes>> by_name(const std::vector<evaluator::ModuleSizes>& side,
                                                                      const char* which, SuiteTotals& totals) {
  std::map<std::string, evaluator::ModuleSizes> out;
  for (const auto& m : side) {
    if (!out.emplace(m.name, m).second) return common::Error{"module '" + m.name + "' appears twice " + which};
    totals.default_bytes += m.default_bytes;
    totals.learned_bytes += m.learned_bytes;
  }
  return out;
}

}  // namespace

std::int64_t ModuleMove::bytes_moved() const {
  return std::llabs(default_after - default_before) + std::llabs(learned_after - learned_before);
}

std::string ModuleMove::text() const {
  // Every line in bytes, so a list of them reads alike: the ratio (what the
  // uplift is made of) is added where it moved, not put in their place.
  auto out = fmt::format("{}: .text default {} → {} B, learned {} → {} B", name, default_before, default_after,
                         learned_before, learned_after);
  if (fmt::format("{:.4f}", ratio_before) != fmt::format("{:.4f}", ratio_after))
    out += fmt::format(" (learned/default {:.4f} → {:.4f})", ratio_before, ratio_after);
  return out;
}

std::vector<ModuleMove> by_bytes_moved(std::vector<ModuleMove> moves, std::size_t top_k) {
  std::stable_sort(moves.begin(), moves.end(),
                   [](const ModuleMove& a, const ModuleMove& b) { return a.bytes_moved() > b.bytes_moved(); });
  if (moves.size() > top_k) moves.resize(top_k);
  return moves;
}

common::Result<ModuleChanges> module_changes(const std::vector<evaluator::ModuleSizes>& before,
                                             const std::vector<evaluator::ModuleSizes>& after, std::size_t top_k) {
  ModuleChanges c;
  auto old_side = by_name(before, "before the change", c.before);
  if (!old_side) return old_side.error();
  auto new_side = by_name(after, "after the change", c.after);
  if (!new_side) return new_side.error();

  for (const auto& [name, was] : *old_side) {
    auto now = new_side->find(name);
    if (now == new_side->end()) {
      c.disappeared.push_back(name);
      continue;
    }
    auto s0 = standing(was), s1 = standing(now->second);
    if (s0 == Standing::Win && s1 == Standing::Loss) c.win_to_loss.push_back(name);
    if (s0 == Standing::Loss && s1 == Standing::Win) c.loss_to_win.push_back(name);
    // A module with no .text on either side has no finite ratio (inf - inf
    // is NaN, which would break the ordering below); its win or loss is above.
    // A module whose sizes did not move is no move: listed, it would hide
    // the ones behind a change where the ratios held (a size change).
    bool moved = was.default_bytes != now->second.default_bytes || was.learned_bytes != now->second.learned_bytes;
    if (moved && was.in_geomean() && now->second.in_geomean())
      c.largest_moves.push_back({name, was.ratio(), now->second.ratio(), was.default_bytes, now->second.default_bytes,
                                 was.learned_bytes, now->second.learned_bytes});
  }
  for (const auto& [name, m] : *new_side)
    if (!old_side->count(name)) c.appeared.push_back(name);

  // Stable on the name order the map gave, so equal moves list by name.
  std::stable_sort(c.largest_moves.begin(), c.largest_moves.end(), [](const ModuleMove& a, const ModuleMove& b) {
    // Ratios equal but for rounding (a size change that kept them) rank by
    // bytes: compared in steps of 1e-9, which keeps the order a strict one.
    auto step = [](const ModuleMove& m) { return std::llround(std::abs(m.delta()) * 1e9); };
    if (step(a) != step(b)) return step(a) > step(b);
    return a.bytes_moved() > b.bytes_moved();
  });
  if (c.largest_moves.size() > top_k) c.largest_moves.resize(top_k);
  return c;
}

FeatureSetChange feature_set_changed(const std::vector<std::string>& before, const std::vector<std::string>& after) {
  std::set<std::string> old_set(before.begin(), before.end()), new_set(after.begin(), after.end());
  FeatureSetChange c;
  std::set_difference(new_set.begin(), new_set.end(), old_set.begin(), old_set.end(), std::back_inserter(c.added));
  std::set_difference(old_set.begin(), old_set.end(), new_set.begin(), new_set.end(), std::back_inserter(c.removed));
  return c;
}

}  // namespace reports
