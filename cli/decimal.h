#pragma once
// CLI11 2.1 reads integers with strtoll(..., 0): `-j 010` is 8 jobs, `0x10`
// is 16, and an unsigned `--seed -1` wraps to 18446744073709551615. People
// type decimal; anything else is refused with the option's name.
#include <CLI/CLI.hpp>
#include <cctype>
#include <string>

namespace cli {

/// "010" → "10"; refuses what is not a plain decimal integer ("0x10", "1e3",
/// and a sign on an unsigned option).
inline std::string decimal_integer(std::string& value, bool is_unsigned) {
  std::size_t i = 0;
  bool negative = false;
  if (i < value.size() && (value[i] == '+' || value[i] == '-')) negative = value[i++] == '-';
  if (negative && is_unsigned) return value + " is negative: a count or seed of 0 or more is wanted";
  if (i == value.size()) return value + " is not a whole number";
  for (std::size_t k = i; k < value.size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>(value[k]))) return value + " is not a whole decimal number";
  auto first = value.find_first_not_of('0', i);
  std::string digits = first == std::string::npos ? "0" : value.substr(first);
  value = (negative && digits != "0" ? "-" : "") + digits;
  return {};
}

/// Puts the decimal check in front of every integer option of app and its
/// subcommands (transforms run before the options' own range checks).
inline void require_decimal_integers(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    auto type = opt->get_type_name();
    bool is_unsigned = type.rfind("UINT", 0) == 0;
    if (!is_unsigned && type.rfind("INT", 0) != 0) continue;
    opt->transform(CLI::Validator([is_unsigned](std::string& v) { return decimal_integer(v, is_unsigned); }, ""));
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) require_decimal_integers(*sub);
}

}  // namespace cli
