#include "policy/channel_server.h"

#include "policy/compiler.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <thread>

#include "common/process.h"
#include "common/text.h"

namespace policy {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

int ms_until(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 50));
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

/// Buffered reader of the compiler's stream that gives up at the deadline
/// or when the peer dies, rather than blocking forever.
class StreamReader {
 public:
  StreamReader(int fd, Clock::time_point deadline, const std::function<bool()>& alive)
      : fd_(fd), deadline_(deadline), alive_(alive) {}

  enum class Status { Ok, Eof, TimedOut, PeerDied, Failed, TooLong, Short };

  Status line(std::string& out) {
    for (;;) {
      auto nl = buf_.find('\n', pos_);
      if (nl != std::string::npos) {
        out.assign(buf_, pos_, nl - pos_);
        pos_ = nl + 1;
        return Status::Ok;
      }
      // A header of a few hundred features is some tens of KiB: a line that
      // never ends is no header, and must not fill memory until the deadline.
      if (buf_.size() - pos_ > kMaxLine) return Status::TooLong;
      if (auto s = fill(); s != Status::Ok) return s;
    }
  }
  static constexpr std::size_t kMaxLine = std::size_t{1} << 20;

  /// The compiler writes each observation whole and then waits for the
  /// answer: one whose bytes stop coming for this long sent fewer than its
  /// header's tensor sizes say, or froze (Short); either would otherwise
  /// keep us waiting to the compile's deadline.
  static constexpr auto kStalledObservation = std::chrono::seconds(10);

  Status bytes(std::size_t n, std::string& out) {
    while (buf_.size() - pos_ < n) {
      auto stalled = Clock::now() + kStalledObservation;
      auto s = fill(std::min(deadline_, stalled));
      if (s == Status::TimedOut && Clock::now() < deadline_) return Status::Short;
      if (s != Status::Ok) return s;
    }
    out.assign(buf_, pos_, n);
    pos_ += n;
    return Status::Ok;
  }

  std::size_t buffered() const { return buf_.size() - pos_; }

  bool received_anything() const { return !buf_.empty() || consumed_ > 0; }

 private:
  Status fill() { return fill(deadline_); }

  Status fill(Clock::time_point until) {
    if (pos_ > 65536) {  // keep the buffer small on long streams
      buf_.erase(0, pos_);
      consumed_ += pos_;
      pos_ = 0;
    }
    for (;;) {
      if (Clock::now() >= until) return Status::TimedOut;
      pollfd p{fd_, POLLIN, 0};
      int r = poll(&p, 1, ms_until(until));
      if (r < 0 && errno != EINTR) return Status::Failed;
      if (r <= 0) {
        if (!alive_()) return drain_after_death();
        continue;
      }
      char chunk[65536];
      ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n > 0) {
        buf_.append(chunk, n);
        return Status::Ok;
      }
      if (n == 0) {
        // No writer: the end of the stream, unless the compiler has not
        // opened its end yet (then read() also says 0).
        if (received_anything() || !alive_()) return Status::Eof;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      if (errno != EAGAIN && errno != EINTR) return Status::Failed;
    }
  }

  Status drain_after_death() {
    char chunk[65536];
    ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n > 0) {
      buf_.append(chunk, n);
      return Status::Ok;
    }
    return Status::PeerDied;
  }

  int fd_;
  Clock::time_point deadline_;
  const std::function<bool()>& alive_;
  std::string buf_;
  std::size_t pos_ = 0, consumed_ = 0;
};

const char* describe(StreamReader::Status s) {
  switch (s) {
    case StreamReader::Status::TimedOut: return "timed out waiting for the compiler";
    case StreamReader::Status::PeerDied: return "the compiler died mid-stream";
    case StreamReader::Status::Failed: return "reading the ML channel failed";
    case StreamReader::Status::TooLong: return "the compiler sent a header line of more than 1 MiB: no ML channel header";
    case StreamReader::Status::Short: return "the compiler stopped mid-observation";
    default: return "the compiler closed the ML channel mid-observation";
  }
}

enum class Written { Ok, Failed, NotRead };

