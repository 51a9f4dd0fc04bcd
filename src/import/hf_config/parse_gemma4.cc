// The Gemma 4 reader (model_type gemma4 / gemma4_text; transformers' Gemma4TextConfig and
// modular_gemma4.py). On top of Gemma-3's decoder (sandwich norms, per-head q/k norms, GeGLU,
// tied embedding, layer_types) a Gemma-4 text model has:
//  * global layers of their own shape: head_dim = global_head_dim, and with attention_k_eq_v
//    num_global_key_value_heads heads whose keys double as values (no v_proj);
//  * a weightless RMSNorm over every value head (v_norm);
//  * with enable_moe_block, routed experts (num_experts, top_k_experts, moe_intermediate_size)
//    beside the dense MLP in every layer, with a normed-and-scaled router input and a
//    per-expert output scale (step_graph.cc DenseBesideExperts).
// The small E2B / E4B models add (transformers' Gemma4TextModel / Gemma4TextDecoderLayer):
//  * per-layer embeddings (hidden_size_per_layer_input P, vocab_size_per_layer_input): a table
//    [vocab, layers · P] looked up per token, plus the main embeddings projected to layers · P
//    and normed per P; each layer gates its P-wide slice into a residual branch after the MLP
//    (step_graph.cc PerLayerInput);
//  * KV-sharing layers (num_kv_shared_layers S): the last S layers read the KV of an earlier
//    layer of their kind — no k/v projections (transformers builds none), no cache of their
//    own; with use_double_wide_mlp their MLP is twice intermediate_size.
#include <string>

#include "import/hf_config/config_reader.h"

namespace opscope::import::hf {

namespace {

// The global layers' shape: global_head_dim and, with K = V, num_global_key_value_heads.
Result<void> ReadGlobalLayers(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(global_dim, r.Int("global_head_dim"));
  OPSCOPE_TRY(k_eq_v, r.BoolOr("attention_k_eq_v", false));
  OPSCOPE_TRY(global_kv, r.Int("num_global_key_value_heads"));
  for (LayerSpec& l : spec.layers) {
    if (l.window > 0) continue;  // Gemma4TextAttention: only non-sliding layers change shape
    if (global_dim && *global_dim > 0) l.head_dim = *global_dim;
    if (!k_eq_v) continue;
    l.k_eq_v = true;
    if (global_kv && *global_kv > 0) {
      if (spec.attn.heads % *global_kv != 0) {
        return r.Fail("num_global_key_value_heads",
                      std::to_string(*global_kv) + " does not divide num_attention_heads " +
                          std::to_string(spec.attn.heads));
      }
      l.kv_heads = *global_kv;
    }
  }
  return {};
}

// The MoE block beside the dense MLP (enable_moe_block). The expert width has two names in
// the released configs (moe_intermediate_size; expert_intermediate_size, null when unused).
Result<void> ReadMoeBlock(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(enabled, r.BoolOr("enable_moe_block", false));
  OPSCOPE_TRY(expert_width, r.Int("expert_intermediate_size"));
  if (!enabled) {
    // The 31B's config names the MoE fields with null values: read, nothing to size.
    OPSCOPE_CHECK(r.Int("num_local_experts"));
    OPSCOPE_CHECK(r.Int("num_experts_per_tok"));
    OPSCOPE_CHECK(r.Int("moe_intermediate_size"));
    return {};
  }
  const std::string_view width_key =
      r.Has("moe_intermediate_size") ? "moe_intermediate_size" : "expert_intermediate_size";
  OPSCOPE_CHECK(ReadMoeCounts(r, width_key));
  if (expert_width && *expert_width != spec.moe.intermediate) {
    return r.Fail("expert_intermediate_size",
                  std::to_string(*expert_width) + " disagrees with moe_intermediate_size " +
                      std::to_string(spec.moe.intermediate));
  }
  spec.moe.act = spec.mlp.act;  // Gemma4TextExperts: hidden_activation, gated
  spec.moe.router_norm = true;
  spec.moe.parallel_dense = true;
  for (LayerSpec& l : spec.layers) l.ffn = Ffn::kMoe;
  return {};
}

// What the E2B / E4B models add: per-layer embeddings, KV-sharing layers and their wider MLP
// (Gemma4TextMLP: intermediate_size · 2 where use_double_wide_mlp and the layer shares KV).
Result<void> ReadSmallModelFeatures(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(ple, r.CountOr("hidden_size_per_layer_input", 0));
  OPSCOPE_TRY(ple_vocab, r.CountOr("vocab_size_per_layer_input", spec.vocab));
  if (ple > 0) {
    if (ple_vocab < 1) {
      return r.Fail("vocab_size_per_layer_input", "0, but hidden_size_per_layer_input is " +
                                                      std::to_string(ple));
    }
    spec.per_layer_width = ple;
    spec.per_layer_vocab = ple_vocab;
  }
  const int64_t layers = spec.num_layers();
  OPSCOPE_TRY(shared, r.CountOr("num_kv_shared_layers", 0));
  if (shared >= layers) {
    return r.Fail("num_kv_shared_layers", std::to_string(shared) + " is not below "
                                          "num_hidden_layers " + std::to_string(layers) +
                                          " (the shared layers read an earlier layer's KV)");
  }
  OPSCOPE_TRY(double_wide, r.BoolOr("use_double_wide_mlp", false));
  for (int64_t i = layers - shared; i < layers; ++i) {
    LayerSpec& l = spec.layers[static_cast<size_t>(i)];
    l.kv_shared = true;
    if (double_wide) l.ffn_width = 2 * spec.mlp.intermediate;
  }
  // Text decoding is causal unless every modality attends both ways ("all").
  OPSCOPE_TRY(bidirectional, r.StringOr("use_bidirectional_attention", "vision"));
  if (bidirectional == "all") {
    return r.Fail("use_bidirectional_attention",
                  "\"all\": a bidirectional text model is not a decoder opscope costs");
  }
  return {};
}

}  // namespace

Result<void> ReadGemma4(const Reader& r) {
  if (!r.Has("layer_types")) {
    return r.Fail("layer_types",
                  "is required for a Gemma-4 config (it says which layers are global, and the "
                  "global layers have their own head size)");
  }
  OPSCOPE_CHECK(ReadDecoder(r));
  r.spec().attn.v_norm = true;
  OPSCOPE_CHECK(ReadGlobalLayers(r));
  OPSCOPE_CHECK(ReadSmallModelFeatures(r));
  return ReadMoeBlock(r);
}

}  // namespace opscope::import::hf
