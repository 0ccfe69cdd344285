// The first-parent walk and sampling on real git repositories made with libgit2.
#include <doctest/doctest.h>
#include <pwd.h>
#include <unistd.h>

#include <fstream>

#include "common/process.h"
#include "common/text.h"
#include "tests/support/temp_dir.h"
#include "tests/support/toy_history.h"
#include "tracker/git.h"
#include "tracker/selection.h"
#include "tracker/worktree.h"

using namespace tracker;

namespace {
std::vector<std::string> subjects(const std::vector<CommitInfo>& v) {
  std::vector<std::string> out;
  for (const auto& c : v) out.push_back(c.subject);
  return out;
}
}  // namespace

TEST_CASE("the first-parent walk lists the main branch oldest first, a merge once") {
  testing::TempDir dir;
  auto repo = GitRepo::open(testing::write_toy_history(dir.path())).take();
  auto h = repo.first_parent_history("main").take();
  CHECK(subjects(h) == std::vector<std::string>{"Import", "Change the threshold", "Add a pass and drop the old notes",
                                                "Docs only", "Merge branch 'side'"});
  CHECK(h.back().is_merge());
  CHECK(h.back().parents.size() == 2);
  CHECK(h.front().tags == std::vector<std::string>{"v1"});
  CHECK(h[3].tags == std::vector<std::string>{"v2"});
  CHECK(h[1].time - h[0].time == 7 * 86400);
  CHECK(h[0].author == "Ada <ada@example.org>");
  // The side branch itself is a branch like any other.
  CHECK(subjects(repo.first_parent_history("side").take()).back() == "Side work two");
}

TEST_CASE("ranges: --from, --to, --since, --until, tags and periods") {
  testing::TempDir dir;
  auto repo = GitRepo::open(testing::write_toy_history(dir.path())).take();
  RangeOptions o;
  o.from = "v1";
  o.to = "v2";
  CHECK(select_commits(repo, o).take().size() == 4);
  o = {};
  o.since = parse_date("2025-12-08").take();
  o.until = parse_date("2025-12-29").take();  // inclusive: "Docs only" is at 12-29T00:00
  CHECK(subjects(select_commits(repo, o).take()) ==
        std::vector<std::string>{"Change the threshold", "Add a pass and drop the old notes", "Docs only"});
  o = {};
  o.sampling.tags = true;
  CHECK(subjects(select_commits(repo, o).take()) == std::vector<std::string>{"Import", "Docs only"});
  o = {};
  o.sampling.every = Every{1, PeriodUnit::Month};  // Dec 2025, then Jan 2026
  CHECK(subjects(select_commits(repo, o).take()) == std::vector<std::string>{"Docs only", "Merge branch 'side'"});
}

TEST_CASE("a repository owned by another user is refused saying so, not as no repository") {
  if (geteuid() != 0) return testing::skip_test("only root can give a repository to another user");
  testing::TempDir dir;
  auto path = testing::write_toy_history(dir.path());
  const passwd* nobody = getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  for (const auto& e : std::filesystem::recursive_directory_iterator(path))
    REQUIRE(lchown(e.path().c_str(), nobody->pw_uid, nobody->pw_gid) == 0);
  REQUIRE(chown(path.c_str(), nobody->pw_uid, nobody->pw_gid) == 0);
  auto r = GitRepo::open(path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == path.string() + " is a git repository owned by another user (uid " +
                                 std::to_string(nobody->pw_uid) +
                                 "), which git refuses as dubious ownership: run as its owner, or list it in "
                                 "git's safe.directory");
}

TEST_CASE("bad repositories, revisions and ranges are refused with the reason") {
  testing::TempDir dir;
  auto not_repo = GitRepo::open(dir.path());
  REQUIRE_FALSE(not_repo.ok());
  CHECK(not_repo.error().message == dir.path().string() + " is not a git repository");
  CHECK(GitRepo::open(dir / "nowhere").error().message.find("does not exist") != std::string::npos);

  auto repo = GitRepo::open(testing::write_toy_history(dir.path())).take();
  CHECK(repo.resolve("no-such-branch").error().message.find("unknown revision 'no-such-branch'") == 0);
  // libgit2 calls any prefix under 4 digits ambiguous: it is too short, not ambiguous.
  CHECK(repo.resolve("c1").error().message.find("unknown revision 'c1' in ") == 0);
  CHECK(repo.resolve("c1").error().message.find("needs at least 4 digits") != std::string::npos);
  // An object that exists but is no check-in (a tree's or a blob's id) says so.
  CHECK(repo.resolve("main^{tree}").error().message.find(" is a tree, not a commit") != std::string::npos);
  RangeOptions o;
  o.branch = "nope";
  CHECK(select_commits(repo, o).error().message.find("unknown branch 'nope'") == 0);
  o = {};
  o.from = "side";  // not on main's first-parent line
  CHECK(select_commits(repo, o).error().message.find("is not on the first-parent history") != std::string::npos);
  o = {};
  o.branch = "side";
  o.to = "main";  // another line than the branch's
  CHECK(select_commits(repo, o).error().message == "--to main is not on the first-parent line of branch 'side'");
  o.to = "side~1";
  CHECK(select_commits(repo, o).take().back().sha == repo.resolve("side~1").take());
  o = {};
  o.since = parse_date("2030-01-01").take();
  CHECK(select_commits(repo, o).error().message.find("no check-ins to take") == 0);
}

