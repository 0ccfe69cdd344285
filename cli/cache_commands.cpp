// driftwatch cache prune
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>

#include "builder/cache_prune.h"
#include "cli/commands.h"
#include "common/text.h"

namespace cli {
namespace {

struct PruneArgs {
  std::string max_size, older_than;
  bool dry_run = false;
};

std::string size_text(std::uintmax_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

/// Whether `text` is a bare number: in a command that deletes, "30" as 30
/// seconds (or 50 as 50 bytes) would remove nearly the whole cache.
bool without_unit(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

void prune(Context& ctx, const PruneArgs& a) {
  builder::PruneLimits limits;
  if (without_unit(a.max_size))
    throw common::Fatal("--max-size " + a.max_size + " has no unit: write " + a.max_size +
                        "G, say (K, M, G or T); nothing was removed");
  if (without_unit(a.older_than))
    throw common::Fatal("--older-than " + a.older_than + " has no unit: write " + a.older_than +
                        "d, say (d, h, m or s); nothing was removed");
  if (!a.max_size.empty()) {
    auto size = builder::parse_size(a.max_size);
    if (!size) throw common::Fatal("--max-size " + size.error().message);
    limits.max_bytes = *size;
  }
  if (!a.older_than.empty()) {
    auto age = common::parse_duration(a.older_than);
    if (!age) throw common::Fatal("--older-than '" + a.older_than + "' is not a duration (e.g. 30d, 12h; at most 36525d)");
    limits.max_age = age->count();
  }
  if (!limits.max_bytes && !limits.max_age)
    throw common::Fatal("cache prune: give --max-size or --older-than (or both); nothing was removed");
  auto out = builder::prune_cache(ctx.data_dir(), limits, a.dry_run).take();
  if (a.dry_run)
    for (const auto& e : out.removed_entries)
      fmt::print("would remove {}/{} ({}, built {})\n", e.entry.parent_path().filename().string(),
                 e.entry.filename().string(), size_text(e.bytes),
                 common::utc_for_people(common::iso_utc(static_cast<std::int64_t>(e.built_at))));
  fmt::print("{} {} cached build(s), {}{}; kept {} ({}){}\n", a.dry_run ? "would remove" : "removed", out.removed,
             size_text(out.freed),
             out.unfinished > 0
                 ? fmt::format(", and {} unfinished build(s), {}", out.unfinished, size_text(out.unfinished_bytes))
                 : "",
             out.kept, size_text(out.kept_bytes), out.in_use > 0 ? fmt::format("; {} in use left alone", out.in_use) : "");
  // The disk was not freed as asked: a cron job must not take it for done.
  for (const auto& failure : out.failures) fmt::print(stderr, "driftwatch: cache prune: {}\n", failure);
  if (!out.failures.empty()) ctx.exit_code = 2;
}

}  // namespace

void attach_cache(CLI::App& sub, Context& ctx) {
  require_one_subcommand(sub);
  auto a = std::make_shared<PruneArgs>();
  auto* p = sub.add_subcommand("prune", "remove the oldest cached compiler builds (a later build runs them again)");
  p->add_option("--max-size", a->max_size, "keep the newest builds that fit, e.g. 50G");
  p->add_option("--older-than", a->older_than, "remove builds made longer ago, e.g. 30d");
  p->add_flag("--dry-run", a->dry_run, "say what would be removed, remove nothing");
  p->callback([&ctx, a] { prune(ctx, *a); });
}

}  // namespace cli
