// compile_commands.json → clang-19 bitcode commands: parsing, the flag
// surgery, the -cc1 line of `clang -###`, and which TUs become which modules.
#include "evaluator/compile_commands.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "evaluator/extract.h"

using namespace evaluator;

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

CompileCommand cmd(std::vector<std::string> args, std::string file = "/p/src/a.c") {
  return {"/p", std::move(file), std::move(args)};
}

}  // namespace

TEST_CASE("shell words: quotes and backslashes as a POSIX shell reads them") {
  auto w = shell_split(R"(cc -DNAME="\"x y\"" -I'/a b' a\ b.c  -c)");
  REQUIRE(w.ok());
  CHECK(*w == std::vector<std::string>{"cc", "-DNAME=\"x y\"", "-I/a b", "a b.c", "-c"});
  CHECK_FALSE(shell_split("cc 'open").ok());
  CHECK_FALSE(shell_split("cc \"open").ok());
}

TEST_CASE("compile_commands.json entries in both forms with relative files made absolute") {
  auto c = parse_compile_commands(R"([
    {"directory": "/p/build", "file": "../src/a.c", "arguments": ["cc", "-c", "../src/a.c"]},
    {"directory": "/p", "file": "/p/b.cpp", "command": "c++ -O2 -c b.cpp -o 'b.o'"}])",
                                  "cc.json");
  REQUIRE(c.ok());
  REQUIRE(c->size() == 2);
  CHECK((*c)[0].file == "/p/src/a.c");
  CHECK((*c)[1].arguments == std::vector<std::string>{"c++", "-O2", "-c", "b.cpp", "-o", "b.o"});
  auto bad = parse_compile_commands(R"([{"directory": "/p", "file": "a.c"}])", "cc.json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "cc.json: entry 0: needs 'arguments' or 'command'");
  CHECK_FALSE(parse_compile_commands("{}", "cc.json").ok());
}

TEST_CASE("the language comes from -x or the extension or a C++ driver") {
  CHECK(command_language(cmd({"cc", "-c", "a.c"})) == Language::C);
  CHECK(command_language(cmd({"g++", "-c", "a.c"})) == Language::Cxx);
  CHECK(command_language(cmd({"cc", "-x", "c++", "-c", "a.c"})) == Language::Cxx);
  CHECK(command_language(cmd({"cc", "-c", "a.cc"}, "/p/a.cc")) == Language::Cxx);
  CHECK_FALSE(command_language(cmd({"cc", "-c", "x.S"}, "/p/x.S")));
  CHECK_FALSE(command_language(cmd({"cc", "-x", "assembler-with-cpp", "-c", "a.c"})));
}

TEST_CASE("a compile becomes a bitcode compile: outputs and deps and LTO and -Werror out but the -O level kept") {
  // -MJ and --serialize-diagnostics would overwrite the build's own files.
  auto c = cmd({"ccache", "/usr/bin/gcc", "-O2", "-Werror", "-Werror=format-security", "-MD", "-MF", "a.d", "-MT",
                "a.o", "-Wp,-MMD,a.d", "-flto=thin", "-MJ", "a.json", "--serialize-diagnostics", "a.dia", "-DX=1",
                "-I", "inc", "-c", "src/a.c", "-o", "a.o"});
  auto inv = rewrite_for_bitcode(c, "/out/a.c.bc");
  REQUIRE(inv.ok());
  CHECK(inv->language == Language::C);
  CHECK(inv->opt_level == "-O2");
  CHECK_FALSE(inv->opt_level_defaulted);
  CHECK(inv->bitcode_argv ==
        std::vector<std::string>{"clang-19", "-DX=1", "-I", "inc", "src/a.c", "-O2", "-Xclang", "-disable-llvm-passes",
                                 "-emit-llvm", "-c", "-w", "-Wno-error=implicit-function-declaration",
                                 "-Wno-error=implicit-int", "-Wno-error=int-conversion",
                                 "-Wno-error=incompatible-function-pointer-types", "-o", "/out/a.c.bc"});
  CHECK(inv->probe_argv ==
        std::vector<std::string>{"clang-19", "-###", "-DX=1", "-I", "inc", "src/a.c", "-O2", "-c", "-o", "/out/a.c.o"});
  // What would change the code or fail it is told; the build's plumbing is not.
  CHECK(inv->left_out == std::vector<std::string>{"-Werror", "-Werror=format-security", "-flto=thin"});
}

