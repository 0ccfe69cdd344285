// Alerts end to end: opened by a sweep, delivered to a command hook and to a
// webhook served on 127.0.0.1 by this test, retried while the webhook is
// down, moved through their states by people.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "tests/support/history_file.h"
#include "tests/support/sweep_project.h"

using testing::Project;
using testing::run_driftwatch;

namespace {

/// A one-route HTTP server on 127.0.0.1: records each request's body and
/// answers 200 (or `status`).
class WebhookServer {
 public:
  WebhookServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    REQUIRE(listen(fd_, 8) == 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~WebhookServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hooks/driftwatch?token=s3cret"; }
  std::vector<std::string> bodies() {
    std::lock_guard<std::mutex> lock(mutex_);
    return bodies_;
  }

 private:
  void serve() {
    while (!stop_) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string request;
      char buf[4096];
      std::size_t want = std::string::npos;
      while (want == std::string::npos || request.size() < want) {
        auto n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        request.append(buf, n);
        auto end = request.find("\r\n\r\n");
        if (end != std::string::npos && want == std::string::npos) {
          auto cl = request.find("Content-Length: ");
          want = end + 4 + (cl == std::string::npos ? 0 : std::stoul(request.substr(cl + 16)));
        }
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        auto end = request.find("\r\n\r\n");
        if (end != std::string::npos) bodies_.push_back(request.substr(end + 4));
      }
      std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)!write(c, reply.data(), reply.size());
      close(c);
    }
  }
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> bodies_;
};

/// A loopback port nobody listens on.
int closed_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

using testing::history_8w_with;

/// The edit after which dwcc's driver keeps the ML inliner's options to
/// itself: from there the compiler never consults the policy.
const std::string kDropMlOptions = R"([[checkin.edit]]
file = "src/main.cpp"
replace = "  for (int I = 1; I < argc; ++I)\n    Args.push_back(argv[I]);"
with = "  for (int I = 1; I < argc; ++I)\n    if (!StringRef(argv[I]).contains(\"enable-ml-inliner\"))\n      Args.push_back(argv[I]);"
)";

/// A tenth week of docs after it, so the culprit lies between two samples.
const std::string kDocsWeek9 = R"(
[[checkin]]
week = 9
author = "Alex Chen <alex.chen@example.org>"
message = "[Docs] Release notes: the driver's options"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n\n## 1.2\nThe driver keeps its own options.\n"
)";
/// Week 8: a check-in that breaks the build (a header it includes is not in
/// the tree: a fatal error at once, not a whole compile of main.cpp).
const std::string kBreakPipelineInclude = R"(
[[checkin]]
week = 8
author = "Priya Raman <priya.raman@example.org>"
message = "[Support] Move the pipeline's header to dwcc/Pipeline.h"
[[checkin.edit]]
file = "src/main.cpp"
replace = "#include \"Pipeline.h\""
with = "#include \"dwcc/Pipeline.h\""
)";

/// The 8-week history plus a ninth week whose driver stops passing the ML
/// inliner's option on, then a tenth week of docs.
std::string history_where_the_policy_is_lost(const std::filesystem::path& dir) {
  return history_8w_with(dir / "history-policy-lost.toml", R"(
[[checkin]]
week = 8
author = "Jon Meyer <jon.meyer@example.org>"
message = "[Driver] Keep the ML inliner's options to ourselves"
)" + kDropMlOptions + kDocsWeek9);
}

}  // namespace

TEST_CASE("where the compiler stops consulting the policy, the sweep opens a policy-unusable alert and decide says retrain") {
  testing::TempDir scratch;
  Project p(history_where_the_policy_is_lost(scratch.path()));
  p.set("every = \"2w\"", "every = \"1m\"");
  auto s = p.sweep(p.dsn);
  auto culprit = p.psql("SELECT sha FROM commits WHERE subject LIKE '[Driver]%'");
  auto head = p.psql("SELECT sha FROM commits WHERE subject LIKE '[Docs] Release notes: the driver%'");
  REQUIRE(culprit.size() == 40);
  REQUIRE(head.size() == 40);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  // Bisection pins it to the driver's check-in, which no sample landed on.
  CHECK(s.output.find("the policy cannot run on testdata from " + culprit.substr(0, 12)) != std::string::npos);
  CHECK(s.output.find("never consulted the policy") != std::string::npos);
  CHECK(p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id "
               "WHERE a.kind = 'policy-unusable'") == culprit);
  CHECK(std::stoi(p.psql("SELECT details->>'bisect_evaluations' FROM alerts WHERE kind = 'policy-unusable'")) >= 1);
  // The failed evaluation is the check-in's result, recorded once and not retried.
  CHECK(p.psql("SELECT e.status FROM evaluations e JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = "
               "b.commit_id WHERE c.sha = '" + head + "'") == "failed");
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'policy-unusable'") == "1");
  CHECK(p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.first_bad_commit_id "
               "WHERE a.kind = 'policy-unusable'") == culprit);
  CHECK(p.psql("SELECT details->>'evaluation_error' FROM alerts WHERE kind = 'policy-unusable'")
            .find("never consulted the policy") != std::string::npos);
  auto list = p.run({"alerts", "--config", p.config});
  CHECK(list.output.find("policy-unusable") != std::string::npos);

  auto d = p.run({"decide", "--config", p.config});
  INFO(d.output);
  CHECK(d.exit_code == 1);
  CHECK(d.output.find("RETRAIN") != std::string::npos);
  CHECK(d.output.find("cannot run at all at the newest evaluated check-in " + head.substr(0, 12)) !=
        std::string::npos);

  // A later sweep finds the same change: no second alert.
  auto again = p.sweep(p.dsn, {"--new"});
  CHECK(again.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'policy-unusable'") == "1");
}

