// Suites built for real: a small C project's compile_commands.json through
// clang-19, an ml-compiler-opt corpus import, the manifest checks against
// the files, a link group linked from objects, and the Debian smoke suite.
#include <doctest/doctest.h>
#include <sys/mount.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <mutex>
#include <thread>

#include "common/process.h"
#include "common/read_file.h"
#include "evaluator/corpus.h"
#include "evaluator/files.h"
#include "evaluator/suite_builder.h"
#include "tests/support/temp_dir.h"

using namespace evaluator;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

common::ProcessResult run(std::vector<std::string> argv, const fs::path& cwd = {}) {
  common::ProcessSpec spec;
  spec.argv = std::move(argv);
  if (!cwd.empty()) spec.cwd = cwd;
  spec.timeout = std::chrono::minutes(3);
  return common::run_process(spec).take();
}

// A tiny real project: a program of two TUs and a helper built without -O,
// one TU that does not compile, one that forces optnone.
fs::path make_project(const fs::path& dir) {
  write(dir / "src/main.c",
        "#include \"util.h\"\n#include <stdio.h>\n"
        "int main(void) { printf(\"%d\\n\", square(7)); return 0; }\n");
  write(dir / "src/util.c",
        "#include \"util.h\"\nstatic int twice(int x) { return x + x; }\n"
        "int square(int x) { return twice(x) * x / 2; }\n");
  write(dir / "src/util.h", "int square(int x);\n");
  write(dir / "src/extra/plain.c", "int plain(int x) { return x ^ 3; }\n");
  write(dir / "src/broken.c", "int broken( { return ; }\n");
  write(dir / "src/pinned.c", "__attribute__((optnone)) int pinned(int x) { return x; }\n");
  auto entry = [&](const std::string& file, const std::string& flags) {
    return "{\"directory\": \"" + dir.string() + "\", \"file\": \"" + file + "\", \"command\": \"gcc " + flags +
           " -MD -MF x.d -c " + file + " -o x.o\"}";
  };
  write(dir / "compile_commands.json", "[" + entry("src/main.c", "-O2 -Isrc") + ",\n" + entry("src/util.c", "-O2") +
                                           ",\n" + entry("src/extra/plain.c", "") + ",\n" +
                                           entry("src/broken.c", "-O2") + ",\n" + entry("src/pinned.c", "-O2") + "]\n");
  return dir / "compile_commands.json";
}

SuiteBuildReport build_tiny(const testing::TempDir& tmp) {
  CompileCommandsSuiteOptions o;
  o.name = "tiny";
  o.extract.jobs = 2;
  o.link_groups = {{"prog", LinkKind::Program, {"main.c", "util.c"}, {}, {}}};
  return build_suite_from_compile_commands(make_project(tmp / "project"), o, tmp / "suites").take();
}

}  // namespace

TEST_CASE("a suite from compile_commands.json: bitcode per TU and failures reported while the rest goes on") {
  testing::TempDir tmp;
  auto r = build_tiny(tmp);
  CHECK(r.dir == tmp / "suites" / "tiny");
  REQUIRE(r.suite.modules.size() == 3);
  CHECK(r.suite.modules[0].name == "extra/plain.c");  // names relative to the sources' common directory
  CHECK(r.suite.modules[1].name == "main.c");
  for (const auto& m : r.suite.modules) {
    CHECK(fs::file_size(module_file(r.dir, m.name, ".bc")) > 0);
    auto cmd = parse_cmd(common::read_file(module_file(r.dir, m.name, ".cmd")).take());
    REQUIRE_FALSE(cmd.empty());
    CHECK(cmd.front() == "-cc1");
    CHECK(std::find(cmd.begin(), cmd.end(), "-emit-obj") != cmd.end());
  }
  REQUIRE(r.extract.failures.size() == 2);
  CHECK(r.extract.failures[0].name == "broken.c");
  CHECK(r.extract.failures[0].message.find("error") != std::string::npos);
  CHECK(r.extract.failures[1].name == "pinned.c");
  CHECK(r.extract.failures[1].message.find("optnone") != std::string::npos);
  CHECK_FALSE(fs::exists(module_file(r.dir, "broken.c", ".bc")));
  // plain.c had no -O level: compiled at -Oz, so no optnone either.
  auto plain = std::find_if(r.extract.modules.begin(), r.extract.modules.end(),
                            [](const auto& m) { return m.name == "extra/plain.c"; });
  REQUIRE(plain != r.extract.modules.end());
  CHECK(plain->opt_level_defaulted);
  auto ir = run({"llvm-dis-19", module_file(r.dir, "extra/plain.c", ".bc").string(), "-o", "-"});
  CHECK(ir.output.find("optnone") == std::string::npos);
  // The suite and its corpus load, verified; nothing half-written is left beside it.
  auto loaded = load_suite(r.dir);
  REQUIRE(loaded.ok());
  CHECK(loaded->origin.kind == "compile-commands");
  CHECK(read_corpus(r.dir).take().modules.size() == 3);
  for (const auto& e : fs::directory_iterator(tmp / "suites"))
    CHECK(e.path().filename().string().rfind(".tmp-", 0) != 0);
}

