// Builds the step graph of an LLM from its ModelSpec and Recipe (see step_graph.h). Tensor
// and node names follow the HF module names ("layers.3.attn.q_proj").
//
// Formats: activations between ops are in the compute dtype; tensors that feed a matrix op
// (the normed hidden state, the attention output, the MLP's activated hidden) are in the
// recipe's matrix-input format (quantized activations are written by the producing op, as
// fused engines do). Weights take WeightFormats' choice; caches the KV format; recurrent
// states the state format; causal-conv states the compute dtype.
#include "import/hf_config/step_graph.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>

namespace opscope::import::hf {
namespace {

using expr::Expr;
using format::Format;
using ir::OpKind;
using ir::Role;
using ir::TensorId;
using Shape = std::vector<Expr>;
using Attrs = std::vector<std::pair<std::string, ir::AttrValue>>;

// Bytes of a tensor without its per-tensor scale constant (per token / per sequence figures).
uint64_t BytesWithoutTensorScale(Format f, std::initializer_list<int64_t> dims) {
  auto b = format::TensorBytes(f, std::span<const int64_t>(dims.begin(), dims.size()));
  if (!b) return 0;
  const auto tensor_bytes = static_cast<uint64_t>(format::Info(f).tensor_bytes);
  return *b >= tensor_bytes ? *b - tensor_bytes : 0;
}

// a + b in one allocation (names are built by the thousand; temporaries dominate otherwise).
std::string Cat(std::string_view a, std::string_view b) {
  const size_t size = a.size() + b.size();
  std::string s;
  // Returns `size`, not the callback's second argument: GCC 12 passes the capacity there.
  s.resize_and_overwrite(size, [&](char* p, size_t) {
    std::memcpy(p, a.data(), a.size());
    std::memcpy(p + a.size(), b.data(), b.size());
    return size;
  });
  return s;
}

class Builder {
 public:
  // `spec` is this device's share (ShardSpec); `full` the whole model; `shard` the split.
  Builder(const ModelSpec& spec, const ModelSpec& full, const DeviceShard& shard,
          const Recipe& recipe, StepGraph& out)
      : spec_(spec), full_(full), shard_(shard), recipe_(recipe), formats_(spec, recipe),
        out_(out), g_(out.graph) {
    n_ = Expr::Symbol(g_.symbols.Intern(kTokensSymbol));
    seqs_ = Expr::Symbol(g_.symbols.Intern(kSeqsSymbol));
    ctx_ = Expr::Symbol(g_.symbols.Intern(kContextSymbol));
    hidden_ = C(spec.hidden);
  }

  Result<void> Build() {
    g_.name = spec_.origin;
    g_.assumptions = spec_.assumptions;
    for (const std::string& a : recipe_.assumptions) g_.assumptions.push_back(a);
    g_.tensors.reserve(64 + 48 * spec_.layers.size());
    g_.nodes.reserve(8 + 36 * spec_.layers.size());
    out_.weights.reserve(8 + 24 * spec_.layers.size());
    out_.kv_caches.reserve(2 * spec_.layers.size());
    out_.states.reserve(2 * spec_.layers.size());

    TensorId h;
    if (shard_.first_stage) {
      const TensorId ids = Tensor("input_ids", {n_}, Format::kInt32, Role::kInput);
      table_ = Weight("embed_tokens.weight", {C(spec_.vocab), hidden_},
                      {WeightRole::kEmbedding, -1, spec_.hidden}, WeightGroup::kEmbedding);
      h = Act("embed_tokens.out", {n_, hidden_});
      Node("embed_tokens", OpKind::kEmbedding, {table_, ids}, {h});
      // Vocab-parallel: each device looks up the ids in its slice, zeros elsewhere.
      h = TpAllReduce("embed_tokens.all_reduce", h);
    } else {
      h = Tensor("stage_input", {n_, hidden_}, recipe_.compute, Role::kInput);
    }
    if (error_) return std::unexpected(*error_);

    struct Distinct {
      std::vector<uint8_t> key;
      size_t first_node;
      size_t node_count;
    };
    std::vector<Distinct> distinct;
    const int64_t end_layer = shard_.end_layer < 0 ? spec_.num_layers() : shard_.end_layer;
    for (int64_t i = shard_.first_layer; i < end_layer; ++i) {
      const size_t begin = g_.nodes.size();
      signature_.clear();
      const LayerSpec& l = spec_.layers[i];
      signature_.push_back(static_cast<uint8_t>(l.mixer));
      signature_.push_back(static_cast<uint8_t>(l.ffn));
      for (int s = 0; s < 64; s += 8) signature_.push_back(static_cast<uint8_t>(l.window >> s));
      h = Layer(i, h);
      if (error_) return std::unexpected(*error_);
      const size_t count = g_.nodes.size() - begin;
      auto twin = std::find_if(distinct.begin(), distinct.end(),
                               [&](const Distinct& d) { return d.key == signature_; });
      if (twin != distinct.end() && twin->node_count == count) {
        for (size_t k = 0; k < count; ++k) {
          g_.nodes[begin + k].cost_twin = static_cast<int32_t>(twin->first_node + k);
        }
      } else {
        distinct.push_back({signature_, begin, count});
      }
    }
    out_.distinct_layers = static_cast<int64_t>(distinct.size());
    if (!shard_.last_stage) {
      const TensorId sent = Act("stage_output", {n_, hidden_});
      Node("send_to_next_stage", OpKind::kSendRecv, {h}, {sent},
           {{"group_size", int64_t{2}}, {"scope", shard_.pp_scope}});
      return {};
    }

    const TensorId normed = Norm("final_norm", h, spec_.hidden, recipe_.compute);
    const TensorId last = Tensor("last_token_index", {seqs_}, Format::kInt32, Role::kInput);
    const TensorId head_in = Act("lm_head.in", {seqs_, hidden_}, recipe_.gemm_input);
    Node("select_last_tokens", OpKind::kGather, {normed, last}, {head_in});
    const TensorId head_w =
        spec_.tie_embeddings && shard_.first_stage
            ? table_
            : Weight("lm_head.weight", {C(spec_.vocab), hidden_},
                     {WeightRole::kLmHead, -1, spec_.hidden});
    if (shard_.tp == 1) {
      const TensorId logits =
          Tensor("logits", {seqs_, C(spec_.vocab)}, recipe_.compute, Role::kOutput);
      Node("lm_head", OpKind::kLmHead, {head_in, head_w}, {logits});
    } else {
      // Vocab-parallel LM head: each device's slice of the logits, gathered.
      const TensorId part = Act("lm_head.out", {seqs_, C(spec_.vocab)});
      Node("lm_head", OpKind::kLmHead, {head_in, head_w}, {part});
      const TensorId logits = Tensor("logits", {seqs_, C(spec_.vocab * shard_.tp)},
                                     recipe_.compute, Role::kOutput);
      Node("lm_head.all_gather", OpKind::kAllGather, {part}, {logits},
           {{"group_size", shard_.tp}, {"scope", shard_.tp_scope}});
    }
    if (error_) return std::unexpected(*error_);
    return {};
  }

