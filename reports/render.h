#pragma once
// The report's three renderings of one ReportData: JSON (versioned, for
// other tools), Markdown (for an issue tracker or an email) and one
// self-contained HTML file (the charting library, the page's script and the
// data inlined, so it opens offline). Pure: values in, text out. All text
// from elsewhere (commit subjects, authors, module and suite names, notes)
// is escaped for where it lands.
#include <string>
#include <string_view>
#include <vector>

#include "reports/report_data.h"

namespace reports {

/// What the HTML page inlines besides the data (reports/web, embedded at build time).
struct HtmlAssets {
  std::string_view charts_js;  ///< the charting library (Apache ECharts, minified)
  std::string_view page_js;    ///< draws the charts from the inlined data
  std::string_view page_css;
};

/// Everything in the report as JSON with "schema_version".
std::string render_json(const ReportData& data);
/// The overview, the alerts and the retraining decision with their evidence.
std::string render_markdown(const ReportData& data);
/// One HTML file: overview and tables as markup, charts drawn by `assets` from the inlined JSON.
std::string render_html(const ReportData& data, const HtmlAssets& assets);

/// Five lines for a terminal: culprits found, uplift now, the baseline, open alerts, the decision.
std::vector<std::string> summary_lines(const ReportData& data);

/// Text for HTML element content and attribute values: & < > " ' escaped.
std::string html_escape(std::string_view s);
/// JSON text made safe inside <script>: '<', '>', '&', U+2028 and U+2029 as \u escapes
/// (valid only inside JSON strings, which is the only place JSON holds them).
std::string script_safe_json(std::string_view json);
/// Text for one line of Markdown: specials backslash-escaped, HTML's < > & as
/// entities, line breaks and other control characters as spaces.
std::string markdown_escape(std::string_view s);

}  // namespace reports
