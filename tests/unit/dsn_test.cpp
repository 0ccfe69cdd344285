#include <doctest/doctest.h>

#include "db/database.h"
#include "db/embedded.h"

TEST_CASE("a URI DSN is parsed and its password never displayed") {
  auto t = db::parse_dsn("postgresql://alice:hunter2@db.example.org:6543/drift");
  REQUIRE(t.ok());
  CHECK(t->display == "host=db.example.org port=6543 dbname=drift user=alice");
  CHECK(t->display.find("hunter2") == std::string::npos);
  CHECK(t->conninfo.find("password='hunter2'") != std::string::npos);
  CHECK(t->conninfo.find("connect_timeout='10'") != std::string::npos);
}

TEST_CASE("a key=value DSN keeps an explicit connect_timeout") {
  auto t = db::parse_dsn("host=/tmp/sock port=5433 dbname=x password=pw connect_timeout=3");
  REQUIRE(t.ok());
  CHECK(t->display == "host=/tmp/sock port=5433 dbname=x");
  CHECK(t->conninfo.find("connect_timeout='3'") != std::string::npos);
}

TEST_CASE("a connection a network drops silently fails within minutes: TCP keepalives and a user timeout by default") {
  auto t = db::parse_dsn("postgresql://alice@db.example.org/drift");
  REQUIRE(t.ok());
  for (const char* kv : {"keepalives='1'", "keepalives_idle='60'", "keepalives_interval='10'", "keepalives_count='6'",
                         "tcp_user_timeout='120000'"})
    CHECK_MESSAGE(t->conninfo.find(kv) != std::string::npos, kv);
  auto own = db::parse_dsn("host=db keepalives_idle=5 tcp_user_timeout=0");
  REQUIRE(own.ok());
  CHECK(own->conninfo.find("keepalives_idle='5'") != std::string::npos);
  CHECK(own->conninfo.find("tcp_user_timeout='0'") != std::string::npos);
}

TEST_CASE("an invalid DSN is refused with libpq's reason, without the password") {
  auto t = db::parse_dsn("host=x password=secret bogus_key=1");
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().message.find("invalid database DSN") == 0);
  CHECK(t.error().message.find("bogus_key") != std::string::npos);
  CHECK(t.error().message.find("secret") == std::string::npos);
}

TEST_CASE("a DSN libpq cannot parse never has its password echoed") {
  for (std::string dsn : {"password=a b", "password = 'a b' x", "postgresql://alice:s3cr3t@[::1/drift",
                          "postgresql://alice:s3%zzcr3t@localhost/drift", "postgresql://h/d?password=s3cr3t&bad"}) {
    auto t = db::parse_dsn(dsn);
    REQUIRE_FALSE(t.ok());
    INFO(dsn, " -> ", t.error().message);
    CHECK(t.error().message.find("invalid database DSN: ") == 0);
    CHECK(t.error().message.find("\"b\"") == std::string::npos);
    CHECK(t.error().message.find("a b") == std::string::npos);
    CHECK(t.error().message.find("cr3t") == std::string::npos);
  }
}

TEST_CASE("an embedded server is taken for another host's only on a network filesystem, by its recorded host") {
  // Over NFS, PostgreSQL would take another host's running server for a stale
  // pid and start a second one on the same files.
  CHECK(db::started_elsewhere(true, "build-17", "build-3", true));
  // Not where this host started it, nor where no server left its pid file.
  CHECK_FALSE(db::started_elsewhere(true, "build-3", "build-3", true));
  CHECK_FALSE(db::started_elsewhere(false, "build-17", "build-3", true));
  // A server started before driftwatch recorded hosts: nothing to go by.
  CHECK_FALSE(db::started_elsewhere(true, "", "build-3", true));
  // On a local disk the pid is this machine's to judge, whatever the name.
  CHECK_FALSE(db::started_elsewhere(true, "container-1f3a", "container-9c2b", false));
}
