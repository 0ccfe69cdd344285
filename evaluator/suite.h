#pragma once
// A suite: a manifest (suite.json) beside an ml-compiler-opt corpus that names
// every module with the SHA-256 of its bitcode, where the suite came from, and
// which modules link together. Parsing and validation are pure; load_suite()
// adds the checks against the files.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "evaluator/language.h"

namespace evaluator {

struct SuiteModule {
  std::string name;    ///< the corpus module name: files <name>.bc and <name>.cmd
  std::string sha256;  ///< of <name>.bc, lower-case hex
  Language language = Language::C;
  std::string package;                   ///< the Debian source package, "" if none
  std::string source;                    ///< the source file, relative to its project; "" if unknown
  std::vector<std::string> link_groups;  ///< the linked programs/libraries this module is part of
};

enum class LinkKind { Program, SharedLibrary };

/// Modules that one linker invocation puts together: per-module sizes count
/// linkonce_odr/COMDAT functions once per module; the linked size counts them once.
struct LinkGroup {
  std::string name;  ///< unique in the suite, e.g. "bzip2/bzip2"
  LinkKind kind = LinkKind::Program;
  std::vector<std::string> flags;  ///< after the objects, e.g. "-lm"; the driver is clang++ if any module is C++
};

struct SuiteOrigin {
  std::string kind;  ///< "debian-packages", "compile-commands" or "imported-corpus"
  std::string path;  ///< the compile_commands.json or the imported corpus, if any
  struct Package {
    std::string name, version;
  };
  std::vector<Package> packages;
  std::string recipe_hash;  ///< default suites: the hash of their table entries; a change rebuilds them
};

/// Optional evaluation settings a suite carries; absent keys mean the evaluator's defaults.
struct MetricSettings {
  std::string opt_level;             ///< e.g. "Oz"
  std::vector<std::string> metrics;  ///< e.g. "text_bytes", "code_bytes", "compile_seconds"
};

struct Suite {
  std::string name;
  std::string description;
  SuiteOrigin origin;
  std::vector<Language> languages;   ///< derived from the modules, sorted
  std::vector<SuiteModule> modules;  ///< sorted by name
  std::vector<LinkGroup> link_groups;
  std::optional<MetricSettings> metrics;
};

inline constexpr const char* kSuiteManifestFile = "suite.json";
inline constexpr int kSuiteFormat = 1;

/// Suite names become directory names: [a-z0-9][a-z0-9._-]*, at most 64 characters.
common::Status check_suite_name(std::string_view name);
/// Everything that can be checked without files: names, hashes, link groups.
common::Status validate_suite(const Suite& suite);
/// Parses and validates suite.json text; errors name `origin` and the module.
common::Result<Suite> parse_suite_manifest(std::string_view text, const std::string& origin);
/// Deterministic JSON text (same suite, same bytes).
std::string format_suite_manifest(const Suite& suite);
/// Sorts modules, fills `languages` from them.
void normalize_suite(Suite& suite);
/// Every module's name, in suite order.
std::vector<std::string> module_names(const Suite& suite);
/// The modules of one link group, in suite order.
std::vector<std::string> link_group_members(const Suite& suite, const std::string& group);
/// "12 modules (9 c, 3 c++)".
std::string describe_modules(const Suite& suite);

/// Reads <dir>/suite.json without touching the modules (for listings).
common::Result<Suite> read_suite_manifest(const std::filesystem::path& dir);
/// Reads the manifest and verifies every module against the files: the
/// corpus lists the same modules, each .bc exists and has the recorded
/// SHA-256. The error names the module.
common::Result<Suite> load_suite(const std::filesystem::path& dir);
/// Normalizes, validates and writes <dir>/suite.json (the corpus is the caller's).
common::Status write_suite_manifest(const std::filesystem::path& dir, Suite suite);

}  // namespace evaluator
