// Builds the ledger: binds symbols, resolves every tensor once, costs every node through
// the rule table, and sums the essential traffic the fused floor needs.
#include "cost/ledger.h"

#include <algorithm>
#include <unordered_set>

#include "cost/node_step.h"
#include "cost/resolved.h"
#include "cost/rules.h"
#include "support/checked_math.h"
#include "support/huge_pages.h"

namespace opscope::cost {

std::string_view NoteText(Note n) {
  switch (n) {
    case Note::kNone: return "";
    case Note::kMlaAbsorbed: return "MLA absorbed form (attends in the latent space)";
    case Note::kMlaExpanded: return "MLA expanded form (latent expanded to per-head K/V)";
  }
  return "";
}

std::string_view Ledger::Reason(size_t node) const {
  // not_costed is in node order: binary search.
  auto it = std::lower_bound(not_costed.begin(), not_costed.end(), node,
                             [](const auto& entry, size_t n) { return entry.first < n; });
  return it != not_costed.end() && it->first == node ? std::string_view(it->second)
                                                     : std::string_view();
}

namespace {

// The error for dim `d` of `t` that failed to evaluate (anything but an unbound symbol).
Error DimError(const ir::Graph& g, const ir::Tensor& t, size_t d, const expr::EvalError& e) {
  return Error{"tensor '" + t.name + "': dim " + std::to_string(d) + " ('" +
               t.shape[d].ToString(g.symbols) + "'): " + e.Message(g.symbols)};
}

}  // namespace

Result<void> ResolveTensor(const ir::Graph& g, const ir::Tensor& t, const expr::Bindings& b,
                           std::span<int64_t> dims, ResolvedTensor& r) {
  using Status = ResolvedTensor::Status;
  r = ResolvedTensor{};
  r.role = t.role;
  r.format = t.format;
  r.dims = dims;
  // One pass: evaluate each dim (constants need no evaluation: most dims of most graphs are
  // constants) and multiply the element count as we go. A dim that fails to evaluate or is
  // negative is an error at once; an overflowing running product (left to right) is one only
  // once every dim resolved (an unbound dim wins: the tensor is not costed).
  bool concrete = true;
  bool elems_overflow = false;
  uint64_t elems = 1;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    const expr::Expr& e = t.shape[d];
    int64_t v;
    if (e.IsConstant()) {
      v = e.constant();
    } else {
      concrete = false;
      auto ev = e.Eval(b);
      if (!ev) {
        if (ev.error().kind != expr::EvalError::Kind::kUnbound) {
          return std::unexpected(DimError(g, t, d, ev.error()));
        }
        if (r.status == Status::kOk) {
          r.status = Status::kUnbound;
          r.unbound = ev.error().symbol;
        }
        continue;
      }
      v = *ev;
    }
    if (v < 0) {
      return MakeError("tensor '" + t.name + "': dim " + std::to_string(d) + " ('" +
                       e.ToString(g.symbols) + "') is negative (" + std::to_string(v) + ")");
    }
    dims[d] = v;
    elems_overflow |= __builtin_mul_overflow(elems, static_cast<uint64_t>(v), &elems);
  }
  if (r.status != Status::kOk) return {};
  if (elems_overflow) return MakeError("tensor '" + t.name + "': element count overflows 64 bits");
  r.elems = elems;
  const format::FormatInfo& info = format::Info(t.format);
  if (info.block == 1 && info.tensor_bytes == 0 && info.bits % 8 == 0) {
    // Plain element types (the common case): elements · element bytes.
    auto plain = CheckedMul(elems, static_cast<uint64_t>(info.bits / 8));
    if (!plain) return MakeError("tensor '" + t.name + "': byte size overflows 64 bits");
    r.bytes = *plain;
    return {};
  }
  auto bytes = format::TensorBytes(t.format, r.dims);
  if (!bytes) {
    if (bytes.error() == format::SizeError::kBlockMismatch) {
      if (concrete) {
        return MakeError("tensor '" + t.name + "': last dim " + std::to_string(r.Last()) +
                         " is not a multiple of " + std::string(format::FormatName(t.format)) +
                         "'s " + std::to_string(info.block) + "-element block");
      }
      r.status = Status::kBlockMismatch;
      return {};
    }
    return MakeError("tensor '" + t.name + "': byte size overflows 64 bits");
  }
  r.bytes = *bytes;
  return {};
}