TEST_CASE("a link group links with clang-19 from objects compiled from the bitcode") {
  testing::TempDir tmp;
  auto r = build_tiny(tmp);
  REQUIRE(r.suite.link_groups.size() == 1);
  auto members = link_group_members(r.suite, "prog");
  REQUIRE(members == std::vector<std::string>{"main.c", "util.c"});
  std::vector<std::string> link = {"clang-19"};
  for (const auto& m : members) {
    auto obj = (tmp / (m + ".o")).string();
    auto c = run({"clang-19", "-Oz", "-c", module_file(r.dir, m, ".bc").string(), "-o", obj});
    REQUIRE_MESSAGE(c.ok(), c.output);
    link.push_back(obj);
  }
  for (const auto& f : r.suite.link_groups[0].flags) link.push_back(f);
  link.insert(link.end(), {"-o", (tmp / "prog").string()});
  auto l = run(link);
  REQUIRE_MESSAGE(l.ok(), l.output);
  auto p = run({(tmp / "prog").string()});
  CHECK(p.ok());
  CHECK(p.output == "49\n");
}

TEST_CASE("a module whose file is missing or changed is refused naming the module") {
  testing::TempDir tmp;
  auto r = build_tiny(tmp);
  {
    std::ofstream(module_file(r.dir, "util.c", ".bc"), std::ios::app) << 'x';
    auto s = load_suite(r.dir);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("module util.c") != std::string::npos);
    CHECK(s.error().message.find("does not match") != std::string::npos);
  }
  fs::remove(module_file(r.dir, "main.c", ".bc"));
  auto s = load_suite(r.dir);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("module main.c") != std::string::npos);
  CHECK(s.error().message.find("missing") != std::string::npos);
}

TEST_CASE("an ml-compiler-opt corpus imports unchanged and an unusable one is refused") {
  testing::TempDir tmp;
  auto r = build_tiny(tmp);
  auto imported = import_corpus(r.dir, "again", tmp / "suites").take();
  CHECK(imported.suite.modules.size() == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(imported.suite.modules[i].sha256 == r.suite.modules[i].sha256);
  CHECK(imported.suite.origin.kind == "imported-corpus");
  CHECK(load_suite(imported.dir).ok());
  CHECK(common::read_file(module_file(imported.dir, "main.c", ".cmd")).take() ==
        common::read_file(module_file(r.dir, "main.c", ".cmd")).take());
  CHECK(imported.notes.empty());

  // A key the import does not read is named: misspelled, a global command
  // line would be silently left out and each module compiled by its own.
  auto description = r.dir / kCorpusDescriptionFile;
  auto text = common::read_file(description).take();
  REQUIRE(text.rfind('}') != std::string::npos);
  text.insert(text.rfind('}'), R"(, "global_command_overide": ["-cc1", "-Oz"])");
  REQUIRE(write_file(description, text).ok());
  auto misspelled = import_corpus(r.dir, "misspelled", tmp / "suites").take();
  REQUIRE(misspelled.notes.size() == 1);
  CHECK(misspelled.notes[0] ==
        "corpus_description.json: key \"global_command_overide\" is not read (driftwatch reads modules, has_thinlto "
        "and global_command_override): a misspelling?");

  fs::remove(module_file(r.dir, "util.c", ".cmd"));
  auto missing = import_corpus(r.dir, "broken", tmp / "suites");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("module util.c: missing util.c.cmd") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp / "suites" / "broken"));
}

