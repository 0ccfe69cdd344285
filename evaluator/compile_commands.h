#pragma once
// compile_commands.json and the command-line surgery that turns one of its
// compiles into clang-19 emitting pre-optimization bitcode (the approach of
// ml-compiler-opt's extract_ir: the frontend at the TU's own -O level, LLVM's
// passes disabled). All pure: the processes run in extract.cpp.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "evaluator/language.h"

namespace evaluator {

/// One entry of compile_commands.json.
struct CompileCommand {
  std::string directory;               ///< where the compiler ran
  std::string file;                    ///< the source, absolute (made so when parsed)
  std::vector<std::string> arguments;  ///< argv, compiler first
};

/// POSIX-shell word splitting for the "command" form: quotes and backslashes.
common::Result<std::vector<std::string>> shell_split(std::string_view command);
/// Parses compile_commands.json ("arguments" or "command" entries); errors
/// name `origin` and the entry, or the syntax error's line and column. A
/// relative "directory" is taken from `base_dir` (the file's own directory).
common::Result<std::vector<CompileCommand>> parse_compile_commands(std::string_view text, const std::string& origin,
                                                                   const std::filesystem::path& base_dir = {});
/// compile_commands.json text ("arguments" form) for `commands`.
std::string format_compile_commands(const std::vector<CompileCommand>& commands);
/// The language the entry compiles: -x, then the extension (a C++ driver makes .c C++);
/// nullopt for assembly, Objective-C and the like.
std::optional<Language> command_language(const CompileCommand& c);

/// The architecture an entry compiles for when it names one: --target=,
/// -target, or a cross compiler's prefix (aarch64-linux-gnu-gcc); "i386" for
/// -m32; "" when it names none. (x86_64 for amd64, aarch64 for arm64.)
std::string command_target_arch(const CompileCommand& c);
/// The architecture driftwatch was built for, in the same words.
std::string host_arch();
/// The flags of clang's "unknown argument: '-fipa-pta'" errors in `output`.
std::vector<std::string> unknown_arguments(std::string_view output);

struct ClangTools {
  std::string cc = "clang-19";
  std::string cxx = "clang++-19";
};

/// The two clang runs for one TU.
struct BitcodeInvocation {
  Language language = Language::C;
  /// clang … -Xclang -disable-llvm-passes -emit-llvm -c -o <bc>: the corpus module.
  std::vector<std::string> bitcode_argv;
  /// clang -### … -c: its -cc1 line, the object compile, becomes <m>.cmd.
  std::vector<std::string> probe_argv;
  std::string opt_level;             ///< e.g. "-O2"
  bool opt_level_defaulted = false;  ///< none or -O0 in the entry: -Oz instead (-O0 would add optnone)
  /// What was taken out that would have made it other code than the
  /// project's, or failed it (-fno-inline, -flto=thin, a profile's
  /// instrumentation, CFI, a precompiled header, -Werror): said in the summary.
  std::vector<std::string> left_out;
};

/// Rewrites an entry: launcher and output/dependency/LTO/-Werror/-fno-inline
/// flags, a precompiled header and the command's other inputs out, the TU's
/// -O level kept (-Oz if none or -O0) unless `opt_level` (e.g. "-Oz")
/// replaces it. Errors: not a C/C++ compile.
common::Result<BitcodeInvocation> rewrite_for_bitcode(const CompileCommand& c, const std::string& bc_path,
                                                      const ClangTools& tools = {}, const std::string& opt_level = "");

/// From `clang -###` output: the -cc1 args (starting with "-cc1") without the
/// input, -o, -x and dependency-file options, as ml-compiler-opt's .cmd files hold them.
common::Result<std::vector<std::string>> cc1_from_dry_run(std::string_view output, std::string_view input);

/// The language a -cc1 command line compiles (for imported corpora): -x, -std=,
/// -main-file-name; C when nothing says C++.
Language cc1_language(const std::vector<std::string>& cc1_args);

/// True when textual IR (llvm-dis output) gives any function the optnone attribute.
bool has_optnone(std::string_view llvm_ir);

}  // namespace evaluator
