#include "common/text.h"

#include <cstdint>
#include <ctime>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace common {

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string tail_lines(std::string_view text, int n) {
  if (n <= 0) return {};
  size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;
  size_t pos = end;
  int lines = 0;
  while (pos > 0) {
    if (text[pos - 1] == '\n' && ++lines == n) break;
    --pos;
  }
  return std::string(text.substr(pos, end - pos));
}

std::string last_line(std::string_view text) {
  auto lines = split(text, '\n');
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    auto t = trim(*it);
    if (!t.empty()) return t;
  }
  return {};
}

std::optional<std::chrono::seconds> parse_duration(std::string_view text) {
  auto t = trim(text);
  if (t.empty()) return std::nullopt;
  long total = 0;
  size_t i = 0;
  while (i < t.size()) {
    long number = 0;
    auto [ptr, ec] = std::from_chars(t.data() + i, t.data() + t.size(), number);
    if (ec != std::errc() || number < 0) return std::nullopt;
    i = ptr - t.data();
    long unit = 1;
    if (i < t.size()) {
      switch (t[i]) {
        case 's': unit = 1; break;
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        case 'd': unit = 86400; break;
        default: return std::nullopt;
      }
      ++i;
    } else {
      // "15" alone could mean seconds or minutes: a recipe's build timeout
      // read as 15 s would time out every build ("1h30" is as ambiguous).
      return std::nullopt;
    }
    // Beyond kMaxDurationSeconds a time point minus it overflows (nanosecond
    // clocks end in 2262): "keep everything" must not wrap to "nothing".
    if (number > (kMaxDurationSeconds - total) / unit) return std::nullopt;
    total += number * unit;
  }
  return std::chrono::seconds(total);
}

std::string utc_for_people(std::string_view iso) {
  // YYYY-MM-DDTHH:MM:SSZ
  if (iso.size() != 20 || iso[10] != 'T' || iso[19] != 'Z') return std::string(iso);
  return std::string(iso.substr(0, 10)) + " " + std::string(iso.substr(11, 8)) + " UTC";
}

std::string iso_utc(std::int64_t seconds) {
  auto t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string iso_utc_now() { return iso_utc(std::time(nullptr)); }

std::string format_seconds(double s) {
  char buf[64];
  if (s < 60) {
    snprintf(buf, sizeof buf, "%.1f s", s);
  } else if (s < 3600) {
    snprintf(buf, sizeof buf, "%d min %d s", int(s) / 60, int(s) % 60);
  } else {
    snprintf(buf, sizeof buf, "%d h %d min", int(s) / 3600, int(s) % 3600 / 60);
  }
  return buf;
}

std::string signed_percent(double fraction) {
  char buf[64];
  snprintf(buf, sizeof buf, "%+.2f%%", 100 * fraction);
  // A tiny negative rounds to "-0.00%", which a reader takes for a loss.
  if (std::string_view(buf) == "-0.00%") return "+0.00%";
  return buf;
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (ok && n > 1) {  // no overlong forms, no surrogates, nothing past U+10FFFF
      std::uint32_t cp = c & (0xff >> (n + 1));
      for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
      static const std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[n] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
    }
    if (ok && c == 0) ok = false;  // PostgreSQL text holds no NUL either
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

namespace {
bool control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }
}  // namespace

std::string first_line(std::string_view text, std::size_t max) {
  std::string line;
  // Printable first: a line of escape sequences alone is blank too.
  for (std::size_t at = 0; at <= text.size() && line.empty();) {
    auto end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    line = trim(printable(text.substr(at, end - at)));
    at = end + 1;
  }
  if (line.size() <= max) return line;
  if (max < 3) return line.substr(0, max);
  // Valid UTF-8 already: cut back to the start of a character.
  std::size_t n = max - 3;
  while (n > 0 && (static_cast<unsigned char>(line[n]) & 0xC0) == 0x80) --n;
  return line.substr(0, n) + "...";
}

std::string printable(std::string_view text) {
  std::string out, s = valid_utf8(text);
  for (char c : s) out += control(c) ? ' ' : c;
  return out;
}

bool has_control_characters(std::string_view s) { return std::any_of(s.begin(), s.end(), control); }

bool is_directory_name(std::string_view s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string_view::npos && !has_control_characters(s);
}

std::string quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\0') {
      out += "\\0";
    } else if (u < 0x20 || u == 0x7f) {
      const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string shell_quote(std::string_view s) {
  auto literal = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_-./:=@%+,").find(c) != std::string_view::npos;
  };
  if (!s.empty() && std::all_of(s.begin(), s.end(), literal)) return std::string(s);
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool says_out_of_memory(std::string_view line) {
  for (const char* m : kOutOfMemoryPhrases)
    if (line.find(m) != std::string_view::npos) return true;
  return false;
}

std::optional<std::string> machine_failure_line(std::string_view output) {
  // Besides memory (says_out_of_memory): the disk, processes, files.
  static const char* const kMachine[] = {"No space left on device", "Disk quota exceeded", "Read-only file system",
                                         "Input/output error", "Resource temporarily unavailable",
                                         "Too many open files"};
  for (const auto& line : split(output, '\n')) {
    if (line.rfind("$ ", 0) == 0) continue;  // driftwatch's own echo of a command
    if (says_out_of_memory(line)) return trim(line);
    for (const char* m : kMachine)
      if (line.find(m) != std::string::npos) return trim(line);
  }
  return std::nullopt;
}

}  // namespace common
