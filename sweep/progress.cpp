#include "sweep/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/text.h"

namespace sweep {

bool stderr_is_terminal() {
  const char* term = std::getenv("TERM");
  return isatty(STDERR_FILENO) && !(term && std::strcmp(term, "dumb") == 0);
}

Progress::Progress(bool terminal, bool quiet) : terminal_(terminal), quiet_(quiet) {}

void Progress::start(int total) {
  std::lock_guard<std::mutex> lock(mutex_);
  total_ = total;
  done_ = 0;
  start_ = std::chrono::steady_clock::now();
}

std::string Progress::status() const {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string eta = done_ > 0 && done_ < total_ ? ", ETA " + common::format_seconds(elapsed / done_ * (total_ - done_)) : "";
  return fmt::format("[{:>{}}/{}{}]", done_, std::to_string(total_).size(), total_, eta);
}

void Progress::redraw(const std::string& detail) {
  constexpr int kWidth = 24;
  int filled = total_ > 0 ? kWidth * done_ / total_ : 0;
  std::string bar(filled, '#');
  bar += std::string(kWidth - filled, '.');
  fmt::print(stderr, "\r\033[K{} {} {}", bar, status(), detail);
  std::fflush(stderr);
}

std::pair<int, int> Progress::counts() {
  std::lock_guard<std::mutex> lock(mutex_);
  return {done_, total_};
}

void Progress::extend(int more) {
  std::lock_guard<std::mutex> lock(mutex_);
  total_ += more;
}

void Progress::step(const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  // Local workers also run jobs left queued by an interrupted sweep or
  // bisection of the project: counted, they must not overrun the bar.
  total_ = std::max(total_, done_);
  if (quiet_) return;
  if (terminal_) {
    fmt::print(stderr, "\r\033[K  {}\n", what);
    redraw("");
  } else {
    fmt::print(stderr, "{} {}\n", status(), what);
  }
}

void Progress::detail(const std::string& what, int done, int total) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (quiet_ || !terminal_) return;
  redraw(fmt::format("{}: modules {}/{}", what, done, total));
}

void Progress::line(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (terminal_ && !quiet_) fmt::print(stderr, "\r\033[K");
  fmt::print(stderr, "{}\n", text);
}

void Progress::note(const std::string& text) {
  if (!quiet_) line(text);
}

}  // namespace sweep
