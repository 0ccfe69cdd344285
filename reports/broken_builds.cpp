#include "reports/broken_builds.h"

#include <optional>

namespace reports {

std::vector<BrokenRun> broken_runs(const std::vector<BuildPoint>& points, int samples_needed) {
  std::vector<BrokenRun> out;
  int broken_samples = 0;
  std::optional<std::size_t> last_ok, first_broken;
  for (const auto& p : points) {
    if (p.ok) {
      broken_samples = 0;
      first_broken.reset();
      last_ok = p.position;
      continue;
    }
    if (!first_broken) first_broken = p.position;
    if (!p.sample) continue;
    if (++broken_samples == samples_needed && last_ok) out.push_back({*last_ok, *first_broken, p.position});
  }
  return out;
}

}  // namespace reports
