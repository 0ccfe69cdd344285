#include "common/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace common {
namespace fs = std::filesystem;

namespace {

/// The lock file, made with its directory if need be.
common::Result<int> open_lock_file(const fs::path& file) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  int fd = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{"cannot open lock " + file.string() + ": " + std::strerror(errno)};
  return fd;
}

}  // namespace

common::Result<FileLock> FileLock::acquire(const fs::path& file, LockMode mode, const std::function<void()>& on_wait) {
  auto opened = open_lock_file(file);
  if (!opened) return opened.error();
  int fd = *opened;
  int op = mode == LockMode::Shared ? LOCK_SH : LOCK_EX;
  if (on_wait && flock(fd, op | LOCK_NB) == 0) return FileLock(fd);
  if (on_wait && errno == EWOULDBLOCK) on_wait();
  while (flock(fd, op) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    close(fd);
    return Error{"cannot lock " + file.string() + ": " + std::strerror(e)};
  }
  return FileLock(fd);
}

common::Result<std::optional<FileLock>> FileLock::try_acquire(const fs::path& file) {
  auto opened = open_lock_file(file);
  if (!opened) return opened.error();
  int fd = *opened;
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int e = errno;
    if (e == EINTR) continue;
    close(fd);
    if (e == EWOULDBLOCK) return std::optional<FileLock>();
    return Error{"cannot lock " + file.string() + ": " + std::strerror(e)};
  }
  return std::optional<FileLock>(FileLock(fd));
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace common
