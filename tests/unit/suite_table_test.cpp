// The default suites' package table, the private deb-src entries derived
// from the system's apt sources, recorded compile recipes and link groups.
#include <doctest/doctest.h>

#include <set>

#include "evaluator/debian_source.h"
#include "evaluator/package_table.h"

using namespace evaluator;

namespace {

const char* kTable = R"(
[suites.small]
description = "s"
[suites.big]
[[package]]
name = "foo"
suite = "small"
build = "make -j{jobs} CC={cc}"
[[package.link]]
name = "foo"
modules = ["src/*.c", "main.c"]
exclude = ["src/test.c"]
flags = ["-lm"]
[[package]]
name = "bar"
suite = "big"
prepare = "touch x"
[package.compile]
sources = ["src/**"]
exclude = ["src/skip.c"]
flags = ["-O2"]
)";

std::string table_error(const std::string& text) {
  auto t = parse_suite_table(text, "t.toml");
  REQUIRE_FALSE(t.ok());
  return t.error().message;
}

}  // namespace

TEST_CASE("the suite table parses in file order with per-package recipes") {
  auto t = parse_suite_table(kTable, "t.toml");
  REQUIRE(t.ok());
  REQUIRE(t->suites.size() == 2);
  CHECK(t->suites[0].name == "small");
  CHECK(t->suites[1].name == "big");
  const auto& foo = t->find("small")->packages.at(0);
  CHECK(foo.build == "make -j{jobs} CC={cc}");
  CHECK(foo.links.at(0).exclude == std::vector<std::string>{"src/test.c"});
  const auto& bar = t->find("big")->packages.at(0);
  CHECK(bar.compile.flags == std::vector<std::string>{"-O2"});
  CHECK(bar.prepare == "touch x");
  CHECK(foo.content_hash.size() == 64);
  CHECK(fill_placeholders(foo.build, 2, {}, "/b") == "make -j2 CC=clang-19");
}

TEST_CASE("a recipe change changes the package's and the suite's hash and nothing else") {
  auto a = parse_suite_table(kTable, "t.toml");
  std::string changed = kTable;
  changed.replace(changed.find("\"-O2\""), 5, "\"-O3\"");
  auto b = parse_suite_table(changed, "t.toml");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->find("small")->content_hash == b->find("small")->content_hash);
  CHECK(a->find("big")->content_hash != b->find("big")->content_hash);
}

TEST_CASE("a package listed twice or in an undeclared suite or with two build methods is refused") {
  std::string twice = std::string(kTable) + "[[package]]\nname = \"foo\"\nsuite = \"big\"\nbuild = \"make\"\n";
  CHECK(table_error(twice).find("package foo is listed twice") != std::string::npos);
  std::string undeclared = std::string(kTable) + "[[package]]\nname = \"baz\"\nsuite = \"nope\"\nbuild = \"make\"\n";
  CHECK(table_error(undeclared).find("package baz: suite 'nope' is not declared") != std::string::npos);
  std::string neither = std::string(kTable) + "[[package]]\nname = \"baz\"\nsuite = \"big\"\n";
  CHECK(table_error(neither).find("package baz: needs exactly one of") != std::string::npos);
  std::string both =
      std::string(kTable) +
      "[[package]]\nname = \"baz\"\nsuite = \"big\"\nbuild = \"make\"\n[package.compile]\nsources = [\"a.c\"]\n";
  CHECK(table_error(both).find("package baz: needs exactly one of") != std::string::npos);
  std::string typo = std::string(kTable) + "[[package]]\nname = \"baz\"\nsuite = \"big\"\nbuild = \"x\"\nbiuld = 1\n";
  CHECK(table_error(typo).find("package baz: unknown key 'biuld'") != std::string::npos);
}

