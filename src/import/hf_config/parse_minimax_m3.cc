// The MiniMax-M3 reader (model_type minimax_m3, and minimax_m3_vl, which nests the same fields
// under text_config). Semantics from the published modelling code of the engines that serve it
// (vLLM's and SGLang's minimax_m3 models, TensorRT-LLM's MiniMaxM3 model; the checkpoint's
// tensor names: self_attn.index_q_proj / index_k_proj / index_q_norm / index_k_norm,
// block_sparse_moe.shared_experts, e_score_correction_bias):
//  * attention: GQA, num_attention_heads query and num_key_value_heads KV heads of head_dim,
//    per-head q/k RMSNorms (use_qk_norm, qk_norm_type "per_head"), partial RoPE (rotary_dim;
//    no shape), an output gate only when attention_output_gate;
//  * sparse_attention_config (MiniMax Sparse Attention): in the layers sparse_attention_freq
//    flags, index_q_proj [sparse_num_index_heads · sparse_index_dim, hidden] and index_k_proj
//    [sparse_index_dim, hidden] (one index key per token, cached beside K and V), each through
//    a per-head RMSNorm and the model's RoPE. One index head per KV head (the engines refuse
//    other counts): head g scores every cached block of sparse_block_size tokens by its best
//    token (sparse_score_type "max" of q_g · k), keeps its sparse_topk_blocks best blocks
//    (sparse_init_block first and sparse_local_block newest blocks forced among them), and KV
//    head g's query group attends only those blocks' tokens. sparse_disable_index_value 1: the
//    index has no value projection (a sparse layer with 0 would add one: refused);
//  * MLPs: moe_layer_freq, one flag per layer: 0 a dense SwiGLU of dense_intermediate_size,
//    1 MoE of num_local_experts routed experts of intermediate_size (top num_experts_per_tok,
//    sigmoid scores with e_score_correction_bias when use_routing_bias) beside one shared
//    expert of shared_intermediate_size (n_shared_experts 1); hidden_act "swigluoai" (clamped
//    SwiGLU: swiglu_alpha, swiglu_limit; same GEMMs);
//  * norms: RMSNorm scaled by (1 + w) when use_gemma_norm (no shape);
//  * MTP: the engines build num_nextn_predict_layers modules (enorm, hnorm, eh_proj, one
//    sparse-attention MoE decoder layer, a final norm; embedding and LM head shared). The
//    release's config also says num_mtp_modules 7 beside num_nextn_predict_layers 1; the
//    engines read the latter, so it is the count costed and the difference is listed.
// aiconfigurator's text-only copy also carries first_k_dense_replace and moe_intermediate_size:
// read, and they must agree with moe_layer_freq and intermediate_size.
// minimax_m3_vl: the vision tower (vision_config) and the multimodal projector and patch-merge
// MLP (projector_hidden_size, img_token_compression_config) are not costed and not in
// params_total; num_reward_heads above 0 is refused.
#include <string>

#include "import/hf_config/config_fields.h"
#include "import/hf_config/config_reader.h"

