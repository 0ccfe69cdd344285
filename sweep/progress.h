#pragma once
// Progress of long work: on a terminal, one line redrawn in place (phase,
// i/n, a bar, the ETA, modules done within the current job); elsewhere
// (cron, CI logs) plain lines, one per finished job.
#include <chrono>
#include <mutex>
#include <string>
#include <utility>

namespace sweep {

class Progress {
 public:
  /// `terminal`: redraw in place; `quiet`: only what `line` prints.
  Progress(bool terminal, bool quiet);
  /// Starts counting `total` steps.
  void start(int total);
  /// More steps joined (bisection's evaluations).
  void extend(int more);
  /// A step finished, described in one line.
  void step(const std::string& what);
  /// Within the current step (a terminal only): "modules 40/97".
  void detail(const std::string& what, int done, int total);
  /// A line that is always printed (above the bar on a terminal).
  void line(const std::string& text);
  /// A line that says what is being done, not what went wrong: left out by `-q`.
  void note(const std::string& text);
  /// Steps finished and planned, as the bar counts them.
  std::pair<int, int> counts();

 private:
  std::string status() const;
  void redraw(const std::string& detail);
  bool terminal_, quiet_;
  int total_ = 0, done_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
};

/// Whether standard error is a terminal (and TERM is not "dumb").
bool stderr_is_terminal();

}  // namespace sweep
