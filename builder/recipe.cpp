#include "builder/recipe.h"

#include <algorithm>
#include <cctype>

#include <toml++/toml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "common/hash.h"
#include "common/ml_inliner_options.h"
#include "common/read_file.h"
#include "common/text.h"

namespace builder {
namespace embedded {
const std::vector<std::pair<std::string_view, std::string_view>>& recipe_files();
}

namespace {

using common::Error;

// The one table of recipe keys: section → allowed keys.
const std::map<std::string, std::set<std::string>> kKeys = {
    {"",
     {"name", "description", "timeout", "launcher", "ccache_remote_storage", "jobs", "configure", "build", "env",
      "artifacts", "compile"}},
    {"compile", {"command", "ml_flag_prefix", "cc1", "share_agreeing_defaults", "timeout"}},
    {"configure", {"command", "skip_if_exists"}},
    {"build", {"command"}},
};

/// A compile line as argv: split on any whitespace (a multi-line TOML string
/// too). No shell runs it, so quotes would reach the compiler as they are:
/// they are refused rather than passed on.
common::Result<std::vector<std::string>> words(const std::string& line, const std::string& key,
                                               const std::string& origin) {
  if (line.find_first_of("'\"\\") != std::string::npos)
    return Error{origin + ": " + key + " is split on whitespace, not by a shell: quotes and backslashes are not "
                 "supported"};
  std::vector<std::string> out;
  std::string word;
  for (char ch : line + ' ')
    if (std::isspace(static_cast<unsigned char>(ch))) {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word += ch;
    }
  return out;
}

common::Status check_keys(const toml::table& t, const std::string& section, const std::string& origin) {
  const auto& allowed = kKeys.at(section);
  for (const auto& [k, v] : t) {
    if (allowed.count(std::string(k.str()))) continue;
    // Every key it could have been: one wrong guess at a time is slow.
    std::string known;
    for (const auto& a : allowed) known += (known.empty() ? "" : ", ") + a;
    return Error{origin + ": unknown key '" + (section.empty() ? "" : section + ".") + std::string(k.str()) + "' (" +
                 (section.empty() ? "the top level" : "[" + section + "]") + " takes " + known + ")"};
  }
  return common::Ok{};
}

/// Every key of the right type: `configure = "cmake …"` where a [configure]
/// table belongs, or `jobs = "8"`, would otherwise be dropped silently (a
/// build without the user's configure step, filed under the new recipe).
common::Status check_types(const toml::table& root, const std::string& origin) {
  for (const char* section : {"configure", "build", "env", "artifacts", "compile"})
    if (root.contains(section) && !root[section].is_table())
      return Error{origin + ": '" + section + "' must be a table ([" + section + "] with its keys below it)"};
  auto strings = [&](const toml::table& t, const std::string& prefix,
                     std::initializer_list<const char*> keys) -> common::Status {
    for (const char* k : keys)
      if (t.contains(k) && !t[k].is_string()) return Error{origin + ": '" + prefix + k + "' must be a string"};
    return common::Ok{};
  };
  if (auto s = strings(root, "", {"name", "description", "launcher", "ccache_remote_storage"}); !s) return s;
  if (root.contains("jobs") && !root["jobs"].is_integer()) return Error{origin + ": 'jobs' must be a whole number"};
  if (const auto* c = root["configure"].as_table())
    if (auto s = strings(*c, "configure.", {"command", "skip_if_exists"}); !s) return s;
  if (const auto* b = root["build"].as_table())
    if (auto s = strings(*b, "build.", {"command"}); !s) return s;
  if (const auto* c = root["compile"].as_table())
  {
    if (auto s = strings(*c, "compile.", {"command", "ml_flag_prefix", "cc1", "timeout"}); !s) return s;
    if (c->contains("share_agreeing_defaults") && !(*c)["share_agreeing_defaults"].is_boolean())
      return Error{origin + ": 'compile.share_agreeing_defaults' must be true or false"};
  }
  return common::Ok{};
}

common::Result<std::map<std::string, std::string>> string_table(const toml::table& root, const char* key,
                                                                const std::string& origin) {
  std::map<std::string, std::string> out;
  const auto* t = root[key].as_table();
  if (!t) return out;
  for (const auto& [k, v] : *t) {
    // TOML puts every key below a [table] in it: `timeout = "8h"` written
    // after [env] would be an environment variable, and the recipe's timeout
    // silently the default.
    static const std::set<std::string> scalar_top_level = {"name",     "description", "timeout",
                                                           "launcher", "jobs",        "ccache_remote_storage"};
    if (scalar_top_level.count(std::string(k.str())))
      return Error{origin + ": " + key + "." + std::string(k.str()) + " is a top-level key of the recipe under [" +
                   key + "]: write top-level keys above the first [table]"};
    auto s = v.value<std::string>();
    if (!s) return Error{origin + ": " + key + "." + std::string(k.str()) + " must be a string"};
    out[std::string(k.str())] = *s;
  }
  return out;
}

/// Everything that changes what a build does, in a fixed order.
std::string canonical(const Recipe& r) {
  std::ostringstream out;
  out << "configure=" << r.configure << "\nmarker=" << r.configure_marker << "\nbuild=" << r.build
      << "\nlauncher=" << r.launcher << "\n";
  for (const auto& [k, v] : r.env) out << "env " << k << "=" << v << "\n";
  for (const auto& [k, v] : r.artifacts) out << "artifact " << k << "=" << v << "\n";
  return out.str();
}

/// How the built compiler is run on each module: not part of the build, but
/// part of what every evaluation under this recipe measured.
std::string measuring(const Recipe& r) {
  std::ostringstream out;
  out << "compile";
  for (const auto& w : r.compile) out << '\x1f' << w;
  out << "\nml_flag_prefix=" << r.ml_flag_prefix << "\ncc1";
  for (const auto& w : r.cc1) out << '\x1f' << w;
  out << "\n";
  // Only when set: the recipes written before it keep their hash.
  if (r.compile_timeout != Recipe::kDefaultCompileTimeout)
    out << "compile_timeout=" << r.compile_timeout.count() << "\n";
  return out.str();
}

bool placeholder_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
}

/// The placeholder that starts at text[i] ('{'): "{name}" with a name of
/// letters, digits, '_' and '-' (an artifact's name, as [artifacts] gives
/// it); nullopt for any other '{'.
std::optional<std::string> placeholder_at(const std::string& text, size_t i) {
  size_t j = i + 1;
  while (j < text.size() && placeholder_char(text[j])) ++j;
  if (j == i + 1 || j >= text.size() || text[j] != '}') return std::nullopt;
  return text.substr(i + 1, j - i - 1);
}

// Only "{name}" is a placeholder, so a shell's own braces pass through: a
// group "{ a; b; }", "${VAR}", a brace expansion {a,b}. "{{" is a literal
// '{' (awk's '{{print $1}'). A name nobody fills is refused, not left in.
common::Result<std::string> fill(const std::string& text, const std::map<std::string, std::string>& values,
                                 const std::string& what) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') {
      out += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    auto key = i > 0 && text[i - 1] == '$' ? std::nullopt : placeholder_at(text, i);
    if (!key) {
      out += '{';
      continue;
    }
    auto it = values.find(*key);
    if (it == values.end()) return Error{what + ": unknown placeholder {" + *key + "}"};
    out += it->second;
    i += key->size() + 1;
  }
  return out;
}

