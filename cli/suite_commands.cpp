// driftwatch suite build | list
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.h"
#include "sweep/compiler_build.h"
#include "common/data_dir.h"
#include "common/text.h"
#include "evaluator/default_suites.h"
#include "evaluator/suite_builder.h"

namespace cli {
namespace {

namespace fs = std::filesystem;
using evaluator::Suite;

struct SuiteBuildArgs {
  std::vector<std::string> names;
  std::string compile_commands, corpus, name, description;
  std::string opt_level = "Oz";  ///< --from-compile-commands: the front end's level; "keep": each TU's own
  int jobs = 0;
  bool rebuild = false;
};


void print_failures(const std::vector<evaluator::TuFailure>& failures) {
  if (failures.empty()) return;
  fmt::print("{} TU{} failed (left out):\n", failures.size(), failures.size() == 1 ? "" : "s");
  const size_t shown = 10;
  for (size_t i = 0; i < failures.size() && i < shown; ++i) {
    auto lines = common::split(failures[i].message, '\n');
    fmt::print("  {}: {}\n", failures[i].name, lines[0]);
    for (size_t k = 1; k < lines.size(); ++k) fmt::print("      {}\n", lines[k]);
  }
  if (failures.size() > shown) fmt::print("  … and {} more\n", failures.size() - shown);
}

void print_notes(const std::vector<std::string>& notes) {
  for (const auto& n : notes) fmt::print("note: {}\n", n);
}

void build_custom(Context& ctx, const SuiteBuildArgs& a) {
  if (a.name.empty()) throw common::Fatal("--from-compile-commands and --import-corpus need --name NAME");
  if (evaluator::default_suite_table().find(a.name))
    throw common::Fatal("'" + a.name + "' is a default suite; choose another --name");
  auto data = ctx.data_dir();
  common::ensure_writable_dir(data, "data directory");
  auto root = evaluator::suites_root(data);
  // A suite of the same name from elsewhere is replaced (its series ends
  // there: a new manifest): said, as a slip of --name would otherwise pass.
  std::string replaced;
  if (auto before = evaluator::read_suite_manifest(root / a.name)) {
    auto from = !a.compile_commands.empty() ? a.compile_commands : a.corpus;
    std::error_code ec;
    if (before->origin.path.empty() || !fs::equivalent(before->origin.path, from, ec))
      replaced = before->origin.path.empty() ? before->origin.kind : before->origin.path;
  }
  evaluator::SuiteBuildReport r;
  if (!a.compile_commands.empty()) {
    evaluator::CompileCommandsSuiteOptions o;
    o.name = a.name;
    o.description = a.description;
    // An inlining-for-size policy is used on code built for size: a TU the
    // project built at -O2 would keep -O2's front-end attributes (no minsize)
    // under the evaluation's -Oz pipeline, as the default suites do not.
    o.extract.opt_level = a.opt_level == "keep" ? "" : "-" + a.opt_level;
    o.extract.jobs = sweep::jobs_or_cores(a.jobs);
    if (!ctx.quiet) o.extract.progress = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
    r = evaluator::build_suite_from_compile_commands(a.compile_commands, o, root).take();
    fmt::print("suite {}: {} from {} TUs at {}; {}\n", r.suite.name, evaluator::describe_modules(r.suite),
               r.extract.plan.modules.size(), a.opt_level == "keep" ? "each TU's own -O level" : "-" + a.opt_level,
               evaluator::summarize(r.extract));
    print_failures(r.extract.failures);
  } else {
    std::function<void(const std::string&)> progress;
    if (!ctx.quiet) progress = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
    r = evaluator::import_corpus(a.corpus, a.name, root, progress).take();
    fmt::print("suite {}: {} imported\n", r.suite.name, evaluator::describe_modules(r.suite));
  }
  print_notes(r.notes);
  // Its manifest names its origin: another origin is another series.
  if (!replaced.empty())
    fmt::print("note: this replaced the suite {} built from {}; its series in projects ends here\n", a.name,
               common::printable(replaced));
  fmt::print("{}\n", r.dir.string());
}

void build_defaults(Context& ctx, const SuiteBuildArgs& a) {
  const auto& table = evaluator::default_suite_table();
  std::vector<const evaluator::SuiteSpec*> specs;
  for (const auto& n : a.names) {
    if (n == "defaults") {
      for (const auto& s : table.suites) specs.push_back(&s);
    } else if (const auto* s = table.find(n)) {
      specs.push_back(s);
    } else {
      std::string known;
      for (const auto& s : table.suites) known += s.name + "|";
      throw common::Fatal("unknown default suite '" + n + "' (expected " + known +
                          "defaults; or --from-compile-commands/--import-corpus with --name)");
    }
  }
  auto data = ctx.data_dir();
  common::ensure_writable_dir(data, "data directory");
  evaluator::DefaultSuiteOptions o;
  o.data_dir = data;
  o.jobs = sweep::jobs_or_cores(a.jobs);
  o.rebuild = a.rebuild;
  auto start = std::chrono::steady_clock::now();
  if (!ctx.quiet)
    o.progress = [start](const std::string& line) {
      double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      fmt::print(stderr, "[{:6.1f} s] {}\n", t, line);
    };
  for (const auto* spec : specs) {
    auto r = evaluator::build_default_suite(*spec, o).take();
    if (r.cached) {
      fmt::print("suite {}: {}, up to date ({})\n", r.suite.name, evaluator::describe_modules(r.suite), r.dir.string());
      continue;
    }
    fmt::print("suite {}: {} in {} ({})\n", r.suite.name, evaluator::describe_modules(r.suite),
               common::format_seconds(r.seconds), r.dir.string());
    for (const auto& p : r.packages) {
      fmt::print("  {:<18} {:<22} {:>4} modules{}{}\n", p.name, p.version, p.extract.modules.size(),
                 p.extract.failures.empty() ? "" : fmt::format(", {} failed", p.extract.failures.size()),
                 p.cached ? " (package cached)" : "");
      print_failures(p.extract.failures);
    }
    print_notes(r.notes);
  }
}

std::string origin_text(const Suite& s) {
  if (s.origin.kind == "debian-packages") {
    std::string out = "debian:";
    for (const auto& p : s.origin.packages) out += " " + p.name + (p.version.empty() ? "" : " " + p.version) + ",";
    if (out.back() == ',') out.pop_back();
    return out;
  }
  return s.origin.kind + (s.origin.path.empty() ? "" : " " + s.origin.path);
}

void list(Context& ctx, bool json) {
  auto root = evaluator::suites_root(ctx.data_dir());
  evaluator::clear_interrupted_suite_builds(root);
  const auto& table = evaluator::default_suite_table();
  struct Row {
    std::string name;
    std::optional<Suite> suite;
    std::string error, planned_origin;
    fs::path dir;
  };
  std::vector<Row> rows;
  for (const auto& spec : table.suites) {
    Row r{spec.name, std::nullopt, "", "debian:", root / spec.name};
    for (const auto& p : spec.packages) r.planned_origin += " " + p.name + ",";
    r.planned_origin.pop_back();
    rows.push_back(r);
  }
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory() && e.path().filename().string()[0] != '.') dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs)
    if (!table.find(d.filename().string())) rows.push_back({d.filename().string(), std::nullopt, "", "", d});
  for (auto& r : rows) {
    if (!fs::exists(r.dir)) continue;
    // Every module's bitcode against its manifest, as `eval` checks it: a
    // suite whose files were truncated or edited is damaged, not "built".
    auto s = evaluator::load_suite(r.dir);
    if (s.ok())
      r.suite = *s;
    else
      r.error = s.error().message;
  }
  if (json) {
    auto out = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
      nlohmann::ordered_json j = {{"name", r.name},
                                  {"default", table.find(r.name) != nullptr},
                                  {"built", r.suite.has_value()},
                                  {"dir", r.dir.string()}};
      if (r.suite) {
        int c = 0, cxx = 0;
        for (const auto& m : r.suite->modules) ++(m.language == evaluator::Language::C ? c : cxx);
        j["modules"] = r.suite->modules.size();
        j["languages"] = {{"c", c}, {"c++", cxx}};
        j["link_groups"] = r.suite->link_groups.size();
        j["origin"] = {{"kind", r.suite->origin.kind}, {"text", origin_text(*r.suite)}};
        j["description"] = r.suite->description;
      } else {
        j["origin"] = {{"kind", r.planned_origin.empty() ? "unknown" : "debian-packages"}, {"text", r.planned_origin}};
        if (!r.error.empty()) j["error"] = r.error;
      }
      out.push_back(j);
    }
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("{:<16} {:<10} {:>7} {:<14} {}\n", "SUITE", "STATUS", "MODULES", "LANGUAGES", "ORIGIN");
  for (const auto& r : rows) {
    if (!r.suite) {
      fmt::print("{:<16} {:<10} {:>7} {:<14} {}\n", r.name, r.error.empty() ? "not built" : "damaged", "-", "-",
                 r.error.empty() ? r.planned_origin : r.error);
      continue;
    }
    int c = 0, cxx = 0;
    for (const auto& m : r.suite->modules) ++(m.language == evaluator::Language::C ? c : cxx);
    fmt::print("{:<16} {:<10} {:>7} {:<14} {}\n", r.name, "built", r.suite->modules.size(),
               fmt::format("c {}, c++ {}", c, cxx), origin_text(*r.suite));
  }
}

}  // namespace

