#include "sweep/reuse_key.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "common/hash.h"

namespace sweep {

std::vector<std::string> with_artifact_names(std::vector<std::string> argv,
                                             const std::map<std::string, std::string>& artifact_paths) {
  // Longest path first, so that a path that is a prefix of another never eats part of it.
  std::vector<std::pair<std::string, std::string>> paths(artifact_paths.begin(), artifact_paths.end());
  std::sort(paths.begin(), paths.end(), [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  for (auto& word : argv)
    for (const auto& [name, path] : paths) {
      if (path.empty()) continue;
      for (auto at = word.find(path); at != std::string::npos; at = word.find(path, at + name.size() + 2))
        word.replace(at, path.size(), "{" + name + "}");
    }
  return argv;
}

std::string compiler_digest(const std::map<std::string, std::string>& artifact_digests) {
  if (artifact_digests.size() == 1) return artifact_digests.begin()->second;
  std::string lines;
  for (const auto& [name, digest] : artifact_digests) lines += name + " " + digest + "\n";
  return common::sha256_hex(lines);
}

std::string reuse_key(const ReuseKeyInputs& in) {
  if (in.artifact_digests.empty()) return "";
  // nlohmann's objects are ordered by key: the same inputs give the same text.
  nlohmann::json j{{"revision", kEvaluationRevision},
                   {"artifacts", in.artifact_digests},
                   {"libraries", in.library_digests},
                   {"compile", in.compile},
                   {"cc1", in.cc1},
                   {"ml_flag_prefix", in.ml_flag_prefix},
                   {"timeout_ms", in.timeout_ms},
                   {"suite", in.suite_manifest_hash},
                   {"module_args", in.module_args_digest},
                   {"policy", in.policy_hash}};
  // Only when on: the key of recipes that never share stays what it was.
  if (in.shared_defaults) j["shared_defaults"] = true;
  return common::sha256_hex(j.dump());
}

}  // namespace sweep
