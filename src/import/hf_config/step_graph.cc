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
#include <optional>
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

// GEMM groups (ir::kGemmGroupAttr). MLA's down-projections, q_a (hidden → q_lora_rank) and
// kv_a (hidden → kv_lora_rank + rope), read the same normed input and run as one GEMM in the
// three engines: SGLang's fused_qkv_a_proj_with_mqa, vLLM's fused_qkv_a_proj and TensorRT-LLM's
// kv_a_proj_with_mqa of kv_lora_rank + rope + q_lora_rank columns (python/sglang/srt/models/
// deepseek_v2.py, vllm/model_executor/models/deepseek_v2.py, tensorrt_llm/_torch/models/
// modeling_deepseekv3.py). Without a q LoRA (DeepSeek-V2-Lite) q_proj is tensor-parallel and
// kv_a replicated, and the engines keep them apart.
constexpr int64_t kMlaDownProjections = 1;

// Bytes of a tensor without its per-tensor scale constant (per token / per sequence figures).
uint64_t BytesWithoutTensorScale(Format f, std::initializer_list<int64_t> dims) {
  auto b = format::TensorBytes(f, std::span<const int64_t>(dims.begin(), dims.size()));
  if (!b) return 0;
  const auto tensor_bytes = static_cast<uint64_t>(format::Info(f).tensor_bytes);
  return *b >= tensor_bytes ? *b - tensor_bytes : 0;
}