TEST_CASE("a compiler that opens the channel but stops asking the policy: the uplift alert says it is not consulted") {
  testing::TempDir scratch;
  // Week 8 marks every function noinline before the pipeline: the ML
  // inliner still starts (the channel opens, its header is sent) but asks
  // about no call site, so every module ties and nothing fails.
  Project p(history_8w_with(scratch / "history-unasked.toml", R"(
[[checkin]]
week = 8
author = "Jon Meyer <jon.meyer@example.org>"
message = "[IPO] Keep every function out of line"
[[checkin.edit]]
file = "src/main.cpp"
replace = "  dwcc::buildAndRunPipeline(*M, *TM, Level);"
with = "  for (Function &F : *M)\n    if (!F.isDeclaration())\n      F.addFnAttr(Attribute::NoInline);\n  dwcc::buildAndRunPipeline(*M, *TM, Level);"
)" + kDocsWeek9));
  p.set("every = \"2w\"", "every = \"1m\"");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto culprit = p.psql("SELECT sha FROM commits WHERE subject LIKE '[IPO]%'");
  REQUIRE(culprit.size() == 40);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'policy-unusable'") == "0");  // it did run
  auto pinned = p.psql(
      "SELECT a.kind || '|' || (a.details->>'decisions_after') FROM alerts a "
      "JOIN commits c ON c.id = a.culprit_commit_id WHERE c.sha = '" +
      culprit + "'");
  // Here the frozen test policy was losing, so its uplift "rose" to ties.
  CHECK(pinned == "uplift-rose|0");
  CHECK(std::stoll(p.psql("SELECT a.details->>'decisions_before' FROM alerts a JOIN commits c ON c.id = "
                          "a.culprit_commit_id WHERE c.sha = '" +
                          culprit + "'")) > 0);
  CHECK(s.output.find("the compiler asked the policy nothing there") != std::string::npos);
  // Said wherever the alert is read again: its list, the notification text, the report.
  auto list = p.run({"alerts", "--config", p.config});
  CHECK(list.output.find("the compiler asked the policy nothing there") != std::string::npos);

  // A rule that fires there (the policy's age) does not send `decide --act`
  // to hours of training a policy the compiler would not ask either.
  p.set("age = false", "age = true");
  p.set("max_age_checkins = 0", "max_age_checkins = 1");
  auto d = p.run({"decide", "--config", p.config, "--act"});
  INFO(d.output);
  CHECK(d.exit_code == 0);
  CHECK(d.output.find("FIRED  age") != std::string::npos);
  CHECK(d.output.find("kept: the compiler asked the policy nothing at the head") != std::string::npos);
  CHECK(d.output.find("candidate") == std::string::npos);
  CHECK(p.psql("SELECT verdict FROM retraining_decisions ORDER BY id DESC LIMIT 1") == "keep");
  // The stored evidence names its decision, as the printed one does.
  auto id = p.psql("SELECT id FROM retraining_decisions ORDER BY id DESC LIMIT 1");
  CHECK(d.output.find("decision " + id + ": keep") != std::string::npos);
  CHECK(p.psql("SELECT evidence->>'decision_id' FROM retraining_decisions WHERE id = " + id) == id);
  // The report says it was kept, not that a rule fired.
  auto out = p.dir / "report";
  auto rep = p.run({"report", "--config", p.config, "--out", out.string()});
  REQUIRE_MESSAGE(rep.exit_code == 0, rep.output);
  std::ifstream in(out / "report.md");
  std::string md((std::istreambuf_iterator<char>(in)), {});
  CHECK(rep.output.find("retraining: keep") != std::string::npos);
  CHECK(rep.output.find("fired: age") == std::string::npos);
  CHECK(md.find("**keep**") != std::string::npos);
  CHECK(md.find("rule: age") == std::string::npos);
  CHECK(md.find("age measured") != std::string::npos);
  CHECK(md.find("fired, held") != std::string::npos);
}

TEST_CASE("bisection across check-ins that do not build says how many it tried without an evaluation") {
  testing::TempDir scratch;
  // The build breaks, stays broken a check-in, then the check-in that fixes
  // it also drops the ML options: bisection meets the broken ones first.
  Project p(history_8w_with(scratch / "history-broken-then-lost.toml", kBreakPipelineInclude + R"(
[[checkin]]
week = 8
hours = 1
author = "Alex Chen <alex.chen@example.org>"
message = "[Docs] Say where the pipeline starts"
[[checkin.edit]]
file = "docs/Pipeline.md"
write = "# The pipeline\n\nIt starts in main.\n"

[[checkin]]
week = 8
hours = 2
author = "Jon Meyer <jon.meyer@example.org>"
message = "[Driver] Fix the include and keep the ML inliner's options to ourselves"
[[checkin.edit]]
file = "src/main.cpp"
replace = "#include \"dwcc/Pipeline.h\""
with = "#include \"Pipeline.h\""
)" + kDropMlOptions + kDocsWeek9));
  p.set("every = \"2w\"", "every = \"1m\"");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  // The broken check-ins bisection built are counted apart from its evaluations.
  auto broken = p.psql(
      "SELECT count(*) FROM builds b JOIN commits c ON c.id = b.commit_id WHERE b.outcome = 'build-failed' AND "
      "(c.subject LIKE '[Support] Move%' OR c.subject LIKE '[Docs] Say where%')");
  REQUIRE(broken != "0");
  CHECK(s.output.find("(" + broken + " more tried gave no evaluation)") != std::string::npos);
  // And the alert still lands after them: its first bad check-in is the one that dropped the options.
  auto culprit = p.psql("SELECT sha FROM commits WHERE subject LIKE '[Driver] Fix the include%'");
  REQUIRE(culprit.size() == 40);
  CHECK(p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.first_bad_commit_id "
               "WHERE a.kind = 'policy-unusable'") == culprit);
}

namespace {

/// The 8-week history, then a check-in after which the compiler crashes on
/// three of the five testdata modules, only when the ML inliner is on.
std::string history_where_modules_fail(const std::filesystem::path& dir) {
  return history_8w_with(dir / "history-modules-fail.toml", R"(
[[checkin]]
week = 8
author = "Jon Meyer <jon.meyer@example.org>"
message = "[MLInliner] Check the advisor's state on entry"
[[checkin.edit]]
file = "src/main.cpp"
replace = "  if (!M)\n"
with = "  for (int I = 1; I < argc; ++I)\n    if (StringRef(argv[I]).contains(\"enable-ml-inliner\") && (StringRef(InputFilename).contains(\"json\") || StringRef(InputFilename).contains(\"ini\") || StringRef(InputFilename).contains(\"sort\")))\n      abort();\n  if (!M)\n"

[[checkin]]
week = 9
author = "Alex Chen <alex.chen@example.org>"
message = "[Docs] Release notes: the advisor's checks"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n\n## 1.2\nThe advisor checks its state.\n"
)");
}

}  // namespace

namespace {

/// The 8-week history with a check-in in `week` whose compiler aborts on
/// every input, with or without the policy.
std::string history_aborting_from(const std::filesystem::path& dir, int week) {
  return history_8w_with(dir / ("history-aborting-from-" + std::to_string(week) + ".toml"),
                         "\n[[checkin]]\nweek = " + std::to_string(week) + R"toml(
author = "Jon Meyer <jon.meyer@example.org>"
message = "[Driver] Verify the module before optimizing it"
[[checkin.edit]]
file = "src/main.cpp"
replace = "  if (!M)\n"
with = "  if (argc > 0)\n    abort();\n  if (!M)\n"
)toml");
}

}  // namespace

TEST_CASE("a compiler that compiles nothing even without the policy is a broken check-in, not the policy's failure") {
  testing::TempDir scratch;
  Project p(history_aborting_from(scratch.path(), 8));
  p.set("every = \"2w\"", "every = \"1m\"");
  SUBCASE("a policy that decides alone") {}
  SUBCASE("a policy with a margin, whose evaluation first probes where the compiler sends its default decision") {
    p.set(std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/data/frozen-test.policy",
          std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/policies/sample-compiler-v1.0.policy");
  }
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  // (The margin policy's evaluation stops at its probe: "cannot compile the probe module even without the policy".)
  CHECK(s.output.find(" even without the policy") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE summary->>'compiler_broken' = 'true'") == "1");
  // Nothing to compare yet: said so, not "no change".
  CHECK(s.output.find("drift: one evaluated check-in so far: a change needs two to show") != std::string::npos);
  // The crash (an abort(), no message) says where it was, not the stack dump's last frame.
  CHECK(s.output.find("_start (") == std::string::npos);
  // Nothing says the policy cannot run, and nothing asks to retrain it.
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'policy-unusable'") == "0");
  CHECK(s.output.find("the policy cannot run") == std::string::npos);
  auto d = p.run({"decide", "--config", p.config});
  INFO(d.output);
  CHECK(d.output.find("cannot run at all") == std::string::npos);
  CHECK(d.output.find("every feature the policy uses is sent") != std::string::npos);
}

TEST_CASE("modules the policy's compile starts crashing on open a modules-failing alert pinned to the check-in") {
  testing::TempDir scratch;
  Project p(history_where_modules_fail(scratch.path()));
  p.set("every = \"2w\"", "every = \"1m\"");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  auto culprit = p.psql("SELECT sha FROM commits WHERE subject LIKE '[MLInliner]%'");
  REQUIRE(culprit.size() == 40);
  // Each crashing module is compared at its last size, so no figure moves:
  // without this alert nothing would say it.
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'modules-failing'") == "1");
  CHECK(p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id "
               "WHERE a.kind = 'modules-failing'") == culprit);
  CHECK(p.psql("SELECT details->>'newly_failing' FROM alerts WHERE kind = 'modules-failing'") == "3");
  auto failing = p.psql("SELECT details->>'failing' FROM alerts WHERE kind = 'modules-failing'");
  CHECK(failing.find("json") != std::string::npos);
  CHECK(failing.find("utf8") == std::string::npos);
  CHECK(s.output.find("3 more modules of testdata fail to compile with the policy") != std::string::npos);
  // Each with the reason its compile under the policy failed there.
  auto shown =
      p.run({"alerts", "--config", p.config, "show", p.psql("SELECT id FROM alerts WHERE kind = 'modules-failing'")});
  INFO(shown.output);
  CHECK(shown.output.find("json.c: compiler-crashed: ") != std::string::npos);
  auto again = p.sweep(p.dsn, {"--new"});
  CHECK(again.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'modules-failing'") == "1");
}

TEST_CASE(
    "a slow drift of the uplift across weekly samples, each week below the threshold, opens alerts over its range") {
  Project p;
  p.set("every = \"2w\"", "every = \"1w\"");
  p.set("bisect = true", "bisect = false");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto spread_drops = "SELECT count(*) FROM alerts WHERE kind = 'uplift-dropped' AND details->>'spread' = 'true'";
  REQUIRE(p.psql(spread_drops) == "0");
  // The sizes, rewritten: every module the same under both heuristics but
  // json, whose learned size grows 0.8% a sample (the policy losing its win
  // there a little every week): the uplift falls about 0.16 points a sample,
  // below the 0.2-point threshold between any two samples.
  p.psql("UPDATE measurements SET value = 1000 WHERE metric = 'text_bytes'");
  auto rewritten = p.psql(
      "UPDATE measurements m SET value = 980 + 8 * r.rank FROM (SELECT e.id, rank() OVER (ORDER BY c.committed_at) - "
      "1 AS rank FROM evaluations e JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = b.commit_id WHERE "
      "e.status = 'done') r, benchmarks bm WHERE m.evaluation_id = r.id AND bm.id = m.benchmark_id AND bm.name = "
      "'json.c' AND m.heuristic = 'learned' AND m.metric = 'text_bytes'");
  INFO(rewritten);
  auto evaluated = std::stoi(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'"));
  REQUIRE(evaluated >= 5);
  CHECK(rewritten == "UPDATE " + std::to_string(evaluated));
  p.set("bisect = false", "bisect = true");
  auto again = p.sweep(p.dsn);
  INFO(again.output);
  REQUIRE(again.exit_code == 0);
  // Two samples' worth of drift (0.32 points) each: one alert from the
  // first sample, the next from where it ended.
  CHECK(p.psql(spread_drops) == std::to_string((evaluated - 1) / 2));
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE details->>'across_samples' = 'true'") ==
        std::to_string((evaluated - 1) / 2));
  // No check-in made it: no culprit, nothing bisected (bisection on), said as a drift in parts.
  CHECK(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done'") == std::to_string(evaluated));
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'uplift-dropped' AND details->>'spread' = 'true' AND "
               "(culprit_commit_id IS NOT NULL OR (details->>'bisect_evaluations')::int <> 0)") == "0");
  CHECK(again.output.find("uplift on testdata dropped 0.3") != std::string::npos);
  CHECK(again.output.find(" points in parts (samples +0.40% → +0.08%") != std::string::npos);
  // The ranges follow each other: each starts where the last ended.
  auto ranges = p.psql(
      "SELECT string_agg(lg.sha || '>' || fb.sha, ' ' ORDER BY fb.committed_at) FROM alerts a JOIN commits lg ON "
      "lg.id = a.last_good_commit_id JOIN commits fb ON fb.id = a.first_bad_commit_id WHERE a.kind = "
      "'uplift-dropped' AND a.details->>'spread' = 'true'");
  auto parts = common::split(ranges, ' ');
  for (std::size_t k = 1; k < parts.size(); ++k) CHECK(parts[k].substr(0, 40) == parts[k - 1].substr(41));

  // The second sample's move grows past the threshold (a step of its own):
  // each later drift is now told from there, over other samples. The old
  // drift alerts are done, not left open beside the new ones: the first,
  // whose range holds the step, follows it (narrowed), the others are
  // superseded.
  p.set("bisect = true", "bisect = false");
  p.psql(
      "UPDATE measurements m SET value = m.value + 8 FROM benchmarks bm WHERE bm.id = m.benchmark_id AND bm.name = "
      "'json.c' AND m.heuristic = 'learned' AND m.metric = 'text_bytes' AND m.value > 980");
  auto shifted = p.sweep(p.dsn);
  INFO(shifted.output);
  REQUIRE(shifted.exit_code == 0);
  auto open_drifts = "SELECT count(*) FROM alerts WHERE details->>'across_samples' = 'true' AND state = 'open'";
  CHECK(p.psql(open_drifts) == std::to_string((evaluated - 2) / 2));
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE details->>'across_samples' = 'true' AND state = 'resolved' AND "
               "note LIKE 'superseded: the slow drift is now told over other samples%'") ==
        std::to_string((evaluated - 1) / 2 - 1));
  // The step is an ordinary alert, between the first two samples: the first drift's, narrowed.
  CHECK(p.psql("WITH s AS (SELECT b.commit_id, rank() OVER (ORDER BY c.committed_at) - 1 AS rank FROM evaluations e "
               "JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = b.commit_id WHERE e.status = 'done') "
               "SELECT count(*) FROM alerts a WHERE a.kind = 'uplift-dropped' AND a.state = 'open' AND "
               "a.details->>'spread' = 'false' AND a.last_good_commit_id = (SELECT commit_id FROM s WHERE rank = 0) "
               "AND a.first_bad_commit_id = (SELECT commit_id FROM s WHERE rank = 1)") == "1");
  // Back as it was: the drifts told over the first samples again are open
  // again (the superseded ones reopened, the narrowed one anew).
  p.psql(
      "UPDATE measurements m SET value = m.value - 8 FROM benchmarks bm WHERE bm.id = m.benchmark_id AND bm.name = "
      "'json.c' AND m.heuristic = 'learned' AND m.metric = 'text_bytes' AND m.value > 988");
  auto back = p.sweep(p.dsn);
  INFO(back.output);
  REQUIRE(back.exit_code == 0);
  CHECK(p.psql(open_drifts) == std::to_string((evaluated - 1) / 2));
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE details->>'across_samples' = 'true' AND state = 'open' AND note = "
               "'found again'") == std::to_string((evaluated - 1) / 2 - 1));
}

