#pragma once
// A scripted compiler history (samples/history.toml): check-ins and their
// file edits, as data. Parsing and applying edits are pure; writing the git
// repository is sample_history.h.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"

namespace tracker {

/// path → content of every file in a tree.
using FileMap = std::map<std::string, std::string>;

struct Edit {
  std::string file;
  std::optional<std::string> replace, with;  ///< exact text, must occur once
  std::optional<std::string> write;          ///< whole new content
  bool remove = false;
};

struct Checkin {
  int week = 0;
  int hours = 0;  ///< offset within the week
  std::string author;  ///< "Name <email>"
  std::string message;
  std::vector<Edit> edits;
  std::optional<std::string> branch;  ///< commit on this side branch instead of the main one
  std::optional<std::string> merge;   ///< merge this side branch into the main one
  std::optional<std::string> tag;
};

struct HistoryScript {
  std::string tree;          ///< folder (relative to the script) imported at the first check-in
  std::string main_branch;   ///< "main"
  std::vector<Checkin> checkins;
};

/// Parses the TOML text; errors name `origin` and the offending key.
common::Result<HistoryScript> parse_history(const std::string& text, const std::string& origin);

/// Applies a check-in's edits to `files`; errors name the file and the edit.
common::Status apply_edits(FileMap& files, const std::vector<Edit>& edits);

/// The tree of a merge: `ours` with the side branch's edits re-applied in
/// order, as a line-level three-way merge gives when the two branches touched
/// different text. An edit that no longer applies is a conflict (an error).
common::Result<FileMap> merge_by_replay(const FileMap& ours, const std::vector<Edit>& branch_edits);

}  // namespace tracker
