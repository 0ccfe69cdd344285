#pragma once
// A gate rule (gate.h) as a policy file's network.
#include "policy/gate.h"
#include "policy/model.h"

namespace policy {

/// A policy that answers the compiler's default decision except where
/// `rule` opens, where it inlines (null: nowhere). `meta.features` must hold
/// the gate's three features; its network, normalization and margin are set here.
PolicyModel gate_policy(const GateRule* rule, PolicyMetadata meta);

}  // namespace policy
