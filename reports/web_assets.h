#pragma once
// The HTML report's inlined assets, embedded into the binary at build time
// (reports/web: Apache ECharts from npm, the page's script and style).
#include "reports/render.h"

namespace reports {

/// The embedded charting library, page script and style.
HtmlAssets web_assets();

}  // namespace reports
