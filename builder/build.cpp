#include "builder/build.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "builder/generations.h"
#include "builder/leftover_step.h"
#include "builder/step_failure.h"
#include "common/hash.h"
#include "common/atomic_file.h"
#include "common/json_text.h"
#include "common/paths.h"
#include "common/process.h"
#include "common/shared_libraries.h"
#include "common/text.h"

namespace builder {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kLogTailLines = 40;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void append_log(const fs::path& log, const std::string& text) {
  std::ofstream out(log, std::ios::app);
  out << text;
}

/// Where a running step's process group is recorded (leftover_step.h).
fs::path step_file(const BuildPaths& paths) { return step_file_of(paths.build); }

/// Why the cached copy `artifact` would not run the check-in's own code, or
/// nullopt. Only the listed artifacts are cached: a compiler built against
/// the tree's own shared libraries (BUILD_SHARED_LIBS, LLVM_LINK_LLVM_DYLIB)
/// would load, through an absolute rpath, whatever the tree builds next, or
/// through $ORIGIN find none (or the system's library of the same name).
std::optional<std::string> loads_from_work_tree(const fs::path& artifact, const std::vector<fs::path>& trees) {
  auto libraries = common::shared_libraries(artifact);
  if (!libraries) return std::nullopt;  // no dynamic program (a script), or ldd missing: nothing to say
  for (const auto& lib : *libraries) {
    if (lib.path.empty())
      return "needs " + lib.name + ", which its cached copy cannot find (a library of the build tree, found "
             "through $ORIGIN?): link the compiler statically (LLVM: no BUILD_SHARED_LIBS or LLVM_LINK_LLVM_DYLIB)";
    std::error_code ec;
    if (common::lies_within(fs::weakly_canonical(lib.path, ec), trees))
      return "loads " + lib.name + " from the work tree (" + lib.path.string() + "): its cached copy would "
             "load whatever the tree builds next; link the compiler statically (LLVM: no BUILD_SHARED_LIBS or "
             "LLVM_LINK_LLVM_DYLIB)";
  }
  return std::nullopt;
}

common::ProcessResult run_step(const std::string& command, const fs::path& cwd,
                               const std::map<std::string, std::string>& env, const fs::path& log,
                               std::chrono::milliseconds budget, const fs::path& running_file) {
  append_log(log, "$ " + command + "\n");
  common::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", command};
  spec.cwd = cwd;
  spec.env.assign(env.begin(), env.end());
  spec.log_file = log;
  spec.timeout = budget;
  spec.own_session = true;  // ninja puts each command in a process group of its own
  auto child = common::Child::start(spec);
  if (!child) {  // /bin/sh itself could not run: the machine's failure (step_failure reads this line)
    append_log(log, std::string(kStepNotStarted) + ": " + child.error().message + "\n");
    common::ProcessResult failed;
    failed.exit_code = 127;
    return failed;
  }
  record_step(running_file, child->pid());  // left behind only if we die before the step ends
  auto r = child->wait();
  forget_step(running_file);
  return r;
}


/// Written into the build directory after a successful configure: what the
/// configuration depends on, so a changed recipe never reuses an old one.
constexpr const char* kConfigureStamp = ".driftwatch-configure";

std::string configure_key(const Recipe& recipe, const RenderedRecipe& rendered) {
  std::string text = "configure=" + rendered.configure + "\nlauncher=" + recipe.launcher + "\n";
  for (const auto& [k, v] : rendered.env) text += "env " + k + "=" + v + "\n";
  return common::sha256_hex(text);
}

/// Empties `dir` (the work tree's build directory, ours alone).
void clear_directory(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) fs::remove_all(e.path(), ec);
}

common::Status write_result(const fs::path& entry, const BuildResult& r) {
  nlohmann::json j;
  j["outcome"] = outcome_name(r.outcome);
  j["seconds"] = r.seconds;
  j["message"] = r.message;
  j["log_tail"] = r.log_tail;
  for (const auto& [name, path] : r.artifacts) {
    j["artifacts"][name] = path.filename().string();
    // Checked when the entry is served: a compiler damaged in the cache
    // (truncated, overwritten) is built again rather than blamed on the
    // check-in or the policy.
    if (auto digest = common::sha256_file(path)) j["artifact_sha256"][name] = *digest;
  }
  j["compile"] = r.compile;
  j["ml_flag_prefix"] = r.ml_flag_prefix;
  j["cc1"] = r.cc1;
  j["share_agreeing_defaults"] = r.share_agreeing_defaults;
  j["compile_timeout_s"] = r.compile_timeout.count();
  // When, to the microsecond: cache pruning goes oldest first, and a file
  // system's mtimes may tell apart no two builds finished in one second.
  j["built_at"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // The log tail and the message are a build's bytes, in any encoding.
  return common::write_file_atomically(entry / "result.json", common::json_text(j, 2) + "\n");
}

}  // namespace

