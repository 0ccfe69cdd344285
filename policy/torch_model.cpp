#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/hash.h"
#include "common/text.h"
#include "policy/torch_model_impl.h"

namespace policy {
namespace fs = std::filesystem;
using common::Error;

namespace {

constexpr const char* kMagic = "DWPOLICY";
constexpr const char* kKind = "driftwatch-inline-policy";
constexpr int kFormat = 1;

nlohmann::json to_json(const PolicyMetadata& m) {
  return {{"kind", kKind},         {"format", kFormat},     {"name", m.name},
          {"features", m.features}, {"mean", m.mean},       {"scale", m.scale},
          {"hidden", m.hidden},     {"compiler_repo", m.compiler_repo}, {"compiler_commit", m.compiler_commit},
          {"corpus", m.corpus},     {"seed", m.seed},       {"training", m.training},
          {"parent", m.parent},     {"created", m.created},  {"margin", m.margin}};
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
  std::vector<const std::string*> texts = {&m.name, &m.compiler_repo, &m.compiler_commit, &m.corpus, &m.parent,
                                           &m.created};
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

std::string now_iso() { return common::iso_utc(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())); }

/// Reads "<word> <n>\n" then n bytes.
bool read_section(std::istream& in, const char* word, std::string& out) {
  std::string w;
  std::size_t n = 0;
  if (!(in >> w >> n) || w != word || in.get() != '\n' || n > (1u << 30)) return false;
  out.resize(n);
  return static_cast<bool>(in.read(out.data(), static_cast<std::streamsize>(n)));
}

std::unique_ptr<PolicyModel::Impl> make_impl(PolicyMetadata meta) {
  auto impl = std::make_unique<PolicyModel::Impl>();
  impl->net = PolicyModel::Impl::make_net(static_cast<int>(meta.features.size()), meta.hidden);
  impl->input = torch::zeros({1, static_cast<long>(meta.features.size())});
  impl->meta = std::move(meta);
  return impl;
}

}  // namespace

torch::nn::Sequential PolicyModel::Impl::make_net(int inputs, const std::vector<int>& hidden) {
  torch::nn::Sequential net;
  int width = inputs;
  for (int h : hidden) {
    net->push_back(torch::nn::Linear(width, h));
    net->push_back(torch::nn::ReLU());
    width = h;
  }
  net->push_back(torch::nn::Linear(width, 2));
  return net;
}

void use_one_thread() {
  torch::set_num_threads(1);
}

double transform_feature(double raw) { return std::copysign(std::log1p(std::fabs(raw)), raw); }

PolicyModel::PolicyModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PolicyModel::PolicyModel(PolicyModel&&) noexcept = default;
PolicyModel& PolicyModel::operator=(PolicyModel&&) noexcept = default;
PolicyModel::~PolicyModel() = default;

PolicyModel::PolicyModel(const PolicyModel& other) : impl_(make_impl(other.impl_->meta)) {
  torch::NoGradGuard no_grad;
  auto src = other.impl_->net->parameters();
  auto dst = impl_->net->parameters();
  for (std::size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
}

PolicyModel PolicyModel::create(PolicyMetadata metadata) {
  torch::manual_seed(metadata.seed);
  if (metadata.created.empty()) metadata.created = now_iso();
  return PolicyModel(make_impl(std::move(metadata)));
}

const PolicyMetadata& PolicyModel::metadata() const { return impl_->meta; }
PolicyMetadata& PolicyModel::metadata() { return impl_->meta; }

double PolicyModel::score(const float* normalized) const {
  torch::InferenceMode guard;
  std::memcpy(impl_->input.data_ptr<float>(), normalized, impl_->meta.features.size() * sizeof(float));
  auto out = impl_->net->forward(impl_->input);
  const float* logits = out.data_ptr<float>();
  return static_cast<double>(logits[1]) - logits[0];
}

std::vector<bool> PolicyModel::features_read() const {
  torch::NoGradGuard no_grad;
  // The first parameter is the first Linear's weight: hidden units × features.
  auto read = impl_->net->parameters().front().abs().sum(0).gt(0).contiguous();
  std::vector<bool> out(impl_->meta.features.size());
  for (std::size_t i = 0; i < out.size() && i < static_cast<std::size_t>(read.numel()); ++i)
    out[i] = read[static_cast<std::int64_t>(i)].item<bool>();
  return out;
}

common::Status PolicyModel::save(const fs::path& path) {
  std::ostringstream weights;
  torch::save(impl_->net, weights);
  auto meta = to_json(impl_->meta).dump(2);
  auto payload = meta + weights.str();
  impl_->meta.content_hash = common::sha256_hex(payload);
  std::ostringstream file;
  file << kMagic << "\n" << kFormat << "\nmeta " << meta.size() << "\n" << meta << "weights " << weights.str().size()
       << "\n" << weights.str() << "sha256 " << impl_->meta.content_hash << "\n";
  return common::write_file_atomically(path, file.str());
}

common::Result<PolicyModel> PolicyModel::load(const fs::path& path) {
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
  auto impl = make_impl(*meta);
  // torch::load replaces each tensor with the file's, whatever its shape: the
  // shapes the metadata implies are compared afterwards, or a file whose
  // metadata disagrees with its weights loads and then fails every compile.
  std::vector<std::vector<std::int64_t>> expected;
  for (const auto& p : impl->net->parameters()) expected.push_back(p.sizes().vec());
  try {
    std::istringstream ws(weights);
    torch::load(impl->net, ws);
  } catch (const std::exception& e) {
    auto what = std::string(e.what());
    return refuse("its weights do not fit a " + std::to_string(meta->features.size()) + "-feature network (" +
                  what.substr(0, what.find('\n')) + ")");
  }
  auto loaded = impl->net->parameters();
  std::string layers = std::to_string(meta->features.size());
  for (int h : meta->hidden) layers += "-" + std::to_string(h);
  if (loaded.size() != expected.size())
    return refuse("its weights do not fit the " + layers + "-2 network its metadata describes");
  for (std::size_t i = 0; i < loaded.size(); ++i)
    if (loaded[i].sizes().vec() != expected[i])
      return refuse("its weights do not fit the " + layers + "-2 network its metadata describes");
  for (const auto& p : loaded)
    if (!torch::isfinite(p).all().item<bool>()) return refuse("its weights hold NaN or infinite numbers");
  return PolicyModel(std::move(impl));
}

}  // namespace policy