/// The first placeholder of a shell command written inside quotes
/// ('{build}', "-B{build}", sh -c '… {build} …'). Each is filled as one
/// shell word, quoted as needed, and inside quotes that quoting is literal:
/// once a path holds a space (a data directory's) every build fails, and is
/// cached as broken. A command substitution starts its quoting afresh
/// ("$(dirname {build})" is fine), a comment is not run, and {jobs} is a
/// number that is never quoted.
std::optional<std::string> quoted_placeholder(const std::string& command) {
  // Quoting contexts, innermost last: '\'', '"', or '(' for a $( … ) that
  // resets quoting (as does a `…` substitution, '`').
  std::vector<char> open;
  auto quoted = [&] { return !open.empty() && (open.back() == '\'' || open.back() == '"'); };
  for (size_t i = 0; i < command.size(); ++i) {
    char c = command[i];
    char in = open.empty() ? 0 : open.back();
    if (in == '\'' && c == '\'') {
      open.pop_back();
      continue;
    }
    if (in == '\'' && c != '{') continue;
    if (c == '\\' && in != '\'') {
      ++i;
      continue;
    }
    if (c == '$' && in != '\'' && i + 1 < command.size() && command[i + 1] == '(') {
      open.push_back('(');
      ++i;
      continue;
    }
    if (c == '`') {
      if (in == '`')
        open.pop_back();
      else
        open.push_back('`');
      continue;
    }
    if (in == '"') {
      if (c == '"') open.pop_back();
    } else if (c == '\'' || c == '"') {
      open.push_back(c);
      continue;
    } else if (c == ')' && in == '(') {
      open.pop_back();
      continue;
    } else if (c == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(command[i - 1])))) {
      while (i < command.size() && command[i] != '\n') ++i;  // a comment, to the end of its line
      continue;
    }
    if (c != '{') continue;
    if (i + 1 < command.size() && command[i + 1] == '{') {
      ++i;
      continue;
    }
    auto key = i > 0 && command[i - 1] == '$' ? std::nullopt : placeholder_at(command, i);
    if (key && *key != "jobs" && quoted()) return "{" + *key + "}";
  }
  return std::nullopt;
}

}  // namespace

