#pragma once
// Code size of an object file, read with LLVM's Object library (not by
// parsing llvm-size's text).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "common/result.h"

namespace evaluator {

struct ObjectSizes {
  std::int64_t text = 0;  ///< bytes of .text and .text.* sections (ELF; .ltext and .ltext.* under the large code
                          ///< model), of every executable section (others)
  std::int64_t code = 0;  ///< bytes of every executable section
};

/// The error names the file and LLVM's reason (not an object, truncated, …).
common::Result<ObjectSizes> measure_object(const std::filesystem::path& path);

/// What a file that is no object at all holds ("LLVM bitcode", …): the
/// compiler (or a recipe asking for -S, -emit-llvm, -flto) wrote something
/// else, a fault of the check-in, not of the machine. None when it is empty,
/// unreadable, or of an object format (a damaged object is no one's to blame).
std::optional<std::string> not_an_object(const std::filesystem::path& path);

/// Whether the file holds LLVM bitcode (raw or in its wrapper): an imported
/// corpus's module that does not (a Git LFS pointer, a truncated copy) would
/// make every check-in read as a compiler that compiles nothing.
bool is_llvm_bitcode(const std::filesystem::path& path);

}  // namespace evaluator
