#pragma once
// How training chooses among candidates (checkpoints, margins, gate rules)
// from their figures: {"uplift_geomean", "uplift_total", "no_worse_share",
// "failed", …} as train.cpp's figures() writes them. Pure: no I/O.
#include <nlohmann/json.hpp>

namespace policy {

/// Whether `a` is the better of two checkpoints: fewer modules whose compile
/// it made fail first (a failure keeps the default's size in the means, so it
/// could otherwise look like a tie), then meeting the "no worse on 90% of
/// modules" bar (a policy must not trade many small losses for a few big
/// wins), then the geometric-mean uplift.
bool better(const nlohmann::json& a, const nlohmann::json& b);

/// Meets the bar the issue sets for shipping: no module's compile failed,
/// this share of modules no larger, the total no larger, and a gain in
/// geometric mean.
bool meets_bar(const nlohmann::json& figures, double no_worse_bar);

/// Modules whose compile the candidate made fail; figures kept by a run from
/// before "failed" was recorded count none.
int failed_compiles(const nlohmann::json& figures);

}  // namespace policy
