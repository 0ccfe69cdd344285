#include "policy/compiler.h"

#include <unistd.h>

#include <atomic>
#include <fstream>

#include "common/text.h"

namespace policy {
namespace fs = std::filesystem;

namespace {

std::string unique_channel_name() {
  static std::atomic<unsigned> counter{0};
  return "dwch-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

// A static callee with one call site and four blocks: every -Oz default
// heuristic inlines it, and its true callee_basic_block_count stays above 1
// (its branches call different external functions, which no simplification
// folds into a select), so the slot holding the default decision cannot be
// mistaken. No target triple: the compiler's own, whatever it was built for.
const char* kProbeModule = R"(
declare void @on_big(i32)
declare void @on_small()
define internal void @leaf(i32 %x) {
entry:
  %c = icmp sgt i32 %x, 10
  br i1 %c, label %big, label %small
big:
  call void @on_big(i32 %x)
  br label %done
small:
  call void @on_small()
  br label %done
done:
  ret void
}
define void @probe(i32 %x) {
  call void @leaf(i32 %x)
  ret void
}
)";

}  // namespace

common::ProcessSpec CompilerInvocation::spec(const fs::path& input, const fs::path& output,
                                             const std::vector<std::string>& llvm_flags) const {
  common::ProcessSpec s;
  for (const auto& a : argv) {
    std::string arg = a;
    if (auto p = arg.find("{input}"); p != std::string::npos) arg.replace(p, 7, input.string());
    if (auto p = arg.find("{output}"); p != std::string::npos) arg.replace(p, 8, output.string());
    s.argv.push_back(arg);
  }
  for (const auto& f : llvm_flags) {
    if (!ml_flag_prefix.empty()) s.argv.push_back(ml_flag_prefix);
    s.argv.push_back(f);
  }
  s.timeout = timeout;
  return s;
}

CompilerInvocation CompilerInvocation::with_module_args(const std::vector<std::string>& cc1_args) const {
  CompilerInvocation c = *this;
  c.argv = cc1;
  c.argv.insert(c.argv.end(), cc1_args.begin(), cc1_args.end());
  c.argv.insert(c.argv.end(), {"-x", "ir", "{input}", "-o", "{output}"});
  return c;
}

bool killed_by_sigkill(const std::string& error) { return error.find(kSigkillMarker) != std::string::npos; }

bool ran_out_of_memory(const std::string& error) { return killed_by_sigkill(error) || common::says_out_of_memory(error); }

CompileFailure failure_of(const std::string& output) {
  auto machine = common::machine_failure_line(output);
  return machine && !common::says_out_of_memory(*machine) ? CompileFailure::Machine : CompileFailure::CompilerFailed;
}

bool machine_failure(const CompileOutcome& c) {
  return !c.ok && (c.failure == CompileFailure::TimedOut || c.failure == CompileFailure::Channel ||
                   c.failure == CompileFailure::NotStarted || c.failure == CompileFailure::Machine ||
                   ran_out_of_memory(c.error));
}

namespace {

/// A compile measures the object it wrote, never one an earlier run left at
/// the same path: a compiler that exits 0 and writes nothing (an empty file
/// where the compiler was runs as an empty shell script; a recipe's compile
/// line that writes elsewhere) fails here, as the compiler's failure, rather
/// than being measured on stale bytes or blamed on the machine for an
/// unreadable object. An old object that cannot be removed, or a path that
/// cannot be looked at, is the machine's failure.
bool forget_old_object(CompileOutcome& out, const fs::path& output) {
  std::error_code ec;
  if (fs::is_regular_file(output, ec) && !fs::remove(output, ec) && ec) {  // never a device such as /dev/null
    out.error = "cannot remove the old object " + output.string() + ": " + ec.message();
    out.failure = CompileFailure::Machine;
    return false;
  }
  return true;
}

void require_object(CompileOutcome& out, const fs::path& output) {
  if (!out.ok || output.empty()) return;
  std::error_code ec;
  bool written = fs::exists(output, ec);
  if (written && !ec) return;
  out.ok = false;
  if (ec) {
    out.error = "cannot look for the object " + output.string() + ": " + ec.message();
    out.failure = CompileFailure::Machine;
    return;
  }
  out.error = "the compiler exited 0 but wrote no object (" + output.string() +
              "; does its compile line write {output}?)";
  out.failure = CompileFailure::CompilerFailed;
}

}  // namespace

CompileOutcome compile_default(const CompilerInvocation& cc, const fs::path& input, const fs::path& output) {
  CompileOutcome out;
  if (!forget_old_object(out, output)) return out;
  auto r = common::run_process(cc.spec(input, output));
  if (!r) {
    out.error = r.error().message;
    out.failure = CompileFailure::NotStarted;
    return out;
  }
  out.seconds = r->seconds;
  out.timed_out = r->timed_out;
  out.ok = r->ok();
  if (!out.ok) {
    auto msg = compiler_failure_line(r->output);
    out.error = "compiler " + r->describe() + (msg.empty() ? "" : ": " + msg);
    out.failure = r->timed_out ? CompileFailure::TimedOut : failure_of(r->output);
  }
  require_object(out, output);
  return out;
}

CompileOutcome compile_with_runner(const CompilerInvocation& cc, const fs::path& input, const fs::path& output,
                                   Runner& runner, const fs::path& channel_dir, bool include_default) {
  CompileOutcome out;
  if (!forget_old_object(out, output)) return out;
  auto base = channel_dir / unique_channel_name();
  auto spec = cc.spec(input, output, inliner_channel_flags(base, include_default || runner.wants_default_decision()));
  auto r = compile_with_channel(spec, base, runner, cc.timeout);
  out.session = r.session;
  out.seconds = r.process.seconds;
  out.timed_out = r.process.timed_out;
  out.ok = r.ok();
  out.failure = r.failure;
  if (!out.ok) out.error = r.describe();
  require_object(out, output);
  return out;
}

namespace {

/// Writes the probe module to `ll` in `work_dir`; false on a full disk (the machine's failure).
bool write_probe(const fs::path& work_dir, const fs::path& ll) {
  std::error_code ec;
  fs::create_directories(work_dir, ec);
  return static_cast<bool>(std::ofstream(ll) << kProbeModule << std::flush);
}

}  // namespace

common::Result<DefaultDecisionSlot> slot_from_log(const DecisionLog& log) {
  int fixed = -1, buggy = -1;
  for (size_t i = 0; i < log.feature_names.size(); ++i) {
    if (log.feature_names[i] == "inlining_default") fixed = static_cast<int>(i);
    if (log.feature_names[i] == "callee_basic_block_count") buggy = static_cast<int>(i);
  }
  if (fixed < 0 || log.features.empty())
    return common::Error{"the compiler's ML inliner sent no default decision for the probe module"};
  bool fixed_says_inline = false, buggy_is_binary = true, buggy_says_inline = false;
  for (const auto& row : log.features) {
    fixed_says_inline = fixed_says_inline || row[fixed] == 1;
    if (buggy < 0) continue;
    buggy_is_binary = buggy_is_binary && (row[buggy] == 0 || row[buggy] == 1);
    buggy_says_inline = buggy_says_inline || row[buggy] == 1;
  }
  if (fixed_says_inline) return DefaultDecisionSlot::InliningDefault;
  // LLVM 19's slot holds the decision "inline" the probe's callee is sure
  // of, where its real block count is above 1.
  if (buggy >= 0 && buggy_is_binary && buggy_says_inline) return DefaultDecisionSlot::CalleeBasicBlockCount;
  return common::Error{"cannot tell where the compiler puts its default inlining decision"};
}

common::Result<DefaultDecisionSlot> detect_default_slot(const CompilerInvocation& cc, const fs::path& work_dir) {
  auto ll = work_dir / "default-slot-probe.ll";
  if (!write_probe(work_dir, ll))
    return common::Error{"cannot write the ML channel's probe module " + ll.string(), /*transient=*/true,
                         /*machine_only=*/true};  // a full disk: never stored as the policy unable to run
  DecisionLog log;
  // Answer "inline" so the compile is valid whatever the slot turns out to be.
  auto runner = make_logging_runner(make_constant_runner(1), log);
  auto r = compile_with_runner(cc, ll, work_dir / "default-slot-probe.o", *runner, work_dir, /*include_default=*/true);
  if (!r.ok) {
    // A tiny module answered "inline" everywhere cannot exhaust memory or
    // time: killed (the OOM killer taking the biggest process, an operator),
    // not started or failed for the disk, it is the machine's, however often
    // it comes back. Stored, it would read as the policy unable to run at
    // this check-in: an alert and a retraining. A hang or a broken channel
    // may be the compiler's channel itself, and is judged on the last attempt.
    bool machine_only = r.failure == CompileFailure::NotStarted || r.failure == CompileFailure::Machine ||
                        killed_by_sigkill(r.error);
    return common::Error{"cannot probe the compiler's ML channel: " + r.error, machine_failure(r), machine_only};
  }
  return slot_from_log(log);
}

CompileOutcome compile_probe_by_default(const CompilerInvocation& cc, const fs::path& work_dir) {
  auto ll = work_dir / "default-probe.ll";
  if (!write_probe(work_dir, ll)) {
    CompileOutcome out;
    out.error = "cannot write the probe module " + ll.string();
    out.failure = CompileFailure::Machine;  // a full disk, not the compiler
    return out;
  }
  return compile_default(cc, ll, work_dir / "default-probe.o");
}

}  // namespace policy