 private:
  Expr C(int64_t v) const { return Expr::Constant(v); }

  // The sum of the tensor-parallel devices' partial results (row-parallel outputs).
  TensorId TpAllReduce(std::string name, TensorId partial) {
    if (shard_.tp == 1) return partial;
    const TensorId y = Act(Cat(name, ".out"), g_.tensors[partial].shape);
    Node(std::move(name), OpKind::kAllReduce, {partial}, {y},
         {{"group_size", shard_.tp}, {"scope", shard_.tp_scope}});
    return y;
  }

  TensorId Tensor(std::string name, Shape shape, Format f, Role role) {
    // Every last dim is a constant here: a recipe whose block does not divide it is bad input.
    const int block = format::Info(f).block;
    if (block > 1 && !error_ && shape.back().IsConstant() && shape.back().constant() % block != 0) {
      error_ = Error{"format " + std::string(format::FormatName(f)) + ": tensor '" + name +
                     "' has rows of " + std::to_string(shape.back().constant()) +
                     " elements, not a multiple of the format's " + std::to_string(block) +
                     "-element block"};
    }
    ir::Tensor& t = g_.tensors.emplace_back();
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.format = f;
    t.role = role;
    return static_cast<TensorId>(g_.tensors.size() - 1);
  }
  TensorId Act(std::string name, Shape shape) {
    return Tensor(std::move(name), std::move(shape), recipe_.compute, Role::kActivation);
  }
  TensorId Act(std::string name, Shape shape, Format f) {
    return Tensor(std::move(name), std::move(shape), f, Role::kActivation);
  }
  TensorId State(std::string name, Shape shape, Format f) {
    return Tensor(std::move(name), std::move(shape), f, Role::kState);
  }

  TensorId Weight(std::string name, Shape shape, WeightSite site,
                  WeightGroup group = WeightGroup::kOther, int64_t experts = 0) {
    Format f = recipe_.dtype;
    if (auto chosen = formats_.Choose(site, name)) {
      f = *chosen;
    } else if (!error_) {
      error_ = chosen.error();
    }
    signature_.push_back(static_cast<uint8_t>(f));
    const TensorId id = Tensor(std::move(name), std::move(shape), f, Role::kWeight);
    out_.weights.push_back({id, group, experts, group == WeightGroup::kRoutedExpert ? spec_.moe.top_k : 0});
    return id;
  }

  void Node(std::string name, OpKind op, std::vector<TensorId> inputs,
            std::vector<TensorId> outputs, Attrs attrs = {}, const char* source_op = nullptr) {
    ir::Node& n = g_.nodes.emplace_back();  // in place: nodes are built by the thousand
    n.name = std::move(name);
    n.op = op;
    if (source_op != nullptr) n.source_op = source_op;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.attrs = std::move(attrs);
  }

