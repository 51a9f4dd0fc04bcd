// Readers of the multi-head latent attention families (DeepseekV2Config, DeepseekV3Config and
// their descendants: Kimi-K2, DeepSeek-V3.2 and GLM-5 with DeepSeek Sparse Attention), and of
// Kimi-Linear, whose full-attention layers are MLA between Kimi Delta Attention layers.
#include <algorithm>
#include <string>

#include "import/hf_config/config_fields.h"

#include "import/hf_config/config_reader.h"

namespace opscope::import::hf {
namespace {

Result<void> ReadMlaSizes(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(heads, r.Required("num_attention_heads"));
  spec.attn.heads = spec.attn.kv_heads = heads;
  // MLA has no key-value heads of its own (the classes set num_key_value_heads to the head
  // count) and its head sizes are qk_nope/qk_rope/v_head_dim (GlmMoeDsaConfig's head_dim is the
  // rope slice): both fields are read and size nothing.
  OPSCOPE_CHECK(r.Int("num_key_value_heads"));
  OPSCOPE_CHECK(r.Int("head_dim"));
  OPSCOPE_TRY(bias, r.BoolOr("attention_bias", false));
  spec.attn.qkv_bias = spec.attn.o_bias = bias;
  // q_lora_rank: null means q_proj straight from the hidden state (DeepSeek-V2-Lite).
  if (r.object().Find("q_lora_rank") == ConfigObject::Presence::kAbsent) {
    return MakeError(r.object().origin() + ": missing field '" + r.object().Path("q_lora_rank") +
                     "' (use null for none)");
  }
  OPSCOPE_TRY(q_lora, r.Int("q_lora_rank"));
  spec.mla.q_lora_rank = q_lora.value_or(0);
  OPSCOPE_TRY(kvr, r.Required("kv_lora_rank"));
  OPSCOPE_TRY(nope, r.Required("qk_nope_head_dim"));
  OPSCOPE_TRY(rope, r.Required("qk_rope_head_dim"));
  OPSCOPE_TRY(v, r.Required("v_head_dim"));
  // GlmMoeDsaConfig also states the whole query/key head, qk_head_dim = qk_nope_head_dim +
  // qk_rope_head_dim (GLM-5: 192 + 64 = 256); read to check it, it sizes nothing else.
  OPSCOPE_TRY(qk_head, r.Int("qk_head_dim"));
  if (qk_head && *qk_head != nope + rope) {
    return r.Fail("qk_head_dim", std::to_string(*qk_head) + " is not qk_nope_head_dim " +
                                     std::to_string(nope) + " + qk_rope_head_dim " +
                                     std::to_string(rope));
  }
  spec.mla.kv_lora_rank = kvr;
  spec.mla.qk_nope_head_dim = nope;
  spec.mla.qk_rope_head_dim = rope;
  spec.mla.v_head_dim = v;
  return {};
}

// DeepSeek Sparse Attention (DeepseekV32Config, GlmMoeDsaConfig): index_n_heads,
// index_head_dim and index_topk; GLM-5's indexer_types says which layers run their own
// indexer ("full") and which reuse the previous one's selection ("shared": no indexer weights).
Result<void> ReadIndexer(const Reader& r) {
  ModelSpec& spec = r.spec();
  if (!r.Has("index_topk") && !r.Has("index_n_heads")) return {};
  OPSCOPE_TRY(heads, r.Required("index_n_heads"));
  OPSCOPE_TRY(head_dim, r.Required("index_head_dim"));
  OPSCOPE_TRY(topk, r.Required("index_topk"));
  spec.indexer = IndexerSpec{heads, head_dim, topk};
  OPSCOPE_TRY(types, r.LayerList("indexer_types", spec.num_layers()));
  OPSCOPE_TRY(pattern, r.StringOr("index_topk_pattern", ""));
  OPSCOPE_TRY(freq, r.IntOr("index_topk_freq", 1));
  OPSCOPE_TRY(offset, r.CountOr("index_skip_topk_offset", 2));
  // GLM-5.2: the multi-token-prediction iteration reuses the main model's top-k selection.
  // The MTP modules are not part of the step (params_mtp counts their weights either way).
  OPSCOPE_TRY(mtp_shares, r.BoolOr("index_share_for_mtp_iteration", false));
  if (mtp_shares) {
    r.Note("index_share_for_mtp_iteration: the MTP module reuses the indexer's selection; MTP "
           "modules are not part of the step");
  }
  for (int64_t i = 0; i < spec.num_layers(); ++i) {
    bool own = true;
    if (!types.empty()) {
      if (types[i] != "full" && types[i] != "shared") {
        return r.Fail("indexer_types", "item " + std::to_string(i) + ": \"" + types[i] +
                                           "\" (expected full or shared)");
      }
      own = types[i] == "full";
    } else if (!pattern.empty()) {
      if (static_cast<int64_t>(pattern.size()) != spec.num_layers()) {
        return r.Fail("index_topk_pattern", "has " + std::to_string(pattern.size()) +
                                                " entries, num_hidden_layers is " +
                                                std::to_string(spec.num_layers()));
      }
      own = pattern[i] == 'F';
    } else {
      own = std::max<int64_t>(i - offset + 1, 0) % freq == 0;
    }
    spec.layers[i].sparse = true;
    spec.layers[i].indexer_shared = !own;
  }
  return {};
}

// GLM-5's mlp_layer_types ("dense" / "sparse") when the config lists it.
Result<void> ReadMlpLayerTypes(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(types, r.LayerList("mlp_layer_types", spec.num_layers()));
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] == "dense") {
      spec.layers[i].ffn = Ffn::kDense;
    } else if (types[i] == "sparse" || types[i] == "moe") {
      spec.layers[i].ffn = Ffn::kMoe;
    } else {
      return r.Fail("mlp_layer_types", "item " + std::to_string(i) + ": \"" + types[i] +
                                           "\" (expected dense or sparse)");
    }
  }
  return {};
}

}  // namespace

