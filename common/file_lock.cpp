#include "common/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace common {
namespace fs = std::filesystem;

common::Result<FileLock> FileLock::acquire(const fs::path& file) {
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  int fd = open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Error{"cannot open lock " + file.string() + ": " + std::strerror(errno)};
  while (flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    close(fd);
    return Error{"cannot lock " + file.string() + ": " + std::strerror(e)};
  }
  return FileLock(fd);
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace common
