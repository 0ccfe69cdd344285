#include <cmath>
#include <cstring>
#include <sstream>
#include <utility>

#include "common/atomic_file.h"
#include "common/text.h"
#include "policy/gate_policy.h"
#include "policy/policy_file.h"
#include "policy/torch_backend.h"
#include "policy/torch_model_impl.h"
#include "policy/train.h"

namespace policy {
namespace fs = std::filesystem;
using common::Error;

namespace {

PolicyModel::Impl* make_impl(PolicyMetadata meta) {
  auto impl = std::make_unique<PolicyModel::Impl>();
  impl->net = PolicyModel::Impl::make_net(static_cast<int>(meta.features.size()), meta.hidden);
  impl->input = torch::zeros({1, static_cast<long>(meta.features.size())});
  impl->meta = std::move(meta);
  return impl.release();
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

void load_network_runtime() {}  // linked with LibTorch: loaded with the program

PolicyModel::PolicyModel(Impl* impl) : impl_(impl) {}
PolicyModel::PolicyModel(PolicyModel&& other) noexcept : impl_(std::exchange(other.impl_, nullptr)) {}
PolicyModel& PolicyModel::operator=(PolicyModel&& other) noexcept {
  std::swap(impl_, other.impl_);  // the old network goes with `other`
  return *this;
}
PolicyModel::~PolicyModel() { delete impl_; }

PolicyModel::PolicyModel(const PolicyModel& other) : impl_(make_impl(other.impl_->meta)) {
  torch::NoGradGuard no_grad;
  auto src = other.impl_->net->parameters();
  auto dst = impl_->net->parameters();
  for (std::size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
}

PolicyModel PolicyModel::create(PolicyMetadata metadata) {
  torch::manual_seed(metadata.seed);
  if (metadata.created.empty()) metadata.created = common::iso_utc_now();
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
  return common::write_file_atomically(path, policy_file_bytes(impl_->meta, weights.str()));
}

common::Result<PolicyModel> PolicyModel::load(const fs::path& path) {
  auto refuse = [&](const std::string& why) { return Error{"cannot load policy " + path.string() + ": " + why}; };
  auto file = read_policy_file(path);
  if (!file) return file.error();
  const auto& meta = file->metadata;
  PolicyModel model(make_impl(meta));
  auto& net = model.impl_->net;
  // torch::load replaces each tensor with the file's, whatever its shape: the
  // shapes the metadata implies are compared afterwards, or a file whose
  // metadata disagrees with its weights loads and then fails every compile.
  std::vector<std::vector<std::int64_t>> expected;
  for (const auto& p : net->parameters()) expected.push_back(p.sizes().vec());
  try {
    std::istringstream ws(file->weights);
    torch::load(net, ws);
  } catch (const std::exception& e) {
    auto what = std::string(e.what());
    return refuse("its weights do not fit a " + std::to_string(meta.features.size()) + "-feature network (" +
                  what.substr(0, what.find('\n')) + ")");
  }
  auto loaded = net->parameters();
  std::string layers = std::to_string(meta.features.size());
  for (int h : meta.hidden) layers += "-" + std::to_string(h);
  if (loaded.size() != expected.size())
    return refuse("its weights do not fit the " + layers + "-2 network its metadata describes");
  for (std::size_t i = 0; i < loaded.size(); ++i)
    if (loaded[i].sizes().vec() != expected[i])
      return refuse("its weights do not fit the " + layers + "-2 network its metadata describes");
  for (const auto& p : loaded)
    if (!torch::isfinite(p).all().item<bool>()) return refuse("its weights hold NaN or infinite numbers");
  return model;
}

const PolicyModel::Backend& PolicyModel::Backend::instance() {
  static const Backend backend{
      torch_backend_abi(),
      sizeof(Backend),
      [] { policy::use_one_thread(); },
      [](PolicyMetadata m) { return PolicyModel::create(std::move(m)); },
      [](const fs::path& p) { return PolicyModel::load(p); },
      [](PolicyModel& m, const fs::path& p) { return m.save(p); },
      [](const PolicyModel& m) { return PolicyModel(m); },
      [](Impl* impl) { delete impl; },
      [](Impl& impl) -> PolicyMetadata& { return impl.meta; },
      [](const PolicyModel& m, const float* x) { return m.score(x); },
      [](const PolicyModel& m) { return m.features_read(); },
      [](const TrainOptions& o) { return policy::train(o); },
      [](const TrainOptions& o) { return policy::can_resume(o); },
      [](const GateRule* rule, PolicyMetadata m) { return policy::gate_policy(rule, std::move(m)); },
  };
  return backend;
}

}  // namespace policy

extern "C" const void* driftwatch_torch_backend() { return &policy::PolicyModel::Backend::instance(); }
