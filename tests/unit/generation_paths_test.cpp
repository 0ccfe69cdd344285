// A cached build's compile command is moved into the generation that holds
// its artifacts: only the artifact's path changes, never the flag around it.
#include <doctest/doctest.h>

#include "builder/generations.h"

TEST_CASE("a compile command moved into a generation keeps the flags its artifact paths sit in") {
  builder::BuildResult r;
  r.artifacts["dwcc"] = "/cache/abc/artifacts/dwcc";
  r.artifacts["plugin"] = "/cache/abc/artifacts/p.so";
  r.compile = {"/cache/abc/artifacts/dwcc", "-fpass-plugin=/cache/abc/artifacts/p.so",
               "-Wl,-rpath,/cache/abc/artifacts/p.so,--as-needed", "/elsewhere/artifacts/other.so", "{input}"};
  auto moved = builder::in_generation(r, "/cache/abc.gen-7");
  CHECK(moved.artifacts["dwcc"] == "/cache/abc.gen-7/artifacts/dwcc");
  CHECK(moved.compile[0] == "/cache/abc.gen-7/artifacts/dwcc");
  CHECK(moved.compile[1] == "-fpass-plugin=/cache/abc.gen-7/artifacts/p.so");
  CHECK(moved.compile[2] == "-Wl,-rpath,/cache/abc.gen-7/artifacts/p.so,--as-needed");
  CHECK(moved.compile[3] == "/elsewhere/artifacts/other.so");  // not one of the build's artifacts
  CHECK(moved.compile[4] == "{input}");
  CHECK(moved.log == "/cache/abc.gen-7/build.log");
}
