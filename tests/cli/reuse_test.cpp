// Evaluating the same compiler once: check-ins that build a byte-identical
// compiler (docs-only commits) share one evaluation's results, each stored
// as a complete evaluation of its own build.
#include <doctest/doctest.h>

#include <tuple>
#include <vector>

#include "tests/support/sweep_project.h"

using testing::Project;

namespace {

std::string sha_of(const Project& p, const std::string& subject) {
  return p.psql("SELECT sha FROM commits WHERE subject = '" + subject + "'");
}

/// Every module row and measurement of the evaluation of `sha`'s build, in one text.
std::string rows_of(const Project& p, const std::string& sha, bool with_seconds) {
  return p.psql(
      "SELECT string_agg(x, E'\\n' ORDER BY x) FROM ("
      " SELECT 'result ' || bm.name || ' ' || r.heuristic || ' ' || r.outcome || ' ' || r.message AS x"
      "  FROM module_results r JOIN evaluations e ON e.id = r.evaluation_id JOIN builds b ON b.id = e.build_id"
      "  JOIN commits c ON c.id = b.commit_id JOIN benchmarks bm ON bm.id = r.benchmark_id WHERE c.sha = '" +
      sha +
      "'"
      " UNION ALL SELECT 'measure ' || bm.name || ' ' || m.heuristic || ' ' || m.metric || ' ' || m.value"
      "  FROM measurements m JOIN evaluations e ON e.id = m.evaluation_id JOIN builds b ON b.id = e.build_id"
      "  JOIN commits c ON c.id = b.commit_id JOIN benchmarks bm ON bm.id = m.benchmark_id WHERE c.sha = '" +
      sha + "'" + (with_seconds ? "" : " AND m.metric <> 'compile_seconds'") + ") t");
}

std::string summary_of(const Project& p, const std::string& sha, const std::string& path) {
  return p.psql("SELECT e.summary #>> '" + path +
                "' FROM evaluations e JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = b.commit_id "
                "WHERE c.sha = '" + sha + "'");
}

}  // namespace