  // RMSNorm over the last dim with a weight of `width`, written in `out_format` (the
  // matrix-input format when a matrix op reads it).
  TensorId Norm(std::string name, TensorId x, int64_t width, Format out_format,
                int64_t layer = -1) {
    const TensorId w = Weight(Cat(name, ".weight"), {C(width)}, {WeightRole::kNorm, layer, width});
    Shape shape = g_.tensors[x].shape;
    const TensorId y = Act(Cat(name, ".out"), std::move(shape), out_format);
    Node(std::move(name), OpKind::kRMSNorm, {x, w}, {y});
    return y;
  }

  // x [rows, k] · w[out, k] (+ bias) -> [rows, out].
  TensorId Linear(std::string name, TensorId x, int64_t out, WeightRole role,
                  int64_t layer, bool bias, Format out_format) {
    const Shape& xs = g_.tensors[x].shape;
    const int64_t k = xs.back().constant();
    std::vector<TensorId> ins{x, Weight(Cat(name, ".weight"), {C(out), C(k)}, {role, layer, k})};
    if (bias) ins.push_back(Weight(Cat(name, ".bias"), {C(out)}, {WeightRole::kVector, layer, out}));
    const TensorId y = Act(Cat(name, ".out"), {xs.front(), C(out)}, out_format);
    Node(std::move(name), OpKind::kLinear, std::move(ins), {y});
    return y;
  }

  TensorId Layer(int64_t i, TensorId h) {
    const LayerSpec& l = spec_.layers[i];
    const std::string p = "layers." + std::to_string(i) + ".";
    if (l.mixer != Mixer::kNone) {
      const TensorId x = Norm(Cat(p, "input_norm"), h, spec_.hidden, recipe_.gemm_input, i);
      TensorId a = x;
      switch (l.mixer) {
        case Mixer::kAttention: a = Attention(p, i, x); break;
        case Mixer::kMla: a = Mla(p, i, x); break;
        case Mixer::kGatedDeltaNet: a = GatedDeltaNet(p, i, x); break;
        case Mixer::kMamba2: a = Mamba2(p, i, x); break;
        case Mixer::kNone: break;
      }
      a = TpAllReduce(Cat(p, "mixer_all_reduce"), a);
      if (spec_.sandwich_norms) a = Norm(Cat(p, "post_attention_norm"), a, spec_.hidden, recipe_.compute, i);
      const TensorId sum = Act(Cat(p, "mixer_residual.out"), {n_, hidden_});
      Node(Cat(p, "mixer_residual"), OpKind::kAdd, {h, a}, {sum});
      h = sum;
    }
    if (l.ffn != Ffn::kNone) {
      const TensorId x = Norm(Cat(p, "ffn_norm"), h, spec_.hidden, recipe_.gemm_input, i);
      TensorId f = l.ffn == Ffn::kDense ? Mlp(Cat(p, "mlp."), i, x, spec_.mlp.intermediate,
                                              spec_.mlp.act, spec_.mlp.bias)
                                        : Moe(Cat(p, "moe."), i, x);
      // Expert parallelism reduces inside Moe(); otherwise the MLP (or the tensor-parallel
      // experts with the shared expert) ends row-parallel.
      if (l.ffn == Ffn::kDense || shard_.ep == 1) f = TpAllReduce(Cat(p, "ffn_all_reduce"), f);
      if (spec_.sandwich_norms) f = Norm(Cat(p, "post_ffn_norm"), f, spec_.hidden, recipe_.compute, i);
      const TensorId sum = Act(Cat(p, "ffn_residual.out"), {n_, hidden_});
      Node(Cat(p, "ffn_residual"), OpKind::kAdd, {h, f}, {sum});
      h = sum;
    }
    return h;
  }

  Expr CacheLength(int64_t window) {
    if (window == 0) return ctx_;
    for (const auto& [w, e] : window_lengths_) {
      if (w == window) return e;
    }
    window_lengths_.emplace_back(window, Expr::Min(ctx_, C(window)));
    return window_lengths_.back().second;
  }

