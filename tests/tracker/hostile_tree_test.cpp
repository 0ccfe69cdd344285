// A hostile repository: tree entries that would write outside the work tree
// or into a .git directory. The trees are written as raw objects, as another
// tool could have, since libgit2's tree builder refuses such names itself.
#include <doctest/doctest.h>
#include <git2.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/text.h"
#include "tests/support/temp_dir.h"
#include "tracker/worktree.h"

using namespace tracker;
namespace fs = std::filesystem;

namespace {

struct RawEntry {
  std::string mode;  ///< "100644" for a file, "40000" for a tree
  std::string name;
  git_oid oid;
};

/// Builds commits whose trees hold whatever names it is given.
class HostileRepo {
 public:
  explicit HostileRepo(const fs::path& path) {
    git_libgit2_init();
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
    REQUIRE(git_repository_init(&repo_, path.c_str(), false) == 0);
    REQUIRE(git_repository_odb(&odb_, repo_) == 0);
  }
  ~HostileRepo() {
    git_odb_free(odb_);
    git_repository_free(repo_);
    git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 1);
    git_libgit2_shutdown();
  }
  git_oid blob(const std::string& text) { return write(text, GIT_OBJECT_BLOB); }
  git_oid tree(const std::vector<RawEntry>& entries) {
    std::string data;
    for (const auto& e : entries) {
      data += e.mode + " " + e.name;
      data += '\0';
      data.append(reinterpret_cast<const char*>(e.oid.id), GIT_OID_RAWSZ);
    }
    return write(data, GIT_OBJECT_TREE);
  }
  /// A commit of `root` (no parent, HEAD untouched); its full sha.
  std::string commit(const git_oid& root) {
    git_tree* tree = nullptr;
    REQUIRE(git_tree_lookup(&tree, repo_, &root) == 0);
    git_signature* sig = nullptr;
    REQUIRE(git_signature_new(&sig, "Mallory", "mallory@example.org", 1700000000, 0) == 0);
    git_oid id;
    REQUIRE(git_commit_create(&id, repo_, nullptr, sig, sig, nullptr, "hostile", tree, 0, nullptr) == 0);
    git_signature_free(sig);
    git_tree_free(tree);
    char hex[GIT_OID_HEXSZ + 1];
    git_oid_tostr(hex, sizeof hex, &id);
    return hex;
  }

 private:
  git_oid write(const std::string& data, git_object_t type) {
    git_oid id;
    REQUIRE(git_odb_write(&id, odb_, data.data(), data.size(), type) == 0);
    return id;
  }
  git_repository* repo_ = nullptr;
  git_odb* odb_ = nullptr;
};

}  // namespace

TEST_CASE("a hostile commit's tree entries are refused by name and nothing is written outside the work tree") {
  testing::TempDir dir;
  fs::path target;
  std::vector<std::pair<std::string, std::string>> cases;  // (refused entry as reported, sha)
  {
    HostileRepo h(dir / "repo");
    auto readme = h.blob("hello\n");
    auto payload = h.blob("#!/bin/sh\necho owned\n");
    auto sub = h.tree({{"100644", "escaped", payload}});
    auto hooks = h.tree({{"100755", "post-checkout", payload}});
    auto with = [&](RawEntry hostile) {
      std::vector<RawEntry> entries = {{"100644", "README", readme}, hostile};
      std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
      return h.commit(h.tree(entries));
    };
    cases = {
        {"..", with({"40000", "..", sub})},                             // src/../escaped
        {"../../outside", with({"100644", "../../outside", payload})},  // a name holding slashes
        {".git", with({"40000", ".git", h.tree({{"40000", "hooks", hooks}})})},
        {".GIT", with({"40000", ".GIT", sub})},
        {"sub/.git", with({"40000", "sub", h.tree({{"40000", ".git", sub}})})},
        {"a\nb", with({"100644", "a\nb", payload})},
        {".", with({"40000", ".", sub})},
    };
    cases.push_back({"good", h.commit(h.tree({{"100644", "README", readme}}))});
  }
  auto repo = GitRepo::open(dir / "repo").take();
  WorkTree wt(dir / "wt");
  for (const auto& [name, sha] : cases) {
    if (name == "good") continue;
    INFO(common::quoted(name));
    auto r = wt.checkout(repo, sha);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(common::quoted(name)) != std::string::npos);
    CHECK(r.error().message.find('\n') == std::string::npos);
    CHECK_FALSE(fs::exists(wt.dir() / "escaped"));
    CHECK_FALSE(fs::exists(dir / "outside"));
    CHECK_FALSE(fs::exists(wt.source_dir() / ".git"));
    CHECK_FALSE(fs::exists(wt.source_dir() / ".GIT"));
    CHECK_FALSE(fs::exists(wt.source_dir() / "sub/.git"));
  }
  // The work tree is still usable for a commit that is fine.
  auto good = wt.checkout(repo, cases.back().second);
  REQUIRE(good.ok());
  CHECK(fs::exists(wt.source_dir() / "README"));
}
