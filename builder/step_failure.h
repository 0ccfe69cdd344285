#pragma once
// Reading a failed build step: the line that says why, and whether the
// machine failed it rather than the check-in. A machine failure (the OOM
// killer, a full disk) is never cached as the check-in's result. Pure.
#include <optional>
#include <string>

#include "common/process.h"

namespace builder {

/// The most telling line of a failed step's log: the first "error" line (not
/// our own "$ command" echo), else the last line.
std::string failure_line(const std::string& log_text);

/// The step itself was killed by a signal (the OOM killer, SIGBUS or SIGXFSZ
/// on a full disk, an operator). The shell reports a child killed by signal
/// N as exit status 128+N.
bool killed_by_signal(const common::ProcessResult& p);

/// The line of a failed step's own output that shows the machine failed it: a
/// tool under ninja or make killed ("Killed", as sh, gcc, clang, collect2 and
/// make report it), a full disk, memory exhausted. nullopt when none does.
std::optional<std::string> machine_failure(const std::string& step_output);

}  // namespace builder
