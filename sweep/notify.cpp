#include "sweep/notify.h"

#include <curl/curl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "common/process.h"
#include "common/text.h"
#include "sweep/slack_text.h"

namespace sweep {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

size_t discard(char*, size_t size, size_t n, void*) { return size * n; }

/// The URL's scheme and host alone: webhooks carry their secret in the
/// credentials, the query or (Slack, Mattermost, Discord, Teams) the path,
/// and what is printed ends up in cron mail, CI logs and `alerts show`.
std::string safe_url(const std::string& url) {
  auto scheme = url.find("://");
  auto start = scheme == std::string::npos ? 0 : scheme + 3;
  auto end = url.find_first_of("/?#", start);
  auto authority = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (auto at = authority.rfind('@'); at != std::string::npos) authority.erase(0, at + 1);
  return url.substr(0, start) + authority + (end == std::string::npos ? "" : "/…");
}

/// `hung`: set when the hook ran past its time (and was killed).
common::Status run_hook(const std::string& command, std::chrono::seconds timeout, const std::string& body, bool& hung) {
  char path[] = "/tmp/driftwatch-alert-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return common::Error{"cannot create a scratch file for the alert hook"};
  bool written = write(fd, body.data(), body.size()) == static_cast<ssize_t>(body.size());
  close(fd);
  // A hook given a truncated alert would page someone with it, and again on every retry.
  if (!written) {
    unlink(path);
    return common::Error{"cannot write the alert for the hook (is /tmp full?): the hook was not run"};
  }
  common::ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", command};
  spec.stdin_file = path;
  spec.timeout = timeout;
  auto r = common::run_process(spec);
  unlink(path);
  if (!r) return r.error();
  hung = r->timed_out;
  // Not the command itself: hooks often carry a token on their command line.
  if (!r->ok()) {
    auto said = common::last_line(r->output);
    return common::Error{"the alert hook (notify.command) " + r->describe() + (said.empty() ? "" : ": " + said)};
  }
  return common::Ok{};
}

}  // namespace

common::Status post_json(const std::string& url, const std::string& body, double timeout_seconds, bool* hung) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CURL* curl = curl_easy_init();
  if (!curl) return common::Error{"cannot start an HTTP client"};
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_seconds * 1000));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  auto rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  if (hung) *hung = rc == CURLE_OPERATION_TIMEDOUT;
  if (rc != CURLE_OK) return common::Error{"webhook " + safe_url(url) + ": " + curl_easy_strerror(rc)};
  if (status < 200 || status >= 300)
    return common::Error{"webhook " + safe_url(url) + " answered HTTP " + std::to_string(status)};
  return common::Ok{};
}

Delivery deliver_pending_alerts(const ProjectFile& p, db::Database& db) {
  Delivery out;
  if (!p.notify.configured()) return out;
  // An alert raised before a channel was configured is still someone's to act on.
  db::adopt_unnotified_alerts(db, p.name);
  // A channel that hung on one alert is not tried on the rest this run: a
  // hook stuck on a dead server would otherwise cost its timeout per alert,
  // one after another, while the sweep waits. Those alerts stay pending,
  // and the skip is no attempt of theirs: the next run tries them first.
  std::string hook_hung, webhook_hung;
  auto not_tried = [](const std::string& why) { return "not tried: " + why + " on an earlier alert of this run"; };
  // Opening notices first: an end is told after its beginning, also when
  // both wait for a channel that was down.
  auto deliver = [&](const db::AlertView& listed, bool resolution) {
    auto claimed = db::claim_delivery(db, listed.id, resolution);
    if (!claimed) return;
    struct Release {
      db::Database& db;
      db::Id id;
      ~Release() {
        try {
          db::release_delivery(db, id);
        } catch (...) {  // a lost connection released it already
        }
      }
    } release{db, listed.id};
    const auto& a = *claimed;
    // An alert found over before its opening reached a channel: told there
    // now. A channel that had an opening of it (before a narrowing) hears
    // the end alone.
    bool late = !resolution && a.state == "resolved";
    bool hook_due =
        !p.notify.command.empty() && !(resolution ? a.resolution_hook_sent : a.hook_sent) && !(late && a.hook_told);
    bool webhook_due = !p.notify.webhook.empty() && !(resolution ? a.resolution_webhook_sent : a.webhook_sent) &&
                       !(late && a.webhook_told);
    db::Delivered d;
    d.fingerprint = a.fingerprint;
    d.resolution = resolution;
    if (late && !hook_due && !webhook_due) {
      db::mark_delivery(db, a.id, d);  // nothing of it is news to anyone: done, and no notice counted
      return;
    }
    auto body = notice_json(a, resolution);
    std::string tried_error;  ///< of the channels tried, those that failed
    auto failed = [&d, &tried_error](const std::string& why) {
      d.error += (d.error.empty() ? "" : "; ") + why;
      tried_error += (tried_error.empty() ? "" : "; ") + why;
    };
    auto skipped = [&d, &not_tried](const std::string& why) {
      d.error += (d.error.empty() ? "" : "; ") + not_tried(why);
    };
    if (hook_due) {
      bool hung = false;
      if (!hook_hung.empty())
        skipped(hook_hung);
      else if (auto s = run_hook(p.notify.command, p.notify.command_timeout, body, hung); s)
        d.hook = true;
      else {
        failed(s.error().message);
        if (hung) hook_hung = "the alert hook (notify.command) timed out";
      }
    }
    if (webhook_due) {
      auto payload = p.notify.webhook_format == "slack"
                         ? common::json_text(json{{"text", slack_escape(notice_text(a, resolution))}})
                         : body;
      bool hung = false;
      if (!webhook_hung.empty())
        skipped(webhook_hung);
      else if (auto s = post_json(p.notify.webhook, payload, double(p.notify.webhook_timeout.count()), &hung); s)
        d.webhook = true;
      else {
        failed(s.error().message);
        if (hung) webhook_hung = "the webhook timed out";
      }
    }
    d.attempted = d.error.empty() || !tried_error.empty();
    db::mark_delivery(db, a.id, d);
    if (d.error.empty()) {
      ++out.sent;
      if (resolution) ++out.ends_sent;
    } else {
      ++out.failed;
      if (d.hook || d.webhook) ++out.failed_on_one_channel;
      // Still pending, so each attempt so far failed on some channel: the one
      // failing now, as a channel that took the alert is not tried again.
      int attempts = resolution ? a.resolution_notify_attempts : a.notify_attempts;
      if (d.attempted && attempts + 1 >= kDeliveryAttemptsBeforeFailing) {
        ++out.failing_repeatedly;
        out.last_error = tried_error;
      }
      fmt::print(stderr, "driftwatch: {} of alert {} not delivered (retried by the next sweep): {}\n",
                 resolution ? "the end" : "the opening", a.id, d.error);
    }
  };
  for (const auto& listed : db::undelivered_alerts(db, p.name)) deliver(listed, false);
  if (p.notify.resolved)
    for (const auto& listed : db::undelivered_resolutions(db, p.name)) deliver(listed, true);
  else
    db::drop_pending_resolutions(db, p.name);
  return out;
}

}  // namespace sweep
