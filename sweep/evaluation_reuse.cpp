#include "sweep/evaluation_reuse.h"

#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "common/hash.h"
#include "common/shared_libraries.h"
#include "common/text.h"
#include "evaluator/corpus.h"
#include "evaluator/metrics.h"
#include "policy/compiler.h"
#include "sweep/reuse_key.h"

namespace sweep {

db::MachineFailureRule machine_failure_rule() {
  std::string outcomes;
  for (const char* o : evaluator::kMachineOutcomes) outcomes += (outcomes.empty() ? "" : ",") + std::string(o);
  // As HeuristicResult::machine_failure reads a crash: killed, or out of memory.
  std::vector<std::string> crash_markers = {policy::kSigkillMarker};
  for (const char* phrase : common::kOutOfMemoryPhrases) crash_markers.push_back(phrase);
  return {outcomes, evaluator::kOutcomeCrashed, crash_markers, evaluator::kFailedAgainAloneNote};
}
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// An imported corpus compiled through cc1 takes each module's own command
/// line, which suite.json does not hash; "" otherwise.
std::string module_args_digest(const SelectedBuild& build, const SelectedSuite& suite) {
  if (suite.suite.origin.kind != "imported-corpus" || build.compiler.cc1.empty()) return "";
  auto corpus = evaluator::read_corpus(suite.dir);
  if (!corpus) return "unreadable";
  std::string lines;
  for (const auto& m : suite.suite.modules) {
    auto args = evaluator::read_module_command(suite.dir, *corpus, m.name);
    lines += m.name + "\n" + (args ? evaluator::format_cmd(*args) : "unreadable") + "\n";
  }
  return common::sha256_hex(lines);
}

/// Whether the file starts with "#!" (read again when it is hashed: a read
/// error shows there).
bool is_script(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  char head[2] = {};
  in.read(head, 2);
  return in.gcount() == 2 && head[0] == '#' && head[1] == '!';
}

policy::CompatReport compat_from_json(const std::string& text) {
  policy::CompatReport r;
  auto j = json::parse(text, nullptr, false);
  if (j.is_discarded() || j.value("state", "") != "known") return r;
  r.known = true;
  r.bound = j.value("bound", 0);
  r.missing = j.value("missing", std::vector<std::string>{});
  r.ignored = j.value("ignored", std::vector<std::string>{});
  r.corrupted = j.value("corrupted", std::vector<std::string>{});
  r.distrusted = j.value("distrusted", std::vector<std::string>{});
  return r;
}

/// A shared library's sha256, read once per process while its size and
/// time stay the same: libLLVM is over 100 MB, and a sweep keys every job.
common::Result<std::string> library_digest(const fs::path& path) {
  static std::mutex mutex;
  static std::map<std::string, std::tuple<std::uintmax_t, fs::file_time_type, std::string>> known;
  std::error_code ec;
  auto real = fs::canonical(path, ec);
  if (ec) return common::Error{path.string() + ": " + ec.message()};
  auto size = fs::file_size(real, ec);
  if (ec) return common::Error{real.string() + ": " + ec.message()};
  auto time = fs::last_write_time(real, ec);
  if (ec) return common::Error{real.string() + ": " + ec.message()};
  {
    std::lock_guard lock(mutex);
    auto at = known.find(real.string());
    if (at != known.end() && std::get<0>(at->second) == size && std::get<1>(at->second) == time)
      return std::get<2>(at->second);
  }
  auto digest = common::sha256_file(real);
  if (!digest) return digest.error();
  std::lock_guard lock(mutex);
  known[real.string()] = {size, time, *digest};
  return *digest;
}

}  // namespace

