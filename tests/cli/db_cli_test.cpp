// `driftwatch db …` end to end: the real binary, a real embedded cluster.
#include <doctest/doctest.h>
#include <pwd.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "common/process.h"
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
  CHECK(status.exit_code == 4);  // none yet, as pg_ctl status says it
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
  CHECK(status.exit_code == 3);
}

TEST_CASE("on a local disk, a server's pid file left under another host name is stale, not a reason to refuse") {
  // A container named anew each run, its server killed with it: on a local
  // disk no other host can run it, so PostgreSQL judges the pid file as ever.
  TempDir dir;
  StopOnExit guard{dir};
  REQUIRE(run_driftwatch({data_dir_flag(dir), "db", "start"}).exit_code == 0);
  auto root = dir / "data" / "postgres";
  std::ifstream recorded(root / "server.host");
  std::string host;
  std::getline(recorded, host);
  CHECK(host == common::host_name());
  REQUIRE(run_driftwatch({data_dir_flag(dir), "db", "stop"}).exit_code == 0);
  std::ofstream(root / "server.host") << "container-1f3a\n";
  std::ofstream(root / "data" / "postmaster.pid") << "4194000\n" << (root / "data").string() << "\n";
  auto started = run_driftwatch({data_dir_flag(dir), "db", "start"});
  INFO(started.output);
  CHECK(started.exit_code == 0);
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

TEST_CASE("a data directory given as a file is refused saying so") {
  TempDir dir;
  std::ofstream(dir / "data") << "a file, not a directory";
  auto r = run_driftwatch({data_dir_flag(dir), "db", "status"});
  check_one_line_error(r);
  CHECK(r.output.find((dir / "data").string() + " is not a directory") != std::string::npos);
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
  // A negative job count was taken for "one per core".
  r = run_driftwatch({"build", "--recipe", "sample-compiler", "--commit", "main", "-j", "-3", "--dry-run"});
  check_one_line_error(r);
  CHECK(r.output.find("-3") != std::string::npos);
  // "nan" passed range checks (NaN compares false both ways): a worker that
  // never left on idle, a bar no rule could meet.
  r = run_driftwatch({"worker", "--idle-exit", "nan"});
  check_one_line_error(r);
  CHECK(r.output.find("--idle-exit: nan is not a finite number") != std::string::npos);
  r = run_driftwatch({"train", "--out", "p.policy", "--gate", "--no-worse-bar", "NaN"});
  check_one_line_error(r);
  CHECK(r.output.find("--no-worse-bar: NaN is not a finite number") != std::string::npos);
  r = run_driftwatch({"worker", "--retry-backoff", "1e999"});
  check_one_line_error(r);
  CHECK(r.output.find("--retry-backoff: 1e999 is not a finite number") != std::string::npos);
  r = run_driftwatch({"sweep", "--stall-timeout", "nan"});
  check_one_line_error(r);
  CHECK(r.output.find("--stall-timeout") != std::string::npos);
}

TEST_CASE("a bad flag is named even when the database cannot be reached: it is checked first") {
  const std::string away = "host=127.0.0.1 port=1";
  auto r = run_driftwatch({"--db", away, "worker", "--kinds", "bild"});
  check_one_line_error(r);
  CHECK(r.output.find("--kinds: unknown job kind 'bild'") != std::string::npos);
  r = run_driftwatch({"--db", away, "jobs", "--state", "faild"});
  check_one_line_error(r);
  CHECK(r.output.find("unknown state 'faild'") != std::string::npos);
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

namespace {

/// psql as `user` (through runuser) against the cluster under `data`; true if it got in.
common::ProcessResult psql_as(const std::string& user, const std::filesystem::path& postgres_root) {
  common::ProcessSpec s;
  s.argv = {"runuser", "-u", user, "--", "psql", "-X", "-q", "-h", postgres_root.string(), "-U", "postgres", "-d",
            "postgres", "-c", "SELECT 1"};
  s.cwd = "/";
  s.timeout = std::chrono::seconds(30);
  return common::run_process(s).take();
}

void open_to_everyone(const std::filesystem::path& postgres_root) {
  namespace fs = std::filesystem;
  fs::permissions(postgres_root, fs::perms::all);
  fs::permissions(postgres_root / ".s.PGSQL.5432", fs::perms::all);
}

}  // namespace

TEST_CASE("the embedded database lets in only its owner: another uid is refused") {
  if (geteuid() != 0) return testing::skip_test("only root can run a command as another user");
  TempDir dir;
  StopOnExit guard{dir};
  auto start = run_driftwatch({data_dir_flag(dir), "db", "start"});
  INFO(start.output);
  REQUIRE(start.exit_code == 0);
  auto root = dir / "data/postgres";
  auto nobody = psql_as("nobody", root);
  INFO(nobody.output);
  CHECK_FALSE(nobody.ok());
  // The socket's directory is private...
  CHECK((std::filesystem::status(root).permissions() & std::filesystem::perms::others_all) ==
        std::filesystem::perms::none);
  // ...and even with it and the socket opened up, the server itself says no.
  open_to_everyone(root);
  auto opened = psql_as("nobody", root);
  INFO(opened.output);
  CHECK_FALSE(opened.ok());
  CHECK(opened.output.find("authentication failed") != std::string::npos);
  // The owner still gets in, driftwatch and psql alike.
  CHECK(psql_as("root", root).ok());
  auto status = run_driftwatch({data_dir_flag(dir), "db", "status"});
  CHECK(status.output.find("reachable") != std::string::npos);
}

TEST_CASE("a cluster an older driftwatch made with trust is made private on the next start") {
  if (geteuid() != 0) return testing::skip_test("only root can run a command as another user");
  TempDir dir;
  StopOnExit guard{dir};
  REQUIRE(run_driftwatch({data_dir_flag(dir), "db", "start"}).exit_code == 0);
  auto root = dir / "data/postgres";
  // What older versions left: trust for everyone, socket and directory open.
  std::ofstream(root / "data/pg_hba.conf") << "local all all trust\n";
  open_to_everyone(root);
  common::ProcessSpec reload;
  std::string pg_ctl;
  for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql")) pg_ctl = e.path() / "bin/pg_ctl";
  reload.argv = {"runuser", "-u", "postgres", "--", pg_ctl, "reload", "-D", (root / "data").string()};
  reload.cwd = "/";
  REQUIRE(common::run_process(reload).take().ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  REQUIRE_MESSAGE(psql_as("nobody", root).ok(), "the simulated old cluster should let anyone in");

  auto again = run_driftwatch({data_dir_flag(dir), "db", "start"});
  INFO(again.output);
  CHECK(again.exit_code == 0);
  auto nobody = psql_as("nobody", root);
  INFO(nobody.output);
  CHECK_FALSE(nobody.ok());
  CHECK(psql_as("root", root).ok());
}

TEST_CASE("the embedded database works in a data directory holding a space, a quote and $(…)") {
  TempDir dir;
  auto marker = "/tmp/pwned-" + std::to_string(getpid());
  std::filesystem::remove(marker);
  auto data = dir / ("it's a $(touch " + marker + ")");
  std::filesystem::create_directories(data);
  std::string flag = "--data-dir=" + data.string();
  struct Stop {
    std::string flag;
    ~Stop() { run_driftwatch({flag, "db", "stop"}); }
  } stop{flag};
  auto start = run_driftwatch({flag, "db", "start"});
  INFO(start.output);
  CHECK(start.exit_code == 0);
  auto status = run_driftwatch({flag, "db", "status"});
  INFO(status.output);
  CHECK(status.output.find("reachable") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(marker));
}

TEST_CASE("a DSN libpq cannot parse is refused without echoing its password") {
  for (std::string dsn : {"password=a b", "host=x password=a b port=1", "postgresql://alice:s3cr3t@[::1/drift",
                          "postgresql://alice:s3%zzcr3t@localhost/drift", "postgres://alice:s3cr3t@h/d?nonsense=1"}) {
    auto r = run_driftwatch({"--db", dsn, "db", "status"});
    INFO(dsn, " -> ", r.output);
    check_one_line_error(r);
    CHECK(r.output.find("invalid database DSN") != std::string::npos);
    CHECK(r.output.find("a b") == std::string::npos);
    CHECK(r.output.find("\"b\"") == std::string::npos);
    CHECK(r.output.find("s3") == std::string::npos);
    CHECK(r.output.find("cr3t") == std::string::npos);
  }
}
