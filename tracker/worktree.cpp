#include "tracker/worktree.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "common/atomic_file.h"
#include "common/file_lock.h"
#include "common/hash.h"
#include "common/text.h"
#include "tracker/git_impl.h"

namespace tracker {
namespace fs = std::filesystem;
using common::Error;

namespace {

/// What we know of a file we wrote: its blob and the stat that proves it is untouched.
struct Entry {
  std::string oid;
  unsigned mode = 0;
  std::int64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t inode = 0;
};
using Index = std::map<std::string, Entry>;

struct Target {
  std::string oid;
  unsigned mode;
};

bool stat_entry(const fs::path& p, Entry& e) {
  struct stat st {};
  if (lstat(p.c_str(), &st) != 0) return false;
  e.size = st.st_size;
  e.mtime_ns = std::int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  e.inode = st.st_ino;
  return true;
}

Index read_index(const fs::path& file) {
  Index idx;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    Entry e;
    std::string path;
    ls >> e.oid >> e.mode >> e.size >> e.mtime_ns >> e.inode;
    ls.get();
    std::getline(ls, path);
    if (!path.empty()) idx[path] = e;
  }
  return idx;
}

common::Status write_index(const fs::path& file, const Index& idx) {
  std::ostringstream out;
  for (const auto& [path, e] : idx)
    out << e.oid << ' ' << e.mode << ' ' << e.size << ' ' << e.mtime_ns << ' ' << e.inode << ' ' << path << '\n';
  return common::write_file_atomically(file, out.str());
}

struct WalkPayload {
  std::map<std::string, Target>* out;
  std::string refused;  ///< the first entry that must not become a path, with its directory
  std::vector<std::string> submodules;  ///< gitlinks met, by path
};

/// A tree entry name from the user's history becomes a path under src/: a
/// hostile commit must not reach outside it or into a .git directory (git
/// itself refuses these on checkout), nor break the index's one-line records.
bool safe_entry_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  if (name.find_first_of(std::string_view("/\0\n", 3)) != std::string_view::npos) return false;
  std::string lower(name);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower != ".git";
}

int collect_blob(const char* root, const git_tree_entry* entry, void* payload) {
  auto* walk = static_cast<WalkPayload*>(payload);
  std::string_view name = git_tree_entry_name(entry);
  if (!safe_entry_name(name)) {
    walk->refused = std::string(root) + std::string(name);
    return -1;  // stops the walk
  }
  auto type = git_tree_entry_type(entry);
  if (type == GIT_OBJECT_COMMIT) walk->submodules.push_back(std::string(root) + std::string(name));
  if (type != GIT_OBJECT_BLOB) return 0;  // trees are walked into; submodules are skipped
  auto* out = walk->out;
  (*out)[std::string(root) + git_tree_entry_name(entry)] = {oid_hex(*git_tree_entry_id(entry)),
                                                            static_cast<unsigned>(git_tree_entry_filemode(entry))};
  return 0;
}

/// A clone made with --filter (blob:none is common for llvm-project): it
/// lacks blobs that libgit2 cannot fetch.
bool is_partial_clone(git_repository* repo) {
  git_config* config = nullptr;
  if (git_repository_config_snapshot(&config, repo) != 0) return false;
  // remote.<name>.promisor (git 2.20 on), or extensions.partialclone (older).
  int found = git_config_foreach_match(
      config, "^(remote\\..*\\.promisor|extensions\\.partialclone)$",
      [](const git_config_entry* e, void*) { return std::strcmp(e->value, "false") != 0 ? 1 : 0; }, nullptr);
  git_config_free(config);
  return found == 1;
}

