#include "sweep/series_sizes.h"

namespace sweep {

std::vector<evaluator::ModuleSizes> sizes_of(const db::SeriesPoint& p) {
  std::vector<evaluator::ModuleSizes> out;
  for (const auto& m : p.modules) out.push_back({m.name, m.default_bytes, m.learned_bytes});
  return out;
}

}  // namespace sweep
