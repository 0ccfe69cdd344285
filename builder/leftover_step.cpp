#include "builder/leftover_step.h"

#include <signal.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/atomic_file.h"
#include "common/process.h"

namespace builder {
namespace fs = std::filesystem;

namespace {

/// The processes of group `pgid`, from /proc.
std::vector<pid_t> group_members(pid_t pgid) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    auto name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    char state = 0;
    long ppid = 0, group = 0;
    // A zombie is dead already, waiting for whoever adopted it to reap it.
    if (fields >> state >> ppid >> group && group == pgid && state != 'Z') out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

bool works_in(pid_t pid, const std::vector<fs::path>& dirs) {
  std::error_code ec;
  auto cwd = fs::read_symlink(fs::path("/proc") / std::to_string(pid) / "cwd", ec);
  if (ec) return false;
  for (const auto& d : dirs) {
    auto rel = cwd.lexically_relative(fs::weakly_canonical(d, ec));
    if (!rel.empty() && *rel.begin() != "..") return true;
  }
  return false;
}

}  // namespace

void record_step(const fs::path& file, pid_t pgid) {
  (void)common::write_file_atomically(file, common::host_name() + " " + std::to_string(pgid) + "\n");
}

void forget_step(const fs::path& file) {
  std::error_code ec;
  fs::remove(file, ec);
}

int end_leftover_step(const fs::path& file, const std::vector<fs::path>& dirs) {
  std::ifstream in(file);
  std::string host;
  long pgid = 0;
  if (!(in >> host >> pgid) || host != common::host_name() || pgid <= 1) {
    forget_step(file);
    return 0;
  }
  auto members = group_members(static_cast<pid_t>(pgid));
  bool ours = false;
  for (auto pid : members) ours |= works_in(pid, dirs);
  if (ours) {
    kill(static_cast<pid_t>(-pgid), SIGKILL);
    for (int i = 0; i < 100 && !group_members(static_cast<pid_t>(pgid)).empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  forget_step(file);
  return ours ? static_cast<int>(members.size()) : 0;
}

}  // namespace builder
