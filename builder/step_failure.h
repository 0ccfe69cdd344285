#pragma once
// Reading a failed build step: the line that says why, and whether the
// machine failed it rather than the check-in. A machine failure (the OOM
// killer, a full disk) is never cached as the check-in's result. Pure.
#include <optional>
#include <string>

#include "common/process.h"

namespace builder {

/// The most telling line of a failed step's output: the first diagnostic
/// ("file:12:3: error: …", "ninja: error: …", "CMake Error at …"; never our
/// own "$ command" echo nor a ninja progress line, whose files may be named
/// Error.cpp), else ninja's "FAILED: …" line, else the last line.
std::string failure_line(const std::string& output);

/// The step itself was killed by a signal from outside the check-in's tools
/// (the OOM killer, an operator, SIGBUS or SIGXFSZ on a full disk); the shell
/// reports a child killed by signal N as exit status 128+N. A tool's own
/// crash (SIGSEGV, SIGABRT) is not: it recurs with the check-in.
bool killed_by_signal(const common::ProcessResult& p);

/// A tool the recipe runs is not installed on this machine: the step's shell
/// found no such command on the PATH (exit status 127, and it says so of a
/// bare name), or a shell under the step did ("/bin/sh: 1: ccache: not
/// found" under ninja), or CMake found no program for its generator or no
/// compiler. A path not found (./build.sh) is the check-in's own file, missing.
/// The line that says so; nullopt when no tool is missing.
std::optional<std::string> missing_tool_line(const common::ProcessResult& p, const std::string& step_output);

/// What the log says when a step could not be started at all (fork or exec of
/// the shell failed: too many processes, no memory): the machine's failure.
inline constexpr const char* kStepNotStarted = "driftwatch: the step could not be started";

/// The line of a failed step's own output that shows the machine failed it: a
/// tool under ninja or make killed ("Killed", as sh, gcc, clang, collect2 and
/// make report it), a full disk or quota, a read-only or failing disk, memory
/// or processes exhausted, a step that could not start. nullopt when none does.
std::optional<std::string> machine_failure(const std::string& step_output);

/// Ninja says commands failed ("FAILED: …") and not one of them said why:
/// what a command killed without a word leaves (clang, whose driver runs
/// the compiler in its own process, SIGKILLed by the OOM killer or a
/// cgroup's limit: neither ninja nor a shell prints "Killed" then). A
/// check-in's compile error always says something.
bool ninja_failed_without_a_word(const std::string& step_output);

}  // namespace builder
