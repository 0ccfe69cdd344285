#include "builder/leftover_step.h"

#include <fstream>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "common/paths.h"
#include "common/process.h"

namespace builder {
namespace fs = std::filesystem;

namespace {

bool works_in(pid_t pid, const std::vector<fs::path>& dirs) {
  std::error_code ec;
  auto cwd = fs::read_symlink(fs::path("/proc") / std::to_string(pid) / "cwd", ec);
  return !ec && common::lies_within(cwd, dirs);
}

}  // namespace

void record_step(const fs::path& file, pid_t sid) {
  (void)common::write_file_atomically(file, common::host_name() + " " + std::to_string(sid) + "\n");
}

void forget_step(const fs::path& file) {
  std::error_code ec;
  fs::remove(file, ec);
}

int end_leftover_step(const fs::path& file, const std::vector<fs::path>& dirs) {
  std::ifstream in(file);
  std::string host;
  long sid = 0;
  if (!(in >> host >> sid) || host != common::host_name() || sid <= 1) {
    forget_step(file);
    return 0;
  }
  // The step ran in a session of its own (its id is the recorded one): that
  // holds the commands ninja started in process groups of their own too.
  auto members = common::session_members(static_cast<pid_t>(sid));
  bool ours = false;
  for (auto pid : members) ours |= works_in(pid, dirs);
  int ended = ours ? common::kill_session(static_cast<pid_t>(sid)) : 0;
  forget_step(file);
  return ended;
}

}  // namespace builder
