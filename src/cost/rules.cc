// The cost rules, one function per op family. Each comment states the formula with units and
// what it leaves out; shared arithmetic lives in the family helpers at the top.
#include "cost/rules.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "cost/collectives.h"
#include "cost/expert_balance.h"
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

// Causal pairs of chunked local attention: T queries at positions P..P+T−1, each seeing the
// keys of its own chunk of C, (j mod C) + 1 for position j. F(x) = Σ_{j<x} ((j mod C) + 1).
std::optional<uint64_t> ChunkedPairs(uint64_t t, uint64_t p, uint64_t chunk) {
  using U = unsigned __int128;
  auto f = [chunk](U x) {
    const U r = x % chunk;
    return (x / chunk) * (U(chunk) * (chunk + 1) / 2) + r * (r + 1) / 2;
  };
  const U pairs = f(U(p) + t) - f(p);
  if (pairs > UINT64_MAX) return std::nullopt;
  return static_cast<uint64_t>(pairs);
}

// Pairs over a compressed cache (DeepSeek-V4: one entry per r tokens): T queries after P
// cached entries, query i also seeing the floor((i + 1) / r) entries the step completes,
// each capped at `cap` entries (0: no cap). With G(x) = Σ_{j=1..x} floor(j/r) =
// r·q(q−1)/2 + q·(x − q·r + 1), q = floor(x/r): uncapped T·P + G(T); capped, the first
// m = min(T, r·(cap − P) − 1) queries see P + floor((i+1)/r) < cap, the rest exactly cap.
std::optional<uint64_t> CompressedPairs(uint64_t t, uint64_t p, uint64_t r, uint64_t cap) {
  using U = unsigned __int128;
  auto g = [r](U x) {
    const U q = x / r;
    return U(r) * q * (q > 0 ? q - 1 : 0) / 2 + q * (x - q * r + 1);
  };
  U pairs;
  if (cap == 0) {
    pairs = U(t) * p + g(t);
  } else if (p >= cap) {
    pairs = U(t) * cap;
  } else {
    const U first_capped = U(r) * (cap - p) - 1;
    const U m = std::min<U>(t, first_capped);
    pairs = m * p + g(m) + (U(t) - m) * cap;
  }
  if (pairs > UINT64_MAX) return std::nullopt;
  return static_cast<uint64_t>(pairs);
}

// The bytes of `rows` rows (dim 1) of a cache [seqs, ctx, ...] at its format.
std::optional<uint64_t> CacheRowsBytes(const ResolvedTensor& cache, uint64_t rows) {
  std::vector<int64_t> dims(cache.dims.begin(), cache.dims.end());
  if (dims.size() < 2) return cache.bytes;
  dims[1] = static_cast<int64_t>(rows);
  auto b = format::TensorBytes(cache.format, dims);
  if (!b) return std::nullopt;
  return *b;
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
                              uint64_t busiest_of, NodeCost& c,
                              std::vector<std::string>& assumptions) {
  const uint64_t experts = w.Dim(0), out = w.Dim(1), k = w.Dim(2);
  const uint64_t rows = x.Rows();
  Product p = GemmFlops(rows, k);
  p *= out;
  if (auto ok = SetFlops(in, p, c); !ok) return ok;
  StreamAll(in, c);
  const double distinct = ExpertParallelActive(static_cast<double>(rows), experts, top_k,
                                               experts_total, busiest_of);
  const auto read_w = static_cast<uint64_t>(
      std::llround(static_cast<double>(w.bytes) * distinct / static_cast<double>(experts)));
  c.bytes_read = c.bytes_read - w.bytes + read_w;
  c.bytes_weights = c.bytes_weights - w.bytes + read_w;
  const uint64_t floor_experts =
      std::min(experts, std::max<uint64_t>(1, (top_k * experts + experts_total - 1) / experts_total));
  c.floor_input = 1;
  c.floor_input_bytes = rows == 0 ? 0 : w.bytes / experts * floor_experts;
  SetMmaClass(x, &w, c);
  if (busiest_of > 1) {
    assumptions.push_back(
        "routed experts (expert parallel): uniform routing, each device runs "
        "ceil(tokens·top_k/ep) rows; the layer waits for the device reading the most of its E "
        "experts, E[max over ep devices] of Binomial(E, 1−(1−top_k/E_total)^T) for T tokens of "
        "its group (the mean device reads E·(1−(1−top_k/E_total)^T); the floor its minimum)");
  } else {
    assumptions.push_back(
        "routed experts (expert parallel): uniform routing, each device runs "
        "ceil(tokens·top_k/ep) rows and reads E·(1−(1−top_k/E_total)^T) of its E experts for T "
        "tokens of its group");
  }
  if (experts < top_k) {
    assumptions.push_back(
        "routed experts: a device holds fewer experts than top_k; engines' fused MoE kernels "
        "then also walk the routed rows of the other devices' experts (masked), measured at up "
        "to 4x the grouped GEMM of the device's own rows, which is all that is costed here");
  }
  return {};
}

