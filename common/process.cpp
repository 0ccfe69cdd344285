#include "common/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "common/text.h"

extern char** environ;

namespace common {

namespace {

// The process groups of running children, for a signal handler: fixed
// slots of atomics, since a handler may not lock or allocate.
constexpr int kMaxGroups = 1024;
std::atomic<pid_t> g_groups[kMaxGroups];

void register_group(pid_t pgid) {
  for (auto& g : g_groups) {
    pid_t free = 0;
    if (g.compare_exchange_strong(free, pgid)) return;
  }
}

void unregister_group(pid_t pgid) {
  for (auto& g : g_groups) {
    pid_t mine = pgid;
    if (g.compare_exchange_strong(mine, 0)) return;
  }
}

// What the handler execs instead of dying (exec_after_signals): made
// beforehand, since a handler may not allocate. The last word of the argv
// is g_signal_text, which the handler fills in.
std::atomic<char**> g_exec_argv{nullptr};
std::atomic<char**> g_exec_env{nullptr};
char g_signal_text[4];

/// driftwatch's own session, read when the handler is installed: getsid is
/// not on the list of calls a signal handler may make.
std::atomic<pid_t> g_own_session{0};

/// The field after the command's closing parenthesis in a /proc/PID/stat
/// line: 1 the state, 2 the parent, 3 the group, 4 the session; 0 if
/// unreadable. From the last ')', as a command name may hold one.
pid_t stat_field(const char* text, long n, int wanted) {
  long at = n - 1;
  while (at >= 0 && text[at] != ')') --at;
  if (at < 0) return 0;
  int field = 0;
  pid_t value = 0;
  for (long i = at + 1; i < n; ++i) {
    if (text[i] == ' ' || text[i] == '\n') {
      if (field == wanted) return value;
      ++field;
      value = 0;
    } else if (field == wanted && text[i] >= '0' && text[i] <= '9') {
      value = value * 10 + (text[i] - '0');
    }
  }
  return 0;
}

/// Reads /proc/PID/stat into `buffer` (the path written by hand): its
/// length, or 0.
long read_stat(pid_t pid, char* buffer, long size) {
  char path[32];
  char digits[16];
  int k = 0;
  for (pid_t v = pid; v > 0; v /= 10) digits[k++] = static_cast<char>('0' + v % 10);
  int len = 0;
  for (const char* s = "/proc/"; *s;) path[len++] = *s++;
  while (k > 0) path[len++] = digits[--k];
  for (const char* s = "/stat"; *s;) path[len++] = *s++;
  path[len] = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  long got = read(fd, buffer, size);
  close(fd);
  return got > 0 ? got : 0;
}

/// The sessions our live children lead, into `ours`: read before anything
/// is killed, as another thread waiting on a child reaps it once it dies,
/// and its /proc entry goes with it.
int child_sessions(pid_t* ours) {
  static char line[1024];
  int count = 0;
  for (auto& g : g_groups)
    if (pid_t p = g.load(); p > 1 && p != g_own_session.load()) {
      long n = read_stat(p, line, sizeof line);
      if (n > 0 && stat_field(line, n, 2) == getpid() && stat_field(line, n, 4) == p) ours[count++] = p;
    }
  return count;
}

/// SIGKILLs every process of the sessions our own-session children lead
/// (a ninja's compiles each run in a process group of their own, which
/// killing ninja's group does not reach: they would live on, writing into
/// a work tree the next job builds in). For a signal handler: raw system
/// calls into static buffers, no allocation; one handler at a time (the
/// caller's guard). A session counts only while its leader is still our
/// child (child_sessions): a pid reused since is someone else's. A few
/// passes, as a member may fork between them (ccache starting the compiler).
void kill_sessions(const pid_t* ours, int count) {
  alignas(struct dirent64) static char entries[16384];
  static char line[1024];
  if (count == 0) return;
  for (int pass = 0; pass < 3; ++pass) {
    int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return;
    for (;;) {
      long n = syscall(SYS_getdents64, dir, entries, sizeof entries);
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        auto* e = reinterpret_cast<struct dirent64*>(entries + off);
        if (e->d_reclen == 0) break;
        off += e->d_reclen;
        pid_t pid = 0;
        const char* c = e->d_name;
        for (; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
        if (*c || pid <= 1 || pid == getpid()) continue;
        long got = read_stat(pid, line, sizeof line);
        if (got == 0) continue;
        pid_t sid = stat_field(line, got, 4);
        for (int i = 0; i < count; ++i)
          if (ours[i] == sid) {
            kill(pid, SIGKILL);
            break;
          }
      }
    }
    close(dir);
  }
}

extern "C" void kill_groups_and_die(int sig) {
  // One handler at a time in the whole process: sa_mask blocks the others
  // only in the thread that took the first (a worker's lease thread, a pool
  // of compiles may take a second). The first ends every thread (exec or
  // death); a second waits for it.
  static std::atomic<bool> busy{false};
  if (busy.exchange(true))
    for (;;) pause();
  static pid_t sessions[kMaxGroups];
  int count = child_sessions(sessions);
  for (auto& g : g_groups)
    if (pid_t p = g.load(); p > 0) kill(-p, SIGKILL);
  kill_sessions(sessions, count);
  if (char** argv = g_exec_argv.load(); argv && sig > 0 && sig < 100) {
    g_signal_text[0] = static_cast<char>('0' + sig / 10);
    g_signal_text[1] = static_cast<char>('0' + sig % 10);
    g_signal_text[2] = 0;
    execve(argv[0], argv, g_exec_env.load());  // returns only when it failed
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

void exec_after_signals(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  // Kept for the life of the process: the handler may run at any moment.
  auto words = [](const std::vector<std::string>& from, bool signal_slot) {
    auto** out = new char*[from.size() + 2]();
    std::size_t i = 0;
    for (const auto& w : from) out[i++] = strdup(w.c_str());
    if (signal_slot) out[i++] = g_signal_text;
    return out;
  };
  g_exec_env.store(words(env, false));
  g_exec_argv.store(words(argv, true));
}

void kill_children_on_signals() {
  g_own_session.store(getsid(0));
  struct sigaction sa {};
  sa.sa_handler = kill_groups_and_die;
  sigemptyset(&sa.sa_mask);
  // One handler at a time: two signals at once (SIGTERM and SIGHUP from a
  // stopping service) must not both write the signal's number for the exec.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, sig);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}
namespace {

/// libpq reads PG* (PGPASSWORD, PGHOST, …).
bool is_libpq_variable(std::string_view name) { return name.starts_with("PG"); }

/// The database's address and password are driftwatch's alone: recipe shells,
/// package builds and compilers never need them, and their logs and crash
/// reports must not carry them.
bool withheld_from_children(const std::string& name) { return name == "DRIFTWATCH_DB" || is_libpq_variable(name); }

std::vector<std::string> merged_environment(const ProcessSpec& spec) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos && !withheld_from_children(kv.substr(0, eq))) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : spec.env) env[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

[[noreturn]] void child_exec(const ProcessSpec& spec, int out_fd, int err_pipe, int go_pipe,
                             std::vector<std::string>& env, pid_t parent) {
  if (!spec.own_session || setsid() < 0) setpgid(0, 0);
  // Our children live in their own process groups, so a SIGKILLed driftwatch
  // would leave them running (a ninja still writing into a work tree that the
  // rerun builds in). Die with the thread that started us instead.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);
  // Run nothing until the parent has registered our group with the signal
  // handler: a Ctrl-C before that would kill only us (PDEATHSIG), not a
  // `cmake` that `sh -c` had already started, which would live on.
  char go = 0;
  if (read(go_pipe, &go, 1) != 1) _exit(127);
  // An ignored signal stays ignored across exec: the ML channel ignores
  // SIGPIPE in this process, and a build step's `git log | head -1` (or a
  // compiler writing to a closed pipe) must see it as it would from a shell.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(SIGPIPE, &dfl, nullptr);
  int null_fd = open(spec.stdin_file ? spec.stdin_file->c_str() : "/dev/null", O_RDONLY);
  if (null_fd >= 0) dup2(null_fd, 0);
  if (out_fd >= 0) {
    dup2(out_fd, 1);
    dup2(out_fd, 2);
  }
  if (spec.cwd && chdir(spec.cwd->c_str()) != 0) {
    int e = errno;
    (void)!write(err_pipe, &e, sizeof e);
    _exit(127);
  }
  std::vector<char*> argv, envp;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  execvpe(argv[0], argv.data(), envp.data());
  int e = errno;
  (void)!write(err_pipe, &e, sizeof e);
  _exit(127);
}

}  // namespace

namespace {
thread_local const std::atomic<bool>* stop_flag = nullptr;
}  // namespace

StopScope::StopScope(const std::atomic<bool>* stop) : previous_(stop_flag) { stop_flag = stop; }
StopScope::~StopScope() { stop_flag = previous_; }
const std::atomic<bool>* StopScope::current() { return stop_flag; }
bool StopScope::stopped() { return stop_flag && stop_flag->load(); }

std::string ProcessResult::describe() const {
  if (stopped) return "stopped: the work it ran for was called off";
  if (timed_out) return "timed out after " + format_seconds(seconds);
  if (signal != 0) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit status " + std::to_string(exit_code);
}

Result<Child> Child::start(const ProcessSpec& spec) {
  if (spec.argv.empty()) return Error{"no command to run"};
  int out_fd = -1, read_fd = -1;
  if (spec.log_file) {
    out_fd = open(spec.log_file->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out_fd < 0) return Error{"cannot open log " + spec.log_file->string() + ": " + strerror(errno)};
  } else {
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + strerror(errno)};
    read_fd = p[0];
    out_fd = p[1];
  }
  int err_pipe[2], go_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    Error e{std::string("pipe: ") + strerror(errno)};
    for (int fd : {read_fd, out_fd})
      if (fd >= 0) close(fd);
    return e;
  }
  if (pipe2(go_pipe, O_CLOEXEC) != 0) {
    Error e{std::string("pipe: ") + strerror(errno)};
    for (int fd : {err_pipe[0], err_pipe[1], read_fd, out_fd})
      if (fd >= 0) close(fd);
    return e;
  }
  auto env = merged_environment(spec);

  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    // A fork refused under memory pressure is retried: each try must give
    // its descriptors back, or a long-running worker runs out of them.
    Error e{std::string("fork: ") + strerror(errno)};
    for (int fd : {err_pipe[0], err_pipe[1], go_pipe[0], go_pipe[1], read_fd, out_fd})
      if (fd >= 0) close(fd);
    return e;
  }
  if (pid == 0) child_exec(spec, out_fd, err_pipe[1], go_pipe[0], env, parent);

