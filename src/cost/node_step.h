// THE per-node costing step, which BuildLedger and the sweep's per-node evaluator both call.
// Inline, so that the ledger's loop over a million nodes pays no call for the common node; the
// rare paths (an unresolved node, a failed rule, a repeat count) are out of line in ledger.cc.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "cost/ledger.h"
#include "cost/resolved.h"
#include "cost/rules.h"
#include "ir/graph.h"
#include "support/error.h"

namespace opscope::cost {

namespace node_step {
// Why `node` (an importer's `unresolved_reason`, or a tensor that did not resolve) is not
// costed; false when nothing keeps it from its rule.
bool Unresolved(const ir::Graph& graph, const ir::Node& node,
                std::span<const ResolvedTensor* const> ins,
                std::span<const ResolvedTensor* const> outs, std::string& reason);
// A rule's failure: an error for bad input, else `reason` (and false: not costed).
Result<bool> RuleFailed(RuleFailure failure, std::string& reason);
// Multiplies every count of `cost` by the node's repeat count; true, or an overflow error.
Result<bool> Repeat(const ir::Node& node, NodeCost& cost);
}  // namespace node_step

// On a node whose tensors were resolved with ResolveTensor (`ins`, `outs`: node.inputs and
// node.outputs, resolved under `bindings`):
//  1. resolve: a node its importer marked unresolved (attribute `unresolved_reason`) or with
//     a tensor that did not resolve (an unbound dim, a block mismatch after binding) is not
//     costed;
//  2. rule: the node's cost rule (rules.cc) fills `cost`; a missing attribute or dim leaves
//     it not costed, a broken op contract is an error;
//  3. repeat: every count — bytes read, written, of weights, of state, FLOPs and link bytes —
//     is multiplied by the node's repeat count (checked: an overflow is an error).
// Returns whether the node is costed; when it is not, `reason` says why and `cost` is all zeros.
inline Result<bool> CostResolvedNode(const ir::Graph& graph, const ir::Node& node,
                                     std::span<const ResolvedTensor* const> ins,
                                     std::span<const ResolvedTensor* const> outs,
                                     const expr::Bindings& bindings, NodeCost& cost,
                                     std::string& reason, std::vector<std::string>& assumptions) {
  bool all_resolved = true;
  for (const ResolvedTensor* r : ins) all_resolved &= r->status == ResolvedTensor::Status::kOk;
  for (const ResolvedTensor* r : outs) all_resolved &= r->status == ResolvedTensor::Status::kOk;
  // Only an attribute or an unresolved tensor can make a node unresolved: the common node,
  // with neither, skips the search.
  if ((!all_resolved || !node.attrs.empty()) &&
      node_step::Unresolved(graph, node, ins, outs, reason)) [[unlikely]] {
    cost = NodeCost{};
    return false;
  }
  auto ruled = CostNode(RuleInput{graph, node, ins, outs, bindings}, cost, assumptions);
  if (!ruled) [[unlikely]] return node_step::RuleFailed(std::move(ruled.error()), reason);
  if (node.repeat != 1) [[unlikely]] return node_step::Repeat(node, cost);
  return true;
}

}  // namespace opscope::cost
