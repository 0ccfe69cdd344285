#include "tracker/sample_history.h"

#include <fstream>
#include <map>
#include <sstream>

#include "tracker/git_impl.h"
#include "tracker/history_script.h"

namespace tracker {
namespace embedded {
const std::vector<std::pair<std::string_view, std::string_view>>& sample_files();
}

namespace fs = std::filesystem;
using common::Error;

namespace {

constexpr std::int64_t kWeek = 7 * 24 * 3600;

/// Files the script can refer to, keyed relative to the script's folder.
struct Bundle {
  std::string script_text;
  std::string origin;
  FileMap files;
};

common::Result<Bundle> shipped_bundle() {
  Bundle b;
  b.origin = "samples/history.toml (built in)";
  for (const auto& [path, content] : embedded::sample_files()) {
    if (path == "history.toml") b.script_text = content;
    else b.files[std::string(path)] = content;
  }
  return b;
}

common::Result<Bundle> bundle_from_disk(const fs::path& script) {
  Bundle b;
  b.origin = script.string();
  std::ifstream in(script);
  if (!in) return Error{"cannot read history file " + script.string()};
  std::stringstream ss;
  ss << in.rdbuf();
  b.script_text = ss.str();
  return b;
}

common::Result<FileMap> tree_files(const Bundle& bundle, const fs::path& script_dir, const std::string& tree) {
  FileMap out;
  if (script_dir.empty()) {
    for (const auto& [path, content] : bundle.files)
      if (path.rfind(tree + "/", 0) == 0) out[path.substr(tree.size() + 1)] = content;
  } else {
    auto root = script_dir / tree;
    if (!fs::is_directory(root)) return Error{"tree folder " + root.string() + " does not exist"};
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      if (!e.is_regular_file()) continue;
      std::ifstream in(e.path(), std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      out[fs::relative(e.path(), root).string()] = ss.str();
    }
  }
  if (out.empty()) return Error{"tree '" + tree + "' of the history has no files"};
  return out;
}

/// Writes `files` as nested trees; returns the root tree id.
common::Result<git_oid> write_tree(git_repository* repo, const FileMap& files) {
  // Group by directory: "a/b/c.txt" → dir "a/b", entry "c.txt".
  std::map<std::string, std::map<std::string, std::pair<git_oid, git_filemode_t>>> dirs;
  dirs[""];
  for (const auto& [path, content] : files) {
    git_oid blob;
    if (git_blob_create_from_buffer(&blob, repo, content.data(), content.size()) != 0)
      return Error{git_error_text()};
    auto slash = path.rfind('/');
    std::string dir = slash == std::string::npos ? "" : path.substr(0, slash);
    dirs[dir][path.substr(slash == std::string::npos ? 0 : slash + 1)] = {blob, GIT_FILEMODE_BLOB};
    for (std::string d = dir; !d.empty();) {  // make sure every ancestor exists
      auto s = d.rfind('/');
      std::string parent = s == std::string::npos ? "" : d.substr(0, s);
      dirs[parent];
      d = parent;
    }
  }
  // Deepest directories first, so each child's tree id exists before its parent is written.
  std::map<std::string, git_oid> written;
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    git_treebuilder* tb = nullptr;
    if (git_treebuilder_new(&tb, repo, nullptr) != 0) return Error{git_error_text()};
    TreeBuilderPtr owner(tb);
    for (const auto& [name, e] : it->second)
      if (git_treebuilder_insert(nullptr, tb, name.c_str(), &e.first, e.second) != 0) return Error{git_error_text()};
    for (const auto& [sub, oid] : written) {
      auto s = sub.rfind('/');
      std::string parent = s == std::string::npos ? "" : sub.substr(0, s);
      if (parent != it->first) continue;
      std::string name = s == std::string::npos ? sub : sub.substr(s + 1);
      if (git_treebuilder_insert(nullptr, tb, name.c_str(), &oid, GIT_FILEMODE_TREE) != 0)
        return Error{git_error_text()};
    }
    git_oid oid;
    if (git_treebuilder_write(&oid, tb) != 0) return Error{git_error_text()};
    written[it->first] = oid;
  }
  return written[""];
}

struct BranchState {
  git_oid tip{};
  FileMap files;
  std::vector<Edit> edits_since_fork;  ///< replayed onto the main branch when merged
};

common::Result<git_oid> commit(git_repository* repo, const Checkin& c, std::int64_t time, const FileMap& files,
                               const std::vector<git_oid>& parents) {
  auto tree_id = write_tree(repo, files);
  if (!tree_id) return tree_id.error();
  git_tree* tree = nullptr;
  if (git_tree_lookup(&tree, repo, &*tree_id) != 0) return Error{git_error_text()};
  TreePtr tree_owner(tree);
  auto lt = c.author.find('<'), gt = c.author.find('>');
  std::string name = c.author.substr(0, lt), email = c.author.substr(lt + 1, gt - lt - 1);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  git_signature* sig = nullptr;
  if (git_signature_new(&sig, name.c_str(), email.c_str(), time, 0) != 0) return Error{git_error_text()};
  SignaturePtr sig_owner(sig);
  std::vector<CommitPtr> parent_owners;
  std::vector<const git_commit*> parent_ptrs;
  for (const auto& p : parents) {
    git_commit* pc = nullptr;
    if (git_commit_lookup(&pc, repo, &p) != 0) return Error{git_error_text()};
    parent_owners.emplace_back(pc);
    parent_ptrs.push_back(pc);
  }
  std::string message = c.message;
  if (message.empty() || message.back() != '\n') message += '\n';
  git_oid id;
  if (git_commit_create(&id, repo, nullptr, sig, sig, nullptr, message.c_str(), tree, parent_ptrs.size(),
                        parent_ptrs.data()) != 0)
    return Error{git_error_text()};
  return id;
}

common::Result<SampleHistoryReport> write_repo(const fs::path& dir, const HistoryScript& script, const FileMap& tree,
                                               const SampleHistoryOptions& options) {
  git_repository* raw = nullptr;
  git_repository_init_options init;
  git_repository_init_options_init(&init, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
  init.flags = GIT_REPOSITORY_INIT_MKPATH;
  std::string head = script.main_branch;
  init.initial_head = head.c_str();
  if (git_repository_init_ext(&raw, dir.c_str(), &init) != 0)
    return Error{"cannot create a git repository in " + dir.string() + ": " + git_error_text()};
  RepoPtr repo(raw);

  std::map<std::string, BranchState> branches;
  SampleHistoryReport report;
  bool first = true;
  for (const auto& c : script.checkins) {
    if (c.week >= options.weeks) continue;
    std::int64_t time = options.start + c.week * kWeek + c.hours * 3600;
    std::string on = c.branch.value_or(script.main_branch);
    auto where = "check-in of week " + std::to_string(c.week) + " (" + c.message.substr(0, c.message.find('\n')) + ")";
    if (first) {
      branches[on].files = tree;
    } else if (!branches.count(on)) {  // a side branch forks from the main branch's tip
      auto& main = branches.at(script.main_branch);
      branches[on] = {main.tip, main.files, {}};
    }
    auto& state = branches[on];
    std::vector<git_oid> parents;
    if (!first) parents.push_back(state.tip);
    if (c.merge) {
      auto it = branches.find(*c.merge);
      if (it == branches.end()) return Error{where + ": merges unknown branch '" + *c.merge + "'"};
      auto merged = merge_by_replay(state.files, it->second.edits_since_fork);
      if (!merged) return Error{where + ": " + merged.error().message};
      state.files = std::move(*merged);
      parents.push_back(it->second.tip);
    }
    if (auto s = apply_edits(state.files, c.edits); !s) return Error{where + ": " + s.error().message};
    state.edits_since_fork.insert(state.edits_since_fork.end(), c.edits.begin(), c.edits.end());
    auto id = commit(repo.get(), c, time, state.files, parents);
    if (!id) return id.error();
    state.tip = *id;
    ++report.commits;
    if (on == script.main_branch) ++report.main_commits;
    if (c.tag) {
      git_object* obj = nullptr;
      git_object_lookup(&obj, repo.get(), &*id, GIT_OBJECT_COMMIT);
      ObjectPtr owner(obj);
      git_oid tag_id;
      if (git_tag_create_lightweight(&tag_id, repo.get(), c.tag->c_str(), obj, 0) != 0)
        return Error{where + ": tag " + *c.tag + ": " + git_error_text()};
    }
    first = false;
  }
  if (first) return Error{"no check-ins fall within the first " + std::to_string(options.weeks) + " weeks"};
  for (const auto& [name, state] : branches) {
    git_reference* ref = nullptr;
    if (git_reference_create(&ref, repo.get(), ("refs/heads/" + name).c_str(), &state.tip, 1, "sample-history") != 0)
      return Error{"branch " + name + ": " + git_error_text()};
    git_reference_free(ref);
  }
  git_checkout_options co;
  git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
  co.checkout_strategy = GIT_CHECKOUT_FORCE;
  if (git_checkout_head(repo.get(), &co) != 0) return Error{"checkout: " + git_error_text()};
  report.head = oid_hex(branches.at(script.main_branch).tip);
  return report;
}

}  // namespace

std::int64_t default_sample_start() { return 1764547200; /* 2025-12-01T00:00:00Z, a Monday */ }

common::Result<SampleHistoryReport> write_sample_history(const fs::path& dir, const SampleHistoryOptions& options) {
  ensure_libgit2();
  std::error_code ec;
  if (fs::exists(dir) && (!fs::is_directory(dir) || !fs::is_empty(dir)))
    return Error{dir.string() + " already exists and is not empty"};
  auto bundle = options.history_file ? bundle_from_disk(*options.history_file) : shipped_bundle();
  if (!bundle) return bundle.error();
  auto script = parse_history(bundle->script_text, bundle->origin);
  if (!script) return script.error();
  auto tree = tree_files(*bundle, options.history_file ? fs::absolute(*options.history_file).parent_path() : fs::path(),
                         script->tree);
  if (!tree) return tree.error();

  auto target = fs::absolute(dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  fs::create_directories(target.parent_path(), ec);
  if (ec) return Error{"cannot create " + target.parent_path().string() + ": " + ec.message()};
  auto scratch = target.parent_path() / ("." + target.filename().string() + ".partial");
  fs::remove_all(scratch, ec);
  auto report = write_repo(scratch, *script, *tree, options);
  if (!report) {
    fs::remove_all(scratch, ec);
    return report.error();
  }
  fs::remove(target, ec);  // an empty directory may stand there
  fs::rename(scratch, target, ec);
  if (ec) {
    fs::remove_all(scratch, ec);
    return Error{"cannot move the new repository to " + target.string() + ": " + ec.message()};
  }
  return report;
}

}  // namespace tracker
