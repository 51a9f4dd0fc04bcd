// The Laguna reader (model_type laguna: poolside's Laguna-XS.2, Laguna-S-2.1). Semantics from
// the published modelling code: transformers' models/laguna (LagunaConfig, LagunaAttention,
// LagunaSparseMoeBlock), with SGLang's models/laguna.py and the checkpoints' remote code
// agreeing. Each field the two released configs hold, and what it does:
//  * num_attention_heads_per_layer: the query heads of each layer (48 on the full-attention
//    layers and 64 / 72 on the sliding ones), over num_key_value_heads (8) KV heads of head_dim
//    (128) in every layer; q_proj and o_proj are heads · head_dim wide. Absent: every layer has
//    num_attention_heads. Each count must be a multiple of the KV heads (GQA groups).
//  * gating: the softplus output gate g = softplus(g_proj(x)), a Linear from the attention's
//    input without bias; true or "per-head" -> g_proj [heads, hidden], one gate per head
//    broadcast over its head_dim; "per-element" -> g_proj [heads · head_dim, hidden]
//    (LagunaAttention.gate_per_head). false is refused: transformers still builds a per-element
//    g_proj for it while other ports build none.
//  * gating_types (Laguna-S-2.1's remote code): the gate kind per layer, "per_head" or
//    "per_element"; it must agree with gating in every layer (the runtimes disagree on which
//    one wins).
//  * layer_types: full_attention or sliding_attention per layer (absent: all full); sliding
//    layers attend over sliding_window (512) keys, HF's inclusive window, and cache that many.
//  * q_norm / k_norm: RMSNorm over head_dim on q and k in every layer (no config field).
//  * mlp_layer_types: dense (an MLP of intermediate_size) or sparse (MoE) per layer (absent:
//    the first layer dense). A sparse layer has num_experts routed experts of
//    moe_intermediate_size (top num_experts_per_tok), one shared expert of
//    shared_expert_intermediate_size (required), and a sigmoid router [num_experts, hidden] with an
//    e_score_correction_bias [num_experts]. The remote code's mlp_only_layers and
//    decoder_sparse_step (MoE where i is not listed and (i + 1) % step == 0) must say the same.
//  * moe_routed_scaling_factor (2.5): the routed experts' sum is multiplied by it before the
//    shared expert's output is added; moe_router_logit_softcapping (0: off): tanh softcap of the
//    router logits; norm_topk_prob: top-k weights renormalised; moe_apply_router_weight_on_input
//    (false): the routing weight scales the expert's input instead of its output. Scalars, no
//    shape.
//  * rope_parameters: per layer type (full_attention: yarn, theta 500000, partial_rotary_factor
//    0.5; sliding_attention: default, theta 10000, factor 1.0), and the top-level
//    partial_rotary_factor (XS.2). No shape: the RoPE node is costed over the whole head_dim of
//    q and k (3 FLOPs per element), so a full layer's rotation of half of each head is
//    overcounted by 3 · (heads + KV heads) · head_dim / 2 FLOPs per token (about 11 thousand,
//    against tens of millions in its projections). Each factor must lie in (0, 1].
//  * use_bidirectional_attention (false): true is refused (not a causal decoder).
#include <algorithm>
#include <string>
#include <vector>

#include "import/hf_config/config_reader.h"

