#pragma once
// A recorded series point's per-module .text, as the pure comparisons in
// reports/ take it (drift between points, decide against the baseline).
#include <vector>

#include "db/drift.h"
#include "evaluator/uplift.h"

namespace sweep {

std::vector<evaluator::ModuleSizes> sizes_of(const db::SeriesPoint& p);

}  // namespace sweep
