// Reading a failed build step's output: the machine's failures (a tool
// killed under ninja or make, a full disk, memory exhausted) are told from
// the check-in's own. Pure.
#include <doctest/doctest.h>

#include "builder/step_failure.h"

using builder::machine_failure;

TEST_CASE("a tool killed under the build tool, a full disk or exhausted memory is the machine's failure") {
  // How sh, gcc, collect2, clang and make report a tool the OOM killer took.
  for (const char* line : {"Killed", "/bin/sh: line 1: 4242 Killed                  c++ -c big.cpp",
                           "c++: fatal error: Killed signal terminated program cc1plus",
                           "collect2: fatal error: ld terminated with signal 9 [Killed]",
                           "clang++: error: unable to execute command: Killed",
                           "make[2]: *** [Makefile:12: lib/big.o] Killed",
                           "lib/big.o: No space left on device",
                           "virtual memory exhausted: Cannot allocate memory", "LLVM ERROR: out of memory",
                           "cc1plus: out of memory allocating 65536 bytes after a total of 2147483648 bytes",
                           "terminate called after throwing an instance of 'std::bad_alloc'",
                           "lib/big.o: Disk quota exceeded", "ld: cannot open output file a: Read-only file system",
                           "ccache: error: Failed to read from cache: Input/output error",
                           "/bin/sh: 1: Cannot fork: Resource temporarily unavailable",
                           "ninja: fatal: pipe: Too many open files",
                           "driftwatch: the step could not be started: fork: Resource temporarily unavailable"}) {
    auto output = std::string("[12/40] Building CXX object lib/big.o\nFAILED: lib/big.o\n") + line +
                  "\nninja: build stopped: subcommand failed.\n";
    auto why = machine_failure(output);
    REQUIRE_MESSAGE(why, line);
    CHECK(*why == line);
  }
}

TEST_CASE("the check-in's own failures, and our echo of the command, are not the machine's") {
  CHECK_FALSE(machine_failure("FAILED: a.o\na.cpp:3:1: error: unknown type name 'Kiled'\nninja: build stopped\n"));
  CHECK_FALSE(machine_failure("error: use of undeclared identifier 'isKilled'\n"));
  CHECK_FALSE(machine_failure("test/Killedness.cpp:1: error: expected ';'\n"));  // a word inside a name
  CHECK_FALSE(machine_failure("$ kill -KILL $$ # Killed\n"));
  // A file, a macro or a variable of the check-in's own named Killed, and the
  // compiler quoting its source: the check-in's failure all the same.
  CHECK_FALSE(machine_failure("[3/9] Building CXX object lib/Killed.cpp.o\nFAILED: lib/Killed.cpp.o\n"
                              "c++ -DKilled -c lib/Killed.cpp\nlib/Killed.cpp:3:8: error: use of 'Killed'\n"
                              "    3 |   bool Killed = true;\n      |        ^\n"));
  CHECK_FALSE(machine_failure(""));
}

TEST_CASE("a step killed by a signal, directly or as the shell's 128+N, is told from an exit status") {
  common::ProcessResult p;
  p.signal = 9;
  CHECK(builder::killed_by_signal(p));
  p.signal = 0;
  p.exit_code = 137;
  CHECK(builder::killed_by_signal(p));
  p.exit_code = 1;
  CHECK_FALSE(builder::killed_by_signal(p));
  p.exit_code = 2;
  CHECK_FALSE(builder::killed_by_signal(p));
  p.exit_code = 128 + 7;  // SIGBUS: a mapped file on a full disk
  CHECK(builder::killed_by_signal(p));
  p.exit_code = 128 + 15;
  CHECK(builder::killed_by_signal(p));
}

TEST_CASE("a tool of the check-in crashing (SIGSEGV, SIGABRT) is its own failure, not a signal from outside") {
  common::ProcessResult p;
  for (int code : {128 + 11, 128 + 6, 128 + 4, 128 + 8}) {
    p.exit_code = code;
    CHECK_FALSE_MESSAGE(builder::killed_by_signal(p), code);
  }
  p.exit_code = 0;
  p.signal = 11;
  CHECK_FALSE(builder::killed_by_signal(p));
}

