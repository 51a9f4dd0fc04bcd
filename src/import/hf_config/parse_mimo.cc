// The MiMo-V2-Flash reader (model_type mimo_v2_flash). Semantics from XiaomiMiMo's published
// modelling code as carried by transformers (models/mimo_v2_flash) and SGLang (models/mimo_v2):
//  * hybrid_layer_pattern: one flag per layer, 1 = sliding-window attention over
//    sliding_window keys (= sliding_window_size), 0 = full attention;
//  * the full layers take num_attention_heads / num_key_value_heads / head_dim / v_head_dim,
//    the sliding layers swa_num_attention_heads / swa_num_key_value_heads / swa_head_dim /
//    swa_v_head_dim (MiMoV2Attention picks one set by the flag);
//  * q and k are head_dim wide, v (and so the V cache and o_proj's input) v_head_dim wide;
//  * add_swa_attention_sink_bias / add_full_attention_sink_bias: one sink logit per query head
//    in the sliding / full layers (joins the softmax's denominator only);
//  * o_proj has no bias; q/k/v follow attention_bias;
//  * moe_layer_freq: one flag per layer, 1 = MoE (n_routed_experts of moe_intermediate_size,
//    top num_experts_per_tok, sigmoid scores with e_score_correction_bias, no shared expert),
//    0 = a dense MLP of intermediate_size.
// Fields with no shape (attention_value_scale: V is multiplied by a constant before attention;
// swa_rope_theta; layernorm_epsilon; attention_projection_layout, split or fused q/k/v
// storage) are read and named here. attention_chunk_size,
// present in the release config, is not read by the modelling code (the sliding layers use
// sliding_window); it is read and listed in `assumptions`, never costed as chunked attention.
#include <string>

#include "import/hf_config/config_reader.h"

namespace opscope::import::hf {

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

// The head shape of one kind of layer: heads, KV heads (dividing heads), q/k and v widths.
struct HeadShape {
  int64_t heads = 0, kv_heads = 0, head_dim = 0, v_head_dim = 0;
};

Result<HeadShape> ReadSlidingShape(const Reader& r, const HeadShape& full) {
  HeadShape s;
  OPSCOPE_TRY(heads, r.IntOr("swa_num_attention_heads", full.heads));
  OPSCOPE_TRY(kv, r.IntOr("swa_num_key_value_heads", full.kv_heads));
  OPSCOPE_TRY(d, r.IntOr("swa_head_dim", full.head_dim));
  OPSCOPE_TRY(dv, r.IntOr("swa_v_head_dim", d));
  if (kv > heads || heads % kv != 0) {
    return r.Fail("swa_num_key_value_heads",
                  Str(kv) + " does not divide swa_num_attention_heads " + Str(heads));
  }
  s = {heads, kv, d, dv};
  return s;
}

// The numeric fields of the attention that change no shape.
Result<void> ReadAttentionNumerics(const Reader& r) {
  OPSCOPE_CHECK(r.object().Number("attention_value_scale"));  // V *= scale: no shape, no GEMM
  OPSCOPE_CHECK(r.object().Number("swa_rope_theta"));         // RoPE base of the sliding layers
  OPSCOPE_CHECK(r.object().Number("layernorm_epsilon"));      // RMSNorm epsilon
  // How the checkpoint stores q/k/v ("split" q_proj / k_proj / v_proj or one "fused_qkv"):
  // the same weights either way, and the step graph runs them as one fused GEMM.
  OPSCOPE_TRY(layout, r.StringOr("attention_projection_layout", "split"));
  if (layout != "split" && layout != "fused_qkv") {
    return r.Fail("attention_projection_layout", "\"" + layout + "\" (expected split or fused_qkv)");
  }
  OPSCOPE_TRY(chunk, r.CountOr("attention_chunk_size", 0));
  if (chunk > 0) {
    r.Note("attention_chunk_size " + Str(chunk) +
           " is not used by MiMo-V2-Flash's modelling code (its sliding layers use "
           "sliding_window); not costed as chunked attention");
  }
  return {};
}

// hybrid_layer_pattern -> the sliding layers, with their window and head shape.
Result<void> PlaceSlidingLayers(const Reader& r, const HeadShape& full) {
  ModelSpec& spec = r.spec();
  const int64_t layers = spec.num_layers();
  OPSCOPE_TRY(pattern, r.IntList("hybrid_layer_pattern"));
  if (!pattern) return r.Fail("hybrid_layer_pattern", "is required (one 0 / 1 per layer)");
  if (static_cast<int64_t>(pattern->size()) != layers) {
    return r.Fail("hybrid_layer_pattern", "has " + std::to_string(pattern->size()) +
                                              " entries, num_hidden_layers is " + Str(layers));
  }
  OPSCOPE_TRY(window, r.WindowOr("sliding_window", 0));
  OPSCOPE_TRY(sliding, ReadSlidingShape(r, full));
  OPSCOPE_TRY(swa_sinks, r.BoolOr("add_swa_attention_sink_bias", false));
  OPSCOPE_TRY(full_sinks, r.BoolOr("add_full_attention_sink_bias", false));
  for (int64_t i = 0; i < layers; ++i) {
    const int64_t flag = (*pattern)[static_cast<size_t>(i)];
    if (flag != 0 && flag != 1) {
      return r.Fail("hybrid_layer_pattern", "item " + Str(i) + " is " + Str(flag) +
                                                " (expected 0: full attention, or 1: sliding window)");
    }
    LayerSpec& l = spec.layers[static_cast<size_t>(i)];
    l.sinks = flag == 1 ? swa_sinks : full_sinks;
    if (flag == 0) continue;
    if (window <= 0) {
      return r.Fail("sliding_window", "is absent or null, but layer " + Str(i) +
                                          " is a sliding-window layer (hybrid_layer_pattern)");
    }
    l.window = window;
    l.heads = sliding.heads;
    l.kv_heads = sliding.kv_heads;
    l.head_dim = sliding.head_dim;
    l.v_head_dim = sliding.v_head_dim;
  }
  return {};
}

}  // namespace

Result<void> ReadMimoV2Flash(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_CHECK(ReadAttentionShape(r));  // heads, KV heads, head_dim, attention_bias
  spec.attn.o_bias = false;              // MiMoV2Attention: o_proj has no bias
  OPSCOPE_TRY(dv, r.IntOr("v_head_dim", spec.attn.head_dim));
  spec.attn.v_head_dim = dv;
  const HeadShape full{spec.attn.heads, spec.attn.kv_heads, spec.attn.head_dim, dv};
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kAttention, 0, Ffn::kDense});
  OPSCOPE_CHECK(PlaceSlidingLayers(r, full));
  OPSCOPE_CHECK(ReadAttentionNumerics(r));
  OPSCOPE_CHECK(ReadMlps(r));
  return ReadMtp(r);
}

}  // namespace opscope::import::hf
