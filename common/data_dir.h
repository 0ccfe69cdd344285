#pragma once
// Where driftwatch keeps its state: the embedded database, work trees, the
// build cache, suites and logs.
#include <filesystem>
#include <optional>

namespace common {

/// --data-dir if given, else $DRIFTWATCH_DATA_DIR, else $XDG_DATA_HOME/driftwatch,
/// else ~/.local/share/driftwatch. As root the default is /var/lib/driftwatch,
/// because the server runs as `postgres`, which cannot enter /root.
std::filesystem::path resolve_data_dir(const std::optional<std::filesystem::path>& flag);

/// Creates the directory (mode 0755) if missing; throws Fatal naming the path
/// and the reason when it cannot be created or written.
void ensure_writable_dir(const std::filesystem::path& dir, const char* what);

}  // namespace common
