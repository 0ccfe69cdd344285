// driftwatch db start|stop|status|migrate
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "cli/commands.h"
#include "db/embedded.h"
#include "db/store.h"

namespace cli {
namespace {

db::EmbeddedCluster cluster(const Context& ctx) { return db::EmbeddedCluster(ctx.data_dir() / "postgres"); }

void require_embedded(const Context& ctx, const char* verb) {
  if (!ctx.embedded())
    throw common::Fatal(fmt::format("`db {}` manages the embedded database only; the server given by --db/DRIFTWATCH_DB is never touched", verb));
}

void db_start(const Context& ctx) {
  require_embedded(ctx, "start");
  auto c = cluster(ctx);
  c.start();
  auto s = c.status();
  fmt::print("embedded PostgreSQL {} running in {} (pid {})\n", s.server_version, c.root().string(),
             s.pid.value_or(0));
}

void db_stop(const Context& ctx) {
  require_embedded(ctx, "stop");
  auto c = cluster(ctx);
  bool was_running = c.status().running;
  c.stop();
  fmt::print("embedded PostgreSQL in {} {}\n", c.root().string(), was_running ? "stopped" : "was not running");
}

// Exit status 3 when the embedded server is not running, 4 when there is
// none yet, as `pg_ctl status` says them, so a health check can test it.
constexpr int kNotRunning = 3, kNotCreated = 4;

void db_status(Context& ctx) {
  if (ctx.embedded()) {
    auto c = cluster(ctx);
    auto s = c.status();
    if (!s.initialized) {
      fmt::print("embedded PostgreSQL in {}: not created yet (`driftwatch db start` creates it)\n", c.root().string());
      ctx.exit_code = kNotCreated;
      return;
    }
    if (!s.running) {
      fmt::print("embedded PostgreSQL {} in {}: stopped\n", s.server_version, c.root().string());
      ctx.exit_code = kNotRunning;
      return;
    }
    fmt::print("embedded PostgreSQL {} in {}: running (pid {})\n", s.server_version, c.root().string(),
               s.pid.value_or(0));
  }
  auto target = ctx.target();
  auto database = db::Database::connect(target).take();
  int have = database.schema_version();
  fmt::print("database {}: reachable, schema version {} (this driftwatch: {}){}\n", target.display, have,
             db::latest_schema_version(),
             // Any other command migrates it first: nothing to do by hand.
             have < db::latest_schema_version()
                 ? "; the next command that opens it migrates it (or `driftwatch db migrate`)"
             : have > db::latest_schema_version() ? "; newer than this driftwatch"
                                                  : "");
  if (have != db::latest_schema_version()) return;
  // A `running` evaluation whose process died (Ctrl-C, SIGKILL) is recorded as such.
  db::record_interrupted_evaluations(database);
  auto e = db::count_evaluations(database);
  fmt::print("evaluations: {} done, {} failed, {} running, {} interrupted\n", e.done, e.failed, e.running,
             e.interrupted);
}

}  // namespace

void attach_db(CLI::App& sub, Context& ctx) {
  require_one_subcommand(sub);
  sub.add_subcommand("start", "create (first time) and start the embedded PostgreSQL")
      ->callback([&ctx] { db_start(ctx); });
  sub.add_subcommand("stop", "stop the embedded PostgreSQL")->callback([&ctx] { db_stop(ctx); });
  sub.add_subcommand(
         "status",
         "show the database and its schema version (exit 3: the embedded server is not running; 4: not created yet)")
      ->callback([&ctx] { db_status(ctx); });
  sub.add_subcommand("migrate", "apply pending schema migrations (idempotent)")->callback([&ctx] {
    if (ctx.embedded()) cluster(ctx).start();
    auto database = db::Database::connect(ctx.target()).take();
    auto report = database.migrate();
    if (report.applied.empty()) {
      fmt::print("schema is up to date at version {}\n", report.to_version);
    } else {
      for (const auto& name : report.applied) fmt::print("applied {}\n", name);
      fmt::print("schema version {} -> {}\n", report.from_version, report.to_version);
    }
  });
}

}  // namespace cli
