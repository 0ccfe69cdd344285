#pragma once
// Cross-process mutual exclusion on a lock file: builds in one work tree,
// starts of one embedded cluster, builds of one suite.
#include <filesystem>
#include <functional>
#include <optional>

#include "common/result.h"

namespace common {

enum class LockMode { Exclusive, Shared };

/// An flock(2) on a lock file, held until destruction: two processes doing
/// the same work wait for each other instead of clashing (exclusive), or
/// readers keep a writer out until they are done (shared). Creates the
/// parent directory and the file.
class FileLock {
 public:
  /// Blocks until the lock is granted; `on_wait`, if given, is called once
  /// first when someone else holds it (to say what the wait is for).
  static common::Result<FileLock> acquire(const std::filesystem::path& file, LockMode mode = LockMode::Exclusive,
                                          const std::function<void()>& on_wait = {});
  /// Exclusive without waiting: nullopt when someone else holds it.
  static common::Result<std::optional<FileLock>> try_acquire(const std::filesystem::path& file);
  FileLock(FileLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace common