  // Also done in the child; whichever runs first wins the race. Not for a
  // session: a group leader could no longer make one (setsid fails).
  if (!spec.own_session) setpgid(pid, pid);
  register_group(pid);
  close(go_pipe[0]);
  (void)!write(go_pipe[1], "g", 1);
  close(go_pipe[1]);
  close(out_fd);
  close(err_pipe[1]);
  int child_errno = 0;
  ssize_t n = read(err_pipe[0], &child_errno, sizeof child_errno);
  close(err_pipe[0]);
  if (n == sizeof child_errno) {
    unregister_group(pid);
    waitpid(pid, nullptr, 0);
    if (read_fd >= 0) close(read_fd);
    std::string what = spec.cwd && child_errno == ENOENT && access(spec.cwd->c_str(), F_OK) != 0
                           ? "working directory " + spec.cwd->string() + " does not exist"
                           : std::string(strerror(child_errno));
    return Error{"cannot run " + spec.argv[0] + ": " + what};
  }
  Child c;
  c.pid_ = pid;
  c.out_fd_ = read_fd;
  c.started_ = std::chrono::steady_clock::now();
  c.timeout_ = spec.timeout;
  c.own_session_ = spec.own_session;
  c.pid_fd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));  // -1 on old kernels: we poll instead
  if (read_fd >= 0) fcntl(read_fd, F_SETFL, O_NONBLOCK);
  return c;
}

