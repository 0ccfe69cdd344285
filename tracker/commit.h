#pragma once
// A check-in as the tracker sees it: plain values, no libgit2.
#include <cstdint>
#include <string>
#include <vector>

namespace tracker {

struct CommitInfo {
  std::string sha;
  std::vector<std::string> parents;  ///< first parent first
  std::string author;                ///< "Name <email>"
  std::int64_t time = 0;             ///< committer time, seconds since the epoch (UTC)
  std::string subject;
  std::vector<std::string> tags;     ///< tag names pointing at this commit

  bool is_merge() const { return parents.size() > 1; }
  std::string short_sha() const { return sha.substr(0, 12); }
};

}  // namespace tracker