TEST_CASE("a coverage or CFI build's compile loses its instrumentation and LTO-only flags, not its defines") {
  // clang refuses CFI and whole-program devirtualization without -flto, and a
  // profile-instrumented module's llvm.instrprof calls select on no target.
  auto c = cmd({"clang", "-O2", "-flto", "-fsanitize=cfi-icall", "-fsanitize-cfi-cross-dso", "-fwhole-program-vtables",
                "-fvirtual-function-elimination", "-fsplit-lto-unit", "-fprofile-instr-generate=%m.profraw",
                "-fcoverage-mapping", "-fprofile-generate", "-fcs-profile-generate", "-DPROFILE=1", "-c", "src/a.c"});
  auto inv = rewrite_for_bitcode(c, "/out/a.c.bc");
  REQUIRE(inv.ok());
  CHECK(inv->bitcode_argv ==
        std::vector<std::string>{"clang-19", "-DPROFILE=1", "src/a.c", "-O2", "-Xclang", "-disable-llvm-passes",
                                 "-emit-llvm", "-c", "-w", "-Wno-error=implicit-function-declaration",
                                 "-Wno-error=implicit-int", "-Wno-error=int-conversion",
                                 "-Wno-error=incompatible-function-pointer-types", "-o", "/out/a.c.bc"});
  // From a list, only CFI goes.
  auto listed = rewrite_for_bitcode(cmd({"clang", "-flto", "-fsanitize=address,cfi-icall,undefined", "-c", "src/a.c"}),
                                    "/out/a.c.bc");
  REQUIRE(listed.ok());
  CHECK(has(listed->bitcode_argv, "-fsanitize=address,undefined"));
  CHECK(std::none_of(listed->bitcode_argv.begin(), listed->bitcode_argv.end(),
                     [](const std::string& a) { return a.find("cfi") != std::string::npos; }));
}

TEST_CASE("no -O level or -O0 (which would add optnone) compiles at -Oz") {
  auto none = rewrite_for_bitcode(cmd({"cc", "-c", "a.c"}), "a.bc");
  REQUIRE(none.ok());
  CHECK(none->opt_level == "-Oz");
  CHECK(none->opt_level_defaulted);
  auto o0 = rewrite_for_bitcode(cmd({"cc", "-O2", "-O0", "-c", "a.c"}), "a.bc");
  REQUIRE(o0.ok());
  CHECK(o0->opt_level == "-Oz");
  CHECK_FALSE(has(o0->bitcode_argv, "-O0"));
  CHECK_FALSE(has(o0->bitcode_argv, "-O2"));
  auto last = rewrite_for_bitcode(cmd({"cc", "-O0", "-Os", "-c", "a.c"}), "a.bc");
  CHECK(last->opt_level == "-Os");
}

TEST_CASE("C++ goes to clang++ and a missing input is added but option values are never taken for the input") {
  auto inv = rewrite_for_bitcode(cmd({"g++", "-include", "-O3", "-c"}, "/p/a.cpp"), "a.bc");
  REQUIRE(inv.ok());
  CHECK(inv->bitcode_argv.front() == "clang++-19");
  CHECK(has(inv->bitcode_argv, "/p/a.cpp"));
  CHECK(inv->opt_level == "-Oz");  // "-O3" was the value of -include
  CHECK_FALSE(rewrite_for_bitcode(cmd({"cc", "-c", "x.S"}, "/p/x.S"), "x.bc").ok());
}

TEST_CASE("the -cc1 line of a clang dry run becomes a .cmd without input and output and -x") {
  const char* out = R"(Debian clang version 19.1.7 (3~deb12u1)
Target: x86_64-pc-linux-gnu
 (in-process)
 "/usr/lib/llvm-19/bin/clang" "-cc1" "-triple" "x86_64-pc-linux-gnu" "-emit-obj" "-main-file-name" "m.c" "-D" "X=\"q\"" "-O2" "-dependency-file" "m.d" "-MT" "m.o" "-o" "m.o" "-x" "c" "m.c"
)";
  auto cc1 = cc1_from_dry_run(out, "/p/m.c");
  REQUIRE(cc1.ok());
  CHECK(*cc1 == std::vector<std::string>{"-cc1", "-triple", "x86_64-pc-linux-gnu", "-emit-obj", "-main-file-name",
                                         "m.c", "-D", "X=\"q\"", "-O2"});
  CHECK(cc1_language(*cc1) == Language::C);
  CHECK(cc1_language({"-cc1", "-main-file-name", "x.cpp"}) == Language::Cxx);
  CHECK(cc1_language({"-cc1", "-std=gnu++17"}) == Language::Cxx);
  CHECK_FALSE(cc1_from_dry_run("clang: error: no such file", "a.c").ok());
}