bool IsGated(Activation a) { return a == Activation::kSiluGated || a == Activation::kGeluGated; }

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
    const bool eagle3 = spec_.eagle3.aux > 0;
    if (shard_.first_stage) {
      const TensorId ids = Tensor("input_ids", {n_}, Format::kInt32, Role::kInput);
      // An EAGLE-3 head looks its tokens up in the target's table: an input, not its weight.
      table_ = eagle3 ? Tensor("target.embed_tokens", {C(spec_.vocab), hidden_}, recipe_.compute,
                               Role::kInput)
                      : Weight("embed_tokens.weight", {C(spec_.vocab), hidden_},
                               {WeightRole::kEmbedding, -1, spec_.hidden}, WeightGroup::kEmbedding);
      h = Act("embed_tokens.out", {n_, hidden_});
      Node("embed_tokens", OpKind::kEmbedding, {table_, ids}, {h});
      // Vocab-parallel: each device looks up the ids in its slice, zeros elsewhere.
      h = TpAllReduce("embed_tokens.all_reduce", h);
      if (spec_.per_layer_width > 0) PerLayerInputs(ids, h);
      if (eagle3) {
        // EAGLE-3: the residual stream starts from fc over the target's hidden states (of
        // spec.eagle3.aux layers, concatenated); the embeddings join it in the first layer.
        eagle_embeds_ = h;
        const int64_t width = spec_.eagle3.aux * spec_.eagle3.target_hidden;
        TensorId features =
            Tensor("target_hidden_states", {n_, C(width)}, recipe_.compute, Role::kInput);
        // speculators' heads: norm_before_fc, an RMSNorm over the concatenated features, then
        // fc_norm, an RMSNorm of each aux layer's chunk — aux norms of target_hidden, costed
        // as one norm over the whole width (the same bytes, FLOPs and weights).
        if (spec_.eagle3.norm_before_fc) {
          features = Norm(std::string(kEagle3FcNormNode), features, width, recipe_.compute);
        }
        if (spec_.eagle3.fc_chunk_norms) {
          features = Norm(std::string(kEagle3FcChunkNormNode), features, width, recipe_.compute);
        }
        h = Linear(std::string(kEagle3FcNode), features, spec_.hidden, WeightRole::kOtherMatrix,
                   -1, false, recipe_.compute);
      }
      if (spec_.dsv4.hc_mult > 1) {
        // Hyper-connections: the residual stream is hc_mult copies of the hidden state.
        const TensorId streams = Act("hc_expand.out", {n_, StreamWidth()});
        Node("hc_expand", OpKind::kExpand, {h}, {streams});
        h = streams;
      }
    } else {
      h = Tensor("stage_input", {n_, StreamWidth()}, recipe_.compute, Role::kInput);
      if (spec_.per_layer_width > 0) {
        error_ = Error{"per-layer embeddings (Gemma-4 E2B / E4B) are not modelled across "
                       "pipeline stages (the first stage computes every layer's input)"};
      }
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
      AppendSignature(spec_.layers[i]);
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
      const TensorId sent = Act("stage_output", {n_, StreamWidth()});
      Node("send_to_next_stage", OpKind::kSendRecv, {h}, {sent},
           {{"group_size", int64_t{2}}, {"scope", shard_.pp_scope}});
      return {};
    }

    if (spec_.dsv4.hc_mult > 1) h = HyperHead(h);
    const TensorId normed = Norm("final_norm", h, spec_.hidden, recipe_.compute);
    const TensorId last = Tensor("last_token_index", {seqs_}, Format::kInt32, Role::kInput);
    const TensorId head_in = Act("lm_head.in", {seqs_, hidden_}, recipe_.gemm_input);
    Node("select_last_tokens", OpKind::kGather, {normed, last}, {head_in});
    // An EAGLE-3 head scores its own draft vocabulary.
    const int64_t head_rows = eagle3 ? spec_.eagle3.draft_vocab : spec_.vocab;
    const TensorId head_w =
        spec_.tie_embeddings && shard_.first_stage
            ? table_
            : Weight("lm_head.weight", {C(head_rows), hidden_},
                     {WeightRole::kLmHead, -1, spec_.hidden});
    std::vector<TensorId> head_ins{head_in, head_w};
    if (spec_.lm_head_bias) {
      head_ins.push_back(Weight("lm_head.bias", {C(head_rows)}, {WeightRole::kVector, -1, head_rows}));
    }
    if (shard_.tp == 1) {
      const TensorId logits =
          Tensor("logits", {seqs_, C(head_rows)}, recipe_.compute, Role::kOutput);
      Node("lm_head", OpKind::kLmHead, std::move(head_ins), {logits});
    } else {
      // Vocab-parallel LM head: each device's slice of the logits, gathered.
      const TensorId part = Act("lm_head.out", {seqs_, C(head_rows)});
      Node("lm_head", OpKind::kLmHead, std::move(head_ins), {part});
      const TensorId logits = Tensor("logits", {seqs_, C(head_rows * shard_.tp)},
                                     recipe_.compute, Role::kOutput);
      Node("lm_head.all_gather", OpKind::kAllGather, {part}, {logits},
           {{"group_size", shard_.tp}, {"scope", shard_.tp_scope}});
    }
    if (error_) return std::unexpected(*error_);
    return {};
  }

 private:
  Expr C(int64_t v) const { return Expr::Constant(v); }

  // What makes two layers cost twins: every field of their LayerSpec (and, as the layer is
  // built, the format of every weight).
  void AppendSignature(const LayerSpec& l) {
    auto put = [&](int64_t v) {
      for (int s = 0; s < 64; s += 8) signature_.push_back(static_cast<uint8_t>(v >> s));
    };
    signature_.push_back(static_cast<uint8_t>(l.mixer));
    signature_.push_back(static_cast<uint8_t>(l.ffn));
    signature_.push_back(static_cast<uint8_t>(l.parallel));
    signature_.push_back(static_cast<uint8_t>(l.rope | (l.sparse << 1) | (l.indexer_shared << 2) |
                                              (l.kv_shared << 3) | (l.hash_routed << 4) |
                                              (l.k_eq_v << 5) | (l.sinks << 6)));
    for (int64_t v : {l.window, l.chunk, l.compress, l.heads, l.kv_heads, l.head_dim, l.v_head_dim,
                      l.ffn_width}) {
      put(v);
    }
  }

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

  // The model's norm over the last dim with a weight of `width` (RMSNorm, or LayerNorm with or
  // without a bias: families.h NormKind), written in `out_format` (the matrix-input format when
  // a matrix op reads it).
  TensorId Norm(std::string name, TensorId x, int64_t width, Format out_format,
                int64_t layer = -1) {
    return NormOf(spec_.norm, std::move(name), x, width, out_format, layer);
  }

  // `extra`: a further input the norm reads (the all-reduced mean of squares of a norm whose
  // width spans the tensor-parallel devices, QkNorm).
  TensorId NormOf(NormKind kind, std::string name, TensorId x, int64_t width, Format out_format,
                  int64_t layer, std::optional<TensorId> extra = std::nullopt) {
    std::vector<TensorId> ins{x, Weight(Cat(name, ".weight"), {C(width)},
                                        {WeightRole::kNorm, layer, width})};
    if (extra) ins.push_back(*extra);
    if (kind == NormKind::kLayerNorm) {
      ins.push_back(Weight(Cat(name, ".bias"), {C(width)}, {WeightRole::kNorm, layer, width}));
    }
    Shape shape = g_.tensors[x].shape;
    const TensorId y = Act(Cat(name, ".out"), std::move(shape), out_format);
    Node(std::move(name), kind == NormKind::kRms ? OpKind::kRMSNorm : OpKind::kLayerNorm,
         std::move(ins), {y});
    return y;
  }

  // A norm with no weight (Llama-4's L2 norm of q and k).
  TensorId WeightlessNorm(std::string name, TensorId x, Format out_format) {
    Shape shape = g_.tensors[x].shape;
    const TensorId y = Act(Cat(name, ".out"), std::move(shape), out_format);
    Node(std::move(name), OpKind::kRMSNorm, {x}, {y}, {}, "L2Norm");
    return y;
  }

  // The last node, a Linear, is one of a group engines run as one GEMM with the group's other
  // Linears that read the same input (ir::kGemmGroupAttr; the predictor times them so).
  void MarkGemmGroup(int64_t group) {
    g_.nodes.back().attrs.emplace_back(std::string(ir::kGemmGroupAttr), group);
  }

  // x [rows, k] · w[out, k] (+ bias) -> [rows, out].
  TensorId Linear(std::string name, TensorId x, int64_t out, WeightRole role,
                  int64_t layer, bool bias, Format out_format) {
    // Copies, not references: Weight() below grows g_.tensors.
    const Expr rows = g_.tensors[x].shape.front();
    const int64_t k = g_.tensors[x].shape.back().constant();
    std::vector<TensorId> ins{x, Weight(Cat(name, ".weight"), {C(out), C(k)}, {role, layer, k})};
    if (bias) ins.push_back(Weight(Cat(name, ".bias"), {C(out)}, {WeightRole::kVector, layer, out}));
    const TensorId y = Act(Cat(name, ".out"), {rows, C(out)}, out_format);
    Node(std::move(name), OpKind::kLinear, std::move(ins), {y});
    return y;
  }

  // One layer: its mixer(s) and MLP with the norms and residuals of the model's layout
  // (families.h NormLayout): pre-norm, Gemma's sandwich, OLMo-2's post-norm, Cohere's
  // parallel block.
  TensorId Layer(int64_t i, TensorId h) {
    const LayerSpec& l = spec_.layers[i];
    const std::string p = "layers." + std::to_string(i) + ".";
    if (spec_.dsv4.hc_mult > 1) return HyperLayer(p, i, h);
    const NormLayout layout = spec_.norm_layout;
    const bool post = layout == NormLayout::kSandwich || layout == NormLayout::kPost;
    if (layout == NormLayout::kParallel) return ParallelLayer(p, i, h);
    if (l.mixer != Mixer::kNone) {
      const TensorId x = i == 0 && eagle_embeds_ ? EagleInput(p, h)
                         : layout == NormLayout::kPost
                             ? h
                             : Norm(Cat(p, "input_norm"), h, spec_.hidden, recipe_.gemm_input, i);
      TensorId a = MixerBlock(p, i, l.mixer, x);
      if (l.parallel != Mixer::kNone) {
        // Falcon-H1: a second mixer reads the same normed input; the outputs are summed.
        const TensorId b = MixerBlock(p, i, l.parallel, x);
        const TensorId sum = Act(Cat(p, "mixer_sum.out"), {n_, hidden_});
        Node(Cat(p, "mixer_sum"), OpKind::kAdd, {a, b}, {sum});
        a = sum;
      }
      a = TpAllReduce(Cat(p, "mixer_all_reduce"), a);
      if (post) a = Norm(Cat(p, "post_attention_norm"), a, spec_.hidden, recipe_.compute, i);
      const TensorId sum = Act(Cat(p, "mixer_residual.out"), {n_, hidden_});
      Node(Cat(p, "mixer_residual"), OpKind::kAdd, {h, a}, {sum});
      h = sum;
    }
    if (l.ffn != Ffn::kNone) {
      const TensorId x = layout == NormLayout::kPost
                             ? h
                             : Norm(Cat(p, "ffn_norm"), h, spec_.hidden, recipe_.gemm_input, i);
      TensorId f;
      if (l.ffn == Ffn::kMoe && spec_.moe.parallel_dense) {
        f = DenseBesideExperts(p, i, h, x);
      } else {
        f = FfnBlock(p, i, x);
        // Expert parallelism reduces inside Moe(); otherwise the MLP (or the tensor-parallel
        // experts with the shared expert) ends row-parallel.
        if (l.ffn != Ffn::kMoe || shard_.ep == 1) f = TpAllReduce(Cat(p, "ffn_all_reduce"), f);
      }
      if (post) f = Norm(Cat(p, "post_ffn_norm"), f, spec_.hidden, recipe_.compute, i);
      const TensorId sum = Act(Cat(p, "ffn_residual.out"), {n_, hidden_});
      Node(Cat(p, "ffn_residual"), OpKind::kAdd, {h, f}, {sum});
      h = sum;
    }
    if (!per_layer_inputs_.empty()) h = PerLayerInput(p, i, h);
    return h;
  }

  // Gemma-4 E2B / E4B per-layer embeddings (Gemma4TextModel.project_per_layer_inputs): the
  // token's row of a [per_layer_vocab, layers · P] table (vocab-parallel, as embed_tokens),
  // plus the embeddings projected to layers · P and RMS-normed per P-wide slice, summed and
  // split into one P-wide input per layer. The projection is replicated on every device.
  void PerLayerInputs(TensorId ids, TensorId embeds) {
    const int64_t layers = spec_.num_layers(), width = spec_.per_layer_width;
    const TensorId table =
        Weight("embed_tokens_per_layer.weight", {C(spec_.per_layer_vocab), C(layers * width)},
               {WeightRole::kEmbedding, -1, layers * width}, WeightGroup::kEmbedding);
    TensorId looked = Act("embed_tokens_per_layer.out", {n_, C(layers * width)});
    Node("embed_tokens_per_layer", OpKind::kEmbedding, {table, ids}, {looked});
    looked = TpAllReduce("embed_tokens_per_layer.all_reduce", looked);
    TensorId projected = Linear("per_layer_model_projection", embeds, layers * width,
                                WeightRole::kOtherMatrix, -1, false, recipe_.compute);
    projected = Norm("per_layer_projection_norm", projected, width, recipe_.compute);
    const TensorId both = Act("per_layer_inputs.out", {n_, C(layers * width)});
    Node("per_layer_inputs", OpKind::kAdd, {projected, looked}, {both});
    for (int64_t i = 0; i < layers; ++i) {
      per_layer_inputs_.push_back(Act(Cat("per_layer_inputs.", std::to_string(i)), {n_, C(width)}));
    }
    Node("per_layer_inputs.split", OpKind::kSplit, {both}, per_layer_inputs_,
         {{"layout", std::string("contiguous")}});
  }

  // A layer's per-layer-input branch (Gemma4TextDecoderLayer, after the MLP's residual):
  // h + norm(W_proj · (gelu(W_gate · h) ⊙ per_layer_input)), P wide between the two projections
  // (replicated on every device).
  TensorId PerLayerInput(const std::string& p, int64_t i, TensorId h) {
    const int64_t width = spec_.per_layer_width;
    const TensorId gate = Linear(Cat(p, "per_layer_input_gate"), h, width,
                                 WeightRole::kOtherMatrix, i, false, recipe_.compute);
    const TensorId gated = Act(Cat(p, "per_layer_gelu_mul.out"), {n_, C(width)},
                               recipe_.gemm_input);
    Node(Cat(p, "per_layer_gelu_mul"), OpKind::kGeluMul,
         {gate, per_layer_inputs_[static_cast<size_t>(i)]}, {gated});
    const TensorId projected = Linear(Cat(p, "per_layer_projection"), gated, spec_.hidden,
                                      WeightRole::kOtherMatrix, i, false, recipe_.compute);
    const TensorId normed = Norm(Cat(p, "post_per_layer_input_norm"), projected, spec_.hidden,
                                 recipe_.compute, i);
    const TensorId sum = Act(Cat(p, "per_layer_residual.out"), {n_, hidden_});
    Node(Cat(p, "per_layer_residual"), OpKind::kAdd, {h, normed}, {sum});
    return sum;
  }

  // EAGLE-3's first layer input (vLLM's and SGLang's LlamaDecoderLayer of the Eagle3 head):
  // [input_norm(embeddings), hidden_norm(h)], 2 · hidden wide, so its q, k and v projections
  // read 2 · hidden; the residual stays h.
  TensorId EagleInput(const std::string& p, TensorId h) {
    const TensorId e =
        Norm(Cat(p, "input_norm"), *eagle_embeds_, spec_.hidden, recipe_.gemm_input, 0);
    const TensorId x = Norm(Cat(p, "hidden_norm"), h, spec_.hidden, recipe_.gemm_input, 0);
    const TensorId both = Act(Cat(p, "eagle_input.out"), {n_, C(2 * spec_.hidden)},
                              recipe_.gemm_input);
    Node(Cat(p, "eagle_input"), OpKind::kConcat, {e, x}, {both});
    return both;
  }

  // Gemma-4's MoE layer (Gemma4TextDecoderLayer with enable_moe_block): the dense MLP on the
  // pre-FFN-normed input and the routed experts on a second norm of the residual h run side
  // by side, each through its own post norm, and are summed (the layer's post-FFN norm and
  // residual follow in Layer()). The router reads h through a weightless RMSNorm times a
  // learned scale [hidden] (costed as one RMSNorm with that weight) and scales the chosen
  // experts' weights by per_expert_scale [experts].
  //   out = norm_1(MLP(x)) + norm_2(Σ_topk w_e · expert_e(pre_norm_2(h)))
  TensorId DenseBesideExperts(const std::string& p, int64_t i, TensorId h, TensorId x) {
    const LayerSpec& l = spec_.layers[i];
    TensorId d = Mlp(Cat(p, "mlp."), i, x, l.ffn_width > 0 ? l.ffn_width : spec_.mlp.intermediate,
                     spec_.mlp.act, spec_.mlp.bias);
    d = TpAllReduce(Cat(p, "mlp_all_reduce"), d);
    d = Norm(Cat(p, "post_ffn_norm_1"), d, spec_.hidden, recipe_.compute, i);
    const TensorId x2 = Norm(Cat(p, "pre_ffn_norm_2"), h, spec_.hidden, recipe_.gemm_input, i);
    const TensorId rx = spec_.moe.router_norm
                            ? Norm(Cat(p, "moe.router_norm"), h, spec_.hidden, recipe_.compute, i)
                            : x2;
    TensorId e = Moe(Cat(p, "moe."), i, x2, rx);
    if (shard_.ep == 1) e = TpAllReduce(Cat(p, "moe_all_reduce"), e);
    e = Norm(Cat(p, "post_ffn_norm_2"), e, spec_.hidden, recipe_.compute, i);
    const TensorId sum = Act(Cat(p, "ffn_sum.out"), {n_, hidden_});
    Node(Cat(p, "ffn_sum"), OpKind::kAdd, {d, e}, {sum});
    return sum;
  }

  // Cohere's parallel block: one norm feeds attention and the MLP; h + attention + MLP.
  TensorId ParallelLayer(const std::string& p, int64_t i, TensorId h) {
    const LayerSpec& l = spec_.layers[i];
    const TensorId x = Norm(Cat(p, "input_norm"), h, spec_.hidden, recipe_.gemm_input, i);
    std::vector<TensorId> terms{h};
    if (l.mixer != Mixer::kNone) terms.push_back(MixerBlock(p, i, l.mixer, x));
    if (l.ffn != Ffn::kNone) terms.push_back(FfnBlock(p, i, x));
    TensorId partial = Act(Cat(p, "parallel_sum.out"), {n_, hidden_});
    Node(Cat(p, "parallel_sum"), OpKind::kAdd, {terms.begin() + 1, terms.end()}, {partial});
    partial = TpAllReduce(Cat(p, "parallel_all_reduce"), partial);
    const TensorId sum = Act(Cat(p, "residual.out"), {n_, hidden_});
    Node(Cat(p, "residual"), OpKind::kAdd, {h, partial}, {sum});
    return sum;
  }

  TensorId MixerBlock(const std::string& p, int64_t i, Mixer kind, TensorId x) {
    switch (kind) {
      case Mixer::kAttention: return Attention(p, i, x);
      case Mixer::kMla: return Mla(p, i, x);
      case Mixer::kGatedDeltaNet: return GatedDeltaNet(p, i, x);
      case Mixer::kMamba2: return Mamba2(p, i, x);
      case Mixer::kMamba1: return Mamba1(p, i, x);
      case Mixer::kKda: return Kda(p, i, x);
      case Mixer::kDeepseekV4: return DeepseekV4Attention(p, i, x);
      case Mixer::kLinear:
        // DeciLM's replace_with_linear: the attention block is one hidden -> hidden matrix.
        return Linear(Cat(p, "attn.linear"), x, spec_.hidden, WeightRole::kAttnOut, i, false,
                      recipe_.compute);
      case Mixer::kNone: break;
    }
    return x;
  }

  TensorId FfnBlock(const std::string& p, int64_t i, TensorId x) {
    const LayerSpec& l = spec_.layers[i];
    switch (l.ffn) {
      case Ffn::kDense:
        return Mlp(Cat(p, "mlp."), i, x, l.ffn_width > 0 ? l.ffn_width : spec_.mlp.intermediate,
                   spec_.mlp.act, spec_.mlp.bias);
      case Ffn::kMoe: return Moe(Cat(p, "moe."), i, x);
      case Ffn::kLinear:
        return Linear(Cat(p, "mlp.linear"), x, spec_.hidden, WeightRole::kFfnDown, i, false,
                      recipe_.compute);
      case Ffn::kNone: break;
    }
    return x;
  }

  // The residual stream's width: hidden, or hc_mult copies of it (DeepSeek-V4).
  Expr StreamWidth() const {
    return spec_.dsv4.hc_mult > 1 ? C(spec_.dsv4.hc_mult * spec_.hidden) : hidden_;
  }

  // Manifold-Constrained Hyper-Connections (DeepseekV4HyperConnection): a weightless RMSNorm
  // of the hc streams, the mix logits fn [(2 + hc)·hc, hc·hidden] (with base and scale), and
  // the collapse of the streams into the sub-layer's input [n, hidden].
  std::pair<TensorId, TensorId> HcCollapse(const std::string& name, TensorId streams, int64_t i) {
    const int64_t hc = spec_.dsv4.hc_mult, mix = (2 + hc) * hc;
    const TensorId flat = WeightlessNorm(Cat(name, ".input_norm"), streams, recipe_.compute);
    const TensorId logits =
        Linear(Cat(name, ".fn"), flat, mix, WeightRole::kRouter, i, false, Format::kF32);
    const TensorId x = Act(Cat(name, ".collapse.out"), {n_, hidden_});
    Node(Cat(name, ".collapse"), OpKind::kReduceSum,
         {streams, logits, Vector(Cat(name, ".base"), i, mix), Vector(Cat(name, ".scale"), i, 3)},
         {x}, {}, "HyperConnectionCollapse");
    return {x, logits};
  }

  // Writes a sub-layer's output back into the hc streams: comb · streams + post · output.
  TensorId HcExpand(const std::string& name, TensorId streams, TensorId out, TensorId logits) {
    const TensorId y = Act(Cat(name, ".expand.out"), {n_, StreamWidth()});
    Node(Cat(name, ".expand"), OpKind::kAdd, {streams, out, logits}, {y}, {},
         "HyperConnectionExpand");
    return y;
  }

  // A DeepSeek-V4 layer: hyper-connections around attention and around the MoE.
  TensorId HyperLayer(const std::string& p, int64_t i, TensorId h) {
    const LayerSpec& l = spec_.layers[i];
    auto [x, mix] = HcCollapse(Cat(p, "attn_hc"), h, i);
    x = Norm(Cat(p, "input_norm"), x, spec_.hidden, recipe_.gemm_input, i);
    TensorId a = TpAllReduce(Cat(p, "mixer_all_reduce"), MixerBlock(p, i, l.mixer, x));
    h = HcExpand(Cat(p, "attn_hc"), h, a, mix);
    auto [y, mix2] = HcCollapse(Cat(p, "ffn_hc"), h, i);
    y = Norm(Cat(p, "ffn_norm"), y, spec_.hidden, recipe_.gemm_input, i);
    TensorId f = FfnBlock(p, i, y);
    if (l.ffn != Ffn::kMoe || shard_.ep == 1) f = TpAllReduce(Cat(p, "ffn_all_reduce"), f);
    return HcExpand(Cat(p, "ffn_hc"), h, f, mix2);
  }

  // DeepseekV4HyperHead: the streams collapse once more (hc_fn [hc, hc·hidden]) before the
  // final norm.
  TensorId HyperHead(TensorId streams) {
    const int64_t hc = spec_.dsv4.hc_mult;
    const TensorId flat = WeightlessNorm("hc_head.input_norm", streams, recipe_.compute);
    const TensorId logits = Linear("hc_head.fn", flat, hc, WeightRole::kRouter, -1, false, Format::kF32);
    const TensorId x = Act("hc_head.collapse.out", {n_, hidden_});
    Node("hc_head.collapse", OpKind::kReduceSum,
         {streams, logits, Vector("hc_head.base", -1, hc), Vector("hc_head.scale", -1, 1)}, {x}, {},
         "HyperConnectionCollapse");
    return x;
  }

  // One pooled entry per `ratio` tokens (DeepseekV4 compressors): kv and gate projections of
  // coff·width (coff 2: overlapping windows), a learned position bias [ratio, coff·width], the
  // softmax-weighted sum over each window, a norm and RoPE. Returns the new entries
  // [ceil(n/ratio), width].
  TensorId Compressor(const std::string& name, int64_t i, TensorId x, int64_t ratio, int64_t coff,
                      int64_t width) {
    const TensorId kv = Linear(Cat(name, ".kv_proj"), x, coff * width, WeightRole::kOtherMatrix, i,
                               false, recipe_.compute);
    const TensorId gate = Linear(Cat(name, ".gate_proj"), x, coff * width, WeightRole::kOtherMatrix,
                                 i, false, recipe_.compute);
    const TensorId bias = Weight(Cat(name, ".position_bias"), {C(ratio), C(coff * width)},
                                 {WeightRole::kVector, i, coff * width});
    const TensorId pooled = Act(Cat(name, ".pool.out"), {Expr::CeilDiv(n_, C(ratio)), C(width)});
    Node(Cat(name, ".pool"), OpKind::kReduceSum, {kv, gate, bias}, {pooled}, {}, "CompressPool");
    const TensorId normed = Norm(Cat(name, ".kv_norm"), pooled, width, recipe_.compute, i);
    const TensorId rotated = Act(Cat(name, ".rope.out"), g_.tensors[normed].shape);
    Node(Cat(name, ".rope"), OpKind::kRoPE, {normed}, {rotated});
    return rotated;
  }

  // A compressed cache [seqs, ceil(ctx/ratio), 1, width]; per token it holds 1/ratio entry.
  TensorId CompressedCache(const std::string& name, int64_t i, int64_t ratio, int64_t width) {
    const TensorId cache =
        State(name, {seqs_, Expr::CeilDiv(ctx_, C(ratio)), C(1), C(width)}, recipe_.kv);
    const uint64_t entry = BytesWithoutTensorScale(recipe_.kv, {1, 1, 1, width});
    out_.kv_caches.push_back({cache, i, 0, (entry + static_cast<uint64_t>(ratio) - 1) /
                                               static_cast<uint64_t>(ratio)});
    return cache;
  }

  // DeepSeek-V4 attention (DeepseekV4Attention): q through q_a / q_norm / q_b and a weightless
  // per-head norm; one shared K = V head (kv_proj, kv_norm); attention over the sliding-window
  // cache (with the per-head sinks) and, in CSA / HCA layers, over the compressed cache (CSA:
  // the index_topk entries its indexer selects); RoPE undone on the output; the grouped
  // low-rank output projection o_a (block-diagonal, an Einsum) then o_b.
  TensorId DeepseekV4Attention(const std::string& p, int64_t i, TensorId x) {
    const LayerSpec& l = spec_.layers[i];
    const DeepseekV4Spec& v4 = spec_.dsv4;
    const int64_t heads = spec_.attn.heads, d = spec_.attn.head_dim;
    TensorId qa = Linear(Cat(p, "attn.q_a_proj"), x, v4.q_lora_rank, WeightRole::kOtherMatrix, i,
                         false, recipe_.compute);
    qa = Norm(Cat(p, "attn.q_norm"), qa, v4.q_lora_rank, recipe_.gemm_input, i);
    TensorId q = Linear(Cat(p, "attn.q_b_proj"), qa, heads * d, WeightRole::kOtherMatrix, i, false,
                        recipe_.compute);
    q = WeightlessNorm(Cat(p, "attn.q_head_norm"), q, recipe_.compute);
    TensorId kv = Linear(Cat(p, "attn.kv_proj"), x, d, WeightRole::kAttnQkv, i, false, recipe_.compute);
    kv = Norm(Cat(p, "attn.kv_norm"), kv, d, recipe_.compute, i);
    std::tie(q, kv) = Rope(Cat(p, "attn.rope"), q, kv);
    const TensorId window_cache =
        State(Cat(p, "attn.kv_cache"), {seqs_, CacheLength(v4.window), C(1), C(d)}, recipe_.kv);
    out_.kv_caches.push_back(
        {window_cache, i, v4.window, BytesWithoutTensorScale(recipe_.kv, {1, 1, 1, d})});
    TensorId o = Act(Cat(p, "attn.window_attention.out"), {n_, C(heads * d)});
    Node(Cat(p, "attn.window_attention"), OpKind::kPagedAttention,
         {q, window_cache, kv, Vector(Cat(p, "attn.sinks"), i, heads)}, {o},
         {{"q_heads", heads}, {"head_dim", d}, {"window", v4.window}});
    if (l.compress > 0) o = AddCompressedAttention(p, i, x, q, qa, o);
    const TensorId derotated = Act(Cat(p, "attn.out_rope.out"), {n_, C(heads * d)}, recipe_.gemm_input);
    Node(Cat(p, "attn.out_rope"), OpKind::kRoPE, {o}, {derotated});
    return GroupedOutput(p, i, derotated);
  }

  // A CSA / HCA layer's second attention, over its compressed cache (CSA: the index_topk
  // entries its indexer selects), merged with the window attention's output `o`.
  TensorId AddCompressedAttention(const std::string& p, int64_t i, TensorId x, TensorId q,
                                  TensorId qa, TensorId o) {
    const LayerSpec& l = spec_.layers[i];
    const int64_t heads = spec_.attn.heads, d = spec_.attn.head_dim;
    const int64_t coff = l.sparse ? 2 : 1;
    const TensorId entries = Compressor(Cat(p, "attn.compressor"), i, x, l.compress, coff, d);
    const TensorId cache = CompressedCache(Cat(p, "attn.compressed_cache"), i, l.compress, d);
    std::vector<TensorId> ins{q, cache, entries};
    Attrs attrs{{"q_heads", heads}, {"head_dim", d}, {"compress", l.compress}};
    if (l.sparse) {
      ins.push_back(CompressedIndexer(p, i, x, qa, l.compress));
      attrs.emplace_back("topk", spec_.indexer.topk);
    }
    const TensorId oc = Act(Cat(p, "attn.compressed_attention.out"), {n_, C(heads * d)});
    Node(Cat(p, "attn.compressed_attention"), OpKind::kPagedAttention, std::move(ins), {oc},
         std::move(attrs));
    const TensorId sum = Act(Cat(p, "attn.attention_sum.out"), {n_, C(heads * d)});
    Node(Cat(p, "attn.attention_sum"), OpKind::kAdd, {o, oc}, {sum}, {}, "SoftmaxMerge");
    return sum;
  }

  // Grouped output projection: o_groups blocks of heads·d/o_groups -> o_lora_rank each (o_a,
  // an Einsum over the block-diagonal weight), then o_groups·o_lora_rank -> hidden (o_b).
  TensorId GroupedOutput(const std::string& p, int64_t i, TensorId derotated) {
    const DeepseekV4Spec& v4 = spec_.dsv4;
    const int64_t g = v4.o_groups, in_g = spec_.attn.heads * spec_.attn.head_dim / g;
    const TensorId grouped = Act(Cat(p, "attn.o_groups"), {n_, C(g), C(in_g)}, recipe_.gemm_input);
    Node(Cat(p, "attn.o_groups.view"), OpKind::kReshape, {derotated}, {grouped});
    const TensorId oa_w = Weight(Cat(p, "attn.o_a_proj.weight"), {C(g), C(v4.o_lora_rank), C(in_g)},
                                 {WeightRole::kOtherMatrix, i, in_g});
    const TensorId oa = Act(Cat(p, "attn.o_a_proj.out"), {n_, C(g), C(v4.o_lora_rank)});
    Node(Cat(p, "attn.o_a_proj"), OpKind::kEinsum, {grouped, oa_w}, {oa},
         {{"equation", std::string("ngk,gok->ngo")}});
    const TensorId flat = Act(Cat(p, "attn.o_a_proj.flat"), {n_, C(g * v4.o_lora_rank)},
                              recipe_.gemm_input);
    Node(Cat(p, "attn.o_a_proj.view"), OpKind::kReshape, {oa}, {flat});
    return Linear(Cat(p, "attn.o_b_proj"), flat, spec_.hidden, WeightRole::kAttnOut, i, false,
                  recipe_.compute);
  }

  // The CSA layer's lightning indexer (DeepseekV4Indexer): its own pooled index keys (one per
  // `ratio` tokens, overlapping windows), queries from the q latent, per-head weights.
  TensorId CompressedIndexer(const std::string& p, int64_t i, TensorId x, TensorId q_latent,
                             int64_t ratio) {
    const IndexerSpec& s = spec_.indexer;
    const std::string q = Cat(p, "attn.compressor.indexer");
    const TensorId keys = Compressor(q, i, x, ratio, 2, s.head_dim);
    const TensorId cache = CompressedCache(Cat(q, ".k_cache"), i, ratio, s.head_dim);
    const TensorId qi = Linear(Cat(q, ".q_b_proj"), q_latent, s.heads * s.head_dim,
                               WeightRole::kOtherMatrix, i, false, recipe_.compute);
    const TensorId qr = Act(Cat(q, ".q_rope.out"), g_.tensors[qi].shape);
    Node(Cat(q, ".q_rope"), OpKind::kRoPE, {qi}, {qr});
    const TensorId w = Linear(Cat(q, ".weights_proj"), x, s.heads, WeightRole::kOtherMatrix, i,
                              false, Format::kF32);
    const TensorId indices = Act(Cat(q, ".topk.ids"), {n_, C(s.topk)}, Format::kInt32);
    Node(Cat(q, ".score"), OpKind::kLightningIndexer, {qr, w, cache, keys}, {indices},
         {{"heads", s.heads}, {"head_dim", s.head_dim}, {"topk", s.topk}, {"compress", ratio}});
    return indices;
  }

  // The cache length of a windowed (W) or chunked layer: min(ctx, W), built once per W.
  Expr CacheLength(int64_t window) {
    if (window == 0) return ctx_;
    for (const auto& [w, e] : window_lengths_) {
      if (w == window) return e;
    }
    window_lengths_.emplace_back(window, Expr::Min(ctx_, C(window)));
    return window_lengths_.back().second;
  }

  // The q (and k) norm of a layer: per head over head_dim, over the whole projection
  // (OLMo-2, MiniMax-M2), or a weightless L2 norm (Llama-4).
  // A whole-projection norm under tensor parallelism spans devices: each device sums the
  // squares of its slice of every row (a ReduceSum reading x), one AllReduce of n f32 sums
  // over the tp devices completes the mean, and the norm reads it beside x — as SGLang and
  // vLLM run MiniMax-M2's q/k norms (MiniMaxText01RMSNormTP: the variance all-reduced). vLLM's
  // OLMo-2 all-gathers q and k instead, which moves more; the cheaper form is counted.
  TensorId QkNorm(std::string name, TensorId x, int64_t head_dim, int64_t i) {
    const AttentionSpec& a = spec_.attn;
    if (a.qk_norm_weightless) return WeightlessNorm(std::move(name), x, recipe_.compute);
    const int64_t width = a.qk_norm_full ? g_.tensors[x].shape.back().constant() : head_dim;
    if (!a.qk_norm_full || shard_.tp == 1) return Norm(std::move(name), x, width, recipe_.compute, i);
    const TensorId partial = Act(Cat(name, ".sum_squares.out"), {n_, C(1)}, Format::kF32);
    Node(Cat(name, ".sum_squares"), OpKind::kReduceSum, {x}, {partial});
    const TensorId total = Act(Cat(name, ".all_reduce.out"), {n_, C(1)}, Format::kF32);
    Node(Cat(name, ".all_reduce"), OpKind::kAllReduce, {partial}, {total},
         {{"group_size", shard_.tp}, {"scope", shard_.tp_scope}});
    return NormOf(spec_.norm, std::move(name), x, width, recipe_.compute, i, total);
  }

  // Standard (GQA, sliding-window, chunked, gated, with sinks) attention; returns [n, hidden].
  // Per-layer heads and head dims override the model's (DeciLM blocks, Gemma-4 global layers,
  // MiMo-V2-Flash sliding layers); a kv-shared layer reads an earlier layer's cache and projects
  // no keys or values. Value heads may be narrower than key heads (d_v < d: MiMo-V2-Flash):
  // q and k project to heads·d and kv_heads·d, v to kv_heads·d_v, the V cache holds d_v per
  // head, the output is heads·d_v wide, and the attention node carries v_head_dim so that its
  // FLOPs are QKᵀ at d and PV at d_v.
  TensorId Attention(const std::string& p, int64_t i, TensorId x) {
    const AttentionSpec& a = spec_.attn;
    const LayerSpec& l = spec_.layers[i];
    const int64_t heads = l.heads > 0 ? l.heads : a.heads;
    const int64_t kv_heads = l.kv_heads > 0 ? l.kv_heads : a.kv_heads;
    const int64_t d = l.head_dim > 0 ? l.head_dim : a.head_dim;
    const int64_t dv = l.v_head_dim > 0 ? l.v_head_dim : (a.v_head_dim > 0 ? a.v_head_dim : d);
    // A chunked layer keeps at most one chunk: its cache is sized like a window's (the figures'
    // min(ctx, W)), but its tensor spans ctx so that the rule sees the position in the chunk.
    const int64_t window = l.window > 0 ? l.window : l.chunk;
    const int64_t qo = heads * d, kvo = kv_heads * d, vo = kv_heads * dv, oo = heads * dv;
    const int64_t q_rows = a.output_gate ? 2 * qo : qo;
    const bool own_kv = !l.kv_shared;
    const int64_t kv_rows = own_kv ? (l.k_eq_v ? kvo : kvo + vo) : 0;
    TensorId q, k = 0, v = 0, gate = 0;
    if (!recipe_.separate_qkv && !recipe_.gguf) {
      // One fused QKV projection, as vLLM / TensorRT-LLM run it.
      const TensorId qkv = Linear(Cat(p, "attn.qkv_proj"), x, q_rows + kv_rows, WeightRole::kAttnQkv,
                                  i, a.qkv_bias, recipe_.compute);
      q = Act(Cat(p, "attn.q"), {n_, C(qo)});
      std::vector<TensorId> parts{q};
      if (a.output_gate) parts.push_back(gate = Act(Cat(p, "attn.gate"), {n_, C(qo)}));
      if (own_kv) {
        k = Act(Cat(p, "attn.k"), {n_, C(kvo)});
        parts.push_back(k);
        if (!l.k_eq_v) parts.push_back(v = Act(Cat(p, "attn.v"), {n_, C(vo)}));
      }
      Node(Cat(p, "attn.split_qkv"), OpKind::kSplit, {qkv}, std::move(parts),
           {{"layout", std::string("contiguous")}});
    } else {
      // llama.cpp runs q, k and v as three matrices (they may have different types).
      q = Linear(Cat(p, "attn.q_proj"), x, q_rows, WeightRole::kAttnQ, i, a.qkv_bias, recipe_.compute);
      if (own_kv) {
        k = Linear(Cat(p, "attn.k_proj"), x, kvo, WeightRole::kAttnK, i, a.qkv_bias, recipe_.compute);
        if (!l.k_eq_v) {
          v = Linear(Cat(p, "attn.v_proj"), x, vo, WeightRole::kAttnV, i, a.qkv_bias, recipe_.compute);
        }
      }
      if (a.output_gate) {
        const TensorId qg = q;
        q = Act(Cat(p, "attn.q"), {n_, C(qo)});
        gate = Act(Cat(p, "attn.gate"), {n_, C(qo)});
        Node(Cat(p, "attn.split_gate"), OpKind::kSplit, {qg}, {q, gate},
             {{"layout", std::string("contiguous")}});
      }
    }
    // K = V: the values are the raw k projection (normed below, not rotated).
    if (own_kv && l.k_eq_v) v = k;
    if (own_kv && a.v_norm) v = WeightlessNorm(Cat(p, "attn.v_norm"), v, recipe_.compute);
    if (a.qk_norm) {
      q = QkNorm(Cat(p, "attn.q_norm"), q, d, i);
      if (own_kv) k = QkNorm(Cat(p, "attn.k_norm"), k, d, i);
    }
    if (a.rope && l.rope) {
      if (own_kv) {
        std::tie(q, k) = Rope(Cat(p, "attn.rope"), q, k);
      } else {
        const TensorId qr = Act(Cat(p, "attn.rope.q"), g_.tensors[q].shape);
        Node(Cat(p, "attn.rope"), OpKind::kRoPE, {q}, {qr});
        q = qr;
      }
    }
    const Expr len = CacheLength(l.window);
    const TensorId kc = State(Cat(p, "attn.k_cache"), {seqs_, len, C(kv_heads), C(d)}, recipe_.kv);
    const TensorId vc = State(Cat(p, "attn.v_cache"), {seqs_, len, C(kv_heads), C(dv)}, recipe_.kv);
    const uint64_t per_token = BytesWithoutTensorScale(recipe_.kv, {1, 1, kv_heads, d});
    const uint64_t v_per_token = BytesWithoutTensorScale(recipe_.kv, {1, 1, kv_heads, dv});
    std::vector<TensorId> ins{q, kc, vc};
    if (own_kv) {
      out_.kv_caches.push_back({kc, i, window, per_token});
      out_.kv_caches.push_back({vc, i, window, v_per_token});
      ins.push_back(k);
      ins.push_back(v);
    }
    if (a.sinks || l.sinks) {
      ins.push_back(Weight(Cat(p, "attn.sinks"), {C(heads)}, {WeightRole::kVector, i, heads}));
    }
    const bool gated_later = a.output_gate || a.gate_proj != GateProj::kNone;
    const Format out_format = gated_later ? recipe_.compute : recipe_.gemm_input;
    TensorId o = Act(Cat(p, "attn.attention.out"), {n_, C(oo)}, out_format);
    Attrs attrs{{"q_heads", heads}, {"head_dim", d}};
    if (dv != d) attrs.emplace_back("v_head_dim", dv);
    if (l.window > 0) attrs.emplace_back("window", l.window);
    if (l.window == 0 && l.chunk > 0) attrs.emplace_back("chunk", l.chunk);
    if (l.sparse && spec_.indexer.heads > 0 && spec_.indexer.block > 0) {
      // MiniMax Sparse Attention: each KV head's group attends its topk blocks of B tokens.
      ins.push_back(Indexer(p, i, x, x));
      attrs.emplace_back("topk", spec_.indexer.topk * spec_.indexer.block);
    }
    Node(Cat(p, "attn.attention"), OpKind::kPagedAttention, std::move(ins), {o}, std::move(attrs));
    if (a.output_gate) {
      const TensorId gated = Act(Cat(p, "attn.output_gate.out"), {n_, C(oo)}, recipe_.gemm_input);
      Node(Cat(p, "attn.output_gate"), OpKind::kMul, {o, gate}, {gated}, {}, "SigmoidGate");
      o = gated;
    }
    if (a.gate_proj != GateProj::kNone) o = ProjectedGate(p, i, x, o, heads, oo);
    return Linear(Cat(p, "attn.o_proj"), o, spec_.hidden, WeightRole::kAttnOut, i, a.o_bias,
                  recipe_.compute);
  }

  // Laguna's output gate (AttentionSpec::gate_proj): g = softplus(x · W_gᵀ), W_g [G, hidden]
  // with G = heads (per head) or heads · d_v (per element), and o ⊙ g, a per-head gate
  // broadcast over the head's d_v elements. Per token: g_proj 2 · hidden · G FLOPs, the gate
  // heads · d_v (one multiply per output element; the G softplus evaluations, fused into the
  // same kernel, are not counted). W_g is built unquantized, as engines build it (SGLang's
  // g_proj takes no quant_config; the checkpoints' quantization ignores it): the router role.
  TensorId ProjectedGate(const std::string& p, int64_t i, TensorId x, TensorId o, int64_t heads,
                         int64_t width) {
    const int64_t g_rows = spec_.attn.gate_proj == GateProj::kPerHead ? heads : width;
    const TensorId g = Linear(Cat(p, "attn.g_proj"), x, g_rows, WeightRole::kRouter, i, false,
                              recipe_.compute);
    const TensorId gated = Act(Cat(p, "attn.output_gate.out"), {n_, C(width)}, recipe_.gemm_input);
    Node(Cat(p, "attn.output_gate"), OpKind::kMul, {o, g}, {gated}, {}, "SoftplusGate");
    return gated;
  }

  // Rotary embedding of q and k in one kernel (cos/sin computed, no table read).
  std::pair<TensorId, TensorId> Rope(std::string name, TensorId q, TensorId k,
                                     const char* k_out_suffix = ".k") {
    const TensorId qr = Act(Cat(name, ".q"), g_.tensors[q].shape);
    const TensorId kr = Act(Cat(name, k_out_suffix), g_.tensors[k].shape);
    Node(std::move(name), OpKind::kRoPE, {q, k}, {qr, kr});
    return {qr, kr};
  }

  // A sparse-attention indexer (IndexerSpec): index queries and one index key per token, the
  // key through RoPE and cached like the KV cache (counted in KV per token); the LightningIndexer
  // op scores every cached token and keeps the top k.
  //  * DSA (DeepseekV32 / GlmMoeDsa Indexer): queries from the q latent (wq_b), the key (wk)
  //    through a LayerNorm, per-head weights (weights_proj); k tokens for all heads. A layer
  //    that shares its indexer reuses the indices of the last layer that ran one.
  //  * MSA (MiniMax-M3, block B): queries (index_q_proj) and key (index_k_proj) from the hidden
  //    state, each through a per-head RMSNorm, no head weights; each head keeps its own k
  //    blocks: indices [n, heads·k].
  TensorId Indexer(const std::string& p, int64_t i, TensorId x, TensorId q_source) {
    const IndexerSpec& s = spec_.indexer;
    const bool blocks = s.block > 0;
    if (spec_.layers[i].indexer_shared && last_indices_) return *last_indices_;
    const std::string q = Cat(p, "attn.indexer.");
    TensorId qi = Linear(Cat(q, blocks ? "q_proj" : "wq_b"), q_source, s.heads * s.head_dim,
                         WeightRole::kOtherMatrix, i, false, recipe_.compute);
    TensorId ki = Linear(Cat(q, blocks ? "k_proj" : "wk"), x, s.head_dim, WeightRole::kOtherMatrix,
                         i, false, recipe_.compute);
    if (blocks) {
      qi = Norm(Cat(q, "q_norm"), qi, s.head_dim, recipe_.compute, i);
      ki = Norm(Cat(q, "k_norm"), ki, s.head_dim, recipe_.compute, i);
    } else {
      ki = NormOf(NormKind::kLayerNorm, Cat(q, "k_norm"), ki, s.head_dim, recipe_.compute, i);
    }
    const auto [qr, kr] = Rope(Cat(q, "rope"), qi, ki);
    std::vector<TensorId> ins{qr};
    if (!blocks) {
      ins.push_back(Linear(Cat(q, "weights_proj"), x, s.heads, WeightRole::kOtherMatrix, i, false,
                           Format::kF32));
    }
    const TensorId cache = State(Cat(q, "k_cache"), {seqs_, ctx_, C(1), C(s.head_dim)}, recipe_.kv);
    out_.kv_caches.push_back(
        {cache, i, 0, BytesWithoutTensorScale(recipe_.kv, {1, 1, 1, s.head_dim})});
    ins.push_back(cache);
    ins.push_back(kr);
    Attrs attrs{{"heads", s.heads}, {"head_dim", s.head_dim}, {"topk", s.topk}};
    if (blocks) attrs.emplace_back("block", s.block);
    const TensorId indices =
        Act(Cat(q, "topk.ids"), {n_, C(blocks ? s.heads * s.topk : s.topk)}, Format::kInt32);
    Node(Cat(q, "score"), OpKind::kLightningIndexer, std::move(ins), {indices}, std::move(attrs));
    last_indices_ = indices;
    return indices;
  }

  // Multi-head latent attention (DeepSeek-V3): one latent cache row per token; with DSA
  // (DeepSeek-V3.2, GLM-5) the attention sees only the index_topk keys the indexer selects.
  TensorId Mla(const std::string& p, int64_t i, TensorId x) {
    const MlaSpec& m = spec_.mla;
    const int64_t heads = spec_.attn.heads;
    const int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
    const int64_t latent = m.kv_lora_rank + m.qk_rope_head_dim;
    TensorId q, q_latent = x;
    if (m.q_lora_rank > 0) {
      TensorId qa = Linear(Cat(p, "attn.q_a_proj"), x, m.q_lora_rank, WeightRole::kOtherMatrix, i,
                           spec_.attn.qkv_bias, recipe_.compute);
      MarkGemmGroup(kMlaDownProjections);
      qa = Norm(Cat(p, "attn.q_a_norm"), qa, m.q_lora_rank, recipe_.gemm_input, i);
      q_latent = qa;
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
    if (m.q_lora_rank > 0) MarkGemmGroup(kMlaDownProjections);
    const TensorId kva_n = Norm(Cat(p, "attn.kv_a_norm"), kva, m.kv_lora_rank, recipe_.compute, i);
    const auto [q_r, latent_new] = Rope(Cat(p, "attn.rope"), q, kva_n, ".latent_new");
    const TensorId cache =
        State(Cat(p, "attn.latent_cache"), {seqs_, ctx_, C(1), C(latent)}, recipe_.kv);
    out_.kv_caches.push_back({cache, i, 0, BytesWithoutTensorScale(recipe_.kv, {1, 1, 1, latent})});
    const TensorId kv_b =
        Weight(Cat(p, "attn.kv_b_proj.weight"),
               {C(heads * (m.qk_nope_head_dim + m.v_head_dim)), C(m.kv_lora_rank)},
               {WeightRole::kAttnKvB, i, m.kv_lora_rank});
    std::vector<TensorId> ins{q_r, cache, latent_new, kv_b};
    Attrs attrs{{"q_heads", heads},
                {"kv_lora_rank", m.kv_lora_rank},
                {"qk_rope_head_dim", m.qk_rope_head_dim},
                {"qk_nope_head_dim", m.qk_nope_head_dim},
                {"v_head_dim", m.v_head_dim}};
    if (spec_.layers[i].sparse && spec_.indexer.heads > 0) {
      ins.push_back(Indexer(p, i, x, q_latent));
      attrs.emplace_back("topk", spec_.indexer.topk);
    }
    const TensorId o = Act(Cat(p, "attn.attention.out"), {n_, C(heads * m.v_head_dim)}, recipe_.gemm_input);
    Node(Cat(p, "attn.attention"), OpKind::kPagedAttention, std::move(ins), {o}, std::move(attrs));
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
    const TensorId normed =
        NormOf(NormKind::kRms, Cat(q, "norm"), core, s.value_head_dim, recipe_.compute, i);
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
    const TensorId normed =
        s.gated_norm ? NormOf(NormKind::kRms, Cat(q, "norm"), y, s.inner(), recipe_.compute, i) : y;
    const TensorId gated = Act(Cat(q, "norm_gate.out"), {n_, C(s.inner())}, recipe_.gemm_input);
    Node(Cat(q, "norm_gate"), OpKind::kMul, {normed, z}, {gated}, {},
         s.gated_norm ? "RMSNormGated" : "SiluGate");
    return Linear(Cat(q, "out_proj"), gated, spec_.hidden, WeightRole::kOtherMatrix, i, s.proj_bias,
                  recipe_.compute);
  }

  // Mamba (selective scan; MambaMixer, JambaMambaMixer): in_proj -> (x, z), causal conv on x,
  // x_proj -> (dt, B, C) (Jamba: an RMSNorm on each), dt_proj (with bias) -> dt per channel,
  // the scan with state [seqs, inner, state_size] and A_log [inner, state_size], D, gate by
  // silu(z), out_proj.
  TensorId Mamba1(const std::string& p, int64_t i, TensorId x) {
    const Mamba1Spec& s = spec_.mamba1;
    const std::string q = Cat(p, "mamba.");
    const TensorId xz = Linear(Cat(q, "in_proj"), x, 2 * s.inner, WeightRole::kOtherMatrix, i,
                               s.proj_bias, recipe_.compute);
    const TensorId xs = Act(Cat(q, "x"), {n_, C(s.inner)});
    const TensorId z = Act(Cat(q, "z"), {n_, C(s.inner)});
    Node(Cat(q, "split_in_proj"), OpKind::kSplit, {xz}, {xs, z}, {{"layout", std::string("contiguous")}});
    const TensorId conv = CausalConv(Cat(q, "conv1d"), i, xs, s.inner, s.conv_kernel, s.conv_bias);
    const TensorId dbc = Linear(Cat(q, "x_proj"), conv, s.dt_rank + 2 * s.state_size,
                                WeightRole::kOtherMatrix, i, false, recipe_.compute);
    TensorId dt = Act(Cat(q, "dt_low_rank"), {n_, C(s.dt_rank)});
    TensorId b = Act(Cat(q, "B"), {n_, C(s.state_size)});
    TensorId c = Act(Cat(q, "C"), {n_, C(s.state_size)});
    Node(Cat(q, "split_x_proj"), OpKind::kSplit, {dbc}, {dt, b, c}, {{"layout", std::string("contiguous")}});
    if (s.bcdt_norms) {
      dt = NormOf(NormKind::kRms, Cat(q, "dt_layernorm"), dt, s.dt_rank, recipe_.compute, i);
      b = NormOf(NormKind::kRms, Cat(q, "b_layernorm"), b, s.state_size, recipe_.compute, i);
      c = NormOf(NormKind::kRms, Cat(q, "c_layernorm"), c, s.state_size, recipe_.compute, i);
    }
    const TensorId delta = Linear(Cat(q, "dt_proj"), dt, s.inner, WeightRole::kOtherMatrix, i, true,
                                  recipe_.compute);
    const TensorId state = State(Cat(q, "ssm_state"), {seqs_, C(s.inner), C(s.state_size)}, recipe_.state);
    out_.states.push_back(
        {state, i, BytesWithoutTensorScale(recipe_.state, {1, s.inner, s.state_size})});
    const TensorId a_log = Weight(Cat(q, "A_log"), {C(s.inner), C(s.state_size)},
                                  {WeightRole::kVector, i, s.state_size});
    const TensorId y = Act(Cat(q, "ssm.out"), {n_, C(s.inner)});
    Node(Cat(q, "ssm"), OpKind::kSsmUpdate, {conv, state, delta, b, c, a_log, Vector(Cat(q, "D"), i, s.inner)},
         {y, state}, {}, "SelectiveScan");
    const TensorId gated = Act(Cat(q, "gate.out"), {n_, C(s.inner)}, recipe_.gemm_input);
    Node(Cat(q, "gate"), OpKind::kMul, {y, z}, {gated}, {}, "SiluGate");
    return Linear(Cat(q, "out_proj"), gated, spec_.hidden, WeightRole::kOtherMatrix, i, s.proj_bias,
                  recipe_.compute);
  }

  // Kimi Delta Attention (Kimi-Linear KimiDeltaAttention): q, k, v projections with short
  // convolutions, a low-rank forget gate (f_a, f_b) and beta (b_proj), the gated delta rule
  // with per-channel decay over state [seqs, heads, head_dim, head_dim] (KdaRecurrence), a
  // low-rank output gate (g_a, g_b) into a gated RMSNorm, o_proj.
  TensorId Kda(const std::string& p, int64_t i, TensorId x) {
    const KdaSpec& s = spec_.kda;
    const std::string q = Cat(p, "kda.");
    const int64_t width = s.heads * s.head_dim;
    const TensorId qkv = Linear(Cat(q, "qkv_proj"), x, 3 * width, WeightRole::kOtherMatrix, i,
                                false, recipe_.compute);
    const TensorId conv = CausalConv(Cat(q, "conv1d"), i, qkv, 3 * width, s.conv_kernel, false);
    const TensorId f_low = Linear(Cat(q, "f_a_proj"), x, s.head_dim, WeightRole::kOtherMatrix, i,
                                  false, recipe_.compute);
    const TensorId decay = Linear(Cat(q, "f_b_proj"), f_low, width, WeightRole::kOtherMatrix, i,
                                  false, recipe_.compute);
    const TensorId beta = Linear(Cat(q, "b_proj"), x, s.heads, WeightRole::kOtherMatrix, i, false,
                                 recipe_.compute);
    const TensorId gates = Act(Cat(q, "gates.out"), {n_, C(width + s.heads)}, Format::kF32);
    Node(Cat(q, "gates"), OpKind::kSigmoid,
         {decay, beta, Vector(Cat(q, "A_log"), i, s.heads), Vector(Cat(q, "dt_bias"), i, width)},
         {gates}, {}, "KdaGates");
    const TensorId state = State(Cat(q, "recurrent_state"),
                                 {seqs_, C(s.heads), C(s.head_dim), C(s.head_dim)}, recipe_.state);
    out_.states.push_back(
        {state, i, BytesWithoutTensorScale(recipe_.state, {1, s.heads, s.head_dim, s.head_dim})});
    const TensorId core = Act(Cat(q, "delta_rule.out"), {n_, C(width)});
    Node(Cat(q, "delta_rule"), OpKind::kKdaRecurrence, {conv, state, gates}, {core, state});
    const TensorId g_low = Linear(Cat(q, "g_a_proj"), x, s.head_dim, WeightRole::kOtherMatrix, i,
                                  false, recipe_.compute);
    const TensorId g = Linear(Cat(q, "g_b_proj"), g_low, width, WeightRole::kOtherMatrix, i, false,
                              recipe_.compute);
    const TensorId normed = NormOf(NormKind::kRms, Cat(q, "o_norm"), core, s.head_dim, recipe_.compute, i);
    const TensorId gated = Act(Cat(q, "norm_gate.out"), {n_, C(width)}, recipe_.gemm_input);
    Node(Cat(q, "norm_gate"), OpKind::kMul, {normed, g}, {gated}, {}, "RMSNormGated");
    return Linear(Cat(q, "o_proj"), gated, spec_.hidden, WeightRole::kOtherMatrix, i, false,
                  recipe_.compute);
  }

  // The MLP's activation over [rows, 2·width] (gated) or [rows, width] (squared ReLU, GELU).
  TensorId Activate(std::string name, TensorId x, Expr rows, int64_t width, Activation act,
                    Attrs attrs = {}) {
    const TensorId y = Act(Cat(name, ".out"), {std::move(rows), C(width)}, recipe_.gemm_input);
    switch (act) {
      case Activation::kSiluGated:
        Node(std::move(name), OpKind::kSiluMul, {x}, {y}, std::move(attrs));
        break;
      case Activation::kGeluGated:
        Node(std::move(name), OpKind::kGeluMul, {x}, {y}, std::move(attrs));
        break;
      case Activation::kRelu2:
        Node(std::move(name), OpKind::kRelu, {x}, {y}, std::move(attrs), "relu2");
        break;
      case Activation::kGelu:
        Node(std::move(name), OpKind::kGelu, {x}, {y}, std::move(attrs));
        break;
    }
    return y;
  }

  // Dense MLP: gate_up (fused, as engines run it) + activation + down, or up + activation
  // (squared ReLU, GELU) + down.
  TensorId Mlp(const std::string& p, int64_t i, TensorId x, int64_t width, Activation act,
               bool bias) {
    const bool gated = IsGated(act);
    const TensorId up = gated ? Linear(Cat(p, "gate_up_proj"), x, 2 * width, WeightRole::kFfnGate, i,
                                       bias, recipe_.compute)
                              : Linear(Cat(p, "up_proj"), x, width, WeightRole::kFfnUp, i, bias,
                                       recipe_.compute);
    const TensorId a = Activate(Cat(p, "act"), up, n_, width, act);
    return Linear(Cat(p, "down_proj"), a, spec_.hidden, WeightRole::kFfnDown, i, bias, recipe_.compute);
  }

  // The attribute naming the part of an engine's fused MoE call a node is (ir::kMoePartAttr).
  static Attrs MoePart(const char* part) {
    return {{std::string(ir::kMoePartAttr), ir::AttrValue(std::string(part))}};
  }

  // Router + routed experts (+ shared experts). Latent MoE (moe.latent > 0, Nemotron-3):
  // fc1_latent_proj takes the token to the latent width before the experts (and before the
  // expert-parallel dispatch, which then moves latent rows), the experts run in that width,
  // fc2_latent_proj takes their sum back to hidden.
  // `router_in`: what the router reads when it is not the experts' input (Gemma-4).
  TensorId Moe(const std::string& p, int64_t i, TensorId x,
               std::optional<TensorId> router_in = std::nullopt) {
    const MoeSpec& m = spec_.moe;
    const Expr e = C(m.experts), k = C(m.top_k);
    const bool gated = IsGated(m.act);
    const int64_t width = m.latent > 0 ? m.latent : spec_.hidden;
    const Expr w_expr = C(width);
    // Router: logits, scores, top-k.
    std::vector<TensorId> rin{router_in.value_or(x),
                              Weight(Cat(p, "router.weight"), {e, hidden_},
                                     {WeightRole::kRouter, i, spec_.hidden})};
    if (m.router_bias) rin.push_back(Vector(Cat(p, "router.bias"), i, m.experts));
    if (m.router_norm) rin.push_back(Vector(Cat(p, "router.per_expert_scale"), i, m.experts));
    const TensorId logits = Act(Cat(p, "router.out"), {n_, e}, Format::kF32);
    Node(Cat(p, "router"), OpKind::kRouter, std::move(rin), {logits});
    const TensorId scores = Act(Cat(p, "scores.out"), {n_, e}, Format::kF32);
    std::vector<TensorId> sin{logits};
    if (m.score_correction_bias && !spec_.layers[i].hash_routed) {
      sin.push_back(Weight(Cat(p, "e_score_correction_bias"), {e},
                           {WeightRole::kScoreBias, i, m.experts}));
    }
    Node(Cat(p, "scores"), m.sigmoid_scores ? OpKind::kSigmoid : OpKind::kSoftmax, std::move(sin),
         {scores}, MoePart(ir::kMoePartRouting));
    const TensorId topk_w = Act(Cat(p, "topk.weights"), {n_, k}, Format::kF32);
    const TensorId topk_i = Act(Cat(p, "topk.ids"), {n_, k}, Format::kInt32);
    Attrs topk_attrs = MoePart(ir::kMoePartRouting);
    topk_attrs.emplace_back("k", m.top_k);
    Node(Cat(p, "topk"), OpKind::kTopK, {scores}, {topk_w, topk_i}, std::move(topk_attrs));

    // Routed experts over the n·top_k (token, expert) rows. Expert parallelism: the device
    // runs the rows routed to its experts from the dp_attention·n tokens of its group,
    // ceil(dp_attention·n·top_k / ep) under uniform routing; it receives and sends as many
    // when the tokens are spread over the group (`dispatch`), and picks them from its own
    // copy of the tokens when every device of the group holds them all.
    const bool ep = shard_.ep > 1;
    const bool dispatch = DispatchesExperts(shard_);
    if (expert_rows_.IsConstant()) {
      expert_rows_ = ep ? Expr::CeilDiv(Expr::Mul(n_, C(shard_.dp_attention * m.top_k)),
                                        C(shard_.ep))
                        : Expr::Mul(n_, k);
    }
    const Expr& rows = expert_rows_;
    const int64_t gu_out = gated ? 2 * m.intermediate : m.intermediate;
    Attrs expert_attrs{{"top_k", m.top_k}};
    TensorId routed_in = x;
    if (m.latent > 0) {
      routed_in = Linear(Cat(p, "fc1_latent_proj"), x, m.latent, WeightRole::kOtherMatrix, i,
                         spec_.mlp.bias, recipe_.gemm_input);
    }
    // The layer waits for the device that reads the most experts (cost/expert_balance.h).
    if (ep) {
      expert_attrs.emplace_back("experts_total", full_.moe.experts);
      expert_attrs.emplace_back("busiest_of", shard_.ep);
    }
    if (dispatch) {
      const TensorId local_in = routed_in;
      routed_in = Act(Cat(p, "experts.dispatch.out"), {rows, w_expr}, g_.tensors[local_in].format);
      Node(Cat(p, "experts.dispatch"), OpKind::kAllToAll, {local_in, topk_i}, {routed_in},
           {{"group_size", shard_.moe_group}, {"scope", shard_.moe_scope}});
    } else if (ep) {
      // Every device of the group holds every token: it gathers the rows routed to its own
      // experts from its copy (reads and writes those rows, as the engines' permute kernels).
      const TensorId local_in = routed_in;
      routed_in = Act(Cat(p, "experts.gather.out"), {rows, w_expr}, g_.tensors[local_in].format);
      Node(Cat(p, "experts.gather"), OpKind::kGather, {local_in, topk_i}, {routed_in},
           MoePart(ir::kMoePartPermute));
    }
    std::vector<TensorId> gin{
        routed_in,
        Weight(Cat(p, "experts.gate_up_proj.weight"), {e, C(gu_out), w_expr},
               {gated ? WeightRole::kExpertGate : WeightRole::kExpertUp, i, width},
               WeightGroup::kRoutedExpert, m.experts),
        topk_i};
    if (m.expert_bias) {
      gin.push_back(Weight(Cat(p, "experts.gate_up_proj.bias"), {e, C(gu_out)},
                           {WeightRole::kVector, i, gu_out}, WeightGroup::kRoutedExpert,
                           m.experts));
    }
    const TensorId gu = Act(Cat(p, "experts.gate_up.out"), {rows, C(gu_out)});
    Node(Cat(p, "experts.gate_up"), OpKind::kExpertGateUp, std::move(gin), {gu}, expert_attrs);
    const TensorId a = Activate(Cat(p, "experts.act"), gu, rows, m.intermediate, m.act,
                                MoePart(ir::kMoePartActivation));
    std::vector<TensorId> din{
        a,
        Weight(Cat(p, "experts.down_proj.weight"), {e, w_expr, C(m.intermediate)},
               {WeightRole::kExpertDown, i, m.intermediate}, WeightGroup::kRoutedExpert,
               m.experts),
        topk_i};
    if (m.expert_bias) {
      din.push_back(Weight(Cat(p, "experts.down_proj.bias"), {e, w_expr},
                           {WeightRole::kVector, i, width}, WeightGroup::kRoutedExpert,
                           m.experts));
    }
    const TensorId down = Act(Cat(p, "experts.down.out"), {rows, w_expr});
    Node(Cat(p, "experts.down"), OpKind::kExpertDown, std::move(din), {down}, std::move(expert_attrs));
    // Dispatched expert parallelism: the expert outputs go back to the devices that own their
    // tokens (each tensor-parallel device owns ceil(n/tp) of its replica's n tokens; each
    // expert's expert_tp devices each send a partial sum). Without dispatch the device sums its
    // own experts' outputs for all n tokens: a partial sum the all-reduce below completes.
    TensorId expert_out = down;
    Expr own = n_;
    if (dispatch) {
      if (shard_.tp > 1) own = Expr::CeilDiv(n_, C(shard_.tp));
      expert_out = Act(Cat(p, "experts.combine_all_to_all.out"),
                       {Expr::Mul(own, C(m.top_k * shard_.expert_tp)), w_expr});
      Node(Cat(p, "experts.combine_all_to_all"), OpKind::kAllToAll, {down}, {expert_out},
           {{"group_size", shard_.moe_group}, {"scope", shard_.moe_scope}});
    }
    // Weighted sum of each token's top_k expert outputs.
    TensorId routed = Act(Cat(p, "experts.combine.out"), {own, w_expr},
                          m.latent > 0 ? recipe_.gemm_input : recipe_.compute);
    Node(Cat(p, "experts.combine"), OpKind::kReduceSum, {expert_out, topk_w}, {routed},
         MoePart(ir::kMoePartCombine));
    if (m.latent > 0) {
      routed = Linear(Cat(p, "fc2_latent_proj"), routed, spec_.hidden, WeightRole::kOtherMatrix, i,
                      spec_.mlp.bias, recipe_.compute);
    }
    if (m.shared_intermediate == 0) {
      if (!ep) return routed;
      if (!dispatch) return TpAllReduce(Cat(p, "moe_all_reduce"), routed);
      if (shard_.tp == 1) return routed;
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
    // With expert parallelism the tensor-parallel devices' routed outputs (disjoint rows after
    // a combine, partial sums without one) and partial shared outputs sum to the layer's
    // output in one all-reduce.
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
  std::optional<TensorId> last_indices_;                   // DSA: the last indexer's top-k
  std::optional<TensorId> eagle_embeds_;  // EAGLE-3: the embeddings the first layer reads
  std::vector<TensorId> per_layer_inputs_;  // Gemma-4 PLE: each layer's P-wide input
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
    l.per_layer_vocab = (s.per_layer_vocab + t - 1) / t;  // Gemma-4 PLE table, as embed_tokens
    l.eagle3.draft_vocab = (s.eagle3.draft_vocab + t - 1) / t;
    l.kda.heads = s.kda.heads / t;
    // MiniMax Sparse Attention's index heads follow the KV heads (replicated below t).
    l.indexer.heads = s.indexer.block > 0 && s.indexer.heads < t ? 1 : s.indexer.heads / t;
    for (LayerSpec& layer : l.layers) {  // per-layer overrides split like the model's
      layer.heads /= t;
      layer.kv_heads = layer.kv_heads >= t ? layer.kv_heads / t : (layer.kv_heads > 0 ? 1 : 0);
      layer.ffn_width /= t;
    }
  }
  if (d.ep > 1) {
    l.moe.experts = s.moe.experts / d.ep;
    l.moe.intermediate = s.moe.intermediate / d.expert_tp;
  } else {
    l.moe.intermediate = s.moe.intermediate / t;
  }
  return l;
}

// Elements of every weight tensor a step graph holds.
uint64_t WeightElements(const StepGraph& g) {
  uint64_t total = 0;
  for (const WeightEntry& w : g.weights) {
    uint64_t elems = 1;
    for (const Expr& d : g.graph.tensors[w.tensor].shape) {
      elems *= static_cast<uint64_t>(d.IsConstant() ? d.constant() : 0);
    }
    total += elems;
  }
  return total;
}

// The MTP modules' parameters (StepGraph::params_mtp): one module's blocks are built as a
// pipeline stage in the middle of the model (no embedding, no LM head) and counted.
Result<uint64_t> MtpParams(const ModelSpec& spec, const Recipe& recipe) {
  const MtpSpec& mtp = spec.mtp;
  if (mtp.modules == 0 || mtp.blocks.empty()) return 0;
  ModelSpec m = spec;
  m.layers = mtp.blocks;
  m.mtp = {};
  DeviceShard body;
  body.first_stage = body.last_stage = false;
  StepGraph g;
  Builder builder(m, m, body, recipe, g);
  if (auto ok = builder.Build(); !ok) return std::unexpected(ok.error());
  const auto h = static_cast<uint64_t>(spec.hidden);
  uint64_t module = WeightElements(g) + 2 * h * h + 3 * h;  // eh_proj, enorm, hnorm, final norm
  if (mtp.own_embeddings) {
    module += static_cast<uint64_t>(spec.vocab) * h * (spec.tie_embeddings ? 1 : 2);
  }
  return static_cast<uint64_t>(mtp.modules) * module;
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
  auto mtp = MtpParams(spec, recipe);
  if (!mtp) return std::unexpected(mtp.error());
  out.params_mtp = *mtp;
  return out;
}

}  // namespace opscope::import::hf
