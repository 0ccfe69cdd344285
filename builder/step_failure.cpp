#include "builder/step_failure.h"

#include <algorithm>
#include <cctype>
#include <csignal>
#include <iterator>

#include "common/text.h"

namespace builder {

namespace {

/// "Killed" as the kill reports of sh, make, gcc and clang write it:
/// "Killed", "[Killed]", "command: Killed", "1234 Killed  cc1plus". Never in
/// a path or an identifier ("lib/Killed.cpp.o", "'Killed'", "-DKilled"): a
/// check-in's own failure read as the machine's is retried every night and
/// never recorded.
bool says_killed(const std::string& line) {
  static const std::string word = "Killed";
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  for (auto at = line.find(word); at != std::string::npos; at = line.find(word, at + 1)) {
    bool starts = at == 0 || space(line[at - 1]) || line[at - 1] == '[';
    auto end = at + word.size();
    bool ends = end == line.size() || space(line[end]) || line[end] == ']';
    if (starts && ends) return true;
  }
  return false;
}

/// "   12 |   bool Killed = true;", "      |        ^": a compiler quoting
/// the check-in's source under a diagnostic.
bool source_excerpt(const std::string& line) {
  auto at = line.find_first_not_of(" \t0123456789");
  return at != std::string::npos && line[at] == '|' && at > 0;
}

/// "[57/3120] Building CXX object …/Error.cpp.o": ninja's progress.
bool progress_line(const std::string& line) {
  return line.size() > 1 && line[0] == '[' && std::isdigit(static_cast<unsigned char>(line[1]));
}

/// A line of the step's own that says what went wrong ("file:12:3: error:
/// …", "ninja: error: …", "CMake Error at …"); never our own "$ command"
/// echo nor a progress line, whose files may be named Error.cpp.
bool diagnostic(const std::string& line) {
  if (line.rfind("$ ", 0) == 0 || progress_line(line)) return false;
  return line.find("error:") != std::string::npos || line.find("Error:") != std::string::npos ||
         line.find("CMake Error") != std::string::npos;
}

}  // namespace

std::string failure_line(const std::string& output) {
  std::string failed;
  for (const auto& line : common::split(output, '\n')) {
    if (diagnostic(line)) return common::trim(line);
    if (failed.empty() && line.rfind("FAILED: ", 0) == 0) failed = common::trim(line);
  }
  return !failed.empty() ? failed : common::last_line(output);
}

bool killed_by_signal(const common::ProcessResult& p) {
  // Signals sent from outside (the OOM killer, an operator, a hang-up) or
  // raised by a full disk (SIGBUS on a mapped file, SIGXFSZ). A crash of
  // the check-in's own tool (SIGSEGV, SIGABRT, SIGILL, SIGFPE) is its result.
  static const int kOutside[] = {SIGKILL, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGBUS, SIGXFSZ, SIGXCPU, SIGPIPE};
  int sig = p.signal != 0 ? p.signal : p.exit_code > 128 && p.exit_code <= 128 + 64 ? p.exit_code - 128 : 0;
  return std::find(std::begin(kOutside), std::end(kOutside), sig) != std::end(kOutside);
}

namespace {

/// The command a shell's "not found" line names ("sh: 1: cmake: not found",
/// "bash: line 1: ninja: command not found"), or "" for any other line.
std::string not_found_command(const std::string& line) {
  if (line.rfind("$ ", 0) == 0) return "";  // our own echo of the command
  auto at = line.rfind(": not found");
  if (at == std::string::npos) at = line.rfind(": command not found");
  if (at == std::string::npos || at == 0) return "";
  auto start = line.rfind(": ", at - 1);
  return line.substr(start == std::string::npos ? 0 : start + 2, at - (start == std::string::npos ? 0 : start + 2));
}

/// A program's bare name: what the shell looked up on the PATH. A path
/// (./build.sh, {source}/configure) is the check-in's own file, gone from it.
bool bare_program(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '+';
  });
}

}  // namespace

std::optional<std::string> missing_tool_line(const common::ProcessResult& p, const std::string& step_output) {
  if (p.signal != 0) return std::nullopt;
  for (const auto& line : common::split(step_output, '\n')) {
    if (line.rfind("$ ", 0) == 0) continue;
    // CMake without the generator's program or a compiler: the machine's.
    if (line.find("CMake was unable to find a build program corresponding to") != std::string::npos ||
        line.find("No CMAKE_C_COMPILER could be found") != std::string::npos ||
        line.find("No CMAKE_CXX_COMPILER could be found") != std::string::npos)
      return common::trim(line);
    auto name = not_found_command(line);
    if (!bare_program(name)) continue;
    // The step's own shell (exit 127), or one a tool under it started (ninja
    // running "ccache c++ …" through /bin/sh, which then fails with 1).
    bool shell_line = line.rfind("sh: ", 0) == 0 || line.rfind("bash: ", 0) == 0 || line.rfind("/bin/sh: ", 0) == 0 ||
                      line.rfind("/bin/bash: ", 0) == 0 || line.rfind("/usr/bin/sh: ", 0) == 0;
    if (p.exit_code == 127 || shell_line) return common::trim(line);
  }
  return std::nullopt;
}

std::optional<std::string> machine_failure(const std::string& step_output) {
  for (const auto& line : common::split(step_output, '\n')) {
    if (line.rfind("$ ", 0) == 0) continue;  // our own echo of the command
    if (progress_line(line) || source_excerpt(line)) continue;  // file names and quoted code
    if (says_killed(line) || line.find(kStepNotStarted) != std::string::npos) return common::trim(line);
    if (auto m = common::machine_failure_line(line)) return m;
  }
  return std::nullopt;
}

bool ninja_failed_without_a_word(const std::string& step_output) {
  auto lines = common::split(step_output, '\n');
  // A diagnostic anywhere says why: a command of ninja's console pool (an
  // ExternalProject's configure) prints before its FAILED line, and ninja's
  // own errors ("ninja: error: … missing and no known rule") are the check-in's.
  if (std::any_of(lines.begin(), lines.end(), diagnostic)) return false;
  int failed = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("FAILED: ", 0) != 0) continue;
    ++failed;
    // The command follows; what it printed, until ninja's next line of its own.
    for (auto j = i + 2; j < lines.size(); ++j) {
      const auto& l = lines[j];
      bool ninjas =
          l.rfind("FAILED: ", 0) == 0 || l.rfind("ninja: ", 0) == 0 || l.rfind("$ ", 0) == 0 || progress_line(l);
      if (ninjas) break;
      if (!common::trim(l).empty()) return false;
    }
  }
  return failed > 0;
}

}  // namespace builder
