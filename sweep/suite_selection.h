#pragma once
// `--suite NAME|DIR`: a built suite, verified against its manifest.
#include <filesystem>
#include <string>

#include "evaluator/suite.h"

namespace sweep {

struct SelectedSuite {
  evaluator::Suite suite;
  std::filesystem::path dir;
  std::string manifest_hash;  ///< sha256 of suite.json: the suite's identity in the database
  std::filesystem::path bitcode(const evaluator::SuiteModule& m) const { return dir / (m.name + ".bc"); }
};

/// A directory holding suite.json, or the name of a suite in the data
/// directory. Throws common::Fatal naming what is missing or corrupt.
SelectedSuite select_suite(const std::filesystem::path& data_dir, const std::string& name_or_dir);

}  // namespace sweep
