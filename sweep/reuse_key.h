#pragma once
// When an evaluation may take another's results instead of compiling: the key
// of everything that decides the objects an evaluation compiles and what it
// measures from them. Two check-ins that build a byte-identical compiler
// (docs-, test- or CMake-only commits) share it. Pure: the caller hashes.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sweep {

/// Bumped whenever driftwatch changes what an evaluation compiles or measures
/// (flags it adds, how it reads sizes, how it links): older results then stop
/// matching.
/// 2: Mach-O and COFF objects measured by their code sections, and results
/// that shared agreeing defaults keyed apart.
inline constexpr int kEvaluationRevision = 2;

struct ReuseKeyInputs {
  std::map<std::string, std::string> artifact_digests;  ///< every recipe artifact: name → sha256 of its bytes
  /// The shared libraries the artifacts load: "artifact: library name" → sha256 of its bytes
  /// ("not found" for one the loader cannot find).
  std::map<std::string, std::string> library_digests;
  std::vector<std::string> compile;  ///< the compile argv, artifact paths written {name} (see with_artifact_names)
  std::vector<std::string> cc1;      ///< likewise, the cc1 words
  std::string ml_flag_prefix;
  std::int64_t timeout_ms = 0;
  std::string suite_manifest_hash;  ///< sha256 of suite.json (it holds every module's bitcode sha256)
  std::string module_args_digest;   ///< of the suite's per-module command lines (<name>.cmd), "" when none
  std::string policy_hash;          ///< the policy file's content hash (its margin included)
  /// Whether defaults the policy agreed with may be taken from its objects
  /// rather than compiled (the recipe's share_agreeing_defaults, a policy
  /// with a margin, no --compile-every-default). The figures should not
  /// differ, but a user who turns sharing off doubts exactly that, so asks
  /// for results that compiled every default.
  bool shared_defaults = false;
};

/// `argv` with each artifact's path replaced by "{name}": the command as
/// configured, the same for every cache entry holding the same compiler.
std::vector<std::string> with_artifact_names(std::vector<std::string> argv,
                                             const std::map<std::string, std::string>& artifact_paths);

/// One digest of the artifacts: the single artifact's own sha256, else the
/// sha256 of "name sha256" lines (for "identical compiler <digest12>").
std::string compiler_digest(const std::map<std::string, std::string>& artifact_digests);

/// The key (lower-case hex sha256); "" when there are no artifact digests.
std::string reuse_key(const ReuseKeyInputs& in);

}  // namespace sweep
