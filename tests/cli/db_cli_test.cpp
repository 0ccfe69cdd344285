// `driftwatch db …` end to end: the real binary, a real embedded cluster.
#include <doctest/doctest.h>
#include <pwd.h>
#include <unistd.h>

#include <fstream>

#include "common/text.h"
#include "db/migrations.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_db.h"

using testing::run_driftwatch;
using testing::TempDir;

namespace {

std::string data_dir_flag(const TempDir& dir) { return "--data-dir=" + (dir / "data").string(); }

/// Stops the embedded cluster of a test's data dir whatever happens.
struct StopOnExit {
  const TempDir& dir;
  ~StopOnExit() { run_driftwatch({data_dir_flag(dir), "db", "stop"}); }
};

/// Exactly one line on stderr/stdout, and exit status 2.
void check_one_line_error(const common::ProcessResult& r) {
  CHECK(r.exit_code == 2);
  CHECK(common::trim(r.output).find('\n') == std::string::npos);
  CHECK(r.output.rfind("driftwatch: ", 0) == 0);
}

}  // namespace

TEST_CASE("db start, migrate twice, status and stop work with no configuration") {
  TempDir dir;
  StopOnExit guard{dir};
  auto status = run_driftwatch({data_dir_flag(dir), "db", "status"});
  CHECK(status.exit_code == 0);
  CHECK(status.output.find("not created yet") != std::string::npos);

  auto start = run_driftwatch({data_dir_flag(dir), "db", "start"});
  INFO(start.output);
  REQUIRE(start.exit_code == 0);
  CHECK(start.output.find("running") != std::string::npos);

  auto m1 = run_driftwatch({data_dir_flag(dir), "db", "migrate"});
  CHECK(m1.exit_code == 0);
  CHECK(m1.output.find("applied 0001_initial") != std::string::npos);
  auto m2 = run_driftwatch({data_dir_flag(dir), "db", "migrate"});
  CHECK(m2.exit_code == 0);
  CHECK(m2.output.find("up to date") != std::string::npos);

  status = run_driftwatch({data_dir_flag(dir), "db", "status"});
  CHECK(status.exit_code == 0);
  CHECK(status.output.find("running") != std::string::npos);
  auto latest = "reachable, schema version " + std::to_string(db::migrations().back().version);
  CHECK(status.output.find(latest) != std::string::npos);

  auto stop = run_driftwatch({data_dir_flag(dir), "db", "stop"});
  CHECK(stop.exit_code == 0);
  status = run_driftwatch({data_dir_flag(dir), "db", "status"});
  CHECK(status.output.find("stopped") != std::string::npos);
}

TEST_CASE("two processes starting the embedded database at once end with one server") {
  TempDir dir;
  StopOnExit guard{dir};
  auto spec = [&] {
    common::ProcessSpec s;
    s.argv = {DRIFTWATCH_BIN, data_dir_flag(dir), "db", "start"};
    s.timeout = std::chrono::minutes(2);
    return s;
  };
  auto a = common::Child::start(spec()).take();
  auto b = common::Child::start(spec()).take();
  auto ra = a.wait();
  auto rb = b.wait();
  INFO(ra.output, rb.output);
  CHECK(ra.exit_code == 0);
  CHECK(rb.exit_code == 0);
  // Both report the same server (same pid in "… (pid N)").
  auto pid_of = [](const std::string& out) { return out.substr(out.rfind("pid")); };
  CHECK(pid_of(ra.output) == pid_of(rb.output));
}

TEST_CASE("a data directory that is not a cluster is refused in one line") {
  TempDir dir;
  auto data = dir / "data/postgres/data";
  std::filesystem::create_directories(data);
  std::ofstream(data / "junk") << "not postgres";
  if (geteuid() == 0) {  // as root the server user, postgres, must own it
    const passwd* pw = getpwnam("postgres");
    REQUIRE(pw != nullptr);
    REQUIRE(chown(data.c_str(), pw->pw_uid, pw->pw_gid) == 0);
  }
  auto r = run_driftwatch({data_dir_flag(dir), "db", "start"});
  check_one_line_error(r);
  CHECK(r.output.find("is not a PostgreSQL cluster") != std::string::npos);
  CHECK(std::filesystem::exists(data / "junk"));  // nothing of the user's is touched
}