TEST_CASE("the shipped table: smoke is small and holdout shares no package with train") {
  const auto& t = default_suite_table();
  REQUIRE(t.find("smoke"));
  REQUIRE(t.find("train"));
  REQUIRE(t.find("holdout"));
  std::set<std::string> train;
  for (const auto& p : t.find("train")->packages) train.insert(p.name);
  for (const auto& p : t.find("holdout")->packages) CHECK_MESSAGE(!train.count(p.name), p.name);
  CHECK(t.find("smoke")->packages.size() <= 3);
  // Inlining for size is measured on code built for size (minsize/optsize
  // attributes), in every shipped suite, the quick one `eval` defaults to too.
  for (const auto& suite : t.suites) CHECK_MESSAGE(suite.opt_level == "-Oz", suite.name);
}

TEST_CASE("a recorded recipe compiles the matching C and C++ files in the tree") {
  auto t = parse_suite_table(kTable, "t.toml");
  const auto& bar = t->find("big")->packages.at(0);
  auto cs = recorded_commands(bar.compile, "/src/bar", {"README", "src/a.c", "src/sub/b.cc", "src/skip.c", "x.c"}, {});
  REQUIRE(cs.size() == 2);
  CHECK(cs[0].file == "/src/bar/src/a.c");
  CHECK(cs[0].arguments == std::vector<std::string>{"clang-19", "-O2", "-c", "src/a.c", "-o", "src/a.c.o"});
  CHECK(cs[1].arguments.front() == "clang++-19");
}

TEST_CASE("link groups by glob: members marked and a failed or missing TU leaves the group out") {
  auto t = parse_suite_table(kTable, "t.toml");
  const auto& links = t->find("small")->packages.at(0).links;
  auto mod = [](const char* source) {
    return SuiteModule{std::string("foo/") + source, std::string(64, 'a'), Language::C, "foo", source, {}};
  };
  Suite s;
  s.name = "small";
  s.modules = {mod("src/a.c"), mod("src/test.c"), mod("main.c")};
  auto notes = apply_link_groups(s, links, "foo", "foo/", {});
  CHECK(notes.empty());
  REQUIRE(s.link_groups.size() == 1);
  CHECK(s.link_groups[0].name == "foo/foo");
  CHECK(s.modules[0].link_groups == std::vector<std::string>{"foo/foo"});
  CHECK(s.modules[1].link_groups.empty());  // excluded
  CHECK(validate_suite(s).ok());

  Suite failed = s;
  failed.link_groups.clear();
  for (auto& m : failed.modules) m.link_groups.clear();
  notes = apply_link_groups(failed, links, "foo", "foo/", {{"foo/src/b.c", "error"}});
  CHECK(failed.link_groups.empty());
  CHECK(notes.at(0) == "link group foo/foo left out: its TU foo/src/b.c failed");

  Suite no_main = failed;
  no_main.modules.pop_back();
  notes = apply_link_groups(no_main, links, "foo", "foo/", {});
  CHECK(notes.at(0) == "link group foo/foo left out: main.c is not among the modules");
}

TEST_CASE("deb-src entries mirror the system's deb entries in both formats") {
  std::vector<AptSourcesFile> files = {
      {"debian.sources",
       "Types: deb\n# a comment\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\n"
       "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
       "Types: deb\nURIs: http://other\nSuites: x\nComponents: main\nEnabled: no\n"},
      {"extra.list",
       "deb [arch=amd64 signed-by=/k.gpg] http://mirror/debian-security bookworm-security main contrib\n"
       "deb-src http://ignored bookworm main\n# deb http://commented bookworm main\n"}};
  auto s = deb_src_entries(files);
  REQUIRE(s.ok());
  CHECK(s->release == "bookworm");
  CHECK(s->deb822 ==
        "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n"
        "Types: deb-src\nURIs: http://mirror/debian-security\nSuites: bookworm-security\nComponents: main contrib\n"
        "Signed-By: /k.gpg\n");
  CHECK_FALSE(deb_src_entries({{"empty.list", "# nothing\n"}}).ok());
}
