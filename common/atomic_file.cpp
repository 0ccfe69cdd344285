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

Error cannot_write(const fs::path& path, int e) {
  return Error{"cannot write " + path.string() + ": " + std::strerror(e)};
}

/// Writes and flushes `bytes` to a new scratch file beside `path`; on failure
/// removes it and names `path`.
Result<std::string> stage(const fs::path& path, std::string_view bytes) {
  std::string scratch;
  int fd = open_scratch(path, scratch);
  if (fd < 0) return cannot_write(path, errno);
  bool ok = write_all(fd, bytes) && fsync(fd) == 0;
  int e = errno;
  if (close(fd) != 0 && ok) {  // NFS and some others report a failed write only here
    ok = false;
    e = errno;
  }
  if (!ok) {
    unlink(scratch.c_str());
    return cannot_write(path, e);
  }
  return scratch;
}

/// Renames a staged scratch file over `path`, then makes the rename durable.
Status publish(const std::string& scratch, const fs::path& path) {
  if (rename(scratch.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(scratch.c_str());
    return cannot_write(path, e);
  }
  // The rename itself is durable only once the directory is.
  auto dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    int r = fsync(dir_fd);
    int e = errno;
    close(dir_fd);
    if (r != 0 && e != EINVAL) return cannot_write(path, e);
  }
  return Ok{};
}

}  // namespace

Status write_file_atomically(const fs::path& path, std::string_view bytes) {
  auto scratch = stage(path, bytes);
  if (!scratch) return scratch.error();
  return publish(*scratch, path);
}

Status write_files_atomically(const std::vector<std::pair<fs::path, std::string>>& files) {
  std::vector<std::string> staged;
  for (const auto& [path, bytes] : files) {
    auto scratch = stage(path, bytes);
    if (!scratch) {
      for (const auto& s : staged) unlink(s.c_str());
      return scratch.error();
    }
    staged.push_back(*scratch);
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto st = publish(staged[i], files[i].first);
    if (!st) {
      for (std::size_t j = i + 1; j < staged.size(); ++j) unlink(staged[j].c_str());
      if (i == 0) return st;
      return Error{st.error().message + " (after " + files[0].first.filename().string() +
                   " was replaced: the set is part new, part old)"};
    }
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
