#include "evaluator/suite.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/read_file.h"
#include "common/hash.h"
#include "common/text.h"
#include "evaluator/corpus.h"
#include "evaluator/files.h"

namespace evaluator {

using common::Error;
using nlohmann::json;
using nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

const char* link_kind_name(LinkKind k) { return k == LinkKind::Program ? "program" : "shared-library"; }

bool is_sha256(std::string_view s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); });
}

// Typed field access that turns every mismatch into one line naming the place.
struct Reader {
  std::string where;
  common::Result<std::string> str(const json& j, const char* key, bool required) const {
    if (!j.contains(key)) {
      if (required) return Error{where + ": missing '" + key + "'"};
      return std::string();
    }
    if (!j[key].is_string()) return Error{where + ": '" + key + "' must be a string"};
    return j[key].get<std::string>();
  }
  common::Result<std::vector<std::string>> strings(const json& j, const char* key) const {
    std::vector<std::string> out;
    if (!j.contains(key)) return out;
    if (!j[key].is_array()) return Error{where + ": '" + key + "' must be an array of strings"};
    for (const auto& v : j[key]) {
      if (!v.is_string()) return Error{where + ": '" + key + "' must be an array of strings"};
      out.push_back(v.get<std::string>());
    }
    return out;
  }
};

// Unwraps a Result or returns its error from the enclosing function.
#define DW_TRY(var, ...)                \
  auto var##_r = (__VA_ARGS__);         \
  if (!var##_r) return var##_r.error(); \
  auto var = std::move(var##_r).value()

common::Result<SuiteModule> parse_module(const json& j, const std::string& origin, size_t index) {
  std::string where = origin + ": modules[" + std::to_string(index) + "]";
  if (!j.is_object()) return Error{where + ": must be an object"};
  SuiteModule m;
  DW_TRY(name, Reader{where}.str(j, "name", true));
  m.name = name;
  where = origin + ": module " + m.name;
  Reader r{where};
  DW_TRY(sha, r.str(j, "sha256", true));
  m.sha256 = sha;
  DW_TRY(lang, r.str(j, "language", true));
  auto l = parse_language(lang);
  if (!l) return Error{where + ": language must be \"c\" or \"c++\", not \"" + lang + "\""};
  m.language = *l;
  DW_TRY(package, r.str(j, "package", false));
  m.package = package;
  DW_TRY(source, r.str(j, "source", false));
  m.source = source;
  DW_TRY(groups, r.strings(j, "link_groups"));
  m.link_groups = groups;
  return m;
}

common::Result<LinkGroup> parse_link_group(const json& j, const std::string& origin) {
  if (!j.is_object()) return Error{origin + ": each link group must be an object"};
  LinkGroup g;
  DW_TRY(name, Reader{origin + ": link group"}.str(j, "name", true));
  g.name = name;
  Reader r{origin + ": link group " + g.name};
  DW_TRY(kind, r.str(j, "kind", false));
  if (kind == "program" || kind.empty()) {
    g.kind = LinkKind::Program;
  } else if (kind == "shared-library") {
    g.kind = LinkKind::SharedLibrary;
  } else {
    return Error{r.where + ": kind must be \"program\" or \"shared-library\""};
  }
  DW_TRY(flags, r.strings(j, "flags"));
  g.flags = flags;
  return g;
}

common::Result<SuiteOrigin> parse_origin(const json& j, const std::string& origin) {
  SuiteOrigin o;
  if (!j.is_object()) return Error{origin + ": 'origin' must be an object"};
  Reader r{origin + ": origin"};
  DW_TRY(kind, r.str(j, "kind", true));
  o.kind = kind;
  DW_TRY(path, r.str(j, "path", false));
  o.path = path;
  DW_TRY(hash, r.str(j, "recipe_hash", false));
  o.recipe_hash = hash;
  if (j.contains("packages")) {
    if (!j["packages"].is_array()) return Error{r.where + ": 'packages' must be an array"};
    for (const auto& p : j["packages"]) {
      if (!p.is_object()) return Error{r.where + ": each package must be an object"};
      DW_TRY(pname, r.str(p, "name", true));
      DW_TRY(version, r.str(p, "version", false));
      o.packages.push_back({pname, version});
    }
  }
  return o;
}

/// Link flags go to clang on our command line, so only those that cannot run
/// a program or read a file of the manifest's choosing (-fuse-ld=, -B, -Wl,
/// --ld-path, -specs, @file and paths all can): -l<name> and a few switches.
common::Status check_link_flag(const std::string& group, const std::string& flag) {
  static const std::set<std::string> kSwitches = {"-pthread", "-rdynamic", "-static", "-no-pie"};
  auto lib_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '+' || c == '.' || c == '-';
  };
  bool library = flag.size() > 2 && flag.starts_with("-l") && flag[2] != '-' &&
                 std::all_of(flag.begin() + 2, flag.end(), lib_char);
  if (library || kSwitches.count(flag)) return common::Ok{};
  return Error{"link group " + group + ": flag " + common::quoted(flag) +
               " is not allowed (only -l<name>, -pthread, -rdynamic, -static, -no-pie)"};
}

}  // namespace