namespace {

using Status = ResolvedTensor::Status;

Result<expr::Bindings> Bind(const ir::Graph& g, const Workload& workload,
                            std::vector<std::pair<std::string, int64_t>>& bound) {
  expr::Bindings b(g.symbols);
  for (const auto& [sym, value] : g.dims) {
    if (value < 0) {
      return MakeError("dim '" + g.symbols.Name(sym) + "' is negative (" +
                       std::to_string(value) + ")");
    }
    b.Set(sym, value);
    bound.emplace_back(g.symbols.Name(sym), value);
  }
  for (const auto& [name, value] : workload.bindings) {
    const auto id = g.symbols.Find(name);
    if (!id) return MakeError("--dim '" + name + "': the model has no dim named '" + name + "'");
    if (b.IsBound(*id)) {
      for (const auto& [sym, fixed] : g.dims) {
        if (sym == *id) {
          return MakeError("--dim '" + name + "': the model fixes '" + name + "' = " +
                           std::to_string(fixed));
        }
      }
      return MakeError("--dim '" + name + "' is given twice");
    }
    if (value < 0) return MakeError("--dim '" + name + "': value must be >= 0");
    b.Set(*id, value);
    bound.emplace_back(name, value);
  }
  return b;
}

// Storage for resolved dims that never moves once written (the resolved tensors' spans point
// into it), filled in one pass without first counting every tensor's rank: blocks of
// `block_dims` dims, a new one whenever the next tensor's dims do not fit in the current one.
// Only the pages a block's dims touch are ever faulted in.
class DimsArena {
 public:
  explicit DimsArena(size_t block_dims) : block_dims_(block_dims) {}

  std::span<int64_t> Take(size_t rank) {
    if (blocks_.empty() || blocks_.back().size() + rank > blocks_.back().capacity()) {
      blocks_.emplace_back();
      ReserveHugePages(blocks_.back(), std::max(rank, block_dims_));
    }
    std::vector<int64_t>& block = blocks_.back();
    block.resize(block.size() + rank);  // within capacity: never reallocates
    return std::span<int64_t>(block.data() + block.size() - rank, rank);
  }

 private:
  size_t block_dims_;
  std::vector<std::vector<int64_t>> blocks_;
};

// Evaluates every tensor's shape and byte size under `b` (see ResolveTensor), in one pass
// over the graph's tensors. Sets `explicit_outputs` when some tensor has role output.
Result<void> Resolve(const ir::Graph& g, const expr::Bindings& b, DimsArena& dims,
                     std::vector<ResolvedTensor>& out, bool& explicit_outputs) {
  ReserveHugePages(out, g.tensors.size());
  explicit_outputs = false;
  for (const ir::Tensor& t : g.tensors) {
    explicit_outputs |= t.role == ir::Role::kOutput;
    auto ok = ResolveTensor(g, t, b, dims.Take(t.shape.size()), out.emplace_back());
    if (!ok) return ok;
  }
  return {};
}

// Why a node whose tensors did not all resolve is not costed.
// An importer may mark any node unresolved (a branch of an undecided If, a node downstream of
// a shape it could not infer) with the string attribute `unresolved_reason`.
std::optional<std::string> UnresolvedReason(const ir::Graph& g, const ir::Node& n,
                                            std::span<const ResolvedTensor* const> ins,
                                            std::span<const ResolvedTensor* const> outs) {
  if (const auto why = n.StringAttr("unresolved_reason")) {
    return ir::Family(n.op) == ir::OpFamily::kControlFlow
               ? "control flow '" + std::string(ir::OpName(n.op)) + "': " + std::string(*why)
               : std::string(*why);
  }
  auto check = [&](const ResolvedTensor& r, ir::TensorId id) -> std::optional<std::string> {
    const ir::Tensor& t = g.tensors[id];
    switch (r.status) {
      case Status::kOk:
        return std::nullopt;
      case Status::kUnbound: {
        const std::string& sym = g.symbols.Name(r.unbound);
        return "dim '" + sym + "' of tensor '" + t.name + "' is not bound (pass --dim " + sym +
               "=VALUE)";
      }
      case Status::kBlockMismatch:
        return "tensor '" + t.name + "': last dim " + std::to_string(r.Last()) +
               " is not a multiple of " + std::string(format::FormatName(t.format)) + "'s " +
               std::to_string(format::Info(t.format).block) + "-element block";
    }
    return std::nullopt;
  };
  for (size_t k = 0; k < ins.size(); ++k) {
    if (auto why = check(*ins[k], n.inputs[k])) return why;
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    if (auto why = check(*outs[k], n.outputs[k])) return why;
  }
  return std::nullopt;
}

}  // namespace

namespace node_step {

bool Unresolved(const ir::Graph& graph, const ir::Node& node,
                std::span<const ResolvedTensor* const> ins,
                std::span<const ResolvedTensor* const> outs, std::string& reason) {
  auto why = UnresolvedReason(graph, node, ins, outs);
  if (!why) return false;
  reason = std::move(*why);
  return true;
}

Result<bool> RuleFailed(RuleFailure failure, std::string& reason) {
  if (failure.kind == RuleFailure::Kind::kBadInput) return MakeError(std::move(failure.message));
  reason = std::move(failure.message);
  return false;
}

Result<bool> Repeat(const ir::Node& node, NodeCost& cost) {
  for (uint64_t* field : {&cost.bytes_read, &cost.bytes_written, &cost.bytes_weights,
                          &cost.bytes_state, &cost.flops, &cost.bytes_link}) {
    auto r = CheckedMul(*field, node.repeat);
    if (!r) return MakeError("node '" + node.name + "': repeated cost overflows 64 bits");
    *field = *r;
  }
  return true;
}

}  // namespace node_step

