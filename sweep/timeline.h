#pragma once
// The ordered check-ins drift is read along: a repository's first-parent
// history, or a project's [[toolchains]] in date order. A toolchain (a
// nightly install prefix) stands for a check-in under a made-up sha
// (toolchain_id); nothing lies between two of them, so a change between two
// nightlies is pinned to the later one and there is nothing to bisect.
// Pure: no I/O.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "sweep/project_file.h"
#include "tracker/commit.h"

namespace sweep {

/// The stable identity of a toolchain directory, used where a commit sha goes.
std::string toolchain_id(const std::filesystem::path& dir);
bool is_toolchain_id(const std::string& sha);
/// The repository a recipe's toolchains are recorded under.
std::string toolchains_location(const std::string& recipe_name);

/// The project's [[toolchains]] ordered by date, then label (undated first).
std::vector<Toolchain> toolchains_in_order(const ProjectFile& p);
/// The line drift reads, as check-ins: sha toolchain_id(dir), label as
/// subject, dated `time` (the date's midnight UTC). The dated toolchains in
/// date order (then label); where none is dated, all of them in the file's
/// order (time 0).
std::vector<tracker::CommitInfo> toolchain_history(const ProjectFile& p);
/// Undated toolchains beside dated ones: measured, but with no place on
/// the line (first would make one the baseline, last the newest nightly).
std::vector<Toolchain> undated_left_out(const ProjectFile& p);

/// How a check-in is named to people: a toolchain by its label ("toolchain
/// 2026-01-05"), a commit by its short sha.
std::string checkin_name(const std::string& sha, const std::string& label);
/// Every listed toolchain's label by its id (dated or not), for naming them.
std::map<std::string, std::string> toolchain_labels(const ProjectFile& p);

/// Where a change lies, as an alert or a finding records it: its culprit,
/// else the range it is one of, else the first check-in that had it.
struct ChangePlace {
  std::string culprit, culprit_subject;
  std::int64_t culprit_time = 0;
  std::string range_first, range_first_label, first_bad, first_bad_label;
  bool spread = false;   ///< the range is a change made in steps (reports::range_note)
  bool carried = false;  ///< the range reaches back to a module's last measurement
};
/// "1a2b3c4d5e6f 2026-01-12 [Inliner] Raise …", "toolchain 2026-01-19",
/// "one of A..B (why a range)", or "B (not pinned)".
std::string change_place_text(const ChangePlace& place);

/// " and stayed broken for 3 sampled check-ins in a row" (what made a
/// build-broken alert); "" for one, or when not recorded (an alert of an
/// older driftwatch).
std::string broken_samples_text(int broken_samples);

/// What a modules-failing or compiler-failing alert says of its `n`
/// modules of `suite`: "1 more module of holdout fails to compile with the
/// policy (…)", "the compiler fails on 2 more modules of …". One wording
/// for the sweep's findings and the stored alerts.
std::string failing_modules_text(const std::string& kind, int n, const std::string& suite);

/// "; it builds again at 1a2b3c4d5e6f" (or "toolchain <label>") for a
/// failure alert whose cause a later check-in no longer shows: the build
/// (build-broken), the policy running (policy-unusable), or the `modules`
/// failing modules compiling (modules-failing, compiler-failing). "" when
/// `sha` is empty (still seen) or the kind has no such end. `taken`: of
/// the modules, those failing again by then, a later alert's, said apart
/// ("all compile again but 1 that fails again …").
std::string recovered_text(const std::string& kind, const std::string& sha, const std::string& label, int modules,
                           int taken = 0);
/// Whether an alert of this kind is resolved once a later check-in no longer shows its cause.
bool recovers(const std::string& kind);

}  // namespace sweep