namespace {
Result<void> ReadDeepseekMoe(const Reader& r);
}  // namespace

// deepseek_v2, deepseek_v3, kimi_k2, deepseek_v32, glm_moe_dsa: MLA everywhere; MoE where
// i >= first_k_dense_replace and i % moe_layer_freq == 0 (or per mlp_layer_types).
Result<void> ReadMla(const Reader& r) {
  ModelSpec& spec = r.spec();
  const Family& f = r.family();
  OPSCOPE_CHECK(ReadMlaSizes(r));
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kMla, 0, Ffn::kDense});
  OPSCOPE_CHECK(PlaceMoe(r, f.moe, f.first_dense));
  OPSCOPE_CHECK(ReadMlpLayerTypes(r));
  OPSCOPE_CHECK(ReadIndexer(r));
  const bool any_dense = std::any_of(spec.layers.begin(), spec.layers.end(),
                                     [](const LayerSpec& l) { return l.ffn == Ffn::kDense; });
  if (any_dense) OPSCOPE_CHECK(ReadDenseMlp(r, false));
  OPSCOPE_CHECK(ReadDeepseekMoe(r));
  return ReadMtp(r);
}

namespace {

// MoE of the DeepSeek-V3 kind (ReadMla and Kimi-Linear): routed and shared experts, the router.
Result<void> ReadDeepseekMoe(const Reader& r) {
  ModelSpec& spec = r.spec();
  const Family& f = r.family();
  OPSCOPE_CHECK(ReadMoeCounts(r, "moe_intermediate_size"));
  OPSCOPE_TRY(shared, r.CountOr("n_shared_experts", f.shared_experts));
  spec.moe.shared_intermediate = shared * spec.moe.intermediate;
  OPSCOPE_TRY(act, ReadActivation(r));
  spec.moe.act = ActivationFor(act);
  // DeepseekV3TopkRouter: sigmoid scores with e_score_correction_bias (noaux_tc); DeepSeek-V2:
  // softmax, greedy or group-limited top-k, no bias. Kimi-Linear names the score function
  // moe_router_activation_func.
  OPSCOPE_TRY(func, r.StringOr("moe_router_activation_func", f.sigmoid_router ? "sigmoid" : "softmax"));
  OPSCOPE_TRY(scoring, r.StringOr("scoring_func", func));
  spec.moe.sigmoid_scores = scoring == "sigmoid";
  OPSCOPE_TRY(topk_method, r.StringOr("topk_method", f.sigmoid_router ? "noaux_tc" : "greedy"));
  spec.moe.score_correction_bias = topk_method == "noaux_tc";
  return {};
}

}  // namespace

// kimi_linear (KimiLinearConfig; the checkpoint keeps the linear-attention fields in
// linear_attn_config: num_heads, head_dim, short_conv_kernel_size, and the 1-based
// kda_layers / full_attn_layers): Kimi Delta Attention layers and MLA layers, MoE from
// first_k_dense_replace on.
Result<void> ReadKimiLinear(const Reader& r) {
  ModelSpec& spec = r.spec();
  const Family& f = r.family();
  OPSCOPE_CHECK(ReadMlaSizes(r));
  OPSCOPE_TRY(nope, r.BoolOr("mla_use_nope", false));
  spec.attn.rope = !nope;
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kKda, 0, Ffn::kDense});
  OPSCOPE_TRY(linear, r.object().Object("linear_attn_config"));
  if (!linear) {
    return MakeError(r.object().origin() + ": missing field 'linear_attn_config' (required for " +
                     "model_type '" + spec.model_type + "')");
  }
  Reader lr(*linear, spec, f);
  OPSCOPE_TRY(heads, lr.Required("num_heads"));
  OPSCOPE_TRY(head_dim, lr.Required("head_dim"));
  OPSCOPE_TRY(kernel, lr.IntOr("short_conv_kernel_size", 4));
  spec.kda = KdaSpec{heads, head_dim, kernel};
  OPSCOPE_TRY(full, lr.IntList("full_attn_layers"));
  OPSCOPE_TRY(kda, lr.IntList("kda_layers"));
  for (int64_t i = 0; i < layers; ++i) {
    // KimiLinearConfig's default: every 4th layer (1-based) is full attention.
    spec.layers[i].mixer = (i + 1) % 4 == 0 ? Mixer::kMla : Mixer::kKda;
  }
  for (const auto* list : {&kda, &full}) {
    if (!*list) continue;
    for (int64_t one_based : **list) {
      if (one_based < 1 || one_based > layers) {
        return lr.Fail(list == &kda ? "kda_layers" : "full_attn_layers",
                       "layer " + std::to_string(one_based) + " is outside 1.." +
                           std::to_string(layers));
      }
      spec.layers[one_based - 1].mixer = list == &kda ? Mixer::kKda : Mixer::kMla;
    }
  }
  OPSCOPE_CHECK(CheckUnreadFields(*linear, spec.model_type, spec.assumptions));
  OPSCOPE_CHECK(PlaceMoe(r, MoePlacement::kFirstDense, 1));
  OPSCOPE_CHECK(ReadDenseMlp(r, false));
  OPSCOPE_CHECK(ReadDeepseekMoe(r));
  return ReadMtp(r);
}

}  // namespace opscope::import::hf
