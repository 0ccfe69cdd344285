#pragma once
// Writing a file so that readers see the old content or the new, never a
// torn one, even when the disk fills or the machine loses power mid-write.
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace common {

/// Writes `bytes` to a scratch file beside `path`, checks every write, fsyncs
/// it, renames it over `path` and fsyncs the directory. On failure the error
/// names `path` and the reason, the old file is untouched and no scratch file
/// is left behind. The new file gets mode 0666 minus the umask.
Status write_file_atomically(const std::filesystem::path& path, std::string_view bytes);

/// The same for a set of files read together (a report's HTML, Markdown and
/// JSON): every new content is written and flushed beside its file before
/// any is renamed over its old one, so a full disk or a failed write leaves
/// the old set whole. Only a rename failing after others were done (after
/// every write succeeded) leaves a mix, and its error says so.
Status write_files_atomically(const std::vector<std::pair<std::filesystem::path, std::string>>& files);

/// Flushes a file already written (a copy) to the disk: call before
/// publishing something that names it, so a power loss cannot leave the
/// name pointing at an empty file.
Status sync_file(const std::filesystem::path& path);

}  // namespace common
