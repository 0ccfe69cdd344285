// driftwatch report end to end: a real sweep of the 8-week history (with
// hostile text in the culprit's subject and in an alert's note) rendered and
// opened in Debian's headless Chromium; bad output directories; an empty
// database; --serve answering a real HTTP GET.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <thread>

#include "tests/support/sweep_project.h"

namespace {

using nlohmann::json;
using testing::Project;
namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

/// A plain HTTP/1.0 GET on 127.0.0.1; the whole response, or "" when nothing listens.
std::string http_get(int port, const std::string& path) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    std::string req = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (write(fd, req.data(), req.size()) == ssize_t(req.size())) {
      char buf[65536];
      for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) out.append(buf, std::size_t(n));
    }
  }
  close(fd);
  return out;
}

}  // namespace

TEST_CASE(
    "report of a swept history in headless Chromium: every point drawn, the culprit's hover, no injected script") {
  Project p("history-8w-hostile.toml");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  auto alert = Project::psql(p.dsn, "SELECT min(id) FROM alerts WHERE culprit_commit_id IS NOT NULL");
  REQUIRE(!alert.empty());
  auto ack = p.run({"alerts", "--config", p.config, "ack", alert, "--by", "eve <script>window.pwned=4</script>",
                    "--note", "looking <img src=x onerror=\"window.pwned=3\">\nsecond 'line'"});
  INFO(ack.output);
  REQUIRE(ack.exit_code == 0);
  // A person said one alert (not the hovered one) was noise: the charts no longer mark it.
  auto noise = Project::psql(p.dsn,
                             "SELECT max(a.id) FROM alerts a LEFT JOIN commits c ON c.id = a.culprit_commit_id "
                             "WHERE COALESCE(c.subject, '') NOT LIKE '%<script>%'");
  REQUIRE(!noise.empty());
  REQUIRE(p.run({"alerts", "--config", p.config, "ignore", noise, "--by", "ana"}).exit_code == 0);

  auto out = p.dir / "report";
  auto r = p.run({"report", "--config", p.config, "--out", out.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("culprits found: ") != std::string::npos);
  CHECK(r.output.find("retraining: not decided yet") != std::string::npos);

  auto data = json::parse(read(out / "report.json"));
  CHECK(data["schema_version"] == 3);
  REQUIRE(data["suites"].size() == 1);
  int evaluated = data["suites"][0]["evaluated"];
  int points = static_cast<int>(data["suites"][0]["points"].size());  // failed builds too
  CHECK(std::to_string(evaluated) == Project::psql(p.dsn, "SELECT count(*) FROM evaluations WHERE status = 'done'"));
  // Every module measured at both ends: the change decide reads is the plain difference.
  const auto& o = data["overview"][0];
  CHECK(o["change"].get<double>() ==
        doctest::Approx(o["latest_uplift"].get<double>() - o["baseline_uplift"].get<double>()));
  std::string culprit;
  for (const auto& a : data["alerts"])
    if (a["culprit"]["subject"].get<std::string>().find("<script>window.pwned=1</script>") != std::string::npos)
      culprit = a["culprit"]["sha"];
  REQUIRE_MESSAGE(!culprit.empty(), data["alerts"].dump());

  auto md = read(out / "report.md");
  CHECK(md.find("<script>") == std::string::npos);
  CHECK(md.find("<img") == std::string::npos);
  CHECK(md.find("looking &lt;img src=x onerror=\"window.pwned=3\"&gt; second 'line'") != std::string::npos);

  // The screenshot stays in the test's working directory (build/tests) for people to look at.
  auto shot = fs::absolute("report_browser_test.png");
  fs::remove(shot);
  common::ProcessSpec node;
  node.argv = {"node", std::string(DRIFTWATCH_SOURCE_DIR) + "/tests/browser/report_check.mjs",
               (out / "index.html").string(), shot.string(), culprit};
  node.timeout = std::chrono::minutes(3);
  auto b = common::run_process(node).take();
  INFO("node: ", b.output, " (needs tests/browser/node_modules: bash scripts/web-deps)");
  REQUIRE(b.exit_code == 0);
  auto page = json::parse(common::last_line(b.output));
  CHECK(page["console_errors"].empty());
  auto charts = page["charts"]["testdata"];
  // A column per check-in of the series, a gap where nothing was measured.
  CHECK(points > evaluated);  // the history has a check-in that does not build
  CHECK(charts["uplift_points"] == points);
  CHECK(charts["default_points"] == points);
  CHECK(charts["learned_points"] == points);
  CHECK(charts["heatmap_columns"] == points);
  CHECK(charts["heatmap_rows"] == 5);
  CHECK(charts["heatmap_cells"] == 5 * evaluated);
  // One mark per check-in named by an alert that is not ignored.
  std::set<std::string> marked;
  std::string ignored;
  for (const auto& a : data["alerts"]) {
    auto sha = a["culprit"]["sha"].get<std::string>();
    if (sha.empty()) sha = a["first_bad"].get<std::string>();
    if (a["state"] == "ignored") ignored = sha;
    else marked.insert(sha);
  }
  REQUIRE(!ignored.empty());
  REQUIRE(marked.count(ignored) == 0);  // no other alert names it: its mark would be gone
  CHECK(charts["marked_checkins"] == static_cast<int>(marked.size()));
  // The lowest point sits nearest the chart's edge, and hovering it still shows its tooltip.
  std::string lowest_sha = page["lowest"]["sha"], lowest_tip = page["lowest"]["tooltip"];
  CHECK_MESSAGE(lowest_tip.find(lowest_sha.substr(0, 12)) != std::string::npos, page["lowest"].dump());
  std::string tooltip = page["tooltip"];
  CHECK(tooltip.find(culprit.substr(0, 12)) != std::string::npos);
  CHECK(tooltip.find("Merge branch 'side/cost-model' <script>window.pwned=1</script> \"double\" 'single'") !=
        std::string::npos);
  CHECK(tooltip.find("culprit") != std::string::npos);
  std::string totals_tip = page["totals_tooltip"];
  CHECK(totals_tip.find("culprit") != std::string::npos);
  CHECK(charts["totals_culprit_lines"] == static_cast<int>(marked.size()));
  CHECK(page["injected_ran"] == false);
  CHECK(page["script_elements"] == 3);
  CHECK(fs::file_size(shot) > 20000);
}

TEST_CASE("report: an empty database gives a report that says so, and a directory of other files is refused") {
  Project p;
  auto out = p.dir / "report";
  auto r = p.run({"report", "--config", p.config, "--out", out.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(read(out / "index.html").find("Nothing measured yet") != std::string::npos);
  CHECK(read(out / "report.md").find("Nothing measured yet") != std::string::npos);
  CHECK(json::parse(read(out / "report.json"))["empty"] == true);
  CHECK(r.output.find("culprits found: 0") != std::string::npos);

  // An earlier report is replaced whole: its other formats are written
  // again from the same data, neither lost nor left as the last run's.
  for (const char* f : {"index.html", "report.json"}) std::ofstream(out / f) << "the last run's";
  // What a report killed mid-write left goes once its writer is gone (an
  // old one whoever wrote it); a live writer's stays.
  auto killed = out / "index.html.tmp-999999999-0-1", stale = out / "report.json.tmp-1-0-1",
       live = out / ("report.md.tmp-" + std::to_string(getpid()) + "-0-1");
  for (const auto& f : {killed, stale, live}) std::ofstream(f) << "half";
  fs::last_write_time(killed, fs::file_time_type::clock::now() - std::chrono::minutes(5));
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(2));
  fs::last_write_time(live, fs::file_time_type::clock::now() - std::chrono::minutes(5));  // its writer runs
  auto again = p.run({"report", "--config", p.config, "--out", out.string(), "--format", "md"});
  CHECK(again.exit_code == 0);
  CHECK_FALSE(fs::exists(killed));
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(live));
  fs::remove(live);
  CHECK(fs::exists(out / "report.md"));
  CHECK(read(out / "index.html").find("Nothing measured yet") != std::string::npos);
  CHECK(json::parse(read(out / "report.json"))["empty"] == true);
  CHECK(again.output.find("wrote " + (out / "index.html").string()) != std::string::npos);
  // A directory of the Markdown alone gets the Markdown alone.
  auto md_only = p.dir / "md-only";
  CHECK(p.run({"report", "--config", p.config, "--out", md_only.string(), "--format", "md"}).exit_code == 0);
  CHECK(fs::exists(md_only / "report.md"));
  CHECK_FALSE(fs::exists(md_only / "index.html"));
  CHECK_FALSE(fs::exists(md_only / "report.json"));
  // Serving needs the HTML: one written now, or an earlier report's written again.
  auto serve_md = p.run({"report", "--config", p.config, "--out", md_only.string(), "--format", "md", "--serve"});
  CHECK(serve_md.exit_code == 2);
  CHECK(serve_md.output.find("report --serve serves the HTML page: add html to --format") != std::string::npos);

  auto other = p.dir / "notes";
  fs::create_directories(other);
  std::ofstream(other / "todo.txt") << "mine";
  auto refused = p.run({"report", "--config", p.config, "--out", other.string()});
  CHECK(refused.exit_code == 2);
  CHECK(refused.output.find("driftwatch: " + other.string() + " holds something other than a report ('todo.txt')") ==
        0);
  CHECK(common::trim(refused.output).find('\n') == std::string::npos);
  CHECK(read(other / "todo.txt") == "mine");
  CHECK_FALSE(fs::exists(other / "index.html"));

  std::ofstream(p.dir / "file") << "x";
  auto not_dir = p.run({"report", "--config", p.config, "--out", (p.dir / "file").string()});
  CHECK(not_dir.exit_code == 2);
  CHECK(read(p.dir / "file") == "x");

  auto bad = p.run({"report", "--config", p.config, "--out", (p.dir / "r2").string(), "--format", "html,pdf"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.output == "driftwatch: unknown report format 'pdf' (html, md or json)\n");
  CHECK_FALSE(fs::exists(p.dir / "r2"));
}

TEST_CASE("report --serve answers a real HTTP GET on 127.0.0.1") {
  Project p;
  auto out = p.dir / "served";
  auto log = p.dir / "serve.log";
  common::ProcessSpec spec;
  spec.argv = {DRIFTWATCH_BIN};
  for (const auto& a : p.args({"report", "--config", p.config, "--out", out.string(), "--serve", "--port", "0"}, p.dsn))
    spec.argv.push_back(a);
  spec.log_file = log;
  auto child = common::Child::start(spec).take();
  int port = 0;
  const std::string marker = "serving the report at http://127.0.0.1:";
  for (int i = 0; i < 600 && port == 0 && !child.try_wait(); ++i) {
    auto text = read(log);
    if (auto at = text.find(marker); at != std::string::npos)
      port = std::stoi(text.substr(at + marker.size()));
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  INFO(read(log));
  REQUIRE(port > 0);
  auto page = http_get(port, "/");
  CHECK(page.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(page.find("text/html") != std::string::npos);
  CHECK(page.find("<title>driftwatch report: toy</title>") != std::string::npos);
  auto md = http_get(port, "/report.md");
  CHECK(md.find("# Drift report: toy") != std::string::npos);
  // A file beside the report's directory is never served, however the path climbs to it.
  std::ofstream(p.dir / "beside.txt") << "sentinel-beside-the-report";
  for (const char* climb : {"/../beside.txt", "/%2e%2e/beside.txt", "/..%2fbeside.txt", "/./../beside.txt"}) {
    auto r = http_get(port, climb);
    INFO(climb, ": ", r);
    CHECK(r.rfind("HTTP/1.1 ", 0) == 0);
    CHECK(r.rfind("HTTP/1.1 200", 0) != 0);
    CHECK(r.find("sentinel-beside-the-report") == std::string::npos);
  }
  child.kill_group();
}

TEST_CASE(
    "report: a suite added since the last sweep is 'not measured yet', not 'no check-in built', whatever failed") {
  Project p;
  p.set("every = \"2w\"", "every = \"1\"");  // every check-in, the broken rename's too
  p.set("bisect = true", "bisect = false");
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  REQUIRE(p.psql("SELECT count(*) FROM builds WHERE outcome <> 'ok'") != "0");
  auto built = p.run(
      {"suite", "build", "--from-compile-commands", (p.dir / "compile_commands.json").string(), "--name", "second"});
  REQUIRE_MESSAGE(built.exit_code == 0, built.output);
  p.set("names = [\"testdata\"]", "names = [\"testdata\", \"second\"]");
  auto out = p.dir / "report";
  auto r = p.run({"report", "--config", p.config, "--out", out.string(), "--format", "json,md"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto j = json::parse(read(out / "report.json"));
  REQUIRE(j["overview"].size() == 2);
  CHECK(j["overview"][0]["measured"] == true);
  CHECK(j["overview"][0]["unmeasured"] == "");
  CHECK(j["overview"][1]["suite"] == "second");
  CHECK(j["overview"][1]["measured"] == false);
  CHECK(j["overview"][1]["unmeasured"] == "not measured yet");
  CHECK(read(out / "report.md").find("no check-in built") == std::string::npos);
}

TEST_CASE(
    "report: a module the compiler fails on at every check-in is still the suite's, and the uplift is over the "
    "others") {
  Project p;
  p.make_small();
  p.use_prebuilt_toolchains(DWCC_BIN);
  // Both nightlies' compilers fail json.c, whatever the heuristic: no step,
  // so no alert; only the report can say the suite is measured in part.
  for (const char* date : {"2026-01-05", "2026-01-12"}) {
    auto bin = p.dir / (std::string("nightly-") + date) / "bin";
    fs::rename(bin / "dwcc", bin / "dwcc.real");
    std::ofstream(bin / "dwcc")
        << "#!/bin/sh\ncase \"$*\" in *json*) echo 'LLVM ERROR: json is not for us' >&2; exit 1;; "
           "esac\nexec \"$(dirname \"$0\")/dwcc.real\" \"$@\"\n";
    fs::permissions(bin / "dwcc", fs::perms::owner_all);
  }
  auto s = p.sweep(p.dsn);
  INFO(s.output);
  REQUIRE(s.exit_code == 0);
  REQUIRE(s.output.find("1 module(s) failed to compile (first: json.c (default)") != std::string::npos);
  auto out = p.dir / "report";
  auto r = p.run({"report", "--config", p.config, "--out", out.string(), "--format", "json,md"});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto j = json::parse(read(out / "report.json"));
  auto modules = j["suites"][0]["modules"].get<std::vector<std::string>>();
  CHECK(std::find(modules.begin(), modules.end(), "json.c") != modules.end());
  CHECK(modules.size() == 5);
  CHECK(j["overview"][0]["latest_modules_measured"] == 4);
  CHECK(j["overview"][0]["modules"] == 5);
  CHECK(read(out / "report.md").find(" over 4 of 5 modules") != std::string::npos);
  // decide's share of modules no worse says what it is over, too.
  auto d = p.run({"decide", "--config", p.config});
  INFO(d.output);
  CHECK(d.output.find("(over 4 of the suite's 5 modules: the compiler's default failed on the others there)") !=
        std::string::npos);
  // The share and its threshold in per cent, as the sentence says them
  // (before: "measured 1 threshold 0.9").
  auto line = d.output.substr(d.output.find("no_worse"));
  line = line.substr(0, line.find('\n'));
  CHECK(std::regex_search(line, std::regex(R"(measured \d+\.\d% +threshold \d+\.\d% )")));
}

TEST_CASE("report: a retraining decision that judged an older head than the latest measured says it is out of date") {
  Project p;
  p.set("bisect = true", "bisect = false");
  p.set("every = \"2w\"", "every = \"1w\"");
  // Last night's range and decision end with week 3.
  auto week3 = p.git({"log", "-1", "--format=%cs", "--grep=Describe the cost model", "main"});
  REQUIRE(week3.size() == 10);
  p.set("until = \"\"", "until = \"" + week3 + "\"");
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  auto first = p.run({"decide", "--config", p.config});
  INFO(first.output);
  REQUIRE((first.exit_code == 0 || first.exit_code == 1));
  // Tonight's sweep measures the rest, and nobody decides again.
  p.set("until = \"" + week3 + "\"", "until = \"\"");
  REQUIRE(p.sweep(p.dsn).exit_code == 0);
  auto out = p.dir / "report";
  auto r = p.run({"report", "--config", p.config, "--out", out.string()});
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("; out of date: judged at ") != std::string::npos);
  auto data = json::parse(read(out / "report.json"));
  REQUIRE(data["decisions"].size() == 1);
  CHECK(data["decisions"][0]["stale"].get<std::string>().find("run `driftwatch decide` for the head") !=
        std::string::npos);
  CHECK(read(out / "report.md").find("*Out of date: judged at ") != std::string::npos);
  CHECK(read(out / "index.html").find("class=\"stale\"") != std::string::npos);
  // Decided again at the head: current.
  auto again = p.run({"decide", "--config", p.config});
  REQUIRE((again.exit_code == 0 || again.exit_code == 1));
  auto now = p.run({"report", "--config", p.config, "--out", out.string()});
  INFO(now.output);
  REQUIRE(now.exit_code == 0);
  CHECK(now.output.find("out of date") == std::string::npos);
  data = json::parse(read(out / "report.json"));
  CHECK(data["decisions"][0]["stale"].is_null());
}
