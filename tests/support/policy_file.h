#pragma once
// A policy file's text with its metadata edited and its hash fixed up, as
// another tool would write it: past the corruption check, so the loader's
// other checks (or the compiler) meet it.
#include <doctest/doctest.h>

#include <string>

#include "common/hash.h"

namespace testing {

/// `from` replaced by `to` (the same length) in the text, the hash recomputed.
inline std::string edited_policy(std::string text, const std::string& from, const std::string& to) {
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  REQUIRE(from.size() == to.size());
  text.replace(pos, from.size(), to);
  // The layout: "meta N\n" N bytes "weights M\n" M bytes "sha256 H\n".
  auto section = [&](size_t at, const std::string& word, std::string& body) {
    REQUIRE(text.compare(at, word.size() + 1, word + " ") == 0);
    auto nl = text.find('\n', at);
    auto size = std::stoul(text.substr(at + word.size() + 1, nl - at - word.size() - 1));
    body = text.substr(nl + 1, size);
    return nl + 1 + size;
  };
  std::string meta_text, weights;
  auto weights_at = section(text.find("\nmeta ") + 1, "meta", meta_text);
  auto hash_at = section(weights_at, "weights", weights);
  REQUIRE(text.compare(hash_at, 7, "sha256 ") == 0);
  return text.substr(0, hash_at) + "sha256 " + common::sha256_hex(meta_text + weights) + "\n";
}

}  // namespace testing