EvaluationKey evaluation_key(const SelectedBuild& build, const SelectedSuite& suite,
                             const policy::PolicyMetadata& policy, bool compile_every_default) {
  // The artifacts are hashed here, at evaluation time, rather than recorded
  // when they were built: this hashes the very files `compiler` runs (the
  // pinned cache generation), covers toolchain directories driftwatch never
  // built and cache entries made before reuse existed, and needs no column.
  // It costs one read of each artifact (dwcc: ~0.1 s; an LLVM clang: ~1 s),
  // against ~30 s to minutes for the evaluation it may save.
  EvaluationKey out;
  if (build.artifacts.empty()) return out;
  ReuseKeyInputs in;
  std::map<std::string, std::string> paths;
  for (const auto& [name, path] : build.artifacts) {
    // A script (a nightly's wrapper that execs the real compiler beside it)
    // runs what its bytes do not hold: two nightlies' identical wrappers
    // would share a key. Never reused.
    if (is_script(path)) return out;
    auto digest = common::sha256_file(path);
    if (!digest) return out;
    in.artifact_digests[name] = *digest;
    paths[name] = path.string();
    // What the artifact loads decides its output too (a system LLVM
    // upgraded under an unchanged compiler). Unknown: no reuse.
    auto libraries = common::shared_libraries(path);
    if (!libraries) return out;
    for (const auto& lib : *libraries) {
      // By name, as artifacts are: a library beside a compiler that moved
      // (a cache generation renamed, an $ORIGIN rpath) is the same library.
      if (lib.path.empty()) {
        in.library_digests[name + ": " + lib.name] = "not found";
        continue;
      }
      auto lib_digest = library_digest(lib.path);
      if (!lib_digest) return out;
      in.library_digests[name + ": " + lib.name] = *lib_digest;
    }
  }
  in.compile = with_artifact_names(build.compiler.argv, paths);
  in.cc1 = with_artifact_names(build.compiler.cc1, paths);
  in.ml_flag_prefix = build.compiler.ml_flag_prefix;
  in.timeout_ms = build.compiler.timeout.count();
  in.suite_manifest_hash = suite.manifest_hash;
  in.module_args_digest = module_args_digest(build, suite);
  in.policy_hash = policy.content_hash;
  // Sharing needs a policy that defers to the default (a margin).
  in.shared_defaults =
      policy.margin > 0 && evaluator::may_share_defaults(build.compiler, compile_every_default, suite.dir, suite.suite);
  out.key = reuse_key(in);
  out.compiler_digest = compiler_digest(in.artifact_digests);
  return out;
}

evaluator::EvaluationResult result_from_rows(const evaluator::Suite& suite, const std::vector<db::Id>& bench_ids,
                                             const db::ReusableEvaluation& source) {
  using evaluator::Metric, evaluator::metric_name;
  evaluator::EvaluationResult r;
  std::map<db::Id, std::size_t> index;
  r.modules.resize(suite.modules.size());
  for (std::size_t i = 0; i < suite.modules.size() && i < bench_ids.size(); ++i) {
    index[bench_ids[i]] = i;
    r.modules[i].name = suite.modules[i].name;
  }
  auto heuristic = [&](db::Id bench, const std::string& h) -> evaluator::HeuristicResult* {
    auto at = index.find(bench);
    if (at == index.end()) return nullptr;
    return h == "default" ? &r.modules[at->second].by_default : &r.modules[at->second].learned;
  };
  for (const auto& row : source.results)
    if (auto* h = heuristic(row.benchmark_id, row.heuristic)) {
      h->outcome = row.outcome;
      h->message = row.message;
      h->consulted = row.heuristic == "learned" && !h->not_consulted() && h->outcome != evaluator::kOutcomeRefused;
    }
  std::set<const evaluator::HeuristicResult*> timed;
  for (const auto& row : source.measurements)
    if (auto* h = heuristic(row.benchmark_id, row.heuristic)) {
      if (row.metric == metric_name(Metric::CompileSeconds)) h->seconds = row.value, timed.insert(h);
      else if (row.metric == metric_name(Metric::TextBytes)) h->sizes.text = static_cast<std::int64_t>(row.value);
      else if (row.metric == metric_name(Metric::CodeBytes)) h->sizes.code = static_cast<std::int64_t>(row.value);
      else if (row.metric == metric_name(Metric::Decisions)) h->decisions = static_cast<std::size_t>(row.value);
    }
  // A default measured without a compile of its own was the learned
  // compile's object (evaluator::HeuristicResult::shared).
  for (auto& m : r.modules) m.by_default.shared = m.by_default.ok() && !timed.count(&m.by_default);
  evaluator::tally(r);  // the same counting and summaries as evaluator::evaluate
  auto j = json::parse(source.summary_json, nullptr, false);
  if (!j.is_discarded()) {
    if (j.contains("linked") && j["linked"].contains("groups"))
      for (const auto& g : j["linked"]["groups"])
        r.links.push_back({g.value("group", ""), g.value("ok", false), g.value("message", ""),
                           g.value("default_text", std::int64_t{0}), g.value("learned_text", std::int64_t{0})});
    r.warnings = j.value("warnings", std::vector<std::string>{});
    r.defaults_shared = j.value("defaults_shared", 0);
    r.defaults_checked = j.value("defaults_checked", 0);
  }
  std::vector<evaluator::ModuleSizes> linked;
  for (const auto& l : r.links)
    if (l.ok) linked.push_back({l.group, l.default_text, l.learned_text});
  r.linked_summary = evaluator::summarize(linked);
  r.compat = compat_from_json(source.compat_json);
  return r;
}

}  // namespace sweep
