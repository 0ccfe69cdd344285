#pragma once
// A small scripted history of plain text files, written as a real git
// repository by the same code as `driftwatch sample-history`.
#include <filesystem>

namespace testing {

/// Writes the script and its tree under `dir`/script, and the repository at
/// `dir`/repo. Main branch: weeks 0..5 with a side branch (2 check-ins)
/// merged at week 5; tags v1 (week 0) and v2 (week 4). Returns the repo path.
std::filesystem::path write_toy_history(const std::filesystem::path& dir);

}  // namespace testing
