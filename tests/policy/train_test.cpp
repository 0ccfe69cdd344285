// Training's robustness: a resumed run refuses another run's state, a
// task that throws on a worker thread is that task's error, divergence
// stops cleanly, and a residual policy keeps its margin through training.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <stdexcept>

#include "common/file_lock.h"
#include "common/process.h"
#include "evaluator/object_size.h"
#include "policy/compiler.h"
#include "policy/gate_policy.h"
#include "policy/search.h"
#include "policy/train.h"
#include "policy/training_data.h"
#include "tests/support/temp_dir.h"

using namespace policy;
namespace fs = std::filesystem;

namespace {

TrainModule module_of(const testing::TempDir& dir, const std::string& name) {
  auto bc = dir / (name + ".bc");
  common::ProcessSpec clang;
  clang.argv = {"clang-19", "-Oz", "-Xclang", "-disable-llvm-passes", "-emit-llvm", "-c",
                std::string(DRIFTWATCH_SOURCE_DIR) + "/samples/testdata/" + name + ".c", "-o", bc.string()};
  REQUIRE(common::run_process(clang).take().ok());
  return {name + ".c", bc, {}};
}

/// The smallest run that writes every kind of state: collected data, search results, a checkpoint.
TrainOptions tiny_run(const testing::TempDir& dir) {
  TrainOptions o;
  o.compiler.argv = {DWCC_BIN, "{input}", "-o", "{output}", "-Oz"};
  o.measure_text = [](const fs::path& obj) -> common::Result<std::int64_t> {
    auto s = evaluator::measure_object(obj);
    if (!s) return s.error();
    return s->text;
  };
  o.work_dir = dir / "work";
  o.clone_epochs = 1;
  o.search_trials = 1;
  o.imitation_epochs = 1;
  o.iterations = 0;
  o.jobs = 2;
  o.metadata.name = "tiny";
  return o;
}

}  // namespace

TEST_CASE("train --resume refuses state another run made (modules, compiler, options), in one line") {
  testing::TempDir tmp;
  auto o = tiny_run(tmp);
  o.modules = {module_of(tmp, "sort"), module_of(tmp, "utf8")};
  auto first = train(o);
  REQUIRE_MESSAGE(first.ok(), first.error().message);
  o.resume = true;
  auto again = train(o);  // the same suite resumes
  REQUIRE_MESSAGE(again.ok(), again.error().message);

  auto other = o;
  other.modules = {module_of(tmp, "ini"), module_of(tmp, "json"), module_of(tmp, "hashtable")};
  auto r = train(other);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("cannot resume") != std::string::npos);
  CHECK(r.error().message.find("was made with other training modules") != std::string::npos);
  CHECK(r.error().message.find('\n') == std::string::npos);

  // Another compiler, or options that shape the model: not the same run either.
  auto compiler = o;
  compiler.compiler.argv.push_back("-fno-inline-functions");
  r = train(compiler);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("was made with another compiler") != std::string::npos);
  auto search = o;
  search.search_trials = 2;
  r = train(search);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("was made with other search options") != std::string::npos);
  auto options = o;
  options.flip_weight = 2;
  r = train(options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("was made with other training options") != std::string::npos);
  // Training longer is what resuming is for.
  auto longer = o;
  longer.iterations = 1;
  CHECK(can_resume(longer));
  // Other imitation options on the same search, once the checkpoints are
  // gone (bench/policy_variants.sh weighs variants so): the search is reused.
  for (const auto& e : fs::directory_iterator(o.work_dir))
    if (e.path().filename().string().rfind("checkpoint", 0) == 0) fs::remove(e.path());
  auto variant = train(options);
  CHECK_MESSAGE(variant.ok(), variant.error().message);
  // Without --resume, retrain's way: state of another run is cleared, not read.
  auto retrain_like = other;
  retrain_like.resume = false;
  retrain_like.resume_if_same = true;
  CHECK_FALSE(can_resume(retrain_like));
  auto fresh = train(retrain_like);
  REQUIRE_MESSAGE(fresh.ok(), fresh.error().message);
  CHECK(can_resume(retrain_like));

  // Same names, other contents: other modules.
  fs::copy_file(tmp / "ini.bc", other.modules[1].bitcode, fs::copy_options::overwrite_existing);
  r = train(other);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("was made with other training modules") != std::string::npos);
}

