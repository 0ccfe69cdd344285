// A compiler's shared libraries, resolved by the real dynamic loader: what
// evaluation reuse hashes besides the compiler's own bytes.
#include <doctest/doctest.h>

#include <fstream>

#include "common/process.h"
#include "common/shared_libraries.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;

namespace {

void cc(std::vector<std::string> args) {
  args.insert(args.begin(), "cc");
  testing::run_ok(args);
}

}  // namespace

TEST_CASE("a program's shared libraries are found where the loader finds them, a missing one named") {
  testing::TempDir tmp;
  std::ofstream(tmp / "lib.c") << "int answer(void) { return 42; }\n";
  std::ofstream(tmp / "main.c") << "int answer(void);\nint main(void) { return answer() == 42 ? 0 : 1; }\n";
  cc({"-shared", "-fPIC", (tmp / "lib.c").string(), "-o", (tmp / "libanswer.so").string()});
  cc({(tmp / "main.c").string(), "-L" + tmp.path().string(), "-lanswer", "-Wl,-rpath," + tmp.path().string(),
      "-o", (tmp / "prog").string()});

  auto libs = common::shared_libraries(tmp / "prog").take();
  auto find = [](const std::vector<common::SharedLibrary>& all, const std::string& name) {
    for (const auto& l : all)
      if (l.name == name) return l;
    return common::SharedLibrary{};
  };
  CHECK(find(libs, "libanswer.so").path == tmp / "libanswer.so");
  CHECK(find(libs, "libc.so.6").path.is_absolute());

  fs::remove(tmp / "libanswer.so");
  auto gone = common::shared_libraries(tmp / "prog").take();
  CHECK(find(gone, "libanswer.so").name == "libanswer.so");
  CHECK(find(gone, "libanswer.so").path.empty());

  // A wrapper script loads nothing of its own.
  std::ofstream(tmp / "wrapper.sh") << "#!/bin/sh\nexec clang-19 \"$@\"\n";
  fs::permissions(tmp / "wrapper.sh", fs::perms::owner_all);
  CHECK(common::shared_libraries(tmp / "wrapper.sh").take().empty());
}
