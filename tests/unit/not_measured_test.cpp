// Sampled check-ins a series has no point at, and why: the report and
// `decide` name them instead of drawing the line past them.
#include "sweep/not_measured.h"

#include <doctest/doctest.h>

#include "common/text.h"

namespace {

db::UnfinishedEvaluation job(db::Id id, const std::string& sha, const std::string& state,
                             const std::string& error = "") {
  return {id, sha, state, error, id - 1, db::kJobDone, "", "", "", ""};
}

const std::map<std::string, std::size_t> kHistory{{"aaa", 0}, {"bbb", 1}, {"ccc", 2}, {"ddd", 3}};

}  // namespace

TEST_CASE("an evaluation that failed, was cancelled or still waits is named with its job and what happens next") {
  CHECK(sweep::unfinished_reason(job(12, "bbb", db::kJobFailed, "evaluator: the policy server did not answer\nmore")) ==
        "its evaluation failed (job 12: evaluator: the policy server did not answer); the next sweep tries it again");
  CHECK(sweep::unfinished_reason(job(13, "bbb", db::kJobFailed, "cancelled by ops")) ==
        "its evaluation was cancelled (job 13: cancelled by ops); the next sweep measures it");
  CHECK(sweep::unfinished_reason(job(14, "bbb", db::kJobQueued)) == "its evaluation waits in the queue (job 14)");
  CHECK(sweep::unfinished_reason(job(15, "bbb", db::kJobRunning)) == "its evaluation is running (job 15)");
  // Running in the table, but its worker died: not said to run (helper 149).
  auto dead = job(15, "bbb", db::kJobRunning);
  dead.lapsed_owner = "node7:4242:0:4026531836";
  CHECK(sweep::unfinished_reason(dead) ==
        "its evaluation (job 15) stopped: its worker (node7:4242) stopped renewing its lease (it, its machine or its "
        "link to the database died); a worker, or the next sweep, takes it up again");
  // Waiting on a build whose worker died: the build is named, not the queue.
  auto waiting = job(14, "bbb", db::kJobQueued);
  waiting.build_state = db::kJobRunning;
  waiting.build_lapsed_owner = "node7:4242";
  CHECK(sweep::unfinished_reason(waiting).starts_with("its build (job 13) stopped: its worker (node7:4242)"));
  // A long error is cut, not dropped: the reason stays one readable line.
  auto long_error = sweep::unfinished_reason(job(16, "bbb", db::kJobFailed, std::string(500, 'x')));
  CHECK(long_error.size() < 300);
  CHECK(long_error.find("xxx...") != std::string::npos);
  // Cut inside a character (a compiler's message in UTF-8): still valid UTF-8, which JSON needs.
  std::string accents;
  for (int i = 0; i < 150; ++i) accents += "\xc3\xa9";  // é
  auto cut = sweep::unfinished_reason(job(17, "bbb", db::kJobFailed, accents));
  CHECK(common::valid_utf8(cut) == cut);
}

TEST_CASE("a skipped evaluation is explained by its build job, which never finished") {
  db::UnfinishedEvaluation skipped{20, "ccc", db::kJobSkipped, "", 19, db::kJobFailed, "build: timed out after 2h", "",
                                   "", ""};
  CHECK(sweep::unfinished_reason(skipped) ==
        "its build did not finish (job 19: build: timed out after 2h); the next sweep tries it again");
  skipped.build_state = db::kJobRunning;
  CHECK(sweep::unfinished_reason(skipped) == "its build is running (job 19)");
  skipped.build_lapsed_owner = "node7:4242";
  CHECK(sweep::unfinished_reason(skipped).starts_with(
      "its build (job 19) stopped: its worker (node7:4242) stopped renewing"));
  skipped.build_lapsed_owner.clear();
  skipped.build_state = db::kJobDone;
  skipped.build_outcome = "timeout";
  CHECK(sweep::unfinished_reason(skipped) ==
        "its evaluation was skipped (job 20): its build gave no compiler (timeout); if the machine failed it, "
        "`driftwatch jobs retry 19` builds it again");
  // A shared build another project's sweep rebuilt since: the next sweep queues the evaluation again.
  skipped.build_outcome = "ok";
  CHECK(
      sweep::unfinished_reason(skipped) ==
      "its evaluation (job 20) was skipped, but its build (job 19) gave a compiler since; the next sweep measures it");
}

TEST_CASE("only check-ins of the range that the series has no point at are not measured, oldest first") {
  std::vector<db::UnfinishedEvaluation> jobs{
      job(30, "ddd", db::kJobFailed, "lost"),   // newest check-in
      job(31, "aaa", db::kJobFailed, "lost"),   // before the range
      job(32, "bbb", db::kJobFailed, "lost"),   // measured since (another checkout's job)
      job(33, "zzz", db::kJobFailed, "lost"),   // not in the history (another branch)
      job(34, "ccc", db::kJobFailed, "first"),  // two jobs of one check-in: the newest says
      job(35, "ccc", db::kJobQueued),
  };
  auto out = sweep::not_measured(jobs, kHistory, {"bbb"}, std::size_t{1});
  REQUIRE(out.size() == 2);
  CHECK(out[0].sha == "ccc");
  CHECK(out[0].position == 2);
  CHECK(out[0].why == "its evaluation waits in the queue (job 35)");
  CHECK(out[1].sha == "ddd");
  CHECK(out[1].why.starts_with("its evaluation failed (job 30: lost)"));
  // Without a range start, the whole history counts.
  CHECK(sweep::not_measured(jobs, kHistory, {"bbb"}, std::nullopt).size() == 3);
  CHECK(sweep::not_measured({}, kHistory, {}, std::nullopt).empty());
}
