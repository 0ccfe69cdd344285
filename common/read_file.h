#pragma once
// Reading a file whole, with every read checked: a read that fails part way
// (EIO, an NFS handle gone stale) is an error naming the file, never a short
// content taken for the file's (a suite's identity or a recipe's hash made
// of half a file would be silently wrong).
#include <filesystem>
#include <functional>
#include <string>

#include "common/result.h"

namespace common {

/// The file's bytes; the error names the path and the reason.
Result<std::string> read_file(const std::filesystem::path& path);

/// Calls `chunk(data, size)` for the file's bytes in order; the same errors.
Status read_file_chunks(const std::filesystem::path& path, const std::function<void(const char*, std::size_t)>& chunk);

}  // namespace common