namespace {
void git(std::vector<std::string> args) {
  args.insert(args.begin(), "git");
  testing::run_ok(args);
}
}  // namespace

TEST_CASE("a shallow clone's walk past its boundary names the boundary instead of libgit2's missing object") {
  testing::TempDir dir;
  auto origin = testing::write_toy_history(dir.path());
  git({"clone", "-q", "--depth", "2", "--branch", "main", "file://" + origin.string(), (dir / "shallow").string()});
  auto repo = GitRepo::open(dir / "shallow").take();
  auto h = repo.first_parent_history("HEAD");
  REQUIRE_FALSE(h.ok());
  INFO(h.error().message);
  CHECK(h.error().message.find((dir / "shallow").string() + " is a shallow clone: its history stops at ") == 0);
  CHECK(h.error().message.find("git fetch --unshallow") != std::string::npos);
  // Reading what was measured walks as far as the clone goes: drift analysis,
  // report and decide would otherwise fail after every nightly sweep.
  auto cloned = repo.cloned_history("HEAD").take();
  REQUIRE(cloned.size() == 2);
  CHECK(cloned.back().sha == repo.resolve("HEAD").take());
  CHECK(cloned.front().sha == repo.resolve("HEAD~1").take());
}

TEST_CASE("a from dated before since is said so, not that it is off the history") {
  testing::TempDir dir;
  auto repo = GitRepo::open(testing::write_toy_history(dir.path())).take();
  auto since = repo.commit("main~1").take().time;
  auto h = repo.first_parent_history("main", std::string("main~3"), since);
  REQUIRE_FALSE(h.ok());
  CHECK(h.error().message == "'main~3' is dated before the range's start (since " + tracker::format_date(since) +
                                 "): start the range at one or the other");
}

TEST_CASE("a clone made with --shallow-since at the range's start holds the range, an edge later than a day does not") {
  testing::TempDir dir;
  auto origin = testing::write_toy_history(dir.path());
  auto full = GitRepo::open(origin).take();
  auto clone = [&](const tracker::CommitInfo& from, const std::string& name) {
    git({"clone", "-q", "--shallow-since=@" + std::to_string(from.time), "--branch", "main",
         "file://" + origin.string(), (dir / name).string()});
    return GitRepo::open(dir / name).take();
  };
  // main is the side branch's merge, then two check-ins of its own line.
  auto start = full.commit("main~2").take();
  auto repo = clone(start, "since");
  auto h = repo.first_parent_history("HEAD", std::nullopt, start.time);
  REQUIRE_MESSAGE(h.ok(), h.error().message);
  REQUIRE(h->size() == 3);
  CHECK(h->front().sha == start.sha);
  // The date alone, as a project file gives it: the midnight before the edge.
  CHECK(repo.first_parent_history("HEAD", std::nullopt, start.time - start.time % 86400).ok());
  // A range starting two days before the edge needs what the clone lacks.
  auto early = repo.first_parent_history("HEAD", std::nullopt, start.time - 2 * 86400);
  REQUIRE_FALSE(early.ok());
  CHECK(early.error().message.find(" is a shallow clone: its history stops at " + start.sha.substr(0, 12)) !=
        std::string::npos);
  // A clone cut before `since` of a history quiet since then looks the same: the way to show it is said.
  CHECK(early.error().message.find("if it was cut at or before " + tracker::format_date(start.time - 2 * 86400) +
                                   " and the history is quiet since then, `git fetch --deepen=1`") !=
        std::string::npos);
  // From main~1 on, git cuts the clone at the merge itself (its side parent
  // is older): main~1 is missing, and the range is refused, not cut short.
  auto later = full.commit("main~1").take();
  auto cut = clone(later, "cut").first_parent_history("HEAD", std::nullopt, later.time);
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.error().message.find(" is a shallow clone: its history stops at " +
                                 full.resolve("main").take().substr(0, 12)) != std::string::npos);
}

