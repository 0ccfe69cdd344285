#include "evaluator/compile_commands.h"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "common/text.h"

namespace evaluator {

using common::Error;
namespace fs = std::filesystem;

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string basename(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// Build wrappers that come before the real compiler in a recorded command.
bool is_launcher(const std::string& arg) {
  static const std::set<std::string> kLaunchers = {"ccache", "sccache", "distcc", "icecc"};
  return kLaunchers.count(basename(arg)) > 0;
}

size_t compiler_index(const std::vector<std::string>& args) {
  size_t i = 0;
  while (i + 1 < args.size() && is_launcher(args[i])) ++i;
  return i;
}

// Options whose value is the next argument: kept or dropped as a pair, so a
// value is never mistaken for an option or the input.
bool takes_separate_value(std::string_view a) {
  static const std::set<std::string_view> kPairs = {"-Xclang",
                                                    "-mllvm",
                                                    "-x",
                                                    "-include",
                                                    "-isystem",
                                                    "-I",
                                                    "-D",
                                                    "-U",
                                                    "-iquote",
                                                    "-idirafter",
                                                    "-imacros",
                                                    "-isysroot",
                                                    "--sysroot",
                                                    "-target",
                                                    "-Xpreprocessor",
                                                    "-Xassembler",
                                                    "-Xlinker",
                                                    "-arch",
                                                    "-MF",
                                                    "-MT",
                                                    "-MQ",
                                                    "-o",
                                                    "-iprefix",
                                                    "-include-pch",
                                                    "-MJ",
                                                    "--serialize-diagnostics",
                                                    "--output"};
  return kPairs.count(a) > 0;
}

// Flags the bitcode compile must not see: outputs, dependency files, modes
// other than compiling, LTO (the corpus is pre-LTO bitcode already) and the
// flags clang allows only with it (CFI, whole-program devirtualization),
// profile and coverage instrumentation (the front end's llvm.instrprof
// calls, which no code generator selects without its lowering pass: every
// module would fail, and each check-in read as a broken compiler),
// -Werror (a newer clang's warnings must not fail a TU that built before),
// and what turns inlining off.
bool drop_flag(std::string_view a) {
  // -fno-inline*: every function noinline, so the inliner never asks the
  // policy; a debug configuration's setting, not the code's.
  static const std::set<std::string_view> kExact = {"-c",
                                                    "-S",
                                                    "-E",
                                                    "-M",
                                                    "-MM",
                                                    "-MD",
                                                    "-MMD",
                                                    "-MP",
                                                    "-MG",
                                                    "-emit-llvm",
                                                    "-fsyntax-only",
                                                    "-Werror",
                                                    "-fno-lto",
                                                    "-fno-inline",
                                                    "-fno-inline-functions",
                                                    "-fno-inline-small-functions",
                                                    "-fno-inline-functions-called-once"};
  if (kExact.count(a)) return true;
  for (std::string_view p : {"-MF",
                             "-MT",
                             "-MQ",
                             "-MJ",
                             "--serialize-diagnostics",
                             "-Wp,-MD,",
                             "-Wp,-MMD,",
                             "-Werror=",
                             "-flto",
                             "-fembed-bitcode",
                             "-save-temps",
                             "-o",
                             "--output",
                             "-fwhole-program-vtables",
                             "-fvirtual-function-elimination",
                             "-fsplit-lto-unit",
                             "-fsanitize=cfi",
                             "-fsanitize-cfi",
                             "-fprofile-instr-generate",
                             "-fprofile-generate",
                             "-fcs-profile-generate",
                             "-fcoverage-mapping"})
    if (starts_with(a, p)) return true;
  return false;
}

// Of what drop_flag takes out, what changes the code or its outcome, not
// the build's plumbing (outputs, dependency files, modes): people are told.
bool changes_code(std::string_view a) {
  for (std::string_view p :
       {"-Werror", "-fno-inline", "-flto", "-fembed-bitcode", "-fwhole-program-vtables",
        "-fvirtual-function-elimination", "-fsplit-lto-unit", "-fsanitize=cfi", "-fsanitize-cfi",
        "-fprofile-instr-generate", "-fprofile-generate", "-fcs-profile-generate", "-fcoverage-mapping"})
    if (starts_with(a, p)) return true;
  return false;
}

bool is_input(const CompileCommand& c, const std::string& arg) {
  if (arg == c.file) return true;
  if (arg.empty() || arg[0] == '-') return false;
  return (fs::path(c.directory) / arg).lexically_normal() == fs::path(c.file).lexically_normal();
}

// Another input of a command that compiles (and links) several sources at
// once (`cc -o prog a.c main.c`, as a hand-written database records a
// Makefile's): each entry's bitcode is its own file's, and -o with several
// inputs is an error.
bool is_other_input(const CompileCommand& c, const std::string& arg) {
  if (arg.empty() || arg[0] == '-' || is_input(c, arg)) return false;
  static const std::set<std::string> kInputs = {".c", ".cc", ".cpp", ".cxx", ".c++", ".C",  ".m", ".mm", ".s",
                                                ".S", ".cu", ".o",   ".a",   ".so",  ".lo", ".i", ".ii"};
  return kInputs.count(fs::path(arg).extension().string()) > 0;
}

// The double-quoted words of one `clang -###` line.
std::vector<std::string> quoted_words(std::string_view line) {
  std::vector<std::string> out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '"') continue;
    std::string w;
    for (++i; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) ++i;
      w += line[i];
    }
    out.push_back(w);
  }
  return out;
}

}  // namespace

