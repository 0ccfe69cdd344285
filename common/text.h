#pragma once
// Small text helpers shared by every part.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace common {

std::string trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);
/// The last `n` lines of `text` (the tail of a build log, say).
std::string tail_lines(std::string_view text, int n);
/// The last non-empty line: libraries' multi-line messages become one line.
std::string last_line(std::string_view text);
/// The longest duration parse_duration takes: 100 years.
inline constexpr long kMaxDurationSeconds = 36525L * 86400;
/// "90s", "20m", "2h", "1h30m", "30d", at most kMaxDurationSeconds; a
/// number without its unit is refused.
std::optional<std::chrono::seconds> parse_duration(std::string_view text);
/// Seconds since the epoch as "2026-01-31T12:00:00Z": every time driftwatch
/// writes in JSON, a policy file or the database's answers.
std::string iso_utc(std::int64_t seconds);
/// The present moment as iso_utc() writes it.
std::string iso_utc_now();
/// An iso_utc() time as people read it, "2026-01-31 12:00:00 UTC"; any other
/// text unchanged.
std::string utc_for_people(std::string_view iso);
/// Seconds as "1.2 s", "3 min 4 s", "1 h 2 min".
std::string format_seconds(double seconds);
/// A fraction as a signed percentage with two decimals: 0.0123 -> "+1.23%".
std::string signed_percent(double fraction);
/// The line of a tool's output (a build step, a compiler) that shows the
/// machine failed it rather than the code: a full disk or quota, a read-only
/// or failing disk, memory, processes or files exhausted. nullopt when none
/// does. Such a failure says nothing about the check-in and is not kept as
/// its result.
std::optional<std::string> machine_failure_line(std::string_view output);
/// Whether a line (or a one-line error) says memory ran out: the machine's
/// doing under load, or a compiler input that asks for too much (a policy
/// that inlines without end): ambiguous, unlike a full disk.
bool says_out_of_memory(std::string_view line);
/// The phrases says_out_of_memory looks for.
inline constexpr const char* kOutOfMemoryPhrases[] = {"Cannot allocate memory", "virtual memory exhausted",
                                                      "LLVM ERROR: out of memory", "out of memory allocating",
                                                      "instance of 'std::bad_alloc'"};
/// `s` with every invalid UTF-8 sequence replaced by U+FFFD, so text from
/// git (any bytes) can be stored in PostgreSQL, which refuses invalid UTF-8.
std::string valid_utf8(std::string_view s);
/// Someone else's text (a commit subject, an author, a note) for a terminal:
/// valid UTF-8 on one line, control characters (escapes, newlines) replaced by spaces.
std::string printable(std::string_view s);
/// An error or a log for one line of a table or a report: its first line
/// that is not blank, printable(), cut to at most `max` bytes ("..." at the
/// end) without splitting a character.
std::string first_line(std::string_view s, std::size_t max = 200);
/// Whether `s` holds a control character (an escape, a newline) that
/// printable() would have to replace.
bool has_control_characters(std::string_view s);
/// Whether `s` may name one directory: not empty, ".", "..", nor holding a
/// '/' or a control character. Names from project files and recipes become
/// directories (the compile cache, worktrees, logs).
bool is_directory_name(std::string_view s);
/// `s` in single quotes with control characters escaped (\n, \0, \x1f), so a
/// hostile name still makes a one-line message.
std::string quoted(std::string_view s);
/// `s` as one word for /bin/sh: unchanged when it holds only characters the
/// shell takes literally, else in single quotes (a quote inside as '\'').
std::string shell_quote(std::string_view s);

}  // namespace common
