#pragma once
// Content hashes: recipe identity, suite manifests, policy files.
#include <filesystem>
#include <string>
#include <string_view>

#include "common/result.h"

namespace common {

/// Lower-case hex SHA-256 of bytes.
std::string sha256_hex(std::string_view bytes);
/// Lower-case hex SHA-256 of a file's content.
Result<std::string> sha256_file(const std::filesystem::path& path);

}  // namespace common
