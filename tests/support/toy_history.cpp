#include "tests/support/toy_history.h"

#include <fstream>
#include <stdexcept>

#include "tracker/sample_history.h"

namespace testing {

namespace {
const char* kScript = R"(
tree = "tree"
branch = "main"

[[checkin]]
week = 0
author = "Ada <ada@example.org>"
message = "Import"
tag = "v1"

[[checkin]]
week = 1
author = "Ada <ada@example.org>"
message = "Change the threshold"
[[checkin.edit]]
file = "src/config.h"
replace = "threshold = 5"
with = "threshold = 7"

[[checkin]]
week = 2
author = "Bo <bo@example.org>"
message = "Side work one"
branch = "side"
[[checkin.edit]]
file = "docs/side.md"
write = "side notes\n"

[[checkin]]
week = 2
hours = 1
author = "Ada <ada@example.org>"
message = "Add a pass and drop the old notes"
[[checkin.edit]]
file = "src/pass.c"
write = "int pass(void) { return 1; }\n"
[[checkin.edit]]
file = "NOTES"
delete = true

[[checkin]]
week = 3
author = "Bo <bo@example.org>"
message = "Side work two"
branch = "side"
[[checkin.edit]]
file = "src/main.c"
replace = "return 0;"
with = "return pass();"

[[checkin]]
week = 4
author = "Ada <ada@example.org>"
message = "Docs only"
tag = "v2"
[[checkin.edit]]
file = "README"
write = "toy compiler, now documented\n"

[[checkin]]
week = 5
author = "Ada <ada@example.org>"
message = "Merge branch 'side'"
merge = "side"
)";

void put(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}
}  // namespace

std::filesystem::path write_toy_history(const std::filesystem::path& dir) {
  put(dir / "script/history.toml", kScript);
  put(dir / "script/tree/README", "toy compiler\n");
  put(dir / "script/tree/NOTES", "old notes\n");
  put(dir / "script/tree/src/config.h", "static const int threshold = 5;\n");
  put(dir / "script/tree/src/main.c", "int main(void) { return 0; }\n");
  tracker::SampleHistoryOptions o;
  o.start = tracker::default_sample_start();
  o.history_file = dir / "script/history.toml";
  auto r = tracker::write_sample_history(dir / "repo", o);
  if (!r) throw std::runtime_error(r.error().message);
  return dir / "repo";
}

}  // namespace testing
