// The gate (gate.h) as a LibTorch network, so it is saved, loaded and served
// as every other policy.
#include "policy/gate_policy.h"

#include "policy/torch_model_impl.h"

namespace policy {

PolicyModel gate_policy(const GateRule* rule, PolicyMetadata meta) {
  meta.hidden = {kGateHidden1, kGateHidden2};
  meta.mean.assign(meta.features.size(), 0.0);
  meta.scale.assign(meta.features.size(), 1.0);
  meta.margin = 1;  // served with the default's side at ±1; an open gate adds 2
  auto w = gate_weights(rule, meta.features, meta.margin);
  auto model = PolicyModel::create(std::move(meta));
  torch::NoGradGuard no_grad;
  // Linear, ReLU, Linear, ReLU, Linear: weights then bias of each Linear.
  const std::vector<float>* values[] = {&w.w1, &w.b1, &w.w2, &w.b2, &w.w3, &w.b3};
  auto params = model.impl().net->parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    auto flat = torch::tensor(*values[i]).reshape(params[i].sizes());
    params[i].copy_(flat);
  }
  return model;
}

}  // namespace policy
