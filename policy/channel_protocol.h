#pragma once
// LLVM's interactive ML channel, the byte stream (see
// shared/design/llvm-ml-protocol.md): a JSON header naming the feature
// tensors, then per context and observation a JSON line plus raw tensor
// bytes. Pure parsing; the FIFOs are channel_server.h.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace policy {

/// One tensor as the compiler declares it.
struct TensorSpec {
  std::string name;
  std::string type;  ///< "int64_t", "float", … as LLVM spells it
  std::vector<std::int64_t> shape;
  int port = 0;

  std::size_t element_size() const;
  std::size_t element_count() const;
  std::size_t byte_size() const { return element_size() * element_count(); }
};

/// The header line: what the compiler will send and what it wants back.
struct ChannelHeader {
  std::vector<TensorSpec> features;
  TensorSpec advice;
  std::size_t observation_bytes() const;
  /// Index of a feature by name, or -1.
  int find(std::string_view name) const;
};

/// Element sizes of LLVM's TensorSpec types; 0 for an unknown type.
std::size_t type_size(std::string_view type);

/// Parses the header JSON line; the error says what is malformed.
common::Result<ChannelHeader> parse_header(std::string_view line);

/// A line after the header: a new context, or the start of an observation.
struct StreamEvent {
  enum Kind { Context, Observation } kind;
  std::string context;   ///< for Context
  std::int64_t index = 0;  ///< for Observation
};
common::Result<StreamEvent> parse_event(std::string_view line);

/// Feature values as doubles, one vector per header feature, from the raw
/// little-endian bytes of one observation.
std::vector<std::vector<double>> decode_observation(const ChannelHeader& header, std::string_view bytes);

/// The advice tensor's bytes for a scalar decision (int64 0/1 for the inliner).
std::string encode_advice(const TensorSpec& advice, double value);

}  // namespace policy