  // Standard (GQA, sliding-window, gated, with sinks) attention; returns [n, hidden].
  TensorId Attention(const std::string& p, int64_t i, TensorId x) {
    const AttentionSpec& a = spec_.attn;
    const int64_t window = spec_.layers[i].window;
    const int64_t d = a.head_dim, qo = a.heads * d, kvo = a.kv_heads * d;
    const int64_t q_rows = a.output_gate ? 2 * qo : qo;
    TensorId q, k, v, gate = 0;
    if (!recipe_.gguf) {
      // One fused QKV projection, as vLLM / TensorRT-LLM run it.
      const TensorId qkv = Linear(Cat(p, "attn.qkv_proj"), x, q_rows + 2 * kvo, WeightRole::kAttnQkv,
                                  i, a.qkv_bias, recipe_.compute);
      q = Act(Cat(p, "attn.q"), {n_, C(qo)});
      std::vector<TensorId> parts{q};
      if (a.output_gate) parts.push_back(gate = Act(Cat(p, "attn.gate"), {n_, C(qo)}));
      k = Act(Cat(p, "attn.k"), {n_, C(kvo)});
      v = Act(Cat(p, "attn.v"), {n_, C(kvo)});
      parts.push_back(k);
      parts.push_back(v);
      Node(Cat(p, "attn.split_qkv"), OpKind::kSplit, {qkv}, std::move(parts),
           {{"layout", std::string("contiguous")}});
    } else {
      // llama.cpp runs q, k and v as three matrices (they may have different types).
      q = Linear(Cat(p, "attn.q_proj"), x, q_rows, WeightRole::kAttnQ, i, a.qkv_bias, recipe_.compute);
      k = Linear(Cat(p, "attn.k_proj"), x, kvo, WeightRole::kAttnK, i, a.qkv_bias, recipe_.compute);
      v = Linear(Cat(p, "attn.v_proj"), x, kvo, WeightRole::kAttnV, i, a.qkv_bias, recipe_.compute);
      if (a.output_gate) {
        const TensorId qg = q;
        q = Act(Cat(p, "attn.q"), {n_, C(qo)});
        gate = Act(Cat(p, "attn.gate"), {n_, C(qo)});
        Node(Cat(p, "attn.split_gate"), OpKind::kSplit, {qg}, {q, gate},
             {{"layout", std::string("contiguous")}});
      }
    }
    if (a.qk_norm) {
      q = Norm(Cat(p, "attn.q_norm"), q, d, recipe_.compute, i);
      k = Norm(Cat(p, "attn.k_norm"), k, d, recipe_.compute, i);
    }
    if (a.rope) {
      std::tie(q, k) = Rope(Cat(p, "attn.rope"), q, k);
    }
    const Expr len = CacheLength(window);
    const TensorId kc = State(Cat(p, "attn.k_cache"), {seqs_, len, C(a.kv_heads), C(d)}, recipe_.kv);
    const TensorId vc = State(Cat(p, "attn.v_cache"), {seqs_, len, C(a.kv_heads), C(d)}, recipe_.kv);
    const uint64_t per_token = BytesWithoutTensorScale(recipe_.kv, {1, 1, a.kv_heads, d});
    out_.kv_caches.push_back({kc, i, window, per_token});
    out_.kv_caches.push_back({vc, i, window, per_token});
    std::vector<TensorId> ins{q, kc, vc, k, v};
    if (a.sinks) ins.push_back(Weight(Cat(p, "attn.sinks"), {C(a.heads)}, {WeightRole::kVector, i, a.heads}));
    const Format out_format = a.output_gate ? recipe_.compute : recipe_.gemm_input;
    TensorId o = Act(Cat(p, "attn.attention.out"), {n_, C(qo)}, out_format);
    Attrs attrs{{"q_heads", a.heads}, {"head_dim", d}};
    if (window > 0) attrs.emplace_back("window", window);
    Node(Cat(p, "attn.attention"), OpKind::kPagedAttention, std::move(ins), {o}, std::move(attrs));
    if (a.output_gate) {
      const TensorId gated = Act(Cat(p, "attn.output_gate.out"), {n_, C(qo)}, recipe_.gemm_input);
      Node(Cat(p, "attn.output_gate"), OpKind::kMul, {o, gate}, {gated}, {}, "SigmoidGate");
      o = gated;
    }
    return Linear(Cat(p, "attn.o_proj"), o, spec_.hidden, WeightRole::kAttnOut, i, a.o_bias,
                  recipe_.compute);
  }

  // Rotary embedding of q and k in one kernel (cos/sin computed, no table read).
  std::pair<TensorId, TensorId> Rope(std::string name, TensorId q, TensorId k,
                                     const char* k_out_suffix = ".k") {
    const TensorId qr = Act(Cat(name, ".q"), g_.tensors[q].shape);
    const TensorId kr = Act(Cat(name, k_out_suffix), g_.tensors[k].shape);
    Node(std::move(name), OpKind::kRoPE, {q, k}, {qr, kr});
    return {qr, kr};
  }

