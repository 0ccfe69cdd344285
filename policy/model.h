#pragma once
// The frozen learned heuristic: a small LibTorch MLP over normalized
// features, and its file. LibTorch stays behind this header, and out of the
// driftwatch binary: it loads the LibTorch module (torch_backend.h) the first
// time a network is needed, so that commands which only read the database
// or a policy's metadata start in milliseconds, not a second.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace policy {

/// Everything a policy file says about itself besides its weights.
struct PolicyMetadata {
  std::string name;
  std::vector<std::string> features;  ///< inputs, in model order (bound by name)
  std::vector<double> mean, scale;    ///< of the transformed feature: (t(x) - mean) / scale
  std::vector<int> hidden = {64, 64};
  std::string compiler_repo;          ///< where it was trained
  std::string compiler_commit;
  std::string corpus;                 ///< suite name and manifest hash
  std::uint64_t seed = 0;
  std::string training;               ///< training configuration and results (JSON text)
  std::string parent;                 ///< content hash of the policy it was warm-started from, or ""
  /// 0: the model decides alone. Otherwise it departs from the compiler's
  /// default decision only where its score passes the default's side by this
  /// much (logit units), so code unlike its training keeps the default; the
  /// compiler must then send its default decision (include-default).
  double margin = 0;
  std::string created;                ///< ISO 8601 UTC
  std::string content_hash;           ///< sha256 of the file's payload; set by save/load
};

/// A policy file's metadata, without LibTorch: everything is checked (its
/// format, content hash and fields) but whether the weights fit the network.
common::Result<PolicyMetadata> read_policy_metadata(const std::filesystem::path& path);

/// Loads LibTorch now, where the driftwatch binary would on first use: a
/// command that will need a network calls it before any work, so that a
/// missing module, or one of another build, stops it before a compiler is
/// built or anything recorded (and a long-running worker keeps the module
/// of its own build, whatever a rebuild puts beside it later).
void load_network_runtime();

/// Single-sample inference is fastest on one thread, and evaluations run
/// one compile per core: call once before serving decisions.
void use_one_thread();

/// The transform applied to a raw feature before normalization: sign(x)·log1p(|x|),
/// because counts and costs span orders of magnitude.
double transform_feature(double raw);

class PolicyModel {
 public:
  /// A fresh network with weights drawn from `seed`.
  static PolicyModel create(PolicyMetadata metadata);
  /// Strict: a truncated, corrupt or foreign file is refused with one line naming the problem.
  static common::Result<PolicyModel> load(const std::filesystem::path& path);
  /// Writes atomically; fills metadata().content_hash.
  common::Status save(const std::filesystem::path& path);

  PolicyModel(PolicyModel&&) noexcept;
  PolicyModel& operator=(PolicyModel&&) noexcept;
  PolicyModel(const PolicyModel& other);  ///< deep copy of the weights
  ~PolicyModel();

  const PolicyMetadata& metadata() const;
  PolicyMetadata& metadata();
  /// Logit of "inline" minus logit of "don't" for already-normalized inputs
  /// (one value per metadata feature). Single thread, no autograd.
  double score(const float* normalized) const;
  /// For each metadata feature, whether the first layer reads it (a weight
  /// not 0): a network reads them all, a gate the ones its rule tests.
  std::vector<bool> features_read() const;

  struct Impl;
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }
  struct Backend;  ///< the LibTorch module's entry points (torch_backend.h)

 private:
  explicit PolicyModel(Impl* impl);
  /// Owned. A raw pointer, so that code built without LibTorch's headers can
  /// hold a network and hand it back to the module to destroy.
  Impl* impl_ = nullptr;
};

}  // namespace policy
