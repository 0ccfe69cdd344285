#pragma once
// Internal to policy/: how the driftwatch binary reaches the LibTorch network
// without linking LibTorch. Loading LibTorch's 300 shared libraries and
// registering its operators takes about a second, which every command paid,
// `alerts` and `jobs` as much as `train`. The binary holds the entry points
// of model.h, train.h and gate_policy.h as stubs (torch_loader.cpp) that
// load the module driftwatch-torch.so on first use and call through this
// table; the module (torch_model.cpp and the code using LibTorch) fills it.
// The tests and benchmarks link those files directly instead.
#include <cstddef>
#include <filesystem>
#include <vector>

#include "common/result.h"
#include "policy/gate.h"
#include "policy/model.h"
#include "policy/train.h"

#ifndef DRIFTWATCH_TORCH_ABI
#error "DRIFTWATCH_TORCH_ABI: set by policy/CMakeLists.txt from the headers the table's types come from"
#endif

namespace policy {

/// The module and the binary must come from one build: a table whose types
/// changed under it would call through the wrong layout.
inline constexpr const char* kTorchBackendAbi = DRIFTWATCH_TORCH_ABI;

struct PolicyModel::Backend {
  const char* abi;
  std::size_t size;
  void (*use_one_thread)();
  PolicyModel (*create)(PolicyMetadata);
  common::Result<PolicyModel> (*load)(const std::filesystem::path&);
  common::Status (*save)(PolicyModel&, const std::filesystem::path&);
  PolicyModel (*copy)(const PolicyModel&);
  void (*destroy)(Impl*);
  PolicyMetadata& (*metadata)(Impl&);
  double (*score)(const PolicyModel&, const float*);
  std::vector<bool> (*features_read)(const PolicyModel&);
  common::Result<TrainResult> (*train)(const TrainOptions&);
  bool (*can_resume)(const TrainOptions&);
  PolicyModel (*gate_policy)(const GateRule*, PolicyMetadata);

  /// The module's table (defined in torch_model.cpp).
  static const Backend& instance();
};

}  // namespace policy

/// The module's one exported entry point: a `const PolicyModel::Backend*`.
extern "C" const void* driftwatch_torch_backend();
