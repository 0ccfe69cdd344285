#include "sweep/suite_selection.h"

#include "common/hash.h"
#include "common/text.h"
#include "evaluator/corpus.h"
#include "evaluator/package_table.h"
#include "evaluator/suite_builder.h"

namespace sweep {
namespace fs = std::filesystem;

SelectedSuite select_suite(const std::filesystem::path& data_dir, const std::string& name_or_dir) {
  SelectedSuite s;
  s.dir = fs::exists(fs::path(name_or_dir) / evaluator::kSuiteManifestFile)
              ? fs::path(name_or_dir)
              : evaluator::suites_root(data_dir) / name_or_dir;
  if (!fs::exists(s.dir / evaluator::kSuiteManifestFile)) {
    if (evaluator::default_suite_table().find(name_or_dir))
      // The data directory named: a project file's [database] data_dir is
      // read by the project's commands only, not by `suite build`.
      throw common::Fatal("suite " + name_or_dir + " is not built yet: run `driftwatch --data-dir " +
                          common::shell_quote(data_dir.string()) + " suite build " + name_or_dir + "`");
    throw common::Fatal("no suite '" + name_or_dir + "' (not a suite directory, nor a suite in " +
                        evaluator::suites_root(data_dir).string() + "; see `driftwatch suite list`)");
  }
  // A rebuild committed between reading the modules and the identity would
  // pair the old module list with the new identity, which every later check
  // would pass. The manifest is compared before and after instead of taking
  // the suite's lock: a rebuild holds that for its whole build, and readers
  // (report, decide) may have no right to lock it.
  auto manifest = s.dir / evaluator::kSuiteManifestFile;
  for (int attempt = 0;; ++attempt) {
    auto before = common::sha256_file(manifest).take();
    s.suite = evaluator::load_suite(s.dir).take();
    s.manifest_hash = suite_identity(s.dir, s.suite);
    if (common::sha256_file(manifest).take() == before) return s;
    if (attempt == 4)
      throw common::Fatal("suite " + name_or_dir + " kept changing while it was read (" + s.dir.string() +
                          " is being rebuilt?): run again once its build is done");
  }
}

std::vector<policy::TrainModule> training_modules(const SelectedSuite& suite,
                                                  const policy::CompilerInvocation& compiler) {
  std::vector<policy::TrainModule> out;
  bool own_lines = suite.suite.origin.kind == "imported-corpus" && !compiler.cc1.empty();
  auto corpus = own_lines ? evaluator::read_corpus(suite.dir) : common::Result<evaluator::CorpusDescription>(
                                                                     evaluator::CorpusDescription{});
  if (!corpus) throw common::Fatal(corpus.error().message);
  for (const auto& m : suite.suite.modules) {
    policy::TrainModule t{m.name, suite.bitcode(m), {}};
    if (own_lines) {
      auto args = evaluator::read_module_command(suite.dir, *corpus, m.name);
      if (!args) throw common::Fatal(args.error().message);
      if (auto st = evaluator::check_module_command(m.name, *args); !st) throw common::Fatal(st.error().message);
      t.cc1_args = *args;
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string suite_identity(const std::filesystem::path& dir, const evaluator::Suite& suite) {
  auto manifest = common::sha256_file(dir / evaluator::kSuiteManifestFile).take();
  if (suite.origin.kind != "imported-corpus") return manifest;
  // Edited or re-imported command lines change what is measured while
  // suite.json stays the same: they must start a new series.
  std::string text = manifest + "\n" + common::sha256_file(dir / evaluator::kCorpusDescriptionFile).take() + "\n";
  for (const auto& m : suite.modules) {
    auto cmd = evaluator::module_file(dir, m.name, ".cmd");
    if (fs::exists(cmd)) text += m.name + " " + common::sha256_file(cmd).take() + "\n";
  }
  return common::sha256_hex(text);
}

}  // namespace sweep
