#pragma once
// The project file, driftwatch.toml: what a team tracks (its compiler, recipe,
// suites, frozen policy, sampling, database, alert thresholds, notifications).
// Every command of a project reads it; parsing is pure and names the key and
// line of anything wrong.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"
#include "reports/retraining.h"

namespace sweep {

/// A prebuilt toolchain (a nightly install prefix) swept instead of, or
/// besides, a repository.
struct Toolchain {
  std::filesystem::path dir;
  std::string label;  ///< what people call it: "2026-01-05" or "19.1.7"
  std::string date;   ///< YYYY-MM-DD, orders the list with `label`
};

/// The longest a failed job waits for its next attempt, however many it
/// failed: the worker's cap, and the most [run] retry_backoff may say.
inline constexpr double kMaxRetryBackoffSeconds = 600;

struct AlertSettings {
  double min_uplift_change = 0.002;  ///< a step of the suite uplift (fraction) that deserves an alert
  double min_total_change = 0.002;   ///< a step of the default's or the learned total (fraction)
  int flipped_modules = 3;           ///< modules turned from win to loss in one change
  /// Modules the policy's compile newly fails on (a crash or a hang of the
  /// compiler under it) for a modules-failing alert: one, as for the
  /// default's, since a policy that crashes the compiler cannot ship there.
  int failing_modules = 1;
  int broken_builds = 3;             ///< consecutive broken samples before an alert
  bool bisect = true;                ///< bisect every change between sampled check-ins
};

struct NotifySettings {
  std::string command;                 ///< run with the notice as JSON on stdin (sweep::notice_json)
  std::string webhook;                 ///< http:// URL that receives a JSON POST
  std::string webhook_format = "json"; ///< json | slack (Slack and Mattermost)
  bool resolved = true;                ///< also tell them a failure alert's end (a build fixed, a crash gone)
  /// How long the hook and the webhook may take over one alert; a channel
  /// that runs past it is not tried on the run's other alerts.
  std::chrono::seconds command_timeout{30}, webhook_timeout{10};
  bool configured() const { return !command.empty() || !webhook.empty(); }
};

/// [retrain]: how a candidate is trained and judged.
struct RetrainSettings {
  std::string promote = "auto";           ///< auto (when it wins) | never (record the candidate only)
  double margin = 0.001;                  ///< uplift the candidate must gain on the held-out suites
  int max_extra_losing = 0;               ///< modules it may make worse beyond the active policy's count
  std::string training_suite = "train";   ///< trained on; never one of the held-out suites
  /// Training's own choices (best checkpoint, margin) are made on it; never
  /// the training suite nor a held-out one. Empty: chosen on the training suite.
  std::string validation_suite;
  std::vector<std::string> holdout;       ///< judged on; empty = the project's suites
  std::string settings = "shipped";       ///< shipped (a gate refitted as a gate, a network as the residual one) | small (minutes, for trials)
};

struct ProjectFile {
  std::filesystem::path path;  ///< where it was read from
  std::string name;
  // [compiler]
  std::string repo, branch, recipe = "sample-compiler";
  // [policy]
  std::string policy;
  // [suites]
  std::vector<std::string> suites;
  // [sampling]
  std::string every = "1w", since, until, from;
  bool tags = false;
  /// A tracked branch whose tip is older than this fails the sweep: the
  /// nightly fetch has stopped, or the repository is not the one that moves
  /// (0: never; a fixed tag or commit never counts).
  std::int64_t stale_after_seconds = 0;
  // [database]
  std::string dsn, data_dir;
  // [run]
  int jobs = 0;
  double retry_backoff = 10;  ///< seconds before a failed job's first retry, doubled for each further one
  AlertSettings alerts;
  NotifySettings notify;
  // [report]
  std::string commit_url;  ///< "https://…/commit/{sha}"
  std::vector<Toolchain> toolchains;
  reports::RetrainRules decide;  ///< [decide]: when to retrain
  RetrainSettings retrain;
  /// The held-out suites a candidate is judged on.
  const std::vector<std::string>& holdout_suites() const { return retrain.holdout.empty() ? suites : retrain.holdout; }
};

/// Parses the text of a project file; relative paths are taken from `base_dir`.
/// Errors read "driftwatch.toml:12: unknown key 'sampling.evry'".
common::Result<ProjectFile> parse_project_file(const std::string& text, const std::string& origin,
                                               const std::filesystem::path& base_dir);
/// Reads and parses a project file; a missing file is named.
common::Result<ProjectFile> load_project_file(const std::filesystem::path& path);
/// The commented file `driftwatch init` writes, with these values filled in
/// (since: "YYYY-MM-DD", or "" for the whole history; branch: "" for HEAD).
std::string project_file_template(const std::string& name, const std::string& repo, const std::string& policy,
                                  const std::string& recipe = "sample-compiler", const std::string& since = "",
                                  const std::string& branch = "");

}  // namespace sweep
