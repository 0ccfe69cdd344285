#include "tracker/checkin_build.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace tracker {
namespace fs = std::filesystem;

namespace {

/// Serializes builds in one work tree across processes.
class BuildLock {
 public:
  explicit BuildLock(const fs::path& file) : fd_(open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ >= 0) flock(fd_, LOCK_EX);
  }
  ~BuildLock() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

}  // namespace

common::Result<CheckinBuild> build_checkin(const GitRepo& repo, const builder::Recipe& recipe,
                                           const CommitInfo& commit, const CheckinBuildOptions& options) {
  CheckinBuild out;
  out.commit = commit;
  auto entry = builder::cache_entry_dir(options.data_dir, recipe, commit.sha);
  if (options.rebuild) builder::forget_cached(entry);
  if (auto cached = builder::read_cached(entry)) {
    out.result = *cached;
    return out;
  }
  WorkTree tree(worktree_dir(options.data_dir, repo.location(), recipe.name));
  std::error_code ec;
  fs::create_directories(tree.dir(), ec);
  fs::create_directories(entry.parent_path(), ec);
  if (ec) return common::Error{"cannot create " + entry.parent_path().string() + ": " + ec.message()};
  BuildLock lock(tree.dir() / "build.lock");
  if (!lock.ok()) return common::Error{"work tree " + tree.dir().string() + " is not writable"};
  if (auto cached = builder::read_cached(entry)) {  // another process built it while we waited
    out.result = *cached;
    return out;
  }
  auto checkout = tree.checkout(repo, commit.sha);
  if (!checkout) return checkout.error();
  out.checkout = *checkout;
  out.result = builder::run_build(recipe, {tree.source_dir(), tree.build_dir(), options.data_dir, entry, options.jobs});
  return out;
}

}  // namespace tracker