TEST_CASE("optnone is found in attribute groups only") {
  CHECK(has_optnone("define i32 @f() #0 {\n}\nattributes #0 = { noinline nounwind optnone uwtable }\n"));
  CHECK(has_optnone("attributes #3 = { optnone }"));
  CHECK_FALSE(has_optnone("attributes #0 = { nounwind \"x-optnone-y\"=\"1\" }\n; optnone in a comment\n"));
}

TEST_CASE("globs: a star stays within a directory and a double star crosses directories") {
  CHECK(glob_match("src/*.c", "src/a.c"));
  CHECK_FALSE(glob_match("src/*.c", "src/sub/a.c"));
  CHECK(glob_match("src/**", "src/sub/a.c"));
  CHECK(glob_match("**/test/*.c", "test/x.c"));
  CHECK(glob_match("**/test/*.c", "a/b/test/x.c"));
  CHECK(glob_match("lib/??.c", "lib/ab.c"));
  CHECK_FALSE(glob_match("*.c", "test/x.c"));
}

TEST_CASE("the plan: names relative to the tree with duplicates and probes out whatever the record order") {
  std::vector<CompileCommand> cs = {
      {"/t", "/t/lib/a.c", {"cc", "-fPIC", "-O2", "-c", "lib/a.c", "-o", "a.sho"}},
      {"/t", "/t/lib/a.c", {"cc", "-O2", "-c", "lib/a.c", "-o", "a.o"}},
      {"/t/b", "/t/b/CMakeFiles/3.25/CompilerIdC/CMakeCCompilerId.c", {"cc", "-c", "CMakeCCompilerId.c"}},
      {"/t", "/t/x.S", {"cc", "-c", "x.S"}},
      {"/t", "/usr/include/stray.c", {"cc", "-c", "/usr/include/stray.c"}},
      {"/t", "/t/tests/t.c", {"cc", "-c", "tests/t.c"}},
      {"/t", "/t/main.cpp", {"c++", "-c", "main.cpp"}}};
  ExtractOptions o;
  o.root = "/t";
  o.name_prefix = "pkg/";
  o.exclude = {"tests/*"};
  auto plan = plan_extraction(cs, o);
  REQUIRE(plan.modules.size() == 2);
  CHECK(plan.modules[0].name == "pkg/lib/a.c");
  CHECK(plan.modules[0].command == 1);  // the shorter, non-PIC command
  CHECK(plan.modules[1].name == "pkg/main.cpp");
  CHECK(plan.duplicates == 1);
  CHECK(skipped_text(plan).find("; 1 further compiles of a source skipped (each source's shortest command kept)") !=
        std::string::npos);
  CHECK(plan.probes == 1);
  CHECK(plan.not_c_family == 1);
  CHECK(plan.outside_root == 1);
  CHECK(plan.excluded == 1);
  std::swap(cs[0], cs[1]);
  CHECK(plan_extraction(cs, o).modules[0].command == 0);  // the same command, recorded first this time
  o.root.clear();
  cs.erase(cs.begin() + 4);  // without the stray file the common directory is /t
  auto plan2 = plan_extraction(cs, o);
  CHECK(plan2.root == "/t");
}