/// Writes one blob to `path` (atomically, with its mode) and returns its stat.
common::Result<Entry> materialize(git_repository* repo, const fs::path& path, const Target& t) {
  git_oid oid;
  git_oid_fromstr(&oid, t.oid.c_str());
  git_blob* blob = nullptr;
  if (git_blob_lookup(&blob, repo, &oid) != 0) {
    auto libgit2_says = git_error_text();  // before the config lookups below replace it
    if (is_partial_clone(repo))
      return Error{std::string(git_repository_workdir(repo) ? git_repository_workdir(repo) : git_repository_path(repo)) +
                   " is a partial clone (git clone --filter) that lacks " + path.filename().string() +
                   " of this check-in, and libgit2 cannot fetch it: clone without --filter"};
    return Error{libgit2_says};
  }
  BlobPtr owner(blob);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Error{"cannot create " + path.parent_path().string() + ": " + ec.message()};
  auto tmp = path.string() + ".dw-tmp";
  const char* data = static_cast<const char*>(git_blob_rawcontent(blob));
  size_t size = git_blob_rawsize(blob);
  fs::remove(tmp, ec);
  if (t.mode == GIT_FILEMODE_LINK) {
    if (symlink(std::string(data, size).c_str(), tmp.c_str()) != 0)
      return Error{"cannot create symlink " + path.string() + ": " + strerror(errno)};
  } else {
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                  t.mode == GIT_FILEMODE_BLOB_EXECUTABLE ? 0755 : 0644);
    if (fd < 0) return Error{"cannot write " + path.string() + ": " + strerror(errno)};
    size_t done = 0;
    while (done < size) {
      ssize_t n = write(fd, data + done, size - done);
      if (n <= 0) {
        close(fd);
        return Error{"cannot write " + path.string() + ": " + strerror(errno)};
      }
      done += n;
    }
    // NFS reports a write that failed (a quota reached) only here: a short
    // source file built would be a compile error recorded as the check-in's.
    if (close(fd) != 0) {
      int e = errno;
      fs::remove(tmp, ec);
      return Error{"cannot write " + path.string() + ": " + strerror(e)};
    }
  }
  if (fs::is_directory(fs::symlink_status(path))) fs::remove_all(path, ec);  // a directory became a file
  fs::rename(tmp, path, ec);
  if (ec) return Error{"cannot write " + path.string() + ": " + ec.message()};
  Entry e{t.oid, t.mode};
  stat_entry(path, e);
  return e;
}

/// The file on disk still holds blob `oid` (hashing it, as git does when stat differs).
bool content_matches(git_repository* repo, const fs::path& path, const Target& t) {
  auto st = fs::symlink_status(path);
  if (t.mode == GIT_FILEMODE_LINK) {
    if (!fs::is_symlink(st)) return false;
    auto target = fs::read_symlink(path).string();
    git_oid oid;
    git_odb_hash(&oid, target.data(), target.size(), GIT_OBJECT_BLOB);
    return oid_hex(oid) == t.oid;
  }
  if (!fs::is_regular_file(st)) return false;
  bool exec = (st.permissions() & fs::perms::owner_exec) != fs::perms::none;
  if (exec != (t.mode == GIT_FILEMODE_BLOB_EXECUTABLE)) return false;
  git_oid oid;
  if (git_odb_hashfile(&oid, path.c_str(), GIT_OBJECT_BLOB) != 0) return false;
  (void)repo;
  return oid_hex(oid) == t.oid;
}

void remove_empty_parents(fs::path p, const fs::path& stop) {
  std::error_code ec;
  for (p = p.parent_path(); p != stop && p.string().size() > stop.string().size(); p = p.parent_path())
    if (!fs::remove(p, ec)) break;  // not empty (or gone): stop climbing
}

}  // namespace

WorkTree::WorkTree(fs::path dir) : dir_(std::move(dir)) {}

std::string WorkTree::current() const {
  std::ifstream in(dir_ / "state");
  std::string word, sha;
  in >> word >> sha;
  return word == "clean" ? sha : "";
}

