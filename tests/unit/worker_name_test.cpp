// A farm worker's name, which leases are held under: what tells two workers
// apart, and lets a later sweep on the same host take back a dead one's jobs.
#include <doctest/doctest.h>
#include <unistd.h>

#include "common/process.h"
#include "common/text.h"
#include "sweep/worker_name.h"

TEST_CASE(
    "a worker's name holds its host, pid and index, and a token of its process, PID namespace and boot for containers "
    "and machines that share a host name") {
  auto first = sweep::worker_owner_name(0), second = sweep::worker_owner_name(1);
  auto a = common::split(first, ':'), b = common::split(second, ':');
  REQUIRE(a.size() == 4);
  REQUIRE(b.size() == 4);
  CHECK(a[0] == common::host_name());
  CHECK(a[1] == std::to_string(getpid()));
  CHECK(a[2] == "0");
  CHECK(b[2] == "1");
  CHECK(a[3] == b[3]);  // one token per process: its PID namespace and a random part
  auto dash = a[3].find('-');
  REQUIRE(dash != std::string::npos);
  auto ns = a[3].substr(0, dash), random = a[3].substr(dash + 1);
  CHECK_FALSE(ns.empty());
  // The namespace's number, then this boot's id: every machine's initial
  // namespace has the same number.
  auto dot = ns.find('.');
  REQUIRE(dot != std::string::npos);
  CHECK(ns.substr(0, dot).find_first_not_of("0123456789") == std::string::npos);
  CHECK(ns.size() - dot - 1 == 8);
  CHECK(ns.find_first_not_of("0123456789abcdef.") == std::string::npos);
  CHECK(random.size() == 8);
  CHECK(random.find_first_not_of("0123456789abcdef") == std::string::npos);
  // Its own process runs: a sweep on this host takes none of its jobs back.
  CHECK_FALSE(sweep::owner_is_dead_here(first));
  // A pid that runs nowhere here: dead when of this PID namespace; of
  // another container's, nothing can be said here.
  std::string gone = common::host_name() + ":999999999:0:";
  CHECK(sweep::owner_is_dead_here(gone + ns + "-00000000"));
  CHECK_FALSE(sweep::owner_is_dead_here(gone + "1" + ns + "-00000000"));
  // Nor of another machine of this host name (a cloned VM): its boot differs.
  CHECK_FALSE(sweep::owner_is_dead_here(gone + ns.substr(0, dot) + ".00000000-00000000"));
  CHECK(sweep::owner_is_dead_here(common::host_name() + ":999999999:0"));  // a name from before the token
}

TEST_CASE("an owner name reads as its host, and as host:pid for people") {
  auto name = sweep::worker_owner_name(3);
  CHECK(sweep::owner_host(name) == common::host_name());
  CHECK(sweep::owner_host_pid(name) == common::host_name() + ":" + std::to_string(getpid()));
  // Names a worker of an older driftwatch held ("host:pid:index") read the same.
  CHECK(sweep::owner_host_pid("node7:4242:0") == "node7:4242");
  CHECK(sweep::owner_host("node7:4242:0") == "node7");
}
