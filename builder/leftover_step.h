#pragma once
// What a build step leaves running when driftwatch itself is SIGKILLed (the
// OOM killer): PR_SET_PDEATHSIG takes the step's shell with it, but not the
// ninja or make the shell started, which would go on writing into the work
// tree while the rerun builds there. A running step is recorded in the work
// tree; the next build there ends what is left of it first.
#include <sys/types.h>

#include <filesystem>
#include <vector>

namespace builder {

/// Where a work tree records its running step: beside its build directory.
inline std::filesystem::path step_file_of(const std::filesystem::path& build_dir) {
  return build_dir.parent_path() / "step.pgid";
}

/// Records the step's session (its shell's pid, common::ProcessSpec::own_session;
/// and this host) in `file`.
void record_step(const std::filesystem::path& file, pid_t sid);
/// The step ended: forgets it.
void forget_step(const std::filesystem::path& file);
/// Kills what is left of a step recorded in `file` on this host: its
/// session, if a process of it still works in one of `dirs` (so a session id
/// a later, unrelated program took is left alone). Returns the processes found.
int end_leftover_step(const std::filesystem::path& file, const std::vector<std::filesystem::path>& dirs);

}  // namespace builder