Child::Child(Child&& o) noexcept { *this = std::move(o); }

Child& Child::operator=(Child&& o) noexcept {
  std::swap(pid_, o.pid_);
  std::swap(out_fd_, o.out_fd_);
  std::swap(pid_fd_, o.pid_fd_);
  started_ = o.started_;
  timeout_ = o.timeout_;
  output_ = std::move(o.output_);
  output_left_out_ = o.output_left_out_;
  done_ = std::move(o.done_);
  std::swap(own_session_, o.own_session_);
  return *this;
}

Child::~Child() {
  if (pid_ > 0 && !done_) kill_group();
  if (out_fd_ >= 0) close(out_fd_);
  if (pid_fd_ >= 0) close(pid_fd_);
}

// A compiler that prints without end (an assertion in a loop, -debug on its
// command line) must not take the sweep's memory with it: the first and the
// last lines tell what happened (the command and its progress; the error,
// the stack dump), so the middle is left out beyond these sizes.
constexpr std::size_t kOutputHead = 1 << 20, kOutputTail = 4 << 20;

void Child::leave_out_middle() {
  if (output_.size() <= kOutputHead + kOutputTail) return;
  std::size_t drop = output_.size() - kOutputHead - kOutputTail;
  output_.erase(kOutputHead, drop);
  output_left_out_ += drop;
}

void Child::keep_output(std::string_view bytes) {
  output_.append(bytes);
  // Cut in steps of a tail's size, not on every read.
  if (output_.size() > kOutputHead + 2 * kOutputTail) leave_out_middle();
}

