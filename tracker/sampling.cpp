#include "tracker/sampling.h"

#include <cctype>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <map>

namespace tracker {
namespace {

using namespace std::chrono;

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// Period number of a time: days since the epoch, ISO weeks, or months since 1970-01.
std::int64_t period_of(std::int64_t time, PeriodUnit unit, int count) {
  auto day = floor<days>(sys_seconds(seconds(time)));
  std::int64_t n = 0;
  switch (unit) {
    case PeriodUnit::Day:
      n = day.time_since_epoch().count();
      break;
    case PeriodUnit::Week:
      // 1970-01-01 was a Thursday: shift so weeks start on Monday.
      n = floor_div(day.time_since_epoch().count() + 3, 7);
      break;
    case PeriodUnit::Month: {
      year_month_day ymd{day};
      n = (static_cast<int>(ymd.year()) - 1970) * 12 + (static_cast<unsigned>(ymd.month()) - 1);
      break;
    }
  }
  return floor_div(n, count);
}

}  // namespace

common::Result<Every> parse_every(std::string_view text) {
  Every e;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), e.count);
  if (ec != std::errc() || e.count < 1)
    return common::Error{"--every takes N, Nd, Nw or Nm with N ≥ 1, not '" + std::string(text) + "'"};
  std::string_view rest(ptr, text.data() + text.size() - ptr);
  if (rest.empty()) return e;
  if (rest == "d") e.unit = PeriodUnit::Day;
  else if (rest == "w") e.unit = PeriodUnit::Week;
  else if (rest == "m") e.unit = PeriodUnit::Month;
  else return common::Error{"--every takes N, Nd, Nw or Nm with N ≥ 1, not '" + std::string(text) + "'"};
  return e;
}

std::vector<size_t> sample(const std::vector<CommitInfo>& history, const SamplingRule& rule) {
  std::set<size_t> picked;
  if (!history.empty()) {
    if (!rule.every && !rule.tags) {
      for (size_t i = 0; i < history.size(); ++i) picked.insert(i);
    } else if (rule.every && !rule.every->unit) {
      for (size_t i = 0; i < history.size(); i += rule.every->count) picked.insert(i);
      if (!rule.open_end) picked.insert(history.size() - 1);
    } else if (rule.every) {
      std::map<std::int64_t, size_t> last_of_period;  // later entries overwrite earlier ones
      for (size_t i = 0; i < history.size(); ++i)
        last_of_period[period_of(history[i].time, *rule.every->unit, rule.every->count)] = i;
      // The newest check-in's period goes on (by its date: one earlier commit
      // dated in the future must not make the newest count as finished)
      // until the clock has left it.
      auto newest = period_of(history.back().time, *rule.every->unit, rule.every->count);
      bool over = rule.now && period_of(*rule.now, *rule.every->unit, rule.every->count) > newest;
      if (rule.open_end && !over) last_of_period.erase(newest);
      // Nor is the clock's own period over, whatever the newest's date says:
      // a newest check-in dated back (a rebase kept its date) must not close
      // the week its parent is in, mid-week.
      if (rule.open_end && rule.now) last_of_period.erase(period_of(*rule.now, *rule.every->unit, rule.every->count));
      for (const auto& [period, i] : last_of_period) picked.insert(i);
    }
    if (rule.tags)
      for (size_t i = 0; i < history.size(); ++i)
        if (!history[i].tags.empty()) picked.insert(i);
  }
  std::vector<size_t> out;
  for (size_t i : picked)
    if (!rule.skip.count(history[i].sha)) out.push_back(i);
  return out;
}

common::Result<std::int64_t> parse_date(std::string_view text) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  std::string t(text);
  int n = std::sscanf(t.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &s);
  // Every character where the pattern wants it: sscanf alone takes
  // "2026-03-1x" for the 1st and "T-5:00:00" for a negative hour.
  auto matches = [&](std::string_view pattern) {
    if (t.size() < pattern.size()) return false;
    for (std::size_t i = 0; i < pattern.size(); ++i)
      if (pattern[i] == '9' ? !std::isdigit(static_cast<unsigned char>(t[i])) : t[i] != pattern[i]) return false;
    return true;
  };
  bool shape_ok = (n == 3 && t.size() == 10 && matches("9999-99-99")) ||
                  (n == 6 && (t.size() == 19 || (t.size() == 20 && t.back() == 'Z')) &&
                   matches("9999-99-99T99:99:99"));
  year_month_day ymd{year(y), month(mo), day(d)};
  if (!shape_ok || !ymd.ok() || h > 23 || mi > 59 || s > 60)
    return common::Error{"invalid date '" + t + "' (expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS, UTC)"};
  auto tp = sys_days(ymd) + hours(h) + minutes(mi) + seconds(s);
  return static_cast<std::int64_t>(tp.time_since_epoch().count());
}

std::string format_date(std::int64_t time) {
  year_month_day ymd{floor<days>(sys_seconds(seconds(time)))};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()));
  return buf;
}

}  // namespace tracker
