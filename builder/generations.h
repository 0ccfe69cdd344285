#pragma once
// Cache entries as generations, so a rebuild never removes a compiler in use.
// `<entry>` (what cache_entry_dir() names) is a symlink to a sibling
// directory `<entry>.gen-XXXXXX` holding result.json, the log and the
// artifacts. A build fills a new generation, held exclusively, and publishes
// it by renaming a new symlink over `<entry>` (atomic); readers that run the
// compiler pin the generation they resolved with a shared flock on its
// directory and use its paths. A generation neither current nor locked is
// removed by the next publish or unpin of that entry. Entries made before
// generations (plain directories) are read as they are and replaced the same way.
#include <filesystem>
#include <memory>
#include <optional>

#include "builder/build.h"
#include "common/result.h"

namespace builder {

/// A generation directory held under a flock: shared for a reader, exclusive
/// while a build fills it. Releasing a reader's pin collects its entry's
/// stale generations.
class CachePin {
 public:
  CachePin(const CachePin&) = delete;
  CachePin& operator=(const CachePin&) = delete;
  ~CachePin();
  const std::filesystem::path& dir() const { return dir_; }

 private:
  friend common::Result<std::shared_ptr<CachePin>> pin_entry(const std::filesystem::path& entry);
  friend common::Result<std::shared_ptr<CachePin>> new_generation(const std::filesystem::path& entry);
  CachePin(std::filesystem::path entry, std::filesystem::path dir, int fd, bool collect)
      : entry_(std::move(entry)), dir_(std::move(dir)), fd_(fd), collect_(collect) {}
  std::filesystem::path entry_, dir_;
  int fd_ = -1;
  bool collect_ = false;
};

/// The generation `entry` names now, share-locked until the pin is released.
common::Result<std::shared_ptr<CachePin>> pin_entry(const std::filesystem::path& entry);

/// A fresh, empty generation directory beside `entry`, locked exclusively.
common::Result<std::shared_ptr<CachePin>> new_generation(const std::filesystem::path& entry);

/// Makes `entry` name `generation` (one rename), then collects the entry's
/// generations nobody holds.
common::Status publish_generation(const std::filesystem::path& entry, const std::filesystem::path& generation);

/// A reader or a build holds `generation`'s lock now (on this machine: NFS
/// does not show another's).
bool generation_in_use(const std::filesystem::path& generation);

/// Removes `entry`'s generations that are neither current nor locked.
void collect_generations(const std::filesystem::path& entry);

/// The generation `entry` names, `entry` itself for an entry made before
/// generations, nullopt when there is none.
std::optional<std::filesystem::path> current_generation(const std::filesystem::path& entry);

/// Unpublishes `entry` and removes its current generation, unless a reader or
/// a build holds it (`cache prune`): true when removed, false when in use, an
/// error naming the file when the removal failed (the entry may then be gone
/// from the cache while its files stay: the disk is not freed).
common::Result<bool> remove_entry(const std::filesystem::path& entry);

/// `r` (a result read through `entry`) with its artifacts and compile command
/// in `generation`, so what runs does not move when `entry` is republished.
BuildResult in_generation(BuildResult r, const std::filesystem::path& generation);

}  // namespace builder