common::Result<std::vector<std::string>> shell_split(std::string_view s) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      if (in_word) out.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (ch == '\\') {
      if (++i < s.size()) word += s[i];
    } else if (ch == '\'') {
      auto end = s.find('\'', i + 1);
      if (end == std::string_view::npos) return Error{"unterminated ' quote in: " + std::string(s)};
      word += s.substr(i + 1, end - i - 1);
      i = end;
    } else if (ch == '"') {
      for (++i;; ++i) {
        if (i >= s.size()) return Error{"unterminated \" quote in: " + std::string(s)};
        if (s[i] == '"') break;
        // Inside double quotes a backslash escapes only these.
        if (s[i] == '\\' && i + 1 < s.size() && std::string_view("\"\\$`\n").find(s[i + 1]) != std::string_view::npos)
          ++i;
        word += s[i];
      }
    } else {
      word += ch;
    }
  }
  if (in_word) out.push_back(std::move(word));
  return out;
}

common::Result<std::vector<CompileCommand>> parse_compile_commands(std::string_view text, const std::string& origin,
                                                                   const std::filesystem::path& base_dir) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // "[json.exception.parse_error.101] parse error at line 3, column 5: …": the position is the help.
    std::string what = e.what();
    if (auto close = what.find("] "); what.starts_with("[json.exception") && close != std::string::npos)
      what = what.substr(close + 2);
    return Error{origin + ": not valid JSON: " + what};
  }
  if (!j.is_array()) return Error{origin + ": not a JSON array of compile commands"};
  std::vector<CompileCommand> out;
  for (size_t i = 0; i < j.size(); ++i) {
    const auto& e = j[i];
    std::string where = origin + ": entry " + std::to_string(i);
    if (!e.is_object()) return Error{where + ": not an object"};
    if (!e.contains("directory") || !e["directory"].is_string()) return Error{where + ": missing 'directory'"};
    if (!e.contains("file") || !e["file"].is_string()) return Error{where + ": missing 'file'"};
    CompileCommand c;
    c.directory = e["directory"].get<std::string>();
    // The format wants it absolute; a relative one is read from the file's
    // own directory, not from wherever driftwatch happens to run.
    if (fs::path(c.directory).is_relative() && !base_dir.empty())
      c.directory = (base_dir / c.directory).lexically_normal().string();
    fs::path file = e["file"].get<std::string>();
    c.file = (file.is_absolute() ? file : fs::path(c.directory) / file).lexically_normal().string();
    if (e.contains("arguments") && e["arguments"].is_array()) {
      for (const auto& a : e["arguments"]) {
        if (!a.is_string()) return Error{where + ": 'arguments' must hold strings"};
        c.arguments.push_back(a.get<std::string>());
      }
    } else if (e.contains("command") && e["command"].is_string()) {
      auto args = shell_split(e["command"].get<std::string>());
      if (!args) return Error{where + ": " + args.error().message};
      c.arguments = *args;
    } else {
      return Error{where + ": needs 'arguments' or 'command'"};
    }
    if (c.arguments.empty()) return Error{where + ": empty command"};
    out.push_back(std::move(c));
  }
  return out;
}

