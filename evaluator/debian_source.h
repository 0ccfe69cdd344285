#pragma once
// Debian source packages through a private apt configuration: deb-src entries
// for the same mirrors and suites as the system's, with our own lists and
// cache under the data directory, passed to apt-get with -o options. The
// system's apt configuration is never touched.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"

namespace evaluator {

/// One apt sources file of the system: its name decides the format
/// (".sources" is deb822, anything else the one-line format).
struct AptSourcesFile {
  std::string name;
  std::string text;
};

struct PrivateSources {
  std::string deb822;   ///< "Types: deb-src" stanzas for our own sources.list.d
  std::string release;  ///< the release suite (e.g. "bookworm"), for `apt-get source -t`
};

/// The system's "deb" entries as deb-src stanzas (pure). Disabled stanzas are
/// skipped; an inline Signed-By key is carried over verbatim.
common::Result<PrivateSources> deb_src_entries(const std::vector<AptSourcesFile>& files);

struct FetchedSource {
  std::string version;               ///< the Debian version from the .dsc
  std::filesystem::path source_dir;  ///< the unpacked tree, Debian's patches applied
};

class DebianSources {
 public:
  /// `root` is <data>/sources; the apt state lives in <root>/apt.
  explicit DebianSources(std::filesystem::path root, std::function<void(const std::string&)> progress = {});
  /// Checks the tools, writes the private configuration, runs apt-get update when the
  /// lists are missing or the configuration changed.
  common::Status prepare();
  /// `apt-get source PKG` into `dest` (empty or missing); prepares first if needed. Falls back to the release's
  /// version when the newest one cannot be downloaded (a security mirror without sources).
  common::Result<FetchedSource> fetch(const std::string& package, const std::filesystem::path& dest);
  /// The -o options that point apt at the private configuration.
  std::vector<std::string> apt_options() const;

 private:
  common::Status update();
  std::filesystem::path root_, apt_;
  std::string release_;
  bool prepared_ = false, updated_ = false;
  std::function<void(const std::string&)> progress_;
};

/// True when `program` is found on PATH.
bool on_path(const std::string& program);

}  // namespace evaluator
