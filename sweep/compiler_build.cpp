#include "sweep/compiler_build.h"

#include <thread>

#include "common/data_dir.h"
#include "sweep/recording.h"
#include "tracker/sampling.h"

namespace sweep {
namespace fs = std::filesystem;

int jobs_or_cores(int jobs) { return jobs > 0 ? jobs : std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

namespace {

policy::CompilerInvocation invocation(const builder::BuildResult& r, const builder::Recipe* recipe) {
  policy::CompilerInvocation cc;
  cc.argv = r.compile;
  cc.ml_flag_prefix = r.ml_flag_prefix;
  cc.cc1 = r.cc1;
  cc.share_agreeing_defaults = r.share_agreeing_defaults;
  cc.timeout = r.compile_timeout;
  if (cc.argv.empty() && recipe) {  // built before the recipe had a [compile] section
    cc.argv = builder::render_compile(*recipe, r.artifacts).take();
    cc.ml_flag_prefix = recipe->ml_flag_prefix;
    cc.share_agreeing_defaults = recipe->share_agreeing_defaults;
    cc.timeout = recipe->compile_timeout;
    cc.cc1 = builder::render_cc1(*recipe, r.artifacts).take();
  }
  if (cc.argv.empty()) throw common::Fatal("the build has no compile command (its recipe lacks a [compile] section)");
  return cc;
}

}  // namespace

common::Result<SelectedBuild> select_toolchain(const fs::path& dir, const builder::Recipe& recipe) {
  if (!fs::is_directory(dir)) return common::Error{"toolchain " + dir.string() + " is not a directory"};
  // The recipe's artifacts are written against {build}; a toolchain is its own build directory.
  auto rendered = builder::render(recipe, {dir, dir, dir, 1});
  if (!rendered) return rendered.error();
  for (const auto& [name, path] : rendered->artifacts)
    if (!fs::exists(path))
      return common::Error{"toolchain " + dir.string() + " lacks the recipe's artifact '" + name + "' (" +
                           path.string() + "; recipe " + recipe.name + ")"};
  auto compile = builder::render_compile(recipe, rendered->artifacts);
  if (!compile) return compile.error();
  if (compile->empty()) return common::Error{"recipe " + recipe.name + " has no [compile] section"};
  SelectedBuild out;
  out.compiler.argv = *compile;
  out.compiler.ml_flag_prefix = recipe.ml_flag_prefix;
  out.compiler.share_agreeing_defaults = recipe.share_agreeing_defaults;
  out.compiler.timeout = recipe.compile_timeout;
  auto cc1 = builder::render_cc1(recipe, rendered->artifacts);
  if (!cc1) return cc1.error();
  out.compiler.cc1 = *cc1;
  out.artifact_dir = dir;
  out.artifacts = rendered->artifacts;
  out.label = dir.string();
  return out;
}

SelectedBuild select_build(const fs::path& data, const BuildRequest& s, db::Database* database,
                           const std::function<void(const std::string&)>& log) {
  SelectedBuild out;
  const std::string recipe_name = s.recipe.empty() ? kDefaultRecipe : s.recipe;
  if (fs::is_directory(s.build) && fs::exists(fs::path(s.build) / "result.json")) {
    auto pin = builder::pin_entry(s.build).take();
    std::string damaged;
    auto cached = builder::read_cached(pin->dir(), &damaged);
    if (!cached)
      throw common::Fatal("artifact directory " + s.build + " is damaged (" +
                          (damaged.empty() ? "its result.json is empty or unreadable" : damaged) +
                          "): build the check-in again");
    if (cached->outcome != builder::Outcome::Ok)
      throw common::Fatal("artifact directory " + s.build + " holds a failed build (" +
                          std::string(builder::outcome_name(cached->outcome)) + ")");
    auto in_pin = builder::in_generation(*cached, pin->dir());
    // The entry compiles as the recipe that built it said. A --recipe that
    // says otherwise would be silently ignored: refuse it instead.
    if (!s.recipe.empty()) {
      auto recipe = builder::load_recipe(s.recipe).take();
      auto as_given = in_pin;
      builder::use_compile_of(recipe, as_given).take();
      if (as_given.compile != in_pin.compile || as_given.cc1 != in_pin.cc1 ||
          as_given.ml_flag_prefix != in_pin.ml_flag_prefix || as_given.compile_timeout != in_pin.compile_timeout)
        throw common::Fatal("artifact directory " + s.build +
                            " compiles as the recipe that built it, not as --recipe " + s.recipe +
                            " (another [compile] section): evaluate it as a check-in, with --repo, "
                            "--build <sha> and --recipe " +
                            s.recipe);
    }
    out.compiler = invocation(in_pin, nullptr);
    out.artifacts = in_pin.artifacts;
    out.pin = pin;
    out.artifact_dir = s.build;
    out.label = s.build;
    auto name = fs::path(s.build).filename().string();
    if (name.size() == 40) out.commit = name;
    if (database) {
      // Its compile line is the one of the recipe that built it first: with
      // builds of several recipes recorded here, this evaluation could join
      // the series of one that compiles otherwise.
      auto builds = db::builds_at_artifact_dir(*database, (fs::path(s.build) / "artifacts").string());
      if (builds.size() > 1) {
        std::string names;
        for (const auto& [id, recipe] : builds) names += (names.empty() ? "" : ", ") + recipe;
        throw common::Fatal("artifact directory " + s.build + " is shared by builds of several recipes (" + names +
                            "), which may compile differently: evaluate it as a check-in, with --repo, --build "
                            "<sha> and --recipe");
      }
      if (!builds.empty()) out.build_id = builds.front().first;
    }
    return out;
  }
  if (s.repo.empty() && fs::is_directory(s.build)) {
    auto recipe = builder::load_recipe(recipe_name).take();
    // Recorded by its absolute path, as a sweep records it: a relative one
    // would be stored as the toolchain's directory and mean nothing elsewhere.
    auto tc = select_toolchain(fs::absolute(s.build).lexically_normal(), recipe).take();
    // No label nor date here: those a project file gave it stay recorded.
    if (database) tc.build_id = record_toolchain(*database, recipe, tc.artifact_dir, "", 0);
    return tc;
  }
  if (s.repo.empty())
    throw common::Fatal("--build " + s.build + " is not a directory; give --repo to build it as a check-in");
  auto recipe = builder::load_recipe(recipe_name).take();
  // Every caller compiles modules with it next: said before a build that
  // may take hours, not after.
  if (recipe.compile.empty())
    throw common::Fatal("recipe " + recipe_name +
                        " has no [compile] section: it cannot compile the suite's modules "
                        "(add e.g. command = \"{compiler} {input} -o {output} -Oz\"); nothing was built");
  auto repo = tracker::GitRepo::open(s.repo).take();
  auto resolved = repo.commit(s.build);
  // A directory given as --build along with --repo: say what it lacks, not only that no revision is so named.
  if (!resolved && fs::is_directory(s.build))
    throw common::Fatal("--build " + s.build + " is neither a check-in of " + s.repo +
                        " nor a cached build's directory (it has no result.json); without --repo a directory is a "
                        "toolchain (with the recipe's artifacts)");
  auto commit = std::move(resolved).take();
  common::ensure_writable_dir(data, "data directory");
  if (log)
    log("compiler: " + commit.short_sha() + " " + tracker::format_date(commit.time) + " (" + commit.subject +
        ") with recipe " + recipe.name);
  auto jobs = builder::capped_jobs(recipe, jobs_or_cores(s.jobs));
  auto b = tracker::build_checkin(repo, recipe, commit, {data, jobs, false, log}).take();
  if (log && !b.result.rebuilt_because.empty()) log("built again: " + b.result.rebuilt_because);
  if (database) out.build_id = record_build(*database, repo, recipe, b);
  if (b.result.outcome != builder::Outcome::Ok)
    throw common::Fatal("check-in " + commit.short_sha() + " did not build (" +
                        std::string(builder::outcome_name(b.result.outcome)) + "): " + b.result.message);
  return selected_from(repo, recipe, b, out.build_id);
}

SelectedBuild selected_from(const tracker::GitRepo& repo, const builder::Recipe& recipe,
                            const tracker::CheckinBuild& b, std::optional<db::Id> build_id) {
  SelectedBuild out;
  auto entry = b.result.artifacts.begin()->second.parent_path().parent_path();
  out.pin = builder::pin_entry(entry).take();
  auto in_pin = builder::in_generation(b.result, out.pin->dir());
  out.compiler = invocation(in_pin, &recipe);
  out.artifacts = in_pin.artifacts;
  out.commit = b.commit.sha;
  out.repo = repo.location().string();
  out.label = b.commit.short_sha() + " " + tracker::format_date(b.commit.time);
  out.artifact_dir = b.result.artifacts.begin()->second.parent_path().parent_path();
  out.build_id = build_id;
  return out;
}

}  // namespace sweep
