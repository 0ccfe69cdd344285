// common::StopScope on real processes: a worker's job called off from its
// lease thread stops the children of the job's thread, group and all, and
// only those. It sits with the tracker tests because they run real
// processes, as a build does.
#include <doctest/doctest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "common/process.h"
#include "common/text.h"

namespace {

/// A shell that starts a background sleep (its group's other member),
/// prints the sleep's pid, and waits for it.
common::Child start_sleeping_group() {
  common::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 300 & echo $!; wait"};
  return common::Child::start(spec).take();
}

/// Whether the process is gone (or a zombie nobody has reaped yet: dead).
bool dead(long pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), {});
  auto close = text.rfind(')');
  return text.empty() || (close != std::string::npos && text.size() > close + 2 && text[close + 2] == 'Z');
}

}  // namespace

TEST_CASE("a child waited on under a StopScope is killed with its whole group once the scope's flag is set") {
  std::atomic<bool> stop = false;
  common::StopScope scope(&stop);
  auto child = start_sleeping_group();
  std::thread caller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
  });
  auto started = std::chrono::steady_clock::now();
  auto r = child.wait();
  caller.join();
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  CHECK(r.stopped);
  CHECK_FALSE(r.ok());
  CHECK(r.describe() == "stopped: the work it ran for was called off");
  CHECK(waited < 60);  // not the sleep's 300 s
  auto sleeper = std::stol(common::trim(r.output));
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i, std::this_thread::sleep_for(std::chrono::milliseconds(100)))
    gone = dead(sleeper);
  CHECK(gone);

  // Called off already: the next child this thread waits for is stopped at once.
  common::ProcessSpec quick;
  quick.argv = {"/bin/sh", "-c", "sleep 300"};
  CHECK(common::Child::start(quick).take().wait().stopped);
}

TEST_CASE("a StopScope stops only its own thread's children, and ends with the scope") {
  std::atomic<bool> stop = true;
  common::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "exit 3"};
  common::ProcessResult elsewhere;
  {
    common::StopScope scope(&stop);
    CHECK(common::StopScope::stopped());
    // Another thread (no scope of its own) waits for its child to the end.
    std::thread other([&] { elsewhere = common::run_process(spec).take(); });
    other.join();
    // A thread that takes this thread's scope, as the compile pool does, is stopped too.
    bool pool_stopped = false;
    std::thread pool([&, flag = common::StopScope::current()] {
      common::StopScope inherited(flag);
      pool_stopped = common::StopScope::stopped();
    });
    pool.join();
    CHECK(pool_stopped);
  }
  CHECK_FALSE(elsewhere.stopped);
  CHECK(elsewhere.exit_code == 3);
  CHECK_FALSE(common::StopScope::stopped());
  auto after = common::run_process(spec).take();
  CHECK_FALSE(after.stopped);
  CHECK(after.exit_code == 3);
}
