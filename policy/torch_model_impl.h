#pragma once
// Internal to policy/: the LibTorch network behind PolicyModel. Only
// torch_model.cpp, train.cpp and gate_policy.cpp include this (LibTorch
// headers cost ~25 s a file).
#include <torch/torch.h>

#include "policy/model.h"

namespace policy {

struct PolicyModel::Impl {
  PolicyMetadata meta;
  torch::nn::Sequential net;
  torch::Tensor input;  ///< 1×F, reused by score()

  /// Linear → ReLU per hidden layer, then Linear to two logits (no-inline, inline).
  static torch::nn::Sequential make_net(int inputs, const std::vector<int>& hidden);
};

}  // namespace policy
