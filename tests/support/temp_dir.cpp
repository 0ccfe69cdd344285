#include "tests/support/temp_dir.h"

#include <doctest/doctest.h>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace testing {

void run_ok(const std::vector<std::string>& argv) {
  common::ProcessSpec spec;
  spec.argv = argv;
  auto r = common::run_process(spec).take();
  REQUIRE_MESSAGE(r.ok(), r.output);
}

TempDir::TempDir() {
  std::string tmpl = "/tmp/dwt-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  chmod(tmpl.c_str(), 0755);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

common::ProcessResult run_driftwatch(const std::vector<std::string>& args,
                                     const std::vector<std::pair<std::string, std::string>>& env) {
  common::ProcessSpec spec;
  spec.argv = {DRIFTWATCH_BIN};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = env;
  spec.timeout = std::chrono::minutes(5);
  return common::run_process(spec).take();
}

common::ProcessResult run_driftwatch_unprivileged(const std::vector<std::string>& args) {
  if (geteuid() != 0) return run_driftwatch(args);
  const passwd* nobody = getpwnam("nobody");
  if (!nobody) throw std::runtime_error("no user 'nobody' to run driftwatch unprivileged");
  common::ProcessSpec spec;
  spec.argv = {"setpriv", "--reuid=" + std::to_string(nobody->pw_uid), "--regid=" + std::to_string(nobody->pw_gid),
               "--clear-groups", DRIFTWATCH_BIN};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = {{"HOME", "/nonexistent"}};
  spec.timeout = std::chrono::minutes(5);
  return common::run_process(spec).take();
}

void skip_test(const std::string& reason) {
  std::printf("%s: %s\n", kSkipMarker, reason.c_str());
  std::fflush(stdout);
}

}  // namespace testing
