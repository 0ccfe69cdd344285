#include "policy/policy_file.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/hash.h"
#include "common/text.h"

namespace policy {
namespace fs = std::filesystem;
using common::Error;

namespace {

constexpr const char* kMagic = "DWPOLICY";
constexpr const char* kKind = "driftwatch-inline-policy";
constexpr int kFormat = 1;

nlohmann::json to_json(const PolicyMetadata& m) {
  return {{"kind", kKind},
          {"format", kFormat},
          {"name", m.name},
          {"features", m.features},
          {"mean", m.mean},
          {"scale", m.scale},
          {"hidden", m.hidden},
          {"compiler_repo", m.compiler_repo},
          {"compiler_commit", m.compiler_commit},
          {"corpus", m.corpus},
          {"seed", m.seed},
          {"training", m.training},
          {"parent", m.parent},
          {"created", m.created},
          {"margin", m.margin}};
}

/// What a metadata field holds, for the error that names a wrong one.
std::string expected(const std::string& field) {
  if (field == "features") return "a list of strings";
  if (field == "mean" || field == "scale") return "a list of numbers";
  if (field == "hidden") return "a list of whole numbers";
  if (field == "seed") return "a whole number";
  if (field == "margin") return "a number";
  return "a string";
}

common::Result<PolicyMetadata> from_json(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"its metadata is not valid JSON"};
  // Quoted with control characters escaped: none reaches a terminal.
  auto shown = [&](const char* key) {
    if (!j.contains(key)) return std::string("missing");
    return j[key].is_string() ? common::quoted(j[key].get<std::string>()) : j[key].dump();
  };
  if (!j.contains("kind") || j["kind"] != kKind)
    return Error{"it is not an inlining policy (kind " + shown("kind") + ")"};
  if (!j.contains("format") || !j["format"].is_number_integer() || j["format"] != kFormat)
    return Error{"it has format " + shown("format") + ", this driftwatch reads " + std::to_string(kFormat)};
  PolicyMetadata m;
  // Each field read by name, so a wrong one is named, not only its JSON type.
  std::string field;
  auto at = [&](const char* name) -> const nlohmann::json& {
    field = name;
    return j.at(name);
  };
  try {
    m.name = at("name").get<std::string>();
    m.features = at("features").get<std::vector<std::string>>();
    m.mean = at("mean").get<std::vector<double>>();
    m.scale = at("scale").get<std::vector<double>>();
    m.hidden = at("hidden").get<std::vector<int>>();
    m.compiler_repo = at("compiler_repo").get<std::string>();
    m.compiler_commit = at("compiler_commit").get<std::string>();
    m.corpus = at("corpus").get<std::string>();
    m.seed = at("seed").get<std::uint64_t>();
    m.training = at("training").get<std::string>();
    m.parent = at("parent").get<std::string>();
    m.created = at("created").get<std::string>();
    field = "margin";
    m.margin = j.value("margin", 0.0);  // absent in files made before margins
  } catch (const nlohmann::json::out_of_range&) {
    return Error{"its metadata has no field '" + field + "'"};
  } catch (const nlohmann::json::exception&) {
    return Error{"its metadata field '" + field + "' is not " + expected(field) + " (it holds " +
                 j.at(field).type_name() + ")"};
  }
  // Its name is printed in terminals, reports and alerts: no escape sequences.
  std::vector<const std::string*> texts = {&m.name,   &m.compiler_repo, &m.compiler_commit,
                                           &m.corpus, &m.parent,        &m.created};
  for (const auto& f : m.features) texts.push_back(&f);
  for (const std::string* text : texts)
    if (common::has_control_characters(*text))
      return Error{"its metadata holds control characters (a name, repository, check-in, corpus, date or feature)"};
  if (m.features.empty()) return Error{"its metadata lists no features"};
  if (m.mean.size() != m.features.size() || m.scale.size() != m.features.size())
    return Error{"its normalization does not match its " + std::to_string(m.features.size()) + " features"};
  // (x - mean) / scale with a scale of 0 or a NaN gives NaN scores, and a
  // NaN score answers "don't inline" everywhere without a word.
  for (std::size_t i = 0; i < m.features.size(); ++i)
    if (!std::isfinite(m.mean[i]) || !std::isfinite(m.scale[i]) || m.scale[i] <= 0)
      return Error{"its normalization of feature " + m.features[i] + " is not a finite mean and a positive scale"};
  for (int h : m.hidden)
    if (h <= 0 || h > 4096) return Error{"its layer sizes are invalid"};
  if (!std::isfinite(m.margin) || m.margin < 0) return Error{"its margin is not a finite non-negative number"};
  return m;
}

/// Reads "<word> <n>\n" then n bytes.
bool read_section(std::istream& in, const char* word, std::string& out) {
  std::string w;
  std::size_t n = 0;
  if (!(in >> w >> n) || w != word || in.get() != '\n' || n > (1u << 30)) return false;
  out.resize(n);
  return static_cast<bool>(in.read(out.data(), static_cast<std::streamsize>(n)));
}

}  // namespace

double transform_feature(double raw) { return std::copysign(std::log1p(std::fabs(raw)), raw); }

std::string policy_file_bytes(PolicyMetadata& metadata, const std::string& weights) {
  auto meta = to_json(metadata).dump(2);
  metadata.content_hash = common::sha256_hex(meta + weights);
  std::ostringstream file;
  file << kMagic << "\n"
       << kFormat << "\nmeta " << meta.size() << "\n"
       << meta << "weights " << weights.size() << "\n"
       << weights << "sha256 " << metadata.content_hash << "\n";
  return file.str();
}

common::Result<PolicyFileSections> read_policy_file(const fs::path& path) {
  auto refuse = [&](const std::string& why) { return Error{"cannot load policy " + path.string() + ": " + why}; };
  std::ifstream in(path, std::ios::binary);
  if (!in) return refuse("no such file or not readable");
  std::string magic, format;
  std::getline(in, magic);
  if (magic != kMagic) return refuse("not a driftwatch policy file");
  std::getline(in, format);
  if (format != std::to_string(kFormat)) return refuse("unknown file format " + format);
  std::string meta_text, weights, word, hash;
  if (!read_section(in, "meta", meta_text) || !read_section(in, "weights", weights) || !(in >> word >> hash) ||
      word != "sha256")
    return refuse("the file is truncated");
  in.get();
  if (in.peek() != std::char_traits<char>::eof()) return refuse("unexpected bytes after the end");
  if (common::sha256_hex(meta_text + weights) != hash) return refuse("content hash mismatch: the file is corrupt");
  auto meta = from_json(meta_text);
  if (!meta) return refuse(meta.error().message);
  meta->content_hash = hash;
  return PolicyFileSections{std::move(*meta), std::move(weights)};
}

common::Result<PolicyMetadata> read_policy_metadata(const fs::path& path) {
  auto sections = read_policy_file(path);
  if (!sections) return sections.error();
  return std::move(sections->metadata);
}

}  // namespace policy
