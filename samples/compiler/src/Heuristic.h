//===- Heuristic.h - dwcc's default optimization heuristic ------*- C++ -*-===//
//
// Everything that decides *how much* dwcc optimizes for size lives here, as
// named constants, so that a change to the default heuristic is a change to
// this file. Thresholds and cost constants are handed to LLVM as the defaults
// of its own command-line options (Heuristic.cpp); an option given explicitly
// on dwcc's command line always wins over the value here. The pipeline
// choices are read by Pipeline.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef DWCC_HEURISTIC_H
#define DWCC_HEURISTIC_H

namespace dwcc::heuristic {

//===-- Inline thresholds ----------------------------------------------------//
// Passed as -inline-threshold. LLVM clamps a minsize/optsize caller's
// threshold to 5/50 only when -inline-threshold is NOT given, so setting it
// here makes dwcc's value the one that counts for every caller.

/// -Oz: LLVM's InlineConstants::OptMinSizeThreshold. Only callees that are
/// about as small as the call sequence itself (or static with a single caller)
/// get inlined.
constexpr int OzInlineThreshold = 5;
/// -Os: LLVM's InlineConstants::OptSizeThreshold.
constexpr int OsInlineThreshold = 50;
/// -O1/-O2: LLVM's -inlinedefault-threshold.
constexpr int O2InlineThreshold = 225;
/// -O3: LLVM's InlineConstants::OptAggressiveThreshold.
constexpr int O3InlineThreshold = 250;

//===-- Inline cost model ----------------------------------------------------//
// Defaults of LLVM's -inline-* cost options; all values are LLVM 19's own.

/// -inline-instr-cost: cost of one ordinary instruction in the callee.
constexpr int InstrCost = 5;
/// -inline-call-penalty: cost of each call the callee itself makes, and the
/// saving credited for removing the call being inlined.
constexpr int CallPenalty = 25;
/// -inline-memaccess-cost: extra cost of a load or store. Zero: on x86 a
/// memory operand is usually folded into the instruction that uses it.
constexpr int MemAccessCost = 0;
/// -inline-cold-callsite-threshold: threshold for call sites LLVM's block
/// frequency marks as cold.
constexpr int ColdCallSiteThreshold = 45;

//===-- Pipeline choices -----------------------------------------------------//

/// Run a small SROA/EarlyCSE/InstCombine/SimplifyCFG function pipeline at the
/// very start, before LLVM's module simplification and the inliner.
constexpr bool SimplifyBeforeInliner = false;
/// Add MergeFunctions at the end of the -Os/-Oz pipeline. Off, as in LLVM:
/// it rarely finds identical functions in C and costs compile time.
constexpr bool MergeFunctionsAtEnd = false;

} // namespace dwcc::heuristic

#endif // DWCC_HEURISTIC_H
