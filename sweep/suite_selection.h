#pragma once
// `--suite NAME|DIR`: a built suite, verified against its manifest.
#include <filesystem>
#include <string>

#include "evaluator/suite.h"
#include "policy/train.h"

namespace sweep {

struct SelectedSuite {
  evaluator::Suite suite;
  std::filesystem::path dir;
  std::string manifest_hash;  ///< the suite's identity in the database (suite_identity)
  std::filesystem::path bitcode(const evaluator::SuiteModule& m) const { return dir / (m.name + ".bc"); }
  /// "name@<16 hex of the manifest hash>": the suite as a policy's corpus and
  /// a retrain's candidate key name it.
  std::string named() const { return suite.name + "@" + manifest_hash.substr(0, 16); }
};

/// sha256 of suite.json, which names every module's bitcode by its hash; for
/// an imported corpus, of its corpus description and every module's .cmd
/// too, the command lines a cc1 recipe compiles it with. Throws common::Fatal
/// naming an unreadable file.
std::string suite_identity(const std::filesystem::path& dir, const evaluator::Suite& suite);

/// The suite's modules as training compiles them: an imported corpus's with
/// each module's own -cc1 line when the compiler takes one, as evaluation
/// does (else the trained-at figures and the learned decisions would come
/// from other compiles than the ones tracked). Throws common::Fatal naming a
/// line driftwatch does not run.
std::vector<policy::TrainModule> training_modules(const SelectedSuite& suite,
                                                  const policy::CompilerInvocation& compiler);

/// A directory holding suite.json, or the name of a suite in the data
/// directory. Throws common::Fatal naming what is missing or corrupt.
SelectedSuite select_suite(const std::filesystem::path& data_dir, const std::string& name_or_dir);

}  // namespace sweep
