// Persistent work trees: only what differs is rewritten; crashes are repaired.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "tests/support/temp_dir.h"
#include "tests/support/toy_history.h"
#include "tracker/worktree.h"

using namespace tracker;
namespace fs = std::filesystem;

namespace {
std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
fs::file_time_type mtime(const fs::path& p) { return fs::last_write_time(p); }
}  // namespace

TEST_CASE("moving a work tree rewrites only the files that differ") {
  testing::TempDir dir;
  auto repo = GitRepo::open(testing::write_toy_history(dir.path())).take();
  auto h = repo.first_parent_history("main").take();
  WorkTree wt(dir / "wt");

  auto first = wt.checkout(repo, h[0].sha).take();
  CHECK(first.written == 4);
  CHECK(wt.current() == h[0].sha);
  CHECK(read(wt.source_dir() / "src/config.h") == "static const int threshold = 5;\n");
  auto main_c = mtime(wt.source_dir() / "src/main.c");
  auto config = mtime(wt.source_dir() / "src/config.h");

  auto second = wt.checkout(repo, h[2].sha).take();  // config changed, pass.c added, NOTES removed
  CHECK(second.written == 2);
  CHECK(second.removed == 1);
  CHECK(second.unchanged == 2);
  CHECK(read(wt.source_dir() / "src/config.h") == "static const int threshold = 7;\n");
  CHECK_FALSE(fs::exists(wt.source_dir() / "NOTES"));
  CHECK(mtime(wt.source_dir() / "src/main.c") == main_c);  // untouched: an incremental build skips it
  CHECK(mtime(wt.source_dir() / "src/config.h") != config);

  auto again = wt.checkout(repo, h[2].sha).take();
  CHECK(again.written == 0);
  CHECK(again.removed == 0);

  auto back = wt.checkout(repo, h[0].sha).take();
  CHECK(back.written == 2);  // config.h back, NOTES back
  CHECK(back.removed == 1);  // pass.c
  CHECK(read(wt.source_dir() / "NOTES") == "old notes\n");
}

TEST_CASE("a hand-edited file in a clean work tree is restored") {
  testing::TempDir dir;
  auto repo = GitRepo::open(testing::write_toy_history(dir.path())).take();
  auto h = repo.first_parent_history("main").take();
  WorkTree wt(dir / "wt");
  wt.checkout(repo, h[0].sha).take();
  std::ofstream(wt.source_dir() / "src/main.c") << "garbage";
  auto r = wt.checkout(repo, h[1].sha).take();
  CHECK(read(wt.source_dir() / "src/main.c") == "int main(void) { return 0; }\n");
  CHECK(r.written == 2);  // config.h (changed) + main.c (repaired)
}

TEST_CASE("a file added to the sources of a clean work tree is gone after the next move") {
  testing::TempDir dir;
  auto repo = GitRepo::open(testing::write_toy_history(dir.path())).take();
  auto h = repo.first_parent_history("main").take();
  WorkTree wt(dir / "wt");
  wt.checkout(repo, h[0].sha).take();
  // A file no check-in has: added by hand, or generated into the sources by a build.
  std::ofstream(wt.source_dir() / "src/generated.c") << "int stray;\n";
  auto r = wt.checkout(repo, h[1].sha).take();
  CHECK_FALSE(fs::exists(wt.source_dir() / "src/generated.c"));
  CHECK(r.removed >= 1);
  CHECK(read(wt.source_dir() / "src/main.c") == "int main(void) { return 0; }\n");
}

TEST_CASE("a checkout interrupted half-way is detected and repaired") {
  testing::TempDir dir;
  auto repo = GitRepo::open(testing::write_toy_history(dir.path())).take();
  auto h = repo.first_parent_history("main").take();
  WorkTree wt(dir / "wt");
  wt.checkout(repo, h[0].sha).take();
  // What a crash while moving to h[2] leaves: the state says "moving", one
  // file half-written, a temporary file lying around.
  std::ofstream(wt.dir() / "state") << "moving " << h[2].sha << "\n";
  std::ofstream(wt.source_dir() / "src/config.h") << "static const int thre";
  std::ofstream(wt.source_dir() / "src/pass.c.dw-tmp") << "int pa";
  CHECK(wt.current().empty());

  auto r = wt.checkout(repo, h[2].sha).take();
  CHECK(r.repaired);
  CHECK(wt.current() == h[2].sha);
  CHECK(read(wt.source_dir() / "src/config.h") == "static const int threshold = 7;\n");
  CHECK(read(wt.source_dir() / "src/pass.c") == "int pass(void) { return 1; }\n");
  CHECK_FALSE(fs::exists(wt.source_dir() / "src/pass.c.dw-tmp"));
  CHECK_FALSE(fs::exists(wt.source_dir() / "NOTES"));
}

TEST_CASE("an unwritable work tree directory is an error naming it") {
  testing::TempDir dir;
  auto repo = GitRepo::open(testing::write_toy_history(dir.path())).take();
  std::ofstream(dir / "blocker") << "a file where a directory should be";
  WorkTree wt(dir / "blocker/wt");
  auto r = wt.checkout(repo, repo.resolve("main").take());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find((dir / "blocker/wt").string()) != std::string::npos);
}
