// The reader of DeepSeek-V4 (DeepseekV4Config; model_type deepseek_v4, and deepseek_ref for
// sgl-project's copies). What its new fields mean, from transformers' modeling_deepseek_v4.py:
//  * hc_mult (4): Manifold-Constrained Hyper-Connections. The residual stream is hc_mult
//    parallel copies of the hidden state ([n, hc_mult·hidden]); before each sub-layer
//    (attention, MoE) a learned mix (fn [(2 + hc)·hc, hc·hidden], base, scale; sigmoid, then
//    hc_sinkhorn_iters Sinkhorn normalisations) collapses the streams into one input and
//    afterwards writes the output back into all of them; a final head (hc_fn [hc, hc·hidden])
//    collapses them before the last norm.
//  * compress_ratios (per layer 0, 4 or 128; newer configs: layer_types sliding_attention /
//    compressed_sparse_attention / heavily_compressed_attention with compress_rates): every
//    layer attends over a sliding window (sliding_window, 128) of a single shared K = V head
//    of head_dim 512; CSA layers (4) also keep one pooled entry per 4 tokens (overlapping
//    windows: kv_proj and gate_proj to 2·head_dim) and attend to the index_topk entries a
//    lightning indexer (index_n_heads × index_head_dim, its own pooled keys) selects; HCA layers
//    (128) keep one entry per 128 tokens (kv_proj and gate_proj to head_dim) and attend to all.
//  * o_groups / o_lora_rank: grouped low-rank output projection — the heads' outputs split into
//    o_groups groups, each projected to o_lora_rank (o_a_proj, block-diagonal), then one
//    o_groups·o_lora_rank -> hidden matrix (o_b_proj).
//  * num_hash_layers (3; newer configs: mlp_layer_types hash_moe / moe): the first layers route
//    by a frozen token-id -> expert table (tid2eid, an integer buffer, not a parameter) instead
//    of a learned top-k; their router weight still scores the chosen experts.
//  * expert_dtype ("fp4"): the checkpoint stores the routed experts in FP4 (MXFP4, e2m1 with a
//    ue8m0 scale per 32) beside FP8 (quantization_config) elsewhere.
//  * q_lora_rank, per-head weightless q norm, partial RoPE on qk_rope_head_dim dims, attention
//    sinks per head, sqrtsoftplus router scores with a correction bias, no dense layers.
#include <string>

#include "import/hf_config/config_reader.h"

namespace opscope::import::hf {
namespace {

// expert_dtype (DeepseekV4Config): "fp4" stores the routed experts in FP4 beside the FP8
// quantization_config of the other matrices, which vLLM loads as MXFP4 (e2m1 values, a ue8m0
// scale per 32: its DeepSeek-V4 quantization config picks Mxfp4MoEMethod for expert_dtype
// "fp4"); "fp8" leaves them to the quantization_config. A rule ahead of the checkpoint's others
// gives the routed experts mxfp4 (an hf_quant_config.json, which replaces quantization_config,
// replaces it too).
Result<void> ReadExpertDtype(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(expert_dtype, r.StringOr("expert_dtype", "fp8"));
  if (expert_dtype == "fp8") return {};
  if (expert_dtype != "fp4") {
    return r.Fail("expert_dtype", "\"" + expert_dtype + "\" (expected fp4 or fp8)");
  }
  CheckpointQuant& q = spec.quant;
  if (q.scope == CheckpointQuant::Scope::kNone || !q.unsupported.empty()) {
    r.Note("expert_dtype \"fp4\": the checkpoint stores the routed experts in FP4, but it "
           "declares no quantization_config to place them in; the recipe sizes them like the "
           "other matrices");
    return {};
  }
  OPSCOPE_TRY(experts, ModulePatterns::Make({"*.ffn.experts.*"}, false, r.object().Path("expert_dtype")));
  std::vector<QuantRule> rules{{std::move(experts),
                                QuantScheme{format::Format::kMxfp4, q.activations,
                                            "expert_dtype fp4"}}};
  if (q.rules) rules.insert(rules.end(), q.rules->begin(), q.rules->end());
  q.rules = std::make_shared<const std::vector<QuantRule>>(std::move(rules));
  q.notes.push_back("routed experts in mxfp4 from " + r.object().Path("expert_dtype") +
                    " \"fp4\" (e2m1, a ue8m0 scale per 32, as vLLM loads DeepSeek-V4's FP4 "
                    "experts)");
  return {};
}

}  // namespace
namespace {

// compress_ratios, or layer_types with compress_rates, or DeepseekV4Config's default (two HCA
// layers, then CSA / HCA alternating).
Result<void> ReadCompression(const Reader& r, int64_t layers) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(ratios, r.IntList("compress_ratios"));
  OPSCOPE_TRY(types, r.LayerList("layer_types", layers));
  OPSCOPE_TRY(rates, r.object().Object("compress_rates"));
  int64_t csa = 4, hca = 128;
  if (rates) {
    OPSCOPE_TRY(c, rates->Int("compressed_sparse_attention"));
    OPSCOPE_TRY(h, rates->Int("heavily_compressed_attention"));
    csa = c.value_or(csa);
    hca = h.value_or(hca);
  }
  OPSCOPE_TRY(c_legacy, r.Int("compress_rate_csa"));
  OPSCOPE_TRY(h_legacy, r.Int("compress_rate_hca"));
  csa = c_legacy.value_or(csa);
  hca = h_legacy.value_or(hca);
  for (int64_t i = 0; i < layers; ++i) {
    int64_t ratio = 0;
    if (ratios) {
      if (static_cast<int64_t>(ratios->size()) < layers) {
        return r.Fail("compress_ratios", "has " + std::to_string(ratios->size()) +
                                             " entries, num_hidden_layers is " + std::to_string(layers));
      }
      ratio = (*ratios)[i];  // a longer list also covers the MTP layers; they are not costed
    } else if (!types.empty()) {
      const std::string& t = types[i];
      if (t == "compressed_sparse_attention") {
        ratio = csa;
      } else if (t == "heavily_compressed_attention") {
        ratio = hca;
      } else if (t != "sliding_attention") {
        return r.Fail("layer_types", "item " + std::to_string(i) + ": \"" + t + "\"");
      }
    } else {
      ratio = i < 2 || (i - 2) % 2 == 0 ? hca : csa;
    }
    if (ratio < 0) return r.Fail("compress_ratios", "must not be negative");
    spec.layers[i].compress = ratio;
    spec.layers[i].sparse = ratio > 0 && ratio == csa;  // CSA: an indexer chooses the entries
  }
  return {};
}

Result<void> ReadHashLayers(const Reader& r, int64_t layers) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(types, r.LayerList("mlp_layer_types", layers));
  OPSCOPE_TRY(hash, r.CountOr("num_hash_layers", 3));
  for (int64_t i = 0; i < layers; ++i) {
    if (!types.empty()) {
      if (types[i] != "hash_moe" && types[i] != "moe") {
        return r.Fail("mlp_layer_types", "item " + std::to_string(i) + ": \"" + types[i] +
                                             "\" (expected hash_moe or moe)");
      }
      spec.layers[i].hash_routed = types[i] == "hash_moe";
    } else {
      spec.layers[i].hash_routed = i < hash;
    }
  }
  return {};
}

}  // namespace

