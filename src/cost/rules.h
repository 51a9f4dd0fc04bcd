// The cost rules: one pure function per op family (DESIGN "Cost semantics"), dispatched from
// the op-kind table. A rule sees the node and its resolved tensors, never the device.
#pragma once

#include <expected>
#include <span>
#include <string>
#include <vector>

#include "cost/ledger.h"
#include "cost/resolved.h"
#include "ir/graph.h"

namespace opscope::cost {

struct RuleInput {
  const ir::Graph& graph;
  const ir::Node& node;
  std::span<const ResolvedTensor* const> inputs;   // node.inputs, resolved
  std::span<const ResolvedTensor* const> outputs;  // node.outputs, resolved
  const expr::Bindings& bindings;
};

// What a rule returns when it cannot cost the node.
struct RuleFailure {
  enum class Kind : uint8_t {
    kNotCosted,  // missing attribute or dim, unknown op, unresolved control flow
    kBadInput,   // the node breaks its op's contract (arity, rank, mismatched dims)
  };
  Kind kind;
  std::string message;
};

// Costs one node whose tensors all resolved, writing its entry into `cost` (marked costed).
// On failure `cost` is left not costed, all zeros. Assumptions a rule made are appended to
// `assumptions` (the ledger deduplicates them).
std::expected<void, RuleFailure> CostNode(const RuleInput& in, NodeCost& cost,
                                          std::vector<std::string>& assumptions);

}  // namespace opscope::cost