TEST_CASE("a data directory owned by someone else is refused in one line") {
  if (geteuid() != 0) return testing::skip_test("only root can give a directory to another user");
  TempDir dir;
  auto data = dir / "data/postgres/data";
  std::filesystem::create_directories(data);
  const passwd* nobody = getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  REQUIRE(chown(data.c_str(), nobody->pw_uid, nobody->pw_gid) == 0);
  auto r = run_driftwatch({data_dir_flag(dir), "db", "status"});
  check_one_line_error(r);
  CHECK(r.output.find("is owned by nobody") != std::string::npos);
}

TEST_CASE("a data directory that cannot be created is refused in one line") {
  TempDir dir;
  std::ofstream(dir / "file") << "x";
  auto r = run_driftwatch({"--data-dir=" + (dir / "file/sub").string(), "db", "start"});
  check_one_line_error(r);
  CHECK(r.output.find("file/sub") != std::string::npos);
}

TEST_CASE("unknown subcommands and options get one line and exit 2") {
  auto r = run_driftwatch({"frobnicate"});
  check_one_line_error(r);
  CHECK(r.output.find("frobnicate") != std::string::npos);
  r = run_driftwatch({"db", "status", "--no-such-option"});
  check_one_line_error(r);
  CHECK(r.output.find("--no-such-option") != std::string::npos);
  r = run_driftwatch({});
  check_one_line_error(r);
}

TEST_CASE("an unreachable DSN names the host and reason, never the password") {
  auto r = run_driftwatch({"--db", "postgresql://alice:pa55word@127.0.0.1:1/drift", "db", "migrate"});
  check_one_line_error(r);
  CHECK(r.output.find("127.0.0.1") != std::string::npos);
  CHECK(r.output.find("refused") != std::string::npos);
  CHECK(r.output.find("pa55word") == std::string::npos);

  r = run_driftwatch({"db", "status"}, {{"DRIFTWATCH_DB", "host=127.0.0.1 port=1 password=pa55word"}});
  check_one_line_error(r);
  CHECK(r.output.find("pa55word") == std::string::npos);

  r = run_driftwatch({"--db", "host=x password=pa55word nonsense=1", "db", "status"});
  check_one_line_error(r);
  CHECK(r.output.find("invalid database DSN") != std::string::npos);
  CHECK(r.output.find("pa55word") == std::string::npos);
}

TEST_CASE("with a DSN driftwatch uses that server and never the embedded one") {
  TempDir dir;
  std::string name;
  testing::fresh_database(false, &name);
  auto dsn = "host=" + testing::test_cluster_dir() + "/postgres user=postgres dbname=" + name;
  auto m1 = run_driftwatch({data_dir_flag(dir), "--db", dsn, "db", "migrate"});
  INFO(m1.output);
  CHECK(m1.exit_code == 0);
  CHECK(m1.output.find("applied 0001_initial") != std::string::npos);
  auto m2 = run_driftwatch({data_dir_flag(dir), "--db", dsn, "db", "migrate"});
  CHECK(m2.output.find("up to date") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "data"));
  auto stop = run_driftwatch({data_dir_flag(dir), "--db", dsn, "db", "stop"});
  check_one_line_error(stop);
}

TEST_CASE("a schema newer than the binary is refused with a clear message") {
  std::string name;
  testing::fresh_database(true, &name);
  auto host = testing::test_cluster_dir() + "/postgres";
  // Plays a future driftwatch that applied migration 9999.
  common::ProcessSpec psql;
  psql.argv = {"psql", "-X", "-q", "-h", host, "-U", "postgres", "-d", name, "-c",
               "INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future')"};
  auto p = common::run_process(psql).take();
  INFO(p.output);
  REQUIRE(p.exit_code == 0);
  auto r = run_driftwatch({"--db", "host=" + host + " user=postgres dbname=" + name, "db", "migrate"});
  check_one_line_error(r);
  CHECK(r.output.find("newer than this driftwatch") != std::string::npos);
}