namespace {
/// `git -C dir args…` as a test user; the last line of its output.
std::string git_out(const std::filesystem::path& dir, std::vector<std::string> args) {
  common::ProcessSpec spec;
  spec.argv = {"git", "-c", "user.name=Test", "-c", "user.email=test@example.org", "-C", dir.string()};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  auto r = common::run_process(spec).take();
  REQUIRE_MESSAGE(r.ok(), r.output);
  return common::trim(common::last_line(r.output));
}
}  // namespace

TEST_CASE("the root commit is the first-parent line's first, the same in every clone, none at a shallow edge") {
  testing::TempDir dir;
  auto origin = testing::write_toy_history(dir.path());
  auto repo = GitRepo::open(origin).take();
  auto first = repo.first_parent_history("main").take().front();
  CHECK(repo.root_commit("main").take() == first.sha);
  CHECK(repo.root_commit("side").take() == first.sha);  // the side branch starts on main
  CHECK_FALSE(repo.root_commit("no-such-branch").ok());
  // An unrelated history merged in brings a second root: the first parent's line decides.
  auto tree = git_out(origin, {"rev-parse", "main^{tree}"});
  auto other = git_out(origin, {"commit-tree", tree, "-m", "an unrelated root"});
  git_out(origin, {"update-ref", "refs/heads/merged-in", git_out(origin, {"commit-tree", tree, "-p", "main", "-p", other, "-m", "merge"})});
  git_out(origin, {"update-ref", "refs/heads/merged-onto", git_out(origin, {"commit-tree", tree, "-p", other, "-p", "main", "-m", "merge"})});
  auto reopened = GitRepo::open(origin).take();
  CHECK(reopened.root_commit("merged-in").take() == first.sha);
  CHECK(reopened.root_commit("merged-onto").take() == other);
  git({"clone", "-q", "--branch", "main", "file://" + origin.string(), (dir / "full").string()});
  CHECK(GitRepo::open(dir / "full").take().root_commit("HEAD").take() == first.sha);
  git({"clone", "-q", "--bare", "file://" + origin.string(), (dir / "bare.git").string()});
  CHECK(GitRepo::open(dir / "bare.git").take().root_commit("main").take() == first.sha);
  git({"clone", "-q", "--depth", "2", "--branch", "main", "file://" + origin.string(), (dir / "shallow").string()});
  auto shallow = GitRepo::open(dir / "shallow").take().root_commit("HEAD");
  REQUIRE(shallow.ok());
  CHECK(std::move(shallow).take().empty());
}

TEST_CASE("checking out what a partial clone lacks names the clone and the cure, not libgit2's missing object") {
  testing::TempDir dir;
  auto origin = testing::write_toy_history(dir.path());
  git({"-C", origin.string(), "config", "uploadpack.allowfilter", "true"});
  git({"clone", "-q", "--filter=blob:none", "--branch", "main", "file://" + origin.string(), (dir / "partial").string()});
  auto repo = GitRepo::open(dir / "partial").take();
  auto first = repo.first_parent_history("main").take().front();  // its older blobs were never fetched
  WorkTree wt(dir / "wt");
  auto r = wt.checkout(repo, first.sha);
  REQUIRE_FALSE(r.ok());
  INFO(r.error().message);
  CHECK(r.error().message.find("is a partial clone (git clone --filter) that lacks ") != std::string::npos);
  CHECK(r.error().message.find("clone without --filter") != std::string::npos);
}

TEST_CASE("a project's empty branch means HEAD, and a detached HEAD is refused rather than swept") {
  testing::TempDir dir;
  auto path = testing::write_toy_history(dir.path());
  auto repo = GitRepo::open(path).take();
  CHECK(repo.tracked("").take() == "HEAD");
  CHECK(repo.tracked("side").take() == "refs/heads/side");
  CHECK(repo.tracked("v1").take() == "v1");  // a tag is taken as named: it is no branch
  git({"-C", path.string(), "update-ref", "--no-deref", "HEAD", repo.resolve("main~1").take()});
  auto detached = GitRepo::open(path).take().tracked("");
  REQUIRE_FALSE(detached.ok());
  CHECK(detached.error().message.find("is detached (a bisect or a checkout in progress?)") != std::string::npos);
  CHECK(repo.tracked("main").take() == "refs/heads/main");
}