/// A compiler reads each answer before it asks again, so the pipe holds one
/// at most: a pipe that stays full is a compiler that stopped reading its
/// advice (blocked writing, it would wait on us for ever, and we on it).
constexpr int kFullPipeMs = 5000;

Written write_all(int fd, const std::string& bytes, Clock::time_point deadline) {
  std::size_t done = 0;
  auto full_until = Clock::now() + std::chrono::milliseconds(kFullPipeMs);
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      auto now = Clock::now();
      if (now >= full_until || now >= deadline) return Written::NotRead;
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, ms_until(std::min(full_until, deadline)));
      continue;
    }
    if (n <= 0) return Written::Failed;
    done += n;
  }
  return Written::Ok;
}

}  // namespace

std::vector<std::string> inliner_channel_flags(const fs::path& base, bool include_default) {
  std::vector<std::string> flags = {"-enable-ml-inliner=release", "-inliner-interactive-channel-base=" + base.string()};
  if (include_default) flags.push_back("-inliner-interactive-include-default");
  return flags;
}

common::Result<ChannelFifos> ChannelFifos::create(const fs::path& base) {
  // A compiler that died mid-write gets EPIPE instead of killing us.
  static const bool sigpipe_ignored = [] { return signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)sigpipe_ignored;
  // Only a stale FIFO of ours (from a killed run) is replaced: the base comes
  // from the command line and may name anything, even a user's file.
  for (const char* ext : {".in", ".out"}) {
    auto p = base.string() + ext;
    struct stat st {};
    if (lstat(p.c_str(), &st) == 0 && (!S_ISFIFO(st.st_mode) || st.st_uid != geteuid()))
      return common::Error{"refusing ML channel path " + p + ": it exists and is not a FIFO" +
                           (S_ISFIFO(st.st_mode) ? " of ours" : "")};
  }
  for (const char* ext : {".in", ".out"}) {
    auto p = base.string() + ext;
    unlink(p.c_str());
    if (mkfifo(p.c_str(), 0600) != 0) {
      int e = errno;
      unlink((base.string() + ".in").c_str());
      return common::Error{"cannot create ML channel FIFO " + p + ": " + strerror(e)};
    }
  }
  return ChannelFifos(base);
}

ChannelFifos::~ChannelFifos() {
  if (base_.empty()) return;
  unlink((base_.string() + ".in").c_str());
  unlink((base_.string() + ".out").c_str());
}

std::vector<long> ChannelFifos::stop_peers() const {
  auto peers = common::processes_holding(base_.string() + ".in");
  for (long pid : common::processes_holding(base_.string() + ".out"))
    if (std::find(peers.begin(), peers.end(), pid) == peers.end()) peers.push_back(pid);
  // Signalled through pidfds taken now: a peer that exits meanwhile cannot
  // hand its pid to another process, which would then be killed.
  std::vector<int> fds;
  for (long pid : peers)
    if (int fd = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0)); fd >= 0) {
      syscall(SYS_pidfd_send_signal, fd, SIGTERM, nullptr, 0);
      fds.push_back(fd);
    }
  auto until = Clock::now() + std::chrono::seconds(5);
  for (int fd : fds) {
    pollfd exited{fd, POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    if (poll(&exited, 1, static_cast<int>(std::max<long long>(left, 0))) <= 0)
      syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0);
    close(fd);
  }
  return peers;
}