namespace opscope::import::hf {

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

// A 0 / 1 flag per layer.
Result<std::vector<int64_t>> LayerFlags(const Reader& r, std::string_view key, int64_t layers,
                                        std::string_view what) {
  OPSCOPE_TRY(flags, r.IntList(key));
  if (!flags) return r.Fail(key, "is required (one 0 / 1 per layer)");
  if (static_cast<int64_t>(flags->size()) != layers) {
    return r.Fail(key, "has " + Str(static_cast<int64_t>(flags->size())) +
                           " entries, num_hidden_layers is " + Str(layers));
  }
  for (size_t i = 0; i < flags->size(); ++i) {
    if ((*flags)[i] != 0 && (*flags)[i] != 1) {
      return r.Fail(key, "item " + Str(static_cast<int64_t>(i)) + " is " + Str((*flags)[i]) +
                             " (expected 0 or 1: " + std::string(what) + ")");
    }
  }
  return std::move(*flags);
}

// sparse_attention_config -> the indexer and the sparse layers.
Result<void> ReadSparseAttention(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(nested, r.object().Object("sparse_attention_config"));
  if (!nested) return {};  // no sparse attention: every layer is full GQA
  const Reader s(*nested, spec, r.family());
  OPSCOPE_TRY(use_field, s.Bool("use_sparse_attention"));
  if (!use_field) {
    r.Note("sparse_attention_config has no use_sparse_attention: its sparse_attention_freq "
           "layers are sparse");
  }
  const int64_t layers = spec.num_layers();
  OPSCOPE_TRY(freq, LayerFlags(s, "sparse_attention_freq", layers, "full or sparse attention"));
  OPSCOPE_TRY(heads, s.Required("sparse_num_index_heads"));
  OPSCOPE_TRY(dim, s.Required("sparse_index_dim"));
  OPSCOPE_TRY(topk, s.Required("sparse_topk_blocks"));
  OPSCOPE_TRY(block, s.Required("sparse_block_size"));
  OPSCOPE_TRY(init, s.CountOr("sparse_init_block", 0));
  OPSCOPE_TRY(local, s.CountOr("sparse_local_block", 0));
  OPSCOPE_TRY(score, s.StringOr("sparse_score_type", "max"));
  OPSCOPE_TRY(no_value, s.IntList("sparse_disable_index_value"));
  if (heads != spec.attn.kv_heads) {
    return s.Fail("sparse_num_index_heads",
                  Str(heads) + " differs from num_key_value_heads " + Str(spec.attn.kv_heads) +
                      " (MiniMax Sparse Attention has one index head per KV head)");
  }
  if (init + local > topk) {
    return s.Fail("sparse_topk_blocks", Str(topk) + " is below the forced blocks " +
                                            "(sparse_init_block " + Str(init) +
                                            " + sparse_local_block " + Str(local) + ")");
  }
  if (score != "max") {
    return s.Fail("sparse_score_type", "\"" + score + "\" is not modelled (expected max)");
  }
  if (no_value && static_cast<int64_t>(no_value->size()) != layers) {
    return s.Fail("sparse_disable_index_value",
                  "has " + Str(static_cast<int64_t>(no_value->size())) +
                      " entries, num_hidden_layers is " + Str(layers));
  }
  const bool use = use_field.value_or(true);
  for (int64_t i = 0; i < layers; ++i) {
    const auto at = static_cast<size_t>(i);
    if (!use || freq[at] == 0) continue;
    if (!no_value || (*no_value)[at] != 1) {
      return s.Fail("sparse_disable_index_value",
                    "layer " + Str(i) + " is sparse but its index value projection is not "
                    "disabled (1); an index value is not modelled");
    }
    spec.layers[at].sparse = true;
  }
  if (use) spec.indexer = IndexerSpec{heads, dim, topk, block};
  // The sub-object's own fields: nothing that sizes the model goes unread.
  return CheckUnreadFields(*nested, spec.model_type, spec.assumptions);
}

// aiconfigurator's copy: first_k_dense_replace and moe_intermediate_size beside the release's
// fields, checked against them.
Result<void> CheckRestatedFields(const Reader& r) {
  const ModelSpec& spec = r.spec();
  OPSCOPE_TRY(first, r.object().Int("first_k_dense_replace"));
  if (first) {
    int64_t leading = 0;
    const auto ffn = [&](int64_t i) { return spec.layers[static_cast<size_t>(i)].ffn; };
    while (leading < spec.num_layers() && ffn(leading) == Ffn::kDense) ++leading;
    bool rest_moe = true;
    for (int64_t i = leading; i < spec.num_layers(); ++i) {
      rest_moe = rest_moe && ffn(i) == Ffn::kMoe;
    }
    if (*first != leading || !rest_moe) {
      return r.Fail("first_k_dense_replace", Str(*first) + " disagrees with moe_layer_freq");
    }
  }
  OPSCOPE_TRY(expert, r.object().Int("moe_intermediate_size"));
  if (expert && *expert != spec.moe.intermediate) {
    return r.Fail("moe_intermediate_size", Str(*expert) + " disagrees with intermediate_size " +
                                               Str(spec.moe.intermediate) +
                                               " (the routed experts' width)");
  }
  return {};
}

// The MTP modules: num_nextn_predict_layers (what the engines build), else num_mtp_modules.
Result<void> ReadMtpModules(const Reader& r) {
  ModelSpec& spec = r.spec();
  const ConfigObject& o = r.object();
  OPSCOPE_TRY(nextn, o.Int("num_nextn_predict_layers"));
  OPSCOPE_TRY(mtp, o.Int("num_mtp_modules"));
  for (const auto& [key, v] : {std::pair{"num_nextn_predict_layers", nextn},
                               std::pair{"num_mtp_modules", mtp}}) {
    if (v && *v < 0) return r.Fail(key, "must not be negative, got " + Str(*v));
  }
  const int64_t modules = nextn ? *nextn : mtp.value_or(0);
  if (nextn && mtp && *nextn != *mtp) {
    r.Note("num_mtp_modules " + Str(*mtp) + " differs from num_nextn_predict_layers " +
           Str(*nextn) + ": the engines build num_nextn_predict_layers MTP modules, so " +
           Str(*nextn) + " is in params_mtp");
  }
  spec.mtp.modules = modules;
  spec.mtp.own_embeddings = false;
  if (modules > 0) {
    // Each module's block: a sparse-attention (when the model has any) MoE decoder layer.
    LayerSpec block{Mixer::kAttention, 0, Ffn::kMoe};
    block.sparse = spec.indexer.heads > 0;
    spec.mtp.blocks = {block};
  }
  return {};
}

// minimax_m3_vl's own fields beside text_config and vision_config.
Result<void> ReadMultimodalFields(const Reader& r, const ConfigObject& root) {
  OPSCOPE_TRY(reward, root.Int("num_reward_heads"));
  if (reward && *reward != 0) {
    return std::unexpected(
        root.FieldError("num_reward_heads", Str(*reward) + ": reward heads are not modelled"));
  }
  bool any = false;
  for (std::string_view key :
       {"projector_hidden_size", "projector_hidden_act", "multimodal_projector_bias",
        "vision_feature_layer", "vision_feature_select_strategy", "img_token_compression_config",
        "image_grid_pinpoints", "image_seq_length", "process_image_mode"}) {
    if (root.Find(key) != ConfigObject::Presence::kAbsent) any = true;
    root.MarkRead(key);
  }
  if (any) {
    r.Note("the multimodal projector and patch-merge MLP (projector_hidden_size, "
           "img_token_compression_config) are not costed and not in params_total");
  }
  return {};
}

}  // namespace