TEST_CASE("a shallow clone's edge that reads as a root commit (libgit2 1.7 on) still stops a walk needing more") {
  testing::TempDir dir;
  auto path = testing::write_toy_history(dir.path());
  auto root = GitRepo::open(path).take().first_parent_history("main").take().front().sha;
  // What a newer libgit2 shows of `git clone --depth`: the edge commit, listed
  // in .git/shallow, with no parents.
  std::ofstream(path / ".git" / "shallow") << root << "\n";
  auto repo = GitRepo::open(path).take();
  auto walked = repo.first_parent_history("main");
  REQUIRE_FALSE(walked.ok());
  CHECK(walked.error().message.find("is a shallow clone: its history stops at " + root.substr(0, 12)) !=
        std::string::npos);
  CHECK(repo.cloned_history("main").take().front().sha == root);  // as far as the clone goes
}

TEST_CASE("a tracked branch is the branch even where a tag has its name, which revparse would take") {
  testing::TempDir dir;
  auto path = testing::write_toy_history(dir.path());
  git({"-C", path.string(), "tag", "main", "main~3"});
  auto repo = GitRepo::open(path).take();
  auto tip = repo.resolve(repo.tracked("main").take()).take();
  CHECK(tip == repo.resolve("refs/heads/main").take());
  CHECK(tip != repo.resolve("refs/tags/main").take());
  CHECK(repo.first_parent_history(repo.tracked("main").take()).take().back().sha == tip);
  // `driftwatch commits`, the sweep's preview, walks the same line.
  RangeOptions o;
  o.branch = "main";
  CHECK(select_commits(repo, o).take().back().sha == tip);
}

TEST_CASE("one check-in with a wrong clock inside the range does not cut off everything older") {
  testing::TempDir dir;
  auto path = testing::write_toy_history(dir.path());
  // Three check-ins on main; the middle one's committer clock is years behind.
  auto commit = [&](const std::string& subject, const std::string& date) {
    common::ProcessSpec spec;
    spec.argv = {"env", "GIT_COMMITTER_DATE=" + date, "GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_NAME=T",
                 "GIT_COMMITTER_EMAIL=t@example.org", "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.org",
                 "git", "-C", path.string(), "commit-tree", "main^{tree}", "-p", "main", "-m", subject};
    auto r = common::run_process(spec).take();
    REQUIRE_MESSAGE(r.ok(), r.output);
    git({"-C", path.string(), "update-ref", "refs/heads/main", common::trim(r.output)});
  };
  commit("Late one", "2026-02-01T12:00:00Z");
  commit("Skewed clock", "2020-01-01T12:00:00Z");
  commit("Later one", "2026-02-03T12:00:00Z");
  auto repo = GitRepo::open(path).take();
  auto h = repo.first_parent_history("main", std::nullopt, parse_date("2025-12-08").take()).take();
  CHECK(subjects(h) == std::vector<std::string>{"Change the threshold", "Add a pass and drop the old notes",
                                                "Docs only", "Merge branch 'side'", "Late one", "Later one"});
  // A hundred back-dated check-ins in a row (a rebase that kept its authors'
  // dates) neither, with or without a `from` before them.
  for (int i = 0; i < 100; ++i) commit("Rebased " + std::to_string(i), "2025-06-01T12:00:00Z");
  commit("Latest", "2026-02-05T12:00:00Z");
  auto reopened = GitRepo::open(path).take();
  auto since = parse_date("2025-12-08").take();
  auto after = subjects(reopened.first_parent_history("main", std::nullopt, since).take());
  CHECK(after.front() == "Change the threshold");
  CHECK(after.back() == "Latest");
  CHECK(after.size() == 7);
  auto from = reopened.first_parent_history("main", std::string("main~103"), since);
  REQUIRE(from.ok());
  CHECK(subjects(*from).front() == "Late one");
}