  // Multi-head latent attention (DeepSeek-V3): one latent cache row per token.
  TensorId Mla(const std::string& p, int64_t i, TensorId x) {
    const MlaSpec& m = spec_.mla;
    const int64_t heads = spec_.attn.heads;
    const int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const int64_t latent = m.kv_lora_rank + m.qk_rope_head_dim;
    TensorId q;
    if (m.q_lora_rank > 0) {
      TensorId qa = Linear(Cat(p, "attn.q_a_proj"), x, m.q_lora_rank, WeightRole::kOtherMatrix, i,
                           spec_.attn.qkv_bias, recipe_.compute);
      qa = Norm(Cat(p, "attn.q_a_norm"), qa, m.q_lora_rank, recipe_.gemm_input, i);
      q = Linear(Cat(p, "attn.q_b_proj"), qa, heads * qk, WeightRole::kOtherMatrix, i, false,
                 recipe_.compute);
    } else {
      q = Linear(Cat(p, "attn.q_proj"), x, heads * qk, WeightRole::kOtherMatrix, i, false,
                 recipe_.compute);
    }
    // kv_a_proj yields the latent and the shared rope key; kv_a_norm normalises the latent
    // part and the rotary embedding rotates the rope part: together the new cache row.
    const TensorId kva = Linear(Cat(p, "attn.kv_a_proj"), x, latent, WeightRole::kOtherMatrix, i,
                                spec_.attn.qkv_bias, recipe_.compute);
    const TensorId kva_n = Norm(Cat(p, "attn.kv_a_norm"), kva, m.kv_lora_rank, recipe_.compute, i);
    const auto [q_r, latent_new] = Rope(Cat(p, "attn.rope"), q, kva_n, ".latent_new");
    const TensorId cache =
        State(Cat(p, "attn.latent_cache"), {seqs_, ctx_, C(1), C(latent)}, recipe_.kv);
    out_.kv_caches.push_back({cache, i, 0, BytesWithoutTensorScale(recipe_.kv, {1, 1, 1, latent})});
    const TensorId kv_b =
        Weight(Cat(p, "attn.kv_b_proj.weight"),
               {C(heads * (m.qk_nope_head_dim + m.v_head_dim)), C(m.kv_lora_rank)},
               {WeightRole::kAttnKvB, i, m.kv_lora_rank});
    const TensorId o = Act(Cat(p, "attn.attention.out"), {n_, C(heads * m.v_head_dim)}, recipe_.gemm_input);
    Node(Cat(p, "attn.attention"), OpKind::kPagedAttention, {q_r, cache, latent_new, kv_b}, {o},
         {{"q_heads", heads},
          {"kv_lora_rank", m.kv_lora_rank},
          {"qk_rope_head_dim", m.qk_rope_head_dim},
          {"qk_nope_head_dim", m.qk_nope_head_dim},
          {"v_head_dim", m.v_head_dim}});
    return Linear(Cat(p, "attn.o_proj"), o, spec_.hidden, WeightRole::kAttnOut, i, spec_.attn.o_bias,
                  recipe_.compute);
  }

  // Causal depthwise conv over `channels` with its rolling state [seqs, channels, kernel-1].
  TensorId CausalConv(std::string name, int64_t i, TensorId x, int64_t channels,
                      int64_t kernel, bool bias) {
    const TensorId state = State(Cat(name, ".state"), {seqs_, C(channels), C(kernel - 1)},
                                 recipe_.conv_state);
    out_.states.push_back(
        {state, i, BytesWithoutTensorScale(recipe_.conv_state, {1, channels, kernel - 1})});
    std::vector<TensorId> ins{x, state,
                              Weight(Cat(name, ".weight"), {C(channels), C(kernel)},
                                     {WeightRole::kConv, i, kernel})};
    if (bias) ins.push_back(Weight(Cat(name, ".bias"), {C(channels)}, {WeightRole::kVector, i, channels}));
    const TensorId y = Act(Cat(name, ".out"), {n_, C(channels)});
    Node(std::move(name), OpKind::kCausalConv1d, std::move(ins), {y, state}, {{"kernel", kernel}});
    return y;
  }

  TensorId Vector(const std::string& name, int64_t i, int64_t width) {
    return Weight(name, {C(width)}, {WeightRole::kVector, i, width});
  }

  // GatedDeltaNet (Qwen3-Next): in_proj_qkvz, in_proj_ba, causal conv, gated delta rule
  // with state [seqs, value_heads, key_head_dim, value_head_dim], gated RMSNorm, out_proj.
  TensorId GatedDeltaNet(const std::string& p, int64_t i, TensorId x) {
    const GdnSpec& s = spec_.gdn;
    const std::string q = Cat(p, "linear_attn.");
    const TensorId qkvz = Linear(Cat(q, "in_proj_qkvz"), x, s.conv_dim() + s.value_dim(),
                                 WeightRole::kOtherMatrix, i, false, recipe_.compute);
    const TensorId ba = Linear(Cat(q, "in_proj_ba"), x, 2 * s.value_heads, WeightRole::kOtherMatrix, i,
                               false, recipe_.compute);
    const TensorId qkv = Act(Cat(q, "qkv"), {n_, C(s.conv_dim())});
    const TensorId z = Act(Cat(q, "z"), {n_, C(s.value_dim())});
    Node(Cat(q, "split_qkvz"), OpKind::kSplit, {qkvz}, {qkv, z}, {{"layout", std::string("contiguous")}});
    const TensorId conv = CausalConv(Cat(q, "conv1d"), i, qkv, s.conv_dim(), s.conv_kernel, false);
    const TensorId gates = Act(Cat(q, "gates.out"), {n_, C(2 * s.value_heads)}, Format::kF32);
    Node(Cat(q, "gates"), OpKind::kSigmoid,
         {ba, Vector(Cat(q, "A_log"), i, s.value_heads), Vector(Cat(q, "dt_bias"), i, s.value_heads)},
         {gates}, {}, "GatedDeltaNetGates");
    const TensorId state = State(Cat(q, "recurrent_state"),
                                 {seqs_, C(s.value_heads), C(s.key_head_dim), C(s.value_head_dim)},
                                 recipe_.state);
    out_.states.push_back({state, i,
                           BytesWithoutTensorScale(recipe_.state, {1, s.value_heads,
                                                                   s.key_head_dim,
                                                                   s.value_head_dim})});
    const TensorId core = Act(Cat(q, "delta_rule.out"), {n_, C(s.value_dim())});
    Node(Cat(q, "delta_rule"), OpKind::kGdnRecurrence, {conv, state, gates}, {core, state});
    const TensorId normed = Norm(Cat(q, "norm"), core, s.value_head_dim, recipe_.compute, i);
    const TensorId gated = Act(Cat(q, "norm_gate.out"), {n_, C(s.value_dim())}, recipe_.gemm_input);
    Node(Cat(q, "norm_gate"), OpKind::kMul, {normed, z}, {gated}, {}, "RMSNormGated");
    return Linear(Cat(q, "out_proj"), gated, spec_.hidden, WeightRole::kOtherMatrix, i, false,
                  recipe_.compute);
  }

