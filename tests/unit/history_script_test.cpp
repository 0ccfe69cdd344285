#include <doctest/doctest.h>

#include "tracker/history_script.h"

using namespace tracker;

TEST_CASE("a history script parses into check-ins with edits") {
  auto s = parse_history(R"(
tree = "compiler"
[[checkin]]
week = 0
author = "A <a@x>"
message = "Import"
tag = "v1.0"
[[checkin]]
week = 1
hours = 5
author = "B <b@x>"
message = "Tweak"
branch = "side/x"
[[checkin.edit]]
file = "a.h"
replace = "1"
with = "2"
[[checkin.edit]]
file = "doc.md"
write = "hello"
)",
                         "h.toml");
  REQUIRE(s.ok());
  CHECK(s->main_branch == "main");
  REQUIRE(s->checkins.size() == 2);
  CHECK(*s->checkins[0].tag == "v1.0");
  CHECK(*s->checkins[1].branch == "side/x");
  CHECK(s->checkins[1].hours == 5);
  REQUIRE(s->checkins[1].edits.size() == 2);
  CHECK(*s->checkins[1].edits[0].replace == "1");
  CHECK(*s->checkins[1].edits[1].write == "hello");
}

TEST_CASE("bad history scripts name the problem") {
  auto unknown = parse_history("tree = 'c'\n[[checkin]]\nweek = 0\nauthor = 'A <a>'\nmessage = 'm'\ncolour = 1\n", "h.toml");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message == "h.toml:6: unknown key 'colour' in [[checkin]]");
  auto no_tree = parse_history("[[checkin]]\nweek = 0\n", "h.toml");
  REQUIRE_FALSE(no_tree.ok());
  CHECK(no_tree.error().message.find("missing key 'tree'") != std::string::npos);
  auto bad_edit = parse_history(
      "tree = 'c'\n[[checkin]]\nweek = 0\nauthor = 'A <a>'\nmessage = 'm'\n[[checkin.edit]]\nfile = 'x'\nreplace = 'a'\n",
      "h.toml");
  REQUIRE_FALSE(bad_edit.ok());
  CHECK(bad_edit.error().message.find("needs exactly one of") != std::string::npos);
  auto syntax = parse_history("tree = \n", "h.toml");
  REQUIRE_FALSE(syntax.ok());
  CHECK(syntax.error().message.rfind("h.toml:1:", 0) == 0);
}

TEST_CASE("a history key of the wrong type is refused, not written as if absent") {
  auto with = [](const std::string& extra) {
    return parse_history("tree = 'c'\n[[checkin]]\nweek = 0\nauthor = 'A <a>'\nmessage = 'm'\n" + extra, "h.toml");
  };
  CHECK(with("hours = '12'\n").error().message == "h.toml:6: hours in [[checkin]] must be a whole number");
  CHECK(with("tag = true\n").error().message == "h.toml:6: tag in [[checkin]] must be a string");
  CHECK(with("branch = 7\n").error().message == "h.toml:6: branch in [[checkin]] must be a string");
  CHECK(with("[[checkin.edit]]\nfile = 'x'\ndelete = 'no'\n").error().message ==
        "h.toml:8: delete in [[checkin.edit]] must be true or false");
  CHECK(with("hours = 12\ntag = 'v2'\n").ok());
}

TEST_CASE("edits replace text that occurs exactly once") {
  FileMap files = {{"a.h", "int x = 1; int y = 2;"}, {"old.txt", "bye"}};
  REQUIRE(apply_edits(files, {{"a.h", std::string("x = 1"), std::string("x = 3"), {}, false},
                              {"new.txt", {}, {}, std::string("hi"), false},
                              {"old.txt", {}, {}, {}, true}})
              .ok());
  CHECK(files["a.h"] == "int x = 3; int y = 2;");
  CHECK(files["new.txt"] == "hi");
  CHECK_FALSE(files.count("old.txt"));

  auto missing = apply_edits(files, {{"a.h", std::string("z = 9"), std::string("z = 1"), {}, false}});
  CHECK(missing.error().message.find("not found") != std::string::npos);
  FileMap twice = {{"b.h", "aa"}};
  auto ambiguous = apply_edits(twice, {{"b.h", std::string("a"), std::string("b"), {}, false}});
  CHECK(ambiguous.error().message.find("more than once") != std::string::npos);
  auto nofile = apply_edits(twice, {{"c.h", {}, {}, {}, true}});
  CHECK(nofile.error().message.find("no such file") != std::string::npos);
}

TEST_CASE("a merge replays the side branch's edits onto the main branch") {
  FileMap ours = {{"a", "x=1 y=1"}, {"c", "1"}};
  std::vector<Edit> side = {{"a", std::string("y=1"), std::string("y=2"), {}, false}, {"c", {}, {}, {}, true}};
  auto merged = merge_by_replay(ours, side);
  REQUIRE(merged.ok());
  CHECK(*merged == FileMap{{"a", "x=1 y=2"}});
  FileMap moved_on = {{"a", "x=1 y=9"}, {"c", "1"}};
  auto conflict = merge_by_replay(moved_on, side);
  REQUIRE_FALSE(conflict.ok());
  CHECK(conflict.error().message.find("merge conflict: edit of a") == 0);
}
