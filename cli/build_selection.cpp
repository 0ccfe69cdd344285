#include "cli/build_selection.h"

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <thread>

#include "cli/recording.h"
#include "common/data_dir.h"
#include "tracker/checkin_build.h"
#include "tracker/sampling.h"

namespace cli {
namespace fs = std::filesystem;

void BuildSelector::attach(CLI::App& sub) {
  sub.add_option("--build", build, "the compiler: a check-in of --repo (built if needed), or an artifact directory")
      ->required();
  sub.add_option("--repo", repo, "the compiler's git repository (with a check-in for --build)");
  sub.add_option("--recipe", recipe, "recipe file or shipped name (default: sample-compiler)");
  sub.add_option("-j,--jobs", jobs, "parallel jobs (default: one per core)");
}

int jobs_or_cores(int jobs) { return jobs > 0 ? jobs : std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

namespace {

policy::CompilerInvocation invocation(const builder::BuildResult& r, const builder::Recipe* recipe) {
  policy::CompilerInvocation cc;
  cc.argv = r.compile;
  cc.ml_flag_prefix = r.ml_flag_prefix;
  if (cc.argv.empty() && recipe) {  // built before the recipe had a [compile] section
    cc.argv = builder::render_compile(*recipe, r.artifacts).take();
    cc.ml_flag_prefix = recipe->ml_flag_prefix;
  }
  if (cc.argv.empty()) throw common::Fatal("the build has no compile command (its recipe lacks a [compile] section)");
  return cc;
}

}  // namespace

SelectedBuild select_build(const Context& ctx, const BuildSelector& s, db::Database* database) {
  SelectedBuild out;
  if (fs::is_directory(s.build) && fs::exists(fs::path(s.build) / "result.json")) {
    auto cached = builder::read_cached(s.build);
    if (!cached) throw common::Fatal("artifact directory " + s.build + " has no readable build result");
    if (cached->outcome != builder::Outcome::Ok)
      throw common::Fatal("artifact directory " + s.build + " holds a failed build (" +
                          std::string(builder::outcome_name(cached->outcome)) + ")");
    out.compiler = invocation(*cached, nullptr);
    out.artifact_dir = s.build;
    out.label = s.build;
    auto name = fs::path(s.build).filename().string();
    if (name.size() == 40) out.commit = name;
    if (database) out.build_id = db::find_build_by_artifact_dir(*database, (fs::path(s.build) / "artifacts").string());
    return out;
  }
  if (s.repo.empty())
    throw common::Fatal("--build " + s.build + " is not an artifact directory; give --repo to build it as a check-in");
  auto recipe = builder::load_recipe(s.recipe).take();
  auto repo = tracker::GitRepo::open(s.repo).take();
  auto commit = repo.commit(s.build).take();
  auto data = ctx.data_dir();
  common::ensure_writable_dir(data, "data directory");
  if (!ctx.quiet) fmt::print(stderr, "compiler: {} {} ({}) with recipe {}\n", commit.short_sha(),
                             tracker::format_date(commit.time), commit.subject, recipe.name);
  auto b = tracker::build_checkin(repo, recipe, commit, {data, jobs_or_cores(s.jobs), false}).take();
  if (database) out.build_id = record_build(*database, repo, recipe, b);
  if (b.result.outcome != builder::Outcome::Ok)
    throw common::Fatal("check-in " + commit.short_sha() + " did not build (" +
                        std::string(builder::outcome_name(b.result.outcome)) + "): " + b.result.message);
  return selected_from(repo, recipe, b, out.build_id);
}

SelectedBuild selected_from(const tracker::GitRepo& repo, const builder::Recipe& recipe,
                            const tracker::CheckinBuild& b, std::optional<db::Id> build_id) {
  SelectedBuild out;
  out.compiler = invocation(b.result, &recipe);
  out.commit = b.commit.sha;
  out.repo = repo.location().string();
  out.label = b.commit.short_sha() + " " + tracker::format_date(b.commit.time);
  out.artifact_dir = b.result.artifacts.begin()->second.parent_path().parent_path();
  out.build_id = build_id;
  return out;
}

}  // namespace cli
