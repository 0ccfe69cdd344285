// Files read whole for hashes and manifests: a read that fails part way is an
// error naming the file, not a short content taken for the file's.
#include <doctest/doctest.h>

#include <fstream>

#include "common/hash.h"
#include "common/read_file.h"
#include "evaluator/files.h"
#include "tests/support/temp_dir.h"

TEST_CASE("a file whose read fails gives an error naming it, not the hash of what was read") {
  testing::TempDir dir;
  std::ofstream(dir / "suite.json") << "{\"modules\": []}";
  auto bytes = common::read_file(dir / "suite.json");
  REQUIRE(bytes);
  CHECK(*bytes == "{\"modules\": []}");
  CHECK(common::sha256_file(dir / "suite.json").take() == common::sha256_hex(*bytes));

  // A directory opens for reading, and its first read fails (EISDIR): the
  // same path as a read that fails on NFS after the open. Before, that read
  // was taken for an empty file and hashed.
  auto sub = dir / "modules";
  std::filesystem::create_directory(sub);
  auto hashed = common::sha256_file(sub);
  REQUIRE_FALSE(hashed);
  CHECK(hashed.error().message == "cannot read " + sub.string() + ": Is a directory");
  auto read = evaluator::read_file(sub);
  REQUIRE_FALSE(read);
  CHECK(read.error().message == "cannot read " + sub.string() + ": Is a directory");
  CHECK_FALSE(common::read_file(dir / "missing"));
}
