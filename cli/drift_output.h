#pragma once
// How sweep and bisect tell people what the drift analysis found.
#include "sweep/drift.h"

namespace cli {

/// The changes found, one sentence each, with what bisection spent.
void print_drift(const sweep::DriftReport& report);

}  // namespace cli