TEST_CASE("a suite being read holds back its rebuild until the reading ends, and says why it waits") {
  testing::TempDir tmp;
  auto r = build_tiny(tmp);
  auto imported = import_corpus(r.dir, "held", tmp / "suites").take();
  fs::create_directories(tmp / "mine" / "suite");
  CHECK_FALSE(hold_suite(tmp / "mine" / "suite").take().has_value());  // no driftwatch build made it
  CHECK_FALSE(fs::exists(suite_lock_file(tmp / "mine" / "suite")));     // and nothing is written beside it
  auto reading = hold_suite(imported.dir).take();
  REQUIRE(reading.has_value());
  CHECK(hold_suite(imported.dir).take().has_value());  // readers share it
  // `suite build --import-corpus` of the same name, while it is read.
  std::mutex said_mutex;
  std::string said;
  std::atomic<bool> rebuilt = false;
  bool rebuilt_ok = false;
  std::thread rebuild([&] {
    auto again = import_corpus(r.dir, "held", tmp / "suites", [&](const std::string& line) {
      std::lock_guard<std::mutex> l(said_mutex);
      said += line + "\n";
    });
    rebuilt_ok = again.ok();
    rebuilt = true;
  });
  auto waiting = [&] {
    std::lock_guard<std::mutex> l(said_mutex);
    return !said.empty();
  };
  for (int i = 0; i < 1000 && !waiting() && !rebuilt; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK(waiting());
  CHECK_FALSE(rebuilt);
  reading.reset();
  rebuild.join();
  CHECK(rebuilt_ok);
  CHECK(said == "held: waiting for the evaluations reading this suite to finish\n");
}

TEST_CASE("bad input to the builder: one line and nothing written") {
  testing::TempDir tmp;
  auto none = build_suite_from_compile_commands(tmp / "nope.json", {"x", "", {}, {}}, tmp / "suites");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("cannot read") != std::string::npos);
  write(tmp / "all_bad.json", "[{\"directory\": \"" + tmp.path().string() +
                                  "\", \"file\": \"missing.c\", \"arguments\": [\"cc\", \"-c\", \"missing.c\"]}]");
  auto bad = build_suite_from_compile_commands(tmp / "all_bad.json", {"x", "", {}, {}}, tmp / "suites");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("no TU produced bitcode") != std::string::npos);
  CHECK_FALSE(fs::exists(tmp / "suites" / "x"));
}

