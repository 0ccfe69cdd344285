#pragma once
// Whole-file writes for the evaluator's on-disk formats (reads are
// common/read_file.h's), and the scratch-directory-then-rename discipline
// that keeps half-built suites and packages out of sight.
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace evaluator {

/// Creates the parent directories, then common::write_file_atomically: checked,
/// fsynced, renamed; readers never see half a file, a failure leaves no scratch.
common::Status write_file(const std::filesystem::path& path, std::string_view bytes);

/// The name of the build whose scratch (or moved-aside old) directory
/// `entry` is, or "" for an entry that is neither.
std::string scratch_stem(const std::string& entry);

/// Removes the scratch directories under `parent` that builds killed by a
/// signal left (a destructor does not run then), of every name whose lock,
/// `lock_of(name)`, nobody holds; a moved-aside old directory whose new one
/// never took its place is put back. Without this, a suite built once and
/// interrupted would keep its half-extracted bitcode until built again.
void clear_interrupted_scratch(const std::filesystem::path& parent,
                               const std::function<std::filesystem::path(const std::string&)>& lock_of);

/// A fresh directory `<parent>/.tmp-<stem>-XXXXXX`, removed on destruction
/// unless moved into place with commit(). Creating one removes the leftovers
/// of interrupted runs for the same stem: hold the stem's FileLock.
class ScratchDir {
 public:
  static common::Result<ScratchDir> create(const std::filesystem::path& parent, const std::string& stem);
  ScratchDir(ScratchDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  ScratchDir& operator=(ScratchDir&&) = delete;
  ScratchDir(const ScratchDir&) = delete;
  ~ScratchDir();
  const std::filesystem::path& path() const { return path_; }
  /// Renames the directory to `target`, replacing an existing one.
  common::Status commit(const std::filesystem::path& target);

 private:
  explicit ScratchDir(std::filesystem::path p) : path_(std::move(p)) {}
  std::filesystem::path path_;
};

}  // namespace evaluator
