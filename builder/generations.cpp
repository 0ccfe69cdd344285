#include "builder/generations.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace builder {
namespace fs = std::filesystem;

namespace {

std::string generation_prefix(const fs::path& entry) { return entry.filename().string() + ".gen-"; }

int open_dir(const fs::path& dir) { return open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }

bool lock(int fd, int how) {
  while (flock(fd, how) != 0)
    if (errno != EINTR) return false;
  return true;
}

}  // namespace

std::optional<fs::path> current_generation(const fs::path& entry) {
  std::error_code ec;
  auto st = fs::symlink_status(entry, ec);
  if (ec || !fs::exists(st)) return std::nullopt;
  if (!fs::is_symlink(st)) return entry;
  auto target = fs::read_symlink(entry, ec);
  if (ec) return std::nullopt;
  return target.is_absolute() ? target : entry.parent_path() / target;
}

CachePin::~CachePin() {
  if (fd_ >= 0) close(fd_);
  if (collect_) collect_generations(entry_);
}

common::Result<std::shared_ptr<CachePin>> pin_entry(const fs::path& entry) {
  // A republish and a collection may run between resolving and locking: a
  // generation found empty after the lock was collected, so resolve again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto dir = current_generation(entry);
    if (!dir) return common::Error{"no build in the cache at " + entry.string()};
    int fd = open_dir(*dir);
    if (fd < 0) {
      if (errno == ENOENT) continue;
      return common::Error{"cannot open " + dir->string() + ": " + std::strerror(errno)};
    }
    struct stat st;
    if (lock(fd, LOCK_SH) && fstatat(fd, "result.json", &st, 0) == 0)
      return std::shared_ptr<CachePin>(new CachePin(entry, *dir, fd, true));
    close(fd);
  }
  return common::Error{"the cache entry " + entry.string() + " keeps changing"};
}

common::Result<std::shared_ptr<CachePin>> new_generation(const fs::path& entry) {
  std::string tmpl = (entry.parent_path() / generation_prefix(entry)).string() + "XXXXXX";
  std::error_code ec;
  fs::create_directories(entry.parent_path(), ec);
  if (!mkdtemp(tmpl.data()))
    return common::Error{"cannot create a directory in " + entry.parent_path().string() + ": " + std::strerror(errno)};
  chmod(tmpl.c_str(), 0755);
  int fd = open_dir(tmpl);
  if (fd < 0 || !lock(fd, LOCK_EX)) {
    int e = errno;
    if (fd >= 0) close(fd);
    fs::remove_all(tmpl, ec);
    return common::Error{"cannot lock " + tmpl + ": " + std::strerror(e)};
  }
  return std::shared_ptr<CachePin>(new CachePin(entry, tmpl, fd, false));
}

common::Status publish_generation(const fs::path& entry, const fs::path& generation) {
  auto suffix = generation.filename().string().substr(generation_prefix(entry).size());
  auto link = entry.parent_path() / (entry.filename().string() + ".link-" + suffix);
  unlink(link.c_str());
  if (symlink(generation.filename().c_str(), link.c_str()) != 0)
    return common::Error{"cannot create " + link.string() + ": " + std::strerror(errno)};
  if (rename(link.c_str(), entry.c_str()) != 0) {
    if (errno != EISDIR && errno != ENOTEMPTY && errno != EEXIST) {
      int e = errno;
      unlink(link.c_str());
      return common::Error{"cannot publish " + entry.string() + ": " + std::strerror(e)};
    }
    // An entry made before generations, a directory: swap it with the link
    // in one step, then name it like a generation so it is collected.
    auto old = entry.parent_path() / (generation_prefix(entry) + "old-" + suffix);
    if (renameat2(AT_FDCWD, link.c_str(), AT_FDCWD, entry.c_str(), RENAME_EXCHANGE) == 0) {
      rename(link.c_str(), old.c_str());
    } else if (rename(entry.c_str(), old.c_str()) != 0 || rename(link.c_str(), entry.c_str()) != 0) {
      int e = errno;
      unlink(link.c_str());
      return common::Error{"cannot publish " + entry.string() + ": " + std::strerror(e)};
    }
  }
  collect_generations(entry);
  return common::Ok{};
}

