#include <doctest/doctest.h>

#include "common/shared_libraries.h"
#include "common/text.h"

using namespace common;

TEST_CASE("trim and split") {
  CHECK(trim("  a b \n") == "a b");
  CHECK(trim("") == "");
  CHECK(split("a,b,,c", ',') == std::vector<std::string>{"a", "b", "", "c"});
}

TEST_CASE("tail_lines keeps the last n lines") {
  CHECK(tail_lines("1\n2\n3\n4\n", 2) == "3\n4");
  CHECK(tail_lines("1\n2", 5) == "1\n2");
  CHECK(tail_lines("x", 0) == "");
}

TEST_CASE("last_line skips trailing blank lines") {
  CHECK(last_line("first\nsecond\n\n  \n") == "second");
  CHECK(last_line("") == "");
}

TEST_CASE("parse_duration") {
  CHECK(parse_duration("90s")->count() == 90);
  CHECK_FALSE(parse_duration("90").has_value());  // seconds or minutes? refused, never guessed
  CHECK(parse_duration("20m")->count() == 1200);
  CHECK(parse_duration("1h30m")->count() == 5400);
  CHECK(parse_duration("2d")->count() == 172800);
  CHECK_FALSE(parse_duration("").has_value());
  CHECK_FALSE(parse_duration("ten").has_value());
  CHECK_FALSE(parse_duration("5x").has_value());
  CHECK_FALSE(parse_duration("1h30").has_value());
  // Out of range is refused, never wrapped round to a short one.
  CHECK(parse_duration("36525d")->count() == kMaxDurationSeconds);
  CHECK_FALSE(parse_duration("36526d").has_value());
  CHECK_FALSE(parse_duration("200000000000000d").has_value());
  CHECK_FALSE(parse_duration("36525d1s").has_value());
}

TEST_CASE("format_seconds") {
  CHECK(format_seconds(1.25) == "1.2 s");
  CHECK(format_seconds(125) == "2 min 5 s");
  CHECK(format_seconds(3725) == "1 h 2 min");
}

TEST_CASE("shell_quote leaves plain words alone and quotes the rest as one word") {
  CHECK(shell_quote("/w/build-1/x.y") == "/w/build-1/x.y");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("$(touch x)") == "'$(touch x)'");
  CHECK(shell_quote("`x`;y&z|w>v\\n*") == "'`x`;y&z|w>v\\n*'");
}

TEST_CASE("text from git becomes valid UTF-8 for PostgreSQL, keeping what was valid") {
  CHECK(common::valid_utf8("plain <b>&\"quotes\"</b>") == "plain <b>&\"quotes\"</b>");
  CHECK(common::valid_utf8("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x90\x9b") == "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x90\x9b");
  CHECK(common::valid_utf8("bad \xff byte") == "bad \xef\xbf\xbd byte");
  CHECK(common::valid_utf8("cut \xe2\x86") == "cut \xef\xbf\xbd\xef\xbf\xbd");
  CHECK(common::valid_utf8("overlong \xc0\xaf") == "overlong \xef\xbf\xbd\xef\xbf\xbd");
  CHECK(common::valid_utf8("surrogate \xed\xa0\x80") == "surrogate \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  CHECK(common::valid_utf8(std::string("nul \0 byte", 10)) == "nul \xef\xbf\xbd byte");
}

TEST_CASE("someone else's text is printed on one line without control characters") {
  CHECK(common::printable("subject\nsecond line\r\x1b[31mred") == "subject second line  [31mred");
  CHECK(common::printable("tab\there") == "tab here");
  CHECK(common::printable("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(common::printable("bad \xfe") == "bad \xef\xbf\xbd");
}

TEST_CASE("ldd's listing: each library with where the loader found it, the vDSO left out") {
  auto libs = common::parse_ldd_listing(
      "\tlinux-vdso.so.1 (0x00007ffd3b1f2000)\n"
      "\tlibLLVM.so.19.1 => /usr/lib/llvm-19/lib/libLLVM.so.19.1 (0x00007f3535800000)\n"
      "\tlibmissing.so.2 => not found\n"
      "\t/lib64/ld-linux-x86-64.so.2 (0x00007f2039d4c000)\n");
  REQUIRE(libs.size() == 3);
  CHECK(libs[0].name == "libLLVM.so.19.1");
  CHECK(libs[0].path == "/usr/lib/llvm-19/lib/libLLVM.so.19.1");
  CHECK(libs[1].name == "libmissing.so.2");
  CHECK(libs[1].path.empty());
  CHECK(libs[2].name == "ld-linux-x86-64.so.2");
  CHECK(libs[2].path == "/lib64/ld-linux-x86-64.so.2");
  CHECK(common::parse_ldd_listing("\tstatically linked\n").empty());
  // Older glibc's vDSO, and a loader's error message that starts with a path.
  CHECK(common::parse_ldd_listing("\tlinux-vdso.so.1 =>  (0x00007ffd3b1f2000)\n"
                                  "/x/dwcc: /lib/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by /x/dwcc)\n")
            .empty());
}

TEST_CASE("utc_for_people reads an ISO 8601 UTC time and leaves other text alone") {
  CHECK(common::utc_for_people(common::iso_utc(0)) == "1970-01-01 00:00:00 UTC");
  CHECK(common::utc_for_people("2026-12-06T01:02:03Z") == "2026-12-06 01:02:03 UTC");
  CHECK(common::utc_for_people("2026-12-06") == "2026-12-06");
  CHECK(common::utc_for_people("2026-12-06 01:02:03+01") == "2026-12-06 01:02:03+01");
  CHECK(common::utc_for_people("") == "");
}

TEST_CASE("signed_percent: two decimals with a sign, and no negative zero") {
  CHECK(common::signed_percent(0.0123) == "+1.23%");
  CHECK(common::signed_percent(-0.0123) == "-1.23%");
  CHECK(common::signed_percent(0.0) == "+0.00%");
  // Losses too small to show are no loss: "-0.00%" would read as one.
  CHECK(common::signed_percent(-0.00001) == "+0.00%");
  CHECK(common::signed_percent(-0.0) == "+0.00%");
  CHECK(common::signed_percent(-0.00005) == "-0.01%");
}

TEST_CASE("first_line: an error's first line that says something, on one line, cut at a character") {
  CHECK(common::first_line("\n  \r\n\x1b\x07\nLLVM ERROR: out of memory\r\nmore") == "LLVM ERROR: out of memory");
  CHECK(common::first_line("") == "");
  CHECK(common::first_line("\n \n") == "");
  CHECK(common::first_line("abcdef", 5) == "ab...");
  CHECK(common::first_line("abcdef", 2) == "ab");
  // "é" is two bytes: a cut inside it backs up to its start, never half of it.
  std::string accents;
  for (int i = 0; i < 10; ++i) accents += "\xc3\xa9";
  auto cut = common::first_line(accents, 8);  // room for 5 bytes: two "é" and "..."
  CHECK(cut == "\xc3\xa9\xc3\xa9...");
  CHECK(cut.size() <= 8);
}