// ExpertGateUp / ExpertDown   x[T, k] (down: [T·top_k, k]), w[E, out, k]
//   weight bytes = bytes(w) · distinct / E, distinct = E·(1−(1−top_k/E)^T)  (uniform routing)
//   flops = 2 · T · top_k · k · out
// Expert-parallel form (attribute experts_total = the router's pool E_t; w holds this device's
// E of them): x holds R dispatched (token, expert) rows, one expert each, in both nodes.
//   flops = 2 · R · k · out; the R rows come from T_g = R·E_t/(E·top_k) tokens of the group,
//   distinct = E·(1−(1−top_k/E_t)^T_g); the floor reads ceil(top_k·E/E_t) of them (at least 1).
//   With attribute busiest_of = m (the deployment's graphs: m devices hold the pool and the
//   layer waits for the slowest), distinct = E[max of m] (cost/expert_balance.h); FLOPs keep
//   the mean device's R rows.
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
  const auto experts_total = in.node.IntAttr("experts_total");
  // Expert parallel: top_k counts experts of the router's whole pool, so a device may hold
  // fewer than top_k of them (Mixtral's 8 experts at --ep 8: one each, top_k 2).
  if (top_k == 0 || (!experts_total && top_k > experts)) {
    return BadInput(in, "top_k " + std::to_string(top_k) + " must be in 1.." +
                            std::to_string(experts) + " (the expert count)");
  }
  if (experts_total) {
    if (*experts_total < static_cast<int64_t>(experts) || *experts_total < *top_k_attr) {
      return BadInput(in, "experts_total " + std::to_string(*experts_total) +
                              " must be >= the device's experts and top_k");
    }
    const int64_t busiest_of = in.node.IntAttr("busiest_of").value_or(1);
    if (busiest_of < 1) {
      return BadInput(in, "busiest_of " + std::to_string(busiest_of) + " must be >= 1");
    }
    return ExpertParallelCost(in, x, w, top_k, static_cast<uint64_t>(*experts_total),
                              static_cast<uint64_t>(busiest_of), c, assumptions);
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
// Chunked local attention (attribute chunk C, Llama-4; causal): the query at position j sees
// the keys of its own chunk, (j mod C) + 1 of them; with F(x) = floor(x/C)·C(C+1)/2 +
// r(r+1)/2, r = x mod C (the keys seen by positions 0..x−1),
//   pairs = F(P + T) − F(P),   cache rows read per sequence = P mod C (the current chunk).
// Sparse top-k (attribute topk K, DeepSeek Sparse Attention): each query attends the K keys its
// indexer selected (all it can see when fewer): pairs as for a window of K; cache rows read per
// sequence = min(P, T·K) (the selections of the T queries, assumed distinct); the selected
// indices (an integer input) are read. MiniMax Sparse Attention (MiniMax-M3) passes
// K = topk_blocks · block: KV head g's query group attends the blocks index head g chose, so
// every KV head reads K rows. One decode step at context P, H query heads of d:
//   flops = 2 · min(P + 1, K) · H · (d + d),   cache bytes = min(P, K) · kv_row + kv_row (append)
// (the newest block, partly filled, counted as whole: at most block − 1 keys over).
// Compressed cache (attribute compress r, DeepSeek-V4 CSA / HCA): the cache holds one entry per
// r tokens, P = its entries; query i sees P + floor((i+1)/r) entries (the step completes one per
// r tokens), capped at topk when set: pairs as CompressedPairs; the new entries appended.
// MLA (attribute kv_lora_rank): one latent cache [seqs, ctx, 1, kv_lora_rank + rope]; the
// cheaper of the absorbed form (d_qk = kvr + rope, d_v = kvr, plus absorbing kv_b into q and
// the output: 2·n·H·kvr·(nope + v)) and the expanded form (d_qk = nope + rope, d_v = v, plus
// expanding the latent of every key read: 2·seqs·(T + rows)·kvr·H·(nope + v)).
RuleResult PagedAttentionRule(const RuleInput& in, NodeCost& c,
                              std::vector<std::string>& assumptions) {
  if (in.inputs.empty() || in.outputs.empty()) return BadInput(in, "needs q and an output");
  const ResolvedTensor& q = *in.inputs[0];
  std::vector<const ResolvedTensor*> caches, fresh;
  for (size_t i = 1; i < in.inputs.size(); ++i) {
    const ResolvedTensor* t = in.inputs[i];
    if (t->role == ir::Role::kState) {
      caches.push_back(t);
    } else if (!t->IsWeight() && t->format != format::Format::kInt32 &&
               t->format != format::Format::kInt64) {
      fresh.push_back(t);  // integer inputs (selected indices) are read, not appended
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
  const int64_t chunk = in.node.IntAttr("chunk").value_or(0);
  const int64_t topk = in.node.IntAttr("topk").value_or(0);
  const int64_t compress = in.node.IntAttr("compress").value_or(0);
  if (window < 0 || chunk < 0 || topk < 0 || compress < 0) {
    return BadInput(in, "window, chunk, topk and compress must be >= 0");
  }
  if (chunk > 0 && !causal) return BadInput(in, "chunked attention must be causal");
  uint64_t rows_read = cached;  // cache rows each sequence reads
  std::optional<uint64_t> pairs;
  if (compress > 0) {
    pairs = CompressedPairs(t, cached, static_cast<uint64_t>(compress), static_cast<uint64_t>(topk));
    const auto selected = CheckedMul(t, static_cast<uint64_t>(topk));
    if (topk > 0) rows_read = selected ? std::min<uint64_t>(cached, *selected) : cached;
  } else if (chunk > 0) {
    pairs = ChunkedPairs(t, cached, static_cast<uint64_t>(chunk));
    rows_read = cached % static_cast<uint64_t>(chunk);
  } else if (topk > 0) {
    pairs = AttendedPairs(t, cached, causal, static_cast<uint64_t>(topk));
    const auto selected = CheckedMul(t, static_cast<uint64_t>(topk));
    rows_read = selected ? std::min<uint64_t>(cached, *selected) : cached;
  } else {
    pairs = AttendedPairs(t, cached, causal, static_cast<uint64_t>(window));
  }
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
    Product expand_gemm = GemmFlops(seqs, t + rows_read);
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
  // Traffic: every input once (caches are state reads, of the rows read), outputs once, and
  // the new rows appended to their cache in the cache's format. Caches listed as outputs are
  // not re-counted.
  for (size_t i = 0; i < in.inputs.size(); ++i) {
    const ResolvedTensor& t_in = *in.inputs[i];
    uint64_t bytes = t_in.bytes;
    if (t_in.role == ir::Role::kState && rows_read < cached) {
      auto part = CacheRowsBytes(t_in, rows_read);
      if (!part) return BadInput(in, "cache bytes overflow 64 bits");
      bytes = *part;
    }
    c.bytes_read += bytes;
    if (t_in.IsWeight()) c.bytes_weights += bytes;
    if (t_in.role == ir::Role::kState) c.bytes_state += bytes;
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

// LightningIndexer (DeepSeek Sparse Attention)   q [n, H·d], head weights w [n, H], the
//   index-key cache (state) [seqs, P, 1, d], the new keys [n, d] -> selected indices [n, topk]
//   per sequence T = n/seqs queries after P cached keys; every query scores every key it can
//   see, pairs = T·P + T(T+1)/2 (causal); score = Σ_h w_h · ReLU(q_h · k):
//   flops = 2 · pairs · seqs · H · (d + 1)   (q·k per head, then the weighted sum over heads)
//   bytes: q, w, the whole cache (state read), the new keys appended (state write), the
//   indices written. Not counted: the ReLU and the top-k selection (no FLOP model for a
//   selection). Attribute compress r (DeepSeek-V4's CSA indexer): the cache holds one pooled
//   key per r tokens, pairs = T·P + G(T) as in CompressedPairs.
// Attribute block B (MiniMax Sparse Attention, MiniMax-M3): no head weights (inputs q, the
//   cache, the new keys); each head keeps its own selection, a block of B keys scored by its
//   best key (max over the block of q_h · k), the topk best blocks per head (indices
//   [n, H·topk]): flops = 2 · pairs · seqs · H · d. Not counted: the block max and the top-k.
//   One decode step (T = 1) at context P: 2·(P+1)·H·d FLOPs; (P+1)·d cache elements moved.
RuleResult IndexerRule(const RuleInput& in, NodeCost& c) {
  const int64_t block = in.node.IntAttr("block").value_or(0);
  if (block < 0) return BadInput(in, "block must be >= 0");
  if (in.inputs.size() < (block > 0 ? 2u : 3u) || in.outputs.empty()) {
    return BadInput(in, block > 0 ? "needs q, the index-key cache and an output"
                                  : "needs q, head weights, the index-key cache and an output");
  }
  const ResolvedTensor& q = *in.inputs[0];
  const ResolvedTensor* cache = nullptr;
  for (const ResolvedTensor* t_in : in.inputs) {
    if (t_in->role == ir::Role::kState) cache = t_in;
  }
  if (cache == nullptr || cache->Rank() != 4) {
    return BadInput(in, "needs its index-key cache [seqs, ctx, 1, head_dim] with role 'state'");
  }
  const auto heads = in.node.IntAttr("heads");
  const auto head_dim = in.node.IntAttr("head_dim");
  if (!heads || *heads <= 0) return MissingAttr(in, "heads");
  if (!head_dim || *head_dim <= 0) return MissingAttr(in, "head_dim");
  const auto h = static_cast<uint64_t>(*heads), d = static_cast<uint64_t>(*head_dim);
  if (q.Last() != h * d) {
    return BadInput(in, "q rows have " + std::to_string(q.Last()) + " elements, expected " +
                            "heads·head_dim = " + std::to_string(h * d));
  }
  const uint64_t seqs = cache->Dim(0), cached = cache->Dim(1), n = q.Rows();
  if (seqs == 0 ? n != 0 : n % seqs != 0) {
    return BadInput(in, std::to_string(n) + " query rows are not a whole number per sequence (" +
                            std::to_string(seqs) + " sequences)");
  }
  const uint64_t t = seqs == 0 ? 0 : n / seqs;
  const int64_t compress = in.node.IntAttr("compress").value_or(0);
  if (compress < 0) return BadInput(in, "compress must be >= 0");
  const auto pairs = compress > 0 ? CompressedPairs(t, cached, static_cast<uint64_t>(compress), 0)
                                  : AttendedPairs(t, cached, true, 0);
  if (!pairs) return BadInput(in, "scored pairs overflow 64 bits");
  Product p = GemmFlops(*pairs, block > 0 ? d : d + 1);  // + 1: the weighted sum over heads
  p *= seqs;
  p *= h;
  if (auto ok = SetFlops(in, p, c); !ok) return ok;
  for (const ResolvedTensor* t_in : in.inputs) {
    c.bytes_read += t_in->bytes;
    if (t_in->role == ir::Role::kState) c.bytes_state += t_in->bytes;
  }
  // The new keys (the inputs after the cache that are not the head weights) are appended.
  const ResolvedTensor& fresh = *in.inputs.back();
  if (&fresh != cache) {
    auto appended = format::TensorBytes(cache->format, fresh.dims);
    if (!appended) return NotCosted(NodeLabel(in.node) + ": new keys do not fit the cache format");
    const uint64_t rows = *appended - format::Info(cache->format).tensor_bytes;
    c.bytes_written += rows;
    c.bytes_state += rows;
  }
  for (const ResolvedTensor* o : in.outputs) c.bytes_written += o->bytes;
  SetMmaClass(q, nullptr, c);
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

// GdnRecurrence / KdaRecurrence / SsmUpdate   x[n, ...], state [seqs, heads, a, b] (read
//   and written)
//   flops = 4 · n · (state elements of one sequence)
//   (per token and state element: the decay, the delta-rule rank-1 update and the read-out;
//   KDA's decay is per channel where Gated DeltaNet's is per head, the same order)
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

// The input at position `slot` of the operator's own input list. Attribute input_slots maps
// the node's inputs to those positions when optional inputs are absent (ONNX ""); without
// it the inputs are positional. nullptr when that input is absent.
const ResolvedTensor* SlotInput(const RuleInput& in, int64_t slot) {
  const std::vector<int64_t>* slots = in.node.IntsAttr("input_slots");
  for (size_t i = 0; i < in.inputs.size(); ++i) {
    const int64_t at = slots != nullptr && i < slots->size() ? (*slots)[i] : static_cast<int64_t>(i);
    if (at == slot) return in.inputs[i];
  }
  return nullptr;
}

// LSTM / GRU / RNN   X[steps, batch, I] (layout=1: [batch, steps, I]), W[dirs, G·H, I],
//   R[dirs, G·H, H], optional B[dirs, 2·G·H] (slot 3), sequence_lens (4), P[dirs, 3H] (LSTM
//   peepholes, slot 7); G = 4 (LSTM), 3 (GRU), 1 (RNN) gates.
//   flops = steps · dirs · batch · (2·G·H·(I + H) + E·H)
//     the gates' input GEMM (2·G·H·I) and recurrent GEMM (2·G·H·H) per step, and E
//     elementwise FLOPs per hidden unit and step (1 per elementwise op, activations included):
//       LSTM  E = 13: 4 gate sums (W·x + R·h), 4 activations (3 σ, tanh), c = f⊙c + i⊙g (3),
//                     h = o⊙tanh(c) (2)
//       GRU   E = 11: 3 gate sums, 3 activations (2 σ, tanh), r⊙h (1), h = (1−z)⊙h̃ + z⊙h (4)
//       RNN   E = 2:  1 gate sum, 1 activation
//     plus 2·G with B (the input and the recurrent bias of each gate) and 6 with P (a multiply
//     and an add per peephole).
//   bytes = every input once (the weights are reused across steps inside the op) + every
//   output once. With sequence_lens, every sequence is costed at the full `steps` (an upper
//   bound on FLOPs; reported).
RuleResult RnnRule(const RuleInput& in, NodeCost& c, std::vector<std::string>& assumptions) {
  const ResolvedTensor* x = SlotInput(in, 0);
  const ResolvedTensor* w = SlotInput(in, 1);
  const ResolvedTensor* r = SlotInput(in, 2);
  if (x == nullptr || w == nullptr || r == nullptr || in.outputs.empty()) {
    return BadInput(in, "needs X, W, R and an output");
  }
  if (x->Rank() != 3 || w->Rank() != 3 || r->Rank() != 3) {
    return BadInput(in, "X, W and R must have rank 3");
  }
  const bool lstm = in.node.op == ir::OpKind::kLSTM, gru = in.node.op == ir::OpKind::kGRU;
  const uint64_t gates = lstm ? 4 : gru ? 3 : 1;
  uint64_t per_unit = lstm ? 13 : gru ? 11 : 2;
  const bool batch_first = in.node.IntAttr("layout").value_or(0) != 0;
  const uint64_t steps = x->Dim(batch_first ? 1 : 0), batch = x->Dim(batch_first ? 0 : 1);
  const uint64_t input = x->Last(), dirs = w->Dim(0);
  const auto hidden_attr = in.node.IntAttr("hidden_size");
  const uint64_t hidden = hidden_attr ? static_cast<uint64_t>(*hidden_attr) : r->Dim(2);
  if (w->Dim(1) != gates * hidden || r->Dim(1) != gates * hidden || w->Dim(2) != input ||
      r->Dim(2) != hidden || r->Dim(0) != dirs) {
    return BadInput(in, "W must be [dirs, " + std::to_string(gates) + "·H, I] and R [dirs, " +
                            std::to_string(gates) + "·H, H] with H = " + std::to_string(hidden) +
                            " and I = " + std::to_string(input));
  }
  if (SlotInput(in, 3) != nullptr) per_unit += 2 * gates;
  if (lstm && SlotInput(in, 7) != nullptr) per_unit += 6;
  Product p;
  p *= steps;
  p *= dirs;
  p *= batch;
  const Product gemms = GemmFlops(gates * hidden, input + hidden);
  Product elementwise;
  elementwise *= per_unit;
  elementwise *= hidden;
  const auto step = CheckedAdd(gemms.value, elementwise.value);
  if (gemms.overflow || elementwise.overflow || !step) return BadInput(in, "FLOP count overflows 64 bits");
  p *= *step;
  if (auto ok = SetFlops(in, p, c); !ok) return ok;
  StreamAll(in, c);
  SetMmaClass(*x, w, c);
  if (SlotInput(in, 4) != nullptr) {
    assumptions.push_back("recurrent layers with sequence_lens: every sequence costed at the "
                          "full sequence length (an upper bound)");
  }
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
    case OpFamily::kRnn: return RnnRule(in, c, assumptions);
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
    case OpFamily::kIndexer: return IndexerRule(in, c);
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
