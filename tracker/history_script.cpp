#include "tracker/history_script.h"

#include <toml++/toml.h>

#include <map>
#include <set>

namespace tracker {
namespace {

using common::Error;

std::string where(const std::string& origin, const toml::node& n) {
  const auto& src = n.source();
  return origin + ":" + std::to_string(src.begin.line);
}

/// Each key of `t` of the type `types` gives it: a wrong one (`hours = "12"`,
/// `tag = true`) would otherwise be read as absent, and the history written
/// without it.
common::Status check_types(const toml::table& t, const std::map<std::string, toml::node_type>& types,
                           const std::string& table, const std::string& origin) {
  for (const auto& [k, v] : t) {
    auto it = types.find(std::string(k.str()));
    if (it == types.end() || v.type() == it->second) continue;
    const char* what = it->second == toml::node_type::integer   ? "a whole number"
                       : it->second == toml::node_type::boolean ? "true or false"
                       : it->second == toml::node_type::array   ? "a list of tables"
                                                                : "a string";
    return Error{where(origin, v) + ": " + std::string(k.str()) + " in " + table + " must be " + what};
  }
  return common::Ok{};
}

common::Result<Edit> parse_edit(const toml::table& t, const std::string& origin) {
  static const std::set<std::string> known = {"file", "replace", "with", "write", "delete"};
  for (const auto& [k, v] : t)
    if (!known.count(std::string(k.str())))
      return Error{where(origin, v) + ": unknown key '" + std::string(k.str()) + "' in [[checkin.edit]]"};
  using T = toml::node_type;
  if (auto s = check_types(t,
                           {{"file", T::string},
                            {"replace", T::string},
                            {"with", T::string},
                            {"write", T::string},
                            {"delete", T::boolean}},
                           "[[checkin.edit]]", origin);
      !s)
    return s.error();
  Edit e;
  auto file = t["file"].value<std::string>();
  if (!file || file->empty()) return Error{where(origin, t) + ": [[checkin.edit]] needs file = \"path\""};
  e.file = *file;
  e.replace = t["replace"].value<std::string>();
  e.with = t["with"].value<std::string>();
  e.write = t["write"].value<std::string>();
  e.remove = t["delete"].value_or(false);
  int kinds = (e.replace ? 1 : 0) + (e.write ? 1 : 0) + (e.remove ? 1 : 0);
  if (kinds != 1 || e.replace.has_value() != e.with.has_value())
    return Error{where(origin, t) + ": edit of " + e.file + " needs exactly one of replace+with, write, delete"};
  return e;
}

common::Result<Checkin> parse_checkin(const toml::table& t, const std::string& origin) {
  static const std::set<std::string> known = {"week", "hours", "author", "message", "edit", "branch", "merge", "tag"};
  for (const auto& [k, v] : t)
    if (!known.count(std::string(k.str())))
      return Error{where(origin, v) + ": unknown key '" + std::string(k.str()) + "' in [[checkin]]"};
  using T = toml::node_type;
  if (auto s = check_types(t,
                           {{"week", T::integer},
                            {"hours", T::integer},
                            {"author", T::string},
                            {"message", T::string},
                            {"branch", T::string},
                            {"merge", T::string},
                            {"tag", T::string},
                            {"edit", T::array}},
                           "[[checkin]]", origin);
      !s)
    return s.error();
  Checkin c;
  auto week = t["week"].value<int64_t>();
  if (!week || *week < 0) return Error{where(origin, t) + ": [[checkin]] needs week = N (N ≥ 0)"};
  c.week = static_cast<int>(*week);
  c.hours = static_cast<int>(t["hours"].value_or<int64_t>(0));
  c.author = t["author"].value_or<std::string>("");
  c.message = t["message"].value_or<std::string>("");
  if (c.author.find('<') == std::string::npos || c.message.empty())
    return Error{where(origin, t) + ": [[checkin]] of week " + std::to_string(c.week) +
                 " needs author = \"Name <email>\" and a message"};
  c.branch = t["branch"].value<std::string>();
  c.merge = t["merge"].value<std::string>();
  c.tag = t["tag"].value<std::string>();
  if (c.branch && c.merge) return Error{where(origin, t) + ": a check-in cannot both be on a branch and merge one"};
  if (const auto* edits = t["edit"].as_array()) {
    for (const auto& e : *edits) {
      const auto* et = e.as_table();
      if (!et) return Error{where(origin, e) + ": edit must be a table ([[checkin.edit]])"};
      auto edit = parse_edit(*et, origin);
      if (!edit) return edit.error();
      c.edits.push_back(std::move(*edit));
    }
  }
  return c;
}

}  // namespace

common::Result<HistoryScript> parse_history(const std::string& text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    return Error{origin + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description())};
  }
  static const std::set<std::string> known = {"tree", "branch", "checkin"};
  for (const auto& [k, v] : root)
    if (!known.count(std::string(k.str())))
      return Error{where(origin, v) + ": unknown key '" + std::string(k.str()) + "'"};
  HistoryScript s;
  s.tree = root["tree"].value_or<std::string>("");
  s.main_branch = root["branch"].value_or<std::string>("main");
  if (s.tree.empty()) return Error{origin + ": missing key 'tree' (the folder imported at the first check-in)"};
  const auto* list = root["checkin"].as_array();
  if (!list || list->empty()) return Error{origin + ": no [[checkin]] entries"};
  for (const auto& n : *list) {
    const auto* t = n.as_table();
    if (!t) return Error{where(origin, n) + ": checkin must be a table ([[checkin]])"};
    auto c = parse_checkin(*t, origin);
    if (!c) return c.error();
    s.checkins.push_back(std::move(*c));
  }
  if (s.checkins.front().branch || s.checkins.front().merge)
    return Error{origin + ": the first check-in must be on " + s.main_branch};
  return s;
}

common::Status apply_edits(FileMap& files, const std::vector<Edit>& edits) {
  for (const auto& e : edits) {
    if (e.write) {
      files[e.file] = *e.write;
    } else if (e.remove) {
      if (!files.erase(e.file)) return Error{"cannot delete " + e.file + ": no such file"};
    } else {
      auto it = files.find(e.file);
      if (it == files.end()) return Error{"cannot edit " + e.file + ": no such file"};
      auto& text = it->second;
      auto pos = text.find(*e.replace);
      if (pos == std::string::npos)
        return Error{"edit of " + e.file + ": text to replace not found: \"" + e.replace->substr(0, 60) + "\""};
      if (text.find(*e.replace, pos + 1) != std::string::npos)
        return Error{"edit of " + e.file + ": text to replace occurs more than once: \"" + e.replace->substr(0, 60) + "\""};
      text.replace(pos, e.replace->size(), *e.with);
    }
  }
  return common::Ok{};
}

common::Result<FileMap> merge_by_replay(const FileMap& ours, const std::vector<Edit>& branch_edits) {
  FileMap out = ours;
  if (auto s = apply_edits(out, branch_edits); !s) return Error{"merge conflict: " + s.error().message};
  return out;
}

}  // namespace tracker
