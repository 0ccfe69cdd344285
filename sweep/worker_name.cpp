#include "sweep/worker_name.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "common/process.h"
#include "common/text.h"

namespace sweep {

std::string worker_owner_name(int index) {
  // Containers often share a host name (hostNetwork pods, a compose file's
  // `hostname:`) and run driftwatch as pid 1: without a token of its own,
  // two workers held each other's leases and both stored one job. The PID
  // namespace in it tells whether the pid can be looked up here at all.
  static const std::string token = [] {
    std::random_device random;
    return common::pid_namespace() + "-" + fmt::format("{:08x}", static_cast<std::uint32_t>(random()));
  }();
  return common::host_name() + ":" + std::to_string(getpid()) + ":" + std::to_string(index) + ":" + token;
}

std::string owner_host(const std::string& owner) { return owner.substr(0, owner.find(':')); }

std::string owner_host_pid(const std::string& owner) { return owner.substr(0, owner.find(':', owner.find(':') + 1)); }

bool owner_is_dead_here(const std::string& owner) {
  auto parts = common::split(owner, ':');
  if (parts.size() < 3) return false;
  // A worker of another container on this host name: its pid means nothing
  // here, and taking its jobs back would cut a live worker's lease. (An
  // owner named before names held the namespace is taken for this one's.)
  auto ns = parts.size() >= 4 ? parts[3].substr(0, parts[3].find('-')) : common::pid_namespace();
  return common::process_gone_here(parts[0], ns, std::atol(parts[1].c_str()));
}

}  // namespace sweep
