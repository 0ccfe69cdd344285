#pragma once
// `driftwatch report`: assembles a project's drift report from the database
// (each suite's series in first-parent order with per-module ratios, the
// alerts with their histories, build failures, feature-set changes, the
// active policy) and writes it as HTML, Markdown and JSON into a directory
// that holds nothing else. Read-only on the database.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/result.h"
#include "db/database.h"
#include "reports/report_data.h"
#include "sweep/project_file.h"

namespace sweep {

/// The project's report as it stands in the database.
reports::ReportData assemble_report(const ProjectFile& project, const std::filesystem::path& data_dir,
                                    db::Database& db);

/// The file each format is written to: html → index.html, md → report.md, json → report.json.
common::Result<std::vector<std::string>> report_files(const std::vector<std::string>& formats);

/// Writes the formats into `dir` (created if missing), and again those an
/// earlier report left there, so that its files stay one report. A
/// directory holding anything but report files is refused, never
/// overwritten. The paths written.
common::Result<std::vector<std::filesystem::path>> write_report(const reports::ReportData& data,
                                                                const std::filesystem::path& dir,
                                                                std::vector<std::string> formats);

/// Serves `dir` on 127.0.0.1:port (0: any free port) until the process is
/// stopped; `ready` gets the URL once it listens. Error when it cannot listen.
common::Status serve_report(const std::filesystem::path& dir, int port,
                            const std::function<void(const std::string&)>& ready);

}  // namespace sweep