  // Mamba2 mixer: in_proj -> (z, xBC, dt), causal conv on xBC, SSM state update with state
  // [seqs, heads, head_dim, state_size], gated RMSNorm, out_proj.
  TensorId Mamba2(const std::string& p, int64_t i, TensorId x) {
    const Mamba2Spec& s = spec_.mamba;
    const std::string q = Cat(p, "mamba.");
    const TensorId zxbcdt = Linear(Cat(q, "in_proj"), x, s.in_proj_out(), WeightRole::kOtherMatrix, i,
                                   s.proj_bias, recipe_.compute);
    const TensorId z = Act(Cat(q, "z"), {n_, C(s.inner())});
    const TensorId xbc = Act(Cat(q, "xBC"), {n_, C(s.conv_dim())});
    const TensorId dt = Act(Cat(q, "dt"), {n_, C(s.heads)});
    Node(Cat(q, "split_in_proj"), OpKind::kSplit, {zxbcdt}, {z, xbc, dt},
         {{"layout", std::string("contiguous")}});
    const TensorId conv = CausalConv(Cat(q, "conv1d"), i, xbc, s.conv_dim(), s.conv_kernel, s.conv_bias);
    const TensorId state = State(Cat(q, "ssm_state"),
                                 {seqs_, C(s.heads), C(s.head_dim), C(s.state_size)}, recipe_.state);
    out_.states.push_back(
        {state, i, BytesWithoutTensorScale(recipe_.state, {1, s.heads, s.head_dim, s.state_size})});
    const TensorId y = Act(Cat(q, "ssm.out"), {n_, C(s.inner())});
    Node(Cat(q, "ssm"), OpKind::kSsmUpdate,
         {conv, state, dt, Vector(Cat(q, "A_log"), i, s.heads), Vector(Cat(q, "D"), i, s.heads),
          Vector(Cat(q, "dt_bias"), i, s.heads)},
         {y, state});
    const TensorId normed = Norm(Cat(q, "norm"), y, s.inner(), recipe_.compute, i);
    const TensorId gated = Act(Cat(q, "norm_gate.out"), {n_, C(s.inner())}, recipe_.gemm_input);
    Node(Cat(q, "norm_gate"), OpKind::kMul, {normed, z}, {gated}, {}, "RMSNormGated");
    return Linear(Cat(q, "out_proj"), gated, spec_.hidden, WeightRole::kOtherMatrix, i, s.proj_bias,
                  recipe_.compute);
  }

  // The MLP's activation over [rows, 2·width] (gated) or [rows, width] (squared ReLU).
  TensorId Activate(std::string name, TensorId x, Expr rows, int64_t width, Activation act) {
    const TensorId y = Act(Cat(name, ".out"), {std::move(rows), C(width)}, recipe_.gemm_input);
    switch (act) {
      case Activation::kSiluGated: Node(std::move(name), OpKind::kSiluMul, {x}, {y}); break;
      case Activation::kGeluGated: Node(std::move(name), OpKind::kGeluMul, {x}, {y}); break;
      case Activation::kRelu2: Node(std::move(name), OpKind::kRelu, {x}, {y}, {}, "relu2"); break;
    }
    return y;
  }

  // Dense MLP: gate_up (fused, as engines run it) + activation + down, or up + relu² + down.
  TensorId Mlp(const std::string& p, int64_t i, TensorId x, int64_t width, Activation act,
               bool bias) {
    const bool gated = act != Activation::kRelu2;
    const TensorId up = gated ? Linear(Cat(p, "gate_up_proj"), x, 2 * width, WeightRole::kFfnGate, i,
                                       bias, recipe_.compute)
                              : Linear(Cat(p, "up_proj"), x, width, WeightRole::kFfnUp, i, bias,
                                       recipe_.compute);
    const TensorId a = Activate(Cat(p, "act"), up, n_, width, act);
    return Linear(Cat(p, "down_proj"), a, spec_.hidden, WeightRole::kFfnDown, i, bias, recipe_.compute);
  }

