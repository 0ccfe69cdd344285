// common::write_file_atomically on a real full disk (a 64 KiB tmpfs). It sits
// with the tracker tests because it needs real I/O and root, as they do in CI.
#include <doctest/doctest.h>
#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A tiny tmpfs; fails the test (never skips) when it cannot be mounted.
struct SmallDisk {
  fs::path dir;
  explicit SmallDisk(fs::path d) : dir(std::move(d)) {
    fs::create_directories(dir);
    int r = mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k");
    int e = errno;
    REQUIRE_MESSAGE(r == 0,
                    "cannot mount a 64k tmpfs at " << dir << " (" << std::strerror(e) << "): this test needs root");
  }
  ~SmallDisk() { umount2(dir.c_str(), MNT_DETACH); }
};

}  // namespace

TEST_CASE("an atomic write replaces the file and leaves nothing else") {
  testing::TempDir dir;
  auto file = dir / "index";
  REQUIRE(common::write_file_atomically(file, "one").ok());
  REQUIRE(common::write_file_atomically(file, "two").ok());
  CHECK(read(file) == "two");
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 1);
}

TEST_CASE("an atomic write to a full disk fails naming the file, keeps the old one and leaves no scratch file") {
  testing::TempDir dir;
  SmallDisk disk(dir / "disk");
  auto file = disk.dir / "result.json";
  REQUIRE(common::write_file_atomically(file, "old content").ok());
  auto r = common::write_file_atomically(file, std::string(256 * 1024, 'x'));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "cannot write " + file.string() + ": " + std::strerror(ENOSPC));
  CHECK(read(file) == "old content");
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(disk.dir)) left.push_back(e.path().filename());
  CHECK(left == std::vector<std::string>{"result.json"});
}

TEST_CASE("a set written atomically is replaced whole, or on a full disk not at all") {
  testing::TempDir dir;
  SmallDisk disk(dir / "disk");
  auto html = disk.dir / "index.html", json = disk.dir / "report.json";
  REQUIRE(common::write_files_atomically({{html, "old html"}, {json, "old json"}}).ok());
  REQUIRE(common::write_files_atomically({{html, "new html"}, {json, "new json"}}).ok());
  CHECK(read(html) == "new html");
  CHECK(read(json) == "new json");
  // The first fits, the second does not: the first must not be published alone.
  auto r = common::write_files_atomically({{html, "newer html"}, {json, std::string(256 * 1024, 'x')}});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "cannot write " + json.string() + ": " + std::strerror(ENOSPC));
  CHECK(read(html) == "new html");
  CHECK(read(json) == "new json");
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(disk.dir)) left.push_back(e.path().filename());
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"index.html", "report.json"});
}

TEST_CASE("an atomic write into a missing directory fails naming the file") {
  testing::TempDir dir;
  auto r = common::write_file_atomically(dir / "no/such/file", "x");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("cannot write " + (dir / "no/such/file").string() + ": ") == 0);
}
