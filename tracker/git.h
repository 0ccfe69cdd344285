#pragma once
// A compiler's git repository, read with libgit2 (which stays inside tracker/).
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracker/commit.h"

namespace tracker {

class GitRepo {
 public:
  /// The error says when the path is not a git repository.
  static common::Result<GitRepo> open(const std::filesystem::path& path);
  GitRepo(GitRepo&&) noexcept;
  GitRepo& operator=(GitRepo&&) noexcept;
  ~GitRepo();

  /// The repository's working directory (or git dir when bare), absolute.
  const std::filesystem::path& location() const;
  /// Full sha of the commit a rev names ("main", "v1.0", "HEAD~3", a short sha).
  common::Result<std::string> resolve(const std::string& rev) const;
  common::Result<CommitInfo> commit(const std::string& rev) const;
  /// Whether the tree of the commit `rev` names holds a file at `path`
  /// ("llvm/CMakeLists.txt"): read from the object store, so a bare clone
  /// or an unchecked-out work tree answers as well.
  common::Result<bool> has_file(const std::string& rev, const std::string& path) const;
  /// Whether `ancestor` is `descendant` or reachable from it through any
  /// parents (both full shas).
  common::Result<bool> reaches(const std::string& descendant, const std::string& ancestor) const;

  /// The ref a project tracks: `branch`, or HEAD when it is empty. A detached
  /// HEAD is refused then (a bisect or a checkout of a tag in progress would
  /// silently move what is swept, decided and reported).
  common::Result<std::string> tracked(const std::string& branch) const;
  /// The remote-tracking branch a `git fetch` keeps current, for a project
  /// to follow ("origin/main"): the upstream of HEAD's branch, else what
  /// origin/HEAD names (a clone's default branch, whatever HEAD is checked
  /// out at), else origin/main or origin/master; "" when there is none.
  std::string upstream_branch() const;

  /// First-parent history ending at `to` (inclusive), oldest first, like
  /// `git log --first-parent --reverse`. It starts at `from` (inclusive) when
  /// given, which must lie on that history, and stops at the first check-in
  /// older than `since`. Tags are filled in (one that cannot be read is left
  /// out: tags() says why). A shallow clone's walk that
  /// reaches the clone's boundary is an error naming it (never a short history).
  common::Result<std::vector<CommitInfo>> first_parent_history(const std::string& to,
                                                               const std::optional<std::string>& from = {},
                                                               std::optional<std::int64_t> since = {}) const;
  /// The first commit of the first-parent history ending at `to`: what
  /// identifies the repository wherever it is checked out. "" when the walk
  /// ends at a shallow clone's edge: there is no root there. Walks the whole
  /// history: call it once.
  common::Result<std::string> root_commit(const std::string& to) const;
  /// Every tag, by the commit it names (annotated tags peeled), read once.
  /// A tag of a tree or a blob is left out; one that cannot be read is an error.
  common::Result<std::map<std::string, std::vector<std::string>>> tags() const;

  /// The first-parent history ending at `to` as far as this clone holds it:
  /// for reading series already measured (drift, report, decide), so a
  /// shallow clone ends at its boundary instead of failing every night after
  /// the sweep; nothing older could be checked out here anyway.
  common::Result<std::vector<CommitInfo>> cloned_history(const std::string& to) const;

  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  explicit GitRepo(std::unique_ptr<Impl> impl);
  common::Result<std::vector<CommitInfo>> walk(const std::string& to, const std::optional<std::string>& from,
                                               std::optional<std::int64_t> since, bool to_shallow_end) const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracker
