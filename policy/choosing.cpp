#include "policy/choosing.h"

namespace policy {

int failed_compiles(const nlohmann::json& f) { return f.value("failed", 0); }

bool better(const nlohmann::json& a, const nlohmann::json& b) {
  constexpr double kNoWorseBar = 0.9;
  if (failed_compiles(a) != failed_compiles(b)) return failed_compiles(a) < failed_compiles(b);
  double ua = a["uplift_geomean"], ub = b["uplift_geomean"], na = a["no_worse_share"], nb = b["no_worse_share"];
  if ((na >= kNoWorseBar) != (nb >= kNoWorseBar)) return na >= kNoWorseBar;
  if (na >= kNoWorseBar || na == nb) return ua > ub;
  return na > nb;
}

bool meets_bar(const nlohmann::json& f, double no_worse_bar) {
  return failed_compiles(f) == 0 && f["no_worse_share"].get<double>() >= no_worse_bar &&
         f["uplift_total"].get<double>() >= 0 && f["uplift_geomean"].get<double>() > 0;
}

}  // namespace policy
