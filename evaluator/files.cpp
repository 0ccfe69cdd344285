#include "evaluator/files.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/read_file.h"

namespace evaluator {

using common::Error;
namespace fs = std::filesystem;

common::Result<std::string> read_file(const fs::path& path) { return common::read_file(path); }

common::Status write_file(const fs::path& path, std::string_view bytes) {
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  return common::write_file_atomically(path, bytes);
}

common::Result<ScratchDir> ScratchDir::create(const fs::path& parent, const std::string& stem) {
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Error{"cannot create " + parent.string() + ": " + ec.message()};
  // Leftovers of an interrupted build of the same name (the caller holds its lock).
  const std::string tmp = ".tmp-" + stem + "-", old = ".old-" + stem + "-" + tmp;
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    auto name = e.path().filename().string();
    if ((name.starts_with(tmp) && name.size() == tmp.size() + 6) ||
        (name.starts_with(old) && name.size() == old.size() + 6))
      fs::remove_all(e.path(), ec);
  }
  std::string tmpl = (parent / (".tmp-" + stem + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data()))
    return Error{"cannot create a directory in " + parent.string() + ": " + std::strerror(errno)};
  chmod(tmpl.c_str(), 0755);
  return ScratchDir(tmpl);
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

common::Status ScratchDir::commit(const fs::path& target) {
  std::error_code ec;
  // rename(2) cannot replace a non-empty directory: move the old one aside first.
  fs::path old;
  if (fs::exists(target)) {
    old = target.parent_path() / (".old-" + target.filename().string() + "-" + path_.filename().string());
    fs::rename(target, old, ec);
    if (ec) return Error{"cannot replace " + target.string() + ": " + ec.message()};
  }
  fs::rename(path_, target, ec);
  if (ec) {
    auto why = ec.message();
    if (!old.empty()) fs::rename(old, target, ec);
    return Error{"cannot move " + path_.string() + " to " + target.string() + ": " + why};
  }
  path_.clear();
  if (!old.empty()) fs::remove_all(old, ec);
  return common::Ok{};
}

}  // namespace evaluator