TEST_CASE("a real project's compiles: -fno-inline, a precompiled header and the other inputs of a link are dropped") {
  // A debug configuration turns inlining off: every function noinline, the policy never asked.
  auto inv = rewrite_for_bitcode(cmd({"cc", "-O0", "-g", "-fno-inline", "-fno-inline-functions", "-c", "a.c"}),
                                 "/o/a.bc", {}, "-Oz");
  REQUIRE(inv.ok());
  CHECK_FALSE(has(inv->bitcode_argv, "-fno-inline"));
  CHECK_FALSE(has(inv->bitcode_argv, "-fno-inline-functions"));
  CHECK_FALSE(has(inv->probe_argv, "-fno-inline"));
  CHECK(inv->left_out == std::vector<std::string>{"-fno-inline", "-fno-inline-functions"});
  // CMake's clang PCH, in both forms: made at another -O level or by another clang.
  inv = rewrite_for_bitcode(cmd({"clang", "-Xclang", "-include-pch", "-Xclang", "/b/cmake_pch.h.pch", "-Xclang",
                                 "-include", "-Xclang", "/b/cmake_pch.h", "-include-pch", "/b/other.pch", "-c", "a.c"}),
                            "/o/a.bc");
  REQUIRE(inv.ok());
  CHECK_FALSE(has(inv->bitcode_argv, "-include-pch"));
  CHECK_FALSE(has(inv->bitcode_argv, "/b/cmake_pch.h.pch"));
  CHECK_FALSE(has(inv->bitcode_argv, "/b/other.pch"));
  CHECK(inv->left_out == std::vector<std::string>{"-include-pch", "-include-pch"});
  // The header itself is still included, its -Xclang pairs whole.
  auto at = std::find(inv->bitcode_argv.begin(), inv->bitcode_argv.end(), "-include");
  REQUIRE(at - inv->bitcode_argv.begin() >= 2);
  CHECK(std::vector<std::string>(at - 2, at + 3) ==
        std::vector<std::string>{"clang-19", "-Xclang", "-include", "-Xclang", "/b/cmake_pch.h"});
  // `cc -o prog a.c main.c lib.a`, as a hand-written database records a Makefile: only this entry's file.
  inv = rewrite_for_bitcode(cmd({"cc", "-O2", "-o", "prog", "a.c", "main.c", "libx.a"}, "/p/a.c"), "/o/a.bc");
  REQUIRE(inv.ok());
  CHECK(has(inv->bitcode_argv, "a.c"));
  CHECK_FALSE(has(inv->bitcode_argv, "main.c"));
  // --output's value is an output, not another input to drop.
  inv = rewrite_for_bitcode(cmd({"gcc", "--output", "a.o", "-c", "a.c"}, "/p/a.c"), "/o/a.bc");
  REQUIRE(inv.ok());
  CHECK_FALSE(has(inv->bitcode_argv, "--output"));
  CHECK_FALSE(has(inv->bitcode_argv, "a.o"));
  CHECK(has(inv->bitcode_argv, "a.c"));
  // An -O level passed to cc1 directly is the TU's, replaced like any other.
  inv = rewrite_for_bitcode(cmd({"cc", "-Xclang", "-O3", "-c", "a.c"}), "/o/a.bc", {}, "-Oz");
  REQUIRE(inv.ok());
  CHECK_FALSE(has(inv->bitcode_argv, "-O3"));
  CHECK(inv->opt_level == "-Oz");
  CHECK_FALSE(has(inv->bitcode_argv, "libx.a"));
  // C that GCC only warns about, clang-19 refuses unless told otherwise; C++ is left alone.
  inv = rewrite_for_bitcode(cmd({"cc", "-c", "a.c"}), "/o/a.bc");
  REQUIRE(inv.ok());
  CHECK(has(inv->bitcode_argv, "-Wno-error=implicit-function-declaration"));
  CHECK(has(inv->bitcode_argv, "-Wno-error=int-conversion"));
  inv = rewrite_for_bitcode(cmd({"c++", "-c", "a.cpp"}, "/p/a.cpp"), "/o/a.bc");
  REQUIRE(inv.ok());
  CHECK_FALSE(has(inv->bitcode_argv, "-Wno-error=implicit-int"));
}

