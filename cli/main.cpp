// driftwatch: a compiler-version stability regression tracker for learned
// compiler heuristics. main() only dispatches; see ARCHITECTURE.md.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "cli/commands.h"
#include "cli/decimal.h"
#include "common/process.h"
#include "common/text.h"

namespace {

const cli::Command kCommands[] = {
    {"demo", "the whole story on the sample compiler's year, with the embedded defaults", cli::attach_demo},
    {"db", "manage the database: start|stop|status|migrate", cli::attach_db},
    {"sample-history", "create the sample compiler's scripted year of check-ins as a git repository",
     cli::attach_sample_history},
    {"init", "write a commented project file (driftwatch.toml) to edit", cli::attach_init},
    {"sweep", "measure the project's sampled check-ins: build, evaluate, store (resumable)", cli::attach_sweep},
    {"bisect", "pin each change of the uplift to the check-in that made it", cli::attach_bisect},
    {"alerts", "drift alerts: list|show|ack|resolve|ignore|reopen|notify [--json] [--exit-code]", cli::attach_alerts},
    {"report", "the drift report: HTML with charts, Markdown, JSON [--serve]", cli::attach_report},
    {"decide", "should the policy be retrained? the project's rules on its series (exit 0 keep, 1 retrain)",
     cli::attach_decide},
    {"retrain", "train a candidate at the head, promote it only if it wins on held-out suites", cli::attach_retrain},
    {"commits", "list the sampled check-ins of a range (first-parent history)", cli::attach_commits},
    {"build", "build one check-in with a recipe (cached per commit and recipe)", cli::attach_build},
    {"cache", "the cache of built compilers: prune --max-size S --older-than D [--dry-run]", cli::attach_cache},
    {"eval", "evaluate a frozen policy against the default heuristic on a suite", cli::attach_eval},
    {"train", "train a learned inlining policy for a compiler build on a suite", cli::attach_train},
    {"policy", "the learned heuristic: serve, info; a project's lineage: list|show|promote|rollback", cli::attach_policy},
    {"suite", "benchmark suites: build smoke|train|validation|holdout|defaults or your own, list them",
     cli::attach_suite},
    {"worker", "claim and run jobs of the job table, on any machine that reaches the database", cli::attach_worker},
    {"jobs", "the job queue: queued, running (by whom), failed (why); retry|cancel", cli::attach_jobs},
};

int fail(const std::string& message) {
  auto line = common::trim(message);
  if (auto nl = line.find('\n'); nl != std::string::npos) line = line.substr(0, nl);
  fmt::print(stderr, "driftwatch: {}\n", line);
  return 2;
}

/// The first word that is neither an option nor an option's value.
std::string first_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--db" || a == "--data-dir") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] != '-') return a;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  common::kill_children_on_signals();
  cli::Context ctx;
  CLI::App app{"driftwatch: does a frozen learned compiler heuristic still beat the default as the compiler moves on?",
               "driftwatch"};
  app.set_version_flag("--version", "driftwatch 0.1.0");
  app.require_subcommand(1);
  app.allow_extras(false);
  app.fallthrough();
  app.add_option("--db", ctx.dsn, "PostgreSQL DSN (default: $DRIFTWATCH_DB, else the embedded database)")
      ->envname("DRIFTWATCH_DB");
  app.add_option("--data-dir", ctx.data_dir_flag,
                 "where driftwatch keeps its state (default: $DRIFTWATCH_DATA_DIR, $XDG_DATA_HOME/driftwatch, "
                 "or /var/lib/driftwatch as root)");
  app.add_flag("-q,--quiet", ctx.quiet, "no progress output");
  for (const auto& c : kCommands) c.attach(*app.add_subcommand(c.name, c.help), ctx);
  cli::require_decimal_integers(app);

  try {
    // CLI11 would only say "a subcommand is required"; name the word instead.
    auto word = first_word(argc, argv);
    bool known = word.empty();
    for (const auto& c : kCommands) known = known || word == c.name;
    if (!known) return fail("unknown subcommand '" + word + "' (see driftwatch --help)");
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    std::string what = e.what();
    return fail("unknown subcommand or option: " + common::trim(what.substr(what.find(':') + 1)) + " (see --help)");
  } catch (const CLI::ParseError& e) {
    return fail(std::string(e.what()) + " (see driftwatch --help)");
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  // What stdio still buffers is written at exit, where a failure (a full
  // disk under `alerts --json > file`) would go unsaid with status 0.
  if (std::fflush(stdout) != 0 || std::ferror(stdout))
    return fail(std::string("cannot write the output: ") + std::strerror(errno));
  return ctx.exit_code;
}
