// Measurements rebuilt as one-kernel graphs (see samples.h).
#include "predict/samples.h"

#include <utility>

#include "cost/ledger.h"
#include "format/format.h"
#include "ir/graph.h"
#include "predict/predict.h"
#include "roofline/roofline.h"

namespace opscope::predict {

using format::Format;

namespace {

// DeepSeek-V3's MLA geometry, which the calibration set's MLA kernels were measured with
// (its README: kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128).
constexpr int64_t kKvLoraRank = 512, kRopeDim = 64, kNopeDim = 128, kVDim = 128;

struct Formats {
  Format activation, weight;
};

// A dtype label of the calibration set as (activation, weight) formats.
std::optional<Formats> OperandFormats(std::string_view dtype) {
  static constexpr std::pair<std::string_view, Formats> kTable[] = {
      {"bfloat16", {Format::kBf16, Format::kBf16}},
      {"float16", {Format::kF16, Format::kF16}},
      {"fp8", {Format::kFp8E4m3, Format::kFp8E4m3}},
      {"fp8_block", {Format::kFp8E4m3B128, Format::kFp8E4m3B128x128}},
      {"nvfp4", {Format::kNvfp4, Format::kNvfp4}},
      {"int4_wo", {Format::kBf16, Format::kInt4G128}},
      {"int8_wo", {Format::kBf16, Format::kInt8}},
      {"sq", {Format::kInt8, Format::kInt8}},
      {"w4a16_mxfp4", {Format::kBf16, Format::kMxfp4}},
      {"w4a8_mxfp4_mxfp8", {Format::kMxfp8, Format::kMxfp4}},
  };
  for (const auto& [name, f] : kTable) {
    if (name == dtype) return f;
  }
  return std::nullopt;
}

std::optional<Format> CacheFormat(std::string_view dtype) {
  if (dtype == "bfloat16") return Format::kBf16;
  if (dtype == "float16") return Format::kF16;
  if (dtype == "fp8") return Format::kFp8E4m3;
  return std::nullopt;
}

// Builds small graphs with concrete dims.
class GraphBuilder {
 public:
  ir::TensorId Tensor(std::string name, std::vector<int64_t> dims, Format f, ir::Role role) {
    ir::Tensor t;
    t.name = std::move(name);
    for (int64_t d : dims) t.shape.push_back(expr::Expr::Constant(d));
    t.format = f;
    t.role = role;
    return g.AddTensor(std::move(t));
  }
  void Node(std::string name, ir::OpKind op, std::vector<ir::TensorId> in,
            std::vector<ir::TensorId> out,
            std::vector<std::pair<std::string, ir::AttrValue>> attrs = {}) {
    ir::Node n;
    n.name = std::move(name);
    n.op = op;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.attrs = std::move(attrs);
    g.AddNode(std::move(n));
  }
  ir::Graph g;
};

using ir::Role;

std::optional<std::string> BuildGemm(const Measurement& m, GraphBuilder& b) {
  const auto f = OperandFormats(*m.Text("gemm_dtype"));
  if (!f) return "gemm_dtype '" + std::string(*m.Text("gemm_dtype")) + "' has no format";
  const int64_t rows = *m.Int("m"), n = *m.Int("n"), k = *m.Int("k");
  const auto x = b.Tensor("x", {rows, k}, f->activation, Role::kInput);
  const auto w = b.Tensor("w", {n, k}, f->weight, Role::kWeight);
  const auto y = b.Tensor("y", {rows, n}, Format::kBf16, Role::kOutput);
  b.Node("gemm", ir::OpKind::kLinear, {x, w}, {y});
  return std::nullopt;
}

// Paged attention over B sequences of T new tokens after P cached ones (generation: T = 1,
// P = step; context: T = isl, P = 0), the new K/V appended to the cache.
std::optional<std::string> BuildAttention(const Measurement& m, bool context, GraphBuilder& b) {
  const auto kv = CacheFormat(*m.Text("kv_cache_dtype"));
  if (!kv) return "kv_cache_dtype '" + std::string(*m.Text("kv_cache_dtype")) + "' has no format";
  const auto attn = m.Text("attn_dtype").value_or("bfloat16");
  const Format q_format = attn == "fp8" ? Format::kFp8E4m3 : Format::kBf16;
  const int64_t seqs = *m.Int("batch_size"), heads = *m.Int("num_heads");
  const int64_t kv_heads = *m.Int("num_key_value_heads"), d = *m.Int("head_dim");
  const int64_t t = context ? *m.Int("isl") : 1;
  const int64_t p = context ? 0 : *m.Int("step");
  const int64_t window = m.Int("window_size").value_or(0);
  const auto q = b.Tensor("q", {seqs * t, heads * d}, q_format, Role::kInput);
  const int64_t cached = window > 0 ? std::min(p, window) : p;
  const auto kc = b.Tensor("k_cache", {seqs, cached, kv_heads, d}, *kv, Role::kState);
  const auto vc = b.Tensor("v_cache", {seqs, cached, kv_heads, d}, *kv, Role::kState);
  const auto kn = b.Tensor("k_new", {seqs * t, kv_heads * d}, Format::kBf16, Role::kInput);
  const auto vn = b.Tensor("v_new", {seqs * t, kv_heads * d}, Format::kBf16, Role::kInput);
  const auto o = b.Tensor("o", {seqs * t, heads * d}, Format::kBf16, Role::kOutput);
  std::vector<std::pair<std::string, ir::AttrValue>> attrs{{"q_heads", heads}, {"head_dim", d}};
  if (window > 0) attrs.emplace_back("window", window);
  b.Node("attention", ir::OpKind::kPagedAttention, {q, kc, vc, kn, vn}, {o}, std::move(attrs));
  return std::nullopt;
}

std::optional<std::string> BuildMla(const Measurement& m, bool context, GraphBuilder& b) {
  const auto kv = CacheFormat(*m.Text("kv_cache_dtype"));
  if (!kv) return "kv_cache_dtype '" + std::string(*m.Text("kv_cache_dtype")) + "' has no format";
  const Format q_format =
      m.Text("mla_dtype") == std::optional<std::string_view>("fp8") ? Format::kFp8E4m3 : Format::kBf16;
  const int64_t seqs = *m.Int("batch_size"), heads = *m.Int("num_heads");
  const int64_t t = context ? *m.Int("isl") : 1;
  const int64_t p = context ? 0 : *m.Int("step");
  const int64_t latent = kKvLoraRank + kRopeDim;
  const auto q = b.Tensor("q", {seqs * t, heads * (kNopeDim + kRopeDim)}, q_format, Role::kInput);
  const auto cache = b.Tensor("latent_cache", {seqs, p, 1, latent}, *kv, Role::kState);
  const auto fresh = b.Tensor("latent_new", {seqs * t, latent}, Format::kBf16, Role::kInput);
  const auto kv_b =
      b.Tensor("kv_b", {heads * (kNopeDim + kVDim), kKvLoraRank}, Format::kBf16, Role::kWeight);
  const auto o = b.Tensor("o", {seqs * t, heads * kVDim}, Format::kBf16, Role::kOutput);
  b.Node("attention", ir::OpKind::kPagedAttention, {q, cache, fresh, kv_b}, {o},
         {{"q_heads", heads},
          {"kv_lora_rank", kKvLoraRank},
          {"qk_rope_head_dim", kRopeDim},
          {"qk_nope_head_dim", kNopeDim},
          {"v_head_dim", kVDim}});
  return std::nullopt;
}

// A fused MoE call as the step graphs build it: gate-up and down grouped GEMMs over this
// GPU's experts (E/ep, each inter/tp wide). Without expert parallelism the GPU runs all T·k
// (token, expert) rows; with it, the ceil(T·k/ep) rows routed to its experts.
std::optional<std::string> BuildMoe(const Measurement& m, GraphBuilder& b) {
  const auto f = OperandFormats(*m.Text("moe_dtype"));
  if (!f) return "moe_dtype '" + std::string(*m.Text("moe_dtype")) + "' has no format";
  const int64_t tokens = *m.Int("num_tokens"), hidden = *m.Int("hidden_size");
  const int64_t top_k = *m.Int("topk"), experts = *m.Int("num_experts");
  const int64_t tp = *m.Int("moe_tp_size"), ep = *m.Int("moe_ep_size");
  if (tp <= 0 || ep <= 0 || experts % ep != 0 || *m.Int("inter_size") % tp != 0 || top_k <= 0 ||
      top_k > experts) {
    return "moe split does not divide: experts " + std::to_string(experts) + " over ep " +
           std::to_string(ep) + ", inter " + std::to_string(*m.Int("inter_size")) + " over tp " +
           std::to_string(tp);
  }
  const int64_t local = experts / ep, inter = *m.Int("inter_size") / tp;
  // A GPU holding fewer experts than top_k (256 experts at ep 64 and up): the engines' fused
  // MoE kernels then walk all T·top_k routed rows and mask the other GPUs' (vLLM's
  // expert_map), and the tables measure up to 4x the grouped-GEMM time of the rows this GPU owns
  // (docs/engines.md). The grouped-GEMM model does not describe that, so such rows stay out of
  // the fit, counted in its report, rather than bend the common case (local >= top_k).
  if (local < top_k) {
    return "fewer experts per GPU (" + std::to_string(local) + ") than top_k (" +
           std::to_string(top_k) + "): masked routed rows, not modelled";
  }
  std::vector<std::pair<std::string, ir::AttrValue>> attrs{{"top_k", top_k}};
  int64_t gu_rows = tokens, down_rows = tokens * top_k;
  if (ep > 1) {
    attrs.emplace_back("experts_total", experts);
    gu_rows = down_rows = (tokens * top_k + ep - 1) / ep;
  }
  const auto x = b.Tensor("x", {gu_rows, hidden}, f->activation, Role::kInput);
  const auto w_gu = b.Tensor("w_gate_up", {local, 2 * inter, hidden}, f->weight, Role::kWeight);
  const auto ids = b.Tensor("topk_ids", {tokens, top_k}, Format::kInt32, Role::kInput);
  const auto gu = b.Tensor("gate_up", {down_rows, 2 * inter}, Format::kBf16, Role::kOutput);
  b.Node("experts.gate_up", ir::OpKind::kExpertGateUp, {x, w_gu, ids}, {gu}, attrs);
  const auto a = b.Tensor("act", {down_rows, inter}, f->activation, Role::kInput);
  const auto w_d = b.Tensor("w_down", {local, hidden, inter}, f->weight, Role::kWeight);
  const auto y = b.Tensor("down", {down_rows, hidden}, Format::kBf16, Role::kOutput);
  b.Node("experts.down", ir::OpKind::kExpertDown, {a, w_d, ids}, {y}, std::move(attrs));
  return std::nullopt;
}

std::optional<std::string> BuildAllReduce(const Measurement& m, GraphBuilder& b) {
  const Format f = m.Text("nccl_dtype") == std::optional<std::string_view>("half") ? Format::kF16
                                                                                   : Format::kBf16;
  const int64_t elems = *m.Int("message_size"), gpus = *m.Int("num_gpus");
  const auto x = b.Tensor("x", {1, elems}, f, Role::kInput);
  const auto y = b.Tensor("y", {1, elems}, f, Role::kOutput);
  b.Node("all_reduce", ir::OpKind::kAllReduce, {x}, {y},
         {{"group_size", gpus}, {"scope", std::string("node")}});
  return std::nullopt;
}

}  // namespace

Result<std::optional<Sample>> MakeSample(const Measurement& m, const device::Device& device,
                                         std::string* why) {
  GraphBuilder b;
  b.g.name = m.origin;
  std::optional<std::string> skip;
  switch (m.kernel) {
    case MeasuredKernel::kGemm: skip = BuildGemm(m, b); break;
    case MeasuredKernel::kAttentionContext: skip = BuildAttention(m, true, b); break;
    case MeasuredKernel::kAttentionGeneration: skip = BuildAttention(m, false, b); break;
    case MeasuredKernel::kMlaContext: skip = BuildMla(m, true, b); break;
    case MeasuredKernel::kMlaGeneration: skip = BuildMla(m, false, b); break;
    case MeasuredKernel::kMoe: skip = BuildMoe(m, b); break;
    case MeasuredKernel::kAllReduce: skip = BuildAllReduce(m, b); break;
  }
  if (skip) {
    *why = *skip;
    return std::optional<Sample>();
  }
  if (auto ok = ir::Validate(b.g); !ok) return std::unexpected(Wrap(m.origin, ok.error()));
  auto ledger = cost::BuildLedger(b.g, {});
  if (!ledger) {  // e.g. a dim that is not a multiple of the format's block
    *why = ledger.error().message;
    return std::optional<Sample>();
  }
  if (!ledger->not_costed.empty()) {
    *why = ledger->not_costed.front().second;
    return std::optional<Sample>();
  }
  auto analysis = roofline::Estimate(b.g, *ledger, device);
  if (!analysis) {
    *why = analysis.error().message;
    return std::optional<Sample>();
  }
  auto transparent = FindBuiltinProfile("roofline");
  if (!transparent) return std::unexpected(transparent.error());
  auto predictor = StepPredictor::Compile(b.g, device, **transparent);
  if (!predictor) return std::unexpected(predictor.error());
  Sample s;
  s.measured_s = m.latency_s;
  s.origin = m.origin;
  const expr::Bindings bindings(b.g.symbols);
  for (size_t i = 0; i < b.g.nodes.size(); ++i) {
    s.parts.push_back((*predictor)->Describe(i, ledger->nodes[i], bindings));
    s.roofline_s += analysis->nodes[i].time_s;
  }
  return std::optional<Sample>(std::move(s));
}

}  // namespace opscope::predict