TEST_CASE("a real project's compiles come in at -Oz: unity sources, GCC's flags, old C, -fno-inline, a cross compile") {
  testing::TempDir tmp;
  auto dir = tmp / "project";
  write(dir / "src/a.c", "static int twice(int x) { return x + x; }\nint a(int x) { return twice(x) + 1; }\n");
  write(dir / "src/b.c", "int b(int x) { return x * 3; }\n");
  write(dir / "build/CMakeFiles/core.dir/Unity/unity_0_c.c",
        "#include \"" + (dir / "src/a.c").string() + "\"\n#include \"" + (dir / "src/b.c").string() + "\"\n");
  // Accepted by GCC with warnings; clang-19 refuses it unless told otherwise.
  write(dir / "src/old.c", "int old(int x) { return helper(x); }\n");
  write(dir / "src/gcc.c", "int g(int x) { return x - 1; }\n");
  write(dir / "src/noinl.c", "static int one(int x) { return x + 1; }\nint noinl(int x) { return one(x) * 2; }\n");
  write(dir / "src/sparc.c", "int sparc(void) { return 64; }\n");
  write(dir / "src/rsp.c", "int rsp(int x) { return x << 2; }\n");
  // Nested, with CRLF line ends, as a Windows-made file has them.
  write(dir / "src/flags.rsp", "-O3 @more.rsp\r\n");
  write(dir / "src/more.rsp", "-MD -MF " + (dir / "rsp.d").string() + "\r\n");
  write(dir / "src/m1.c", "int m1(void) { return 1; }\n");
  write(dir / "src/m2.c", "int m2(void) { return 2; }\n");
  auto entry = [&](const std::string& file, const std::string& command) {
    return "{\"directory\": \"" + (dir / "src").string() + "\", \"file\": \"" + file + "\", \"command\": \"" + command +
           "\"}";
  };
  write(dir / "compile_commands.json",
        "[" +
            entry((dir / "build/CMakeFiles/core.dir/Unity/unity_0_c.c").string(),
                  "gcc -O2 -c ../build/CMakeFiles/core.dir/Unity/unity_0_c.c -o u.o") +
            ",\n" + entry("old.c", "gcc -std=gnu99 -O2 -c old.c -o old.o") + ",\n" +
            entry("gcc.c", "gcc -O2 -fno-var-tracking-assignments -c gcc.c -o gcc.o") + ",\n" +
            entry("noinl.c", "gcc -O0 -g -fno-inline -c noinl.c -o noinl.o") + ",\n" +
            entry("sparc.c", "/usr/bin/sparc64-linux-gnu-gcc -Os -c sparc.c -o sparc.o") + ",\n" +
            entry("rsp.c", "gcc @flags.rsp -c rsp.c --output rsp.o") + ",\n" +
            entry("m1.c", "cc -O2 -o prog m1.c m2.c") + ",\n" + entry("m2.c", "cc -O2 -o prog m1.c m2.c") + "]\n");
  CompileCommandsSuiteOptions o;
  o.name = "real";
  o.extract.jobs = 2;
  o.extract.opt_level = "-Oz";  // the CLI's default
  auto r = build_suite_from_compile_commands(dir / "compile_commands.json", o, tmp / "suites");
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  std::string failures;
  for (const auto& f : r->extract.failures) failures += f.name + ": " + f.message + "\n";
  INFO(failures);
  CHECK(r->extract.failures.empty());
  std::vector<std::string> names;
  for (const auto& m : r->suite.modules) names.push_back(m.name);
  CHECK(names == std::vector<std::string>{"build/CMakeFiles/core.dir/Unity/unity_0_c.c", "src/gcc.c", "src/m1.c",
                                          "src/m2.c", "src/noinl.c", "src/old.c", "src/rsp.c"});
  CHECK(r->extract.plan.other_target == 1);  // sparc.c: another target's code, for another backend
  auto summary = summarize(r->extract);
  CHECK(summary.find("1 compiled without flags clang-19 does not know (-fno-var-tracking-assignments)") !=
        std::string::npos);
  // Every function carries -Oz's attributes, none is noinline (-fno-inline dropped).
  for (const auto& m : names) {
    auto ir = run({"llvm-dis-19", module_file(r->dir, m, ".bc").string(), "-o", "-"}).output;
    INFO(m);
    CHECK(ir.find(" minsize ") != std::string::npos);
    CHECK(ir.find("noinline") == std::string::npos);
  }
  // The response file's -MF was dropped, not run: the project's tree is untouched.
  CHECK_FALSE(fs::exists(dir / "rsp.d"));
}

