#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

namespace common {
namespace fs = std::filesystem;

namespace {

/// Opens a new scratch file beside `path`; O_EXCL so two writers never share one.
int open_scratch(const fs::path& path, std::string& scratch) {
  static std::atomic<unsigned> counter{0};
  static thread_local std::mt19937 rng{std::random_device{}()};
  for (int attempt = 0; attempt < 100; ++attempt) {
    scratch = path.string() + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" +
              std::to_string(rng() % 1000000);
    int fd = open(scratch.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

Status write_file_atomically(const fs::path& path, std::string_view bytes) {
  auto fail = [&](const std::string& scratch, int e) -> Status {
    if (!scratch.empty()) unlink(scratch.c_str());
    return Error{"cannot write " + path.string() + ": " + std::strerror(e)};
  };
  std::string scratch;
  int fd = open_scratch(path, scratch);
  if (fd < 0) return fail("", errno);
  bool ok = write_all(fd, bytes) && fsync(fd) == 0;
  int e = errno;
  if (close(fd) != 0 && ok) {  // NFS and some others report a failed write only here
    ok = false;
    e = errno;
  }
  if (!ok) return fail(scratch, e);
  if (rename(scratch.c_str(), path.c_str()) != 0) return fail(scratch, errno);
  // The rename itself is durable only once the directory is.
  auto dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    int r = fsync(dir_fd);
    e = errno;
    close(dir_fd);
    if (r != 0 && e != EINVAL) return Error{"cannot write " + path.string() + ": " + std::strerror(e)};
  }
  return Ok{};
}

Status sync_file(const std::filesystem::path& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{"cannot open " + path.string() + ": " + std::strerror(errno), true};
  int rc = fsync(fd);
  int e = errno;
  close(fd);
  if (rc != 0) return Error{"cannot flush " + path.string() + " to disk: " + std::strerror(e), true};
  return Ok{};
}

}  // namespace common
