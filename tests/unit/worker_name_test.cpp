// A farm worker's name, which leases are held under: what tells two workers
// apart, and lets a later sweep on the same host take back a dead one's jobs.
#include <doctest/doctest.h>
#include <unistd.h>

#include "common/process.h"
#include "common/text.h"
#include "sweep/worker_name.h"

TEST_CASE("a worker's name holds its host, pid and index, and a token of its process for containers that share both") {
  auto first = sweep::worker_owner_name(0), second = sweep::worker_owner_name(1);
  auto a = common::split(first, ':'), b = common::split(second, ':');
  REQUIRE(a.size() == 4);
  REQUIRE(b.size() == 4);
  CHECK(a[0] == common::host_name());
  CHECK(a[1] == std::to_string(getpid()));
  CHECK(a[2] == "0");
  CHECK(b[2] == "1");
  CHECK(a[3] == b[3]);  // one token per process
  CHECK(a[3].size() == 8);
  CHECK(a[3].find_first_not_of("0123456789abcdef") == std::string::npos);
  // Its own process runs: a sweep on this host takes none of its jobs back.
  CHECK_FALSE(sweep::owner_is_dead_here(first));
}
