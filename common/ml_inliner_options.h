#pragma once
// The prefixes of LLVM's ML inliner options that driftwatch sets itself on
// every compile it measures. Given again on a compile line (a recipe's, a
// corpus module's), LLVM refuses the learned compile (an option given twice),
// and a default compile with a model built in would not be the default
// heuristic: such lines are refused where they are read.
namespace common {

inline constexpr const char* kMlInlinerOptionPrefixes[] = {"-enable-ml-inliner", "-inliner-interactive", "-ml-inliner",
                                                         "-training-log"};

}  // namespace common