TEST_CASE(
    "two trainings into one work directory at once: the second is refused, not mixed in, and a torn checkpoint is "
    "refused") {
  testing::TempDir tmp;
  auto o = tiny_run(tmp);
  o.modules = {module_of(tmp, "sort")};
  auto held = common::FileLock::try_acquire(o.work_dir / "lock").take();  // a training running there
  REQUIRE(held.has_value());
  auto r = train(o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "another training is using " + o.work_dir.string() +
                                 " (the same --out name and seed): wait for it, or train under another --out name");
  held.reset();
  auto after = train(o);
  CHECK_MESSAGE(after.ok(), after.error().message);
  // A checkpoint that cannot be read is refused, not silently trained over from the start.
  REQUIRE(fs::exists(o.work_dir / "checkpoint.json"));
  std::ofstream(o.work_dir / "checkpoint.json") << "{\"iteration\": 3, \"baselin";
  o.resume = true;
  auto torn = train(o);
  REQUIRE_FALSE(torn.ok());
  CHECK(torn.error().message ==
        "cannot resume: " + (o.work_dir / "checkpoint.json").string() + " is corrupt (train again without --resume)");
  // Retrain's way (resuming only its own run, of its own accord): afresh, not refused every night.
  o.resume = false;
  o.resume_if_same = true;
  CHECK_FALSE(can_resume(o));  // said as a fresh start, not "resuming"
  auto afresh = train(o);
  CHECK_MESSAGE(afresh.ok(), afresh.error().message);
  auto rewritten = nlohmann::json::parse(std::ifstream(o.work_dir / "checkpoint.json"), nullptr, false);
  CHECK_FALSE(rewritten.is_discarded());
}

TEST_CASE("a task that throws on a worker thread is that task's error, and the others run") {
  std::vector<int> ran(8, 0);
  auto errors = parallel_for(8, 3, [&](int i) {
    if (i == 5) throw std::runtime_error("No space left on device");
    ran[i] = 1;
  });
  REQUIRE(errors.size() == 8);
  for (int i = 0; i < 8; ++i) {
    INFO(i);
    CHECK(errors[i] == (i == 5 ? "driftwatch failed: No space left on device" : ""));
    CHECK(ran[i] == (i == 5 ? 0 : 1));
  }
}

TEST_CASE("training that diverges stops at the bad step with one clear line, keeping the last good checkpoint") {
  testing::TempDir tmp;
  auto o = tiny_run(tmp);
  o.modules = {module_of(tmp, "sort"), module_of(tmp, "utf8")};

  SUBCASE("cloning, with a learning rate no Adam survives") {
    o.learning_rate = 1e30;
    o.clone_epochs = 3;
    auto r = train(o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("training diverged in clone") != std::string::npos);
    CHECK(r.error().message.find('\n') == std::string::npos);
    CHECK_FALSE(fs::exists(o.work_dir / "checkpoint.json"));  // nothing after the bad step was saved
  }
  SUBCASE("REINFORCE: the warm-up's checkpoint stays, the diverged iteration is not saved") {
    o.rl_learning_rate = 1e30;
    o.iterations = 2;
    o.eval_every = 1;
    auto r = train(o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("training diverged in reinforce at step 1") != std::string::npos);
    CHECK(r.error().message.find(o.work_dir.string()) != std::string::npos);
    std::ifstream in(o.work_dir / "checkpoint.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text.find("\"iteration\":0") != std::string::npos);
  }
  SUBCASE("a setting LibTorch refuses is one line, not a backtrace") {
    o.learning_rate = 1e39;  // past float's range
    auto r = train(o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find("training failed: ") == 0);
    CHECK(r.error().message.find('\n') == std::string::npos);
  }
}

TEST_CASE("a residual policy is trained, sampled and served with the default's side at its margin") {
  testing::TempDir tmp;
  auto o = tiny_run(tmp);
  o.modules = {module_of(tmp, "json"), module_of(tmp, "hashtable")};
  o.validation = {module_of(tmp, "sort"), module_of(tmp, "utf8")};
  o.search_trials = 2;
  o.imitation_epochs = 5;
  o.iterations = 1;  // REINFORCE's gradient must see the margin term its sampled actions had
  o.eval_every = 1;
  o.residual_margin = 2;
  o.margins = {0.5};
  auto r = train(o);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  // Served with at least the margin it was trained with: the one chosen, or deferring everywhere.
  CHECK(r->model.metadata().margin >= 2);
  auto training = nlohmann::json::parse(r->model.metadata().training);
  CHECK(training["residual_margin"] == 2.0);
  REQUIRE(training["margin_grid"].size() == 3);  // as trained, one above it, deferring everywhere
  CHECK(training["margin_grid"][0]["margin"] == 2.0);
  CHECK(training["margin_grid"][1]["margin"] == 2.5);
  // Nothing was trained without the default's side: every validation module compiled.
  for (const auto& row : training["margin_grid"]) CHECK(row["failed"] == 0);
}

