#include "policy/channel_protocol.h"

#include <nlohmann/json.hpp>

#include <cstring>

namespace policy {
namespace {

template <class T>
void decode_as(const char* p, std::size_t n, std::vector<double>& out) {
  for (std::size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, p + i * sizeof(T), sizeof(T));
    out.push_back(static_cast<double>(v));
  }
}

template <class T>
std::string encode_as(double value, std::size_t count) {
  std::string out(sizeof(T) * count, '\0');
  T v = static_cast<T>(value);
  for (std::size_t i = 0; i < count; ++i) std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  return out;
}

common::Result<TensorSpec> parse_spec(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("name") || !j.contains("type") || !j.contains("shape"))
    return common::Error{"malformed ML channel header: " + where + " needs name, type and shape"};
  TensorSpec s;
  try {
    s.name = j["name"].get<std::string>();
    s.type = j["type"].get<std::string>();
    s.shape = j["shape"].get<std::vector<std::int64_t>>();
    s.port = j.value("port", 0);
  } catch (const nlohmann::json::exception&) {
    return common::Error{"malformed ML channel header: bad field in " + where};
  }
  if (type_size(s.type) == 0) return common::Error{"ML channel header: unsupported tensor type '" + s.type + "' of " + s.name};
  // LLVM's largest tensors (IR2Vec embeddings, eviction's [1,33]) hold
  // hundreds of elements. A shape far beyond that is a corrupt header: read
  // as given, its byte count wraps round or asks for terabytes.
  constexpr std::int64_t kMaxElements = std::int64_t{1} << 24;
  std::int64_t elements = 1;
  for (auto d : s.shape) {
    if (d <= 0) return common::Error{"ML channel header: bad shape of " + s.name};
    if (d > kMaxElements || elements * d > kMaxElements)
      return common::Error{"ML channel header: the shape of " + s.name + " holds more than 2^24 elements"};
    elements *= d;
  }
  return s;
}

/// Calls f with a value of the C++ type LLVM's type name stands for.
template <class F>
auto with_type(std::string_view t, F&& f) {
  if (t == "int64_t") return f(std::int64_t{});
  if (t == "uint64_t") return f(std::uint64_t{});
  if (t == "double") return f(double{});
  if (t == "int32_t") return f(std::int32_t{});
  if (t == "uint32_t") return f(std::uint32_t{});
  if (t == "float") return f(float{});
  if (t == "int16_t") return f(std::int16_t{});
  if (t == "uint16_t") return f(std::uint16_t{});
  if (t == "int8_t") return f(std::int8_t{});
  return f(std::uint8_t{});
}

}  // namespace

std::size_t type_size(std::string_view t) {
  if (t == "int64_t" || t == "uint64_t" || t == "double") return 8;
  if (t == "int32_t" || t == "uint32_t" || t == "float") return 4;
  if (t == "int16_t" || t == "uint16_t") return 2;
  if (t == "int8_t" || t == "uint8_t") return 1;
  return 0;
}

std::size_t TensorSpec::element_size() const { return type_size(type); }

std::size_t TensorSpec::element_count() const {
  std::size_t n = 1;
  for (auto d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

std::size_t ChannelHeader::observation_bytes() const {
  std::size_t n = 0;
  for (const auto& f : features) n += f.byte_size();
  return n;
}

int ChannelHeader::find(std::string_view name) const {
  for (std::size_t i = 0; i < features.size(); ++i)
    if (features[i].name == name) return static_cast<int>(i);
  return -1;
}

common::Result<ChannelHeader> parse_header(std::string_view line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return common::Error{"malformed ML channel header: not a JSON object"};
  if (!j.contains("features") || !j["features"].is_array() || !j.contains("advice"))
    return common::Error{"malformed ML channel header: expected \"features\" and \"advice\""};
  ChannelHeader h;
  for (std::size_t i = 0; i < j["features"].size(); ++i) {
    auto s = parse_spec(j["features"][i], "feature " + std::to_string(i));
    if (!s) return s.error();
    h.features.push_back(*s);
  }
  auto advice = parse_spec(j["advice"], "advice");
  if (!advice) return advice.error();
  // Every runner answers one decision an observation; an advice tensor of
  // more would be filled with it element by element, meaning something else.
  if (advice->element_count() != 1)
    return common::Error{"ML channel header: advice '" + advice->name + "' of " +
                         std::to_string(advice->element_count()) + " elements: driftwatch answers one decision"};
  h.advice = *advice;
  return h;
}

common::Result<StreamEvent> parse_event(std::string_view line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_object() && j.size() == 1) {
    if (j.contains("context") && j["context"].is_string())
      return StreamEvent{StreamEvent::Context, j["context"].get<std::string>(), 0};
    if (j.contains("observation") && j["observation"].is_number_integer())
      return StreamEvent{StreamEvent::Observation, "", j["observation"].get<std::int64_t>()};
  }
  std::string shown(line.substr(0, 60));
  for (auto& c : shown)
    if (static_cast<unsigned char>(c) < 32 || static_cast<unsigned char>(c) > 126) c = '?';
  return common::Error{"malformed ML channel stream: expected a context or observation line, got \"" + shown + "\""};
}

std::vector<std::vector<double>> decode_observation(const ChannelHeader& header, std::string_view bytes) {
  std::vector<std::vector<double>> out;
  const char* p = bytes.data();
  for (const auto& f : header.features) {
    std::vector<double> values;
    with_type(f.type, [&](auto v) { decode_as<decltype(v)>(p, f.element_count(), values); });
    p += f.byte_size();
    out.push_back(std::move(values));
  }
  return out;
}

std::string encode_advice(const TensorSpec& a, double value) {
  return with_type(a.type, [&](auto v) { return encode_as<decltype(v)>(value, a.element_count()); });
}

}  // namespace policy