TEST_CASE("modules the compiler stops asking the policy on, while it asks on others, open a modules-failing alert") {
  testing::TempDir scratch;
  // Week 6 leaves the ML inliner off for json, ini and utf8 (a fast path a
  // compiler might take): their learned compiles succeed without opening the
  // channel, the others still ask. Compared at their last sizes, no figure
  // would move: only this alert says the policy no longer reaches them.
  Project p(history_8w_with(scratch.path() / "history-unasked-modules.toml", R"toml(
[[checkin]]
week = 6
author = "Jon Meyer <jon.meyer@example.org>"
message = "[Driver] Skip the ML advisor for small inputs"
[[checkin.edit]]
file = "src/main.cpp"
replace = "  for (int I = 1; I < argc; ++I)\n    Args.push_back(argv[I]);\n"
with = "  bool Small = false;\n  for (int I = 1; I < argc; ++I)\n    Small |= argv[I][0] != '-' && (StringRef(argv[I]).contains(\"json\") || StringRef(argv[I]).contains(\"ini\") || StringRef(argv[I]).contains(\"utf8\"));\n  for (int I = 1; I < argc; ++I)\n    if (!Small || !StringRef(argv[I]).contains(\"enable-ml-inliner\"))\n      Args.push_back(argv[I]);\n"
)toml" + kDocsWeek9));
  p.set("every = \"2w\"", "every = \"1m\"");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto culprit = p.psql("SELECT sha FROM commits WHERE subject LIKE '[Driver] Skip%'");
  REQUIRE(culprit.size() == 40);
  // The evaluation ran (others asked): not the policy being unusable.
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'policy-unusable'") == "0");
  CHECK(p.psql("SELECT count(DISTINCT r.evaluation_id) FROM module_results r WHERE r.outcome = "
               "'policy-not-consulted'") != "0");
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'modules-failing'") == "1");
  CHECK(p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id "
               "WHERE a.kind = 'modules-failing'") == culprit);
  CHECK(p.psql("SELECT details->>'newly_failing' FROM alerts WHERE kind = 'modules-failing'") == "3");
  CHECK(p.psql("SELECT details->>'failing' FROM alerts WHERE kind = 'modules-failing'") ==
        "[\"ini.c\", \"json.c\", \"utf8.c\"]");
  CHECK(s.output.find("3 more modules of testdata fail to compile with the policy (a crash or a timeout; or a "
                      "compile that never asked it") != std::string::npos);
}

