#pragma once
// The shared libraries a program loads, as the dynamic loader resolves them.
// A compiler linked against the system's LLVM (the sample compiler against
// Debian's libLLVM-19.so) compiles differently once that library is
// upgraded, though its own bytes stay the same: what decides its output
// includes them.
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace common {

struct SharedLibrary {
  std::string name;            ///< as the program asks for it: "libLLVM-19.so.1"
  std::filesystem::path path;  ///< where the loader finds it; empty: not found
};

/// Parses `ldd`'s listing. The vDSO (no file) is left out; the loader itself
/// is listed under its path. Pure.
std::vector<SharedLibrary> parse_ldd_listing(const std::string& text);

/// `program`'s shared libraries, by `ldd`; empty for a static program or a
/// script (which `ldd` calls "not a dynamic executable").
Result<std::vector<SharedLibrary>> shared_libraries(const std::filesystem::path& program);

}  // namespace common
