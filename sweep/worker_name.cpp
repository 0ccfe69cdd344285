#include "sweep/worker_name.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <random>

#include "common/process.h"
#include "common/text.h"

namespace sweep {

std::string worker_owner_name(int index) {
  // Containers often share a host name (hostNetwork pods, a compose file's
  // `hostname:`) and run driftwatch as pid 1: without a token of its own,
  // two workers held each other's leases and both stored one job.
  static const std::string token = [] {
    std::random_device random;
    return fmt::format("{:08x}", static_cast<std::uint32_t>(random()));
  }();
  return common::host_name() + ":" + std::to_string(getpid()) + ":" + std::to_string(index) + ":" + token;
}

bool owner_is_dead_here(const std::string& owner) {
  auto parts = common::split(owner, ':');
  if (parts.size() < 3) return false;
  return common::process_gone_here(parts[0], std::atol(parts[1].c_str()));
}

}  // namespace sweep
