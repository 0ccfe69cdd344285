#pragma once
// The ml-compiler-opt corpus layout, so users can bring an MLGO corpus
// unchanged and take ours to ml-compiler-opt: a directory with
// corpus_description.json naming the modules, and per module <m>.bc
// (pre-optimization bitcode) and <m>.cmd (the clang -cc1 command line that
// compiles it, NUL-separated, without input and output).
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace evaluator {

struct CorpusDescription {
  std::vector<std::string> modules;  ///< relative paths without extension
  bool has_thinlto = false;          ///< then each module also has <m>.thinlto.bc
  /// When present, every module compiles with these args and .cmd files may be absent.
  std::optional<std::vector<std::string>> global_command_override;
  /// Keys of the file that driftwatch does not read: ml-compiler-opt's newer
  /// ones, or a misspelling (a "global_command_overide" would silently
  /// compile each module by its own .cmd), which the import names.
  std::vector<std::string> unknown_keys;
};

inline constexpr const char* kCorpusDescriptionFile = "corpus_description.json";
/// The keys of that file driftwatch reads.
inline constexpr const char* kCorpusDescriptionKeys[] = {"modules", "has_thinlto", "global_command_override"};

/// Parses corpus_description.json; errors name `origin`. Unknown keys are
/// listed, not refused (ml-compiler-opt adds keys over time); module names
/// are checked.
common::Result<CorpusDescription> parse_corpus_description(std::string_view text, const std::string& origin);
/// The JSON text, keys in ml-compiler-opt's order.
std::string format_corpus_description(const CorpusDescription& d);
/// A module name is a path name (see check_path_name): corpora are untrusted.
common::Status check_module_name(std::string_view name);
/// A name from untrusted input that becomes a path under a directory of ours:
/// relative, no empty, ".", ".." or ".git" (any case) segment, no control
/// character. The error names `what` ("module name") and the name, on one line.
common::Status check_path_name(std::string_view what, std::string_view name);

/// The args of a .cmd file: NUL-separated, a trailing NUL ignored.
std::vector<std::string> parse_cmd(std::string_view bytes);
/// NUL-separated, no trailing NUL (as clang's .llvmcmd section).
std::string format_cmd(const std::vector<std::string>& args);

/// A corpus module's -cc1 line without the files its build wrote beside the
/// object: -dependency-file, -MT, -sys-header-deps (any Ninja or Make build),
/// -split-dwarf-file/-output (ml-compiler-opt deletes them too). Two
/// evaluation compiles would write them at once, in driftwatch's directory.
/// `removed` (if given) gets the options taken out.
std::vector<std::string> without_build_outputs(const std::vector<std::string>& cc1_args,
                                               std::vector<std::string>* removed = nullptr);

/// <dir>/<module><ext>, e.g. ext ".bc", ".cmd", ".thinlto.bc".
std::filesystem::path module_file(const std::filesystem::path& dir, const std::string& module, std::string_view ext);

/// Reads a corpus directory and checks that every module's files exist; the
/// error names the first module whose file is missing.
common::Result<CorpusDescription> read_corpus(const std::filesystem::path& dir);
/// Writes <dir>/corpus_description.json (the modules' files are the caller's).
common::Status write_corpus_description(const std::filesystem::path& dir, const CorpusDescription& d);
/// A module's own -cc1 line is one driftwatch runs: it starts with -cc1 and
/// nothing in it loads code into the compiler or writes elsewhere (a corpus
/// is untrusted input). The error names the module and the argument.
common::Status check_module_command(const std::string& module, const std::vector<std::string>& args);
/// The -cc1 args that compile `module`: its .cmd, or the global override.
common::Result<std::vector<std::string>> read_module_command(const std::filesystem::path& dir,
                                                             const CorpusDescription& d, const std::string& module);

/// Whether the last -O of a module's command is -Oz.
bool made_at_oz(const std::vector<std::string>& args);
/// Whether every module of the corpus in `dir` was made for -Oz (made_at_oz
/// of its command): only then is a learned compile that took every default
/// decision the default's own compile. Elsewhere (-O2 bitcode) LLVM's ML
/// size cap stops the ML inliner on the default's path, and sharing the
/// defaults would measure the default wrong. False when a command cannot
/// be read.
bool corpus_made_at_oz(const std::filesystem::path& dir, const std::vector<std::string>& modules);

}  // namespace evaluator