SessionStats serve_session(const ChannelFifos& fifos, Runner& runner, Clock::time_point deadline,
                           const std::function<bool()>& peer_alive, std::string& error,
                           std::optional<Clock::duration> serve_for) {
  SessionStats stats;
  auto in_path = fifos.base().string() + ".in", out_path = fifos.base().string() + ".out";
  // The compiler opens BASE.in for reading first: ours for writing only
  // succeeds once it has (ENXIO until then).
  Fd to_compiler;
  for (;;) {
    int fd = open(in_path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      to_compiler = Fd(fd);
      stats.opened = true;
      if (serve_for) deadline = Clock::now() + *serve_for;
      break;
    }
    if (errno != ENXIO && errno != EINTR) {
      error = "cannot open " + in_path + ": " + strerror(errno);
      stats.host_failed = true;
      return stats;
    }
    if (!peer_alive()) return stats;  // died before opening: the process result tells why
    if (Clock::now() >= deadline) {
      error = "timed out waiting for the compiler to open the ML channel";
      return stats;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Fd from_compiler(open(out_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (from_compiler.get() < 0) {
    error = "cannot open " + out_path + ": " + strerror(errno);
    stats.host_failed = true;
    return stats;
  }
  StreamReader reader(from_compiler.get(), deadline, peer_alive);
  std::string line, bytes, context;
  auto s = reader.line(line);
  if (s != StreamReader::Status::Ok) {
    if (s != StreamReader::Status::PeerDied && s != StreamReader::Status::Eof) error = describe(s);
    stats.malformed = s == StreamReader::Status::TooLong;
    return stats;
  }
  stats.connected = true;
  auto header = parse_header(line);
  if (!header) {
    error = header.error().message;
    stats.malformed = true;
    return stats;
  }
  stats.header = *header;
  // A runner that throws (a LibTorch error) ends this session, not the process.
  try {
    if (auto b = runner.begin(*header); !b) {
      error = b.error().message;
      stats.refused = true;
      return stats;
    }
  } catch (const std::exception& e) {
    error = std::string("the policy failed: ") + e.what();
    return stats;
  }
  const auto obs_bytes = header->observation_bytes();
  for (;;) {
    s = reader.line(line);
    if (s == StreamReader::Status::Eof || s == StreamReader::Status::PeerDied) return stats;  // compilation over
    if (s != StreamReader::Status::Ok) {
      error = describe(s);
      stats.malformed = s == StreamReader::Status::TooLong;
      return stats;
    }
    auto event = parse_event(line);
    if (!event) {
      error = event.error().message;
      stats.malformed = true;
      return stats;
    }
    if (event->kind == StreamEvent::Context) {
      context = event->context;
      continue;
    }
    if ((s = reader.bytes(obs_bytes + 1, bytes)) != StreamReader::Status::Ok) {
      error = describe(s);
      if (s == StreamReader::Status::Short) {
        // The header's tensor sizes and the compiler's bytes disagree, or the
        // compiler froze mid-write (a suspended job): a channel failure,
        // tried again, said in seconds rather than at the compile's timeout.
        error = "ML channel stream: observation " + std::to_string(event->index) + " stopped after " +
                std::to_string(reader.buffered()) + " of the " + std::to_string(obs_bytes + 1) +
                " bytes the header's tensor sizes say, and the compiler sent no more for " +
                std::to_string(StreamReader::kStalledObservation.count()) + " s";
      }
      return stats;
    }
    if (bytes.back() != '\n') {
      error = "malformed ML channel stream: observation " + std::to_string(event->index) +
              " does not end where the header's tensor sizes say";
      stats.malformed = true;
      return stats;
    }
    auto features = decode_observation(*header, std::string_view(bytes).substr(0, obs_bytes));
    auto t0 = Clock::now();
    double decision = 0;
    try {
      decision = runner.advise({*header, features, event->index, context});
    } catch (const std::exception& e) {
      error = std::string("the policy failed: ") + e.what();
      return stats;
    }
    stats.advise_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    auto written = write_all(to_compiler.get(), encode_advice(header->advice, decision), deadline);
    if (written == Written::NotRead) {
      error = "malformed ML channel use: the compiler stopped reading the policy's advice (its pipe is full after " +
              std::to_string(stats.decisions) + " answers)";
      stats.malformed = true;
      return stats;
    }
    if (written == Written::Failed) {
      int e = errno;  // before peer_alive(), which may set its own
      // EPIPE: the compiler closed its end of the advice pipe, so it asks
      // nothing more (it may still be writing its object); its exit status
      // says how the compile ended, not this.
      if (e != EPIPE && peer_alive()) error = std::string("cannot answer the compiler: ") + strerror(e);
      return stats;
    }
    ++stats.decisions;
  }
}

std::string compiler_failure_line(const std::string& output) {
  auto lines = common::split(output, '\n');
  for (const auto& line : lines)
    if (auto at = line.find("LLVM ERROR: "); at != std::string::npos) return common::trim(line.substr(at));
  // A diagnostic is followed by its source line and a caret line.
  for (const auto& line : lines)
    if (line.rfind("error: ", 0) == 0 || line.find(": error: ") != std::string::npos) return common::trim(line);
  // LLVM's option parser names the bad option, then may add a guess ("Did
  // you mean …?") as the last line: a recipe's bad compile line.
  for (const auto& line : lines)
    for (const char* what : {": Unknown command line argument '", ": for the -", ": Not enough positional command line",
                             ": Too many positional arguments"})
      if (line.find(what) != std::string::npos) return common::trim(line);
  for (const auto& line : lines)
    if (line.find("Assertion `") != std::string::npos) return common::trim(line);
  // A crash ends in LLVM's stack dump, whose last line is a frame's address.
  // The message is the last line before the dump; without one (an abort()),
  // what the compiler was doing: the dump's last pass-stack line
  // ("1.\tRunning pass 'X' on function '@f'").
  // Frames follow the pass stack, symbolized ("#3 0x… f()") or not
  // ("3  dwcc 0x… + 57"): only "N.<tab>…" lines are the pass stack.
  std::string message, doing;
  bool in_dump = false;
  for (const auto& raw : lines) {
    auto line = std::string(common::trim(raw));
    if (line.empty() || line.rfind("PLEASE submit a bug report", 0) == 0) continue;
    if (line.rfind("Stack dump", 0) == 0) {  // "Stack dump:", "Stack dump without symbol names …"
      in_dump = true;
      continue;
    }
    if (!in_dump) {
      bool aside = line.find("warning: ") != std::string::npos || line.find("note: ") != std::string::npos ||
                   line.find("remark: ") != std::string::npos;
      if (!aside) message = line;
      continue;
    }
    std::size_t digits = 0;
    while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
    bool pass_entry = digits > 0 && digits < line.size() && line[digits] == '.';
    if (pass_entry && line.find("Program arguments:") == std::string::npos) doing = line;
  }
  return message.empty() ? doing : message;
}

std::string ChannelOutcome::describe() const {
  if (!error.empty()) return error;
  if (process.timed_out) return "compiler " + process.describe();
  if (!process.ok()) {
    auto msg = compiler_failure_line(process.output);
    return "compiler " + process.describe() + (msg.empty() ? "" : ": " + msg);
  }
  return "";
}

ChannelOutcome compile_with_channel(const common::ProcessSpec& compiler, const fs::path& base, Runner& runner,
                                    std::chrono::milliseconds timeout) {
  ChannelOutcome out;
  auto fifos = ChannelFifos::create(base);
  if (!fifos) {
    // A file system without FIFOs, a full disk, a path in the way: every
    // compile on this machine fails so, whatever the check-in or the policy.
    out.error = fifos.error().message;
    out.failure = CompileFailure::Machine;
    return out;
  }
  auto deadline = Clock::now() + timeout;
  auto spec = compiler;
  spec.timeout = timeout;
  auto child = common::Child::start(spec);
  if (!child) {
    out.error = child.error().message;
    out.failure = CompileFailure::NotStarted;
    return out;
  }
  std::function<bool()> alive = [&] { return !child->try_wait().has_value(); };
  out.session = serve_session(*fifos, runner, deadline, alive, out.error);
  if (!out.error.empty() || Clock::now() >= deadline) {
    out.process = child->kill_group();  // a hung or confused compiler is stopped, not waited for
    out.process.timed_out = Clock::now() >= deadline;
    if (out.process.timed_out && out.error.empty()) out.error = "compiler timed out";
  } else {
    out.process = child->wait();
  }
  if (out.process.timed_out) out.failure = CompileFailure::TimedOut;
  else if (out.session.refused || out.session.malformed) out.failure = CompileFailure::Refused;
  else if (out.session.host_failed)
    out.failure = CompileFailure::Machine;
  else if (!out.error.empty()) out.failure = CompileFailure::Channel;
  else if (!out.process.ok())
    out.failure = failure_of(out.process.output);
  return out;
}

}  // namespace policy