Result<void> ReadDeepseekV4(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_CHECK(ReadAttentionHeads(r));
  if (spec.attn.kv_heads != 1) {
    return r.Fail("num_key_value_heads", "DeepSeek-V4 attention shares one K = V head, got " +
                                             std::to_string(spec.attn.kv_heads));
  }
  OPSCOPE_TRY(bias, r.BoolOr("attention_bias", false));
  if (bias) return r.Fail("attention_bias", "true is not modelled for DeepSeek-V4");
  spec.attn.sinks = true;
  DeepseekV4Spec& v4 = spec.dsv4;
  OPSCOPE_TRY(q_lora, r.Required("q_lora_rank"));
  OPSCOPE_TRY(groups, r.IntOr("o_groups", 8));
  OPSCOPE_TRY(o_lora, r.IntOr("o_lora_rank", 1024));
  OPSCOPE_TRY(hc, r.IntOr("hc_mult", 4));
  OPSCOPE_TRY(window, r.IntOr("sliding_window", 128));
  OPSCOPE_TRY(rope_dim, r.Int("qk_rope_head_dim"));  // the rotated slice of head_dim
  // transformers' DeepseekV4Config also states the unrotated rest, qk_nope_head_dim =
  // head_dim - qk_rope_head_dim (RedHatAI's copy: 512 - 64 = 448): checked, sizes nothing.
  OPSCOPE_TRY(nope_dim, r.Int("qk_nope_head_dim"));
  if (nope_dim && *nope_dim + rope_dim.value_or(0) != spec.attn.head_dim) {
    return r.Fail("qk_nope_head_dim", std::to_string(*nope_dim) + " + qk_rope_head_dim " +
                                          std::to_string(rope_dim.value_or(0)) +
                                          " is not head_dim " +
                                          std::to_string(spec.attn.head_dim));
  }
  if (spec.attn.heads * spec.attn.head_dim % groups != 0) {
    return r.Fail("o_groups", std::to_string(groups) + " does not divide the attention output " +
                                  std::to_string(spec.attn.heads * spec.attn.head_dim));
  }
  v4 = DeepseekV4Spec{hc, groups, o_lora, q_lora, window};
  OPSCOPE_TRY(ih, r.IntOr("index_n_heads", 64));
  OPSCOPE_TRY(ihd, r.IntOr("index_head_dim", 128));
  OPSCOPE_TRY(topk, r.IntOr("index_topk", 512));
  spec.indexer = IndexerSpec{ih, ihd, topk};

  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kDeepseekV4, 0, Ffn::kMoe});
  OPSCOPE_CHECK(ReadCompression(r, layers));
  OPSCOPE_CHECK(ReadHashLayers(r, layers));

  OPSCOPE_CHECK(ReadMoeCounts(r, "moe_intermediate_size"));
  OPSCOPE_TRY(shared, r.CountOr("n_shared_experts", 1));
  spec.moe.shared_intermediate = shared * spec.moe.intermediate;
  OPSCOPE_TRY(act, ReadActivation(r));
  spec.moe.act = ActivationFor(act);
  // DeepseekV4TopkRouter: sqrtsoftplus (or sigmoid / softmax) scores plus the correction bias.
  OPSCOPE_TRY(scoring, r.StringOr("scoring_func", "sqrtsoftplus"));
  spec.moe.sigmoid_scores = scoring != "softmax";
  OPSCOPE_TRY(topk_method, r.StringOr("topk_method", "noaux_tc"));
  spec.moe.score_correction_bias = topk_method == "noaux_tc";
  OPSCOPE_CHECK(ReadExpertDtype(r));
  OPSCOPE_CHECK(r.Int("intermediate_size"));  // DeepseekV4Config maps it to moe_intermediate_size
  return ReadMtp(r);
}

}  // namespace opscope::import::hf
