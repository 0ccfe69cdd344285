#pragma once
// Compiling one module with a built compiler: with its default heuristic, or
// with a Runner answering its inlining decisions over the ML channel.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "common/process.h"
#include "policy/channel_server.h"
#include "policy/runner.h"

namespace policy {

/// How to run a compiler on one module, from a recipe's [compile] section.
struct CompilerInvocation {
  std::vector<std::string> argv;  ///< holds {input} and {output} (a recipe's compile line must)
  std::string ml_flag_prefix;     ///< "" for dwcc and opt; "-mllvm" for clang
  std::chrono::milliseconds timeout{std::chrono::minutes(2)};
  /// The program (and its first words) that takes a module's own clang -cc1
  /// line, as ml-compiler-opt's runner runs it; empty when it cannot.
  std::vector<std::string> cc1;
  /// The recipe says the ML inliner, answered with the default's every
  /// decision, makes the default's object on its compile line (no size cap
  /// reached, as at -Oz): the evaluator may then take one for the other.
  bool share_agreeing_defaults = false;

  /// This compiler on one module's own -cc1 args (from its corpus): the cc1
  /// program, the args, then `-x ir {input} -o {output}`. Needs cc1.
  CompilerInvocation with_module_args(const std::vector<std::string>& cc1_args) const;

  /// The process for one compile, with LLVM options added (each behind the prefix).
  common::ProcessSpec spec(const std::filesystem::path& input, const std::filesystem::path& output,
                           const std::vector<std::string>& llvm_flags = {}) const;
};

struct CompileOutcome {
  bool ok = false;
  std::string error;  ///< one line when !ok
  CompileFailure failure = CompileFailure::None;
  bool timed_out = false;
  double seconds = 0;
  SessionStats session;  ///< decisions etc. (channel compiles only)
};

/// What common::ProcessResult::describe() says of a SIGKILLed process ("killed by signal 9 (Killed)").
inline constexpr const char* kSigkillMarker = "killed by signal 9 ";
/// A compile's one-line error says the OOM killer (or someone) SIGKILLed it.
bool killed_by_sigkill(const std::string& error);
/// Killed, or out of memory by its own words: the load, or the input (a
/// policy that inlines without end). Tried again alone; back, it is the
/// compile's own failure (the policy's loss), never left out as the machine's.
bool ran_out_of_memory(const std::string& error);
/// A compile's failure from its output: the machine's (a full disk), or the
/// compiler's own, memory exhaustion included (ran_out_of_memory says it).
CompileFailure failure_of(const std::string& output);

/// The machine failed the compile (a timeout, a broken channel, SIGKILL),
/// not the compiler on its input: another attempt may succeed.
bool machine_failure(const CompileOutcome& c);

/// Compiles with the default heuristic (no ML flags). Like
/// compile_with_runner, it removes an old object at `output` first and fails
/// (the compiler's failure) when the compiler exits 0 without writing one.
CompileOutcome compile_default(const CompilerInvocation& cc, const std::filesystem::path& input,
                               const std::filesystem::path& output);

/// Compiles with `runner` serving the inliner's channel; the FIFOs live in
/// `channel_dir` under a name unique to this process and call.
CompileOutcome compile_with_runner(const CompilerInvocation& cc, const std::filesystem::path& input,
                                   const std::filesystem::path& output, Runner& runner,
                                   const std::filesystem::path& channel_dir, bool include_default = false);

/// detect_default_slot's reading of the probe's log, pure: the fixed slot
/// when it says "inline", LLVM 19's (callee_basic_block_count) when only it
/// does and holds nothing but 0 and 1; else an error.
common::Result<DefaultDecisionSlot> slot_from_log(const DecisionLog& log);

/// Finds where this compiler build puts the default decision under
/// -inliner-interactive-include-default (LLVM 19's bug or the fixed slot), by
/// compiling a probe module whose default decision is known to be "inline".
/// A probe killed, not started or failed for the disk is the machine's
/// (common::Error::machine_only); a hang or a broken channel may be the compiler's.
common::Result<DefaultDecisionSlot> detect_default_slot(const CompilerInvocation& cc,
                                                        const std::filesystem::path& work_dir);

/// Compiles detect_default_slot's probe module with the default heuristic
/// alone: when the probe fails, whether the compiler itself is broken (it
/// cannot compile the simplest module, e.g. a crash on every input or a
/// recipe's bad compile line) rather than unable to serve a policy.
CompileOutcome compile_probe_by_default(const CompilerInvocation& cc, const std::filesystem::path& work_dir);

}  // namespace policy
