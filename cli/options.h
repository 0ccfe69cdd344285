#pragma once
// Options shared by the commands that walk a range of check-ins.
#include <string>

#include "tracker/selection.h"

namespace CLI {
class App;
}

namespace cli {

struct RangeArgs {
  std::string repo;
  std::string branch;
  std::string since, until, from, to, every;
  bool tags = false;

  /// Registers --repo --branch --since --until --from --to --every --tags.
  void attach(CLI::App& sub);
  /// Throws common::Fatal naming a bad date or --every.
  tracker::RangeOptions options() const;
};

}  // namespace cli
