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
                           "virtual memory exhausted: Cannot allocate memory", "LLVM ERROR: out of memory"}) {
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
}
