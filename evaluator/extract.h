#pragma once
// Turns compile commands into corpus modules: one clang-19 bitcode compile per
// TU, in parallel, failures recorded and the rest carried on. The plan (which
// TUs, under which names) is pure; extract_bitcode() runs the processes.
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "evaluator/compile_commands.h"

namespace evaluator {

struct ExtractOptions {
  int jobs = 1;
  /// Module names are source paths relative to `root`; sources outside it are
  /// left out. Empty: the deepest directory holding every source.
  std::filesystem::path root;
  std::string name_prefix;           ///< prepended to every module name, e.g. "bzip2/"
  std::vector<std::string> exclude;  ///< glob_match patterns on the relative source path
  /// Replaces every TU's -O level (e.g. "-Oz": the frontend then marks every
  /// function minsize/optsize, as code built for size is). Empty: keep each TU's.
  std::string opt_level;
  ClangTools tools;
  std::string llvm_dis = "llvm-dis-19";
  std::chrono::seconds timeout{300};                 ///< per clang run
  std::function<void(const std::string&)> progress;  ///< one line per failed TU
};

struct PlannedModule {
  std::string name;    ///< corpus module name
  std::string source;  ///< relative to the root
  size_t command = 0;  ///< index into the compile commands
};

struct ExtractPlan {
  std::vector<PlannedModule> modules;  ///< sorted by name
  std::filesystem::path root;
  int duplicates = 0;    ///< the same source compiled again (e.g. -fPIC for a shared library): shortest command kept
  int not_c_family = 0;  ///< assembly, Objective-C, …
  int probes = 0;        ///< build-system compiler probes (CMakeFiles/…)
  int outside_root = 0;
  int excluded = 0;
  int other_target = 0;  ///< cross-compiles (aarch64-linux-gnu-gcc, --target=…): not code for this host's compilers
};
/// A TU failure's message in one line: the compiler's status and its first
/// diagnostic ("clang: exit status 1: a.c:3:1: error: …"), the reason.
std::string one_line_reason(const std::string& failure_message);
/// "; 2 duplicate compiles skipped; 1 build-system probes skipped…": what the
/// plan left out, "" when nothing.
std::string skipped_text(const ExtractPlan& plan);

/// Path globs: '*' and '?' stay within a directory, "**" crosses directories
/// ("src/**" is everything under src/, "**/test/*.c" any test/ directory).
bool glob_match(std::string_view pattern, std::string_view path);
/// Which TUs become which modules.
ExtractPlan plan_extraction(const std::vector<CompileCommand>& commands, const ExtractOptions& options);

struct ExtractedModule {
  std::string name, source, sha256;
  Language language = Language::C;
  bool opt_level_defaulted = false;
  /// Flags clang-19 does not know (GCC's -fipa-pta, say), dropped after it refused them.
  std::vector<std::string> dropped_flags;
  /// Flags taken out that would have changed its code or failed it (BitcodeInvocation::left_out).
  std::vector<std::string> left_out;
};

struct TuFailure {
  std::string name;     ///< the module it would have been
  std::string message;  ///< the first lines of the compiler's error
};

struct ExtractReport {
  ExtractPlan plan;
  std::vector<ExtractedModule> modules;  ///< sorted by name
  std::vector<TuFailure> failures;       ///< sorted by name
  double seconds = 0;
};

/// Writes <corpus_dir>/<name>.bc and .cmd for every planned TU that compiles;
/// a failed TU leaves no files behind.
ExtractReport extract_bitcode(const std::vector<CompileCommand>& commands, const std::filesystem::path& corpus_dir,
                              const ExtractOptions& options);

/// "9 modules in 2.1 s; 1 TU failed; 7 duplicate compiles skipped".
std::string summarize(const ExtractReport& r);

}  // namespace evaluator
