// What the hook and the webhook receive of an alert's opening and of its end.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "db/drift.h"
#include "sweep/notify.h"

namespace {

db::AlertView broken_build() {
  db::AlertView a;
  a.id = 7;
  a.project = "llvm";
  a.kind = "build-broken";
  a.state = "resolved";
  a.note = std::string(db::kRecoveredNotePrefix) + "it builds again at 0123456789ab";
  a.first_bad_sha = "fedcba9876543210fedcba9876543210fedcba98";
  a.details_json = "{}";
  return a;
}

}  // namespace

TEST_CASE("an alert's end reads as over, with how it ended, and its opening as the alert alone") {
  auto a = broken_build();
  CHECK(sweep::notice_text(a, false) == "driftwatch (llvm): " + sweep::alert_sentence(a));
  CHECK(sweep::notice_text(a, true) ==
        "driftwatch (llvm): over: " + sweep::alert_sentence(a) + " (it builds again at 0123456789ab)");
  auto opened = nlohmann::json::parse(sweep::notice_json(a, false));
  auto ended = nlohmann::json::parse(sweep::notice_json(a, true));
  CHECK(opened["event"] == "opened");
  CHECK(ended["event"] == "resolved");
  CHECK(ended["id"] == 7);
  CHECK(ended["note"] == a.note);
  // `alerts --json` lists alerts, not notices: no event there.
  CHECK_FALSE(nlohmann::json::parse(sweep::alert_json(a)).contains("event"));
}

TEST_CASE("an end whose details hold where it recovered says it once, and carries the check-in as data") {
  auto a = broken_build();
  a.details_json = R"({"recovered_at": "0123456789abcdef0123456789abcdef01234567", "recovered_at_label": ""})";
  CHECK(sweep::alert_sentence(a).find("; it builds again at 0123456789ab") != std::string::npos);
  auto text = sweep::notice_text(a, true);
  CHECK(text == "driftwatch (llvm): over: " + sweep::alert_sentence(a));
  CHECK(text.find("again at", text.find("again at") + 1) == std::string::npos);
  auto ended = nlohmann::json::parse(sweep::notice_json(a, true));
  CHECK(ended["details"]["recovered_at"] == "0123456789abcdef0123456789abcdef01234567");
}

TEST_CASE("an opening sent after the failure was found over reads as the opening did on time, on every channel") {
  auto a = broken_build();
  a.details_json = R"({"recovered_at": "0123456789abcdef0123456789abcdef01234567", "broken_samples": 2})";
  auto opened = nlohmann::json::parse(sweep::notice_json(a, false));
  CHECK(opened["event"] == "opened");
  CHECK(opened["state"] == "open");
  CHECK(opened["note"] == "");
  CHECK_FALSE(opened["details"].contains("recovered_at"));
  CHECK(opened["details"]["broken_samples"] == 2);
  CHECK(opened["summary"].get<std::string>().find("again at") == std::string::npos);
  CHECK(sweep::notice_text(a, false).find("again at") == std::string::npos);
  // Its end says where it recovered.
  auto ended = nlohmann::json::parse(sweep::notice_json(a, true));
  CHECK(ended["state"] == "resolved");
  CHECK(ended["summary"].get<std::string>().find("; it builds again at 0123456789ab") != std::string::npos);
}