common::Status check_suite_name(std::string_view name) {
  auto ok_char = [](char c) { return std::islower(c) || std::isdigit(c) || c == '.' || c == '_' || c == '-'; };
  bool ok = !name.empty() && name.size() <= 64 && (std::islower(name[0]) || std::isdigit(name[0])) &&
            std::all_of(name.begin(), name.end(), ok_char);
  if (!ok)
    return Error{"invalid suite name '" + std::string(name) +
                 "': use lower-case letters, digits, '.', '_' and '-', starting with a letter or digit"};
  return common::Ok{};
}

common::Status validate_suite(const Suite& s) {
  if (auto st = check_suite_name(s.name); !st) return st;
  std::string where = "suite " + s.name;
  if (s.modules.empty()) return Error{where + ": no modules"};
  std::set<std::string> groups, names;
  for (const auto& g : s.link_groups) {
    if (g.name.empty()) return Error{where + ": a link group has no name"};
    if (auto st = check_path_name("link group name", g.name); !st) return Error{where + ": " + st.error().message};
    for (const auto& f : g.flags)
      if (auto st = check_link_flag(g.name, f); !st) return Error{where + ": " + st.error().message};
    if (!groups.insert(g.name).second) return Error{where + ": link group " + g.name + " is declared twice"};
  }
  // Each group is linked to a file of its name: "a" and "a/b" would need "a"
  // to be a file and a directory at once.
  for (const auto& outer : groups)
    for (const auto& inner : groups)
      if (inner.size() > outer.size() && inner.compare(0, outer.size() + 1, outer + "/") == 0)
        return Error{where + ": link group " + inner + " lies inside link group " + outer +
                     " (each is linked to a file of its name)"};
  std::map<std::string, int> members;
  for (const auto& m : s.modules) {
    if (auto st = check_module_name(m.name); !st) return Error{where + ": " + st.error().message};
    if (!names.insert(m.name).second) return Error{where + ": module " + m.name + " is listed twice"};
    if (!is_sha256(m.sha256))
      return Error{where + ": module " + m.name + ": sha256 must be 64 lower-case hex digits, not '" + m.sha256 + "'"};
    for (const auto& g : m.link_groups) {
      if (!groups.count(g)) return Error{where + ": module " + m.name + ": undeclared link group " + g};
      ++members[g];
    }
  }
  for (const auto& g : s.link_groups)
    if (!members.count(g.name)) return Error{where + ": link group " + g.name + " has no modules"};
  return common::Ok{};
}

