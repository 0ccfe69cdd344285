#include "evaluator/files.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/atomic_file.h"
#include "common/file_lock.h"

namespace evaluator {

using common::Error;
namespace fs = std::filesystem;

common::Status write_file(const fs::path& path, std::string_view bytes) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  return common::write_file_atomically(path, bytes);
}

namespace {

constexpr std::size_t kUniqueSuffix = 6;  // mkdtemp's XXXXXX

/// Leftovers of an interrupted build of `stem` (the caller holds its lock).
/// An old directory moved aside by a commit that was interrupted before the
/// new one took its place is the only copy left: it is put back.
void clear_leftovers_of(const fs::path& parent, const std::string& stem) {
  const std::string tmp = ".tmp-" + stem + "-", old = ".old-" + stem + "-" + tmp;
  std::error_code ec;
  std::vector<fs::path> leftovers;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    auto name = e.path().filename().string();
    if ((name.starts_with(tmp) && name.size() == tmp.size() + kUniqueSuffix) ||
        (name.starts_with(old) && name.size() == old.size() + kUniqueSuffix))
      leftovers.push_back(e.path());
  }
  for (const auto& path : leftovers) {
    if (path.filename().string().starts_with(old)) {
      // Removed only beside a whole suite of that name: a put-back that
      // failed (EIO, EBUSY) leaves the only copy where it was.
      if (!fs::exists(parent / stem, ec)) {
        std::error_code rename_ec;
        fs::rename(path, parent / stem, rename_ec);
        continue;
      }
    }
    fs::remove_all(path, ec);
  }
}

/// A name that stays inside its directory, as a suite's must ("..", "a/b"
/// and ".x" do not): its lock file is made beside it.
bool plain_name(const std::string& name) {
  return !name.empty() && name[0] != '.' && name.find('/') == std::string::npos;
}

}  // namespace

std::string scratch_stem(const std::string& entry) {
  // .tmp-<stem>-XXXXXX, or .old-<stem>-.tmp-<stem>-XXXXXX
  const std::string tmp = ".tmp-", old = ".old-";
  if (entry.size() <= tmp.size() + 1 + kUniqueSuffix || entry[entry.size() - kUniqueSuffix - 1] != '-') return "";
  if (entry.starts_with(tmp)) {
    auto stem = entry.substr(tmp.size(), entry.size() - tmp.size() - kUniqueSuffix - 1);
    return plain_name(stem) ? stem : "";
  }
  if (!entry.starts_with(old)) return "";
  auto rest = entry.substr(old.size(), entry.size() - old.size() - kUniqueSuffix - 1);  // <stem>-.tmp-<stem>
  if (rest.size() < tmp.size() + 3) return "";
  auto stem = rest.substr(0, (rest.size() - tmp.size() - 1) / 2);
  return rest == stem + "-" + tmp + stem && plain_name(stem) ? stem : "";
}

void clear_interrupted_scratch(const fs::path& parent, const std::function<fs::path(const std::string&)>& lock_of) {
  std::error_code ec;
  std::vector<std::string> stems;
  for (const auto& e : fs::directory_iterator(parent, ec))
    if (auto stem = scratch_stem(e.path().filename().string()); !stem.empty()) stems.push_back(stem);
  std::ranges::sort(stems);
  stems.erase(std::unique(stems.begin(), stems.end()), stems.end());
  for (const auto& stem : stems) {
    // A build of that name under way holds its lock: its scratch stays.
    auto lock = common::FileLock::try_acquire(lock_of(stem));
    if (lock && *lock) clear_leftovers_of(parent, stem);
  }
}

common::Result<ScratchDir> ScratchDir::create(const fs::path& parent, const std::string& stem) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Error{"cannot create " + parent.string() + ": " + ec.message()};
  clear_leftovers_of(parent, stem);
  std::string tmpl = (parent / (".tmp-" + stem + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data()))
    return Error{"cannot create a directory in " + parent.string() + ": " + std::strerror(errno)};
  chmod(tmpl.c_str(), 0755);
  return ScratchDir(tmpl);
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

common::Status ScratchDir::commit(const fs::path& target) {
  std::error_code ec;
  // rename(2) cannot replace a non-empty directory. Swapped in one step, a
  // reader sees the old directory or the new one, and an interruption loses
  // neither; the scratch path then holds the old one, removed below.
  if (fs::exists(target) && renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(path_, ec);
    path_.clear();
    return common::Ok{};
  }
  // A file system without the swap: move the old one aside first (create()
  // puts it back if the new one never took its place).
  fs::path old;
  if (fs::exists(target)) {
    old = target.parent_path() / (".old-" + target.filename().string() + "-" + path_.filename().string());
    fs::rename(target, old, ec);
    if (ec) return Error{"cannot replace " + target.string() + ": " + ec.message()};
  }
  fs::rename(path_, target, ec);
  if (ec) {
    auto why = ec.message();
    if (!old.empty()) fs::rename(old, target, ec);
    return Error{"cannot move " + path_.string() + " to " + target.string() + ": " + why};
  }
  path_.clear();
  if (!old.empty()) fs::remove_all(old, ec);
  return common::Ok{};
}

}  // namespace evaluator