void attach_suite(CLI::App& group, Context& ctx) {
  require_one_subcommand(group);
  auto a = std::make_shared<SuiteBuildArgs>();
  auto* build = group.add_subcommand(
      "build",
      "build suites: smoke|train|validation|holdout|defaults, or from compile_commands.json / an MLGO corpus");
  build->add_option("names", a->names, "default suites to build: smoke, train, validation, holdout, or defaults (all of them)");
  auto* cc = build->add_option("--from-compile-commands", a->compile_commands,
                               "build a suite from any compile_commands.json (each TU re-run with clang-19)");
  auto* imp = build->add_option("--import-corpus", a->corpus, "import an ml-compiler-opt corpus directory unchanged");
  cc->excludes(imp);
  build->add_option("--name", a->name, "name of the suite built with --from-compile-commands or --import-corpus");
  build->add_option("--description", a->description, "one line describing the suite");
  auto* opt_level =
      build
          ->add_option(
              "--opt-level", a->opt_level,
              "--from-compile-commands: the -O level every TU's front end runs at: Oz (default: functions carry "
              "minsize, as in code built for size), Os, O1, O2, O3, or keep (each TU's own; -Oz for -O0)")
          ->check(CLI::IsMember({"Oz", "Os", "O1", "O2", "O3", "keep"}))
          ->capture_default_str();
  build->add_option("-j,--jobs", a->jobs, "parallel compiles (default: one per core)")->check(CLI::Range(1, 1024));
  build->add_flag("--rebuild", a->rebuild, "build again even if the suite and its packages are cached");
  build->callback([&ctx, a, opt_level] {
    bool custom = !a->compile_commands.empty() || !a->corpus.empty();
    if (custom && !a->names.empty())
      throw common::Fatal("give either default suite names or --from-compile-commands/--import-corpus, not both");
    if (!custom && a->names.empty())
      throw common::Fatal("suite build needs a suite (smoke|train|validation|holdout|defaults) or "
                          "--from-compile-commands/--import-corpus");
    // An option that would be silently ignored is refused: the user meant something by it.
    if (!custom && (!a->name.empty() || !a->description.empty()))
      throw common::Fatal(
          "--name and --description name a suite built with --from-compile-commands or "
          "--import-corpus; the default suites keep their own");
    if (custom && a->rebuild)
      throw common::Fatal(
          "--rebuild is for the default suites: a suite from --from-compile-commands or "
          "--import-corpus is built anew every time");
    if (opt_level->count() > 0 && a->compile_commands.empty())
      throw common::Fatal(
          "--opt-level is for --from-compile-commands: an imported corpus keeps its own command lines, and the "
          "default suites their table's level");
    if (!a->corpus.empty() && !a->description.empty())
      throw common::Fatal(
          "--description is not taken with --import-corpus: an imported suite is described by the "
          "corpus it came from");
    evaluator::clear_interrupted_suite_builds(evaluator::suites_root(ctx.data_dir()));
    if (custom)
      build_custom(ctx, *a);
    else
      build_defaults(ctx, *a);
  });
  auto json = std::make_shared<bool>(false);
  auto* ls = group.add_subcommand("list", "the known suites: defaults (built or not) and those in the data directory");
  ls->add_flag("--json", *json, "machine-readable output");
  ls->callback([&ctx, json] { list(ctx, *json); });
}

}  // namespace cli
