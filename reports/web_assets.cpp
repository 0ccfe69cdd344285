#include "reports/web_assets.h"

#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace reports {
namespace embedded {
const std::vector<std::pair<std::string_view, std::string_view>>& web_files();
}

HtmlAssets web_assets() {
  auto find = [](std::string_view path) {
    for (const auto& [p, content] : embedded::web_files())
      if (p == path) return content;
    throw common::Fatal("the report's asset " + std::string(path) + " was not embedded");
  };
  return {find("node_modules/echarts/dist/echarts.min.js"), find("report.js"), find("report.css")};
}

}  // namespace reports
