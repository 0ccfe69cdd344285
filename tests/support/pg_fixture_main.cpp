// The throwaway PostgreSQL cluster of a test run: `pg_fixture start DIR`
// before the tests (ctest fixture setup), `pg_fixture stop DIR` after.
#include <cstdio>
#include <filesystem>
#include <string>

#include "db/embedded.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pg_fixture start|stop DIR\n");
    return 2;
  }
  std::string verb = argv[1];
  std::filesystem::path dir = argv[2];
  try {
    db::EmbeddedCluster cluster(dir / "postgres", db::EmbeddedOptions{.durable = false});
    if (verb == "start") {
      std::filesystem::create_directories(dir);
      cluster.start();
      std::printf("test PostgreSQL running in %s\n", cluster.root().c_str());
    } else if (verb == "stop") {
      cluster.stop();
      std::filesystem::remove_all(dir);
      std::filesystem::remove(dir.string() + "/postgres.lock");
    } else {
      std::fprintf(stderr, "pg_fixture: unknown verb %s\n", verb.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pg_fixture: %s\n", e.what());
    return 1;
  }
  return 0;
}