void Child::drain_output(int timeout_ms) {
  pollfd fds[2];
  int n = 0;
  if (out_fd_ >= 0) fds[n++] = {out_fd_, POLLIN, 0};
  if (pid_fd_ >= 0) fds[n++] = {pid_fd_, POLLIN, 0};
  if (n == 0) {
    if (timeout_ms > 0) usleep(std::min(timeout_ms, 2) * 1000);
    return;
  }
  if (poll(fds, n, timeout_ms) <= 0 || out_fd_ < 0 || !(fds[0].revents & (POLLIN | POLLHUP))) return;
  char buf[65536];
  for (;;) {
    ssize_t n = read(out_fd_, buf, sizeof buf);
    if (n > 0) {
      keep_output(std::string_view(buf, static_cast<std::size_t>(n)));
      continue;
    }
    if (n == 0) {  // every writer closed: nothing more will come
      close(out_fd_);
      out_fd_ = -1;
    }
    return;
  }
}

ProcessResult Child::finish(int status) {
  unregister_group(pid_);
  drain_output(0);
  ProcessResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  } else {
    r.exit_code = WEXITSTATUS(status);
  }
  leave_out_middle();
  if (output_left_out_ > 0)
    output_.insert(kOutputHead, "\n[driftwatch: " + std::to_string(output_left_out_) + " bytes of output left out]\n");
  r.output = std::move(output_);
  done_ = r;
  return r;
}

std::optional<ProcessResult> Child::try_wait() {
  if (done_) return done_;
  drain_output(0);
  int status = 0;
  pid_t w = waitpid(pid_, &status, WNOHANG);
  if (w == pid_) return finish(status);
  if (StopScope::stopped()) {
    auto r = kill_group();
    r.stopped = true;
    done_ = r;
    return r;
  }
  return std::nullopt;
}

ProcessResult Child::wait() {
  for (;;) {
    if (auto r = try_wait()) return *r;
    if (timeout_ && std::chrono::steady_clock::now() - started_ > *timeout_) {
      auto r = kill_group();
      r.timed_out = true;
      done_ = r;
      return r;
    }
    drain_output(20);
  }
}

ProcessResult Child::kill_group() {
  if (done_) return *done_;
  kill(-pid_, SIGTERM);
  int status = 0;
  bool exited = false;
  for (int i = 0; i < 100 && !exited; ++i) {  // up to 2 s for a clean exit
    exited = waitpid(pid_, &status, WNOHANG) == pid_;
    if (!exited) drain_output(20);
  }
  kill(-pid_, SIGKILL);  // grandchildren that ignored SIGTERM
  if (!exited) waitpid(pid_, &status, 0);
  // Those in process groups of their own (a ninja's commands), which a
  // killed ninja could not stop.
  if (own_session_) kill_session(pid_);
  return finish(status);
}

