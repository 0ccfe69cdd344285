#include "evaluator/extract.h"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "common/hash.h"
#include "common/process.h"
#include "common/read_file.h"
#include "common/text.h"
#include "evaluator/compile_commands.h"
#include "evaluator/corpus.h"
#include "evaluator/files.h"

namespace evaluator {

using common::Error;
namespace fs = std::filesystem;

namespace {

// CMake's compiler checks (CMakeFiles/CMakeScratch, CMakeTmp, CompilerIdC)
// and its precompiled-header sources; not the sources a unity build writes
// (CMakeFiles/<target>.dir/Unity/unity_0_c.c), which hold the project's code.
bool is_probe(const std::string& file) {
  if (file.starts_with("/usr/share/cmake")) return true;
  auto at = file.find("/CMakeFiles/");
  if (at == std::string::npos) return false;
  bool unity = file.find(".dir/Unity/unity_", at) != std::string::npos;
  return !unity;
}

// A response file (@flags.rsp) read into the command, so that its -O level
// and target are seen and its -MF, -o and the like are dropped like any
// other (clang would write the project's own dependency file). Nested ones
// too, a few deep; one that cannot be read is left to clang, which says so.
std::vector<std::string> expand_response_files(const std::vector<std::string>& args, const fs::path& dir,
                                               int depth = 0) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    if (a.size() > 1 && a[0] == '@' && depth < 8) {
      fs::path file = a.substr(1);
      auto text = common::read_file(file.is_absolute() ? file : dir / file);
      if (text)
        if (auto words = shell_split(*text)) {
          auto inner = expand_response_files(*words, dir, depth + 1);
          out.insert(out.end(), inner.begin(), inner.end());
          continue;
        }
    }
    out.push_back(a);
  }
  return out;
}

// Drops each flag, and the -Xclang that passed it to cc1.
void erase_all(std::vector<std::string>& argv, const std::vector<std::string>& flags) {
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    bool passed = argv[i] == "-Xclang" && i + 1 < argv.size() &&
                  std::find(flags.begin(), flags.end(), argv[i + 1]) != flags.end();
    if (passed) ++i;
    if (passed || std::find(flags.begin(), flags.end(), argv[i]) != flags.end()) continue;
    kept.push_back(argv[i]);
  }
  argv = std::move(kept);
}

fs::path common_dir(const std::vector<fs::path>& files) {
  if (files.empty()) return {};
  fs::path root = files.front().parent_path();
  for (const auto& f : files) {
    while (!root.empty() && root != root.root_path()) {
      auto rel = f.lexically_relative(root);
      if (!rel.empty() && *rel.begin() != "..") break;
      root = root.parent_path();
    }
  }
  return root;
}

// The first few non-empty lines: enough to see the error, short enough for a report.
std::string first_lines(const std::string& text, int n) {
  std::string out;
  for (const auto& line : common::split(text, '\n')) {
    if (common::trim(line).empty()) continue;
    if (n-- == 0) break;
    out += (out.empty() ? "" : "\n") + line;
  }
  return out;
}

common::Result<common::ProcessResult> run(const std::vector<std::string>& argv, const std::string& cwd,
                                          std::chrono::seconds timeout) {
  common::ProcessSpec spec;
  spec.argv = argv;
  if (!cwd.empty()) spec.cwd = cwd;
  spec.timeout = timeout;
  spec.env = {{"LC_ALL", "C"}};
  return common::run_process(spec);
}

