#pragma once
// The default suites (smoke, train, holdout) from Debian source packages:
// fetch each package through the private apt configuration, build it with
// its own build system under bear (or its recorded compile recipe), turn its
// TUs into bitcode, assemble the suite. Packages are cached in
// <data>/sources/<pkg>/, suites in <data>/suites/<name>/; an unchanged suite
// is not built again.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "evaluator/extract.h"
#include "evaluator/package_table.h"
#include "evaluator/suite.h"

namespace evaluator {

struct DefaultSuiteOptions {
  std::filesystem::path data_dir;
  int jobs = 1;
  bool rebuild = false;  ///< build packages and suite again even if cached
  ClangTools tools;
  std::function<void(const std::string&)> progress;  ///< "smoke: bzip2: build (bear): 16 compiles in 6.1 s"
  /// After each package (fetched, built, extracted, or found cached): `done` of `total`.
  std::function<void(const std::string& package, int done, int total)> package_done;
};

struct PackageReport {
  std::string name, version;
  bool cached = false;  ///< fetched and built by an earlier run
  size_t compiles = 0;  ///< entries in its compile_commands.json
  ExtractReport extract;
};

struct DefaultSuiteReport {
  Suite suite;
  std::filesystem::path dir;
  bool cached = false;  ///< up to date already: nothing was done
  std::vector<PackageReport> packages;
  std::vector<std::string> notes;
  double seconds = 0;
};

/// <data>/sources
std::filesystem::path sources_root(const std::filesystem::path& data_dir);

/// Builds (or finds up to date) one suite of the table. A package that cannot
/// be fetched or built fails the suite, naming the package and its log; TUs
/// that fail to compile are reported and left out.
common::Result<DefaultSuiteReport> build_default_suite(const SuiteSpec& spec, const DefaultSuiteOptions& options);

}  // namespace evaluator