TEST_CASE(
    "a module the compiler starts crashing on, then one it starts hanging on, under its own heuristic each open "
    "a compiler-failing alert") {
  testing::TempDir scratch;
  // Week 8 aborts on utf8 whatever the heuristic: the compiler's regression,
  // which no figure shows (the module is compared at its last size). Week 10
  // spins for ever on sort: a hang, told from the machine's load by timing
  // out again when compiled alone.
  Project p(history_8w_with(scratch.path() / "history-compiler-fails.toml", R"(
[[checkin]]
week = 8
author = "Jon Meyer <jon.meyer@example.org>"
message = "[Driver] Check the input's encoding"
[[checkin.edit]]
file = "src/main.cpp"
replace = "  if (!M)\n"
with = "  if (StringRef(InputFilename).contains(\"utf8\"))\n    abort();\n  if (!M)\n"

[[checkin]]
week = 9
author = "Alex Chen <alex.chen@example.org>"
message = "[Docs] Release notes: the encoding check"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n\n## 1.2\nThe input's encoding is checked.\n"

[[checkin]]
week = 10
author = "Priya Raman <priya.raman@example.org>"
message = "[Driver] Wait for the input's sorter"
[[checkin.edit]]
file = "src/main.cpp"
replace = "  if (!M)\n"
with = "  if (StringRef(InputFilename).contains(\"sort\"))\n    for (volatile unsigned Spin = 0;; Spin = Spin + 1) {\n    }\n  if (!M)\n"

[[checkin]]
week = 11
author = "Alex Chen <alex.chen@example.org>"
message = "[Docs] Release notes: the sorter"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n\n## 1.2\nThe input's encoding is checked; the sorter is waited for.\n"
)"));
  p.set("every = \"2w\"", "every = \"1m\"");
  // The sample recipe with a 3 s limit per compile (2 min by default).
  std::ifstream in(std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/recipes/sample-compiler.toml");
  std::string recipe((std::istreambuf_iterator<char>(in)), {});
  auto quick = p.dir / "quick-timeout.toml";
  std::ofstream(quick) << recipe << "timeout = \"3s\"\n";
  p.set("recipe = \"sample-compiler\"", "recipe = \"" + quick.string() + "\"");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  auto culprit = p.psql("SELECT sha FROM commits WHERE subject LIKE '[Driver] Check%'");
  auto hanger = p.psql("SELECT sha FROM commits WHERE subject LIKE '[Driver] Wait%'");
  REQUIRE(culprit.size() == 40);
  REQUIRE(hanger.size() == 40);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'compiler-failing'") == "2");
  CHECK(p.psql("SELECT details->>'failing' FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id "
               "WHERE a.kind = 'compiler-failing' AND c.sha = '" +
               culprit + "'") == "[\"utf8.c\"]");
  CHECK(p.psql("SELECT details->>'failing' FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id "
               "WHERE a.kind = 'compiler-failing' AND c.sha = '" +
               hanger + "'") == "[\"sort.c\"]");
  // Stored as the compiler's hang: timed out again alone, under both heuristics.
  CHECK(p.psql("SELECT string_agg(DISTINCT r.outcome || ' ' || split_part(r.message, ':', 1), ',') "
               "FROM module_results r JOIN benchmarks bm ON bm.id = r.benchmark_id WHERE bm.name = 'sort.c' "
               "AND r.outcome <> 'ok'") == "timeout failed so again when compiled alone");
  // The policy's compile fails there too, but the default's did first: not the policy's loss.
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'modules-failing'") == "0");
  CHECK(s.output.find("the compiler fails on 1 more module of testdata with its default heuristic") !=
        std::string::npos);
  // `alerts show` gives each failing module the compiler's reason there: a
  // crash's, a hang's (not "a crash or a hang").
  auto shown = [&](const std::string& sha) {
    auto id = p.psql(
        "SELECT a.id FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id WHERE a.kind = "
        "'compiler-failing' AND c.sha = '" +
        sha + "'");
    return p.run({"alerts", "--config", p.config, "show", id}).output;
  };
  auto crash = shown(culprit), hang = shown(hanger);
  INFO(crash);
  INFO(hang);
  CHECK(crash.find("failing:\n  utf8.c: compiler-crashed: ") != std::string::npos);
  CHECK(hang.find("failing:\n  sort.c: timeout: failed so again when compiled alone") != std::string::npos);
  // The hang is the compiler's: week 11's compiler, identical to week 10's,
  // takes the evaluation measured there rather than spending four timeouts
  // again (a timeout of the machine's is never copied).
  CHECK(p.psql("SELECT count(*) FROM evaluations e JOIN builds b ON b.id = e.build_id "
               "JOIN commits c ON c.id = b.commit_id WHERE e.summary ? 'reused_from' "
               "AND c.subject IN ('[Driver] Wait for the input''s sorter', '[Docs] Release notes: the sorter')") ==
        "1");
  auto again = p.sweep(p.dsn, {"--new"});
  CHECK(again.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'compiler-failing'") == "2");

  // As a driftwatch that did not tell hangs apart stored it: sort's default
  // timed out at every check-in before the hanger (a module hanging for
  // months). The first check-in that tells it hangs is no news then.
  auto older = p.psql(
      "UPDATE module_results r SET outcome = 'timeout', message = 'timed out after 3.0 s' FROM benchmarks bm, "
      "evaluations e, builds b, commits c WHERE bm.id = r.benchmark_id AND bm.name = 'sort.c' AND r.heuristic = "
      "'default' AND e.id = r.evaluation_id AND b.id = e.build_id AND c.id = b.commit_id AND c.committed_at < "
      "(SELECT committed_at FROM commits WHERE sha = '" +
      hanger + "')");
  CHECK(older.starts_with("UPDATE "));
  CHECK(older != "UPDATE 0");
  p.psql("DELETE FROM alerts WHERE kind = 'compiler-failing' AND details->>'failing' = '[\"sort.c\"]'");
  auto upgraded = p.sweep(p.dsn);
  INFO(upgraded.output);
  CHECK(upgraded.exit_code == 0);
  CHECK(p.psql("SELECT details->>'failing' FROM alerts WHERE kind = 'compiler-failing'") == "[\"utf8.c\"]");
}

namespace {
/// Week 8 crashes the policy's compile (not the default's) on json and ini.
const std::string kCrashJsonAndIniUnderPolicy = R"toml(
[[checkin]]
week = 8
author = "Jon Meyer <jon.meyer@example.org>"
message = "[MLInliner] Check the advisor's state on entry"
[[checkin.edit]]
file = "src/main.cpp"
replace = "  if (!M)\n"
with = "  for (int I = 1; I < argc; ++I)\n    if (StringRef(argv[I]).contains(\"enable-ml-inliner\") && (StringRef(InputFilename).contains(\"json\") || StringRef(InputFilename).contains(\"ini\")))\n      abort();\n  if (!M)\n"
)toml";
/// A week 10 that takes kCrashJsonAndIniUnderPolicy's check out again.
const std::string kRevertCrashJsonAndIni = R"toml(
[[checkin]]
week = 10
author = "Jon Meyer <jon.meyer@example.org>"
message = "Revert the advisor's state check on entry"
[[checkin.edit]]
file = "src/main.cpp"
replace = "  for (int I = 1; I < argc; ++I)\n    if (StringRef(argv[I]).contains(\"enable-ml-inliner\") && (StringRef(InputFilename).contains(\"json\") || StringRef(InputFilename).contains(\"ini\")))\n      abort();\n  if (!M)\n"
with = "  if (!M)\n"
)toml";
}  // namespace

TEST_CASE("a check-in that fixes two failing modules and breaks two others opens its own modules-failing alert") {
  testing::TempDir scratch;
  // Week 8 crashes the policy's compile on json and ini; week 10 fixes those
  // and crashes it on utf8 and sort instead: as many fail before as after.
  // Week 9 changes sizes while json and ini fail: they come back changed at
  // week 10, which moves no figure the alert is about (it is still week 10's).
  Project p(history_8w_with(scratch.path() / "history-modules-swap.toml", kCrashJsonAndIniUnderPolicy + R"toml(
[[checkin]]
week = 9
author = "Priya Raman <priya.raman@example.org>"
message = "[Inliner] Count an instruction as 3"
[[checkin.edit]]
file = "src/Heuristic.h"
replace = "constexpr int InstrCost = 4;"
with = "constexpr int InstrCost = 3;"

[[checkin]]
week = 10
author = "Alex Chen <alex.chen@example.org>"
message = "[MLInliner] Check the advisor's state per module"
[[checkin.edit]]
file = "src/main.cpp"
replace = "contains(\"json\") || StringRef(InputFilename).contains(\"ini\")"
with = "contains(\"utf8\") || StringRef(InputFilename).contains(\"sort\")"

[[checkin]]
week = 11
author = "Alex Chen <alex.chen@example.org>"
message = "[Docs] Release notes: the advisor's checks"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n\n## 1.2\nThe advisor checks its state.\n"
)toml"));
  p.set("every = \"2w\"", "every = \"1m\"");
  p.set("failing_modules = 1", "failing_modules = 2");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  auto swap = p.psql("SELECT sha FROM commits WHERE subject = '[MLInliner] Check the advisor''s state per module'");
  REQUIRE(swap.size() == 40);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'modules-failing'") == "2");
  auto failing = p.psql("SELECT a.details->>'failing' FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id "
                        "WHERE a.kind = 'modules-failing' AND c.sha = '" + swap + "'");
  INFO(failing);
  CHECK(failing.find("utf8") != std::string::npos);
  CHECK(failing.find("sort") != std::string::npos);
  CHECK(failing.find("json") == std::string::npos);
  // json and ini compile again from week 10 on: the first alert is over,
  // whatever else fails there; the swap's stays open.
  CHECK(p.psql("SELECT string_agg(a.state, ',') FROM alerts a JOIN commits c ON c.id = a.culprit_commit_id "
               "WHERE a.kind = 'modules-failing' AND c.sha = '" +
               swap + "'") == "open");
  CHECK(p.psql("SELECT string_agg(state, ',' ORDER BY id) FROM alerts WHERE kind = 'modules-failing'") ==
        "resolved,open");
}

TEST_CASE("a failure alert whose cause a later check-in no longer shows is resolved, saying where it recovered") {
  testing::TempDir scratch;
  // Week 8 crashes the policy's compile on json and ini, week 9 is docs,
  // week 10 reverts the crash and week 11 is docs again.
  Project p(history_8w_with(scratch.path() / "history-crash-reverted.toml", kCrashJsonAndIniUnderPolicy + R"toml(
[[checkin]]
week = 9
author = "Priya Raman <priya.raman@example.org>"
message = "[Docs] Release notes: the advisor's checks"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n\n## 1.2\nThe advisor checks its state.\n"
)toml" + kRevertCrashJsonAndIni + R"toml(
[[checkin]]
week = 11
author = "Priya Raman <priya.raman@example.org>"
message = "[Docs] Release notes: the check is gone"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n"

[[checkin]]
week = 12
author = "Jon Meyer <jon.meyer@example.org>"
message = "[MLInliner] Check the advisor's state on entry, for JSON only"
[[checkin.edit]]
file = "src/main.cpp"
replace = "  if (!M)\n"
with = "  for (int I = 1; I < argc; ++I)\n    if (StringRef(argv[I]).contains(\"enable-ml-inliner\") && StringRef(InputFilename).contains(\"json\"))\n      abort();\n  if (!M)\n"
)toml"));
  p.set("every = \"2w\"", "every = \"1m\"");
  p.set("failing_modules = 1", "failing_modules = 2");  // two modules crash
  auto revert = p.git({"log", "--format=%H", "--grep=Revert the advisor", "main"});
  REQUIRE(revert.size() == 40);
  auto week9 = p.git({"log", "-1", "--format=%cs", "--grep=the advisor's checks", "main"});
  REQUIRE(week9.size() == 10);
  auto week11 = p.git({"log", "-1", "--format=%cs", "--grep=the check is gone", "main"});
  REQUIRE(week11.size() == 10);
  auto state = [&] { return p.psql("SELECT string_agg(state, ',') FROM alerts WHERE kind = 'modules-failing'"); };
  // The team's hook: each notice on a line of its own.
  auto hook_file = (scratch.path() / "hook.jsonl").string();
  p.set("command = \"\"", "command = \"cat >> " + hook_file + "; echo >> " + hook_file + "\"");
  auto notices = [&](const std::string& event) {
    std::ifstream in(hook_file);
    std::vector<nlohmann::json> out;
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) {
        auto j = nlohmann::json::parse(line);
        if (j.value("kind", "") == "modules-failing" && j.value("event", "") == event) out.push_back(j);
      }
    return out;
  };

  // Last night's sweep ended before the revert: the crash is an open alert.
  p.set("until = \"\"", "until = \"" + week9 + "\"");
  auto before = p.sweep(p.dsn);
  INFO(before.output);
  REQUIRE(before.exit_code == 0);
  REQUIRE(state() == "open");
  CHECK(before.output.find("resolved: their failure is gone") == std::string::npos);
  CHECK(notices("opened").size() == 1);
  CHECK(notices("resolved").empty());

  // Tonight's sees the revert: the alert is resolved, naming where the
  // modules compile again (the revert, or a later check-in evaluated).
  // A webhook added since gets what is new, but not the end of an alert
  // whose opening it never had.
  WebhookServer server;
  p.set("webhook = \"\"", "webhook = \"" + server.url() + "\"");
  p.set("until = \"" + week9 + "\"", "until = \"" + week11 + "\"");
  auto after = p.sweep(p.dsn);
  INFO(after.output);
  CHECK(after.exit_code == 0);
  CHECK(state() == "resolved");
  CHECK(after.output.find("; they all compile again at ") != std::string::npos);
  CHECK(after.output.find("1 resolved: their failure is gone at a later check-in") != std::string::npos);
  auto note = p.psql(
      "SELECT e.note FROM alert_events e JOIN alerts a ON a.id = e.alert_id "
      "WHERE a.kind = 'modules-failing' AND e.state = 'resolved'");
  INFO(note);
  const std::string said = "recovered: they all compile again at ";
  REQUIRE(note.rfind(said, 0) == 0);
  auto at = note.substr(said.size(), 12);
  auto since_revert = p.git({"rev-list", revert + "^.." + at});
  CHECK(since_revert.find(revert) != std::string::npos);  // not before the revert
  // Those told of the crash are told it is over, once, with where.
  auto ended = notices("resolved");
  REQUIRE(ended.size() == 1);
  CHECK(ended[0]["state"] == "resolved");
  CHECK(ended[0]["note"] == note);
  CHECK(ended[0]["details"]["recovered_at"].get<std::string>().rfind(at, 0) == 0);  // as data too
  CHECK(ended[0]["summary"].get<std::string>().find("; they all compile again at " + at) != std::string::npos);
  CHECK(notices("opened").size() == 1);
  CHECK(after.output.find("(1 of them the end of an alert), 0 failed") != std::string::npos);
  CHECK(p.psql("SELECT resolution_notify_state FROM alerts WHERE kind = 'modules-failing'") == "sent");
  for (const auto& body : server.bodies()) CHECK(body.find("modules-failing") == std::string::npos);

  // Found again by the next analysis, it stays resolved, and no alert is added.
  auto again = p.run({"bisect", "--config", p.config});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(state() == "resolved");

  // Week 12 crashes json again: one module, below the project's threshold
  // of two. It does not take back the first alert's end: reopened, that
  // alert would name week 8's culprit and two modules for week 12's one.
  p.set("until = \"" + week11 + "\"", "until = \"\"");
  auto back = p.sweep(p.dsn);
  INFO(back.output);
  CHECK(back.exit_code == 0);
  CHECK(state() == "resolved");
  CHECK(back.output.find("more modules of testdata fail") != std::string::npos);  // still told, as history
  CHECK(back.output.find("NEW 2 more modules") == std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM alert_events e JOIN alerts a ON a.id = e.alert_id WHERE a.kind = "
               "'modules-failing' AND e.state = 'open' AND e.note = 'found again'") == "0");
  // Nor is a second alert opened for it.
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'modules-failing'") == "1");
  // Nor is its end told twice.
  CHECK(notices("resolved").size() == 1);

  // A person who doubts the end reopens it, and acknowledges it: the next
  // analysis leaves it theirs to resolve, and tells no second end.
  auto id = p.psql("SELECT id FROM alerts WHERE kind = 'modules-failing'");
  REQUIRE(
      p.run({"alerts", "--config", p.config, "reopen", id, "--by", "ana", "--note", "still seeing it?"}).exit_code ==
      0);
  REQUIRE(p.run({"alerts", "--config", p.config, "ack", id, "--by", "ana"}).exit_code == 0);
  auto doubted = p.run({"bisect", "--config", p.config});
  INFO(doubted.output);
  CHECK(doubted.exit_code == 0);
  CHECK(state() == "acknowledged");
  CHECK(notices("resolved").size() == 1);
}

TEST_CASE("a crash reverted and later back is two alerts: the first resolved where it recovered, the second open") {
  testing::TempDir scratch;
  // Weeks 8 and 12 crash the policy's compile on json and ini; week 10 reverts it.
  Project p(history_8w_with(scratch.path() / "history-crash-twice.toml",
                            kCrashJsonAndIniUnderPolicy + kRevertCrashJsonAndIni +
                                std::string(kCrashJsonAndIniUnderPolicy)
                                    .replace(kCrashJsonAndIniUnderPolicy.find("week = 8"), 8, "week = 12")));
  p.set("failing_modules = 1", "failing_modules = 2");  // two modules crash
  p.set("bisect = true", "bisect = false");
  auto hook_file = (scratch.path() / "hook.jsonl").string();
  p.set("command = \"\"", "command = \"cat >> " + hook_file + "; echo >> " + hook_file + "\"");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  // The first alert was over before anyone was told of it: no end to tell.
  std::ifstream hooked(hook_file);
  std::string sent((std::istreambuf_iterator<char>(hooked)), std::istreambuf_iterator<char>());
  CHECK(sent.find("\"event\":\"opened\"") != std::string::npos);
  CHECK(sent.find("\"event\":\"resolved\"") == std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE resolution_notify_state <> 'none'") == "0");
  // The crash at the head is the second alert's: the first, over at week
  // 10, is not opened again for it.
  CHECK(p.psql("SELECT string_agg(state, ',' ORDER BY id) FROM alerts WHERE kind = 'modules-failing'") ==
        "resolved,open");
  CHECK(s.output.find("; they all compile again at ") != std::string::npos);
  // The first is found over: recorded and resolved, but no news to act on,
  // and not counted as a recovery of an alert people were told of.
  CHECK(s.output.find(" new alert(s) and 1 already over") != std::string::npos);
  CHECK(s.output.find("resolved: their failure is gone") == std::string::npos);
  std::size_t failing_news = 0;
  for (auto at = s.output.find("\n  NEW "); at != std::string::npos; at = s.output.find("\n  NEW ", at + 1)) {
    auto line = s.output.substr(at, s.output.find('\n', at + 1) - at);
    CHECK(line.find("compile again") == std::string::npos);
    failing_news += line.find("fail to compile") != std::string::npos;
  }
  CHECK(failing_news == 1);
}

TEST_CASE("a crash that began and ended while the hook was down is told once it is back: its opening, then its end") {
  testing::TempDir scratch;
  // Week 8 crashes the policy's compile on json and ini, week 9 is docs,
  // week 10 reverts the crash and week 11 is docs again.
  const std::string docs = R"toml(
[[checkin]]
week = WEEK
author = "Priya Raman <priya.raman@example.org>"
message = "[Docs] Release notes, week WEEK"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes, week WEEK\n"
)toml";
  auto docs_of = [&](const std::string& week) { return std::regex_replace(docs, std::regex("WEEK"), week); };
  Project p(history_8w_with(scratch.path() / "history-crash-while-down.toml",
                            kCrashJsonAndIniUnderPolicy + docs_of("9") + kRevertCrashJsonAndIni + docs_of("11")));
  p.set("every = \"2w\"", "every = \"1m\"");
  p.set("failing_modules = 1", "failing_modules = 2");  // two modules crash
  auto week9 = p.git({"log", "-1", "--format=%cs", "--grep=notes, week 9", "main"});
  auto week11 = p.git({"log", "-1", "--format=%cs", "--grep=notes, week 11", "main"});
  REQUIRE(week9.size() == 10);
  REQUIRE(week11.size() == 10);
  // The team's hook fails while the file `down` exists; each notice on a line.
  auto down = scratch.path() / "down";
  auto hook_file = scratch.path() / "hook.jsonl";
  p.set("command = \"\"", "command = \"test ! -e " + down.string() + " || exit 1; cat >> " + hook_file.string() +
                              "; echo >> " + hook_file.string() + "\"");
  auto events = [&] {
    std::ifstream in(hook_file);
    std::vector<std::string> out;
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) {
        auto j = nlohmann::json::parse(line);
        if (j.value("kind", "") == "modules-failing") out.push_back(j.value("event", "") + " " + j.value("state", ""));
      }
    return out;
  };

  // The night the crash is found, the hook is down.
  std::ofstream(down).put('x');
  p.set("until = \"\"", "until = \"" + week9 + "\"");
  auto found = p.sweep(p.dsn);
  INFO(found.output);
  REQUIRE(found.exit_code == 0);
  REQUIRE(p.psql("SELECT state || ' ' || notify_state FROM alerts WHERE kind = 'modules-failing'") == "open pending");
  CHECK(found.output.find("notifications: 0 sent, ") != std::string::npos);
  CHECK(events().empty());
  auto id = p.psql("SELECT id FROM alerts WHERE kind = 'modules-failing'");
  auto delivery = [&] {
    auto shown = p.run({"alerts", "--config", p.config, "--json", "show", id});
    REQUIRE(shown.exit_code == 0);
    return nlohmann::json::parse(shown.output)["delivery"];
  };
  auto pending = delivery();
  CHECK(pending["opening"]["state"] == "pending");
  CHECK(pending["opening"]["attempts"] == 1);
  CHECK(pending["opening"]["error"].get<std::string>().find("notify.command") != std::string::npos);
  CHECK(pending["opening"]["hook"] == "due");
  CHECK(pending["end"]["state"] == "none");
  CHECK(pending["end"]["hook"] == "not owed");
  auto shown = p.run({"alerts", "--config", p.config, "show", id});
  CHECK(shown.output.find("\ndelivery: pending (hook due): the alert hook (notify.command)") != std::string::npos);

  // The next night, the hook still down, the crash is reverted: the alert
  // is over, and both its opening and its end are still the hook's.
  p.set("until = \"" + week9 + "\"", "until = \"" + week11 + "\"");
  auto over = p.sweep(p.dsn);
  INFO(over.output);
  CHECK(over.exit_code == 0);
  CHECK(p.psql("SELECT state || ' ' || notify_state FROM alerts WHERE kind = 'modules-failing'") == "resolved pending");
  CHECK(events().empty());
  auto waiting = delivery();
  CHECK(waiting["opening"]["hook"] == "due");
  CHECK(waiting["end"]["hook"] == "due");
  shown = p.run({"alerts", "--config", p.config, "show", id});
  CHECK(shown.output.find("\ndelivery of its end: none (hook due)\n") != std::string::npos);

  // Back up, the team hears of it: its opening before its end.
  std::filesystem::remove(down);
  auto back = p.run({"alerts", "--config", p.config, "notify"});
  INFO(back.output);
  CHECK(back.exit_code == 0);
  CHECK(p.psql("SELECT state || ' ' || notify_state || ' ' || resolution_notify_state FROM alerts "
               "WHERE kind = 'modules-failing'") == "resolved sent sent");
  CHECK(back.output.find(" sent (1 of them the end of an alert), 0 failed") != std::string::npos);
  // The late opening reads as it would have on time; the end says where it recovered.
  CHECK(events() == std::vector<std::string>{"opened open", "resolved resolved"});
  auto sent = delivery();
  CHECK(sent["opening"]["state"] == "sent");
  CHECK(sent["opening"]["hook"] == "sent");
  CHECK(sent["opening"]["webhook"] == "not owed");  // the project has none
  CHECK(sent["end"]["state"] == "sent");
  CHECK(sent["end"]["hook"] == "sent");
  CHECK(sent["end"]["webhook"] == "not owed");
  shown = p.run({"alerts", "--config", p.config, "show", id});
  CHECK(shown.output.find("\ndelivery: sent (hook sent)\ndelivery of its end: sent (hook sent)\n") !=
        std::string::npos);

  // Told once: nothing is due to the hook after that.
  auto notify = p.run({"alerts", "--config", p.config, "notify"});
  INFO(notify.output);
  CHECK(notify.exit_code == 0);
  CHECK(events().size() == 2);
}

