//===- Emit.h - target machine and object emission --------------*- C++ -*-===//
#ifndef DWCC_EMIT_H
#define DWCC_EMIT_H

#include "OptLevel.h"

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
class raw_pwrite_stream;
} // namespace llvm

namespace dwcc {

/// Creates an x86-64 target machine for \p M (its triple, or
/// x86_64-unknown-linux-gnu if it has none) and sets the module's triple and
/// data layout to match. Returns null and sets \p Error on failure.
std::unique_ptr<llvm::TargetMachine> createTargetMachine(llvm::Module &M, OptLevel Level,
                                                         std::string &Error);

/// Emits \p M as an object file to \p OS. Returns false and sets \p Error on
/// failure.
bool emitObject(llvm::Module &M, llvm::TargetMachine &TM, llvm::raw_pwrite_stream &OS,
                std::string &Error);

} // namespace dwcc

#endif // DWCC_EMIT_H