common::Result<Recipe> parse_recipe(const std::string& text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return Error{origin + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description())};
  }
  if (auto s = check_keys(root, "", origin); !s) return s.error();
  if (auto s = check_types(root, origin); !s) return s.error();
  Recipe r;
  r.name = root["name"].value_or<std::string>("");
  if (r.name.empty()) return Error{origin + ": missing key 'name'"};
  if (!common::is_directory_name(r.name))
    return Error{origin + ": name " + common::quoted(r.name) + " must not be '.' or '..', nor hold a '/' (it names the cache's directories)"};
  r.description = root["description"].value_or<std::string>("");
  if (auto t = root["timeout"].value<std::string>()) {
    auto d = common::parse_duration(*t);
    if (!d || d->count() == 0) return Error{origin + ": timeout must be a duration like \"30m\", not \"" + *t + "\""};
    r.timeout = *d;
  } else if (root.contains("timeout")) {
    return Error{origin + ": timeout must be a duration string like \"30m\""};
  }
  r.launcher = root["launcher"].value_or<std::string>("ccache");
  r.ccache_remote_storage = root["ccache_remote_storage"].value_or<std::string>("");
  auto jobs = root["jobs"].value_or<int64_t>(0);
  if (jobs < 0 || jobs > 1024) return Error{origin + ": 'jobs' must be 0 (one per core) to 1024, not " + std::to_string(jobs)};
  r.jobs = static_cast<int>(jobs);
  if (const auto* c = root["configure"].as_table()) {
    if (auto s = check_keys(*c, "configure", origin); !s) return s.error();
    r.configure = (*c)["command"].value_or<std::string>("");
    r.configure_marker = (*c)["skip_if_exists"].value_or<std::string>("");
    if (r.configure.empty()) return Error{origin + ": missing key 'configure.command'"};
  }
  const auto* b = root["build"].as_table();
  if (!b) return Error{origin + ": missing table [build]"};
  if (auto s = check_keys(*b, "build", origin); !s) return s.error();
  r.build = (*b)["command"].value_or<std::string>("");
  if (r.build.empty()) return Error{origin + ": missing key 'build.command'"};
  for (const auto& [key, command] :
       {std::pair{"configure.command", &r.configure}, std::pair{"build.command", &r.build}})
    if (auto p = quoted_placeholder(*command))
      return Error{origin + ": " + key + " quotes " + *p +
                   ": write it bare, it becomes one shell word quoted as needed (for sh -c '…', pass it as an "
                   "argument: sh -c '… \"$1\" …' sh " +
                   *p + ")"};
  auto env = string_table(root, "env", origin);
  if (!env) return env.error();
  r.env = *env;
  auto artifacts = string_table(root, "artifacts", origin);
  if (!artifacts) return artifacts.error();
  r.artifacts = *artifacts;
  if (r.artifacts.empty()) return Error{origin + ": missing table [artifacts] (e.g. compiler = \"{build}/bin/cc\")"};
  std::map<std::string, std::string> by_file;  // the cache keeps each artifact under its file name
  for (const auto& [name, path] : r.artifacts) {
    if (name == "input" || name == "output")
      return Error{origin + ": artifact name '" + name + "' is taken: {" + name + "} is the module being compiled"};
    if (name.empty() || !std::all_of(name.begin(), name.end(), placeholder_char))
      return Error{origin + ": artifact name '" + name + "' cannot be a placeholder: use letters, digits, '_' and '-'"};
    auto file = std::filesystem::path(path).filename().string();
    // Its file is copied into the cache: a directory (or nothing) would be
    // missing from every check-in's build, and cached as that check-in's.
    auto whole_placeholder = !file.empty() && file.front() == '{' && placeholder_at(file, 0) &&
                             placeholder_at(file, 0)->size() + 2 == file.size();
    if (file.empty() || file == "." || file == ".." || whole_placeholder)
      return Error{origin + ": artifacts." + name + " must name a file (e.g. \"{build}/bin/cc\"), not " +
                   common::quoted(path)};
    if (auto [it, fresh] = by_file.emplace(file, name); !fresh)
      return Error{origin + ": artifacts " + it->second + " and " + name + " have the same file name '" + file +
                   "' (the cache keeps each under its file name)"};
  }
  if (const auto* c = root["compile"].as_table()) {
    if (auto s = check_keys(*c, "compile", origin); !s) return s.error();
    auto command = words((*c)["command"].value_or<std::string>(""), "compile.command", origin);
    if (!command) return command.error();
    r.compile = *command;
    r.ml_flag_prefix = (*c)["ml_flag_prefix"].value_or<std::string>("");
    r.share_agreeing_defaults = (*c)["share_agreeing_defaults"].value_or(false);
    if (r.share_agreeing_defaults) {
      // At any other level LLVM's ML size cap can stop the ML inliner on the
      // default's own trajectory: the shared object would not be the default's,
      // and the byte checks on a few modules cannot see it (docs/ARCHITECTURE.md).
      auto last = std::find_if(r.compile.rbegin(), r.compile.rend(),
                               [](const std::string& w) { return w.rfind("-O", 0) == 0; });
      if (last == r.compile.rend() || *last != "-Oz")
        return Error{origin + ": compile.share_agreeing_defaults = true needs compile.command at -Oz, not " +
                     (last == r.compile.rend() ? std::string("the compiler's default level") : *last)};
    }
    if (auto t = (*c)["timeout"].value<std::string>()) {
      auto d = common::parse_duration(*t);
      if (!d || d->count() == 0)
        return Error{origin + ": compile.timeout must be a duration like \"5m\", not \"" + *t + "\""};
      r.compile_timeout = *d;
    }
    auto cc1 = words((*c)["cc1"].value_or<std::string>(""), "compile.cc1", origin);
    if (!cc1) return cc1.error();
    r.cc1 = *cc1;
    if (r.compile.empty()) return Error{origin + ": missing key 'compile.command'"};
    // Given here too, every evaluation would read as the policy failing.
    for (const auto* line : {&r.compile, &r.cc1})
      for (const auto& w : *line)
        for (const char* own : common::kMlInlinerOptionPrefixes)
          if (w.rfind(own, 0) == 0)
            return Error{origin + ": " + (line == &r.compile ? "compile.command" : "compile.cc1") + " has " +
                         common::quoted(w) + ": driftwatch sets the ML inliner's options itself; take it out"};
    // Without them every module's compile "succeeds" without writing the
    // object driftwatch measures: each check-in would be taken for a broken
    // compiler, night after night.
    for (const char* needed : {"{input}", "{output}"})
      if (std::none_of(r.compile.begin(), r.compile.end(),
                       [&](const std::string& w) { return w.find(needed) != std::string::npos; }))
        return Error{origin + ": compile.command never names " + needed +
                     " (the module to compile is {input}, the object to write {output}: e.g. -c {input} -o {output})"};
  }
  // Every placeholder is checked now: found at a build, a typo ({job}) was
  // recorded as each check-in's own build failure, and cached.
  if (auto rendered = render(r, {"/source", "/build", "/data", 1}); !rendered)
    return Error{origin + ": " + rendered.error().message};
  std::map<std::string, std::filesystem::path> artifact_paths;
  for (const auto& [name, path] : r.artifacts) artifact_paths[name] = "/artifacts/" + name;
  if (!r.compile.empty())
    if (auto compile = render_compile(r, artifact_paths); !compile) return Error{origin + ": " + compile.error().message};
  if (auto cc1 = render_cc1(r, artifact_paths); !cc1) return Error{origin + ": " + cc1.error().message};
  r.build_hash = common::sha256_hex(canonical(r));
  // A recipe without [compile] keeps the hash it had before [compile] counted.
  r.content_hash = common::sha256_hex(canonical(r) + (root.contains("compile") ? measuring(r) : std::string()));
  return r;
}