TEST_CASE("an alert whose modules a later alert takes in part is over once its other modules compile") {
  testing::TempDir scratch;
  // Week 8 crashes json and ini under the policy; week 10 fixes json; week 12
  // crashes json again and utf8 (the second alert's); week 14 fixes ini.
  auto edit = [](int week, const std::string& from, const std::string& to) {
    return "\n[[checkin]]\nweek = " + std::to_string(week) +
           "\nauthor = \"Jon Meyer <jon.meyer@example.org>\"\nmessage = \"[MLInliner] Week " + std::to_string(week) +
           "'s checks\"\n[[checkin.edit]]\nfile = \"src/main.cpp\"\nreplace = \"" + from + "\"\nwith = \"" + to +
           "\"\n";
  };
  const std::string json = "StringRef(InputFilename).contains(\\\"json\\\")";
  const std::string ini = "StringRef(InputFilename).contains(\\\"ini\\\")";
  const std::string utf8 = "StringRef(InputFilename).contains(\\\"utf8\\\")";
  std::string from_week_13, states;
  bool json_fails_at_the_end = true;
  SUBCASE("json still fails where ini compiles again") {
    from_week_13 = edit(14, ini + " || ", "");
    states = "resolved,open";
  }
  SUBCASE("json fixed again at week 13, before ini is") {
    from_week_13 = edit(13, " || " + json + " || " + utf8, "") + edit(14, "(" + ini + ")", "(false)");
    states = "resolved,resolved";
    json_fails_at_the_end = false;
  }
  Project p(history_8w_with(scratch.path() / "history-crash-in-part.toml",
                            kCrashJsonAndIniUnderPolicy + edit(10, json + " || " + ini, ini) +
                                edit(12, "(" + ini + ")", "(" + ini + " || " + json + " || " + utf8 + ")") +
                                from_week_13));
  p.set("every = \"2w\"", "every = \"1w\"");
  // From week 6 on: the weeks before hold nothing this test is about.
  p.set("since = \"\"", "since = \"2026-01-12\"");
  p.set("failing_modules = 1", "failing_modules = 2");  // two modules crash
  p.set("bisect = true", "bisect = false");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto failing =
      p.psql("SELECT string_agg(details->>'failing', ' ' ORDER BY id) FROM alerts WHERE kind = 'modules-failing'");
  INFO(failing);
  REQUIRE(p.psql("SELECT count(*) FROM alerts WHERE kind = 'modules-failing'") == "2");
  // Where json fails again at the head, that is the second alert's: the
  // first is over once ini compiles at week 14.
  CHECK(p.psql("SELECT string_agg(state, ',' ORDER BY id) FROM alerts WHERE kind = 'modules-failing'") == states);
  auto note = p.psql(
      "SELECT note FROM alert_events WHERE alert_id = (SELECT min(id) FROM alerts WHERE kind = 'modules-failing') "
      "ORDER BY id DESC LIMIT 1");
  if (json_fails_at_the_end) {
    // Its end does not claim json, the second alert's: "they all compile
    // again" would be untrue beside it.
    CHECK(note.find("recovered: at ") == 0);
    CHECK(note.find(" all compile again but 1 that fails again from a later check-in on (a later alert's)") !=
          std::string::npos);
    CHECK(s.output.find("they all compile again") == std::string::npos);
  } else {
    // json compiles again where ini does: all of them do.
    CHECK(note.find("recovered: they all compile again at ") == 0);
  }
}

TEST_CASE("one module the policy's compile starts crashing on opens a modules-failing alert by default") {
  testing::TempDir scratch;
  // Week 8 crashes the compiler on utf8 under the policy only: a quiet
  // nightly must not pass it by (its size is carried, so no figure moves).
  std::string crash_utf8 = kCrashJsonAndIniUnderPolicy;
  auto at = crash_utf8.find(
      "(StringRef(InputFilename).contains(\\\"json\\\") || "
      "StringRef(InputFilename).contains(\\\"ini\\\"))");
  REQUIRE(at != std::string::npos);
  crash_utf8.replace(at, crash_utf8.find("))", at) + 2 - at, "StringRef(InputFilename).contains(\\\"utf8\\\")");
  Project p(history_8w_with(scratch.path() / "history-utf8-under-policy.toml", crash_utf8));
  p.set("every = \"2w\"", "every = \"1m\"");
  auto s = p.sweep(p.dsn, {"-q"});
  INFO(s.output);
  CHECK(s.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'modules-failing'") == "1");
  CHECK(p.psql("SELECT details->>'failing' FROM alerts WHERE kind = 'modules-failing'") == "[\"utf8.c\"]");
  CHECK(s.output.find("1 more module of testdata fails to compile with the policy") != std::string::npos);
  auto open = p.run({"alerts", "--config", p.config, "--exit-code"});
  CHECK(open.exit_code != 0);
}

TEST_CASE("on a suite of three modules, the policy's compile failing on two of them is an alert at a count of three") {
  testing::TempDir scratch;
  // Week 8 crashes the policy's compile on json and ini. At three modules,
  // all failing fails the evaluation whole (policy-unusable), so a count of
  // three newly failing could never be reached and nothing would say this.
  Project p(history_8w_with(scratch.path() / "history-two-of-three.toml", kCrashJsonAndIniUnderPolicy));
  std::string src = std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/testdata";
  std::string json = "[";
  for (const char* f : {"json", "ini", "sort"})
    json += std::string(json.size() > 1 ? "," : "") + "{\"directory\": \"" + src + "\", \"file\": \"" + f +
            ".c\", \"command\": \"cc -Oz -c " + f + ".c\"}";
  std::ofstream(p.dir / "cc-three.json") << json << "]";
  auto built =
      p.run({"suite", "build", "--from-compile-commands", (p.dir / "cc-three.json").string(), "--name", "three"});
  REQUIRE_MESSAGE(built.exit_code == 0, built.output);
  p.set("names = [\"testdata\"]", "names = [\"three\"]");
  p.make_small();
  p.set("failing_modules = 1", "failing_modules = 3");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  auto failing = p.psql("SELECT details->>'failing' FROM alerts WHERE kind = 'modules-failing'");
  INFO(failing);
  CHECK(failing.find("json") != std::string::npos);
  CHECK(failing.find("ini") != std::string::npos);
  CHECK(failing.find("sort") == std::string::npos);
}

namespace {
/// Writes the sample compiler's history with the -Oz threshold raised in two
/// parts in week 2 (5 to 15, then 15 to 25), each below the size threshold
/// judge_split_raises sets, both together above it: `between` are check-ins
/// after the second raise, still in week 2. Returns the file's path.
std::string split_raises_history(const std::filesystem::path& file, const std::string& between = "") {
  std::ofstream(file) << "tree = \"" << DRIFTWATCH_SOURCE_DIR << R"(/samples/compiler"
branch = "main"

[[checkin]]
week = 0
author = "Alex Chen <alex.chen@example.org>"
message = "Import dwcc"
tag = "v1.0"

[[checkin]]
week = 1
author = "Priya Raman <priya.raman@example.org>"
message = "[Docs] Add release notes"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n"

[[checkin]]
week = 2
author = "Alex Chen <alex.chen@example.org>"
message = "[Inliner] Raise the -Oz threshold from 5 to 15"
[[checkin.edit]]
file = "src/Heuristic.h"
replace = "constexpr int OzInlineThreshold = 5;"
with = "constexpr int OzInlineThreshold = 15;"

[[checkin]]
week = 2
hours = 2
author = "Alex Chen <alex.chen@example.org>"
message = "[Inliner] Raise the -Oz threshold from 15 to 25"
[[checkin.edit]]
file = "src/Heuristic.h"
replace = "constexpr int OzInlineThreshold = 15;"
with = "constexpr int OzInlineThreshold = 25;"
)" << between << R"(
[[checkin]]
week = 3
author = "Jon Meyer <jon.meyer@example.org>"
message = "[Docs] Release notes for 1.1"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n\n## 1.1\nHigher -Oz threshold.\n"
)";
  return file.string();
}

/// The thresholds split_raises_history's raises are judged by.
void judge_split_raises(Project& p) {
  p.set("every = \"2w\"", "every = \"1w\"");  // the two raises lie between the samples of weeks 1 and 2
  p.set("min_uplift_change = 0.002", "min_uplift_change = 0.5");  // the sizes alone decide here
  // The testdata's default .text: 5516 bytes, 5581 (+1.18%) after the first
  // raise, 5588 (+0.13%) after the second; 1.25% lies between a part and the whole.
  p.set("min_total_change = 0.002", "min_total_change = 0.0125");
}
}  // namespace