  // Router + routed experts (+ shared experts).
  TensorId Moe(const std::string& p, int64_t i, TensorId x) {
    const MoeSpec& m = spec_.moe;
    const Expr e = C(m.experts), k = C(m.top_k);
    const bool gated = m.act != Activation::kRelu2;
    // Router: logits, scores, top-k.
    std::vector<TensorId> rin{x, Weight(Cat(p, "router.weight"), {e, hidden_},
                                        {WeightRole::kRouter, i, spec_.hidden})};
    if (m.router_bias) rin.push_back(Vector(Cat(p, "router.bias"), i, m.experts));
    const TensorId logits = Act(Cat(p, "router.out"), {n_, e}, Format::kF32);
    Node(Cat(p, "router"), OpKind::kRouter, std::move(rin), {logits});
    const TensorId scores = Act(Cat(p, "scores.out"), {n_, e}, Format::kF32);
    if (m.sigmoid_scores) {
      std::vector<TensorId> sin{logits};
      if (m.score_correction_bias) {
        sin.push_back(Weight(Cat(p, "e_score_correction_bias"), {e},
                             {WeightRole::kScoreBias, i, m.experts}));
      }
      Node(Cat(p, "scores"), OpKind::kSigmoid, std::move(sin), {scores});
    } else {
      Node(Cat(p, "scores"), OpKind::kSoftmax, {logits}, {scores});
    }
    const TensorId topk_w = Act(Cat(p, "topk.weights"), {n_, k}, Format::kF32);
    const TensorId topk_i = Act(Cat(p, "topk.ids"), {n_, k}, Format::kInt32);
    Node(Cat(p, "topk"), OpKind::kTopK, {scores}, {topk_w, topk_i}, {{"k", m.top_k}});

    // Routed experts over the n·top_k (token, expert) rows. Expert parallelism: the device
    // receives the rows routed to its experts from the dp_attention·n tokens of its group,
    // ceil(dp_attention·n·top_k / ep) under uniform routing, and sends as many.
    const bool ep = shard_.ep > 1;
    if (expert_rows_.IsConstant()) {
      expert_rows_ = ep ? Expr::CeilDiv(Expr::Mul(n_, C(shard_.dp_attention * m.top_k)),
                                        C(shard_.ep))
                        : Expr::Mul(n_, k);
    }
    const Expr& rows = expert_rows_;
    const int64_t gu_out = gated ? 2 * m.intermediate : m.intermediate;
    Attrs expert_attrs{{"top_k", m.top_k}};
    TensorId routed_in = x;
    if (ep) {
      expert_attrs.emplace_back("experts_total", full_.moe.experts);
      routed_in = Act(Cat(p, "experts.dispatch.out"), {rows, hidden_}, g_.tensors[x].format);
      Node(Cat(p, "experts.dispatch"), OpKind::kAllToAll, {x, topk_i}, {routed_in},
           {{"group_size", shard_.moe_group}, {"scope", shard_.moe_scope}});
    }
    std::vector<TensorId> gin{
        routed_in,
        Weight(Cat(p, "experts.gate_up_proj.weight"), {e, C(gu_out), hidden_},
               {gated ? WeightRole::kExpertGate : WeightRole::kExpertUp, i, spec_.hidden},
               WeightGroup::kRoutedExpert, m.experts),
        topk_i};
    if (m.expert_bias) {
      gin.push_back(Weight(Cat(p, "experts.gate_up_proj.bias"), {e, C(gu_out)},
                           {WeightRole::kVector, i, gu_out}, WeightGroup::kRoutedExpert,
                           m.experts));
    }
    const TensorId gu = Act(Cat(p, "experts.gate_up.out"), {rows, C(gu_out)});
    Node(Cat(p, "experts.gate_up"), OpKind::kExpertGateUp, std::move(gin), {gu}, expert_attrs);
    const TensorId a = Activate(Cat(p, "experts.act"), gu, rows, m.intermediate, m.act);
    std::vector<TensorId> din{
        a,
        Weight(Cat(p, "experts.down_proj.weight"), {e, hidden_, C(m.intermediate)},
               {WeightRole::kExpertDown, i, m.intermediate}, WeightGroup::kRoutedExpert,
               m.experts),
        topk_i};
    if (m.expert_bias) {
      din.push_back(Weight(Cat(p, "experts.down_proj.bias"), {e, hidden_},
                           {WeightRole::kVector, i, spec_.hidden}, WeightGroup::kRoutedExpert,
                           m.experts));
    }
    const TensorId down = Act(Cat(p, "experts.down.out"), {rows, hidden_});
    Node(Cat(p, "experts.down"), OpKind::kExpertDown, std::move(din), {down}, std::move(expert_attrs));
    // Expert parallelism: the expert outputs go back to the devices that own their tokens
    // (each tensor-parallel device owns ceil(n/tp) of its replica's n tokens; each expert's
    // expert_tp devices each send a partial sum).
    TensorId expert_out = down;
    Expr own = n_;
    if (ep) {
      if (shard_.tp > 1) own = Expr::CeilDiv(n_, C(shard_.tp));
      expert_out = Act(Cat(p, "experts.combine_all_to_all.out"),
                       {Expr::Mul(own, C(m.top_k * shard_.expert_tp)), hidden_});
      Node(Cat(p, "experts.combine_all_to_all"), OpKind::kAllToAll, {down}, {expert_out},
           {{"group_size", shard_.moe_group}, {"scope", shard_.moe_scope}});
    }
    // Weighted sum of each token's top_k expert outputs.
    TensorId routed = Act(Cat(p, "experts.combine.out"), {own, hidden_});
    Node(Cat(p, "experts.combine"), OpKind::kReduceSum, {expert_out, topk_w}, {routed});
    if (m.shared_intermediate == 0) {
      if (!ep || shard_.tp == 1) return routed;
      // Each tensor-parallel device holds its own tokens' rows: gather the replica's n.
      const TensorId all = Act(Cat(p, "experts.all_gather.out"), {n_, hidden_});
      Node(Cat(p, "experts.all_gather"), OpKind::kAllGather, {routed}, {all},
           {{"group_size", shard_.tp}, {"scope", shard_.tp_scope}});
      return all;
    }

    const TensorId shared = Mlp(Cat(p, "shared_expert."), i, x, m.shared_intermediate, m.act, false);
    std::vector<TensorId> sum_in{routed, shared};
    if (m.shared_gate) {
      sum_in.push_back(Linear(Cat(p, "shared_expert_gate"), x, 1, WeightRole::kRouter, i, false,
                              recipe_.compute));
    }
    const TensorId out = Act(Cat(p, "shared_add.out"), {n_, hidden_});
    Node(Cat(p, "shared_add"), OpKind::kAdd, std::move(sum_in), {out});
    // With expert parallelism the tensor-parallel devices' disjoint routed rows and partial
    // shared outputs sum to the layer's output in one all-reduce.
    return ep ? TpAllReduce(Cat(p, "moe_all_reduce"), out) : out;
  }