Result<Ledger> BuildLedger(const ir::Graph& graph, const Workload& workload) {
  Ledger ledger;
  auto bindings = Bind(graph, workload, ledger.bound_dims);
  if (!bindings) return std::unexpected(bindings.error());
  // Room for rank 4 per tensor in the first block (most graphs' tensors have rank <= 4).
  DimsArena dims(4 * graph.tensors.size() + 16);
  std::vector<ResolvedTensor> resolved;
  bool explicit_outputs = false;
  if (auto ok = Resolve(graph, *bindings, dims, resolved, explicit_outputs); !ok) {
    return std::unexpected(ok.error());
  }

  ReserveHugePages(ledger.nodes, graph.nodes.size());  // filled one entry per node below
  std::vector<std::string> assumptions;
  // Per tensor: the most any costed node must read of it (weights and graph inputs), and
  // flags for the essential-output pass after the loop.
  enum : uint8_t { kInputView = 1, kConsumed = 2, kProducedByCosted = 4 };
  std::vector<uint64_t> floor_need;
  ReserveHugePages(floor_need, graph.tensors.size());
  floor_need.assign(graph.tensors.size(), 0);
  std::vector<uint8_t> flags(graph.tensors.size(), 0);

  std::vector<const ResolvedTensor*> ins, outs;  // reused across nodes
  std::string reason;                            // why the current node is not costed
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    NodeCost& cost = ledger.nodes.emplace_back();  // reserved: never reallocates
    // A cost twin of a costed node has its op, attributes, shapes, formats and roles: it
    // resolves alike and costs the same.
    if (node.cost_twin >= 0 && ledger.nodes[node.cost_twin].costed &&
        graph.nodes[node.cost_twin].repeat == node.repeat) {
      for (ir::TensorId t : node.inputs) flags[t] |= kConsumed;
      cost = ledger.nodes[node.cost_twin];
    } else {
      // Sized once and filled by index: no capacity check per tensor.
      ins.resize(node.inputs.size());
      outs.resize(node.outputs.size());
      for (size_t k = 0; k < ins.size(); ++k) {
        const ir::TensorId t = node.inputs[k];
        flags[t] |= kConsumed;
        ins[k] = &resolved[t];
      }
      for (size_t k = 0; k < outs.size(); ++k) outs[k] = &resolved[node.outputs[k]];
      auto costed = CostResolvedNode(graph, node, ins, outs, *bindings, cost, reason, assumptions);
      if (!costed) return std::unexpected(costed.error());
      if (!*costed) {
        ledger.not_costed.emplace_back(i, std::move(reason));
        continue;
      }
    }
    // Essential traffic: each weight once, at the most any one node must read of it (a
    // table gathered by one node and read whole by a tied LM head is read whole); graph
    // inputs likewise (a gather reads only its rows); graph outputs once; state as the nodes
    // read and write it. A node that moves nothing (a view) adds nothing: its outputs stand
    // for its inputs, and whoever reads them pays (so the floor never exceeds the op sum).
    if (cost.bytes() == 0) {
      bool of_input = false;
      for (ir::TensorId t : node.inputs) {
        of_input = of_input || resolved[t].role == ir::Role::kInput || (flags[t] & kInputView);
      }
      if (of_input) {
        for (ir::TensorId t : node.outputs) flags[t] |= kInputView;
      }
      continue;
    }
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const ir::TensorId t = node.inputs[k];
      const ResolvedTensor& r = resolved[t];
      if (r.IsWeight() || r.role == ir::Role::kInput || (flags[t] & kInputView)) {
        const bool floor_input = cost.floor_input != NodeCost::kNoInput && k == cost.floor_input;
        const uint64_t need = floor_input ? cost.floor_input_bytes : r.bytes;
        floor_need[t] = std::max(floor_need[t], need);
      }
    }
    for (ir::TensorId t : node.outputs) flags[t] |= kProducedByCosted;
    ledger.essential_state_bytes = SaturatingAdd(ledger.essential_state_bytes, cost.bytes_state);
  }
  // Graph outputs (role output, or else produced and never consumed) written by costed nodes.
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    const ResolvedTensor& r = resolved[t];
    if (r.IsWeight()) {
      ledger.essential_weight_bytes = SaturatingAdd(ledger.essential_weight_bytes, floor_need[t]);
      continue;
    }
    ledger.essential_io_bytes = SaturatingAdd(ledger.essential_io_bytes, floor_need[t]);
    const bool is_output = explicit_outputs
                               ? r.role == ir::Role::kOutput
                               : !(flags[t] & kConsumed) && r.role != ir::Role::kState;
    if (is_output && (flags[t] & kProducedByCosted)) {
      ledger.essential_io_bytes = SaturatingAdd(ledger.essential_io_bytes, r.bytes);
    }
  }
  // Deduplicate assumptions, keeping first-seen order.
  std::unordered_set<std::string> seen;
  for (const std::string& a : graph.assumptions) {
    if (seen.insert(a).second) ledger.assumptions.push_back(a);
  }
  for (std::string& a : assumptions) {
    if (seen.insert(a).second) ledger.assumptions.push_back(std::move(a));
  }
  return ledger;
}

}  // namespace opscope::cost
