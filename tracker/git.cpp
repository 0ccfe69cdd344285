#include "tracker/git.h"

#include <sys/stat.h>

#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "tracker/git_impl.h"
#include "tracker/sampling.h"

namespace tracker {
namespace fs = std::filesystem;

std::string git_error_text() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown libgit2 error";
}

void ensure_libgit2() {
  static std::once_flag once;
  std::call_once(once, [] { git_libgit2_init(); });
}

std::string oid_hex(const git_oid& oid) {
  char buf[GIT_OID_HEXSZ + 1];
  git_oid_tostr(buf, sizeof buf, &oid);
  return buf;
}

namespace {

CommitInfo info_of(const git_commit* c) {
  CommitInfo info;
  info.sha = oid_hex(*git_commit_id(c));
  for (unsigned i = 0; i < git_commit_parentcount(c); ++i) info.parents.push_back(oid_hex(*git_commit_parent_id(c, i)));
  const git_signature* a = git_commit_author(c);
  info.author = std::string(a->name ? a->name : "") + " <" + (a->email ? a->email : "") + ">";
  info.time = git_commit_time(c);
  const char* summary = git_commit_summary(const_cast<git_commit*>(c));
  info.subject = summary ? summary : "";
  return info;
}

/// commit sha → tag names, for tags that peel to a commit. A tag that names
/// a tree or a blob is no check-in's; one that names nothing (a damaged ref)
/// is an error: skipped, its check-in would silently drop out of sampling.
/// `strict`: a tag that cannot be read is an error (what samples by tags
/// needs: its check-in would be left out); else it is left out of the names
/// a walk shows, so that one damaged ref never stops a sweep that ignores tags.
common::Result<std::map<std::string, std::vector<std::string>>> tags_by_commit(git_repository* repo, bool strict) {
  std::map<std::string, std::vector<std::string>> out;
  git_strarray names{};
  if (git_tag_list(&names, repo) != 0) return common::Error{"cannot list the tags: " + git_error_text()};
  std::unique_ptr<git_strarray, decltype(&git_strarray_dispose)> owner(&names, git_strarray_dispose);
  for (size_t i = 0; i < names.count; ++i) {
    std::string name = names.strings[i], ref = "refs/tags/" + name;
    auto unreadable = [&name] { return common::Error{"cannot read tag " + name + ": " + git_error_text()}; };
    git_object* target = nullptr;
    if (git_revparse_single(&target, repo, ref.c_str()) != 0) {
      if (strict) return unreadable();
      continue;
    }
    git_object* commit = nullptr;
    int peeled = git_object_peel(&commit, target, GIT_OBJECT_COMMIT);
    git_object_free(target);
    if (peeled == GIT_ENOTFOUND && strict) return unreadable();  // an annotated tag whose object is gone
    if (peeled != 0) continue;  // a tag of a tree or a blob
    out[oid_hex(*git_object_id(commit))].push_back(names.strings[i]);
    git_object_free(commit);
  }
  return out;
}

}  // namespace