TEST_CASE("a change made in two check-ins between two samples, each below the threshold, is one spread alert") {
  testing::TempDir scratch;
  Project p(split_raises_history(scratch.path() / "history-split.toml"));
  judge_split_raises(p);
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto first = p.psql("SELECT sha FROM commits WHERE subject LIKE '%from 5 to 15'");
  auto second = p.psql("SELECT sha FROM commits WHERE subject LIKE '%from 15 to 25'");
  REQUIRE(first.size() == 40);
  REQUIRE(second.size() == 40);
  INFO(p.psql("SELECT string_agg(c.sha || ' ' || c.subject || ' ' || e.status, '; ') FROM evaluations e "
              "JOIN builds b ON b.id = e.build_id JOIN commits c ON c.id = b.commit_id"));
  // Bisection measured the first raise; neither raise alone moved the total
  // by the threshold, both together did: one alert over the two.
  CHECK(p.psql("SELECT count(*) FROM alerts") == "1");
  CHECK(p.psql("SELECT kind || ' ' || (culprit_commit_id IS NULL) || ' ' || (details->>'spread') FROM alerts") ==
        "size-changed true true");
  CHECK(p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.range_first_commit_id") == first);
  CHECK(p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.first_bad_commit_id") == second);
  CHECK(p.psql("SELECT details->>'bisect_evaluations' FROM alerts") == "1");  // the first raise, measured
  auto id = p.psql("SELECT id FROM alerts");
  auto show = p.run({"alerts", "--config", p.config, "show", id});
  CHECK(show.output.find("spread over several check-ins, each step below the threshold") != std::string::npos);
  // The next sweep finds the same change: no second alert. A stored range
  // other than the one the analysis gives (narrowed once, as a part and its
  // revert measured inside since would leave it) takes the analysis's.
  p.psql("UPDATE alerts SET range_first_commit_id = first_bad_commit_id");
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM alerts") == "1");
  CHECK(p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.range_first_commit_id") == first);
}

TEST_CASE("a spread change's range ends at the last check-in that moved, not at a docs-only sample after it") {
  testing::TempDir scratch;
  // Two docs-only check-ins after the second raise, the last of them week 2's sample.
  Project p(split_raises_history(scratch.path() / "history-split-then-docs.toml", R"(
[[checkin]]
week = 2
hours = 4
author = "Priya Raman <priya.raman@example.org>"
message = "[Docs] Note the threshold"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n\nThreshold 25.\n"

[[checkin]]
week = 2
hours = 6
author = "Priya Raman <priya.raman@example.org>"
message = "[Docs] Note the threshold again"
[[checkin.edit]]
file = "docs/ReleaseNotes.md"
write = "# dwcc release notes\n\nThreshold 25, for -Oz.\n"

)"));
  judge_split_raises(p);
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto first = p.psql("SELECT sha FROM commits WHERE subject LIKE '%from 5 to 15'");
  auto second = p.psql("SELECT sha FROM commits WHERE subject LIKE '%from 15 to 25'");
  CHECK(p.psql("SELECT count(*) FROM alerts") == "1");
  CHECK(p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.first_bad_commit_id") == second);
  // Bisection measured both raises, and the docs check-ins after the
  // second moved nothing: the range is the raises', not the week's.
  auto id = p.psql("SELECT id FROM alerts");
  auto show = p.run({"alerts", "--config", p.config, "show", id});
  INFO(show.output);
  CHECK(show.output.find("changed over: " + first + ".." + second) != std::string::npos);
  // Named by its samples' range: the next sweep finds the same alert, and
  // a stored pin that differs from what the analysis gives (as one from
  // before a measurement inside moved its ends) takes the analysis's.
  p.psql(
      "UPDATE alerts SET first_bad_commit_id = (SELECT id FROM commits WHERE subject = '[Docs] Note the threshold')");
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM alerts") == "1");
  CHECK(p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.first_bad_commit_id") == second);
  CHECK(p.psql("SELECT count(*) FROM alert_events WHERE note LIKE 'its range is now%'") == "1");
}

TEST_CASE("an alert raised before any channel was configured is delivered once one is, if still open") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  p.sweep_ok();
  REQUIRE(Project::psql(p.dsn, "SELECT count(*) FROM alerts WHERE state = 'open'") != "0");
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM alerts WHERE notify_state <> 'none'") == "0");
  // With no channel, delivering is refused, not a quiet "0 sent, 0 failed".
  auto nowhere = p.run({"alerts", "notify", "--config", p.config});
  CHECK(nowhere.exit_code == 2);
  CHECK(nowhere.output.find("no channel to deliver alerts to: set notify.command or notify.webhook") !=
        std::string::npos);
  auto hook_file = (p.dir / "hook.json").string();
  p.set("command = \"\"", "command = \"cat >> " + hook_file + "\"");
  auto n = p.run({"alerts", "notify", "--config", p.config});
  INFO(n.output);
  CHECK(n.exit_code == 0);
  auto open = Project::psql(p.dsn, "SELECT count(*) FROM alerts WHERE state = 'open'");
  CHECK(n.output.find("notifications: " + open + " sent, 0 failed") != std::string::npos);
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM alerts WHERE state = 'open' AND notify_state <> 'sent'") == "0");
  std::ifstream hook(hook_file);
  std::string hooked((std::istreambuf_iterator<char>(hook)), {});
  CHECK(hooked.find("\"kind\":") != std::string::npos);
}

TEST_CASE(
    "a webhook that is down fails the sweep only on its third failed attempt: the alert waits and is delivered later "
    "with the hook's copy") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  auto hook_file = (p.dir / "hook.json").string();
  // Appends: a hook that ran twice for one alert would show two copies.
  p.set("command = \"\"", "command = \"cat >> " + hook_file + "\"");
  int port = closed_port();
  // Secrets in the credentials, the path (as Slack's) and the query.
  auto down = "http://user:s3cret@127.0.0.1:" + std::to_string(port) + "/services/T0/s3cret?token=s3cret";
  p.set("webhook = \"\"", "webhook = \"" + down + "\"");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  // The hook took it: failed, but not on every channel.
  CHECK(s.output.find("notifications: 0 sent, 1 failed, 1 of them taken by one of its two channels (retried by the "
                      "next sweep)") != std::string::npos);
  CHECK(s.output.find("webhook http://127.0.0.1:" + std::to_string(port) + "/…: ") != std::string::npos);
  CHECK(s.output.find("s3cret") == std::string::npos);  // a webhook's token is never printed, nor stored
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM alerts WHERE notify_error LIKE '%s3cret%'") == "0");
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM alerts WHERE notify_error LIKE '%/…: %'") == "1");
  CHECK(Project::psql(p.dsn, "SELECT notify_state || ' ' || notify_attempts FROM alerts") == "pending 1");
  // The hook ran even though the webhook failed: it got the alert as JSON.
  std::ifstream hook(hook_file);
  std::string hooked((std::istreambuf_iterator<char>(hook)), {});
  CHECK(hooked.find("\"kind\":\"uplift-dropped\"") != std::string::npos);
  CHECK(hooked.find("Merge branch 'side/cost-model'") != std::string::npos);
  // Down at the next sweep too: still only said. At the third, the webhook's
  // readers have not heard of the alert for three sweeps (the hook's have):
  // the sweep fails, saying so last.
  auto second = p.sweep(p.dsn, {"--new"});
  INFO(second.output);
  CHECK(second.exit_code == 0);
  CHECK(second.output.find("not delivered after") == std::string::npos);
  // Nothing new to sweep, but the retry is told.
  CHECK(second.output.find("notifications: 0 sent, 1 failed (retried by the next sweep)") != std::string::npos);
  auto third = p.sweep(p.dsn, {"--new"});
  INFO(third.output);
  CHECK(third.exit_code == 1);
  CHECK(common::last_line(third.output)
            .rfind("driftwatch: 1 alert(s) not delivered after 3 or more attempts (last: "
                   "webhook http://127.0.0.1:" +
                       std::to_string(port) + "/…: ",
                   0) == 0);
  CHECK(third.output.find("s3cret") == std::string::npos);
  CHECK(Project::psql(p.dsn, "SELECT notify_state || ' ' || notify_attempts FROM alerts") == "pending 3");

  WebhookServer server;
  p.set("webhook = \"" + down + "\"", "webhook = \"" + server.url() + "\"");
  p.set("webhook_format = \"json\"", "webhook_format = \"slack\"");
  // A second sweep finds nothing new but delivers what is pending.
  auto again = p.sweep(p.dsn, {"--new"});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("notifications: 1 sent, 0 failed") != std::string::npos);
  auto bodies = server.bodies();
  REQUIRE(bodies.size() == 1);
  // The project and the policy, then the sweep's own sentence.
  CHECK(bodies[0].rfind("{\"text\":\"driftwatch (toy, ", 0) == 0);
  CHECK(bodies[0].find("): uplift on testdata ") != std::string::npos);
  CHECK(bodies[0].find("dropped from") != std::string::npos);
  CHECK(Project::psql(p.dsn, "SELECT notify_state FROM alerts") == "sent");
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM alerts") == "1");  // nothing opened twice
  // The retry went only to the channel that had failed: the hook, which had
  // the alert already, did not run again.
  std::ifstream after(hook_file);
  std::string hooked_after((std::istreambuf_iterator<char>(after)), {});
  CHECK(hooked_after == hooked);
}

TEST_CASE("an alert acknowledged before it could be delivered is not sent later") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  int port = closed_port();
  p.set("webhook = \"\"", "webhook = \"http://127.0.0.1:" + std::to_string(port) + "/down\"");
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  auto id = Project::psql(p.dsn, "SELECT id FROM alerts");
  REQUIRE(Project::psql(p.dsn, "SELECT notify_state FROM alerts") == "pending");
  REQUIRE(p.run({"alerts", "--config", p.config, "ack", id, "--by", "ana"}).exit_code == 0);

  WebhookServer server;
  p.set("webhook = \"http://127.0.0.1:" + std::to_string(port) + "/down\"", "webhook = \"" + server.url() + "\"");
  auto again = p.sweep(p.dsn, {"--new"});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(server.bodies().empty());
  CHECK(again.output.find("notifications:") == std::string::npos);
}

TEST_CASE("two deliveries of the same pending alert at once (cron's alerts notify during a sweep's) run its hook once") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  int port = closed_port();
  auto down = "webhook = \"http://127.0.0.1:" + std::to_string(port) + "/down\"";
  p.set("webhook = \"\"", down);
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  REQUIRE(Project::psql(p.dsn, "SELECT notify_state FROM alerts") == "pending");
  // Now a slow hook and no webhook: both deliveries find the alert pending.
  auto hook_file = (p.dir / "hook.json").string();
  p.set(down, "webhook = \"\"");
  p.set("command = \"\"", "command = \"sleep 2; cat >> " + hook_file + "\"");
  common::ProcessResult first, second;
  std::thread other([&] { first = p.run({"alerts", "--config", p.config, "notify"}); });
  second = p.run({"alerts", "--config", p.config, "notify"});
  other.join();
  INFO(first.output);
  INFO(second.output);
  CHECK(first.exit_code == 0);
  CHECK(second.exit_code == 0);
  std::ifstream hook(hook_file);
  std::string hooked((std::istreambuf_iterator<char>(hook)), {});
  auto copies = 0;
  // One alert body per run of the hook; "created_at" is a top-level key of each.
  for (auto at = hooked.find("\"created_at\":"); at != std::string::npos; at = hooked.find("\"created_at\":", at + 1))
    ++copies;
  CHECK(copies == 1);
  // A program reads the time: ISO 8601 in UTC, to the second.
  CHECK(std::regex_search(hooked, std::regex(R"re("created_at": ?"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")re")));
  CHECK((first.output + second.output).find("notifications: 1 sent, 0 failed") != std::string::npos);
  CHECK(Project::psql(p.dsn, "SELECT notify_state FROM alerts") == "sent");
}

TEST_CASE("an alert hook that hangs is run once a delivery, not once for every pending alert") {
  Project p;  // every 2w: more than one change, so more than one alert
  int port = closed_port();
  auto down = "webhook = \"http://127.0.0.1:" + std::to_string(port) + "/down\"";
  p.set("webhook = \"\"", down);
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  auto pending = Project::psql(p.dsn, "SELECT count(*) FROM alerts WHERE notify_state = 'pending'");
  REQUIRE(std::stoi(pending) >= 2);
  // A hook that hangs past its time (3 s here, 30 s unless set), noting
  // each time it is run.
  auto runs_file = (p.dir / "hook-runs").string();
  p.set(down, "webhook = \"\"");
  p.set("command_timeout = \"30s\"", "command_timeout = \"3s\"");
  p.set("webhook_timeout = \"10s\"", "webhook_timeout = \"2s\"");
  p.set("command = \"\"", "command = \"echo run >> " + runs_file + "; sleep 100\"");
  auto r = p.run({"alerts", "--config", p.config, "notify"});
  INFO(r.output);
  CHECK(r.exit_code == 1);
  std::ifstream runs(runs_file);
  std::string ran((std::istreambuf_iterator<char>(runs)), {});
  CHECK(ran == "run\n");
  CHECK(r.output.find("the alert hook (notify.command) timed out after 3.") != std::string::npos);
  CHECK(r.output.find("not tried: the alert hook (notify.command) timed out on an earlier alert of this run") !=
        std::string::npos);
  CHECK(r.output.find("notifications: 0 sent, " + pending + " failed") != std::string::npos);
  // Every one stays due for the next sweep. The skip is no attempt: only
  // the alert the hook hung on counts one more than the webhook's first.
  CHECK(Project::psql(p.dsn, "SELECT count(*) FROM alerts WHERE notify_state = 'pending'") == pending);
  auto attempts = [&] {
    return Project::psql(p.dsn, "SELECT string_agg(notify_attempts::text, ',' ORDER BY id) FROM alerts");
  };
  auto ones = [&](int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += ",1";
    return s;
  };
  REQUIRE(attempts() == "2" + ones(std::stoi(pending) - 1));

  // A webhook that takes the connection and never answers (a listening
  // socket nobody accepts on) hangs past its time the same way. Those the
  // hook kept waiting go first: the hook's hang is not tried before them.
  int silent = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(silent, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(listen(silent, 16) == 0);
  socklen_t len = sizeof addr;
  getsockname(silent, reinterpret_cast<sockaddr*>(&addr), &len);
  p.set("command = \"echo run >> " + runs_file + "; sleep 100\"", "command = \"\"");
  p.set("webhook = \"\"", "webhook = \"http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/hook\"");
  auto w = p.run({"alerts", "--config", p.config, "notify"});
  close(silent);
  INFO(w.output);
  CHECK(w.exit_code == 1);
  CHECK(w.output.find("Timeout was reached") != std::string::npos);
  CHECK(w.output.find("not tried: the webhook timed out on an earlier alert of this run") != std::string::npos);
  CHECK(attempts() == "2,2" + ones(std::stoi(pending) - 2));
}

TEST_CASE("alerts move through their states with who and a note, and --exit-code follows the open ones") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  auto id = Project::psql(p.dsn, "SELECT id FROM alerts");
  REQUIRE_FALSE(id.empty());
  auto list = p.run({"alerts", "--config", p.config, "--exit-code"});
  CHECK(list.exit_code == 1);
  CHECK(list.output.find("uplift-dropped") != std::string::npos);
  // Every alerts command takes --exit-code at its word, show and --json too.
  CHECK(p.run({"alerts", "--config", p.config, "--exit-code", "show", id}).exit_code == 1);
  CHECK(p.run({"alerts", "--config", p.config, "--exit-code", "--json", "show", id}).exit_code == 1);
  CHECK(p.run({"alerts", "--config", p.config, "show", id}).exit_code == 0);

  auto ack = p.run({"alerts", "--config", p.config, "ack", id, "--by", "ana", "--note", "looking <b>now</b>\nline 2"});
  CHECK(ack.exit_code == 0);
  auto still = p.run({"alerts", "--config", p.config, "--exit-code"});
  CHECK(still.exit_code == 0);  // acknowledged is not open

  auto show = p.run({"alerts", "--config", p.config, "show", id});
  INFO(show.output);
  CHECK(show.output.find("acknowledged by ana: looking <b>now</b> line 2") != std::string::npos);

  // The modules the change moved most, one a line under words, not as JSON.
  CHECK(show.output.find("modules moved most:\n  ") != std::string::npos);
  CHECK(show.output.find("[\"") == std::string::npos);
  CHECK(show.output.find("culprit: ") != std::string::npos);
  auto json = p.run({"alerts", "--config", p.config, "--json", "show", id});
  CHECK(json.output.find("\"note\": \"looking <b>now</b>\\nline 2\"") != std::string::npos);

  // Without --by and without $USER (cron, systemd): the login name, not "unknown".
  auto bare = run_driftwatch(p.args({"alerts", "--config", p.config, "resolve", id, "--note", "retrained"}, p.dsn),
                             {{"USER", ""}});
  CHECK(bare.exit_code == 0);
  common::ProcessSpec id_un;
  id_un.argv = {"id", "-un"};
  CHECK(p.psql("SELECT who FROM alert_events WHERE note = 'retrained'") ==
        common::trim(common::run_process(id_un).take().output));
  // A resolved alert is reopened before anyone acknowledges it again.
  auto late_ack = p.run({"alerts", "--config", p.config, "ack", id});
  CHECK(late_ack.exit_code == 2);
  CHECK(late_ack.output.find("alert " + id + " is resolved, not open: reopen it first") != std::string::npos);
  CHECK(Project::psql(p.dsn, "SELECT note FROM alerts WHERE id = " + id) == "retrained");
  // Another project's alert is not this project's to show or move.
  Project::psql(p.dsn, "UPDATE alerts SET project = 'someone-else' WHERE id = " + id);
  auto other = p.run({"alerts", "--config", p.config, "reopen", id});
  CHECK(other.exit_code == 2);
  CHECK(other.output.find("no alert " + id + " in project toy") != std::string::npos);
  CHECK(p.run({"alerts", "--config", p.config, "show", id}).exit_code == 2);
  Project::psql(p.dsn, "UPDATE alerts SET project = 'toy' WHERE id = " + id);
  CHECK(p.run({"alerts", "--config", p.config}).output.find("no open or acknowledged alerts") != std::string::npos);
  CHECK(p.run({"alerts", "--config", p.config, "list", "--all"}).output.find("resolved") != std::string::npos);
  auto missing = p.run({"alerts", "--config", p.config, "ack", "999999"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("no alert 999999") != std::string::npos);
}

TEST_CASE("with bisection off, an alert names the range it lies in, from a check-in nobody built") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  p.set("bisect = true", "bisect = false");
  // A hook that appends: each delivery of an alert adds one copy.
  auto hook_file = (p.dir / "hook.json").string();
  p.set("command = \"\"", "command = \"cat >> " + hook_file + "; echo >> " + hook_file + "\"");
  auto deliveries = [&] {  // one line of JSON per delivery
    std::ifstream in(hook_file);
    int n = 0;
    for (std::string line; std::getline(in, line);) n += !line.empty();
    return n;
  };
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  CHECK(s.output.find("(only the last of them was evaluated)") != std::string::npos);
  // Every alert names its culprit or its whole range, the range's first check-in included.
  CHECK(p.psql("SELECT count(*) FROM alerts") != "0");
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE culprit_commit_id IS NULL AND range_first_commit_id IS NULL") ==
        "0");
  auto first = p.psql("SELECT c.sha FROM alerts a JOIN commits c ON c.id = a.range_first_commit_id LIMIT 1");
  REQUIRE(first.size() == 40);
  CHECK(p.psql("SELECT count(*) FROM builds b JOIN commits c ON c.id = b.commit_id WHERE c.sha = '" + first + "'") ==
        "0");

  // Bisection turned on later pins those ranges: the same alerts, narrowed,
  // not a second set opened beside them (which would stay open for ever).
  // One the user ignored stays ignored once pinned, and is not told again.
  auto ranges = p.psql("SELECT count(*) FROM alerts");
  auto ignored = p.psql("SELECT min(id) FROM alerts WHERE kind LIKE 'uplift-%'");
  REQUIRE(!ignored.empty());
  REQUIRE(p.run({"alerts", "--config", p.config, "ignore", ignored, "--note", "known"}).exit_code == 0);
  p.set("bisect = false", "bisect = true");
  auto pinned = p.sweep(p.dsn);
  INFO(pinned.output);
  REQUIRE(pinned.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM alerts") == ranges);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE culprit_commit_id IS NOT NULL") != "0");
  auto narrowed = p.psql("SELECT count(*) FROM alert_events WHERE note LIKE 'narrowed by a later sweep: %'");
  CHECK(narrowed != "0");
  INFO(p.psql("SELECT string_agg(id || ' ' || kind || ' ' || state || ' ' || notify_state, '; ') FROM alerts"));
  CHECK(p.psql("SELECT state || ' ' || (culprit_commit_id IS NOT NULL) FROM alerts WHERE id = " + ignored) ==
        "ignored true");
  // Each narrowed alert is delivered again, with its culprit, but the ignored one; nothing else is.
  CHECK(deliveries() == std::stoi(ranges) + std::stoi(narrowed) - 1);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE notify_state <> 'sent' AND state <> 'ignored'") == "0");
}