void collect_generations(const fs::path& entry) {
  std::error_code ec;
  auto prefix = generation_prefix(entry);
  for (const auto& e : fs::directory_iterator(entry.parent_path(), ec)) {
    auto name = e.path().filename().string();
    if (!name.starts_with(prefix) || !fs::is_directory(fs::symlink_status(e.path(), ec))) continue;
    if (current_generation(entry) == e.path()) continue;
    int fd = open_dir(e.path());
    if (fd < 0) continue;
    // Held by a reader or a build in progress: theirs until released.
    if (flock(fd, LOCK_EX | LOCK_NB) == 0 && current_generation(entry) != e.path()) fs::remove_all(e.path(), ec);
    close(fd);
  }
}

bool generation_in_use(const fs::path& generation) {
  int fd = open_dir(generation);
  if (fd < 0) return false;
  bool free = flock(fd, LOCK_EX | LOCK_NB) == 0;
  close(fd);  // releases the lock taken to look
  return !free;
}

common::Result<bool> remove_entry(const fs::path& entry) {
  auto gen = current_generation(entry);
  if (!gen) return false;  // removed or replaced since it was listed
  int fd = open_dir(*gen);
  if (fd < 0) return common::Error{"cannot open " + gen->string() + ": " + std::strerror(errno)};
  common::Result<bool> out = false;
  // Held by a reader or a build in progress: theirs, as collect_generations leaves it.
  if (flock(fd, LOCK_EX | LOCK_NB) == 0 && current_generation(entry) == gen) {
    std::error_code ec;
    // Unpublished first: a reader that resolves it now finds no build.
    if (*gen != entry) fs::remove(entry, ec);
    if (ec) out = common::Error{"cannot remove " + entry.string() + ": " + ec.message()};
    else if (fs::remove_all(*gen, ec); ec) out = common::Error{"cannot remove " + gen->string() + ": " + ec.message()};
    else out = true;
  }
  close(fd);
  return out;
}

BuildResult in_generation(BuildResult r, const fs::path& generation) {
  std::vector<std::pair<std::string, std::string>> moved;  // old path → new path, per artifact
  for (auto& [name, path] : r.artifacts) {
    auto to = generation / "artifacts" / path.filename();
    moved.emplace_back(path.string(), to.string());
    path = to;
  }
  // Longest first, so that a path that is a prefix of another never eats part of it.
  std::sort(moved.begin(), moved.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  const std::string marker = "/artifacts/";
  for (auto* argv : {&r.compile, &r.cc1})
    for (auto& arg : *argv) {
      // Only the path is rewritten, not the word around it: a flag such as
      // -fpass-plugin=<dir>/artifacts/p.so keeps its flag, or the compiler
      // would run without the plugin and say nothing. The path itself may
      // hold spaces, '=' or ':' (a data directory's name).
      bool replaced = false;
      for (const auto& [from, to] : moved)
        for (auto at = arg.find(from); at != std::string::npos; at = arg.find(from, at + to.size())) {
          arg.replace(at, from.size(), to);
          replaced = true;
        }
      if (replaced) continue;
      // Written under another directory than the artifacts' (an older cache
      // layout): a word that is the path of one of them, as a whole.
      auto at = arg.rfind(marker);
      if (at == std::string::npos || arg.empty() || arg[0] != '/') continue;
      auto file = arg.substr(at + marker.size());
      for (const auto& [name, path] : r.artifacts)
        if (path.filename() == file) arg = path.string();
    }
  r.log = generation / "build.log";
  return r;
}

}  // namespace builder
