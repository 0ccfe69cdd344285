#pragma once
// Notices a farm whose workers do not work: a Slurm array none of whose tasks
// can start (a drained or dead node, a partition that never fits them), or an
// external engine with no worker running. A sweep at night must then fail
// with the reason rather than wait forever. Pure: the caller brings the time.
#include <chrono>

namespace sweep {

class StallWatch {
 public:
  using Clock = std::chrono::steady_clock;
  /// limit 0: never a stall (a busy shared cluster may keep work pending for hours).
  explicit StallWatch(std::chrono::seconds limit) : limit_(limit) {}
  /// Starts the clock again (a new Slurm array was submitted).
  void restart(Clock::time_point now) { since_ = now; }
  /// One look at the jobs: how many run now, how many have finished. A job
  /// running or one more finished is progress; true once `limit` has passed
  /// without any.
  bool stalled(Clock::time_point now, int running, int finished);

 private:
  std::chrono::seconds limit_;
  Clock::time_point since_{};
  int finished_ = -1;
};

}  // namespace sweep
