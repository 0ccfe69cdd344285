#include "evaluator/corpus.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "common/ml_inliner_options.h"
#include "common/read_file.h"
#include "common/text.h"
#include "evaluator/files.h"

namespace evaluator {

using common::Error;
namespace fs = std::filesystem;

common::Result<CorpusDescription> parse_corpus_description(std::string_view text, const std::string& origin) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{origin + ": not a JSON object"};
  CorpusDescription d;
  if (!j.contains("modules") || !j["modules"].is_array()) return Error{origin + ": missing array 'modules'"};
  for (const auto& m : j["modules"]) {
    if (!m.is_string()) return Error{origin + ": 'modules' must hold strings"};
    auto name = m.get<std::string>();
    if (auto s = check_module_name(name); !s) return Error{origin + ": " + s.error().message};
    d.modules.push_back(name);
  }
  if (d.modules.empty()) return Error{origin + ": no modules"};
  for (const auto& [key, value] : j.items())
    if (std::find(std::begin(kCorpusDescriptionKeys), std::end(kCorpusDescriptionKeys), key) ==
        std::end(kCorpusDescriptionKeys))
      d.unknown_keys.push_back(key);
  if (j.contains("has_thinlto")) {
    if (!j["has_thinlto"].is_boolean()) return Error{origin + ": 'has_thinlto' must be true or false"};
    d.has_thinlto = j["has_thinlto"].get<bool>();
  }
  if (j.contains("global_command_override")) {
    const auto& o = j["global_command_override"];
    // ml-compiler-opt writes a placeholder string for "to be filled in"; it cannot compile anything.
    if (!o.is_array()) return Error{origin + ": 'global_command_override' is not filled in (must be an array of args)"};
    std::vector<std::string> args;
    for (const auto& a : o) {
      if (!a.is_string()) return Error{origin + ": 'global_command_override' must hold strings"};
      args.push_back(a.get<std::string>());
    }
    // ml-compiler-opt writes ["<UNSPECIFIED>"] for ThinLTO corpora: the command is the user's to supply.
    for (const auto& a : args)
      if (a == "<UNSPECIFIED>")
        return Error{origin +
                     ": 'global_command_override' is the placeholder [\"<UNSPECIFIED>\"] that "
                     "ml-compiler-opt writes for ThinLTO corpora: replace it with the -cc1 args that compile "
                     "every module"};
    d.global_command_override = args;
  }
  return d;
}

std::string format_corpus_description(const CorpusDescription& d) {
  nlohmann::ordered_json j;
  if (d.global_command_override) j["global_command_override"] = *d.global_command_override;
  j["has_thinlto"] = d.has_thinlto;
  j["modules"] = d.modules;
  return j.dump(2) + "\n";
}

common::Status check_module_name(std::string_view name) { return check_path_name("module name", name); }

common::Status check_path_name(std::string_view what, std::string_view name) {
  auto refuse = [&](const std::string& why) {
    return Error{std::string(what) + " " + common::quoted(name) + " " + why};
  };
  if (name.empty()) return Error{"empty " + std::string(what)};
  if (name.front() == '/') return refuse("must be a relative path");
  for (char c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return refuse("contains a control character");
  for (const auto& part : common::split(name, '/')) {
    if (part.empty() || part == "." || part == "..") return refuse("has an empty, '.' or '..' path segment");
    std::string lower(part);
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == ".git") return refuse("has a '.git' path segment");
  }
  return common::Ok{};
}

std::vector<std::string> parse_cmd(std::string_view bytes) {
  if (!bytes.empty() && bytes.back() == '\0') bytes.remove_suffix(1);
  if (bytes.empty()) return {};
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    auto nul = bytes.find('\0', start);
    out.emplace_back(bytes.substr(start, nul - start));
    if (nul == std::string_view::npos) break;
    start = nul + 1;
  }
  return out;
}

std::string format_cmd(const std::vector<std::string>& args) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) out += '\0';
    out += args[i];
  }
  return out;
}

std::vector<std::string> without_build_outputs(const std::vector<std::string>& args,
                                               std::vector<std::string>* removed) {
  static const std::set<std::string_view> kWithValue = {"-dependency-file", "-MT", "-MQ", "-split-dwarf-file",
                                                        "-split-dwarf-output"};
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    auto name = std::string_view(a).substr(0, a.find('='));
    bool joined = name.size() < a.size() && kWithValue.count(name);
    if (kWithValue.count(a) || joined || a == "-sys-header-deps") {
      if (removed) removed->push_back(std::string(name));
      if (kWithValue.count(a)) ++i;  // and its value
      continue;
    }
    out.push_back(a);
  }
  return out;
}

