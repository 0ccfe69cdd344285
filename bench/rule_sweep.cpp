// How far a one-number change of the compiler's own rule moves .text: the
// default inlining decision, except that call sites whose cost estimate is
// below ADD are inlined too, and those above REMOVE are not. A rule of a few
// numbers cannot fit one module, so what it gains on one suite it should keep
// on another: this measures whether such a rule pays on unseen packages.
// Usage: rule_sweep DWCC SUITE_DIR... --rules ADD:REMOVE[:USERS[:COND...]][,...] [--jobs N] [--modules FILE]
//   (ADD or REMOVE "-" leaves that side as the default's; USERS limits ADD to
//   callees with at most that many users, where inlining every call can leave
//   a static callee dead: a gain the single-flip search cannot see; each
//   COND, FEATURE>N, FEATURE<N or FEATURE=N, limits ADD further to sites whose
//   feature passes it, to see which of the compiler's features tell a
//   departure that pays from one that does not; FILE
//   gets one tab-separated line per module compiled under both: rule, suite,
//   module, default .text, rule's .text, to see where a rule wins and loses)
#include <fmt/core.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "bench/positional_args.h"
#include "evaluator/evaluation.h"
#include "policy/compiler.h"
#include "policy/runner.h"

namespace fs = std::filesystem;

namespace {

constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

struct Condition {
  std::string feature;
  char op = '>';
  double value = 0;
  std::string text;
  bool holds(double v) const { return op == '>' ? v > value : op == '<' ? v < value : v == value; }
};

struct Rule {
  double add = kNone, remove = kNone, users = kNone;
  std::vector<Condition> conditions;
  std::string label() const {
    auto side = [](double v) { return std::isnan(v) ? std::string("-") : fmt::format("{:g}", v); };
    std::string out = side(add) + ":" + side(remove);
    if (!std::isnan(users) || !conditions.empty()) out += ":" + side(users);
    for (const auto& c : conditions) out += ":" + c.text;
    return out;
  }
};

class RuleRunner : public policy::Runner {
 public:
  RuleRunner(Rule rule, policy::DefaultDecisionSlot slot) : rule_(rule), slot_(slot) {}
  common::Status begin(const policy::ChannelHeader& h) override {
    cost_ = h.find("cost_estimate");
    users_ = h.find("callee_users");
    default_ = h.find(policy::slot_feature_name(slot_));
    if (users_ < 0 && !std::isnan(rule_.users)) return common::Error{"the compiler sends no callee_users"};
    if (cost_ < 0 || default_ < 0) return common::Error{"the compiler sends no cost_estimate or default decision"};
    conditions_.clear();
    for (const auto& c : rule_.conditions) {
      int idx = h.find(c.feature);
      if (idx < 0) return common::Error{"the compiler sends no " + c.feature};
      conditions_.push_back(idx);
    }
    return common::Ok{};
  }
  double advise(const policy::Observation& obs) override {
    bool inline_it = obs.features[default_][0] != 0;
    double cost = obs.features[cost_][0];
    bool few_users = std::isnan(rule_.users) || obs.features[users_][0] <= rule_.users;
    for (size_t i = 0; i < conditions_.size() && few_users; ++i)
      few_users = rule_.conditions[i].holds(obs.features[conditions_[i]][0]);
    if (!inline_it && !std::isnan(rule_.add) && cost < rule_.add && few_users) inline_it = true;
    if (inline_it && !std::isnan(rule_.remove) && cost > rule_.remove) inline_it = false;
    return inline_it ? 1 : 0;
  }
  bool wants_default_decision() const override { return true; }

 private:
  Rule rule_;
  policy::DefaultDecisionSlot slot_;
  int cost_ = -1, default_ = -1, users_ = -1;
  std::vector<int> conditions_;  // header index of each of rule_.conditions
};

/// `text` as a number, all of it ("5x" and "" are refused), or "-" for none.
double number(const std::string& text, bool dash_is_none) {
  if (dash_is_none && text == "-") return kNone;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::logic_error&) {  // not a number, or out of range
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v))
    throw std::invalid_argument("'" + text + "' is not a number" + (dash_is_none ? " (nor -)" : ""));
  return v;
}