common::Result<ExtractedModule> extract_one(const CompileCommand& c, const PlannedModule& p, const fs::path& dir,
                                            const ExtractOptions& o) {
  auto bc = module_file(dir, p.name, ".bc");
  auto cmd = module_file(dir, p.name, ".cmd");
  std::error_code ec;
  fs::create_directories(bc.parent_path(), ec);
  auto inv = rewrite_for_bitcode(c, bc.string(), o.tools, o.opt_level);
  if (!inv) return inv.error();
  auto failed = [&](const common::ProcessResult& r, const char* what) {
    // From the first error on: "In file included from …" lines come before
    // it, and the one line a summary shows must be the error.
    auto at = r.output.find("error: ");
    auto from = at == std::string::npos ? 0 : r.output.rfind('\n', at);
    auto text = first_lines(r.output.substr(from == std::string::npos ? 0 : from), 4);
    return Error{std::string(what) + " " + r.describe() + (text.empty() ? "" : ":\n" + text)};
  };
  auto compiled = run(inv->bitcode_argv, c.directory, o.timeout);
  if (!compiled) return compiled.error();
  // A GCC build's flags clang does not know (-fipa-pta, -fconserve-stack)
  // would empty the suite of a project that sets one in its CFLAGS: they
  // tune GCC, not the code, so the TU is compiled once more without them.
  std::vector<std::string> dropped;
  if (!compiled->ok() && !compiled->timed_out) {
    for (const auto& f : unknown_arguments(compiled->output))
      if (std::find(inv->bitcode_argv.begin(), inv->bitcode_argv.end(), f) != inv->bitcode_argv.end())
        dropped.push_back(f);
    if (!dropped.empty()) {
      auto bitcode = inv->bitcode_argv;
      erase_all(bitcode, dropped);
      auto again = run(bitcode, c.directory, o.timeout);
      if (!again) return again.error();
      // Failing without them too: the first compile's errors are the ones to read.
      if (!again->ok()) return failed(*compiled, "clang:");
      inv->bitcode_argv = std::move(bitcode);
      erase_all(inv->probe_argv, dropped);
      compiled = std::move(again);
    }
  }
  if (!compiled->ok()) return failed(*compiled, "clang:");
  auto probe = run(inv->probe_argv, c.directory, o.timeout);
  if (!probe) return probe.error();
  if (!probe->ok()) return failed(*probe, "clang -###:");
  auto cc1 = cc1_from_dry_run(probe->output, c.file);
  if (!cc1) return cc1.error();
  if (auto s = write_file(cmd, format_cmd(*cc1)); !s) return s.error();
  auto ir = run({o.llvm_dis, bc.string(), "-o", "-"}, "", o.timeout);
  if (!ir) return ir.error();
  if (!ir->ok()) return failed(*ir, "llvm-dis:");
  // An optnone function would sit out every optimization, inlining included.
  if (has_optnone(ir->output)) return Error{"the bitcode has optnone functions (compiled as -O0?)"};
  auto sha = common::sha256_file(bc);
  if (!sha) return sha.error();
  return ExtractedModule{p.name, p.source, *sha, inv->language, inv->opt_level_defaulted, dropped, inv->left_out};
}

}  // namespace

bool glob_match(std::string_view p, std::string_view s) {
  if (p.empty()) return s.empty();
  if (p.starts_with("**")) {
    bool dirs = p.size() > 2 && p[2] == '/';  // "**/" matches zero or more whole directories
    auto rest = p.substr(dirs ? 3 : 2);
    for (size_t i = 0; i <= s.size(); ++i)
      if ((!dirs || i == 0 || s[i - 1] == '/') && glob_match(rest, s.substr(i))) return true;
    return false;
  }
  if (p[0] == '*') {
    for (size_t i = 0; i <= s.size(); ++i) {
      if (glob_match(p.substr(1), s.substr(i))) return true;
      if (i < s.size() && s[i] == '/') break;
    }
    return false;
  }
  if (s.empty() || (p[0] == '?' ? s[0] == '/' : p[0] != s[0])) return false;
  return glob_match(p.substr(1), s.substr(1));
}

ExtractPlan plan_extraction(const std::vector<CompileCommand>& commands, const ExtractOptions& o) {
  ExtractPlan plan;
  std::vector<size_t> candidates;
  std::vector<fs::path> files;
  for (size_t i = 0; i < commands.size(); ++i) {
    const auto& c = commands[i];
    auto arch = command_target_arch(c);
    if (is_probe(c.file)) {
      ++plan.probes;
    } else if (!command_language(c)) {
      ++plan.not_c_family;
    } else if (!arch.empty() && arch != host_arch()) {
      // Another target's code (the other side of its #ifs), which a compiler
      // built for this host's target (LLVM_TARGETS_TO_BUILD=X86) cannot compile.
      ++plan.other_target;
    } else {
      candidates.push_back(i);
      files.push_back(fs::path(c.file).lexically_normal());
    }
  }
  plan.root = o.root.empty() ? common_dir(files) : o.root.lexically_normal();
  // A parallel build records its compiles in any order; when a source is
  // compiled twice (static and -fPIC), keep the shortest command, whatever the order.
  std::vector<size_t> order(candidates.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto& x = commands[candidates[a]].arguments;
    const auto& y = commands[candidates[b]].arguments;
    if (files[a] != files[b]) return files[a] < files[b];
    if (x.size() != y.size()) return x.size() < y.size();
    return x < y;
  });
  std::set<std::string> seen;
  for (size_t k : order) {
    auto rel = files[k].lexically_relative(plan.root);
    if (rel.empty() || *rel.begin() == "..") {
      ++plan.outside_root;
      continue;
    }
    auto source = rel.string();
    if (std::any_of(o.exclude.begin(), o.exclude.end(), [&](const auto& g) { return glob_match(g, source); })) {
      ++plan.excluded;
      continue;
    }
    if (!seen.insert(source).second) {
      ++plan.duplicates;
      continue;
    }
    plan.modules.push_back({o.name_prefix + source, source, candidates[k]});
  }
  std::sort(plan.modules.begin(), plan.modules.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return plan;
}

