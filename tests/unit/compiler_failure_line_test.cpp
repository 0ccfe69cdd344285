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
}