std::string format_compile_commands(const std::vector<CompileCommand>& commands) {
  auto j = nlohmann::ordered_json::array();
  for (const auto& c : commands)
    j.push_back({{"directory", c.directory}, {"file", c.file}, {"arguments", c.arguments}});
  return j.dump(2) + "\n";
}

namespace {
std::string normal_arch(std::string arch) {
  if (arch == "amd64") return "x86_64";
  if (arch == "arm64") return "aarch64";
  if (arch == "i486" || arch == "i586" || arch == "i686") return "i386";
  return arch;
}
}  // namespace

std::string host_arch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__i386__)
  return "i386";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
  return "powerpc64le";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#elif defined(__s390x__)
  return "s390x";
#else
  return "";
#endif
}

std::string command_target_arch(const CompileCommand& c) {
  const auto& args = c.arguments;
  auto first = compiler_index(args);
  std::string arch;
  for (size_t i = first + 1; i < args.size(); ++i) {
    const auto& a = args[i];
    if ((a == "-target" || a == "--target") && i + 1 < args.size())
      arch = args[++i];
    else if (starts_with(a, "--target="))
      arch = a.substr(9);
    else if (a == "-m32")
      arch = "i386";
    else if (a == "-m64" && arch == "i386")
      arch = "x86_64";
    else if (takes_separate_value(a))
      ++i;
  }
  if (!arch.empty()) return normal_arch(arch.substr(0, arch.find('-')));
  // A cross compiler names its triple: aarch64-linux-gnu-gcc, arm-none-eabi-g++-12.
  if (first >= args.size()) return "";
  auto name = basename(args[first]);
  for (const char* driver : {"-gcc", "-g++", "-cc", "-c++", "-clang", "-clang++"}) {
    auto at = name.rfind(driver);
    if (at == std::string::npos || at == 0) continue;
    auto rest = name.substr(at + std::string_view(driver).size());
    if (!rest.empty() && (rest[0] != '-' || rest.find_first_not_of("-0123456789.") != std::string::npos)) continue;
    auto triple = name.substr(0, at);
    if (triple.find('-') == std::string::npos) continue;  // "x-gcc" is no triple
    return normal_arch(triple.substr(0, triple.find('-')));
  }
  return "";
}

std::vector<std::string> unknown_arguments(std::string_view output) {
  // The driver's own lines only ("clang: error: unknown argument: '-fipa-pta'",
  // "clang-19: error: unknown argument '-fconserve-stack'; did you mean …?"),
  // never a source line a diagnostic quotes.
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < output.size()) {
    auto end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    auto line = output.substr(start, end - start);
    start = end + 1;
    auto colon = line.find(": error: unknown argument");
    if (colon == std::string_view::npos || !starts_with(line, "clang") ||
        line.substr(0, colon).find(' ') != std::string_view::npos)
      continue;
    auto from = line.find('\'', colon);
    auto to = from == std::string_view::npos ? from : line.find('\'', from + 1);
    if (to == std::string_view::npos) continue;
    std::string flag(line.substr(from + 1, to - from - 1));
    if (!flag.empty() && flag[0] == '-' && std::find(out.begin(), out.end(), flag) == out.end()) out.push_back(flag);
  }
  return out;
}

