//===- main.cpp - dwcc driver ---------------------------------------------===//
//
// dwcc INPUT.bc -o OUT.o [-O0|-O1|-O2|-O3|-Os|-Oz] [LLVM options...]
//
// Reads LLVM bitcode or textual IR, runs LLVM's default optimization pipeline
// with dwcc's default heuristic (Heuristic.h), and writes an x86-64 object.
// Every LLVM command-line option (e.g. -inline-threshold=N,
// -enable-ml-inliner=release) works as it does on opt and llc.
//
//===----------------------------------------------------------------------===//
#include "Defaults.h"
#include "Emit.h"
#include "Pipeline.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <string>
#include <vector>

using namespace llvm;

static cl::OptionCategory DwccCategory("dwcc options");
static cl::opt<std::string> InputFilename(cl::Positional, cl::Required,
                                          cl::desc("<input bitcode or IR>"),
                                          cl::cat(DwccCategory));
static cl::opt<std::string> OutputFilename("o", cl::Required, cl::desc("Output object file"),
                                           cl::value_desc("filename"), cl::cat(DwccCategory));
static cl::opt<char> OptLevelFlag("O", cl::Prefix, cl::init('z'), cl::cat(DwccCategory),
                                  cl::desc("Optimization level: -O0 -O1 -O2 -O3 -Os -Oz "
                                           "(default -Oz)"));

static int fail(const Twine &Message) {
  errs() << "dwcc: error: " << Message << "\n";
  return 1;
}

/// Finds the -O level before LLVM parses the command line, because the
/// heuristic's option defaults depend on it. Returns false on a bad level.
static bool scanOptLevel(const std::vector<std::string> &Args, dwcc::OptLevel &Level) {
  Level = dwcc::OptLevel::Oz;
  for (const std::string &Arg : Args) {
    if (Arg.size() != 3 || Arg.compare(0, 2, "-O") != 0)
      continue;
    switch (Arg[2]) {
    case '0': Level = dwcc::OptLevel::O0; break;
    case '1': Level = dwcc::OptLevel::O1; break;
    case '2': Level = dwcc::OptLevel::O2; break;
    case '3': Level = dwcc::OptLevel::O3; break;
    case 's': Level = dwcc::OptLevel::Os; break;
    case 'z': Level = dwcc::OptLevel::Oz; break;
    default: return false;
    }
  }
  return true;
}

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  // Inline assembly is parsed into instructions when writing an object.
  LLVMInitializeX86AsmParser();
  LLVMInitializeX86AsmPrinter();

  std::vector<std::string> UserArgs(argv + 1, argv + argc);
  dwcc::OptLevel Level;
  if (!scanOptLevel(UserArgs, Level))
    return fail("unknown optimization level (use -O0, -O1, -O2, -O3, -Os or -Oz)");

  // The heuristic goes first so that anything the user wrote comes later.
  std::vector<std::string> Heuristic = dwcc::heuristicOptions(Level, UserArgs);
  std::vector<const char *> Args = {argv[0]};
  for (const std::string &Opt : Heuristic)
    Args.push_back(Opt.c_str());
  for (int I = 1; I < argc; ++I)
    Args.push_back(argv[I]);
  cl::ParseCommandLineOptions(static_cast<int>(Args.size()), Args.data(),
                              "dwcc - the driftwatch sample compiler\n");

  LLVMContext Context;
  SMDiagnostic Diag;
  std::unique_ptr<Module> M = parseIRFile(InputFilename, Diag, Context);
  if (!M)
    return fail("cannot read '" + InputFilename + "': " + Diag.getMessage());

  std::string Error;
  std::unique_ptr<TargetMachine> TM = dwcc::createTargetMachine(*M, Level, Error);
  if (!TM)
    return fail(Error);

  // Open the output before optimizing so a bad path fails fast.
  std::error_code EC;
  ToolOutputFile Out(OutputFilename, EC, sys::fs::OF_None);
  if (EC)
    return fail("cannot open output '" + OutputFilename + "': " + EC.message());

  dwcc::buildAndRunPipeline(*M, *TM, Level);
  if (!dwcc::emitObject(*M, *TM, Out.os(), Error))
    return fail(Error);
  Out.keep();
  return 0;
}
