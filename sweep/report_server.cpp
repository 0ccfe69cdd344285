// `report --serve`: the report's directory over HTTP on 127.0.0.1 only, for
// people who read it from another machine through an SSH tunnel.
#include <httplib.h>

#include "common/text.h"
#include "sweep/report.h"

namespace sweep {

common::Status serve_report(const std::filesystem::path& dir, int port,
                            const std::function<void(const std::string&)>& ready) {
  httplib::Server server;
  if (!server.set_mount_point("/", dir.string()))
    return common::Error{"cannot serve " + dir.string() + ": not a directory"};
  server.set_file_extension_and_mimetype_mapping("md", "text/markdown; charset=utf-8");
  server.set_file_extension_and_mimetype_mapping("json", "application/json");
  server.set_file_extension_and_mimetype_mapping("html", "text/html; charset=utf-8");
  int bound = port == 0 ? server.bind_to_any_port("127.0.0.1") : (server.bind_to_port("127.0.0.1", port) ? port : -1);
  if (bound < 0) return common::Error{"cannot listen on 127.0.0.1:" + std::to_string(port) + " (in use?)"};
  ready("http://127.0.0.1:" + std::to_string(bound) + "/");
  if (!server.listen_after_bind()) return common::Error{"the report server stopped"};
  return common::Ok{};
}

}  // namespace sweep