Result<ProcessResult> run_process(const ProcessSpec& spec) {
  auto child = Child::start(spec);
  if (!child) return child.error();
  return child->wait();
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

std::string login_name() {
  if (const char* user = std::getenv("USER"); user && *user) return user;
  if (const passwd* pw = getpwuid(geteuid()); pw && pw->pw_name) return pw->pw_name;
  return "unknown";
}

std::string pid_namespace() {
  static const std::string space = [] {
    std::error_code ec;
    auto link = std::filesystem::read_symlink("/proc/self/ns/pid", ec).string();  // "pid:[4026531836]"
    auto open = link.find('['), close = link.find(']');
    if (ec || open == std::string::npos || close == std::string::npos) return std::string();
    auto ns = link.substr(open + 1, close - open - 1);
    // Every machine's initial namespace has the same number: two hosts of
    // one name (cloned VMs) took each other's live workers for dead. Their
    // boot ids differ.
    std::ifstream boot("/proc/sys/kernel/random/boot_id");
    std::string id;
    std::getline(boot, id);
    id.erase(std::remove(id.begin(), id.end(), '-'), id.end());
    return id.size() >= 8 ? ns + "." + id.substr(0, 8) : ns;
  }();
  return space;
}

bool process_gone_here(const std::string& host, const std::string& pid_ns, long pid) {
  if (host != host_name() || pid_ns != pid_namespace() || pid <= 0 || pid == getpid()) return false;
  return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

std::vector<std::pair<std::string, std::string>> libpq_environment() {
  std::vector<std::pair<std::string, std::string>> out;
  for (char** e = environ; *e; ++e) {
    std::string_view kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string_view::npos && is_libpq_variable(kv.substr(0, eq)))
      out.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return out;
}

namespace {

/// This machine's processes, by /proc's numeric entries (those we may see).
std::vector<long> running_pids() {
  namespace fs = std::filesystem;
  std::vector<long> out;
  std::error_code ec;
  for (fs::directory_iterator proc("/proc", ec), end; !ec && proc != end; proc.increment(ec)) {
    const auto name = proc->path().filename().string();
    if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
      out.push_back(std::stol(name));
  }
  return out;
}

}  // namespace

std::vector<long> processes_holding(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::vector<long> holders;
  // By the file itself (device and inode), not its name: /proc names the
  // path the kernel resolved, which differs under a symlinked directory.
  struct stat target;
  if (stat(path.c_str(), &target) != 0) return holders;
  for (long pid : running_pids()) {
    if (pid == getpid()) continue;
    std::error_code fd_ec;  // a process that exits while it is read, or one we may not read, is skipped
    auto fds = fs::path("/proc") / std::to_string(pid) / "fd";
    for (fs::directory_iterator fd(fds, fd_ec), fd_end; !fd_ec && fd != fd_end; fd.increment(fd_ec)) {
      struct stat held;
      if (stat(fd->path().c_str(), &held) == 0 && held.st_dev == target.st_dev && held.st_ino == target.st_ino) {
        holders.push_back(pid);
        break;
      }
    }
  }
  return holders;
}

namespace {

/// Whether `words` (a command line, NUL-separated) names `spelled` or a
/// path inside it at `at`: what follows is its end, a '/' or the word's end.
bool path_ends_at(const std::string& words, std::size_t end) {
  return end == words.size() || words[end] == '/' || words[end] == '\0';
}

}  // namespace

std::vector<long> processes_naming(const std::filesystem::path& dir) {
  std::vector<long> out;
  auto norm = dir.lexically_normal();
  auto base = norm.string();
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  if (base.size() <= 1) return out;  // "/" would name every process
  // Another spelling of the same directory (a data directory reached through
  // a symlink, or by another mount of it) ends with the same last two names:
  // the candidates, each resolved to compare with the directory's own real path.
  norm = std::filesystem::path(base);
  auto tail = "/" + norm.parent_path().filename().string() + "/" + norm.filename().string();
  std::error_code ec;
  auto real = std::filesystem::weakly_canonical(norm, ec);
  if (ec) real.clear();
  auto names = [&](const std::string& words) {
    // NUL-separated words; a path may also stand inside one ("-o=<dir>/x").
    for (auto at = words.find(base); at != std::string::npos; at = words.find(base, at + 1))
      if (path_ends_at(words, at + base.size())) return true;
    if (real.empty()) return false;
    for (auto at = words.find(tail); at != std::string::npos; at = words.find(tail, at + 1)) {
      auto end = at + tail.size();
      if (!path_ends_at(words, end)) continue;
      // Every absolute path in the word that ends here: "-I/a/b" holds "/a/b".
      auto word = words.rfind('\0', at);
      word = word == std::string::npos ? 0 : word + 1;
      for (auto s = words.find('/', word); s != std::string::npos && s <= at; s = words.find('/', s + 1)) {
        auto spelled = std::filesystem::weakly_canonical(words.substr(s, end - s), ec);
        if (!ec && spelled == real) return true;
      }
    }
    return false;
  };
  for (long pid : running_pids())
    if (pid != getpid() && names(proc_file(pid, "cmdline"))) out.push_back(pid);
  return out;
}

std::string proc_file(long pid, const char* name) {
  const auto path = "/proc/" + std::to_string(pid) + "/" + name;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string out;
  char buf[4096];
  for (;;) {
    auto n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) out.clear();  // gone midway: what was read is not the whole file
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

std::vector<pid_t> session_members(pid_t sid) {
  std::vector<pid_t> out;
  for (long pid : running_pids()) {
    const auto stat = proc_file(pid, "stat");
    auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    char state = 0;
    long ppid = 0, group = 0, session = 0;
    // A zombie is dead already, waiting for whoever adopted it to reap it.
    if (fields >> state >> ppid >> group >> session && session == sid && state != 'Z')
      out.push_back(static_cast<pid_t>(pid));
  }
  return out;
}

int kill_session(pid_t sid) {
  // Never our own (a recorded id that driftwatch's session reuses).
  if (sid <= 1 || sid == getsid(0)) return 0;
  std::set<pid_t> killed;
  // Each look kills what it finds: a member may fork after the last one
  // (ccache starting the compiler, the driver starting ld).
  for (int i = 0; i < 100; ++i) {
    auto members = session_members(sid);
    if (members.empty()) break;
    for (auto p : members)
      if (p != getpid()) {
        kill(p, SIGKILL);
        killed.insert(p);
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return static_cast<int>(killed.size());
}

}  // namespace common
