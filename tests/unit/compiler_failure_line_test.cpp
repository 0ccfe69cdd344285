#include <doctest/doctest.h>

#include "policy/channel_server.h"

TEST_CASE("a failed compiler's message is LLVM's own error line, else its last line") {
  CHECK(policy::compiler_failure_line("LLVM ERROR: Inline asm not supported by this streamer\n"
                                      "PLEASE submit a bug report\nStack dump:\n #0 0x1 abort\n\n") ==
        "LLVM ERROR: Inline asm not supported by this streamer");
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
  CHECK(policy::compiler_failure_line("dwcc: X.cpp:12: void f(): Assertion `x > 0' failed.\nStack dump:\n #0 0x1\n") ==
        "dwcc: X.cpp:12: void f(): Assertion `x > 0' failed.");
}