common::Result<CheckoutStats> WorkTree::checkout(const GitRepo& repo, const std::string& sha) {
  std::error_code ec;
  fs::create_directories(source_dir(), ec);
  if (ec || access(dir_.c_str(), W_OK) != 0)
    return Error{"work tree " + dir_.string() + " is not writable" + (ec ? ": " + ec.message() : "")};
  auto lock = common::FileLock::acquire(dir_ / "lock");
  if (!lock) return lock.error();

  auto* grepo = repo.impl().repo.get();
  git_oid oid;
  if (git_oid_fromstr(&oid, sha.c_str()) != 0) return Error{"not a full commit id: " + sha};
  git_commit* commit = nullptr;
  if (git_commit_lookup(&commit, grepo, &oid) != 0) return Error{"unknown commit " + sha + ": " + git_error_text()};
  CommitPtr commit_owner(commit);
  git_tree* tree = nullptr;
  if (git_commit_tree(&tree, commit) != 0) return Error{git_error_text()};
  TreePtr tree_owner(tree);
  std::map<std::string, Target> target;
  WalkPayload payload{&target, {}};
  if (git_tree_walk(tree, GIT_TREEWALK_PRE, collect_blob, &payload) != 0) {
    if (!payload.refused.empty())
      return Error{"commit " + sha.substr(0, 12) +
                   " has a tree entry that cannot be checked out safely: " + common::quoted(payload.refused)};
    return Error{git_error_text()};
  }

  CheckoutStats stats;
  stats.submodules = std::move(payload.submodules);
  auto was_clean = !current().empty();
  stats.repaired = !was_clean && fs::exists(dir_ / "index");
  Index index = was_clean ? read_index(dir_ / "index") : Index{};
  // Mark the tree as moving first: if we die half-way, the next run repairs it.
  if (auto s = common::write_file_atomically(dir_ / "state", "moving " + sha + "\n"); !s) return s.error();

  // Removals first, so a path that turns from file to directory (or back) is free.
  for (const auto& [path, e] : index) {
    if (target.count(path)) continue;
    fs::remove(source_dir() / path, ec);
    remove_empty_parents(source_dir() / path, source_dir());
    ++stats.removed;
  }
  // Strays: from an interrupted checkout, added by hand, or written into the
  // sources by a build step. Looked for at every move (a directory walk,
  // small next to any build): a file the check-in lacks can fail its
  // build (CMake's source-list checks), and that failure would be cached.
  {
    std::vector<fs::path> strays;
    std::error_code walk;
    // Lexically relative: a tracked symlink is the link's own path, never
    // where it points (fs::relative resolves it, and the link looked stray).
    for (auto it = fs::recursive_directory_iterator(source_dir(), walk); !walk && it != fs::recursive_directory_iterator();
         it.increment(walk)) {
      std::error_code type;
      if (it->is_directory(type) && !it->is_symlink(type)) continue;
      auto rel = it->path().lexically_relative(source_dir()).generic_string();
      if (!target.count(rel)) strays.push_back(it->path());
    }
    if (walk) return common::Error{"cannot list " + source_dir().string() + ": " + walk.message()};
    for (const auto& p : strays) {
      fs::remove(p, ec);
      remove_empty_parents(p, source_dir());
      ++stats.removed;
    }
  }
  Index next;
  for (const auto& [path, t] : target) {
    auto full = source_dir() / path;
    auto it = index.find(path);
    Entry now;
    bool exists = stat_entry(full, now);
    if (exists && it != index.end() && it->second.oid == t.oid && it->second.mode == t.mode &&
        it->second.size == now.size && it->second.mtime_ns == now.mtime_ns && it->second.inode == now.inode) {
      next[path] = it->second;
      ++stats.unchanged;
      continue;
    }
    if (exists && content_matches(grepo, full, t)) {  // same bytes, stat unknown or changed: keep the file
      now.oid = t.oid;
      now.mode = t.mode;
      next[path] = now;
      ++stats.unchanged;
      continue;
    }
    auto e = materialize(grepo, full, t);
    if (!e) return e.error();
    next[path] = *e;
    ++stats.written;
  }
  if (auto s = write_index(dir_ / "index", next); !s) return s.error();
  if (auto s = common::write_file_atomically(dir_ / "state", "clean " + sha + "\n"); !s) return s.error();
  return stats;
}

fs::path worktree_dir(const fs::path& data_dir, const fs::path& repo, const std::string& recipe_name) {
  auto key = common::sha256_hex(fs::absolute(repo).lexically_normal().string() + "\n" + recipe_name).substr(0, 12);
  return data_dir / "worktrees" / (recipe_name + "-" + key);
}

}  // namespace tracker