namespace opscope::import::hf {

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

// num_attention_heads_per_layer -> LayerSpec::heads.
Result<void> ReadHeadsPerLayer(const Reader& r) {
  ModelSpec& spec = r.spec();
  const int64_t layers = spec.num_layers();
  OPSCOPE_TRY(heads, r.IntList("num_attention_heads_per_layer"));
  if (!heads) return {};
  if (static_cast<int64_t>(heads->size()) != layers) {
    return r.Fail("num_attention_heads_per_layer", "has " + std::to_string(heads->size()) +
                                                       " entries, num_hidden_layers is " + Str(layers));
  }
  const int64_t kv = spec.attn.kv_heads;
  for (int64_t i = 0; i < layers; ++i) {
    const int64_t h = (*heads)[static_cast<size_t>(i)];
    if (h <= 0 || h % kv != 0) {
      return r.Fail("num_attention_heads_per_layer",
                    "item " + Str(i) + " is " + Str(h) + ", not a positive multiple of "
                    "num_key_value_heads " + Str(kv));
    }
    spec.layers[static_cast<size_t>(i)].heads = h;
  }
  return {};
}

// gating (bool or string) and gating_types (per layer) -> AttentionSpec::gate_proj.
Result<void> ReadGate(const Reader& r) {
  ModelSpec& spec = r.spec();
  GateProj kind = GateProj::kPerHead;  // LagunaConfig: gating = True
  std::string said = "true";
  if (r.object().IsString("gating")) {
    OPSCOPE_TRY(s, r.String("gating"));
    said = "\"" + *s + "\"";
    if (*s == "per-element") {
      kind = GateProj::kPerElement;
    } else if (*s != "per-head") {
      return r.Fail("gating", said + " (expected true, \"per-head\" or \"per-element\")");
    }
  } else {
    OPSCOPE_TRY(on, r.BoolOr("gating", true));
    if (!on) {
      return r.Fail("gating", "false: transformers' LagunaAttention still builds a per-element "
                              "g_proj for it, other ports build no gate; opscope does not guess");
    }
  }
  OPSCOPE_TRY(types, r.LayerList("gating_types", spec.num_layers()));
  for (size_t i = 0; i < types.size(); ++i) {
    const std::string& t = types[i];
    if (t != "per_head" && t != "per_element") {
      return r.Fail("gating_types", "item " + std::to_string(i) + ": \"" + t +
                                        "\" (expected per_head or per_element)");
    }
    if ((t == "per_head") != (kind == GateProj::kPerHead)) {
      return r.Fail("gating_types", "item " + std::to_string(i) + ": \"" + t +
                                        "\" disagrees with gating (" + said + ")");
    }
  }
  spec.attn.gate_proj = kind;
  return {};
}

// A partial_rotary_factor, where present, in (0, 1].
Result<void> CheckRotaryFactor(const ConfigObject& o) {
  OPSCOPE_TRY(f, o.Number("partial_rotary_factor"));
  if (f && !(*f > 0 && *f <= 1)) {
    return std::unexpected(o.FieldError("partial_rotary_factor",
                                        std::to_string(*f) + " is not in (0, 1]"));
  }
  return {};
}

// rope_parameters (per layer type) and the top-level partial_rotary_factor: no shape.
Result<void> ReadRope(const Reader& r) {
  OPSCOPE_CHECK(CheckRotaryFactor(r.object()));
  OPSCOPE_TRY(rope, r.object().Object("rope_parameters"));
  if (!rope) return {};
  for (std::string_view type : {"full_attention", "sliding_attention"}) {
    OPSCOPE_TRY(sub, rope->Object(type));
    if (sub) OPSCOPE_CHECK(CheckRotaryFactor(*sub));
  }
  return {};
}

// The remote code's MoE placement (mlp_only_layers, decoder_sparse_step) against the layers'.
Result<void> CheckRemotePlacement(const Reader& r) {
  const ModelSpec& spec = r.spec();
  OPSCOPE_TRY(step, r.IntOr("decoder_sparse_step", 1));
  OPSCOPE_TRY(only, r.IntList("mlp_only_layers"));
  if (!only && !r.Has("decoder_sparse_step")) return {};
  const std::vector<int64_t> dense = only.value_or(std::vector<int64_t>{});
  for (int64_t i = 0; i < spec.num_layers(); ++i) {
    const bool listed = std::find(dense.begin(), dense.end(), i) != dense.end();
    const bool moe = !listed && (i + 1) % step == 0;
    if (moe != (spec.layers[static_cast<size_t>(i)].ffn == Ffn::kMoe)) {
      return r.Fail(only ? "mlp_only_layers" : "decoder_sparse_step",
                    "places layer " + Str(i) + (moe ? " in MoE" : " in a dense MLP") +
                        ", mlp_layer_types does not");
    }
  }
  return {};
}

// The router's and the MoE block's scalars (no shape), and the causal mask.
Result<void> ReadScalars(const Reader& r) {
  OPSCOPE_CHECK(r.object().Number("moe_routed_scaling_factor"));
  OPSCOPE_CHECK(r.object().Number("moe_router_logit_softcapping"));
  OPSCOPE_TRY(on_input, r.BoolOr("moe_apply_router_weight_on_input", false));
  if (on_input) {
    r.Note("moe_apply_router_weight_on_input: the routing weight scales each expert's input, "
           "not its output; the same multiplies, costed as on the output");
  }
  OPSCOPE_TRY(bidirectional, r.BoolOr("use_bidirectional_attention", false));
  if (bidirectional) {
    return r.Fail("use_bidirectional_attention",
                  "true: a bidirectional model is not a decoder opscope costs");
  }
  return {};
}

}  // namespace

Result<void> ReadLaguna(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_CHECK(ReadAttentionShape(r));  // heads, KV heads, head_dim, attention_bias, q/k norms
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kAttention, 0, Ffn::kDense});
  OPSCOPE_TRY(types, r.LayerList("layer_types", layers));
  OPSCOPE_TRY(window, r.WindowOr("sliding_window", r.family().window));
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] != "full_attention" && types[i] != "sliding_attention") {
      return r.Fail("layer_types", "item " + std::to_string(i) + ": \"" + types[i] +
                                       "\" (expected full_attention or sliding_attention)");
    }
  }
  OPSCOPE_CHECK(ApplyLayerTypes(r, types, window, 0));
  OPSCOPE_CHECK(ReadHeadsPerLayer(r));
  OPSCOPE_CHECK(ReadGate(r));
  OPSCOPE_CHECK(ReadRope(r));
  OPSCOPE_CHECK(ReadMlps(r));  // mlp_layer_types (MoePlacement::kMlpTypes), experts, router
  // LagunaSparseMoeBlock always has its shared expert; the class default width (512) is
  // XS.2's, so an MoE config must say it.
  const bool any_moe = std::any_of(spec.layers.begin(), spec.layers.end(),
                                   [](const LayerSpec& l) { return l.ffn == Ffn::kMoe; });
  if (any_moe && spec.moe.shared_intermediate == 0) {
    return r.Fail("shared_expert_intermediate_size",
                  "is absent or 0, but every Laguna MoE layer has a shared expert (its width is "
                  "required)");
  }
  OPSCOPE_CHECK(CheckRemotePlacement(r));
  return ReadScalars(r);
}

}  // namespace opscope::import::hf
