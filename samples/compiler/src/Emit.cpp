//===- Emit.cpp - target machine and object emission ----------------------===//
#include "Emit.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

using namespace llvm;

static const char *const DefaultTriple = "x86_64-unknown-linux-gnu";

/// Code generation level as clang picks it: -Os/-Oz generate code like -O2.
static CodeGenOptLevel toCodeGenLevel(dwcc::OptLevel Level) {
  switch (Level) {
  case dwcc::OptLevel::O0:
    return CodeGenOptLevel::None;
  case dwcc::OptLevel::O1:
    return CodeGenOptLevel::Less;
  case dwcc::OptLevel::O3:
    return CodeGenOptLevel::Aggressive;
  case dwcc::OptLevel::O2:
  case dwcc::OptLevel::Os:
  case dwcc::OptLevel::Oz:
    break;
  }
  return CodeGenOptLevel::Default;
}

std::unique_ptr<TargetMachine> dwcc::createTargetMachine(Module &M, OptLevel Level,
                                                         std::string &Error) {
  Triple TT(M.getTargetTriple().empty() ? DefaultTriple : M.getTargetTriple());
  if (TT.getArch() != Triple::x86_64) {
    Error = "unsupported target triple '" + TT.str() + "' (dwcc emits x86-64 only)";
    return nullptr;
  }
  const Target *T = TargetRegistry::lookupTarget(TT.str(), Error);
  if (!T)
    return nullptr;

  // Position-independent code if the front end asked for it (clang records
  // -fPIC/-fPIE as a module flag), as clang itself would.
  std::optional<Reloc::Model> RM;
  if (M.getPICLevel() != PICLevel::NotPIC)
    RM = Reloc::PIC_;

  TargetOptions Options;
  std::unique_ptr<TargetMachine> TM(T->createTargetMachine(
      TT.str(), /*CPU=*/"", /*Features=*/"", Options, RM, std::nullopt, toCodeGenLevel(Level)));
  if (!TM) {
    Error = "cannot create a target machine for '" + TT.str() + "'";
    return nullptr;
  }
  M.setTargetTriple(TT.str());
  M.setDataLayout(TM->createDataLayout());
  return TM;
}

bool dwcc::emitObject(Module &M, TargetMachine &TM, raw_pwrite_stream &OS, std::string &Error) {
  legacy::PassManager PM;
  if (TM.addPassesToEmitFile(PM, OS, nullptr, CodeGenFileType::ObjectFile)) {
    Error = "the target cannot emit object files";
    return false;
  }
  PM.run(M);
  return true;
}