TEST_CASE("an ml-compiler-opt corpus whose lines name dependency files imports without them") {
  testing::TempDir tmp;
  auto r = build_tiny(tmp);
  auto cmd_file = module_file(r.dir, "main.c", ".cmd");
  auto cmd = parse_cmd(common::read_file(cmd_file).take());
  auto plain = cmd;
  for (const char* a : {"-dependency-file", "main.d", "-MT", "main.o", "-sys-header-deps"}) cmd.push_back(a);
  REQUIRE(write_file(cmd_file, format_cmd(cmd)).ok());
  auto imported = import_corpus(r.dir, "mlgo", tmp / "suites");
  REQUIRE_MESSAGE(imported.ok(), imported.error().message);
  CHECK(parse_cmd(common::read_file(module_file(imported->dir, "main.c", ".cmd")).take()) == plain);
  REQUIRE(imported->notes.size() == 1);
  CHECK(imported->notes[0].find("removed -MT -dependency-file -sys-header-deps from the command lines of 1 of 3") == 0);
}

TEST_CASE("an ml-compiler-opt corpus of a Debug build (-O0, or no -O on its -cc1 lines) is refused on import") {
  testing::TempDir tmp;
  auto r = build_tiny(tmp);
  auto cmd_file = module_file(r.dir, "main.c", ".cmd");
  auto optimized = parse_cmd(common::read_file(cmd_file).take());
  REQUIRE(std::count_if(optimized.begin(), optimized.end(), [](const auto& a) { return a.starts_with("-O"); }) == 1);
  for (bool drop : {false, true}) {
    auto cmd = optimized;
    for (auto it = cmd.begin(); it != cmd.end(); ++it)
      if (it->starts_with("-O")) {
        if (drop)
          cmd.erase(it);
        else
          *it = "-O0";
        break;
      }
    REQUIRE(write_file(cmd_file, format_cmd(cmd)).ok());
    auto imported = import_corpus(r.dir, "debug", tmp / "suites");
    INFO(drop);
    REQUIRE_FALSE(imported.ok());
    CHECK(imported.error().message.find("module main.c's command line compiles at -O0") != std::string::npos);
    CHECK_FALSE(fs::exists(tmp / "suites" / "debug"));
  }
  REQUIRE(write_file(cmd_file, format_cmd(optimized)).ok());
  CHECK(import_corpus(r.dir, "optimized", tmp / "suites").ok());
}