TEST_CASE("a bare command a shell did not find (exit 127, or a shell under the step) is one the machine lacks, a path the check-in's file") {
  common::ProcessResult p;
  p.exit_code = 127;
  CHECK(builder::missing_tool_line(p, "$ cmake -S src\nsh: 1: cmake: not found\n"));
  CHECK(builder::missing_tool_line(p, "bash: line 1: ninja: command not found\n"));
  CHECK_FALSE(builder::missing_tool_line(p, "sh: 1: ./build.sh: not found\n"));
  CHECK_FALSE(builder::missing_tool_line(p, "sh: 1: /w/src/configure: not found\n"));
  CHECK_FALSE(builder::missing_tool_line(p, "make: *** [all] Error 127\n"));
  p.exit_code = 1;
  // A shell under the step (ninja's) that lacks a program: the machine's too.
  CHECK(builder::missing_tool_line(p, "[1/9] Building CXX object a.o\nFAILED: a.o\nccache /usr/bin/c++ -c a.cpp\n"
                                   "/bin/sh: 1: ccache: not found\nninja: build stopped: subcommand failed.\n"));
  CHECK(builder::missing_tool_line(p, "CMake Error: CMake was unable to find a build program corresponding to "
                                   "\"Ninja\".  CMAKE_MAKE_PROGRAM is not set.\n"));
  CHECK(builder::missing_tool_line(p, "CMake Error at CMakeLists.txt:3 (project):\n  No CMAKE_CXX_COMPILER could be found.\n"));
  // Not a shell's line, a path, or an error that merely says "not found".
  CHECK_FALSE(builder::missing_tool_line(p, "a.cpp:3:10: error: 'x': not found\n"));
  CHECK_FALSE(builder::missing_tool_line(p, "/bin/sh: 1: ./gen.sh: not found\n"));
  CHECK_FALSE(builder::missing_tool_line(p, "error: header foo.h: not found\n"));
  p.signal = 9;
  CHECK_FALSE(builder::missing_tool_line(p, "/bin/sh: 1: ccache: not found\n"));
}

TEST_CASE("the failure line is the step's first diagnostic, not a ninja progress line naming Error.cpp") {
  CHECK(builder::failure_line("$ ninja -C build\n[57/3120] Building CXX object lib/Support/CMakeFiles/LLVMSupport.dir/"
                              "Error.cpp.o\nFAILED: lib/IR/Foo.cpp.o\n/src/lib/IR/Foo.cpp:12:3: error: use of "
                              "undeclared identifier 'x'\nninja: build stopped: subcommand failed.\n") ==
        "/src/lib/IR/Foo.cpp:12:3: error: use of undeclared identifier 'x'");
  CHECK(builder::failure_line("-- Configuring incomplete\nCMake Error at CMakeLists.txt:9 (message):\n  too old\n") ==
        "CMake Error at CMakeLists.txt:9 (message):");
  // No diagnostic: ninja's FAILED line, else the last line.
  CHECK(builder::failure_line("[1/2] Linking bin/opt\nFAILED: bin/opt\ncollect2 died\nninja: build stopped\n") ==
        "FAILED: bin/opt");
  CHECK(builder::failure_line("something went wrong\nexit 3\n") == "exit 3");
  common::ProcessResult p;
  p.exit_code = 1;
  CHECK(builder::missing_tool_line(p, "FAILED: a.o\n/bin/sh: 1: ccache: not found\n") == "/bin/sh: 1: ccache: not found");
}

TEST_CASE("ninja's failed commands that said nothing read as killed without a word, and one that said why does not") {
  // clang SIGKILLed under ninja: its driver runs the compiler in-process, so
  // nothing prints "Killed"; ninja shows the command and stops.
  std::string silent =
      "$ ninja -C build -j 2\n[41/3120] Building CXX object lib/Target/X86/X86ISelLowering.cpp.o\n"
      "FAILED: lib/Target/X86/X86ISelLowering.cpp.o\n/usr/bin/clang++ -O2 -c X86ISelLowering.cpp -o X86ISelLowering.cpp.o\n"
      "[42/3120] Building CXX object lib/Support/Error.cpp.o\n"
      "FAILED: lib/Target/X86/X86FastISel.cpp.o\n/usr/bin/clang++ -O2 -c X86FastISel.cpp -o X86FastISel.cpp.o\n\n"
      "ninja: build stopped: subcommand failed.\n";
  CHECK(builder::ninja_failed_without_a_word(silent));
  // One of them said why: the check-in's failure.
  std::string spoke = silent;
  spoke.insert(spoke.find("[42/3120]"), "X86ISelLowering.cpp:12:3: error: use of undeclared identifier 'Foo'\n1 error generated.\n");
  CHECK_FALSE(builder::ninja_failed_without_a_word(spoke));
  // A warning counts as a word too: the command was not cut off before it spoke.
  CHECK_FALSE(builder::ninja_failed_without_a_word("FAILED: a.o\ncc -c a.c\na.c:1:1: warning: x\nninja: build stopped: subcommand failed.\n"));
  // No ninja failure at all: make, a script, a configure step.
  CHECK_FALSE(builder::ninja_failed_without_a_word("make: *** [Makefile:3: all] Error 1\n"));
  CHECK_FALSE(builder::ninja_failed_without_a_word(""));
  CHECK_FALSE(builder::ninja_failed_without_a_word("ninja: error: loading 'build.ninja': No such file or directory\n"));
  // A console-pool command (an ExternalProject's configure) speaks before its FAILED line.
  CHECK_FALSE(builder::ninja_failed_without_a_word(
      "[3/9] Performing configure step for 'runtimes'\nCMake Error at CMakeLists.txt:4 (message):\n  no compiler\n"
      "FAILED: runtimes-configure\ncd runtimes && cmake ..\nninja: build stopped: subcommand failed.\n"));
  // A command under the step that ran ninja itself, whose error names a missing file.
  CHECK_FALSE(builder::ninja_failed_without_a_word(
      "FAILED: sub\nninja -C sub\nninja: error: 'gen.h', needed by 'a.o', missing and no known rule to make it\n"
      "ninja: build stopped: subcommand failed.\n"));
}
