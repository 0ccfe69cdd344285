//===- Pipeline.h - IR optimization pipeline --------------------*- C++ -*-===//
#ifndef DWCC_PIPELINE_H
#define DWCC_PIPELINE_H

#include "OptLevel.h"

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace dwcc {

/// Runs LLVM's per-module default pipeline for \p Level on \p M, adjusted by
/// the pipeline choices in Heuristic.h.
void buildAndRunPipeline(llvm::Module &M, llvm::TargetMachine &TM, OptLevel Level);

} // namespace dwcc

#endif // DWCC_PIPELINE_H