TEST_CASE("driftwatch suite build and list end to end") {
  testing::TempDir tmp;
  auto cc = make_project(tmp / "project");
  auto data = (tmp / "data").string();
  auto b = testing::run_driftwatch(
      {"--data-dir", data, "suite", "build", "--from-compile-commands", cc.string(), "--name", "mine", "-j", "2"});
  CHECK_MESSAGE(b.exit_code == 0, b.output);
  CHECK(b.output.find("suite mine: 3 modules (3 c, 0 c++) from 5 TUs at -Oz;") != std::string::npos);
  CHECK(b.output.find("2 TUs failed") != std::string::npos);
  CHECK(b.output.find("broken.c: clang: exit status 1") != std::string::npos);
  // The progress line says why in one line: the status and clang's first diagnostic.
  CHECK(b.output.find("failed: broken.c: clang: exit status 1: ") != std::string::npos);
  CHECK(b.output.find("failed: broken.c: clang: exit status 1:\n") == std::string::npos);
  // What a build of another suite killed by Ctrl-C left (no destructor
  // ran then) goes at the next list or build.
  auto killed = std::filesystem::path(data) / "suites" / ".tmp-other-Ab12Cd";
  std::filesystem::create_directories(killed / "half");
  auto l = testing::run_driftwatch({"--data-dir", data, "suite", "list"});
  CHECK(l.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(killed));
  CHECK(l.output.find("smoke") != std::string::npos);  // the defaults, built or not
  CHECK(l.output.find("not built") != std::string::npos);
  CHECK(l.output.find("mine") != std::string::npos);
  auto j = testing::run_driftwatch({"--data-dir", data, "suite", "list", "--json"});
  CHECK(j.output.find("\"name\": \"mine\"") != std::string::npos);
  CHECK(j.output.find("\"modules\": 3") != std::string::npos);
  // A module's bitcode truncated since: damaged, as `eval` would find it, not "built".
  std::filesystem::path damaged_bc;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(data) / "suites" / "mine"))
    if (e.path().extension() == ".bc") damaged_bc = e.path();
  REQUIRE_FALSE(damaged_bc.empty());
  std::filesystem::resize_file(damaged_bc, 10);
  auto damaged = testing::run_driftwatch({"--data-dir", data, "suite", "list"});
  INFO(damaged.output);
  CHECK(damaged.output.find("mine             damaged") != std::string::npos);
  CHECK(damaged.output.find("does not match the manifest") != std::string::npos);
  // Built again from the same compile commands: repaired, replacing nothing of another origin.
  auto again = testing::run_driftwatch(
      {"--data-dir", data, "suite", "build", "--from-compile-commands", cc.string(), "--name", "mine", "-j", "2"});
  CHECK_MESSAGE(again.exit_code == 0, again.output);
  CHECK(again.output.find("this replaced the suite") == std::string::npos);
  // Built from other code under the same name (a slip of --name): said.
  auto other = tmp / "other.json";
  std::ofstream(other) << "[{\"directory\": \"" << DRIFTWATCH_SOURCE_DIR
                       << "/samples/testdata\", \"file\": \"ini.c\", \"command\": \"cc -Oz -c ini.c\"}]";
  auto replaced = testing::run_driftwatch(
      {"--data-dir", data, "suite", "build", "--from-compile-commands", other.string(), "--name", "mine"});
  CHECK_MESSAGE(replaced.exit_code == 0, replaced.output);
  CHECK(replaced.output.find("note: this replaced the suite mine built from " + cc.string() +
                             "; its series in projects ends here") != std::string::npos);

  auto bad_name = testing::run_driftwatch(
      {"--data-dir", data, "suite", "build", "--from-compile-commands", cc.string(), "--name", "Bad Name"});
  CHECK(bad_name.exit_code == 2);
  CHECK(bad_name.output.find("driftwatch: invalid suite name 'Bad Name'") == 0);
  auto unknown = testing::run_driftwatch({"--data-dir", data, "suite", "build", "nightly"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.output.find("unknown default suite 'nightly'") != std::string::npos);
  auto reserved = testing::run_driftwatch(
      {"--data-dir", data, "suite", "build", "--from-compile-commands", cc.string(), "--name", "smoke"});
  CHECK(reserved.exit_code == 2);
  auto level = testing::run_driftwatch({"--data-dir", data, "suite", "build", "holdout", "--opt-level", "O2"});
  CHECK(level.exit_code == 2);
  CHECK(level.output.find("--opt-level is for --from-compile-commands") != std::string::npos);
  auto nothing = testing::run_driftwatch({"--data-dir", data, "suite"});
  CHECK(nothing.exit_code == 2);
  CHECK(nothing.output.find("suite needs a subcommand: build|list") != std::string::npos);
}

TEST_CASE("the evaluator's files (manifests, corpus descriptions) are written atomically: a full disk keeps the old one") {
  testing::TempDir dir;
  auto disk = dir / "disk";
  fs::create_directories(disk);
  int mounted = mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=64k");
  int e = errno;
  REQUIRE_MESSAGE(mounted == 0, "cannot mount a 64k tmpfs at " << disk << " (" << std::strerror(e) << "): this test needs root");
  struct Unmount {
    fs::path d;
    ~Unmount() { umount2(d.c_str(), MNT_DETACH); }
  } unmount{disk};
  CorpusDescription d;
  d.modules = {"a"};
  REQUIRE(write_corpus_description(disk, d).ok());
  auto file = disk / kCorpusDescriptionFile;
  auto old = common::read_file(file).take();
  for (int i = 0; i < 20000; ++i) d.modules.push_back("module-" + std::to_string(i));
  auto r = write_corpus_description(disk, d);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "cannot write " + file.string() + ": " + std::strerror(ENOSPC));
  CHECK(common::read_file(file).take() == old);
  std::vector<std::string> left;
  std::string listing;
  for (const auto& entry : fs::directory_iterator(disk)) left.push_back(entry.path().filename()), listing += " " + left.back();
  CHECK_MESSAGE(left == std::vector<std::string>{kCorpusDescriptionFile}, listing);
}
