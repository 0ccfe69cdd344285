#pragma once
// The name a farm worker holds its leases under.
#include <string>

namespace sweep {

/// "host:pid:index:token": the host and pid let a later sweep on the same
/// host hand back the jobs of a worker that died; the token (random, one per
/// process) tells apart workers of containers that share both.
std::string worker_owner_name(int index);
/// An owner name's host: its first field (the job queue's own rule).
std::string owner_host(const std::string& owner);
/// The worker as people know it: "host:pid" of an owner name.
std::string owner_host_pid(const std::string& owner);
/// True when `owner` names a process of this host that no longer runs.
bool owner_is_dead_here(const std::string& owner);

}  // namespace sweep
