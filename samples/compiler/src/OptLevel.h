//===- OptLevel.h - optimization levels -------------------------*- C++ -*-===//
#ifndef DWCC_OPTLEVEL_H
#define DWCC_OPTLEVEL_H

namespace dwcc {

/// Optimization levels accepted by the driver (-O0 .. -O3, -Os, -Oz).
enum class OptLevel { O0, O1, O2, O3, Os, Oz };

} // namespace dwcc

#endif // DWCC_OPTLEVEL_H
