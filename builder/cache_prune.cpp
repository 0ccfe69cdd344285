#include "builder/cache_prune.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "builder/generations.h"

namespace builder {
namespace fs = std::filesystem;

std::vector<std::size_t> entries_to_prune(const std::vector<CacheEntry>& entries, const PruneLimits& limits,
                                          std::int64_t now) {
  std::vector<std::size_t> order(entries.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Newest first: those are kept while they fit.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return entries[a].built_at > entries[b].built_at; });
  std::vector<std::size_t> out;
  std::uintmax_t kept = 0;
  for (auto i : order) {
    const auto& e = entries[i];
    bool too_old = limits.max_age && now - e.built_at > *limits.max_age;
    bool too_big = limits.max_bytes && kept + e.bytes > *limits.max_bytes;
    if (too_old || too_big) out.push_back(i);
    else kept += e.bytes;
  }
  std::sort(out.begin(), out.end());
  return out;
}

common::Result<std::uintmax_t> parse_size(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string unit = text.substr(digits);
  if (digits == 0 || digits > 15 || unit.size() > 1)
    return common::Error{"'" + text + "' is not a size (a whole number, optionally followed by K, M, G or T)"};
  std::uintmax_t n = std::stoull(text.substr(0, digits));
  const std::string units = "KMGT";
  if (unit.empty()) return n;
  auto at = units.find(static_cast<char>(std::toupper(static_cast<unsigned char>(unit[0]))));
  if (at == std::string::npos)
    return common::Error{"'" + text + "' is not a size (a whole number, optionally followed by K, M, G or T)"};
  for (std::size_t i = 0; i <= at; ++i) {
    // Wrapped round, "keep everything" would become a tiny limit that removes it all.
    if (n > kMaxSize / 1024) return common::Error{"'" + text + "' is too large (at most 1048576T)"};
    n *= 1024;
  }
  return n;
}

namespace {

std::uintmax_t bytes_under(const fs::path& dir) {
  std::error_code ec;
  std::uintmax_t n = 0;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) n += it->file_size(ec);
  return n;
}

/// When the generation's build finished: as its result.json says, else (an
/// entry written before it said so) the generation's mtime; 0 if neither.
double built_at(const fs::path& generation) {
  std::ifstream in(generation / "result.json");
  auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("built_at") && j["built_at"].is_number()) return j["built_at"].get<double>();
  std::error_code ec;
  auto t = fs::last_write_time(generation, ec);
  return ec ? 0 : std::chrono::duration<double>(std::chrono::file_clock::to_sys(t).time_since_epoch()).count();
}

}  // namespace

std::vector<CacheEntry> list_cache(const fs::path& data_dir) {
  std::vector<CacheEntry> out;
  std::error_code ec;
  for (const auto& recipe_dir : fs::directory_iterator(data_dir / "cache", ec)) {
    if (!recipe_dir.is_directory(ec)) continue;
    std::vector<fs::path> names;
    for (const auto& e : fs::directory_iterator(recipe_dir.path(), ec)) names.push_back(e.path());
    for (const auto& path : names) {
      auto name = path.filename().string();
      if (name.find('.') != std::string::npos) continue;  // a generation or a link being published
      auto gen = current_generation(path);
      if (!gen || !fs::exists(*gen / "result.json", ec)) continue;
      CacheEntry c;
      c.entry = path;
      // The entry's generations: the current one and any a reader still holds.
      for (const auto& other : names)
        if (other.filename().string().rfind(name + ".gen-", 0) == 0) c.bytes += bytes_under(other);
      if (*gen == path) c.bytes += bytes_under(path);
      c.built_at = built_at(*gen);
      out.push_back(std::move(c));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return std::tie(a.built_at, a.entry) < std::tie(b.built_at, b.entry); });
  return out;
}

namespace {

constexpr std::chrono::hours kUnfinishedAfter{24};

/// The generation or its log changed within `age`.
bool touched_within(const fs::path& generation, std::chrono::hours age) {
  auto now = fs::file_time_type::clock::now();
  std::error_code ec;
  for (const auto& p : {generation, generation / "build.log"}) {
    auto t = fs::last_write_time(p, ec);
    if (!ec && now - t < age) return true;
  }
  return false;
}

/// Generations under `recipe_dir` whose entry names none: `<sha>.gen-*`
/// beside no `<sha>` (unpublished builds), with their bytes.
void count_unfinished(const fs::path& recipe_dir, bool dry_run, PruneOutcome& out) {
  std::error_code ec;
  std::vector<fs::path> names;
  for (const auto& e : fs::directory_iterator(recipe_dir, ec)) names.push_back(e.path());
  for (const auto& gen : names) {
    auto name = gen.filename().string();
    auto at = name.find(".gen-");
    if (at == std::string::npos || !fs::is_directory(fs::symlink_status(gen, ec))) continue;
    auto entry = recipe_dir / name.substr(0, at);
    if (current_generation(entry)) continue;  // the entry's, listed with it (or being published)
    if (generation_in_use(gen)) continue;  // a build in progress
    // Another machine's build in progress on a shared data directory holds
    // a lock NFS does not show here: only one untouched for a day is taken
    // for unfinished (a build that takes longer writes its log meanwhile).
    if (touched_within(gen, kUnfinishedAfter)) continue;
    auto bytes = bytes_under(gen);
    if (!dry_run) collect_generations(entry);  // which checks the lock again, as it removes
    if (!dry_run && fs::exists(gen, ec)) {
      if (!generation_in_use(gen)) out.failures.push_back("cannot remove the unfinished build " + gen.string());
      continue;
    }
    ++out.unfinished;
    out.unfinished_bytes += bytes;
  }
}

bool entry_in_use(const fs::path& entry) {
  auto gen = current_generation(entry);
  return gen && generation_in_use(*gen);
}

}  // namespace

common::Result<PruneOutcome> prune_cache(const fs::path& data_dir, const PruneLimits& limits, bool dry_run) {
  std::error_code ec;
  std::vector<fs::path> recipe_dirs;
  for (const auto& d : fs::directory_iterator(data_dir / "cache", ec))
    if (d.is_directory(ec)) recipe_dirs.push_back(d.path());
  if (ec)
    return common::Error{"cannot read the build cache " + (data_dir / "cache").string() + ": " + ec.message() +
                         " (is this the data directory the builds use?)"};
  auto entries = list_cache(data_dir);
  auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                 .count();
  auto chosen = entries_to_prune(entries, limits, now);
  PruneOutcome out;
  std::vector<bool> prune(entries.size(), false);
  for (auto i : chosen) prune[i] = true;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& e = entries[i];
    common::Result<bool> removed = false;
    // A dry run tells what the real one would do: an entry in use is kept.
    if (prune[i]) removed = dry_run ? common::Result<bool>(!entry_in_use(e.entry)) : remove_entry(e.entry);
    if (removed && *removed) {
      ++out.removed;
      out.freed += e.bytes;
      out.removed_entries.push_back(e);
      continue;
    }
    if (!removed) out.failures.push_back(removed.error().message);
    else if (prune[i]) ++out.in_use;
    ++out.kept;
    out.kept_bytes += e.bytes;
  }
  for (const auto& dir : recipe_dirs) count_unfinished(dir, dry_run, out);
  return out;
}

}  // namespace builder
