#include "tracker/selection.h"

namespace tracker {

common::Result<std::vector<CommitInfo>> select_commits(const GitRepo& repo, const RangeOptions& o) {
  // The line a sweep would walk (GitRepo::tracked: a branch before a tag of
  // its name, no detached HEAD), so that this preview lists its check-ins.
  std::string line = "HEAD";
  if (!o.branch.empty() || !o.to) {
    auto tracked = repo.tracked(o.branch);
    if (!tracked) return tracked.error();
    line = *tracked;
  }
  std::string to = o.to.value_or(line);
  if (!o.branch.empty() && !repo.resolve(line)) return common::Error{"unknown branch '" + o.branch + "' in " + repo.location().string()};
  if (o.to && !o.branch.empty()) {
    // The range ends at --to on the branch's line, never on another line.
    auto to_sha = repo.resolve(*o.to);
    if (!to_sha) return to_sha.error();
    // Only a walk that ended without finding it says --to is off the line; a
    // shallow clone's edge or a missing object says its own reason.
    if (auto walk = repo.first_parent_history(line, *o.to); !walk) {
      if (walk.error().message.rfind("'" + *o.to + "' is not on the first-parent history", 0) != 0) return walk.error();
      return common::Error{"--to " + *o.to + " is not on the first-parent line of branch '" + o.branch + "'"};
    }
  }
  // A walk leaves a damaged tag out; sampling by tags would then leave its check-in out.
  if (o.sampling.tags)
    if (auto tags = repo.tags(); !tags) return tags.error();
  auto history = repo.first_parent_history(to, o.from, o.since);
  if (!history) return history.error();
  std::vector<CommitInfo> in_window;
  for (auto& c : *history)
    if (!o.until || c.time <= *o.until) in_window.push_back(std::move(c));
  std::vector<CommitInfo> out;
  for (size_t i : sample(in_window, o.sampling)) out.push_back(in_window[i]);
  if (out.empty()) {
    std::string range = (o.from ? *o.from + ".." : std::string("..")) + to;
    if (o.since) range += " since " + format_date(*o.since);
    if (o.until) range += " until " + format_date(*o.until);
    return common::Error{"no check-ins to take in " + range + " of " + repo.location().string() +
                         (in_window.empty() ? "" : " (all already measured or filtered out)")};
  }
  return out;
}

}  // namespace tracker
