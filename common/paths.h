#pragma once
// Whether a path lies in a tree: a process's working directory in a work
// tree, a library an artifact loads in its build tree.
#include <filesystem>
#include <vector>

namespace common {

/// True when `path` (already resolved: a /proc cwd link, an ldd path made
/// canonical) is one of `dirs` or lies below one; each of `dirs` is resolved
/// first, so a symlinked data directory still matches.
inline bool lies_within(const std::filesystem::path& path, const std::vector<std::filesystem::path>& dirs) {
  std::error_code ec;
  for (const auto& d : dirs) {
    auto rel = path.lexically_relative(std::filesystem::weakly_canonical(d, ec));
    if (!rel.empty() && *rel.begin() != "..") return true;
  }
  return false;
}

}  // namespace common