TEST_CASE("check-ins that build a byte-identical compiler are evaluated once and each stored complete") {
  Project p;
  // Every check-in of the first two weeks and a half: the import, a docs-only
  // commit (the same dwcc) and the -Oz threshold change (another dwcc).
  p.set("every = \"2w\"", "every = \"1\"");
  p.set("until = \"\"", "until = \"2025-12-16\"");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto import = sha_of(p, "Import dwcc"), docs = sha_of(p, "[Docs] Add release notes"),
       threshold = sha_of(p, "[Inliner] Raise the -Oz threshold from 5 to 15");
  REQUIRE(import.size() == 40);
  REQUIRE(docs.size() == 40);
  REQUIRE(threshold.size() == 40);
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'") == "3");

  // The docs-only check-in took the import's rows, compile times included: nothing was compiled again.
  CHECK(s.output.find("reused from " + import.substr(0, 12) + "'s evaluation") != std::string::npos);
  CHECK(summary_of(p, docs, "{reused_from,commit}") == import);
  CHECK(summary_of(p, docs, "{reused_from,text}").find("identical compiler ") != std::string::npos);
  auto original = rows_of(p, import, true);
  CHECK(original.find("measure ") != std::string::npos);
  CHECK(rows_of(p, docs, true) == original);
  CHECK(summary_of(p, docs, "{summary,uplift}") == summary_of(p, import, "{summary,uplift}"));
  // The per-package figures are rebuilt from the reused rows, not copied: they must agree too.
  CHECK(!summary_of(p, import, "{packages,0,package}").empty());
  CHECK(summary_of(p, docs, "{packages}") == summary_of(p, import, "{packages}"));
  CHECK(summary_of(p, import, "{reused_from}").empty());
  // A different compiler is evaluated for itself.
  CHECK(summary_of(p, threshold, "{reused_from}").empty());
  CHECK(summary_of(p, threshold, "{reuse_key}") != summary_of(p, import, "{reuse_key}"));
  CHECK(summary_of(p, threshold, "{reuse_key}").size() == 64);

  std::string policy = std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy";
  // `eval` of the docs-only check-in, with the options given.
  auto eval_docs = [&](std::vector<std::string> options = {}) {
    std::vector<std::string> a = {"eval", "--repo", p.repo, "--build", docs, "--suite", "testdata", "--policy", policy};
    a.insert(a.end(), options.begin(), options.end());
    return p.run(a);
  };
  // --no-reuse compiles again and gives the same figures.
  auto again = eval_docs({"--no-reuse", "--json"});
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  CHECK(again.output.find("reused from") == std::string::npos);
  CHECK(summary_of(p, docs, "{reused_from}").empty());
  CHECK(rows_of(p, docs, false) == rows_of(p, import, false));
  CHECK(rows_of(p, docs, true) != original);  // its own compile times now
  CHECK(summary_of(p, docs, "{summary,uplift}") == summary_of(p, import, "{summary,uplift}"));

  // Without it, `eval` keeps what the check-in measured with this very
  // compiler (a check-in queued again: its repository moved, a job requeued).
  auto own = rows_of(p, docs, true);
  auto kept = eval_docs();
  INFO(kept.output);
  REQUIRE(kept.exit_code == 0);
  CHECK(kept.output.find("kept its evaluation ") != std::string::npos);
  CHECK(kept.output.find("reused from") == std::string::npos);
  CHECK(rows_of(p, docs, true) == own);

  // A result holding a timeout depends on the machine's load: it is never
  // kept nor taken. With the check-in's own row so, `eval` takes the
  // earlier check-in's result and says so.
  auto with_timeout = [&](const std::string& sha) {
    p.psql(
        "UPDATE module_results SET outcome = 'timeout' WHERE heuristic = 'default' AND evaluation_id = "
        "(SELECT e.id FROM evaluations e JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = b.commit_id "
        "WHERE c.sha = '" +
        sha + "') AND benchmark_id = (SELECT min(benchmark_id) FROM module_results)");
  };
  with_timeout(docs);
  auto reused = eval_docs();
  INFO(reused.output);
  REQUIRE(reused.exit_code == 0);
  CHECK(reused.output.find("reused from " + import.substr(0, 12) + "'s evaluation") != std::string::npos);
  CHECK(rows_of(p, docs, true) == original);
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'") == "3");

  // With the earlier check-in's result holding one too, it compiles.
  with_timeout(import);
  with_timeout(docs);
  auto timed_out = eval_docs();
  INFO(timed_out.output);
  REQUIRE(timed_out.exit_code == 0);
  CHECK(timed_out.output.find("reused from") == std::string::npos);
  CHECK(timed_out.output.find("kept its evaluation") == std::string::npos);
  CHECK(summary_of(p, docs, "{reused_from}").empty());
  CHECK(rows_of(p, docs, true) != original);

  // So is any other failure of the machine rather than of the compiler; a
  // crash the compiler makes on its own is its result, and is taken.
  auto source_row = "(SELECT e.id FROM evaluations e JOIN builds b ON b.id = e.build_id JOIN commits c ON "
                    "c.id = b.commit_id WHERE c.sha = '" + import + "') AND outcome <> 'ok'";
  for (const auto& [outcome, message, taken] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"channel-error", "the ML channel closed", false},
           {"internal-error", "cannot create the object directory", false},
           {"compiler-crashed", "compiler killed by signal 9 (Killed)", false},
           {"compiler-crashed", "compiler exit status 1: LLVM ERROR: out of memory", false},
           {"compiler-crashed", "compiler exit status 1: LLVM ERROR: unsupported relocation", true}}) {
    p.psql("UPDATE module_results SET outcome = '" + outcome + "', message = '" + message +
           "' WHERE evaluation_id = " + source_row);
    with_timeout(docs);  // only the earlier check-in's result may be taken
    auto again = eval_docs();
    INFO(outcome << ": " << message << "\n" << again.output);
    REQUIRE(again.exit_code == 0);
    CHECK((again.output.find("reused from " + import.substr(0, 12)) != std::string::npos) == taken);
  }

  // A link group that failed may have failed by the machine (the linker
  // timed out under load, or is missing on this host), and the linker is
  // not in the key: such a result is neither taken nor kept.
  auto failed_link = [&](const std::string& sha) {
    p.psql(
        "UPDATE evaluations SET summary = jsonb_set(summary, '{linked}', "
        "'{\"groups\": [{\"group\": \"g\", \"ok\": false, \"message\": \"link timed out\"}]}') "
        "WHERE id = (SELECT e.id FROM evaluations e JOIN builds b ON b.id = e.build_id JOIN commits c ON "
        "c.id = b.commit_id WHERE c.sha = '" +
        sha + "')");
  };
  failed_link(import);
  with_timeout(docs);
  auto unlinked = eval_docs();
  INFO(unlinked.output);
  REQUIRE(unlinked.exit_code == 0);
  CHECK(unlinked.output.find("reused from") == std::string::npos);
  failed_link(docs);  // its own row, measured just now
  auto own_unlinked = eval_docs();
  INFO(own_unlinked.output);
  REQUIRE(own_unlinked.exit_code == 0);
  CHECK(own_unlinked.output.find("kept its evaluation") == std::string::npos);
  CHECK(own_unlinked.output.find("reused from") == std::string::npos);
  // And objects asked to be kept are compiled: a kept result has none.
  auto objects = eval_docs({"--keep-objects"});
  INFO(objects.output);
  REQUIRE(objects.exit_code == 0);
  CHECK(objects.output.find("kept its evaluation") == std::string::npos);
  // Where they are said, and the next evaluation leaves them there.
  auto at = objects.output.find("objects kept in " + (p.dir / "data" / "objects").string() + "/");
  REQUIRE(at != std::string::npos);
  std::filesystem::path kept_dir = objects.output.substr(at + 16, objects.output.find(' ', at + 16) - at - 16);
  CHECK(std::filesystem::exists(kept_dir / "learned"));
  REQUIRE(eval_docs({"--no-reuse"}).exit_code == 0);
  CHECK(std::filesystem::exists(kept_dir / "learned"));
}

TEST_CASE("results that shared agreeing defaults are not taken where every default is to be compiled") {
  Project p;
  p.set("every = \"2w\"", "every = \"1\"");
  p.set("until = \"\"", "until = \"2025-12-16\"");
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  auto import = sha_of(p, "Import dwcc"), docs = sha_of(p, "[Docs] Add release notes");
  // The shipped gate defers to the default (a margin): the sample recipe shares agreeing defaults.
  std::string gate = std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/policies/sample-compiler-v1.0.policy";
  auto eval = [&](const std::string& sha, std::vector<std::string> more) {
    std::vector<std::string> args = {"eval", "--repo", p.repo, "--build", sha, "--suite", "testdata", "--policy", gate};
    args.insert(args.end(), more.begin(), more.end());
    auto r = p.run(args);
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return r.output;
  };
  CHECK(eval(import, {}).find("reused from") == std::string::npos);
  CHECK(eval(docs, {}).find("reused from " + import.substr(0, 12)) != std::string::npos);
  auto every = eval(docs, {"--compile-every-default"});
  CHECK(every.find("reused from") == std::string::npos);
  // Its result is then taken by the next run that compiles every default.
  CHECK(eval(import, {"--compile-every-default"}).find("reused from " + docs.substr(0, 12)) != std::string::npos);
}