std::vector<std::string> shipped_recipes() {
  std::vector<std::string> out;
  for (const auto& [path, text] : embedded::recipe_files()) out.emplace_back(path.substr(0, path.rfind(".toml")));
  return out;
}

common::Result<Recipe> load_recipe(const std::string& file_or_name) {
  if (file_or_name.find('/') == std::string::npos && file_or_name.find(".toml") == std::string::npos) {
    for (const auto& [path, text] : embedded::recipe_files())
      if (path == file_or_name + ".toml") return parse_recipe(std::string(text), std::string(path) + " (built in)");
  }
  std::error_code ec;
  if (!std::filesystem::exists(file_or_name, ec)) {
    std::string names;
    for (const auto& n : shipped_recipes()) names += (names.empty() ? "" : ", ") + n;
    return Error{"cannot read recipe " + file_or_name + " (not a file, nor a shipped recipe: " + names + ")"};
  }
  auto text = common::read_file(file_or_name);
  if (!text) return Error{"cannot read recipe: " + text.error().message};
  return parse_recipe(*text, file_or_name);
}

common::Result<RenderedRecipe> render(const Recipe& r, const Placeholders& p) {
  std::map<std::string, std::string> values = {{"source", p.source.string()},
                                               {"build", p.build.string()},
                                               {"data", p.data.string()},
                                               {"jobs", std::to_string(p.jobs)},
                                               {"launcher", r.launcher}};
  // Commands go to /bin/sh: a path with a space, a quote or $(…) in it must
  // stay one word and run nothing. The environment and artifacts are not shell.
  auto words = values;
  for (auto& [k, v] : words) v = common::shell_quote(v);
  RenderedRecipe out;
  auto what = "recipe " + r.name;
  auto configure = fill(r.configure, words, what + " configure.command");
  if (!configure) return configure.error();
  out.configure = *configure;
  auto build = fill(r.build, words, what + " build.command");
  if (!build) return build.error();
  out.build = *build;
  for (const auto& [k, v] : r.env) {
    auto filled = fill(v, values, what + " env." + k);
    if (!filled) return filled.error();
    out.env[k] = *filled;
  }
  for (const auto& [k, v] : r.artifacts) {
    auto filled = fill(v, values, what + " artifacts." + k);
    if (!filled) return filled.error();
    std::filesystem::path path = *filled;
    out.artifacts[k] = path.is_absolute() ? path : p.build / path;
  }
  if (!r.configure_marker.empty()) {
    // Filled like an artifact ({build}/build.ninja or build.ninja): left
    // unfilled, the marker never exists and every check-in configures anew.
    auto filled = fill(r.configure_marker, values, what + " configure.skip_if_exists");
    if (!filled) return filled.error();
    std::filesystem::path path = *filled;
    out.configure_marker = path.is_absolute() ? path : p.build / path;
  }
  return out;
}

common::Result<std::vector<std::string>> render_compile(const Recipe& r,
                                                        const std::map<std::string, std::filesystem::path>& artifacts) {
  if (r.compile.empty()) return Error{"recipe " + r.name + " has no [compile] section: it cannot compile modules"};
  std::map<std::string, std::string> values = {{"input", "{input}"}, {"output", "{output}"}};
  for (const auto& [name, path] : artifacts) values[name] = path.string();
  std::vector<std::string> out;
  for (const auto& word : r.compile) {
    auto filled = fill(word, values, "recipe " + r.name + " compile.command");
    if (!filled) return filled.error();
    out.push_back(*filled);
  }
  return out;
}

common::Result<std::vector<std::string>> render_cc1(const Recipe& r,
                                                    const std::map<std::string, std::filesystem::path>& artifacts) {
  std::map<std::string, std::string> values;
  for (const auto& [name, path] : artifacts) values[name] = path.string();
  std::vector<std::string> out;
  for (const auto& word : r.cc1) {
    auto filled = fill(word, values, "recipe " + r.name + " compile.cc1");
    if (!filled) return filled.error();
    out.push_back(*filled);
  }
  return out;
}

}  // namespace builder
