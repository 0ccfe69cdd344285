//===- Heuristic.cpp - dwcc's default optimization heuristic --------------===//
#include "Defaults.h"
#include "Heuristic.h"

#include <utility>

using namespace dwcc;

int dwcc::inlineThresholdFor(OptLevel Level) {
  switch (Level) {
  case OptLevel::Oz:
    return heuristic::OzInlineThreshold;
  case OptLevel::Os:
    return heuristic::OsInlineThreshold;
  case OptLevel::O3:
    return heuristic::O3InlineThreshold;
  case OptLevel::O1:
  case OptLevel::O2:
    return heuristic::O2InlineThreshold;
  case OptLevel::O0:
    break;
  }
  return -1; // -O0 runs no inliner but the always-inliner.
}

/// True if \p Arg sets option \p Name ("-name", "--name", "-name=...").
static bool setsOption(const std::string &Arg, const std::string &Name) {
  size_t Dashes = Arg.compare(0, 2, "--") == 0 ? 2 : Arg.compare(0, 1, "-") == 0 ? 1 : 0;
  if (Dashes == 0 || Arg.compare(Dashes, Name.size(), Name) != 0)
    return false;
  size_t End = Dashes + Name.size();
  return End == Arg.size() || Arg[End] == '=';
}

std::vector<std::string>
dwcc::heuristicOptions(OptLevel Level, const std::vector<std::string> &UserArgs) {
  std::vector<std::pair<std::string, int>> Defaults = {
      {"inline-instr-cost", heuristic::InstrCost},
      {"inline-call-penalty", heuristic::CallPenalty},
      {"inline-memaccess-cost", heuristic::MemAccessCost},
      {"inline-cold-callsite-threshold", heuristic::ColdCallSiteThreshold},
  };
  if (int Threshold = inlineThresholdFor(Level); Threshold >= 0)
    Defaults.emplace_back("inline-threshold", Threshold);

  std::vector<std::string> Options;
  for (const auto &[Name, Value] : Defaults) {
    bool UserSet = false;
    for (const std::string &Arg : UserArgs)
      UserSet |= setsOption(Arg, Name);
    if (!UserSet)
      Options.push_back("-" + Name + "=" + std::to_string(Value));
  }
  return Options;
}