void normalize_suite(Suite& s) {
  std::sort(s.modules.begin(), s.modules.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  std::set<Language> langs;
  for (const auto& m : s.modules) langs.insert(m.language);
  s.languages.assign(langs.begin(), langs.end());
}

common::Result<Suite> parse_suite_manifest(std::string_view text, const std::string& origin) {
  auto j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{origin + ": not a JSON object"};
  if (!j.contains("format") || !j["format"].is_number_integer()) return Error{origin + ": missing integer 'format'"};
  if (j["format"].get<int>() != kSuiteFormat)
    return Error{origin + ": format " + std::to_string(j["format"].get<int>()) +
                 " is not supported (this driftwatch reads " + std::to_string(kSuiteFormat) + ")"};
  Suite s;
  Reader r{origin};
  DW_TRY(name, r.str(j, "name", true));
  s.name = name;
  DW_TRY(description, r.str(j, "description", false));
  s.description = description;
  if (!j.contains("origin")) return Error{origin + ": missing 'origin'"};
  DW_TRY(o, parse_origin(j["origin"], origin));
  s.origin = o;
  if (!j.contains("modules") || !j["modules"].is_array()) return Error{origin + ": missing array 'modules'"};
  for (size_t i = 0; i < j["modules"].size(); ++i) {
    DW_TRY(m, parse_module(j["modules"][i], origin, i));
    s.modules.push_back(m);
  }
  if (j.contains("link_groups")) {
    if (!j["link_groups"].is_array()) return Error{origin + ": 'link_groups' must be an array"};
    for (const auto& g : j["link_groups"]) {
      DW_TRY(group, parse_link_group(g, origin));
      s.link_groups.push_back(group);
    }
  }
  if (j.contains("metrics")) {
    const auto& mj = j["metrics"];
    if (!mj.is_object()) return Error{origin + ": 'metrics' must be an object"};
    Reader mr{origin + ": metrics"};
    MetricSettings ms;
    DW_TRY(opt, mr.str(mj, "opt_level", false));
    ms.opt_level = opt;
    DW_TRY(metrics, mr.strings(mj, "metrics"));
    ms.metrics = metrics;
    s.metrics = ms;
  }
  normalize_suite(s);
  if (auto st = validate_suite(s); !st) return Error{origin + ": " + st.error().message};
  return s;
}

std::string format_suite_manifest(const Suite& s) {
  ordered_json j;
  j["format"] = kSuiteFormat;
  j["name"] = s.name;
  j["description"] = s.description;
  ordered_json o;
  o["kind"] = s.origin.kind;
  if (!s.origin.path.empty()) o["path"] = s.origin.path;
  if (!s.origin.packages.empty()) {
    o["packages"] = ordered_json::array();
    for (const auto& p : s.origin.packages) o["packages"].push_back({{"name", p.name}, {"version", p.version}});
  }
  if (!s.origin.recipe_hash.empty()) o["recipe_hash"] = s.origin.recipe_hash;
  j["origin"] = o;
  j["languages"] = ordered_json::array();
  for (auto l : s.languages) j["languages"].push_back(language_name(l));
  if (s.metrics) {
    ordered_json m;
    if (!s.metrics->opt_level.empty()) m["opt_level"] = s.metrics->opt_level;
    if (!s.metrics->metrics.empty()) m["metrics"] = s.metrics->metrics;
    j["metrics"] = m;
  }
  j["link_groups"] = ordered_json::array();
  for (const auto& g : s.link_groups)
    j["link_groups"].push_back({{"name", g.name}, {"kind", link_kind_name(g.kind)}, {"flags", g.flags}});
  j["modules"] = ordered_json::array();
  for (const auto& m : s.modules) {
    ordered_json e;
    e["name"] = m.name;
    e["sha256"] = m.sha256;
    e["language"] = language_name(m.language);
    if (!m.package.empty()) e["package"] = m.package;
    if (!m.source.empty()) e["source"] = m.source;
    if (!m.link_groups.empty()) e["link_groups"] = m.link_groups;
    j["modules"].push_back(e);
  }
  return j.dump(2) + "\n";
}

std::vector<std::string> module_names(const Suite& suite) {
  std::vector<std::string> out;
  for (const auto& m : suite.modules) out.push_back(m.name);
  return out;
}

std::vector<std::string> link_group_members(const Suite& s, const std::string& group) {
  std::vector<std::string> out;
  for (const auto& m : s.modules)
    if (std::find(m.link_groups.begin(), m.link_groups.end(), group) != m.link_groups.end()) out.push_back(m.name);
  return out;
}

std::string describe_modules(const Suite& s) {
  int c = 0, cxx = 0;
  for (const auto& m : s.modules) ++(m.language == Language::C ? c : cxx);
  return fmt::format("{} modules ({} c, {} c++)", s.modules.size(), c, cxx);
}

common::Result<Suite> read_suite_manifest(const fs::path& dir) {
  auto file = dir / kSuiteManifestFile;
  if (!fs::exists(file)) return Error{dir.string() + " is not a suite (no " + kSuiteManifestFile + ")"};
  auto text = common::read_file(file);
  if (!text) return text.error();
  return parse_suite_manifest(*text, file.string());
}

common::Result<Suite> load_suite(const fs::path& dir) {
  auto s = read_suite_manifest(dir);
  if (!s) return s.error();
  auto corpus = read_corpus(dir);
  if (!corpus) return Error{"suite " + s->name + ": " + corpus.error().message};
  std::set<std::string> in_corpus(corpus->modules.begin(), corpus->modules.end());
  for (const auto& m : s->modules) {
    std::string where = "suite " + s->name + ": module " + m.name;
    if (!in_corpus.erase(m.name)) return Error{where + " is not in " + kCorpusDescriptionFile};
    auto bc = module_file(dir, m.name, ".bc");
    if (!fs::is_regular_file(bc)) return Error{where + ": missing file " + bc.string()};
    auto sha = common::sha256_file(bc);
    if (!sha) return Error{where + ": " + sha.error().message};
    if (*sha != m.sha256)
      return Error{where + ": " + bc.filename().string() + " does not match the manifest (sha256 " +
                   sha->substr(0, 12) + "…, manifest says " + m.sha256.substr(0, 12) + "…)"};
  }
  if (!in_corpus.empty())
    return Error{"suite " + s->name + ": module " + *in_corpus.begin() + " is in the corpus but not in the manifest"};
  return s;
}

common::Status write_suite_manifest(const fs::path& dir, Suite suite) {
  normalize_suite(suite);
  if (auto st = validate_suite(suite); !st) return st;
  return write_file(dir / kSuiteManifestFile, format_suite_manifest(suite));
}

}  // namespace evaluator
