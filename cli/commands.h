#pragma once
// Every subcommand's attach function; main.cpp lists them in one table.
#include "cli/context.h"

namespace cli {

// Exit statuses beyond 0 (done), 1 (a negative result) and 2 (an error).
inline constexpr int kExitSweepBusy = 3;    ///< another sweep of the project is running

void attach_db(CLI::App& sub, Context& ctx);
void attach_sample_history(CLI::App& sub, Context& ctx);
void attach_commits(CLI::App& sub, Context& ctx);
void attach_build(CLI::App& sub, Context& ctx);
void attach_cache(CLI::App& sub, Context& ctx);
void attach_demo(CLI::App& sub, Context& ctx);
void attach_train(CLI::App& sub, Context& ctx);
void attach_eval(CLI::App& sub, Context& ctx);
void attach_policy(CLI::App& sub, Context& ctx);
void attach_suite(CLI::App& sub, Context& ctx);
void attach_init(CLI::App& sub, Context& ctx);
void attach_sweep(CLI::App& sub, Context& ctx);
void attach_alerts(CLI::App& sub, Context& ctx);
void attach_bisect(CLI::App& sub, Context& ctx);
void attach_worker(CLI::App& sub, Context& ctx);
void attach_jobs(CLI::App& sub, Context& ctx);
void attach_report(CLI::App& sub, Context& ctx);

/// On SIGTERM, SIGINT or SIGHUP, once its children are killed, the process
/// becomes `driftwatch worker --hand-back-of OWNERS`: the jobs these workers
/// of it hold go back to the queue without counting the attempt (capped),
/// then it dies of the signal. For `worker` and for a sweep's or a
/// bisection's own workers: a nightly sweep stopped (Ctrl-C, `systemctl
/// stop`, a reboot) is not the job's doing, and three such nights made a
/// build's next claim its last attempt, where a timeout is the check-in's result.
void hand_back_on_signals(const Context& ctx, const std::vector<std::string>& owners,
                          const std::string& slurm_array = "");
/// The owner names of this process's first `workers` local workers (sweep::worker_owner_name).
std::vector<std::string> local_owners(int workers);

/// Serves a written report on 127.0.0.1 until stopped (report --serve, demo --serve).
void serve_dir(const std::filesystem::path& dir, int port);
void attach_decide(CLI::App& sub, Context& ctx);
void attach_retrain(CLI::App& sub, Context& ctx);

}  // namespace cli