std::string_view outcome_name(Outcome o) {
  switch (o) {
#define X(id, name) \
  case Outcome::id: \
    return name;
    DRIFTWATCH_BUILD_OUTCOMES(X)
#undef X
  }
  return "?";
}

std::optional<Outcome> parse_outcome(std::string_view name) {
#define X(id, text) \
  if (name == text) return Outcome::id;
  DRIFTWATCH_BUILD_OUTCOMES(X)
#undef X
  return std::nullopt;
}

fs::path cache_entry_dir(const fs::path& data, const Recipe& recipe, const std::string& sha) {
  return data / "cache" / (recipe.name + "-" + recipe.build_hash.substr(0, 12)) / sha;
}

std::optional<BuildResult> read_cached(const fs::path& entry, std::string* damaged) {
  // A damaged entry is built again, and says why: a compiler that changed on
  // disk since it was built is worth knowing about (a failing disk, someone
  // editing the cache), not only a slower night.
  if (damaged) damaged->clear();
  auto reject = [&](std::string why) -> std::optional<BuildResult> {
    if (damaged) *damaged = std::move(why);
    return std::nullopt;
  };
  auto text = read_file(entry / "result.json");
  if (text.empty()) return std::nullopt;  // never built (or the build never finished): nothing damaged
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("outcome")) return reject("its result.json is unreadable");
  try {
    auto outcome = parse_outcome(j["outcome"].get<std::string>());
    if (!outcome) return reject("its result.json names an unknown outcome");
    BuildResult r;
    r.outcome = *outcome;
    r.seconds = j.value("seconds", 0.0);
    r.message = j.value("message", "");
    r.log_tail = j.value("log_tail", "");
    r.log = entry / "build.log";
    r.from_cache = true;
    r.compile = j.value("compile", std::vector<std::string>{});
    r.ml_flag_prefix = j.value("ml_flag_prefix", "");
    r.cc1 = j.value("cc1", std::vector<std::string>{});
    r.share_agreeing_defaults = j.value("share_agreeing_defaults", false);
    r.compile_timeout = std::chrono::seconds(
        j.value("compile_timeout_s", static_cast<std::int64_t>(Recipe::kDefaultCompileTimeout.count())));
    if (j.contains("artifacts"))
      for (const auto& [name, file] : j["artifacts"].items()) {
        r.artifacts[name] = entry / "artifacts" / file.get<std::string>();
        if (!fs::exists(r.artifacts[name])) return reject("artifact " + name + " is missing");
        if (j.contains("artifact_sha256") && j["artifact_sha256"].contains(name)) {
          auto digest = common::sha256_file(r.artifacts[name]);
          if (!digest) return reject(digest.error().message);
          if (*digest != j["artifact_sha256"][name].get<std::string>())
            return reject("artifact " + name + "'s checksum no longer matches the build's");
        }
      }
    return r;
  } catch (const nlohmann::json::exception&) {  // a field of the wrong type
    return reject("its result.json is unreadable");
  }
}

