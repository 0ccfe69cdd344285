#include "builder/step_failure.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <iterator>

#include "common/text.h"

namespace builder {

namespace {

/// "Killed" as a word: "Killed", "[Killed]", "command: Killed", "1234 Killed  cc1plus".
bool says_killed(const std::string& line) {
  static const std::string word = "Killed";
  for (auto at = line.find(word); at != std::string::npos; at = line.find(word, at + 1)) {
    bool starts = at == 0 || !std::isalnum(static_cast<unsigned char>(line[at - 1]));
    auto end = at + word.size();
    bool ends = end == line.size() || !std::isalnum(static_cast<unsigned char>(line[end]));
    if (starts && ends) return true;
  }
  return false;
}

}  // namespace

std::string failure_line(const std::string& log_text) {
  for (const auto& line : common::split(log_text, '\n'))
    if (line.rfind("$ ", 0) != 0 &&
        (line.find("error:") != std::string::npos || line.find("Error") != std::string::npos))
      return common::trim(line);
  return common::last_line(log_text);
}

bool killed_by_signal(const common::ProcessResult& p) {
  // Signals sent from outside (the OOM killer, an operator, a hang-up) or
  // raised by a full disk (SIGBUS on a mapped file, SIGXFSZ). A crash of
  // the check-in's own tool (SIGSEGV, SIGABRT, SIGILL, SIGFPE) is its result.
  static const int kOutside[] = {SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGBUS, SIGXFSZ, SIGXCPU, SIGPIPE};
  int sig = p.signal != 0 ? p.signal : p.exit_code > 128 && p.exit_code <= 128 + 64 ? p.exit_code - 128 : 0;
  return std::find(std::begin(kOutside), std::end(kOutside), sig) != std::end(kOutside);
}

bool tool_not_found(const common::ProcessResult& p, const std::string& step_output) {
  if (p.signal != 0 || p.exit_code != 127) return false;
  // "sh: 1: cmake: not found" (dash), "bash: line 1: cmake: command not found".
  for (const auto& line : common::split(step_output, '\n')) {
    auto at = line.rfind(": not found");
    if (at == std::string::npos) at = line.rfind(": command not found");
    if (at == std::string::npos || line.rfind("$ ", 0) == 0) continue;
    auto start = line.rfind(": ", at - 1);
    auto name = line.substr(start == std::string::npos ? 0 : start + 2, at - (start == std::string::npos ? 0 : start + 2));
    // A path (./build.sh, {source}/configure) is the check-in's file, gone from it.
    return !name.empty() && name.find('/') == std::string::npos;
  }
  return false;
}

std::optional<std::string> machine_failure(const std::string& step_output) {
  for (const auto& line : common::split(step_output, '\n')) {
    if (line.rfind("$ ", 0) == 0) continue;  // our own echo of the command
    if (says_killed(line) || line.find(kStepNotStarted) != std::string::npos) return common::trim(line);
    if (auto m = common::machine_failure_line(line)) return m;
  }
  return std::nullopt;
}

}  // namespace builder
