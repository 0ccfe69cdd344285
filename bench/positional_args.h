#pragma once
// The benches' optional whole-number arguments: a bad one ends the bench with
// its usage line and exit status 2, not an uncaught std::stoi exception.
#include <fmt/core.h>

#include <cstdlib>
#include <string>

namespace bench {

/// argv[i] as a whole number of at least 1, or `fallback` when it is not given.
inline long positive_arg(int argc, char** argv, int i, long fallback, const char* usage) {
  if (i >= argc) return fallback;
  std::string text = argv[i];
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || value < 1) {
    fmt::print(stderr, "'{}' is not a whole number above 0\nusage: {}\n", text, usage);
    std::exit(2);
  }
  return value;
}

}  // namespace bench