TEST_CASE("a syntax error in compile_commands.json is named with its line, and a relative directory is the file's") {
  auto bad = parse_compile_commands("[\n  {\"directory\": \"/p\", \"file\": \"a.c\", \"command\": \"cc -c a.c\"},\n]",
                                    "cc.json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("cc.json: not valid JSON: parse error at line 3") == 0);
  CHECK(parse_compile_commands("{}", "cc.json").error().message == "cc.json: not a JSON array of compile commands");
  auto c = parse_compile_commands(R"([{"directory": "build", "file": "../src/a.c", "arguments": ["cc", "-c", "x"]}])",
                                  "cc.json", "/home/u/proj");
  REQUIRE(c.ok());
  CHECK((*c)[0].directory == "/home/u/proj/build");
  CHECK((*c)[0].file == "/home/u/proj/src/a.c");
}

TEST_CASE("another target's compiles are named by --target, -m32 or a cross compiler's prefix") {
  CHECK(command_target_arch(cmd({"cc", "-c", "a.c"})).empty());
  CHECK(command_target_arch(cmd({"/usr/bin/aarch64-linux-gnu-gcc", "-Os", "-c", "a.c"})) == "aarch64");
  CHECK(command_target_arch(cmd({"ccache", "arm-none-eabi-g++-12", "-c", "a.c"})) == "arm");
  CHECK(command_target_arch(cmd({"x86_64-linux-gnu-gcc", "-c", "a.c"})) == "x86_64");
  CHECK(command_target_arch(cmd({"clang", "--target=arm64-apple-macos", "-c", "a.c"})) == "aarch64");
  CHECK(command_target_arch(cmd({"clang", "-target", "amd64-unknown-freebsd", "-c", "a.c"})) == "x86_64");
  CHECK(command_target_arch(cmd({"gcc", "-m32", "-c", "a.c"})) == "i386");
  CHECK(command_target_arch(cmd({"x-gcc", "-c", "a.c"})).empty());  // no triple
  CHECK(command_target_arch(cmd({"gcc-12", "-c", "a.c"})).empty());
  std::vector<CompileCommand> cs = {{"/t", "/t/a.c", {"cc", "-c", "a.c"}},
                                    {"/t", "/t/b.c", {"cc", "--target=sparc64-linux-gnu", "-c", "b.c"}}};
  auto plan = plan_extraction(cs, {});  // host_arch() names no SPARC
  CHECK(plan.modules.size() == 1u);
  CHECK(skipped_text(plan) == "; 1 compiles for another target skipped");
  // -m64 undoes -m32 only: an explicit other target stays another target.
  CHECK(command_target_arch(cmd({"clang", "--target=aarch64-linux-gnu", "-m64", "-c", "a.c"})) == "aarch64");
  CHECK(command_target_arch(cmd({"gcc", "-m32", "-m64", "-c", "a.c"})) == "x86_64");
}

TEST_CASE("clang's unknown-argument errors name the flags to drop") {
  auto flags = unknown_arguments(
      "clang: error: unknown argument: '-fno-var-tracking-assignments'\n"
      "clang: error: unknown argument '-fconserve-stack'; did you mean '-fno-conserve-stack'?\n"
      "clang: error: unknown argument: '-fno-var-tracking-assignments'\n"
      "a.c:1:1: error: unknown type name 'x'\n");
  CHECK(flags == std::vector<std::string>{"-fno-var-tracking-assignments", "-fconserve-stack"});
  CHECK(unknown_arguments("a.c:3: error: use of undeclared identifier 'y'").empty());
  // A source line a diagnostic quotes is not the driver speaking.
  CHECK(unknown_arguments("a.c:9:5: error: unknown argument '-c' in usage()\n    9 | usage(\"clang: error: unknown "
                          "argument: '-c'\");\n")
            .empty());
}

TEST_CASE("a unity build's sources are the project's code, CMake's compiler checks are not") {
  std::vector<CompileCommand> cs = {
      {"/t/b", "/t/b/CMakeFiles/core.dir/Unity/unity_0_c.c", {"cc", "-c", "CMakeFiles/core.dir/Unity/unity_0_c.c"}},
      {"/t/b", "/t/b/CMakeFiles/CMakeScratch/TryCompile-x/src.c", {"cc", "-c", "src.c"}},
      {"/t/b", "/t/b/CMakeFiles/core.dir/cmake_pch.h.c", {"cc", "-c", "cmake_pch.h.c"}}};
  ExtractOptions o;
  o.root = "/t";
  auto plan = plan_extraction(cs, o);
  REQUIRE(plan.modules.size() == 1);
  CHECK(plan.modules[0].name == "b/CMakeFiles/core.dir/Unity/unity_0_c.c");
  CHECK(plan.probes == 2);
}

TEST_CASE("the summary says which flags were taken out that would have changed the project's code") {
  evaluator::ExtractReport r;
  r.modules.push_back({"a.c", "a.c", "0", Language::C, false, {}, {"-fno-inline", "-flto=thin"}});
  r.modules.push_back({"b.c", "b.c", "1", Language::C, false, {}, {"-flto=thin"}});
  r.modules.push_back({"c.c", "c.c", "2", Language::C, false, {}, {}});
  auto text = evaluator::summarize(r);
  CHECK(text.find("; 2 compiled without flags that would make the measured code not the project's own, or fail the "
                  "compile (-flto=thin -fno-inline)") != std::string::npos);
  r.modules.pop_back();
  r.modules.pop_back();
  r.modules.pop_back();
  CHECK(evaluator::summarize(r).find("other code") == std::string::npos);
}