std::vector<Rule> parse_rules(const std::string& text) {
  std::vector<Rule> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      std::vector<std::string> parts;
      std::stringstream fields(item);
      for (std::string f; std::getline(fields, f, ':');) parts.push_back(f);
      auto num = [&](size_t i) { return i >= parts.size() ? kNone : number(parts[i], true); };
      Rule rule{num(0), num(1), num(2), {}};
      for (size_t i = 3; i < parts.size(); ++i) {
        auto at = parts[i].find_first_of("<>=");
        if (at == std::string::npos || at == 0)
          throw std::invalid_argument("a condition is FEATURE>N, FEATURE<N or FEATURE=N, not " + parts[i]);
        rule.conditions.push_back(
            {parts[i].substr(0, at), parts[i][at], number(parts[i].substr(at + 1), false), parts[i]});
      }
      // Conditions limit what ADD inlines; without ADD they would change nothing.
      if (!rule.conditions.empty() && std::isnan(rule.add))
        throw std::invalid_argument("conditions need an ADD cost (they limit what it inlines)");
      out.push_back(rule);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("rule " + item + ": " + e.what());
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr const char* kUsage =
      "rule_sweep DWCC SUITE_DIR... --rules ADD:REMOVE[:USERS[:COND...]][,...] [--jobs N] [--modules FILE]";
  if (argc < 4) {
    fmt::print(stderr, "usage: {}\n", kUsage);
    return 2;
  }
  std::string dwcc = argv[1];
  std::vector<fs::path> suites;
  std::vector<Rule> rules;
  int jobs = 2;
  std::string modules_file;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--jobs") {
      jobs = bench::positive_number(bench::option_value(argc, argv, i, kUsage), kUsage);
    } else if (a == "--rules") {
      try {
        rules = parse_rules(bench::option_value(argc, argv, i, kUsage));
      } catch (const std::invalid_argument& e) {
        fmt::print(stderr, "rule_sweep: {}\n", e.what());
        return 2;
      }
    } else if (a == "--modules") {
      modules_file = bench::option_value(argc, argv, i, kUsage);
    } else if (a.rfind("--", 0) == 0) {
      fmt::print(stderr, "rule_sweep: unknown option {}\nusage: {}\n", a, kUsage);
      return 2;
    } else {
      suites.push_back(a);
    }
  }
  std::string tmpl = "/tmp/dw-rulesweep-XXXXXX";
  fs::path work = mkdtemp(tmpl.data());
  policy::CompilerInvocation cc;
  cc.argv = {dwcc, "{input}", "-o", "{output}", "-Oz"};
  auto slot = policy::detect_default_slot(cc, work / "probe").take();
  fmt::print("| rule add:remove | suite | geomean | total | wins/ties/losses | no worse |\n|---|---|---:|---:|---|---:|\n");
  for (const auto& rule : rules) {
    for (const auto& dir : suites) {
      auto suite = evaluator::load_suite(dir).take();
      evaluator::EvaluationOptions o;
      o.suite = &suite;
      o.suite_dir = dir;
      o.compiler = cc;
      o.work_dir = work / "eval";
      o.jobs = jobs;
      o.learned = [&](policy::CompatReport*) -> std::unique_ptr<policy::Runner> {
        return std::make_unique<RuleRunner>(rule, slot);
      };
      auto r = evaluator::evaluate(o);
      if (!r) {
        fmt::print("| {} | {} | failed: {} |\n", rule.label(), suite.name, r.error().message);
        continue;
      }
      const auto& s = r->summary;
      fmt::print("| {} | {} | {:+.2f}% | {:+.2f}% | {}/{}/{} | {:.1f}% |\n", rule.label(), suite.name, 100 * s.uplift,
                 100 * s.total_uplift, s.wins, s.ties, s.losses, 100 * s.no_worse_share);
      std::fflush(stdout);
      if (!modules_file.empty()) {
        std::FILE* f = std::fopen(modules_file.c_str(), "a");
        for (const auto& m : r->modules)
          if (f && m.both_ok())
            fmt::print(f, "{}\t{}\t{}\t{}\t{}\n", rule.label(), suite.name, m.name, m.by_default.sizes.text,
                       m.learned.sizes.text);
        if (f) std::fclose(f);
      }
      fs::remove_all(work / "eval");
    }
  }
  fs::remove_all(work);
}