TEST_CASE("a range alert a person resolved stays resolved once bisection pins it: not opened again as a new alert") {
  Project p;
  p.set("every = \"2w\"", "every = \"1m\"");
  p.set("bisect = true", "bisect = false");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto ranges = p.psql("SELECT count(*) FROM alerts");
  auto resolved = p.psql("SELECT min(id) FROM alerts WHERE culprit_commit_id IS NULL");
  REQUIRE(!resolved.empty());
  // Even working as the service's user: a person's move, not driftwatch's own.
  REQUIRE(p.run({"alerts", "--config", p.config, "resolve", resolved, "--by", "driftwatch", "--note", "fixed upstream"})
              .exit_code == 0);
  CHECK(p.psql("SELECT state_by FROM alerts WHERE id = " + resolved) == "driftwatch (by hand)");
  p.set("bisect = false", "bisect = true");
  auto pinned = p.sweep(p.dsn);
  INFO(pinned.output);
  REQUIRE(pinned.exit_code == 0);
  INFO(p.psql("SELECT string_agg(id || ' ' || kind || ' ' || state || ' ' || state_by, '; ') FROM alerts"));
  CHECK(p.psql("SELECT count(*) FROM alerts") == ranges);
  CHECK(p.psql("SELECT state || ' ' || state_by || ' ' || (culprit_commit_id IS NOT NULL) FROM alerts WHERE id = " +
               resolved) != "resolved driftwatch true");
  CHECK(p.psql("SELECT state || ' ' || (culprit_commit_id IS NOT NULL) FROM alerts WHERE id = " + resolved) ==
        "resolved true");
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE state = 'open'") == "0");
}