TEST_CASE("where a gate never opens on a module's default trajectory, its compile is the default echo's size") {
  testing::TempDir tmp;
  auto o = tiny_run(tmp);
  for (const char* name : {"hashtable", "ini", "json", "sort", "utf8"}) o.modules.push_back(module_of(tmp, name));
  auto slot = detect_default_slot(o.compiler, tmp / "probe");
  REQUIRE_MESSAGE(slot.ok(), slot.error().message);
  auto data = collect_training_data(o, *slot);
  REQUIRE_MESSAGE(data.ok(), data.error().message);
  REQUIRE(data->modules.size() == o.modules.size());
  drop_feature(*data, "callee_basic_block_count");  // as training does: the gate is served without it
  PolicyMetadata meta;
  meta.name = "gate";
  meta.features = data->feature_names;
  // fit_gate takes the echo's size for these modules without compiling:
  // every compile here checks that it is the size the compile gives.
  int closed = 0, opened = 0, changed = 0;
  for (const GateRule& rule : gate_candidates(GateGrid{})) {  // the rules training tries
    auto out = evaluate(gate_policy(&rule, meta), *data, o, *slot);
    REQUIRE(out.failed == 0);
    for (std::size_t i = 0; i < data->modules.size(); ++i) {
      const auto& m = data->modules[i];
      if (gate_opens_on(rule, data->feature_names, m.features, m.default_decisions)) {
        ++opened;
        changed += out.text[i] != m.echo_text;
        continue;
      }
      ++closed;
      CHECK_MESSAGE(out.text[i] == m.echo_text, m.name << " under " << rule.describe());
    }
  }
  auto shut = evaluate(gate_policy(nullptr, meta), *data, o, *slot);
  for (std::size_t i = 0; i < data->modules.size(); ++i) CHECK(shut.text[i] == data->modules[i].echo_text);
  // Both kinds occur, and an open gate does change what is compiled: the
  // check above is not vacuous and the modules it skips are not all alike.
  CHECK(closed > 0);
  CHECK(opened > 0);
  CHECK(changed > 0);
}

namespace {

/// Each module's search result of a run: what the greedy search tried and kept.
std::vector<nlohmann::json> search_results(const fs::path& work_dir) {
  std::vector<nlohmann::json> out;
  for (const auto& e : fs::directory_iterator(work_dir / "search")) {
    std::ifstream in(e.path() / "result.json");
    REQUIRE(in);
    out.push_back(nlohmann::json::parse(in));
  }
  return out;
}

}  // namespace

TEST_CASE("the greedy search records each flip's gain and keeps only flips that save the minimum") {
  testing::TempDir tmp;
  auto o = tiny_run(tmp);
  o.modules = {module_of(tmp, "sort"), module_of(tmp, "utf8"), module_of(tmp, "ini"), module_of(tmp, "json"),
               module_of(tmp, "hashtable")};
  o.search_trials = 40;  // every decision of these small modules: one shrinks, by 2 bytes
  auto any = train(o);
  REQUIRE_MESSAGE(any.ok(), any.error().message);
  int kept = 0;
  std::set<std::string> shrinking;  ///< modules where some flip shrank the object
  for (const auto& r : search_results(o.work_dir)) {
    REQUIRE(r.at("tried").size() == r.at("trials").get<std::size_t>());
    std::set<int> flipped;
    if (r.contains("flipped")) flipped = r["flipped"].get<std::set<int>>();
    for (const auto& t : r["tried"]) {
      int index = t.at(0);
      bool shrank = !t.at(1).is_null() && t.at(1).get<std::int64_t>() < 0;
      CHECK(flipped.count(index) == (shrank ? 1u : 0u));  // min gain 1: any shrink is kept
      if (shrank) shrinking.insert(r.at("module").get<std::string>());
    }
    kept += static_cast<int>(flipped.size());
  }
  REQUIRE(kept > 0);  // else this suite cannot show the minimum at work
  // At its default the minimum is not in the run's key: a work directory an
  // older driftwatch left, whose key never had it, still resumes.
  {
    std::ifstream run(o.work_dir / "run.json");
    auto key = nlohmann::json::parse(run);
    CHECK(key.at("search").at("options").contains("search_trials"));
    CHECK_FALSE(key.at("search").at("options").contains("search_min_gain"));
  }

  // The strict run searches only the modules where a flip shrank: the
  // others cannot show a shrink refused. (Its search of them is the first
  // run's: 40 trials try every decision of these small modules, whatever
  // order the model trained on fewer modules puts them in.)
  auto strict = o;
  strict.work_dir = tmp / "strict";
  strict.search_min_gain = 16;
  std::erase_if(strict.modules, [&](const TrainModule& m) { return !shrinking.count(m.name); });
  REQUIRE_FALSE(strict.modules.empty());
  auto r = train(strict);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  int strict_kept = 0, refused_small = 0;
  for (const auto& res : search_results(strict.work_dir)) {
    std::set<int> flipped;
    if (res.contains("flipped")) flipped = res["flipped"].get<std::set<int>>();
    for (const auto& t : res["tried"]) {
      auto gain = t.at(1).is_null() ? 0 : -t.at(1).get<std::int64_t>();
      CHECK(flipped.count(t.at(0).get<int>()) == (gain >= 16 ? 1u : 0u));
      if (gain > 0 && gain < 16) ++refused_small;
    }
    strict_kept += static_cast<int>(flipped.size());
  }
  REQUIRE(refused_small > 0);  // a shrink under the minimum was tried and not kept
  // The option is part of the run: a run with another minimum does not resume this one.
  strict.resume = true;
  strict.search_min_gain = 8;
  auto other = train(strict);
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().message.find("was made with other search options") != std::string::npos);
  MESSAGE("kept " << kept << " flips; at 16 bytes " << strict_kept << ", " << refused_small << " smaller shrinks refused");
}

