#pragma once
// CLI11's range checks compare, and "nan" compares false both ways, so
// `--idle-exit nan` passed as a number that no later test ever meets.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <string>

namespace cli {

/// Rejects a value that is not a number, or reads as NaN or infinity:
/// "nan", "inf", "1e999".
inline const CLI::Validator Finite(
    [](std::string& value) -> std::string {
      char* end = nullptr;
      double d = std::strtod(value.c_str(), &end);
      if (end == value.c_str() || *end != '\0') return value + " is not a number";
      if (!std::isfinite(d)) return value + " is not a finite number";
      return std::string();
    },
    "FINITE", "Finite");

}  // namespace cli
