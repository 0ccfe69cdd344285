// Files and directories read and written whole: a read that fails part way
// is an error naming the file, output is bounded, a suite is replaced whole.
#include "evaluator/files.h"

#include <doctest/doctest.h>

#include <fstream>

#include "common/file_lock.h"
#include "common/hash.h"
#include "common/process.h"
#include "common/read_file.h"
#include "common/text.h"
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
  auto read = common::read_file(sub);
  REQUIRE_FALSE(read);
  CHECK(read.error().message == "cannot read " + sub.string() + ": Is a directory");
  CHECK_FALSE(common::read_file(dir / "missing"));
}

TEST_CASE("a child that prints without end keeps the head and tail of its output, not all of it") {
  common::ProcessSpec spec;
  // 40 MiB of one long line, then the line that tells what went wrong.
  spec.argv = {"/bin/sh", "-c", "echo started; head -c 41943040 /dev/zero | tr '\\0' x; echo; echo 'LLVM ERROR: at the end'"};
  spec.timeout = std::chrono::minutes(1);
  auto r = common::run_process(spec).take();
  REQUIRE(r.ok());
  CHECK(r.output.size() < 6u * 1024 * 1024);
  CHECK(r.output.rfind("started\n", 0) == 0);
  CHECK(common::last_line(r.output) == "LLVM ERROR: at the end");
  CHECK(r.output.find("bytes of output left out]") != std::string::npos);
}

TEST_CASE("a suite replaced by a new build is swapped whole, and one left aside by an interruption is put back") {
  testing::TempDir dir;
  auto suites = dir / "suites";
  {
    auto first = evaluator::ScratchDir::create(suites, "holdout").take();
    std::ofstream(first.path() / "suite.json") << "first";
    REQUIRE(first.commit(suites / "holdout"));
  }
  {
    auto second = evaluator::ScratchDir::create(suites, "holdout").take();
    std::ofstream(second.path() / "suite.json") << "second";
    REQUIRE(second.commit(suites / "holdout"));
  }
  CHECK(common::read_file(suites / "holdout/suite.json").take() == "second");
  CHECK(std::distance(std::filesystem::directory_iterator(suites), {}) == 1);  // nothing left beside it

  // A commit killed between moving the old suite aside and moving the new one
  // in (where the file system cannot swap) leaves no suite: the next build
  // of that name starts by putting the old one back, not by deleting it.
  std::filesystem::rename(suites / "holdout", suites / ".old-holdout-.tmp-holdout-Ab12Cd");
  {
    auto third = evaluator::ScratchDir::create(suites, "holdout").take();
    CHECK(common::read_file(suites / "holdout/suite.json").take() == "second");
  }
  CHECK(common::read_file(suites / "holdout/suite.json").take() == "second");
  CHECK(std::distance(std::filesystem::directory_iterator(suites), {}) == 1);
}

TEST_CASE("a scratch directory's name says which build it was") {
  CHECK(evaluator::scratch_stem(".tmp-smoke-Ab12Cd") == "smoke");
  CHECK(evaluator::scratch_stem(".tmp-my-suite-Xy34Zw") == "my-suite");
  CHECK(evaluator::scratch_stem(".old-holdout-.tmp-holdout-Qr56St") == "holdout");
  CHECK(evaluator::scratch_stem(".old-a-.tmp-b-Qr56St") == "");
  CHECK(evaluator::scratch_stem(".tmp-x") == "");
  CHECK(evaluator::scratch_stem(".tmp--Ab12Cd") == "");
  CHECK(evaluator::scratch_stem("smoke") == "");
  CHECK(evaluator::scratch_stem(".smoke.lock") == "");
  CHECK(evaluator::scratch_stem(".tmp-..-Ab12Cd") == "");  // its lock would be made outside suites/
  CHECK(evaluator::scratch_stem(".old-..-.tmp-..-Ab12Cd") == "");
}

TEST_CASE("what killed builds left is cleared, except a build's under way") {
  // A suite build killed by Ctrl-C runs no destructor: its scratch stays
  // until something clears it, whatever name is built next.
  testing::TempDir dir;
  auto suites = dir / "suites";
  auto lock_of = [&](const std::string& name) { return suites / ("." + name + ".lock"); };
  for (auto name : {".tmp-smoke-Ab12Cd", ".tmp-my-suite-Xy34Zw", ".old-holdout-.tmp-holdout-Qr56St",
                    ".tmp-train-Kk11Ll", ".tmp-x", "mine"}) {
    std::filesystem::create_directories(suites / name);
    std::ofstream(suites / name / "suite.json") << name;
  }
  auto building = common::FileLock::acquire(lock_of("train")).take();  // a build of train under way
  evaluator::clear_interrupted_scratch(suites, lock_of);
  CHECK_FALSE(std::filesystem::exists(suites / ".tmp-smoke-Ab12Cd"));
  CHECK_FALSE(std::filesystem::exists(suites / ".tmp-my-suite-Xy34Zw"));
  // The only copy of holdout, moved aside by an interrupted commit, is put back.
  CHECK_FALSE(std::filesystem::exists(suites / ".old-holdout-.tmp-holdout-Qr56St"));
  CHECK(common::read_file(suites / "holdout/suite.json").take() == ".old-holdout-.tmp-holdout-Qr56St");
  CHECK(std::filesystem::exists(suites / ".tmp-train-Kk11Ll"));
  CHECK(std::filesystem::exists(suites / ".tmp-x"));  // not a scratch name
  CHECK(std::filesystem::exists(suites / "mine"));
}
