#include "sweep/slurm.h"

#include <fmt/core.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>

#include "common/atomic_file.h"
#include "common/process.h"
#include "common/text.h"

namespace sweep {
namespace fs = std::filesystem;

std::string slurm_batch_script(const SlurmSpec& s) {
  std::string name;
  for (char c : "driftwatch-" + s.project) name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  std::string out = "#!/bin/sh\n# driftwatch workers for project " + s.project + ": written by `driftwatch sweep --engine slurm`\n";
  out += "#SBATCH --job-name=" + name + "\n";
  out += fmt::format("#SBATCH --array=0-{}\n", std::max(1, s.tasks) - 1);
  out += fmt::format("#SBATCH --cpus-per-task={}\n", std::max(1, s.jobs));
  out += "#SBATCH --output=" + (s.log_dir / "worker-%A_%a.out").string() + "\n";
  if (!s.partition.empty()) out += "#SBATCH --partition=" + s.partition + "\n";
  // SIGTERM from scancel, the time limit or preemption ends the worker at
  // once; it puts its job back in the queue first (cli/farm_commands.cpp).
  out += "exec " + common::shell_quote(s.driftwatch) + " --data-dir " + common::shell_quote(s.data_dir.string()) +
         " worker --project " + common::shell_quote(s.project) +
         fmt::format(" -j {} --idle-exit {} --retry-backoff {}\n", std::max(1, s.jobs), s.idle_exit, s.retry_backoff);
  return out;
}

ArrayTasks parse_squeue(const std::string& output) {
  ArrayTasks out;
  std::vector<std::string> reasons;
  for (const auto& line : common::split(output, '\n')) {
    auto fields = common::split(common::trim(line), '|');
    if (fields.size() < 2 || fields[0].empty()) continue;
    ++out.states[fields[1]];
    // The reason may itself hold '|' in no known Slurm, but rejoin to be safe.
    std::string reason;
    for (size_t i = 2; i < fields.size(); ++i) reason += (i > 2 ? "|" : "") + fields[i];
    reason = common::trim(reason);
    if (fields[1] == "PENDING" && !reason.empty() && std::find(reasons.begin(), reasons.end(), reason) == reasons.end())
      reasons.push_back(reason);
  }
  for (const auto& r : reasons) out.pending_reason += (out.pending_reason.empty() ? "" : "; ") + r;
  return out;
}

std::string describe_tasks(const std::map<std::string, int>& states) {
  std::string out;
  for (const auto& [state, n] : states) {
    auto lower = state;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + lower;
  }
  return out.empty() ? "none left" : out;
}

namespace {

common::Result<std::string> run_slurm(std::vector<std::string> argv, std::vector<std::pair<std::string, std::string>> env = {}) {
  common::ProcessSpec p;
  p.argv = std::move(argv);
  p.env = std::move(env);
  p.timeout = std::chrono::seconds(60);
  auto r = common::run_process(p);
  if (!r) return common::Error{p.argv[0] + " could not run (is Slurm's client installed?): " + r.error().message};
  if (!r->ok())
    return common::Error{p.argv[0] + " " + r->describe() + ": " + common::trim(common::last_line(r->output))};
  return r->output;
}

}  // namespace

int prune_worker_logs(const fs::path& log_dir, int days) {
  std::error_code ec;
  auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(24 * days);
  int removed = 0;
  // Errors are ignored: a log that cannot go now goes at a later sweep.
  for (auto it = fs::directory_iterator(log_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    auto name = it->path().filename().string();
    if (name.rfind("worker-", 0) != 0 || it->path().extension() != ".out") continue;
    std::error_code time_ec;
    auto written = it->last_write_time(time_ec);
    if (!time_ec && written < cutoff && it->is_regular_file(time_ec) && fs::remove(it->path(), time_ec)) ++removed;
  }
  return removed;
}

std::string last_task_words(const fs::path& log_dir, const std::string& array_id) {
  std::vector<fs::path> outputs;
  std::error_code ec;
  for (auto it = fs::directory_iterator(log_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().filename().string().starts_with("worker-" + array_id + "_") && it->path().extension() == ".out")
      outputs.push_back(it->path());
  std::sort(outputs.begin(), outputs.end());
  for (const auto& f : outputs) {
    std::ifstream in(f);
    std::string line, last;
    while (std::getline(in, line))
      if (!common::trim(line).empty()) last = common::trim(line);
    if (!last.empty()) return common::printable(last.substr(0, 300));
  }
  return "";
}

common::Result<SlurmArray> SlurmArray::submit(const SlurmSpec& spec, const std::string& dsn) {
  std::error_code ec;
  prune_worker_logs(spec.log_dir, kWorkerLogDays);
  fs::create_directories(spec.log_dir, ec);
  if (ec) return common::Error{"cannot create " + spec.log_dir.string() + ": " + ec.message()};
  auto script = spec.log_dir / "workers.sbatch";
  if (auto st = common::write_file_atomically(script, slurm_batch_script(spec)); !st) return st.error();
  ::chmod(script.c_str(), 0755);
  // sbatch passes its environment on to the tasks (--export=ALL). Children
  // are denied libpq's PG* variables, but the tasks connect as the sweep
  // does: a password, host or sslmode the sweep took from PGPASSWORD,
  // PGHOST or PGSSLMODE rather than from its DSN must reach them too.
  auto env = common::libpq_environment();
  env.emplace_back("DRIFTWATCH_DB", dsn);
  auto out = run_slurm({"sbatch", "--parsable", script.string()}, env);
  if (!out) return out.error();
  SlurmArray a;
  a.id_ = common::trim(common::split(common::trim(*out), ';')[0]);  // "id;cluster" on multi-cluster setups
  if (a.id_.empty() || !std::all_of(a.id_.begin(), a.id_.end(), ::isdigit))
    return common::Error{"sbatch answered '" + common::trim(*out) + "', not a job id"};
  return a;
}

common::Result<ArrayTasks> SlurmArray::active() const {
  auto out = run_slurm({"squeue", "-h", "-r", "-j", id_, "-o", "%i|%T|%r"});
  if (!out) {
    // squeue refuses an id it has forgotten: the array ended long ago.
    if (out.error().message.find("Invalid job id") != std::string::npos) return ArrayTasks{};
    return out.error();
  }
  return parse_squeue(*out);
}

void SlurmArray::cancel() const { cancel_slurm_array(id_); }

std::string cancel_slurm_array(const std::string& id) {
  auto r = run_slurm({"scancel", id});
  return r ? "" : r.error().message;
}

std::string SlurmArray::accounting() const {
  auto out = run_slurm({"sacct", "-n", "-X", "-P", "-j", id_, "--format=JobID,State,ExitCode,Elapsed,NodeList"});
  return out ? common::trim(*out) : "";
}

}  // namespace sweep
