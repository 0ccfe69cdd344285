//===- Defaults.h - the heuristic as LLVM option defaults -------*- C++ -*-===//
#ifndef DWCC_DEFAULTS_H
#define DWCC_DEFAULTS_H

#include "OptLevel.h"

#include <string>
#include <vector>

namespace dwcc {

/// The inline threshold dwcc uses at \p Level.
int inlineThresholdFor(OptLevel Level);

/// The LLVM options ("-name=value") that make up the default heuristic at
/// \p Level, minus those the user already gave in \p UserArgs.
std::vector<std::string> heuristicOptions(OptLevel Level,
                                          const std::vector<std::string> &UserArgs);

} // namespace dwcc

#endif // DWCC_DEFAULTS_H