TEST_CASE("a missing object inside the history names its commit and its child, not an unknown libgit2 error") {
  testing::TempDir dir;
  auto path = testing::write_toy_history(dir.path());
  git({"clone", "-q", "--no-local", "--branch", "main", "file://" + path.string(), (dir / "clone").string()});
  auto clone = dir / "clone";
  auto parent = git_out(clone, {"rev-parse", "main~2"}), child = git_out(clone, {"rev-parse", "main~1"}),
       first = git_out(clone, {"rev-parse", "main~3"});
  // Unpack, then lose one commit (a --reference clone whose source was pruned).
  common::ProcessSpec unpack;
  unpack.argv = {"sh", "-c", "cd '" + clone.string() + "' && mv .git/objects/pack .git/objects/pack.old && mkdir .git/objects/pack && "
                 "for p in .git/objects/pack.old/*.pack; do git unpack-objects -q < \"$p\"; done && rm -rf .git/objects/pack.old"};
  REQUIRE(common::run_process(unpack).take().ok());
  std::filesystem::remove(clone / ".git" / "objects" / parent.substr(0, 2) / parent.substr(2));
  auto h = GitRepo::open(clone).take().first_parent_history("main");
  REQUIRE_FALSE(h.ok());
  INFO(h.error().message);
  CHECK(h.error().message.find(clone.string() + ": cannot read commit " + parent.substr(0, 12) + " (first parent of " +
                               child.substr(0, 12) + "): ") == 0);
  CHECK(h.error().message.find("unknown libgit2 error") == std::string::npos);
  // --branch with a --to beyond it says so too, not that --to is off the branch's line.
  RangeOptions o;
  o.branch = "main";
  o.to = first;
  auto beyond = select_commits(GitRepo::open(clone).take(), o);
  REQUIRE_FALSE(beyond.ok());
  CHECK(beyond.error().message.find(": cannot read commit " + parent.substr(0, 12)) != std::string::npos);
}

TEST_CASE("a worktree of a shallow clone walks as the clone does, to its edge") {
  testing::TempDir dir;
  auto origin = testing::write_toy_history(dir.path());
  git({"clone", "-q", "--depth", "2", "--branch", "main", "file://" + origin.string(), (dir / "shallow").string()});
  git({"-C", (dir / "shallow").string(), "worktree", "add", "-q", "--detach", (dir / "wt").string()});
  auto repo = GitRepo::open(dir / "wt").take();
  auto h = repo.first_parent_history("HEAD");
  REQUIRE_FALSE(h.ok());
  INFO(h.error().message);
  CHECK(h.error().message.find(" is a shallow clone: its history stops at ") != std::string::npos);
  CHECK(repo.cloned_history("HEAD").take().size() == 2);
  CHECK(repo.root_commit("HEAD").take().empty());
}

TEST_CASE("a check-in's submodules are named by the checkout, which writes the repository's own files only") {
  testing::TempDir dir;
  auto path = testing::write_toy_history(dir.path());
  auto repo = GitRepo::open(path).take();
  auto tip = repo.resolve("main").take();
  // A gitlink, as `git submodule add` records one, pointing at any commit.
  git({"-C", path.string(), "update-index", "--add", "--cacheinfo", "160000," + tip + ",third_party/zlib"});
  git({"-C", path.string(), "-c", "user.name=T", "-c", "user.email=t@example.org", "commit", "-q", "-m",
       "Add zlib as a submodule"});
  auto with = GitRepo::open(path).take().resolve("main").take();
  WorkTree wt(dir / "wt");
  auto stats = wt.checkout(GitRepo::open(path).take(), with).take();
  CHECK(stats.submodules == std::vector<std::string>{"third_party/zlib"});
  CHECK_FALSE(std::filesystem::exists(wt.source_dir() / "third_party" / "zlib"));
  CHECK(wt.checkout(GitRepo::open(path).take(), tip).take().submodules.empty());
}

TEST_CASE("a tag that names a missing object is an error, not a check-in left out of the tagged samples") {
  testing::TempDir dir;
  auto path = testing::write_toy_history(dir.path());
  // A damaged ref: the object it names is not in the repository.
  std::ofstream(path / ".git" / "refs" / "tags" / "v3") << std::string(40, '7') << "\n";
  auto repo = GitRepo::open(path).take();
  auto tags = repo.tags();
  REQUIRE_FALSE(tags.ok());
  CHECK(tags.error().message.rfind("cannot read tag v3: ", 0) == 0);
  RangeOptions o;
  o.sampling.tags = true;
  auto sampled = select_commits(repo, o);
  REQUIRE_FALSE(sampled.ok());
  CHECK(sampled.error().message.find("cannot read tag v3") != std::string::npos);
  // Without tag sampling the damaged ref stops nothing: the walk and a
  // check-in's lookup (every farm worker's) go on, showing the tags they can read.
  o.sampling.tags = false;
  CHECK(select_commits(repo, o).ok());
  auto walked = repo.first_parent_history("main");
  REQUIRE(walked.ok());
  CHECK(repo.commit(walked->back().sha).ok());
}
