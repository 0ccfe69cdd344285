#pragma once
// The host side of LLVM's interactive ML channel: creates the two FIFOs,
// opens them in the order the compiler expects, answers every observation
// through a Runner, and never deadlocks — a compiler that dies before
// opening, dies mid-stream, hangs, or sends garbage ends the session with a
// clear result and no FIFO left behind.
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/process.h"
#include "common/result.h"
#include "policy/runner.h"

namespace policy {

/// The compiler flags that make LLVM's inliner talk to a channel at `base`.
std::vector<std::string> inliner_channel_flags(const std::filesystem::path& base, bool include_default);

/// Why a compile did not succeed, for callers that record it: each kind
/// means something different to whoever reads the record.
enum class CompileFailure {
  None,
  CompilerFailed,  ///< the compiler exited non-zero or died of a signal
  NotStarted,      ///< fork, a pipe or exec failed: the machine's doing (a binary removed, no memory)
  TimedOut,
  Refused,  ///< the runner refused the compiler's header (another feature set), or driftwatch cannot read it
  Channel,  ///< the ML channel broke: FIFOs, a stream cut short, the runner threw
  /// The compiler failed for the machine's reason, as its output says (a
  /// full disk: common::machine_failure_line), not the code's. Memory
  /// exhaustion is not: the input may ask for it (policy::ran_out_of_memory).
  Machine,
};

/// The line of a failed compiler's output that says why: LLVM's own
/// "LLVM ERROR: …" when there is one (a stack dump follows it), else the
/// first "error: …" diagnostic, else the last line.
std::string compiler_failure_line(const std::string& output);

struct SessionStats {
  bool opened = false;         ///< a compiler opened the channel (BASE.in)
  bool connected = false;      ///< the compiler opened both FIFOs and sent its header
  bool refused = false;        ///< the runner's begin() refused the header
  /// The compiler's header or stream is not one driftwatch reads (a tensor
  /// type or shape it does not know, a line of no JSON): so on every compile
  /// with this build, the compiler's protocol, never the machine's failure.
  bool malformed = false;
  /// Our side of the channel could not be opened (permissions, a file system
  /// without FIFOs): the machine's failure, whatever the compiler.
  bool host_failed = false;
  std::size_t decisions = 0;
  double advise_seconds = 0;   ///< time spent inside the runner
  std::optional<ChannelHeader> header;
};

/// Result of serving one compilation.
struct ChannelOutcome {
  SessionStats session;
  common::ProcessResult process;  ///< the compiler's exit (when we started it)
  std::string error;              ///< protocol or runner error, "" if none
  CompileFailure failure = CompileFailure::None;

  bool ok() const { return error.empty() && process.ok(); }
  /// One line: what went wrong, or "" when ok.
  std::string describe() const;
};

/// A pair of FIFOs at BASE.in / BASE.out, removed when this object dies.
class ChannelFifos {
 public:
  /// The error names the path when the FIFOs cannot be created, or when
  /// something other than a FIFO of ours (a user's file, say) is in the way.
  static common::Result<ChannelFifos> create(const std::filesystem::path& base);
  ChannelFifos(ChannelFifos&& o) noexcept : base_(std::move(o.base_)) { o.base_.clear(); }
  ~ChannelFifos();
  const std::filesystem::path& base() const { return base_; }
  /// Stops the processes that hold BASE.in or BASE.out: a compiler this
  /// server will not answer (refused, timed out, spoke nonsense) would
  /// otherwise wait on the channel for ever (LLVM 19 reads the advice in a
  /// loop that spins on end of file). SIGTERM, then SIGKILL after 5 s.
  /// Returns their pids.
  std::vector<long> stop_peers() const;

 private:
  explicit ChannelFifos(std::filesystem::path base) : base_(std::move(base)) {}
  std::filesystem::path base_;
};

/// Serves one session on existing FIFOs. `peer_alive` is polled while
/// waiting; returning false ends the session (the compiler died).
/// `deadline` bounds the whole session; with `serve_for`, only the wait for
/// a compiler, and serving it gets `serve_for` from when it opens the channel
/// (a server left running may wait long, then serve a long compile).
SessionStats serve_session(const ChannelFifos& fifos, Runner& runner, std::chrono::steady_clock::time_point deadline,
                           const std::function<bool()>& peer_alive, std::string& error,
                           std::optional<std::chrono::steady_clock::duration> serve_for = std::nullopt);

/// Starts `compiler` (whose argv must already carry the channel flags for
/// `base`), serves it and waits for it. The timeout covers everything.
ChannelOutcome compile_with_channel(const common::ProcessSpec& compiler, const std::filesystem::path& base,
                                    Runner& runner, std::chrono::milliseconds timeout);

}  // namespace policy