TEST_CASE("a training compile the machine failed is tried once more with the same figures, and failed twice stops training") {
  testing::TempDir tmp;
  auto o = tiny_run(tmp);
  for (const char* name : {"ini", "json"}) o.modules.push_back(module_of(tmp, name));
  auto slot = detect_default_slot(o.compiler, tmp / "probe");
  REQUIRE_MESSAGE(slot.ok(), slot.error().message);
  auto clean = collect_training_data(o, *slot);
  REQUIRE_MESSAGE(clean.ok(), clean.error().message);
  PolicyMetadata meta;
  meta.name = "gate";
  meta.features = clean->feature_names;
  GateRule rule = gate_candidates({{10}, {2}, {0}}).front();
  auto expected = evaluate(gate_policy(&rule, meta), *clean, o, *slot);
  REQUIRE(expected.failed == 0);

  // dwcc behind a script that SIGKILLs json's first channel compile of each
  // phase ("once"), and fails all of them on a full disk once "always" exists.
  auto marks = tmp / "marks";
  fs::create_directories(marks);
  auto script = tmp / "dwcc-killed.sh";
  std::ofstream(script) << "#!/bin/sh\ncase \"$*\" in *-enable-ml-inliner*json*|*json*-enable-ml-inliner*) "
                        << "if [ -e " << (marks / "always").string() << " ]; then echo 'LLVM ERROR: IO failure on "
                        << "output stream: No space left on device' >&2; exit 1; fi; if mkdir "
                        << (marks / "once").string() << " 2>/dev/null; then kill -9 $$; fi;; esac\nexec " << DWCC_BIN
                        << " \"$@\"\n";
  fs::permissions(script, fs::perms::owner_all);
  o.compiler.argv[0] = script.string();
  o.work_dir = tmp / "work-killed";
  auto collected = collect_training_data(o, *slot);
  REQUIRE_MESSAGE(collected.ok(), collected.error().message);
  CHECK(fs::exists(marks / "once"));  // the kill happened, and the module was collected anyway
  REQUIRE(collected->modules.size() == 2);
  CHECK(collected->modules[1].default_decisions == clean->modules[1].default_decisions);
  fs::remove(marks / "once");
  auto measured = evaluate(gate_policy(&rule, meta), *collected, o, *slot);
  CHECK(fs::exists(marks / "once"));
  CHECK(measured.failed == 0);
  CHECK(measured.text == expected.text);

  // A full disk every time: not a loss that the machine decided, but a stop that says why.
  std::ofstream(marks / "always") << "";
  std::string why;
  try {
    evaluate(gate_policy(&rule, meta), *collected, o, *slot);
  } catch (const common::Fatal& e) {
    why = e.what();
  }
  CHECK(why.find("the machine failed a compile of json.c twice") != std::string::npos);
  CHECK(why.find("No space left on device") != std::string::npos);
  CHECK(why.find("--resume") != std::string::npos);
  auto refused = collect_training_data(o, *slot);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("the machine failed a compile of json.c twice") != std::string::npos);
}

TEST_CASE("a saved search result is read back only for the module it was made for") {
  testing::TempDir tmp;
  ModuleData ini{"ini.c", tmp / "ini.bc", 100, 100, {{1, 2}, {3, 4}}, {0, 1}, {}};
  ModuleData json = ini;
  json.name = "json.c";
  SearchedModule s{90, {1, 1}, {{1, 2}, {3, 4}}, 2, 1, {0}, {}, {{0, 10}, {1, std::nullopt}}};
  REQUIRE(save_searched(s, ini, tmp / "result.json").ok());
  auto back = load_searched(tmp / "result.json", ini);
  REQUIRE(back);
  CHECK(back->text == 90);
  CHECK(back->decisions == s.decisions);
  CHECK(back->tried.size() == 2);
  // Files are per position: after a module dropped out, the next one's is not another's result.
  CHECK_FALSE(load_searched(tmp / "result.json", json));
}
