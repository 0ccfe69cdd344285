#include "sweep/stall_watch.h"

namespace sweep {

bool StallWatch::stalled(Clock::time_point now, int running, int finished) {
  // A job can finish between two looks without ever being seen running.
  bool progress = running > 0 || (finished_ >= 0 && finished != finished_);
  finished_ = finished;
  if (progress || since_ == Clock::time_point{}) since_ = now;
  return limit_.count() > 0 && now - since_ >= limit_;
}

}  // namespace sweep
