#pragma once
// Internal to policy/: a policy file's layout, read and written without
// LibTorch (the network's weights stay an opaque section here), so that
// commands which only name a policy never load LibTorch.
#include <filesystem>
#include <string>

#include "common/result.h"
#include "policy/model.h"

namespace policy {

struct PolicyFileSections {
  PolicyMetadata metadata;  ///< checked, content_hash filled
  std::string weights;      ///< LibTorch's serialization of the network
};

/// Magic, format, both sections, the content hash and every metadata field
/// checked; errors read "cannot load policy <path>: <why>".
common::Result<PolicyFileSections> read_policy_file(const std::filesystem::path& path);

/// The file's bytes for `weights` and `metadata`; sets metadata.content_hash.
std::string policy_file_bytes(PolicyMetadata& metadata, const std::string& weights);

}  // namespace policy
