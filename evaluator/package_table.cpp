#include "evaluator/package_table.h"

#include <toml++/toml.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "common/hash.h"
#include "evaluator/extract.h"

namespace evaluator {
namespace embedded {
const std::vector<std::pair<std::string_view, std::string_view>>& suite_tables();
}

using common::Error;

namespace {

// Bump when the way packages become modules changes, so cached suites rebuild.
constexpr const char* kPipelineVersion = "1";

// The one table of keys: section → allowed keys.
const std::map<std::string, std::set<std::string>> kKeys = {
    {"suite", {"description", "opt_level"}},
    {"package", {"name", "suite", "prepare", "build", "compile", "exclude", "link"}},
    {"compile", {"sources", "exclude", "flags"}},
    {"link", {"name", "kind", "modules", "exclude", "flags"}},
};

common::Status check_keys(const toml::table& t, const std::string& section, const std::string& where) {
  for (const auto& [k, v] : t)
    if (!kKeys.at(section).count(std::string(k.str())))
      return Error{where + ": unknown key '" + std::string(k.str()) + "'"};
  return common::Ok{};
}

common::Result<std::vector<std::string>> strings(const toml::table& t, const char* key, const std::string& where) {
  std::vector<std::string> out;
  const auto* node = t.get(key);
  if (!node) return out;
  const auto* arr = node->as_array();
  if (!arr) return Error{where + ": " + key + " must be an array of strings"};
  for (const auto& v : *arr) {
    auto s = v.value<std::string>();
    if (!s) return Error{where + ": " + key + " must be an array of strings"};
    out.push_back(*s);
  }
  return out;
}

using Field = std::pair<const char*, std::vector<std::string>*>;

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + '\x1f';
  return out;
}

common::Result<LinkGroupSpec> parse_link(const toml::table& t, const std::string& where) {
  if (auto s = check_keys(t, "link", where); !s) return s.error();
  LinkGroupSpec g;
  g.name = t["name"].value_or<std::string>("");
  if (g.name.empty()) return Error{where + ": a link group needs a name"};
  auto kind = t["kind"].value_or<std::string>("program");
  if (kind == "shared-library") {
    g.kind = LinkKind::SharedLibrary;
  } else if (kind != "program") {
    return Error{where + ": link group " + g.name + ": kind must be \"program\" or \"shared-library\""};
  }
  for (auto [key, field] : {Field{"modules", &g.modules}, Field{"exclude", &g.exclude}, Field{"flags", &g.flags}}) {
    auto v = strings(t, key, where + ": link group " + g.name);
    if (!v) return v.error();
    *field = *v;
  }
  if (g.modules.empty()) return Error{where + ": link group " + g.name + " lists no modules"};
  return g;
}

common::Result<PackageRecipe> parse_package(const toml::table& t, const std::string& origin) {
  PackageRecipe p;
  p.name = t["name"].value_or<std::string>("");
  if (p.name.empty()) return Error{origin + ": a [[package]] has no name"};
  auto where = origin + ": package " + p.name;
  if (auto s = check_keys(t, "package", where); !s) return s.error();
  p.suite = t["suite"].value_or<std::string>("");
  p.prepare = t["prepare"].value_or<std::string>("");
  p.build = t["build"].value_or<std::string>("");
  auto exclude = strings(t, "exclude", where);
  if (!exclude) return exclude.error();
  p.exclude = *exclude;
  if (const auto* c = t["compile"].as_table()) {
    if (auto s = check_keys(*c, "compile", where + ": [compile]"); !s) return s.error();
    for (auto [key, field] : {Field{"sources", &p.compile.sources}, Field{"exclude", &p.compile.exclude},
                              Field{"flags", &p.compile.flags}}) {
      auto v = strings(*c, key, where + ": compile");
      if (!v) return v.error();
      *field = *v;
    }
  }
  if (p.build.empty() == p.compile.sources.empty())
    return Error{where + ": needs exactly one of 'build' (a command run under bear) or [compile] sources"};
  if (const auto* links = t["link"].as_array()) {
    for (const auto& l : *links) {
      if (!l.is_table()) return Error{where + ": [[package.link]] entries must be tables"};
      auto g = parse_link(*l.as_table(), where);
      if (!g) return g.error();
      p.links.push_back(*g);
    }
  }
  std::ostringstream canon;
  canon << kPipelineVersion << '\n'
        << p.name << '\n'
        << p.prepare << '\n'
        << p.build << '\n'
        << join(p.compile.sources) << '\n'
        << join(p.compile.exclude) << '\n'
        << join(p.compile.flags) << '\n'
        << join(p.exclude) << '\n';
  for (const auto& g : p.links)
    canon << g.name << ' ' << static_cast<int>(g.kind) << ' ' << join(g.modules) << ' ' << join(g.exclude) << ' '
          << join(g.flags) << '\n';
  p.content_hash = common::sha256_hex(canon.str());
  return p;
}

}  // namespace

const SuiteSpec* SuiteTable::find(std::string_view name) const {
  for (const auto& s : suites)
    if (s.name == name) return &s;
  return nullptr;
}