GitRepo::GitRepo(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GitRepo::GitRepo(GitRepo&&) noexcept = default;
GitRepo& GitRepo::operator=(GitRepo&&) noexcept = default;
GitRepo::~GitRepo() = default;

common::Result<GitRepo> GitRepo::open(const fs::path& path) {
  ensure_libgit2();
  if (!fs::exists(path)) return common::Error{"repository " + path.string() + " does not exist"};
  git_repository* repo = nullptr;
  // NO_SEARCH: the path itself must be the repository, not a folder inside one.
  if (int rc = git_repository_open_ext(&repo, path.c_str(), GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr); rc != 0) {
    // A repository owned by another user is refused as git refuses it
    // ("dubious ownership"); libgit2 1.5 then returns "not found" with its
    // failed safe.directory lookup as the last error, later ones GIT_EOWNER.
    const git_error* e = git_error_last();
    std::string last = e && e->message ? e->message : "";
    if (rc == GIT_EOWNER || last.find("safe.directory") != std::string::npos) {
      struct stat st {};
      auto owner = stat(path.c_str(), &st) == 0 ? " (uid " + std::to_string(st.st_uid) + ")" : std::string();
      return common::Error{path.string() + " is a git repository owned by another user" + owner +
                           ", which git refuses as dubious ownership: run as its owner, or list it in git's "
                           "safe.directory"};
    }
    std::string why = !last.empty() && rc != GIT_ENOTFOUND ? ": " + last : "";
    return common::Error{path.string() + " is not a git repository" + why};
  }
  auto impl = std::make_unique<Impl>();
  impl->repo.reset(repo);
  const char* wd = git_repository_workdir(repo);
  impl->location = fs::absolute(wd ? wd : git_repository_path(repo)).lexically_normal();
  if (impl->location.filename().empty()) impl->location = impl->location.parent_path();
  return GitRepo(std::move(impl));
}

const fs::path& GitRepo::location() const { return impl_->location; }

common::Result<std::string> GitRepo::resolve(const std::string& rev) const {
  git_object* obj = nullptr;
  int rc = rev.empty() ? GIT_ENOTFOUND : git_revparse_single(&obj, impl_->repo.get(), (rev + "^{commit}").c_str());
  // libgit2 calls a prefix shorter than 4 digits ambiguous whatever it matches.
  if (rc == GIT_EAMBIGUOUS && rev.size() < GIT_OID_MINPREFIXLEN)
    return common::Error{"unknown revision '" + rev + "' in " + impl_->location.string() +
                         " (an abbreviated id needs at least " + std::to_string(GIT_OID_MINPREFIXLEN) + " digits)"};
  if (rc == GIT_EAMBIGUOUS)
    return common::Error{"revision '" + rev + "' is ambiguous in " + impl_->location.string() +
                         ": more than one object starts so; give more digits"};
  if (rc != 0) {
    // A blob's or tree's id (copied from the wrong column) exists, but is no check-in.
    git_object* other = nullptr;
    if (!rev.empty() && git_revparse_single(&other, impl_->repo.get(), rev.c_str()) == 0) {
      ObjectPtr owner(other);
      return common::Error{"revision '" + rev + "' in " + impl_->location.string() + " is a " +
                           git_object_type2string(git_object_type(other)) + ", not a commit"};
    }
    return common::Error{"unknown revision '" + rev + "' in " + impl_->location.string()};
  }
  ObjectPtr owner(obj);
  return oid_hex(*git_object_id(obj));
}

namespace {
/// The commit a full sha names, owned.
common::Result<CommitPtr> lookup_commit(git_repository* repo, const std::string& sha) {
  git_oid oid;
  git_oid_fromstr(&oid, sha.c_str());
  git_commit* c = nullptr;
  if (git_commit_lookup(&c, repo, &oid) != 0) return common::Error{git_error_text()};
  return CommitPtr(c);
}
}  // namespace

common::Result<CommitInfo> GitRepo::commit(const std::string& rev) const {
  auto sha = resolve(rev);
  if (!sha) return sha.error();
  auto c = lookup_commit(impl_->repo.get(), *sha);
  if (!c) return c.error();
  auto info = info_of(c->get());
  auto tags = tags_by_commit(impl_->repo.get(), false);
  if (!tags) return tags.error();
  if (auto it = tags->find(info.sha); it != tags->end()) info.tags = it->second;
  return info;
}

common::Result<bool> GitRepo::reaches(const std::string& descendant, const std::string& ancestor) const {
  if (descendant == ancestor) return true;
  git_oid d, a;
  if (git_oid_fromstr(&d, descendant.c_str()) != 0 || git_oid_fromstr(&a, ancestor.c_str()) != 0)
    return common::Error{"not a full sha: " + descendant + " or " + ancestor};
  int r = git_graph_descendant_of(impl_->repo.get(), &d, &a);
  if (r < 0) return common::Error{git_error_text()};
  return r == 1;
}

common::Result<bool> GitRepo::has_file(const std::string& rev, const std::string& path) const {
  auto sha = resolve(rev);
  if (!sha) return sha.error();
  auto c = lookup_commit(impl_->repo.get(), *sha);
  if (!c) return c.error();
  git_tree* t = nullptr;
  if (git_commit_tree(&t, c->get()) != 0) return common::Error{git_error_text()};
  TreePtr tree(t);
  git_tree_entry* e = nullptr;
  if (git_tree_entry_bypath(&e, t, path.c_str()) != 0) return false;
  bool blob = git_tree_entry_type(e) == GIT_OBJECT_BLOB;
  git_tree_entry_free(e);
  return blob;
}

common::Result<std::map<std::string, std::vector<std::string>>> GitRepo::tags() const {
  return tags_by_commit(impl_->repo.get(), true);
}

common::Result<std::string> GitRepo::tracked(const std::string& branch) const {
  if (!branch.empty()) {
    // A branch first, local then remote-tracking: revparse would take a tag
    // of the same name before the branch (git only warns), and a sweep would
    // then track a check-in that never moves.
    git_oid oid;
    for (const char* prefix : {"refs/heads/", "refs/remotes/"})
      if (git_reference_name_to_id(&oid, impl_->repo.get(), (prefix + branch).c_str()) == 0) return prefix + branch;
    return branch;
  }
  if (git_repository_head_detached(impl_->repo.get()) == 1)
    return common::Error{"HEAD of " + impl_->location.string() +
                         " is detached (a bisect or a checkout in progress?): name the branch to track"};
  return std::string("HEAD");
}

std::string GitRepo::upstream_branch() const {
  auto* repo = impl_->repo.get();
  constexpr std::string_view kRemotes = "refs/remotes/";
  auto remote_short = [&](std::string_view full) {
    return full.starts_with(kRemotes) ? std::string(full.substr(kRemotes.size())) : std::string();
  };
  git_reference* head = nullptr;
  if (git_repository_head_detached(repo) != 1 && git_repository_head(&head, repo) == 0) {
    RefPtr owner(head);
    git_reference* up = nullptr;
    if (git_branch_upstream(&up, head) == 0) {
      RefPtr up_owner(up);
      if (auto name = remote_short(git_reference_name(up)); !name.empty()) return name;
    }
  }
  git_reference* origin_head = nullptr;
  if (git_reference_lookup(&origin_head, repo, "refs/remotes/origin/HEAD") == 0) {
    RefPtr owner(origin_head);
    if (git_reference_type(origin_head) == GIT_REFERENCE_SYMBOLIC)
      if (auto name = remote_short(git_reference_symbolic_target(origin_head)); !name.empty()) return name;
  }
  git_oid oid;
  for (const char* name : {"origin/main", "origin/master"})
    if (git_reference_name_to_id(&oid, repo, (std::string(kRemotes) + name).c_str()) == 0) return name;
  return {};
}

common::Result<std::vector<CommitInfo>> GitRepo::first_parent_history(const std::string& to,
                                                                      const std::optional<std::string>& from,
                                                                      std::optional<std::int64_t> since) const {
  return walk(to, from, since, false);
}

namespace {

/// The commits a shallow clone's history is cut at (`shallow` in the git
/// directory). From libgit2 1.7 on they read as root commits, so only this
/// list tells the clone's edge from the history's first commit.
/// Read from the common git directory: a worktree made by `git worktree add`
/// has a private one without the list (and libgit2 1.5 then calls the clone
/// not shallow), so the edge is this list, not git_repository_is_shallow.
std::set<std::string> shallow_edge(git_repository* repo) {
  std::set<std::string> out;
  std::ifstream in(std::filesystem::path(git_repository_commondir(repo)) / "shallow");
  for (std::string line; std::getline(in, line);)
    if (line.size() >= 40) out.insert(line.substr(0, 40));
  return out;
}

/// Why `oid` could not be read, said before anything else asks libgit2 (which
/// clears its last error): a missing object names its commit and its child.
common::Error unreadable_commit(const fs::path& location, const git_oid& oid, const std::string& child) {
  return common::Error{location.string() + ": cannot read commit " + oid_hex(oid).substr(0, 12) +
                       (child.empty() ? "" : " (first parent of " + child.substr(0, 12) + ")") + ": " +
                       git_error_text() + " (a missing object: a damaged pack, or a --reference/--shared clone "
                       "whose source moved or was pruned)"};
}

}  // namespace

common::Result<std::string> GitRepo::root_commit(const std::string& to) const {
  auto sha = resolve(to);
  if (!sha) return sha.error();
  auto* repo = impl_->repo.get();
  git_oid oid;
  git_oid_fromstr(&oid, sha->c_str());
  auto edge = shallow_edge(repo);
  for (;;) {
    git_commit* c = nullptr;
    if (git_commit_lookup(&c, repo, &oid) != 0) {
      auto error = unreadable_commit(impl_->location, oid, "");
      if (!edge.empty()) return std::string();  // past the edge (libgit2 before 1.7)
      return error;
    }
    CommitPtr owner(c);
    if (git_commit_parentcount(c) == 0) break;
    git_oid_cpy(&oid, git_commit_parent_id(c, 0));
  }
  auto hex = oid_hex(oid);
  return edge.count(hex) ? std::string() : hex;
}

common::Result<std::vector<CommitInfo>> GitRepo::cloned_history(const std::string& to) const {
  return walk(to, std::nullopt, std::nullopt, true);
}

common::Result<std::vector<CommitInfo>> GitRepo::walk(const std::string& to, const std::optional<std::string>& from,
                                                      std::optional<std::int64_t> since, bool to_shallow_end) const {
  auto to_sha = resolve(to);
  if (!to_sha) return to_sha.error();
  std::optional<std::string> from_sha;
  if (from) {
    auto r = resolve(*from);
    if (!r) return r.error();
    from_sha = *r;
  }
  auto* repo = impl_->repo.get();
  // Following first parents by hand (rather than a revwalk) keeps the order
  // exactly `git log --first-parent` and lets us stop early.
  std::vector<CommitInfo> newest_first;
  git_oid oid;
  git_oid_fromstr(&oid, to_sha->c_str());
  bool reached_from = false, from_before_since = false;
  // A commit whose clock was wrong (dated before `since` in the middle of the
  // range) must not end the walk and drop everything older: it ends only
  // after a long run of check-ins older than `since` (an old branch merged
  // fast-forward, a rebase that kept its authors' dates, can bring hundreds),
  // and never before a known `from`.
  constexpr int kOlderRunToStop = 1000;
  int older_run = 0;
  std::string child;  // the commit whose first parent is being read
  auto edge = shallow_edge(repo);
  // The walk reached the clone's edge with history left to walk: the range
  // is held (nullopt, stop) unless it needed what lies beyond.
  auto past_edge = [&]() -> std::optional<common::Error> {
    if (to_shallow_end || older_run > 0) return std::nullopt;
    // A clone made with `--shallow-since` at the range's own start holds
    // the range, though no check-in older than `since` was read to show it:
    // its edge is the first check-in from that date on (the date read in the
    // clone's local time, so up to a day's hours after `since`). One made
    // with --depth N ends anywhere: an edge further after `since` is a range
    // cut short.
    // Not at a merge: git cuts a clone there when the merge's other side is
    // older, and its first-parent line goes on past the cut (libgit2 before
    // 1.7 reads the merge's parents; later ones see the edge as a root).
    if (since && newest_first.back().parents.size() < 2 && newest_first.back().time - *since < 86400)
      return std::nullopt;
    return common::Error{impl_->location.string() + " is a shallow clone: its history stops at " +
                         newest_first.back().sha.substr(0, 12) + " (" + tracker::format_date(newest_first.back().time) +
                         "); fetch the rest (git fetch --unshallow) or start the range after it" +
                         // A --shallow-since clone of a quiet history also ends
                         // here: its edge is the first check-in after its date,
                         // and nothing shows none came between. One check-in
                         // older than `since` shows it.
                         (since ? std::string(" (if it was cut at or before ") + tracker::format_date(*since) +
                                      " and the history is quiet since then, `git fetch --deepen=1` shows the "
                                      "range is whole)"
                                : std::string())};
  };
  for (;;) {
    git_commit* c = nullptr;
    if (git_commit_lookup(&c, repo, &oid) != 0) {
      auto error = unreadable_commit(impl_->location, oid, child);
      if (!newest_first.empty() && !edge.empty()) {
        if (auto e = past_edge()) return *e;
        break;
      }
      return error;
    }
    CommitPtr owner(c);
    auto info = info_of(c);
    bool older = since && info.time < *since;
    older_run = older ? older_run + 1 : 0;
    if (older_run >= kOlderRunToStop && !from_sha) break;
    if (!older) {
      newest_first.push_back(std::move(info));
      if (from_sha && newest_first.back().sha == *from_sha) {
        reached_from = true;
        break;
      }
    } else if (from_sha && info.sha == *from_sha) {
      from_before_since = true;  // not reached within the range
      break;
    }
    if (git_commit_parentcount(c) == 0) {
      if (!older && edge.count(newest_first.back().sha))
        if (auto e = past_edge()) return *e;
      break;
    }
    child = oid_hex(oid);
    git_oid_cpy(&oid, git_commit_parent_id(c, 0));
  }
  if (from_before_since)
    return common::Error{"'" + *from + "' is dated before the range's start (since " + format_date(*since) +
                         "): start the range at one or the other"};
  if (from_sha && !reached_from)
    return common::Error{"'" + *from + "' is not on the first-parent history of '" + to + "'" +
                         (since ? " within since " + format_date(*since) : "")};
  auto tags = tags_by_commit(repo, false);
  if (!tags) return tags.error();
  std::vector<CommitInfo> out(newest_first.rbegin(), newest_first.rend());
  for (auto& c : out)
    if (auto it = tags->find(c.sha); it != tags->end()) c.tags = it->second;
  return out;
}

}  // namespace tracker