ExtractReport extract_bitcode(const std::vector<CompileCommand>& recorded, const fs::path& dir,
                              const ExtractOptions& o) {
  auto start = std::chrono::steady_clock::now();
  ExtractReport report;
  auto commands = recorded;
  for (auto& c : commands) c.arguments = expand_response_files(c.arguments, c.directory);
  report.plan = plan_extraction(commands, o);
  const auto& todo = report.plan.modules;
  std::vector<std::optional<common::Result<ExtractedModule>>> results(todo.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < todo.size();) {
      results[i] = extract_one(commands[todo[i].command], todo[i], dir, o);
      if (!results[i]->ok() && o.progress) {
        o.progress(fmt::format("failed: {}: {}", todo[i].name, one_line_reason(results[i]->error().message)));
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, std::min<int>(o.jobs, static_cast<int>(todo.size()))); ++t)
    threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < todo.size(); ++i) {
    auto& r = *results[i];
    if (r.ok()) {
      report.modules.push_back(r.value());
      continue;
    }
    report.failures.push_back({todo[i].name, r.error().message});
    std::error_code ec;
    fs::remove(module_file(dir, todo[i].name, ".bc"), ec);
    fs::remove(module_file(dir, todo[i].name, ".cmd"), ec);
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::string one_line_reason(const std::string& failure_message) {
  auto lines = common::split(failure_message, '\n');
  return lines[0] + (lines.size() > 1 ? " " + common::trim(lines[1]) : "");
}

std::string skipped_text(const ExtractPlan& plan) {
  std::string s;
  auto add = [&](int n, const char* what) {
    if (n > 0) s += fmt::format("; {} {}", n, what);
  };
  // Which one stays matters (static or -fPIC, other -D): said.
  add(plan.duplicates, "further compiles of a source skipped (each source's shortest command kept)");
  add(plan.not_c_family, "non-C/C++ compiles skipped");
  add(plan.probes, "build-system probes skipped");
  add(plan.other_target, "compiles for another target skipped");
  add(plan.outside_root, "sources outside the tree skipped");
  add(plan.excluded, "excluded");
  return s;
}

std::string summarize(const ExtractReport& r) {
  auto s = fmt::format("{} modules in {}", r.modules.size(), common::format_seconds(r.seconds));
  auto add = [&](int n, const char* what) {
    if (n > 0) s += fmt::format("; {} {}", n, what);
  };
  add(static_cast<int>(r.failures.size()), r.failures.size() == 1 ? "TU failed" : "TUs failed");
  s += skipped_text(r.plan);
  int defaulted = static_cast<int>(
      std::count_if(r.modules.begin(), r.modules.end(), [](const auto& m) { return m.opt_level_defaulted; }));
  add(defaulted, "without an -O level (or -O0) compiled at -Oz");
  // "; 2 compiled without <why> (-a -b)": the modules that lost some flags, and those flags.
  auto without = [&](std::vector<std::string> ExtractedModule::*flags_of, const char* why) {
    std::set<std::string> flags;
    int modules = 0;
    for (const auto& m : r.modules) {
      flags.insert((m.*flags_of).begin(), (m.*flags_of).end());
      modules += (m.*flags_of).empty() ? 0 : 1;
    }
    std::string listed;
    for (const auto& f : flags) listed += (listed.empty() ? "" : " ") + f;
    if (!flags.empty()) s += fmt::format("; {} compiled without {} ({})", modules, why, listed);
  };
  without(&ExtractedModule::dropped_flags, "flags clang-19 does not know");
  without(&ExtractedModule::left_out,
          "flags that would make the measured code not the project's own, or fail the compile");
  return s;
}

}  // namespace evaluator
