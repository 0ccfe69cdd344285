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

TEST_CASE("a compile command whose data directory holds spaces, '=' and ':' is moved whole") {
  builder::BuildResult r;
  std::string entry = "/d/it's a dir=x:y/cache/sample-compiler-1234/abc";
  r.artifacts["dwcc"] = entry + "/artifacts/dwcc";
  r.compile = {entry + "/artifacts/dwcc", "--plugin=" + entry + "/artifacts/dwcc"};
  auto moved = builder::in_generation(r, entry + ".gen-2");
  CHECK(moved.compile[0] == entry + ".gen-2/artifacts/dwcc");
  CHECK(moved.compile[1] == "--plugin=" + entry + ".gen-2/artifacts/dwcc");
}

TEST_CASE("a compile command cached under another directory than its artifacts' still finds them") {
  builder::BuildResult r;
  r.artifacts["dwcc"] = "/new/place/abc/artifacts/dwcc";
  r.compile = {"/old/place/abc/artifacts/dwcc", "{input}"};
  auto moved = builder::in_generation(r, "/new/place/abc.gen-3");
  CHECK(moved.compile[0] == "/new/place/abc.gen-3/artifacts/dwcc");
}
