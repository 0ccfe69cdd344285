#pragma once
// The benches' whole-number arguments: a bad one ends the bench with its
// usage line and exit status 2, not an uncaught std::stoi exception.
#include <fmt/core.h>

#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace bench {

/// `text` as a whole number from 1 to INT_MAX, or the usage line and exit 2.
inline int positive_number(const std::string& text, const char* usage) {
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(text, &used);
  } catch (const std::logic_error&) {  // not a number, or out of long's range
    used = 0;
  }
  if (used == 0 || used != text.size() || value < 1 || value > INT_MAX) {
    fmt::print(stderr, "'{}' is not a whole number from 1 to {}\nusage: {}\n", text, INT_MAX, usage);
    std::exit(2);
  }
  return static_cast<int>(value);
}

/// argv[i] as positive_number(), or `fallback` when it is not given.
inline int positive_arg(int argc, char** argv, int i, int fallback, const char* usage) {
  return i < argc ? positive_number(argv[i], usage) : fallback;
}

/// The value after option argv[i] (moving i past it), or the usage line and exit 2.
inline const char* option_value(int argc, char** argv, int& i, const char* usage) {
  if (i + 1 >= argc) {
    fmt::print(stderr, "{} wants a value\nusage: {}\n", argv[i], usage);
    std::exit(2);
  }
  return argv[++i];
}

}  // namespace bench
