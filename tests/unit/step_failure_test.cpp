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

TEST_CASE("exit status 127 for a bare command is one the machine lacks, for a path the check-in's missing file") {
  common::ProcessResult p;
  p.exit_code = 127;
  CHECK(builder::tool_not_found(p, "$ cmake -S src\nsh: 1: cmake: not found\n"));
  CHECK(builder::tool_not_found(p, "bash: line 1: ninja: command not found\n"));
  CHECK_FALSE(builder::tool_not_found(p, "sh: 1: ./build.sh: not found\n"));
  CHECK_FALSE(builder::tool_not_found(p, "sh: 1: /w/src/configure: not found\n"));
  CHECK_FALSE(builder::tool_not_found(p, "make: *** [all] Error 127\n"));
  p.exit_code = 1;
  CHECK_FALSE(builder::tool_not_found(p, "sh: 1: cmake: not found\n"));
}
