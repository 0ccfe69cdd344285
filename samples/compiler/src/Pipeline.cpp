//===- Pipeline.cpp - IR optimization pipeline ----------------------------===//
#include "Pipeline.h"
#include "Heuristic.h"

#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/SROA.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"

using namespace llvm;

static OptimizationLevel toPassBuilderLevel(dwcc::OptLevel Level) {
  switch (Level) {
  case dwcc::OptLevel::O0:
    return OptimizationLevel::O0;
  case dwcc::OptLevel::O1:
    return OptimizationLevel::O1;
  case dwcc::OptLevel::O2:
    return OptimizationLevel::O2;
  case dwcc::OptLevel::O3:
    return OptimizationLevel::O3;
  case dwcc::OptLevel::Os:
    return OptimizationLevel::Os;
  case dwcc::OptLevel::Oz:
    break;
  }
  return OptimizationLevel::Oz;
}

/// Adds the pipeline choices of Heuristic.h through PassBuilder's extension
/// points.
static void registerHeuristicPasses(PassBuilder &PB) {
  using namespace dwcc::heuristic;
  if (SimplifyBeforeInliner)
    PB.registerPipelineStartEPCallback([](ModulePassManager &MPM, OptimizationLevel L) {
      if (L == OptimizationLevel::O0)
        return;
      FunctionPassManager FPM;
      FPM.addPass(SROAPass(SROAOptions::ModifyCFG));
      FPM.addPass(EarlyCSEPass());
      FPM.addPass(InstCombinePass());
      FPM.addPass(SimplifyCFGPass());
      MPM.addPass(createModuleToFunctionPassAdaptor(std::move(FPM)));
    });
  if (MergeFunctionsAtEnd)
    PB.registerOptimizerLastEPCallback([](ModulePassManager &MPM, OptimizationLevel L) {
      if (L.getSizeLevel() > 0)
        MPM.addPass(MergeFunctionsPass());
    });
}

void dwcc::buildAndRunPipeline(Module &M, TargetMachine &TM, OptLevel Level) {
  LoopAnalysisManager LAM;
  FunctionAnalysisManager FAM;
  CGSCCAnalysisManager CGAM;
  ModuleAnalysisManager MAM;

  // Vectorizers as clang enables them: on at -O2/-O3, loop vectorizer only at
  // -Os, neither at -Oz.
  PipelineTuningOptions PTO;
  PTO.LoopVectorization = Level == OptLevel::O2 || Level == OptLevel::O3 || Level == OptLevel::Os;
  PTO.SLPVectorization = Level == OptLevel::O2 || Level == OptLevel::O3;

  PassBuilder PB(&TM, PTO);
  registerHeuristicPasses(PB);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);

  OptimizationLevel PBLevel = toPassBuilderLevel(Level);
  ModulePassManager MPM = PBLevel == OptimizationLevel::O0
                              ? PB.buildO0DefaultPipeline(PBLevel)
                              : PB.buildPerModuleDefaultPipeline(PBLevel);
  MPM.run(M, MAM);
}