TEST_CASE("bisect --good --bad pins the change between them only, and leaves the project's other ranges alone") {
  Project p;
  p.set("bisect = true", "bisect = false");  // bisecting every range costs too many builds here
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto ranges = p.psql("SELECT count(*) FROM alerts WHERE culprit_commit_id IS NULL");
  REQUIRE(std::stoi(ranges) >= 2);
  // The earliest range: its last good and first bad samples.
  auto ends = common::split(
      p.psql("SELECT a.id || ' ' || g.sha || ' ' || b.sha FROM alerts a JOIN commits g ON g.id = a.last_good_commit_id "
             "JOIN commits b ON b.id = a.first_bad_commit_id ORDER BY b.committed_at LIMIT 1"),
      ' ');
  REQUIRE(ends.size() == 3);
  auto last_job = p.psql("SELECT max(id) FROM jobs");
  auto b = p.run({"bisect", "--config", p.config, "--good", ends[1], "--bad", ends[2]});
  INFO(b.output);
  CHECK(b.exit_code == 0);
  CHECK(p.psql("SELECT culprit_commit_id IS NOT NULL FROM alerts WHERE id = " + ends[0]) == "t");
  // Every other range is as the sweep left it, and nothing outside the two ends was measured.
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE culprit_commit_id IS NULL") == std::to_string(std::stoi(ranges) - 1));
  // Its answer is the changes between the two ends, not the project's others.
  auto others = p.psql(
      "SELECT string_agg(left(b.sha, 12), ' ') FROM alerts a JOIN commits b ON "
      "b.id = a.first_bad_commit_id WHERE a.culprit_commit_id IS NULL");
  REQUIRE_FALSE(others.empty());
  for (const auto& sha : common::split(others, ' ')) CHECK(b.output.find(sha) == std::string::npos);
  CHECK(b.output.find("drift: ") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM jobs WHERE id > " + last_job) != "0");
  CHECK(p.psql("SELECT count(*) FROM jobs j JOIN commits c ON c.sha = j.payload->>'sha' WHERE j.id > " + last_job +
               " AND (c.committed_at < (SELECT committed_at FROM commits WHERE sha = '" + ends[1] +
               "') OR c.committed_at > (SELECT committed_at FROM commits WHERE sha = '" + ends[2] + "'))") == "0");
  // Asked again, there is nothing left to do there: said, not silence.
  auto again = p.run({"bisect", "--config", p.config, "--good", ends[1], "--bad", ends[2]});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("nothing left to bisect between " + ends[1] + " and " + ends[2]) != std::string::npos);
  CHECK(b.output.find("nothing left to bisect") == std::string::npos);
}

TEST_CASE("bisect refuses ends it would measure and then leave out: off the tracked line, or in the wrong order") {
  Project p;
  // A check-in of the side branch: built and evaluated, it would be dropped
  // by the analysis, which walks main's first-parent line.
  auto side = p.run({"bisect", "--config", p.config, "--good", "side/cost-model", "--bad", "main"});
  INFO(side.output);
  CHECK(side.exit_code == 2);
  CHECK(side.output.find("--good side/cost-model is not on the first-parent history of HEAD") != std::string::npos);
  auto reversed = p.run({"bisect", "--config", p.config, "--good", "main", "--bad", "v1.0"});
  INFO(reversed.output);
  CHECK(reversed.exit_code == 2);
  CHECK(reversed.output.find("--good main must come before --bad v1.0") != std::string::npos);
  CHECK(p.psql("SELECT count(*) FROM jobs") == "0");  // nothing was measured
  // A sampling window that no longer resolves stops bisect as it stops the
  // sweep: without the grid, bisection's own check-ins would count as samples.
  p.set("from = \"\"", "from = \"no-such-rev\"");
  auto sweep = p.run({"sweep", "--config", p.config});
  auto analysis = p.run({"bisect", "--config", p.config});
  INFO(analysis.output);
  CHECK(sweep.exit_code == 2);
  CHECK(analysis.exit_code == 2);
  CHECK(common::last_line(analysis.output) == common::last_line(sweep.output));
  CHECK(common::last_line(analysis.output).find("no-such-rev") != std::string::npos);
}

TEST_CASE("a suite with fewer than two evaluated check-ins is named, not hidden behind the other suites' no change") {
  Project p;
  p.make_small();
  p.sweep_ok();
  // A second suite joins the project: none of its check-ins is evaluated yet.
  auto built = p.run({"suite", "build", "--from-compile-commands", (p.dir / "compile_commands.json").string(), "--name",
                      "later"});
  REQUIRE_MESSAGE(built.exit_code == 0, built.output);
  p.set("names = [\"testdata\"]", "names = [\"testdata\", \"later\"]");
  auto analysis = p.run({"bisect", "--config", p.config});
  INFO(analysis.output);
  CHECK(analysis.exit_code == 0);
  CHECK(analysis.output.find("suite later: no evaluated check-ins so far: no change of it can show yet") !=
        std::string::npos);
  CHECK(analysis.output.find("suite testdata:") == std::string::npos);
}

TEST_CASE("a build that broke and stayed broken is one alert, not one per suite") {
  testing::TempDir scratch;
  Project p(history_8w_with(scratch / "history-stays-broken.toml", kBreakPipelineInclude + R"(
[[checkin]]
week = 9
author = "Alex Chen <alex.chen@example.org>"
message = "[Docs] Say where the pipeline starts"
[[checkin.edit]]
file = "docs/Pipeline.md"
write = "# The pipeline\n\nIt starts in main.\n"
)"));
  auto built = p.run({"suite", "build", "--from-compile-commands", (p.dir / "compile_commands.json").string(), "--name",
                      "second"});
  REQUIRE_MESSAGE(built.exit_code == 0, built.output);
  p.set("names = [\"testdata\"]", "names = [\"testdata\", \"second\"]");
  p.set("every = \"2w\"", "every = \"1m\"");
  p.set("bisect = true", "bisect = false");
  p.set("broken_builds = 3", "broken_builds = 1");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  CHECK(s.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'build-broken'") == "1");
  // Found again by the next analysis, under either suite: still the one alert.
  auto again = p.run({"bisect", "--config", p.config});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'build-broken'") == "1");
  // The suites reordered, then the one it was opened under dropped: still the one alert.
  p.set("names = [\"testdata\", \"second\"]", "names = [\"second\", \"testdata\"]");
  auto reordered = p.run({"bisect", "--config", p.config});
  INFO(reordered.output);
  CHECK(reordered.exit_code == 0);
  CHECK(reordered.output.find("the build broke at") != std::string::npos);  // still reported
  CHECK(p.psql("SELECT count(*) FROM alerts WHERE kind = 'build-broken'") == "1");
  p.set("names = [\"second\", \"testdata\"]", "names = [\"second\"]");
  auto dropped = p.run({"bisect", "--config", p.config});
  INFO(dropped.output);
  CHECK(dropped.exit_code == 0);
  // Closed with its suite, which is no longer the project's: the build still
  // broken is alerted under the suite that found it, not lost.
  auto open_broken = [&] {
    return p.psql("SELECT count(*) FROM alerts WHERE kind = 'build-broken' AND state IN ('open', 'acknowledged')");
  };
  CHECK(open_broken() == "1");
  CHECK(p.psql("SELECT count(*) FROM alert_events WHERE note = 'its suite is no longer the project''s'") == "1");
  CHECK(p.run({"alerts", "--config", p.config, "--exit-code"}).exit_code == 1);
  // The project's policy replaced: the old one's alert is closed with it, and
  // the build still broken is the new policy's open alert, not lost.
  auto root = p.git({"rev-list", "--max-parents=0", "main"});
  REQUIRE(root.size() == 40);
  p.track_policy_trained_at(root);
  auto replaced = p.sweep(p.dsn);
  INFO(replaced.output);
  CHECK(replaced.exit_code == 0);
  CHECK(open_broken() == "1");
  CHECK(p.psql("SELECT count(*) FROM alert_events WHERE note LIKE 'its policy was replaced%'") == "1");
  CHECK(p.run({"alerts", "--config", p.config, "--exit-code"}).exit_code == 1);
}

TEST_CASE("decide after a sweep whose every check-in gave no evaluation says so, not 'run a sweep first'") {
  testing::TempDir scratch;
  Project p(history_aborting_from(scratch.path(), 1));
  p.set("every = \"2w\"", "every = \"1m\"");
  p.set("until = \"\"", "until = \"2025-12-16\"");  // before a later check-in rewrites that line
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  REQUIRE(p.psql("SELECT count(*) FROM evaluations WHERE status = 'done' AND NOT "
                 "coalesce((summary->>'compiler_broken')::boolean, false)") == "0");
  auto d = p.run({"decide", "--config", p.config});
  INFO(d.output);
  CHECK(d.exit_code == 2);
  CHECK(common::last_line(d.output).find("every check-in swept gave no evaluation (") != std::string::npos);
  CHECK(common::last_line(d.output).find(" compiler-broken") != std::string::npos);
  CHECK(d.output.find("run `driftwatch sweep` first") == std::string::npos);
}
