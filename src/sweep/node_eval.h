// The exact cost of one node of an LLM step graph at one workload point (n, seqs, ctx),
// computed by BuildLedger's own per-node step (cost::CostResolvedNode: resolve, rule, repeat) on
// the node's tensors resolved under the graph's dims and the workload — without resolving or
// costing the rest of the graph. The compiled step plan fits its closed forms from it and falls
// back on it wherever a closed form is not proven.
#pragma once

#include <cstdint>
#include <vector>

#include "cost/ledger.h"
#include "cost/resolved.h"
#include "ir/graph.h"
#include "support/error.h"

namespace opscope::sweep {

// The workload symbols' values at one point.
struct Point {
  int64_t n = 0, seqs = 0, ctx = 0;
};

class NodeEvaluator {
 public:
  // `graph` must outlive the evaluator.
  NodeEvaluator(const ir::Graph& graph, size_t node);
  NodeEvaluator(const NodeEvaluator&) = delete;  // holds pointers into itself
  NodeEvaluator& operator=(const NodeEvaluator&) = delete;

  // The node's ledger entry at `p`: costed with its numbers, or not costed (zeros; the
  // reason is BuildLedger's to report). Bad input the ledger would reject (a negative or
  // overflowing dim, a rule's contract broken) is an error.
  Result<cost::NodeCost> Eval(const Point& p);

  size_t node() const { return node_; }

 private:
  Result<void> Resolve(const expr::Bindings& b);

  const ir::Graph& graph_;
  size_t node_;
  std::vector<ir::TensorId> tensors_;          // the node's distinct tensors
  std::vector<uint32_t> input_slot_, output_slot_;
  std::vector<cost::ResolvedTensor> resolved_;  // parallel to tensors_
  std::vector<std::vector<int64_t>> dims_;      // storage the resolved spans point into
  std::vector<const cost::ResolvedTensor*> ins_, outs_;  // into resolved_
  expr::Bindings bindings_;                     // the graph's dims and the point
  std::vector<std::string> assumptions_;        // scratch for the rule
  std::string reason_;                          // scratch: why not costed (the ledger reports it)
  std::optional<expr::SymbolId> n_, seqs_, ctx_;
};

}  // namespace opscope::sweep
