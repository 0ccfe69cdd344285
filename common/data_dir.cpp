#include "common/data_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/result.h"

namespace common {
namespace fs = std::filesystem;

fs::path resolve_data_dir(const std::optional<fs::path>& flag) {
  if (flag && !flag->empty()) return fs::absolute(*flag);
  if (const char* env = std::getenv("DRIFTWATCH_DATA_DIR"); env && *env) return fs::absolute(env);
  if (geteuid() == 0) return "/var/lib/driftwatch";
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) return fs::path(xdg) / "driftwatch";
  const char* home = std::getenv("HOME");
  if (!home || !*home) throw Fatal("cannot find a data directory: HOME is not set; pass --data-dir");
  return fs::path(home) / ".local/share/driftwatch";
}

void ensure_writable_dir(const fs::path& dir, const char* what) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw Fatal(std::string(what) + " " + dir.string() + " exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec) throw Fatal(std::string("cannot create ") + what + " " + dir.string() + ": " + ec.message());
  if (!fs::is_directory(dir)) throw Fatal(std::string(what) + " " + dir.string() + " is not a directory");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw Fatal(std::string(what) + " " + dir.string() + " is not writable: " + strerror(errno));
}

}  // namespace common
