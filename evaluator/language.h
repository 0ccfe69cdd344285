#pragma once
// The source languages a suite's modules come from.
#include <optional>
#include <string>
#include <string_view>

namespace evaluator {

enum class Language { C, Cxx };

/// "c" or "c++", as manifests and `suite list` spell them.
inline const char* language_name(Language l) { return l == Language::C ? "c" : "c++"; }

/// Inverse of language_name; nullopt for anything else.
inline std::optional<Language> parse_language(std::string_view s) {
  if (s == "c") return Language::C;
  if (s == "c++") return Language::Cxx;
  return std::nullopt;
}

/// By file extension: .c → C; .cc .cpp .cxx .c++ .C → C++; anything else (.S, .m, .cu) → nullopt.
inline std::optional<Language> language_of_path(std::string_view path) {
  auto dot = path.rfind('.');
  if (dot == std::string_view::npos || path.find('/', dot) != std::string_view::npos) return std::nullopt;
  auto ext = path.substr(dot + 1);
  if (ext == "c") return Language::C;
  if (ext == "cc" || ext == "cpp" || ext == "cxx" || ext == "c++" || ext == "C" || ext == "cp") return Language::Cxx;
  return std::nullopt;
}

}  // namespace evaluator
