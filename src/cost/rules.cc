// The cost rules, one function per op family. Each comment states the formula with units and
// what it leaves out; shared arithmetic lives in the family helpers at the top.
#include "cost/rules.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "cost/collectives.h"
#include "support/checked_math.h"

namespace opscope::cost {
namespace {

using format::MmaClass;
using ir::OpFamily;
using Failure = std::unexpected<RuleFailure>;
// A rule writes its numbers into the NodeCost it is given (default-initialized); on failure
// the ledger discards whatever it wrote.
using RuleResult = std::expected<void, RuleFailure>;

std::string NodeLabel(const ir::Node& n) {
  return "node '" + n.name + "' (" + std::string(ir::OpName(n.op)) + ")";
}

Failure BadInput(const RuleInput& in, const std::string& why) {
  return Failure(RuleFailure{RuleFailure::Kind::kBadInput, NodeLabel(in.node) + ": " + why});
}

Failure NotCosted(const std::string& why) {
  return Failure(RuleFailure{RuleFailure::Kind::kNotCosted, why});
}

// Checked product of several counts; an overflow is bad input (the graph claims a count no
// step can have).
struct Product {
  uint64_t value = 1;
  bool overflow = false;
  Product& operator*=(uint64_t v) {
    auto r = CheckedMul(value, v);
    if (!r) overflow = true;
    value = r.value_or(0);
    return *this;
  }
};

RuleResult SetFlops(const RuleInput& in, const Product& p, NodeCost& c) {
  if (p.overflow) return BadInput(in, "FLOP count overflows 64 bits");
  c.flops = p.value;
  return {};
}

// The default traffic: every distinct input read once, every output written once.
// bytes_weights and bytes_state split the reads (and state writes) by role.
void StreamAll(const RuleInput& in, NodeCost& c) {
  for (size_t i = 0; i < in.inputs.size(); ++i) {
    bool seen = false;
    for (size_t j = 0; j < i; ++j) seen = seen || in.node.inputs[j] == in.node.inputs[i];
    if (seen) continue;
    const ResolvedTensor& t = *in.inputs[i];
    c.bytes_read += t.bytes;
    if (t.IsWeight()) c.bytes_weights += t.bytes;
    if (t.role == ir::Role::kState) c.bytes_state += t.bytes;
  }
  for (const ResolvedTensor* t : in.outputs) {
    c.bytes_written += t->bytes;
    if (t->role == ir::Role::kState) c.bytes_state += t->bytes;
  }
}

std::optional<int64_t> IntAttrOrDim(const RuleInput& in, std::string_view name) {
  if (auto v = in.node.IntAttr(name)) return v;
  if (auto id = in.graph.symbols.Find(name); id && in.bindings.IsBound(*id)) {
    return in.bindings.Value(*id);
  }
  return std::nullopt;
}

Failure MissingAttr(const RuleInput& in, std::string_view attr) {
  return NotCosted(NodeLabel(in.node) + ": needs attribute '" + std::string(attr) +
                   "', which the model does not define");
}

// ---- MMA class -------------------------------------------------------------------------
// The estimate runs at the activation's class; a plain float operand wider than the
// activation widens it (fp8 activation x bf16 weight -> bf16). The floor may use the
// weight's own class when it is faster (int8 for integer/GGUF weights, fp8, fp4).
void SetMmaClass(const ResolvedTensor& act, const ResolvedTensor* other, NodeCost& c) {
  MmaClass cls = format::Info(act.format).mma;
  if (other != nullptr && format::IsFloat(other->format)) {
    const MmaClass o = format::Info(other->format).mma;
    if (cls != MmaClass::kNone && format::MmaClassBits(o) > format::MmaClassBits(cls)) cls = o;
  }
  c.mma_class = cls;
  c.floor_class = cls;
  if (cls != MmaClass::kNone && other != nullptr && other->IsWeight()) {
    const MmaClass w = format::WeightFloorClass(other->format);
    if (w != MmaClass::kNone) c.floor_class = w;  // roofline keeps the faster of the two
  }
}

// ---- Family helpers ----------------------------------------------------------------------

// 2 FLOPs (one multiply-add) per output element per contracted step.
Product GemmFlops(uint64_t out_elems, uint64_t k) {
  Product p;
  p *= 2;
  p *= out_elems;
  p *= k;
  return p;
}

// Query-key pairs of one sequence: T new queries after P cached keys. Causal: query i sees
// P + i keys; otherwise all P + T. A window W caps each query at W keys (0 = no window).
std::optional<uint64_t> AttendedPairs(uint64_t t, uint64_t p, bool causal, uint64_t window) {
  using U = unsigned __int128;
  U pairs;
  if (!causal) {
    U keys = U(p) + t;
    if (window > 0 && keys > window) keys = window;
    pairs = U(t) * keys;
  } else if (window == 0) {
    pairs = U(t) * p + U(t) * (U(t) + 1) / 2;  // T·P + T(T+1)/2
  } else {
    // Queries with P + i <= W see all their keys; the rest see exactly W.
    const U c = window > p ? std::min<U>(U(window) - p, t) : 0;
    pairs = c * p + c * (c + 1) / 2 + (U(t) - c) * window;
  }
  if (pairs > UINT64_MAX) return std::nullopt;
  return static_cast<uint64_t>(pairs);
}

// Distinct experts T token rows touch under uniform top-k routing: E·(1−(1−k/E)^T).
double DistinctExperts(double experts, double top_k, double tokens) {
  if (tokens <= 0) return 0;
  return experts * (1.0 - std::pow(1.0 - top_k / experts, tokens));
}

// ---- Rules -------------------------------------------------------------------------------

// MatMul / Gemm / Linear / LmHead / Router   A[..., M, K] · B -> Y[..., M, N]
//   flops = 2 · output elements · K   (K: A's last dim; Gemm with transA: A's first)
//   bytes = every operand once + the output.  Not counted: bias adds (bytes only).
RuleResult MatMulRule(const RuleInput& in, NodeCost& c) {
  if (in.inputs.size() < 2 || in.outputs.empty()) {
    return BadInput(in, "needs two inputs and an output");
  }
  const ResolvedTensor& a = *in.inputs[0];
  const ResolvedTensor& b = *in.inputs[1];
  uint64_t k = a.Last();
  if (in.node.op == ir::OpKind::kGemm && in.node.IntAttr("transA").value_or(0) != 0) {
    k = a.Dim(0);
  }
  if (in.node.op == ir::OpKind::kLinear || in.node.op == ir::OpKind::kLmHead ||
      in.node.op == ir::OpKind::kRouter) {
    if (b.Rank() != 2 || b.Last() != k) {
      return BadInput(in, "weight must be [out, " + std::to_string(k) + "] to match the input");
    }
  } else if (in.node.op == ir::OpKind::kMatMul && a.Rank() >= 1 && b.Rank() >= 2 &&
             b.Dim(-2) != k) {
    return BadInput(in, "inner dims differ: " + std::to_string(k) + " vs " +
                            std::to_string(b.Dim(-2)));
  }
  if (auto ok = SetFlops(in, GemmFlops(in.outputs[0]->elems, k), c); !ok) return ok;
  StreamAll(in, c);
  SetMmaClass(a, &b, c);
  return {};
}

RuleResult ExpertParallelCost(const RuleInput& in, const ResolvedTensor& x,
                              const ResolvedTensor& w, uint64_t top_k, uint64_t experts_total,
                              NodeCost& c, std::vector<std::string>& assumptions) {
  const uint64_t experts = w.Dim(0), out = w.Dim(1), k = w.Dim(2);
  const uint64_t rows = x.Rows();
  Product p = GemmFlops(rows, k);
  p *= out;
  if (auto ok = SetFlops(in, p, c); !ok) return ok;
  StreamAll(in, c);
  const double group_tokens = static_cast<double>(rows) * static_cast<double>(experts_total) /
                              (static_cast<double>(experts) * static_cast<double>(top_k));
  const double distinct =
      rows == 0 ? 0.0
                : static_cast<double>(experts) *
                      (1.0 - std::pow(1.0 - static_cast<double>(top_k) /
                                                static_cast<double>(experts_total),
                                      group_tokens));
  const auto read_w = static_cast<uint64_t>(
      std::llround(static_cast<double>(w.bytes) * distinct / static_cast<double>(experts)));
  c.bytes_read = c.bytes_read - w.bytes + read_w;
  c.bytes_weights = c.bytes_weights - w.bytes + read_w;
  const uint64_t floor_experts =
      std::min(experts, std::max<uint64_t>(1, (top_k * experts + experts_total - 1) / experts_total));
  c.floor_input = 1;
  c.floor_input_bytes = rows == 0 ? 0 : w.bytes / experts * floor_experts;
  SetMmaClass(x, &w, c);
  assumptions.push_back(
      "routed experts (expert parallel): uniform routing, each device receives "
      "ceil(tokens·top_k/ep) rows and reads E·(1−(1−top_k/E_total)^T) of its E experts for T "
      "tokens of its group");
  return {};
}

// ExpertGateUp / ExpertDown   x[T, k] (down: [T·top_k, k]), w[E, out, k]
//   weight bytes = bytes(w) · distinct / E, distinct = E·(1−(1−top_k/E)^T)  (uniform routing)
//   flops = 2 · T · top_k · k · out
// Expert-parallel form (attribute experts_total = the router's pool E_t; w holds this device's
// E of them): x holds R dispatched (token, expert) rows, one expert each, in both nodes.
//   flops = 2 · R · k · out; the R rows come from T_g = R·E_t/(E·top_k) tokens of the group,
//   distinct = E·(1−(1−top_k/E_t)^T_g); the floor reads ceil(top_k·E/E_t) of them (at least 1).
RuleResult ExpertsRule(const RuleInput& in, NodeCost& c, std::vector<std::string>& assumptions) {
  if (in.inputs.size() < 2 || in.outputs.empty()) {
    return BadInput(in, "needs inputs x and w[E, out, k] and an output");
  }
  const ResolvedTensor& x = *in.inputs[0];
  const ResolvedTensor& w = *in.inputs[1];
  if (w.Rank() != 3) return BadInput(in, "weight must be [E, out, k]");
  const uint64_t experts = w.Dim(0), out = w.Dim(1), k = w.Dim(2);
  if (x.Last() != k) {
    return BadInput(in, "input rows have " + std::to_string(x.Last()) + " elements, weight k is " +
                            std::to_string(k));
  }
  const auto top_k_attr = IntAttrOrDim(in, "top_k");
  if (!top_k_attr) return MissingAttr(in, "top_k");
  const auto top_k = static_cast<uint64_t>(*top_k_attr);
  if (top_k == 0 || top_k > experts) {
    return BadInput(in, "top_k " + std::to_string(top_k) + " must be in 1.." +
                            std::to_string(experts) + " (the expert count)");
  }
  const auto experts_total = in.node.IntAttr("experts_total");
  if (experts_total) {
    if (*experts_total < static_cast<int64_t>(experts) || *experts_total < *top_k_attr) {
      return BadInput(in, "experts_total " + std::to_string(*experts_total) +
                              " must be >= the device's experts and top_k");
    }
    return ExpertParallelCost(in, x, w, top_k, static_cast<uint64_t>(*experts_total), c,
                              assumptions);
  }
  uint64_t tokens = x.Rows();
  if (in.node.op == ir::OpKind::kExpertDown) {
    if (tokens % top_k != 0) {
      return BadInput(in, "input rows " + std::to_string(tokens) + " are not a multiple of top_k");
    }
    tokens /= top_k;
  }
  Product p = GemmFlops(tokens, k);
  p *= top_k;
  p *= out;
  if (auto ok = SetFlops(in, p, c); !ok) return ok;
  StreamAll(in, c);
  const double distinct = DistinctExperts(static_cast<double>(experts),
                                          static_cast<double>(top_k),
                                          static_cast<double>(tokens));
  const auto read_w = static_cast<uint64_t>(
      std::llround(static_cast<double>(w.bytes) * distinct / static_cast<double>(experts)));
  c.bytes_read = c.bytes_read - w.bytes + read_w;
  c.bytes_weights = c.bytes_weights - w.bytes + read_w;
  // At least top_k experts must be read whenever a token is routed: the floor's minimum.
  const uint64_t floor_w = tokens == 0 ? 0 : w.bytes / experts * top_k;
  c.floor_input = 1;
  c.floor_input_bytes = floor_w;
  SetMmaClass(x, &w, c);
  assumptions.push_back(
      "routed experts: uniform routing, distinct experts read = E·(1−(1−top_k/E)^T) for T "
      "token rows");
  return {};
}

// Conv   X[N, C_in, ...], W[C_out, C_in/groups, k...] -> Y
//   flops = 2 · output elements · (C_in/groups) · kernel elements   (bias adds ignored)
// ConvTranspose   W[C_in, C_out/groups, k...]
//   flops = 2 · input elements · (C_out/groups) · kernel elements
RuleResult ConvRule(const RuleInput& in, bool transpose, NodeCost& c) {
  if (in.inputs.size() < 2 || in.outputs.empty()) return BadInput(in, "needs X, W and an output");
  const ResolvedTensor& x = *in.inputs[0];
  const ResolvedTensor& w = *in.inputs[1];
  if (w.Rank() < 3) return BadInput(in, "weight must have rank 3 or more");
  Product per_point;
  for (int64_t i = 1; i < w.Rank(); ++i) per_point *= w.Dim(i);  // channels · kernel elements
  Product p = GemmFlops(transpose ? x.elems : in.outputs[0]->elems, per_point.value);
  if (per_point.overflow) p.overflow = true;
  if (auto ok = SetFlops(in, p, c); !ok) return ok;
  StreamAll(in, c);
  SetMmaClass(x, &w, c);
  return {};
}

// Einsum   "ij,jk->ik"
//   flops = 2 · Π extents of every distinct index (two operands); Π extents (one operand)
RuleResult EinsumRule(const RuleInput& in, NodeCost& c) {
  const auto eq = in.node.StringAttr("equation");
  if (!eq) return MissingAttr(in, "equation");
  const std::string lhs(eq->substr(0, eq->find("->")));
  StreamAll(in, c);
  if (in.inputs.size() > 2 || lhs.find("...") != std::string::npos) {
    c.flop_model = false;  // three-operand or ellipsis einsums: order-dependent, not modelled
    return {};
  }
  uint64_t extent[128] = {};
  size_t operand = 0, axis = 0;
  for (char ch : lhs) {
    if (ch == ',') {
      ++operand;
      axis = 0;
      continue;
    }
    if (ch == ' ') continue;
    if (operand >= in.inputs.size() || static_cast<unsigned char>(ch) >= 128) {
      return BadInput(in, "equation '" + std::string(*eq) + "' does not match its inputs");
    }
    const uint64_t d = in.inputs[operand]->Dim(static_cast<int64_t>(axis++));
    uint64_t& e = extent[static_cast<unsigned char>(ch)];
    if (e > 1 && d > 1 && e != d) {
      return BadInput(in, "index '" + std::string(1, ch) + "' has extents " + std::to_string(e) +
                              " and " + std::to_string(d));
    }
    e = std::max(e, d);
  }
  Product p;
  if (in.inputs.size() == 2) p *= 2;
  for (uint64_t e : extent) {
    if (e > 0) p *= e;
  }
  if (p.overflow) return BadInput(in, "FLOP count overflows 64 bits");
  c.flops = p.value;
  if (!in.inputs.empty()) SetMmaClass(*in.inputs[0], in.inputs.size() > 1 ? in.inputs[1] : nullptr, c);
  return {};
}

// PagedAttention   q[n, q_heads·head_dim], caches (state) [seqs, ctx, kv_heads, head_dim]
//   per sequence T = n/seqs new queries after P = ctx cached tokens;
//   pairs = T·P + T(T+1)/2 (causal) or T·(P+T), each query capped at `window` keys;
//   flops = 2 · pairs · seqs · q_heads · (d_qk + d_v)
//   bytes: q, the caches (state reads), new K/V rows (read, and appended to the cache at the
//   cache's format: a state write), the output. Not counted: the softmax's own FLOPs.
// MLA (attribute kv_lora_rank): one latent cache [seqs, ctx, 1, kv_lora_rank + rope]; the
// cheaper of the absorbed form (d_qk = kvr + rope, d_v = kvr, plus absorbing kv_b into q and
// the output: 2·n·H·kvr·(nope + v)) and the expanded form (d_qk = nope + rope, d_v = v, plus
// expanding the latent of every key: 2·seqs·(T+P)·kvr·H·(nope + v)).
RuleResult PagedAttentionRule(const RuleInput& in, NodeCost& c,
                              std::vector<std::string>& assumptions) {
  if (in.inputs.empty() || in.outputs.empty()) return BadInput(in, "needs q and an output");
  const ResolvedTensor& q = *in.inputs[0];
  std::vector<const ResolvedTensor*> caches, fresh;
  for (size_t i = 1; i < in.inputs.size(); ++i) {
    const ResolvedTensor* t = in.inputs[i];
    if (t->role == ir::Role::kState) {
      caches.push_back(t);
    } else if (!t->IsWeight()) {
      fresh.push_back(t);
    }
  }
  if (caches.empty()) return BadInput(in, "needs its KV cache as inputs with role 'state'");
  const ResolvedTensor& cache = *caches[0];
  if (cache.Rank() != 4) return BadInput(in, "cache must be [seqs, ctx, kv_heads, head_dim]");
  if (fresh.size() > caches.size()) {
    return BadInput(in, "has more new-row inputs than caches");
  }
  const auto q_heads_attr = in.node.IntAttr("q_heads");
  if (!q_heads_attr || *q_heads_attr <= 0) return MissingAttr(in, "q_heads");
  const auto heads = static_cast<uint64_t>(*q_heads_attr);
  const uint64_t seqs = cache.Dim(0), cached = cache.Dim(1);
  const uint64_t n = q.Rows();
  if (seqs == 0 ? n != 0 : n % seqs != 0) {
    return BadInput(in, std::to_string(n) + " query rows are not a whole number per sequence (" +
                            std::to_string(seqs) + " sequences)");
  }
  const uint64_t t = seqs == 0 ? 0 : n / seqs;
  const bool causal = in.node.IntAttr("causal").value_or(1) != 0;
  const int64_t window = in.node.IntAttr("window").value_or(0);
  if (window < 0) return BadInput(in, "window must be >= 0");
  const auto pairs = AttendedPairs(t, cached, causal, static_cast<uint64_t>(window));
  if (!pairs) return BadInput(in, "attended pairs overflow 64 bits");

  Product p;
  if (in.node.FindAttr("kv_lora_rank") != nullptr) {
    const auto kvr = in.node.IntAttr("kv_lora_rank");
    const auto rope = in.node.IntAttr("qk_rope_head_dim");
    const auto nope = in.node.IntAttr("qk_nope_head_dim");
    const auto v = in.node.IntAttr("v_head_dim");
    if (!kvr) return MissingAttr(in, "kv_lora_rank");
    if (!rope) return MissingAttr(in, "qk_rope_head_dim");
    if (!nope) return MissingAttr(in, "qk_nope_head_dim");
    if (!v) return MissingAttr(in, "v_head_dim");
    const auto R = static_cast<uint64_t>(*kvr), Dr = static_cast<uint64_t>(*rope);
    const auto Dn = static_cast<uint64_t>(*nope), Dv = static_cast<uint64_t>(*v);
    Product absorbed = GemmFlops(*pairs, R + Dr + R);
    absorbed *= seqs;
    absorbed *= heads;
    Product absorb_gemms = GemmFlops(n, R);
    absorb_gemms *= heads;
    absorb_gemms *= Dn + Dv;
    Product expanded = GemmFlops(*pairs, Dn + Dr + Dv);
    expanded *= seqs;
    expanded *= heads;
    Product expand_gemm = GemmFlops(seqs, t + cached);
    expand_gemm *= R;
    expand_gemm *= heads;
    expand_gemm *= Dn + Dv;
    if (absorbed.overflow || absorb_gemms.overflow || expanded.overflow ||
        expand_gemm.overflow) {
      return BadInput(in, "FLOP count overflows 64 bits");
    }
    const uint64_t a = absorbed.value + absorb_gemms.value;
    const uint64_t e = expanded.value + expand_gemm.value;
    c.flops = std::min(a, e);
    c.note = a <= e ? Note::kMlaAbsorbed : Note::kMlaExpanded;
  } else {
    const int64_t head_dim_attr =
        in.node.IntAttr("head_dim").value_or(heads ? static_cast<int64_t>(q.Last() / heads) : 0);
    if (head_dim_attr <= 0) return MissingAttr(in, "head_dim");
    const auto d_qk = static_cast<uint64_t>(head_dim_attr);
    const auto d_v = static_cast<uint64_t>(in.node.IntAttr("v_head_dim").value_or(head_dim_attr));
    if (q.Last() != heads * d_qk) {
      return BadInput(in, "q rows have " + std::to_string(q.Last()) + " elements, expected " +
                              "q_heads·head_dim = " + std::to_string(heads * d_qk));
    }
    p = GemmFlops(*pairs, d_qk + d_v);
    p *= seqs;
    p *= heads;
    if (p.overflow) return BadInput(in, "FLOP count overflows 64 bits");
    c.flops = p.value;
  }
  // Traffic: every input once (caches are state reads), outputs once, and the new rows
  // appended to their cache in the cache's format. Caches listed as outputs are not re-counted.
  for (size_t i = 0; i < in.inputs.size(); ++i) {
    const ResolvedTensor& t_in = *in.inputs[i];
    c.bytes_read += t_in.bytes;
    if (t_in.IsWeight()) c.bytes_weights += t_in.bytes;
    if (t_in.role == ir::Role::kState) c.bytes_state += t_in.bytes;
  }
  for (const ResolvedTensor* o : in.outputs) {
    if (o->role != ir::Role::kState) c.bytes_written += o->bytes;
  }
  for (size_t i = 0; i < fresh.size(); ++i) {
    auto appended = format::TensorBytes(caches[i]->format, fresh[i]->dims);
    if (!appended) {
      return NotCosted(NodeLabel(in.node) + ": new rows do not fit the cache format '" +
                       std::string(format::FormatName(caches[i]->format)) + "' block");
    }
    // The cache's per-tensor scale (fp8_e4m3) already exists: an append writes rows only.
    const uint64_t rows_bytes = *appended - format::Info(caches[i]->format).tensor_bytes;
    c.bytes_written += rows_bytes;
    c.bytes_state += rows_bytes;
  }
  SetMmaClass(q, nullptr, c);
  if (causal && t > 1) {
    assumptions.push_back("causal attention: T new queries after P cached tokens attend "
                          "T·P + T(T+1)/2 query-key pairs per sequence");
  }
  return {};
}

// Attention (SDPA over activations)   q, k, v as [B, H, S, D], or [B, S, H·D] with
//   attributes q_heads (and kv_heads)
//   flops = 2 · B · q_heads · pairs · (d_qk + d_v); pairs = Tq·Tk, or causal (attribute
//   causal=1) with P = Tk − Tq cached keys. Masks and other inputs: bytes only.
RuleResult AttentionRule(const RuleInput& in, NodeCost& c) {
  if (in.inputs.size() < 3 || in.outputs.empty()) return BadInput(in, "needs q, k, v");
  const ResolvedTensor& q = *in.inputs[0];
  const ResolvedTensor& k = *in.inputs[1];
  const ResolvedTensor& v = *in.inputs[2];
  uint64_t batch, heads, tq, tk, d_qk, d_v;
  if (q.Rank() == 4) {
    batch = q.Dim(0), heads = q.Dim(1), tq = q.Dim(2), d_qk = q.Dim(3);
    tk = k.Dim(2), d_v = v.Dim(3);
  } else if (q.Rank() == 3) {
    const auto qh = in.node.IntAttr("q_heads");
    if (!qh || *qh <= 0) return MissingAttr(in, "q_heads");
    const auto kvh = in.node.IntAttr("kv_heads").value_or(*qh);
    if (kvh <= 0) return MissingAttr(in, "kv_heads");
    heads = static_cast<uint64_t>(*qh);
    batch = q.Dim(0), tq = q.Dim(1), tk = k.Dim(1);
    if (q.Last() % heads != 0 || v.Last() % static_cast<uint64_t>(kvh) != 0) {
      return BadInput(in, "hidden size is not a multiple of the head count");
    }
    d_qk = q.Last() / heads;
    d_v = v.Last() / static_cast<uint64_t>(kvh);
  } else {
    return BadInput(in, "q must be [B, H, S, D] or [B, S, H·D]");
  }
  const bool causal = in.node.IntAttr("causal").value_or(0) != 0;
  if (causal && tk < tq) return BadInput(in, "is causal but has fewer keys than queries");
  // Causal: the Tq queries come after P = Tk − Tq earlier keys. Otherwise each sees all Tk.
  const auto pairs = causal ? AttendedPairs(tq, tk - tq, true, 0) : CheckedMul(tq, tk);
  if (!pairs) return BadInput(in, "attended pairs overflow 64 bits");
  const uint64_t all_pairs = *pairs;
  Product p = GemmFlops(all_pairs, d_qk + d_v);
  p *= batch;
  p *= heads;
  if (auto ok = SetFlops(in, p, c); !ok) return ok;
  StreamAll(in, c);
  SetMmaClass(q, nullptr, c);
  return {};
}

const ResolvedTensor* FindState(const RuleInput& in) {
  for (const ResolvedTensor* t : in.inputs) {
    if (t->role == ir::Role::kState) return t;
  }
  return nullptr;
}

// The state a node updates (a recurrence, a causal conv) is read once and written once per
// step: StreamAll has counted the read, and the write when the node lists its new state as an
// output — the state tensor itself (updated in place) or its own tensor with role `state` (the
// SSA form importers produce). Only a node that lists no state output is charged the
// write-back here, at the size of the state it read.
void AddStateWriteBack(const RuleInput& in, const ResolvedTensor& state, NodeCost& c) {
  for (const ResolvedTensor* o : in.outputs) {
    if (o->role == ir::Role::kState) return;
  }
  c.bytes_written += state.bytes;
  c.bytes_state += state.bytes;
}

// GdnRecurrence / SsmUpdate   x[n, ...], state [seqs, heads, a, b] (read and written)
//   flops = 4 · n · (state elements of one sequence)
RuleResult RecurrenceRule(const RuleInput& in, NodeCost& c) {
  if (in.inputs.empty()) return BadInput(in, "needs x and its state");
  const ResolvedTensor* state = FindState(in);
  if (state == nullptr) return BadInput(in, "needs its recurrent state as an input with role 'state'");
  if (state->Rank() < 2) return BadInput(in, "state must be [seqs, ...]");
  const uint64_t seqs = state->Dim(0);
  const uint64_t per_seq = seqs == 0 ? 0 : state->elems / seqs;
  Product p;
  p *= 4;
  p *= in.inputs[0]->Dim(0);
  p *= per_seq;
  if (auto ok = SetFlops(in, p, c); !ok) return ok;
  StreamAll(in, c);
  AddStateWriteBack(in, *state, c);
  return {};
}

// CausalConv1d   x[n, channels], conv state (read and written), w[channels, kernel]
//   flops = 2 · n · channels · kernel
RuleResult CausalConvRule(const RuleInput& in, NodeCost& c) {
  if (in.inputs.empty()) return BadInput(in, "needs x, its conv state and w");
  const ResolvedTensor& x = *in.inputs[0];
  const ResolvedTensor* state = FindState(in);
  if (state == nullptr) return BadInput(in, "needs its conv state as an input with role 'state'");
  std::optional<int64_t> kernel = in.node.IntAttr("kernel");
  if (!kernel) {
    for (const ResolvedTensor* t : in.inputs) {
      if (t->IsWeight() && t->Rank() == 2) kernel = static_cast<int64_t>(t->Last());
    }
  }
  if (!kernel) return MissingAttr(in, "kernel");
  Product p = GemmFlops(x.Rows(), x.Last());
  p *= static_cast<uint64_t>(*kernel);
  if (auto ok = SetFlops(in, p, c); !ok) return ok;
  StreamAll(in, c);
  AddStateWriteBack(in, *state, c);
  return {};
}

uint64_t OutputElems(const RuleInput& in) {
  uint64_t e = 0;
  for (const ResolvedTensor* t : in.outputs) e = SaturatingAdd(e, t->elems);
  return e;
}

// Elementwise families: `per_elem` FLOPs per element of the first input (norms, reductions)
// or of the outputs (elementwise, RoPE).
RuleResult PerElementRule(const RuleInput& in, uint64_t per_elem, bool of_input, NodeCost& c) {
  if (of_input && in.inputs.empty()) return BadInput(in, "needs an input");
  Product p;
  p *= per_elem;
  p *= of_input ? in.inputs[0]->elems : OutputElems(in);
  if (auto ok = SetFlops(in, p, c); !ok) return ok;
  StreamAll(in, c);
  return {};
}

// MaxPool / AveragePool   flops = output elements · kernel elements (attribute kernel_shape)
RuleResult PoolRule(const RuleInput& in, NodeCost& c) {
  const std::vector<int64_t>* kernel = in.node.IntsAttr("kernel_shape");
  if (kernel == nullptr) return MissingAttr(in, "kernel_shape");
  Product p;
  p *= OutputElems(in);
  for (int64_t k : *kernel) {
    if (k <= 0) return BadInput(in, "kernel_shape must be positive");
    p *= static_cast<uint64_t>(k);
  }
  if (auto ok = SetFlops(in, p, c); !ok) return ok;
  StreamAll(in, c);
  return {};
}

// Embedding   table[vocab, hidden] (weight), ids[n] -> [n, hidden]
//   reads only the gathered rows: n · row bytes (each row with its scales), plus the ids.
RuleResult EmbeddingRule(const RuleInput& in, NodeCost& c) {
  if (in.inputs.size() < 2) return BadInput(in, "needs a table and ids");
  const ResolvedTensor& table = *in.inputs[0];
  const ResolvedTensor& ids = *in.inputs[1];
  if (table.Rank() != 2) return BadInput(in, "table must be [vocab, hidden]");
  auto rows = format::GatheredRowsBytes(table.format, ids.elems, table.Last());
  if (!rows) return BadInput(in, "gathered bytes overflow 64 bits");
  c.bytes_read = *rows + ids.bytes;
  c.bytes_weights = table.IsWeight() ? *rows : 0;
  for (const ResolvedTensor* o : in.outputs) c.bytes_written += o->bytes;
  c.floor_input = 0;  // the floor, too, reads only these rows
  c.floor_input_bytes = *rows;
  return {};
}

// Gather   data, indices -> out: reads only the gathered elements (out-sized) and the indices.
RuleResult GatherRule(const RuleInput& in, NodeCost& c) {
  if (in.inputs.size() < 2 || in.outputs.empty()) return BadInput(in, "needs data and indices");
  const ResolvedTensor& data = *in.inputs[0];
  auto gathered = format::TensorBytes(data.format, in.outputs[0]->dims);
  if (!gathered) {
    return NotCosted(NodeLabel(in.node) + ": gathered rows do not fit the block of format '" +
                     std::string(format::FormatName(data.format)) + "'");
  }
  const uint64_t read_data = std::min(*gathered, data.bytes);
  c.bytes_read = read_data;
  if (data.IsWeight()) c.bytes_weights = read_data;
  c.floor_input = 0;  // the floor, too, reads only these
  c.floor_input_bytes = read_data;
  for (size_t i = 1; i < in.inputs.size(); ++i) {
    c.bytes_read += in.inputs[i]->bytes;
    if (in.inputs[i]->IsWeight()) c.bytes_weights += in.inputs[i]->bytes;
  }
  for (const ResolvedTensor* o : in.outputs) c.bytes_written += o->bytes;
  return {};
}

RuleResult CopyRule(const RuleInput& in, NodeCost& c) {
  StreamAll(in, c);
  return {};
}

// Collectives   AllReduce / AllGather / ReduceScatter / AllToAll / SendRecv over a group of
//   N = attribute group_size devices; attribute scope = "node" (interconnect) or "network".
//   bytes_link = what one device sends over its link, from the collectives table
//   (collectives.h: the ring algorithms):
//     bytes_link = link_steps(N) · bytes(message) / N, rounded to the nearest byte
//       AllReduce 2·(N−1)/N · bytes(x), AllGather (N−1)/N · bytes(y), ReduceScatter
//       (N−1)/N · bytes(x), AllToAll (N−1)/N · bytes(y) (the rows this device ends up with,
//       which under uniform routing equal the rows it sends), SendRecv bytes(x);
//     0 for a group of one.
//   flops = (N−1)/N · elements(x) for the reductions (AllReduce, ReduceScatter: one add per
//   received element), 0 otherwise (exact).
//   bytes_read / bytes_written = 0: link traffic is not DRAM traffic (engines send from and
//   receive into the buffers the neighbouring ops read and write, whose bytes those ops count).
RuleResult CollectiveRule(const RuleInput& in, NodeCost& c) {
  if (in.inputs.empty() || in.outputs.empty()) return BadInput(in, "needs an input and an output");
  const CollectiveInfo* info = FindCollective(in.node.op);
  if (info == nullptr) return BadInput(in, "is not a collective");
  const auto group = in.node.IntAttr("group_size");
  if (!group) {
    return NotCosted("node '" + in.node.name + "': collective '" +
                     std::string(ir::OpName(in.node.op)) +
                     "' needs attribute 'group_size', which multi-device deployments set");
  }
  if (*group < 1) return BadInput(in, "group_size must be >= 1, got " + std::to_string(*group));
  const auto scope = in.node.StringAttr("scope");
  if (!scope) return MissingAttr(in, "scope");
  if (*scope != "node" && *scope != "network") {
    return BadInput(in, "scope must be 'node' or 'network', got '" + std::string(*scope) + "'");
  }
  const auto n = static_cast<uint64_t>(*group);
  const ResolvedTensor& x = *in.inputs[0];
  const ResolvedTensor& message = info->message == Message::kInput ? x : *in.outputs[0];
  using U = unsigned __int128;
  if (n > 1) {
    // round(link_steps · bytes / n) without overflow.
    const U link = (U(info->link_steps.At(n)) * message.bytes + n / 2) / n;
    if (link > UINT64_MAX) return BadInput(in, "link bytes overflow 64 bits");
    c.bytes_link = static_cast<uint64_t>(link);
  }
  if (info->reduces) c.flops = static_cast<uint64_t>((U(n - 1) * x.elems) / n);
  c.collective = true;
  return {};
}

}  // namespace

namespace {

RuleResult Dispatch(const RuleInput& in, NodeCost& c, std::vector<std::string>& assumptions) {
  switch (ir::Family(in.node.op)) {
    case OpFamily::kMatMul: return MatMulRule(in, c);
    case OpFamily::kExperts: return ExpertsRule(in, c, assumptions);
    case OpFamily::kConv: return ConvRule(in, false, c);
    case OpFamily::kConvTranspose: return ConvRule(in, true, c);
    case OpFamily::kEinsum: return EinsumRule(in, c);
    case OpFamily::kPagedAttention: return PagedAttentionRule(in, c, assumptions);
    case OpFamily::kAttention: return AttentionRule(in, c);
    case OpFamily::kRecurrence: return RecurrenceRule(in, c);
    case OpFamily::kCausalConv1d: return CausalConvRule(in, c);
    case OpFamily::kRope: return PerElementRule(in, 3, false, c);
    case OpFamily::kNorm: return PerElementRule(in, 3, true, c);
    case OpFamily::kBatchNorm: return PerElementRule(in, 2, true, c);
    case OpFamily::kElementwise: return PerElementRule(in, 1, false, c);
    case OpFamily::kReduction: return PerElementRule(in, 1, true, c);
    case OpFamily::kPool: return PoolRule(in, c);
    case OpFamily::kNoFlopModel:
      StreamAll(in, c);
      c.flop_model = false;
      return {};
    case OpFamily::kEmbedding: return EmbeddingRule(in, c);
    case OpFamily::kGather: return GatherRule(in, c);
    case OpFamily::kCopy: return CopyRule(in, c);
    case OpFamily::kSplit:
      // A contiguous split is a view: free.
      if (in.node.StringAttr("layout") == std::optional<std::string_view>("contiguous")) {
        return {};
      }
      return CopyRule(in, c);
    case OpFamily::kView:
    case OpFamily::kShapeOnly:
      return {};
    case OpFamily::kControlFlow: {
      const auto why = in.node.StringAttr("unresolved_reason");
      return NotCosted("control flow '" + std::string(ir::OpName(in.node.op)) + "': " +
                       (why ? std::string(*why)
                            : std::string("branch or trip count not resolved by the importer")));
    }
    case OpFamily::kCollective: return CollectiveRule(in, c);
    case OpFamily::kUnknown:
      return NotCosted("unknown op '" +
                       (in.node.source_op.empty() ? std::string(ir::OpName(in.node.op))
                                                  : in.node.source_op) +
                       "': no cost rule");
  }
  return NotCosted("no cost rule");
}

}  // namespace

std::expected<void, RuleFailure> CostNode(const RuleInput& in, NodeCost& cost,
                                          std::vector<std::string>& assumptions) {
  cost = NodeCost{};
  RuleResult r = Dispatch(in, cost, assumptions);
  if (r) {
    cost.costed = true;
  } else {
    cost = NodeCost{};  // not costed: nothing a rule wrote before failing is kept
  }
  return r;
}

}  // namespace opscope::cost
