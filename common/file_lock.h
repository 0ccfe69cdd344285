#pragma once
// Cross-process mutual exclusion on a lock file: builds in one work tree,
// starts of one embedded cluster, builds of one suite.
#include <filesystem>

#include "common/result.h"

namespace common {

/// An exclusive flock(2) on a lock file, held until destruction: two processes doing
/// the same work wait for each other instead of clashing. Creates the parent directory.
class FileLock {
 public:
  static common::Result<FileLock> acquire(const std::filesystem::path& file);
  FileLock(FileLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace common
