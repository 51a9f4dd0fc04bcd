// One node's exact ledger entry at one workload point (see node_eval.h): bind the point,
// resolve the node's tensors, then the ledger's own per-node step (cost::CostResolvedNode).
#include "sweep/node_eval.h"

#include <algorithm>

#include "cost/node_step.h"

namespace opscope::sweep {

NodeEvaluator::NodeEvaluator(const ir::Graph& graph, size_t node)
    : graph_(graph), node_(node), bindings_(graph.symbols) {
  const ir::Node& n = graph.nodes[node];
  auto slot = [&](ir::TensorId t) {
    auto it = std::find(tensors_.begin(), tensors_.end(), t);
    if (it != tensors_.end()) return static_cast<uint32_t>(it - tensors_.begin());
    tensors_.push_back(t);
    return static_cast<uint32_t>(tensors_.size() - 1);
  };
  for (ir::TensorId t : n.inputs) input_slot_.push_back(slot(t));
  for (ir::TensorId t : n.outputs) output_slot_.push_back(slot(t));
  resolved_.resize(tensors_.size());
  dims_.resize(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i) dims_[i].resize(graph.tensors[tensors_[i]].shape.size());
  n_ = graph.symbols.Find("n");
  seqs_ = graph.symbols.Find("seqs");
  ctx_ = graph.symbols.Find("ctx");
  // The rule's views of the tensors (resolved_ no longer moves), and the bindings with the
  // graph's own dims: Eval only rebinds the workload, allocating nothing.
  for (uint32_t s : input_slot_) ins_.push_back(&resolved_[s]);
  for (uint32_t s : output_slot_) outs_.push_back(&resolved_[s]);
  for (const auto& [sym, value] : graph.dims) bindings_.Set(sym, value);
  for (const auto& sym : {n_, seqs_, ctx_}) {
    if (sym) bindings_.Set(*sym, 0);
  }
}

Result<void> NodeEvaluator::Resolve(const expr::Bindings& b) {
  for (size_t i = 0; i < tensors_.size(); ++i) {
    auto ok = cost::ResolveTensor(graph_, graph_.tensors[tensors_[i]], b,
                                  std::span<int64_t>(dims_[i].data(), dims_[i].size()),
                                  resolved_[i]);
    if (!ok) return ok;
  }
  return {};
}

Result<cost::NodeCost> NodeEvaluator::Eval(const Point& p) {
  expr::Bindings& b = bindings_;
  if (n_) b.Set(*n_, p.n);
  if (seqs_) b.Set(*seqs_, p.seqs);
  if (ctx_) b.Set(*ctx_, p.ctx);
  if (auto ok = Resolve(b); !ok) return std::unexpected(ok.error());

  cost::NodeCost c;  // not costed unless the step says otherwise; the reason is the ledger's
  assumptions_.clear();
  auto costed = cost::CostResolvedNode(graph_, graph_.nodes[node_], ins_, outs_, b, c, reason_,
                                       assumptions_);
  if (!costed) return std::unexpected(costed.error());
  return c;
}

}  // namespace opscope::sweep