fs::path module_file(const fs::path& dir, const std::string& module, std::string_view ext) {
  return dir / (module + std::string(ext));
}

common::Status check_module_command(const std::string& module, const std::vector<std::string>& args) {
  if (args.empty() || args.front() != "-cc1") {
    // Words split by lines, not NULs (written by hand or by another tool):
    // say so, as one line, rather than show the first of its lines.
    if (!args.empty() && args.front().rfind("-cc1\n", 0) == 0)
      return Error{"module " + module +
                   ": its .cmd file separates arguments by newlines; they must be separated by "
                   "NUL bytes (as LLVM's extract_ir.py writes them)"};
    std::string line;
    for (const auto& a : args) line += (line.empty() ? "" : " ") + a;
    for (auto& c : line)
      if (c == '\n' || c == '\r') c = ' ';
    return Error{"module " + module + ": its command line does not start with -cc1 (" + line + ")"};
  }
  for (const auto& a : args) {
    bool refused = a == "-o";
    // Plugins; files written beside the object (run by two compiles of the
    // module at once, in driftwatch's directory).
    for (const char* p : {"-load", "-fplugin", "-fpass-plugin", "-plugin", "-add-plugin", "-split-dwarf-output",
                          "-opt-record-file", "-stats-file", "-ftime-trace", "-dependency-file",
                          "-serialize-diagnostic-file", "-header-include-file"})
      refused |= a.rfind(p, 0) == 0;
    // The ML inliner's own options, which driftwatch sets.
    for (const char* p : common::kMlInlinerOptionPrefixes) refused |= a.rfind(p, 0) == 0;
    // driftwatch's own placeholders would put its paths there.
    refused |= a.find("{input}") != std::string::npos || a.find("{output}") != std::string::npos;
    if (refused)
      return Error{"module " + module + ": its command line has " + common::quoted(a) + ", which driftwatch does not run"};
  }
  return common::Ok{};
}

common::Result<CorpusDescription> read_corpus(const fs::path& dir) {
  auto file = dir / kCorpusDescriptionFile;
  if (!fs::is_directory(dir)) return Error{"corpus " + dir.string() + " is not a directory"};
  if (!fs::exists(file)) return Error{"corpus " + dir.string() + " has no " + kCorpusDescriptionFile};
  auto text = common::read_file(file);
  if (!text) return text.error();
  auto d = parse_corpus_description(*text, file.string());
  if (!d) return d.error();
  for (const auto& m : d->modules) {
    std::vector<std::string> exts = {".bc"};
    if (!d->global_command_override) exts.push_back(".cmd");
    if (d->has_thinlto) exts.push_back(".thinlto.bc");
    for (const auto& ext : exts)
      if (!fs::is_regular_file(module_file(dir, m, ext)))
        return Error{"corpus " + dir.string() + ": module " + m + ": missing " + m + ext};
  }
  return d;
}

common::Status write_corpus_description(const fs::path& dir, const CorpusDescription& d) {
  return write_file(dir / kCorpusDescriptionFile, format_corpus_description(d));
}

common::Result<std::vector<std::string>> read_module_command(const fs::path& dir, const CorpusDescription& d,
                                                             const std::string& module) {
  if (d.global_command_override) return *d.global_command_override;
  auto bytes = common::read_file(module_file(dir, module, ".cmd"));
  if (!bytes) return Error{"module " + module + ": " + bytes.error().message};
  return parse_cmd(*bytes);
}

bool made_at_oz(const std::vector<std::string>& args) {
  auto last = std::find_if(args.rbegin(), args.rend(), [](const std::string& a) { return a.starts_with("-O"); });
  return last != args.rend() && *last == "-Oz";
}

bool corpus_made_at_oz(const fs::path& dir, const std::vector<std::string>& modules) {
  auto corpus = read_corpus(dir);
  if (!corpus) return false;
  for (const auto& m : modules) {
    auto args = read_module_command(dir, *corpus, m);
    if (!args || !made_at_oz(*args)) return false;
  }
  return true;
}

}  // namespace evaluator