BuildResult run_build(const Recipe& recipe, const BuildPaths& paths) {
  BuildResult r;
  auto start = Clock::now();
  // Work in a new generation of the entry, published at the end: a crash
  // mid-build never leaves an entry that claims a result, and a rebuild
  // never removes the generation a running evaluation uses.
  collect_generations(paths.cache_entry);
  std::error_code ec;
  auto generation = new_generation(paths.cache_entry);
  if (!generation) {
    r.outcome = Outcome::MissingArtifact;
    r.message = "cannot record the build: " + generation.error().message;
    r.transient = true;
    return r;
  }
  const fs::path scratch = (*generation)->dir();
  fs::create_directories(scratch / "artifacts", ec);
  fs::create_directories(paths.build, ec);
  auto log = scratch / "build.log";
  auto finish = [&](Outcome o, std::string message) {
    r.outcome = o;
    r.message = std::move(message);
    // The job was called off (common::StopScope): a step it stopped may have
    // exited with an ordinary status (bash runs ninja in its place, and ninja
    // exits 2 on SIGTERM), and a check cut short (ldd) said nothing. Neither
    // is the check-in's result: not cached, not recorded.
    if (common::StopScope::stopped() && !r.transient) {
      r.transient = true;
      r.message += " (stopped: its job was called off; not cached)";
    }
    r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    r.log_tail = common::tail_lines(read_file(log), kLogTailLines);
    r.log = log;
    auto written = write_result(scratch, r);
    // A rebuild that fails (`--rebuild`, another machine's system compiler)
    // leaves the build that succeeded in the cache, as the database keeps it:
    // published, it would fail every later evaluation of the check-in here.
    auto prior = r.outcome == Outcome::Ok || r.transient ? std::nullopt : read_cached(paths.cache_entry);
    bool keep_prior = prior && prior->outcome == Outcome::Ok;
    if (keep_prior) r.message += " (not cached: the cache keeps this check-in's earlier build, which succeeded)";
    if (written && !r.transient && !keep_prior) written = publish_generation(paths.cache_entry, scratch);
    if (!written) {
      // As when an artifact cannot be copied: nothing is cached, the next run builds again.
      r.outcome = Outcome::MissingArtifact;
      r.message = "cannot record the build: " + written.error().message;
      r.artifacts.clear();
      r.transient = true;
      return r;
    }
    // Not cached when transient: the unpublished generation keeps the log
    // until the next try. A failed rebuild names no artifact: those its
    // generation holds go with it, the cache's are another build's.
    if (keep_prior) r.artifacts.clear();
    if (r.transient || keep_prior) return r;
    r.log = paths.cache_entry / "build.log";
    for (auto& [name, path] : r.artifacts) path = paths.cache_entry / "artifacts" / path.filename();
    return r;
  };

  auto rendered = render(recipe, {paths.source, paths.build, paths.data, paths.jobs});
  if (!rendered) {
    append_log(log, rendered.error().message + "\n");
    return finish(Outcome::ConfigureFailed, rendered.error().message);
  }
  // The recipe's timeout is a budget for one try: the fresh build below gets
  // its own, or a check-in whose incremental build failed late would end as a
  // timeout (never cached, retried each night) instead of its real failure.
  auto tries_from = start;
  auto remaining = [&] {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(recipe.timeout - (Clock::now() - tries_from));
    return std::max(left, std::chrono::milliseconds(1));
  };
  auto timed_out = [&](const char* step) {
    r.transient = true;
    return "timed out after " + common::format_seconds(recipe.timeout.count()) + " in " + step + " (not cached)";
  };
  // What the log held before a step: the step's own output follows it.
  auto log_size = [&] { return fs::exists(log) ? fs::file_size(log, ec) : 0; };
  auto failed = [&](const char* step, const common::ProcessResult& p, std::uintmax_t output_from) {
    auto text = read_file(log);
    auto output = output_from < text.size() ? text.substr(output_from) : std::string();
    // Stopped (its job called off) is killed, whatever status it exited with.
    bool stopped = p.stopped || common::StopScope::stopped();
    bool killed = stopped || killed_by_signal(p);
    auto machine = killed ? std::nullopt : machine_failure(output);
    auto missing = killed || machine ? std::nullopt : missing_tool_line(p, output);
    bool missing_tool = missing.has_value();
    r.unexplained = !killed && !machine && !missing_tool && ninja_failed_without_a_word(output);
    r.transient = killed || machine || missing_tool || r.unexplained;
    std::string note = !r.transient    ? ""
                       : stopped       ? " (stopped: its job was called off; not cached)"
                       : p.signal      ? " (not cached)"
                       : machine       ? " (the machine failed it: not cached)"
                       : missing_tool  ? " (a command the recipe runs is not installed here: not cached)"
                       : r.unexplained ? " (commands under ninja failed without a word, as killed ones do: not cached)"
                                       : " (killed by a signal: not cached)";
    return std::string(step) + " " + p.describe() + note + ": " +
           (machine ? *machine : missing ? *missing : failure_line(output.empty() ? text : output));
  };

  // The farm's shared compile cache; the worker's own setting wins (a site's redis).
  auto step_env = rendered->env;
  if (!recipe.ccache_remote_storage.empty() && !std::getenv("CCACHE_REMOTE_STORAGE"))
    step_env.emplace("CCACHE_REMOTE_STORAGE", recipe.ccache_remote_storage);
  // ccache takes paths under CCACHE_BASEDIR relative to each compile's
  // directory: with the work tree's own (src/ and build/ side by side),
  // another work tree of the same compiler (another data directory, the
  // checkout moved, a bisection elsewhere) hits the cache. The recipe's or
  // the machine's own setting wins. A compile with -g still hashes its
  // directory (ccache's hash_dir), so no debug info names another tree.
  if (!step_env.count("CCACHE_BASEDIR") && !std::getenv("CCACHE_BASEDIR"))
    step_env.emplace(
        "CCACHE_BASEDIR",
        (paths.source.parent_path() == paths.build.parent_path() ? paths.source.parent_path() : paths.source).string());
  auto stamp = paths.build / kConfigureStamp;
  // Keyed with {jobs} fixed: a configure that passes it on (LLVM's
  // -DLLVM_PARALLEL_LINK_JOBS={jobs}) builds the same compiler at any -j, and
  // another -j must not throw away an LLVM build directory.
  auto key = configure_key(recipe, render(recipe, {paths.source, paths.build, paths.data, 1}).take());
  // The build command may carry settings too (`make CFLAGS=…`, with or
  // without a configure step), and make would take objects built with the
  // old ones for up to date. (Unrendered: a different {jobs} changes nothing built.)
  key = common::sha256_hex(key + "\nbuild=" + recipe.build);
  bool same_configuration = read_file(stamp) == key + "\n";
  // Written whole or not at all: a torn stamp reads as another configuration
  // and the next check-in would start its build directory afresh. A stamp
  // that cannot be written (a full disk) fails this attempt as the machine's.
  auto write_stamp = [&] {
    if (auto st = common::write_file_atomically(stamp, key + "\n"); !st)
      throw std::runtime_error("cannot write " + stamp.string() + ": " + st.error().message);
  };
  if (!same_configuration && !fs::is_empty(paths.build, ec)) {
    // Configured by another recipe (or interrupted): its cache would keep old settings.
    append_log(log, "# the build directory was configured differently: starting it afresh\n");
    clear_directory(paths.build);
  }
  // Whether this build starts from an earlier check-in's build directory.
  bool incremental = !fs::is_empty(paths.build, ec);
  struct Failure {
    Outcome outcome;
    std::string message;
  };
  // Configures (when needed) and builds in paths.build: the failure, if any.
  auto configure_and_build = [&]() -> std::optional<Failure> {
    if (rendered->configure.empty()) write_stamp();
    bool need_configure = !rendered->configure.empty() && (rendered->configure_marker.empty() || !same_configuration ||
                                                           !fs::exists(rendered->configure_marker));
    // An artifact left by an earlier check-in's build would be taken for this
    // one's when this build no longer makes it (a renamed target) yet exits 0:
    // the old compiler, cached and measured under this check-in's name. The
    // build makes it again (a relink when nothing else changed).
    auto remove_artifacts = [&](const auto& stale) {
      for (const auto& [name, path] : rendered->artifacts) {
        auto rel = path.lexically_relative(paths.build);
        if (rel.empty() || *rel.begin() == "..") continue;
        std::error_code missing;  // not there (yet): nothing to remove
        if (auto at = fs::last_write_time(path, missing); !missing && stale(at)) fs::remove(path, ec);
      }
    };
    if (need_configure) {
      r.configured = true;
      fs::remove(stamp, ec);
      // Every artifact there now predates this configure, whose stamp will be
      // newer than all of them: the rule below would keep them as its own. One
      // configure makes (a wrapper) it makes again.
      remove_artifacts([](fs::file_time_type) { return true; });
      auto from = log_size();
      auto c = run_step(rendered->configure, paths.source, step_env, log, remaining(), step_file(paths));
      if (c.timed_out) return Failure{Outcome::Timeout, timed_out("configure")};
      if (!c.ok()) {
        // A half-configured build directory would skip configure next time.
        if (!rendered->configure_marker.empty()) fs::remove(rendered->configure_marker, ec);
        return Failure{Outcome::ConfigureFailed, failed("configure", c, from)};
      }
      write_stamp();
    }
    // One the configure step made (a wrapper script; older than configure's
    // stamp) is left: configure does not run again to make it.
    auto configured_at = rendered->configure.empty() ? fs::file_time_type::min() : fs::last_write_time(stamp, ec);
    remove_artifacts([&](fs::file_time_type at) { return at > configured_at; });
    auto build_from = log_size();
    auto b = run_step(rendered->build, paths.source, step_env, log, remaining(), step_file(paths));
    if (b.timed_out) return Failure{Outcome::Timeout, timed_out("build")};
    if (!b.ok()) return Failure{Outcome::BuildFailed, failed("build", b, build_from)};
    return std::nullopt;
  };
  auto failure = configure_and_build();
  // An incremental build can fail for the earlier check-in's sake (a stale
  // object or dependency file, a cached setting a renamed file no longer
  // matches), and that failure would be cached as this check-in's for good.
  // A failure only counts once a build from an empty directory fails too;
  // ccache makes that build mostly hits. Timeouts and killed steps are not
  // cached anyway.
  if (failure && incremental && !r.transient && failure->outcome != Outcome::Timeout &&
      !common::StopScope::stopped()) {  // a job called off wipes no build directory
    append_log(log,
               "# that build started from an earlier check-in's build directory: building afresh, so that "
               "only a failure of this check-in's own is recorded\n");
    clear_directory(paths.build);
    same_configuration = false;
    r.unexplained = false;
    tries_from = Clock::now();
    failure = configure_and_build();
  }
  if (failure) return finish(failure->outcome, std::move(failure->message));

  for (const auto& [name, path] : rendered->artifacts) {
    if (!fs::is_regular_file(path)) return finish(Outcome::MissingArtifact, "artifact " + name + " (" + path.string() + ") was not built");
    // An empty file runs as an empty shell script: every compile "succeeds"
    // and writes nothing, which would be blamed on the machine.
    if (fs::file_size(path, ec) == 0 && !ec)
      return finish(Outcome::MissingArtifact, "artifact " + name + " (" + path.string() + ") is empty");
    auto dest = scratch / "artifacts" / path.filename();
    fs::copy_file(fs::canonical(path), dest, fs::copy_options::overwrite_existing, ec);
    // On disk before the entry that names it is published (result.json is
    // fsynced): after a power loss the cache must not serve an empty compiler.
    auto synced = ec ? common::Status(common::Ok{}) : common::sync_file(dest);
    if (ec || !synced) {  // a full disk, say: the machine's failure, not the check-in's; not cached
      r.transient = true;
      return finish(Outcome::MissingArtifact, "cannot copy artifact " + name + ": " +
                                                  (ec ? ec.message() : synced.error().message) + " (not cached)");
    }
    if (auto why = loads_from_work_tree(dest, {paths.source, paths.build}))
      return finish(Outcome::MissingArtifact, "artifact " + name + " " + *why);
    r.artifacts[name] = dest;
  }
  if (!recipe.compile.empty()) {
    std::map<std::string, fs::path> final_paths;  // where the artifacts live once the entry is in place
    for (const auto& [name, path] : r.artifacts) final_paths[name] = paths.cache_entry / "artifacts" / path.filename();
    auto compile = render_compile(recipe, final_paths);
    if (!compile) return finish(Outcome::MissingArtifact, compile.error().message);
    r.compile = *compile;
    r.ml_flag_prefix = recipe.ml_flag_prefix;
    r.share_agreeing_defaults = recipe.share_agreeing_defaults;
    r.compile_timeout = recipe.compile_timeout;
    auto cc1 = render_cc1(recipe, final_paths);
    if (!cc1) return finish(Outcome::MissingArtifact, cc1.error().message);
    r.cc1 = *cc1;
  }
  return finish(Outcome::Ok, "");
}

common::Status use_compile_of(const Recipe& recipe, BuildResult& r) {
  r.compile.clear();
  r.ml_flag_prefix.clear();
  r.cc1.clear();
  r.share_agreeing_defaults = false;
  r.compile_timeout = Recipe::kDefaultCompileTimeout;
  if (recipe.compile.empty() || r.outcome != Outcome::Ok) return common::Ok{};
  auto compile = render_compile(recipe, r.artifacts);
  if (!compile) return compile.error();
  auto cc1 = render_cc1(recipe, r.artifacts);
  if (!cc1) return cc1.error();
  r.compile = *compile;
  r.ml_flag_prefix = recipe.ml_flag_prefix;
  r.cc1 = *cc1;
  r.share_agreeing_defaults = recipe.share_agreeing_defaults;
  r.compile_timeout = recipe.compile_timeout;
  return common::Ok{};
}

}  // namespace builder