Result<void> ReadMiniMaxM3(const Reader& r, const ConfigObject& root) {
  ModelSpec& spec = r.spec();
  OPSCOPE_CHECK(ReadAttentionShape(r));  // heads, KV heads, head_dim, per-head q/k norms
  OPSCOPE_TRY(gate, r.BoolOr("attention_output_gate", false));
  spec.attn.output_gate = gate;
  OPSCOPE_CHECK(r.Bool("use_gemma_norm"));            // RMSNorm scaled by (1 + w): no shape
  OPSCOPE_CHECK(r.object().Number("swiglu_alpha"));   // the clamped SwiGLU's slope: no shape
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kAttention, 0, Ffn::kDense});
  OPSCOPE_CHECK(ReadMlps(r));
  OPSCOPE_TRY(shared, r.CountOr("n_shared_experts", 1));
  if (shared > 1) {
    return r.Fail("n_shared_experts", Str(shared) + " shared experts are not modelled (the " +
                                          "shared expert is shared_intermediate_size wide)");
  }
  if (shared == 0) spec.moe.shared_intermediate = 0;
  OPSCOPE_CHECK(CheckRestatedFields(r));
  OPSCOPE_CHECK(ReadSparseAttention(r));
  OPSCOPE_CHECK(ReadMtpModules(r));
  if (!r.family().text_config.empty()) OPSCOPE_CHECK(ReadMultimodalFields(r, root));
  return {};
}

}  // namespace opscope::import::hf
