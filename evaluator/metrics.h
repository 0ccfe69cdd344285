#pragma once
// The one table of per-module metrics an evaluation stores, as
// (identifier, name in the database, unit, what it is).
#define DRIFTWATCH_METRICS(X)                                                                                     \
  X(TextBytes, "text_bytes", "B", ".text and .text.* bytes of the module's object (.ltext under -mcmodel=large)") \
  X(CodeBytes, "code_bytes", "B", "bytes of every executable section")                                            \
  X(CompileSeconds, "compile_seconds", "s", "wall time of the compile")                                           \
  X(Decisions, "decisions", "", "inlining questions the compiler asked the channel")

namespace evaluator {

enum class Metric {
#define X(id, name, unit, doc) id,
  DRIFTWATCH_METRICS(X)
#undef X
};

inline const char* metric_name(Metric m) {
  switch (m) {
#define X(id, name, unit, doc) \
  case Metric::id:             \
    return name;
    DRIFTWATCH_METRICS(X)
#undef X
  }
  return "?";
}

}  // namespace evaluator
