#include <doctest/doctest.h>

#include "evaluator/evaluation.h"
#include "policy/channel_server.h"
#include "policy/compiler.h"

TEST_CASE("a failed compiler's message is LLVM's own error line, else its last line") {
  CHECK(policy::compiler_failure_line("LLVM ERROR: Inline asm not supported by this streamer\n"
                                      "PLEASE submit a bug report\nStack dump:\n #0 0x1 abort\n\n") ==
        "LLVM ERROR: Inline asm not supported by this streamer");
  // A bad option in a recipe's compile line: the option, not the parser's guess after it.
  CHECK(policy::compiler_failure_line("dwcc: Unknown command line argument '--no-such-flag'.  Try: 'dwcc --help'\n"
                                      "dwcc: Did you mean '--mno-sort-sda'?\n") ==
        "dwcc: Unknown command line argument '--no-such-flag'.  Try: 'dwcc --help'");
  CHECK(policy::compiler_failure_line(
            "opt: for the --inline-threshold option: 'x' value invalid for integer argument!\n") ==
        "opt: for the --inline-threshold option: 'x' value invalid for integer argument!");
  CHECK(policy::compiler_failure_line("dwcc: error: cannot read 'x.bc'\n") == "dwcc: error: cannot read 'x.bc'");
  CHECK(policy::compiler_failure_line("error: <inline asm>:1:2: invalid instruction mnemonic 'bad'\n"
                                      "        bad %eax\n        ^~~\n") ==
        "error: <inline asm>:1:2: invalid instruction mnemonic 'bad'");
  CHECK(policy::compiler_failure_line("warning: odd\nkilled\n") == "killed");
  CHECK(policy::compiler_failure_line("") == "");
  // A crash with no message: where it was, not the last frame of the stack dump.
  CHECK(policy::compiler_failure_line("PLEASE submit a bug report to https://x and include the crash backtrace.\n"
                                      "Stack dump:\n0.\tProgram arguments: dwcc a.bc -o a.o -Oz\n"
                                      "1.\tRunning pass 'Function Pass Manager' on module 'a.bc'.\n"
                                      " #0 0x00007f1 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int)\n"
                                      "#11 0x000055d963790d51 _start (dwcc+0x5d51)\n") ==
        "1.\tRunning pass 'Function Pass Manager' on module 'a.bc'.");
  CHECK(policy::compiler_failure_line("Stack dump:\n0.\tProgram arguments: dwcc a.bc\n #0 0x1 abort\n") == "");
  // Without llvm-symbolizer the frames are "N  binary 0x…": still not the message.
  CHECK(policy::compiler_failure_line("Stack dump without symbol names (ensure you have llvm-symbolizer in your PATH "
                                      "or set the environment var `LLVM_SYMBOLIZER_PATH` to point to it):\n"
                                      "0  dwcc 0x0000560b1 llvm::sys::PrintStackTrace + 57\n"
                                      "23 dwcc 0x0000560b9 _start + 37\n") == "");
  // A warning printed before the crash is not why it failed.
  CHECK(policy::compiler_failure_line("warning: ignoring debug info with an invalid version (0) in a.bc\n"
                                      "Stack dump:\n0.\tProgram arguments: dwcc a.bc\n"
                                      "1.\tRunning pass 'Inliner' on module 'a.bc'.\n #0 0x1 abort\n") ==
        "1.\tRunning pass 'Inliner' on module 'a.bc'.");
  CHECK(policy::compiler_failure_line("dwcc: X.cpp:12: void f(): Assertion `x > 0' failed.\nStack dump:\n #0 0x1\n") ==
        "dwcc: X.cpp:12: void f(): Assertion `x > 0' failed.");
}

TEST_CASE("a compile out of memory is tried again, then the compile's own failure, while a full disk stays the machine's") {
  auto oom = std::string("LLVM ERROR: out of memory\nAllocation failed\n");
  CHECK(policy::failure_of(oom) == policy::CompileFailure::CompilerFailed);
  CHECK(policy::failure_of("terminate called after throwing an instance of 'std::bad_alloc'\n") ==
        policy::CompileFailure::CompilerFailed);
  CHECK(policy::ran_out_of_memory("compiler exit status 1: LLVM ERROR: out of memory"));
  CHECK(policy::ran_out_of_memory("compiler killed by signal 9 (Killed)"));
  CHECK(policy::failure_of("error: unable to open output file 'x.o': 'No space left on device'\n") ==
        policy::CompileFailure::Machine);
  CHECK_FALSE(policy::ran_out_of_memory("compiler exit status 1: error: unable to open output file: No space left"));
  CHECK(policy::failure_of("x.c:1:1: error: expected expression\n") == policy::CompileFailure::CompilerFailed);
  // In an evaluation: a crash out of memory is tried once more alone (a
  // machine failure then), and counts as the policy's failure if it is back.
  evaluator::HeuristicResult h;
  h.outcome = evaluator::kOutcomeCrashed;
  h.message = "compiler exit status 1: LLVM ERROR: out of memory";
  CHECK(h.machine_failure());
  CHECK_FALSE(h.failed_outside_compiler());
}