std::optional<Language> command_language(const CompileCommand& c) {
  const auto& args = c.arguments;
  auto first = compiler_index(args);
  for (size_t i = first + 1; i < args.size(); ++i) {
    std::string lang;
    if (args[i] == "-x" && i + 1 < args.size()) {
      lang = args[i + 1];
    } else if (starts_with(args[i], "-x") && args[i].size() > 2) {
      lang = args[i].substr(2);
    } else {
      if (takes_separate_value(args[i])) ++i;
      continue;
    }
    if (lang == "c") return Language::C;
    if (lang == "c++") return Language::Cxx;
    return std::nullopt;
  }
  auto by_ext = language_of_path(c.file);
  // g++ and clang++ compile a .c file as C++.
  if (by_ext == Language::C && first < args.size() && basename(args[first]).find("++") != std::string::npos)
    return Language::Cxx;
  return by_ext;
}

common::Result<BitcodeInvocation> rewrite_for_bitcode(const CompileCommand& c, const std::string& bc_path,
                                                      const ClangTools& tools, const std::string& opt_level) {
  auto lang = command_language(c);
  if (!lang) return Error{c.file + ": not a C or C++ compile"};
  std::vector<std::string> kept, left_out;
  std::string opt;
  bool saw_input = false;
  const auto& args = c.arguments;
  for (size_t i = compiler_index(args) + 1; i < args.size(); ++i) {
    const auto& a = args[i];
    // A precompiled header was made by another compiler, or at the -O level
    // replaced here ("__OPTIMIZE__ predefined macro was disabled in PCH
    // file"): read the header itself, which CMake also passes with -include.
    if (a == "-include-pch") {
      left_out.push_back(a);
      ++i;
      continue;
    }
    if (a == "-Xclang" && i + 1 < args.size() && args[i + 1] == "-include-pch") {
      left_out.push_back("-include-pch");
      i += (i + 3 < args.size() && args[i + 2] == "-Xclang") ? 3 : 1;
      continue;
    }
    // An -O level given to cc1 directly comes after the driver's and wins:
    // it is the TU's level, replaced like any other.
    if (a == "-Xclang" && i + 1 < args.size() && starts_with(args[i + 1], "-O")) {
      opt = args[++i];
      continue;
    }
    if (takes_separate_value(a)) {
      bool drop = drop_flag(a);
      if (!drop) kept.push_back(a);
      if (i + 1 < args.size() && !drop) kept.push_back(args[i + 1]);
      ++i;
    } else if (starts_with(a, "-O")) {
      opt = a;  // the last one wins, as in the compiler
    } else if (starts_with(a, "-fsanitize=") && a.find("cfi") != std::string::npos) {
      // CFI, needing -flto, out of a list; the other sanitizers stay.
      std::string rest;
      for (const auto& s : common::split(a.substr(std::string("-fsanitize=").size()), ','))
        if (!starts_with(s, "cfi")) rest += (rest.empty() ? "" : ",") + s;
      if (!rest.empty()) kept.push_back("-fsanitize=" + rest);
      left_out.push_back("-fsanitize=cfi");
    } else if (drop_flag(a) || is_other_input(c, a)) {
      if (changes_code(a)) left_out.push_back(a);
      continue;
    } else {
      saw_input = saw_input || is_input(c, a);
      kept.push_back(a);
    }
  }
  if (!saw_input) kept.push_back(c.file);
  BitcodeInvocation inv;
  inv.language = *lang;
  inv.left_out = std::move(left_out);
  inv.opt_level_defaulted = opt_level.empty() && (opt.empty() || opt == "-O0");
  inv.opt_level = !opt_level.empty() ? opt_level : inv.opt_level_defaulted ? "-Oz" : opt;
  const auto& driver = *lang == Language::C ? tools.cc : tools.cxx;
  inv.bitcode_argv = {driver};
  inv.bitcode_argv.insert(inv.bitcode_argv.end(), kept.begin(), kept.end());
  inv.bitcode_argv.push_back(inv.opt_level);
  // -w: warnings of a newer clang are noise here; errors still fail the TU.
  for (const char* a : {"-Xclang", "-disable-llvm-passes", "-emit-llvm", "-c", "-w"}) inv.bitcode_argv.push_back(a);
  // C that GCC compiles with a warning, clang 16 on refuses by default
  // (-w does not lower these): old code must not drop out of a suite.
  if (*lang == Language::C)
    for (const char* a : {"-Wno-error=implicit-function-declaration", "-Wno-error=implicit-int",
                          "-Wno-error=int-conversion", "-Wno-error=incompatible-function-pointer-types"})
      inv.bitcode_argv.push_back(a);
  inv.bitcode_argv.push_back("-o");
  inv.bitcode_argv.push_back(bc_path);
  auto obj =
      bc_path.size() > 3 && bc_path.ends_with(".bc") ? bc_path.substr(0, bc_path.size() - 3) + ".o" : bc_path + ".o";
  inv.probe_argv = {driver, "-###"};
  inv.probe_argv.insert(inv.probe_argv.end(), kept.begin(), kept.end());
  for (const auto& a : {inv.opt_level, std::string("-c"), std::string("-o"), obj}) inv.probe_argv.push_back(a);
  return inv;
}