common::Result<SuiteTable> parse_suite_table(std::string_view text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return Error{origin + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description())};
  }
  for (const auto& [k, v] : root)
    if (k.str() != "suites" && k.str() != "package")
      return Error{origin + ": unknown key '" + std::string(k.str()) + "'"};
  SuiteTable table;
  const auto* suites = root["suites"].as_table();
  if (!suites || suites->empty()) return Error{origin + ": no [suites.NAME] tables"};
  for (const auto& [k, v] : *suites) {
    SuiteSpec s;
    s.name = std::string(k.str());
    if (auto st = check_suite_name(s.name); !st) return Error{origin + ": " + st.error().message};
    if (!v.is_table()) return Error{origin + ": suites." + s.name + " must be a table"};
    if (auto st = check_keys(*v.as_table(), "suite", origin + ": suites." + s.name); !st) return st.error();
    s.description = (*v.as_table())["description"].value_or<std::string>("");
    s.opt_level = (*v.as_table())["opt_level"].value_or<std::string>("");
    // -O0 would mark every function optnone: nothing to inline.
    static const std::set<std::string> kLevels = {"", "-O1", "-O2", "-O3", "-Os", "-Oz"};
    if (!kLevels.count(s.opt_level))
      return Error{origin + ": suites." + s.name + ": opt_level must be one of -O1 -O2 -O3 -Os -Oz, not '" +
                   s.opt_level + "'"};
    table.suites.push_back(s);
  }
  // toml++ iterates tables in key order; keep the file's order (smoke, train, holdout).
  std::sort(table.suites.begin(), table.suites.end(), [&](const auto& a, const auto& b) {
    return (*suites)[a.name].node()->source().begin.line < (*suites)[b.name].node()->source().begin.line;
  });
  std::set<std::string> seen;
  const auto* packages = root["package"].as_array();
  if (!packages) return Error{origin + ": no [[package]] entries"};
  for (const auto& node : *packages) {
    if (!node.is_table()) return Error{origin + ": [[package]] entries must be tables"};
    auto p = parse_package(*node.as_table(), origin);
    if (!p) return p.error();
    if (!seen.insert(p->name).second)
      return Error{origin + ": package " + p->name + " is listed twice (a package belongs to one suite)"};
    auto it = std::find_if(table.suites.begin(), table.suites.end(), [&](const auto& s) { return s.name == p->suite; });
    if (it == table.suites.end())
      return Error{origin + ": package " + p->name + ": suite '" + p->suite + "' is not declared in [suites]"};
    it->packages.push_back(*p);
  }
  for (auto& s : table.suites) {
    if (s.packages.empty()) return Error{origin + ": suite " + s.name + " has no packages"};
    std::string canon = s.description + '\n' + (s.opt_level.empty() ? "" : "opt_level " + s.opt_level + '\n');
    for (const auto& p : s.packages) canon += p.content_hash + '\n';
    s.content_hash = common::sha256_hex(canon);
  }
  return table;
}

const SuiteTable& default_suite_table() {
  static const SuiteTable table = [] {
    for (const auto& [path, text] : embedded::suite_tables())
      if (path == "default.toml") return parse_suite_table(text, "samples/suites/default.toml (built in)").take();
    throw common::Fatal("the built-in suite table samples/suites/default.toml is missing");
  }();
  return table;
}

std::string fill_placeholders(std::string_view command, int jobs, const ClangTools& tools,
                              const std::string& build_dir) {
  const std::map<std::string, std::string> values = {
      {"jobs", std::to_string(jobs)}, {"cc", tools.cc}, {"cxx", tools.cxx}, {"build", build_dir}};
  std::string out;
  for (size_t i = 0; i < command.size(); ++i) {
    auto end = command[i] == '{' ? command.find('}', i) : std::string_view::npos;
    auto it =
        end == std::string_view::npos ? values.end() : values.find(std::string(command.substr(i + 1, end - i - 1)));
    if (it == values.end()) {
      out += command[i];
      continue;
    }
    out += it->second;
    i = end;
  }
  return out;
}

std::vector<CompileCommand> recorded_commands(const CompileRecipe& r, const std::filesystem::path& source_dir,
                                              const std::vector<std::string>& files, const ClangTools& tools) {
  std::vector<CompileCommand> out;
  auto any = [](const std::vector<std::string>& globs, const std::string& f) {
    return std::any_of(globs.begin(), globs.end(), [&](const auto& g) { return glob_match(g, f); });
  };
  for (const auto& f : files) {
    auto lang = language_of_path(f);
    if (!lang || !any(r.sources, f) || any(r.exclude, f)) continue;
    CompileCommand c;
    c.directory = source_dir.string();
    c.file = (source_dir / f).lexically_normal().string();
    c.arguments = {*lang == Language::C ? tools.cc : tools.cxx};
    c.arguments.insert(c.arguments.end(), r.flags.begin(), r.flags.end());
    for (const auto& a : {std::string("-c"), f, std::string("-o"), f + ".o"}) c.arguments.push_back(a);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace evaluator
