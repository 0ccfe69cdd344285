#pragma once
// JSON text of a value that may carry outside bytes: a compiler's or a build
// step's message, a commit subject, an exception's words. nlohmann's plain
// dump() throws on invalid UTF-8, and where the text is an evaluation's or a
// job's record that throw fails the job on every attempt, every night; here
// such bytes become U+FFFD, as common::valid_utf8 does for database text.
#include <nlohmann/json.hpp>
#include <string>

namespace common {

inline std::string json_text(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace common
