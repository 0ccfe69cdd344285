#include "cli/options.h"

#include <CLI/CLI.hpp>

namespace cli {

void RangeArgs::attach(CLI::App& sub) {
  sub.add_option("--repo", repo, "the compiler's git repository")->required();
  sub.add_option("--branch", branch, "branch to walk (default: HEAD)");
  sub.add_option("--since", since, "only check-ins from this date on (YYYY-MM-DD, UTC)");
  sub.add_option("--until", until, "only check-ins up to this date");
  sub.add_option("--from", from, "first check-in of the range (inclusive)");
  sub.add_option("--to", to, "last check-in of the range (default: the branch tip)");
  sub.add_option("--every", every, "N: every Nth check-in; Nd, Nw, Nm: the last check-in of each period");
  sub.add_flag("--tags", tags, "tagged check-ins (with --every: as well)");
}

tracker::RangeOptions RangeArgs::options() const {
  tracker::RangeOptions o;
  o.branch = branch;
  if (!from.empty()) o.from = from;
  if (!to.empty()) o.to = to;
  if (!since.empty()) o.since = tracker::parse_date(since).take();
  if (!until.empty()) {
    auto u = tracker::parse_date(until).take();
    o.until = until.size() == 10 ? u + 86399 : u;  // a bare date means the whole day
  }
  if (!every.empty()) o.sampling.every = tracker::parse_every(every).take();
  o.sampling.tags = tags;
  return o;
}

}  // namespace cli