  const ModelSpec& spec_;
  const ModelSpec& full_;
  const DeviceShard& shard_;
  const Recipe& recipe_;
  WeightFormats formats_;
  StepGraph& out_;
  ir::Graph& g_;
  Expr n_, seqs_, ctx_, hidden_;
  TensorId table_ = 0;
  std::vector<uint8_t> signature_;
  std::optional<Error> error_;
  std::vector<std::pair<int64_t, Expr>> window_lengths_;  // min(ctx, W), built once per W
  Expr expert_rows_;                                       // n · top_k, built once
};

// This device's share of the model: the sizes DeviceShard splits, divided.
ModelSpec ShardSpec(const ModelSpec& s, const DeviceShard& d) {
  ModelSpec l = s;
  const int64_t t = d.tp;
  if (t > 1) {
    l.attn.heads = s.attn.heads / t;
    l.attn.kv_heads = s.attn.kv_heads >= t ? s.attn.kv_heads / t : 1;  // replicated below t
    l.gdn.key_heads = s.gdn.key_heads / t;
    l.gdn.value_heads = s.gdn.value_heads / t;
    l.mamba.heads = s.mamba.heads / t;
    if (s.mamba.groups % t == 0) l.mamba.groups = s.mamba.groups / t;  // else replicated
    l.mlp.intermediate = s.mlp.intermediate / t;
    l.moe.shared_intermediate = s.moe.shared_intermediate / t;
    l.vocab = (s.vocab + t - 1) / t;  // vocab-parallel, the last slice padded
  }
  if (d.ep > 1) {
    l.moe.experts = s.moe.experts / d.ep;
    l.moe.intermediate = s.moe.intermediate / d.expert_tp;
  } else {
    l.moe.intermediate = s.moe.intermediate / t;
  }
  return l;
}

}  // namespace

Result<StepGraph> BuildStepGraph(const ModelSpec& spec, const Recipe& recipe) {
  return BuildStepGraph(spec, recipe, DeviceShard{});
}

Result<StepGraph> BuildStepGraph(const ModelSpec& spec, const Recipe& recipe,
                                 const DeviceShard& shard) {
  StepGraph out;
  ModelSpec local = ShardSpec(spec, shard);
  PadShardToBlocks(local, spec, recipe);  // recipe.h: shards padded to whole quant blocks
  Builder builder(local, spec, shard, recipe, out);
  if (auto ok = builder.Build(); !ok) return std::unexpected(ok.error());
  return out;
}

}  // namespace opscope::import::hf