common::Result<std::vector<std::string>> cc1_from_dry_run(std::string_view output, std::string_view input) {
  std::vector<std::string> words;
  int jobs = 0;
  size_t start = 0;
  while (start < output.size()) {
    auto end = output.find('\n', start);
    if (end == std::string_view::npos) end = output.size();
    auto line = output.substr(start, end - start);
    start = end + 1;
    if (line.find("\"-cc1\"") == std::string_view::npos) continue;
    ++jobs;
    words = quoted_words(line);
  }
  if (jobs == 0) return Error{"clang -### printed no -cc1 job"};
  if (jobs > 1) return Error{"clang -### runs " + std::to_string(jobs) + " -cc1 jobs for one TU"};
  auto cc1 = std::find(words.begin(), words.end(), "-cc1");
  std::vector<std::string> out;
  for (auto it = cc1; it != words.end(); ++it) {
    const auto& w = *it;
    bool has_value = w == "-o" || w == "-dependency-file" || w == "-MT";
    if (w == "-x" && it + 1 != words.end()) {
      ++it;  // the language; the next word, if not an option, is the input
      if (it + 1 != words.end() && !starts_with(*(it + 1), "-")) ++it;
      continue;
    }
    if (has_value) {
      if (it + 1 != words.end()) ++it;
      continue;
    }
    if (w == input || w == "-sys-header-deps") continue;
    out.push_back(w);
  }
  return out;
}

Language cc1_language(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "-x" && i + 1 < args.size() && starts_with(args[i + 1], "c++")) return Language::Cxx;
    if (starts_with(a, "-std=") && a.find("++") != std::string::npos) return Language::Cxx;
    if (a == "-main-file-name" && i + 1 < args.size() && language_of_path(args[i + 1]) == Language::Cxx)
      return Language::Cxx;
  }
  return Language::C;
}

bool has_optnone(std::string_view ir) {
  size_t start = 0;
  while (start < ir.size()) {
    auto end = ir.find('\n', start);
    if (end == std::string_view::npos) end = ir.size();
    auto line = ir.substr(start, end - start);
    start = end + 1;
    if (!starts_with(line, "attributes #")) continue;
    for (size_t p = line.find("optnone"); p != std::string_view::npos; p = line.find("optnone", p + 1)) {
      bool left = p > 0 && (line[p - 1] == ' ' || line[p - 1] == '{');
      bool right = p + 7 < line.size() && (line[p + 7] == ' ' || line[p + 7] == '}');
      if (left && right) return true;
    }
  }
  return false;
}

}  // namespace evaluator
