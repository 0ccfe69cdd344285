#include "common/shared_libraries.h"

#include <sstream>

#include "common/process.h"
#include "common/text.h"

namespace common {

std::vector<SharedLibrary> parse_ldd_listing(const std::string& text) {
  std::vector<SharedLibrary> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty()) continue;
    // "libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x…)", "libfoo.so => not found",
    // "/lib64/ld-linux-x86-64.so.2 (0x…)", "linux-vdso.so.1 (0x…)"
    auto address = line.rfind(" (0x");
    if (address != std::string::npos) line = line.substr(0, address);
    bool loaded = address != std::string::npos;
    auto arrow = line.find(" =>");
    if (arrow != std::string::npos) {
      auto where = trim(line.substr(arrow + 3));
      if (where == "not found") out.push_back({trim(line.substr(0, arrow)), ""});
      else if (!where.empty()) out.push_back({trim(line.substr(0, arrow)), where});
      // nothing after the arrow: the vDSO, as older glibc lists it
    } else if (loaded && line[0] == '/') {  // the loader; a '/' line without an address is an error message
      out.push_back({std::filesystem::path(line).filename().string(), line});
    }
  }
  return out;
}

Result<std::vector<SharedLibrary>> shared_libraries(const std::filesystem::path& program) {
  ProcessSpec ldd;
  ldd.argv = {"ldd", program.string()};
  ldd.timeout = std::chrono::seconds(30);
  ldd.env = {{"LC_ALL", "C"}, {"LANGUAGE", "C"}};  // its "not a dynamic executable" is translated
  auto r = run_process(ldd);
  if (!r) return r.error();
  if (r->output.find("not a dynamic executable") != std::string::npos) return std::vector<SharedLibrary>{};
  if (!r->ok()) return Error{"ldd " + program.string() + ": " + r->describe() + ": " + trim(r->output)};
  return parse_ldd_listing(r->output);
}

}  // namespace common
