// What the config reader knows about fields it does not read itself: synonyms (aliases) of
// the fields it reads, fields with no effect on shapes or costs (quiet), and fields it knowingly
// leaves out of the step with a reason (noted in `assumptions`). After a reader has built the
// spec, CheckUnreadFields looks at every field of the config it never looked up: a quiet one
// passes, a noted one adds its assumptions line, one whose name says it sizes or counts
// something (…_size, num_…, …_dim, rank, heads, experts, layers, pattern, latent, ratio, …) is
// an error naming it, and any other one is listed in `assumptions` as not read. Nothing is
// ignored without a word.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "import/hf_config/config_json.h"
#include "support/error.h"

namespace opscope::import::hf {

// `alias` is another name of `field` in some families' configs; a dotted alias names a field of
// a nested object (DBRX's ffn_config.moe_num_experts). The reader tries the field, then its
// aliases in order; when several are present they must agree.
struct FieldAlias {
  std::string_view field, alias;
};
inline constexpr FieldAlias kFieldAliases[] = {
    {"hidden_size", "d_model"},
    {"num_hidden_layers", "n_layers"},
    {"num_hidden_layers", "n_layer"},
    {"num_attention_heads", "n_heads"},
    {"num_attention_heads", "n_head"},
    {"num_key_value_heads", "attn_config.kv_n_heads"},
    {"num_key_value_heads", "num_kv_heads"},
    {"intermediate_size", "ffn_config.ffn_hidden_size"},
    {"num_local_experts", "num_experts"},
    {"num_local_experts", "n_routed_experts"},
    {"num_local_experts", "moe_num_experts"},
    {"num_local_experts", "ffn_config.moe_num_experts"},
    {"num_experts_per_tok", "experts_per_token"},
    {"num_experts_per_tok", "moe_k"},
    {"num_experts_per_tok", "moe_topk"},
    {"num_experts_per_tok", "top_k_experts"},
    {"num_experts_per_tok", "ffn_config.moe_top_k"},
    {"num_experts_per_tok", "num_experts_per_token"},
    {"n_shared_experts", "num_shared_experts"},
    {"n_shared_experts", "moe_num_shared_experts"},
    {"n_shared_experts", "num_shared_expert"},
    {"shared_expert_intermediate_size", "moe_shared_expert_intermediate_size"},
    {"shared_expert_intermediate_size", "shared_intermediate_size"},
    {"shared_expert_intermediate_size", "share_expert_dim"},
    {"sliding_window", "sliding_window_size"},
    {"num_nextn_predict_layers", "mtp_num_hidden_layers"},
    {"num_nextn_predict_layers", "num_mtp_modules"},
};

// Fields with no effect on any shape opscope builds and nothing it costs: token ids, numerics
// (epsilons, RoPE bases and scaling, softcaps, multipliers, init), training-only settings
// (dropout, aux losses, routing groups), bookkeeping. Matched exactly, and by suffix for
// "_token_id", "_token_index" and "_token".
inline constexpr std::string_view kQuietFields[] = {
    // PretrainedConfig bookkeeping.
    "_name_or_path", "architectures", "auto_map", "transformers_version", "model_type",
    "torch_dtype", "dtype", "use_cache", "return_dict", "output_attentions",
    "output_hidden_states", "torchscript", "use_bfloat16", "tf_legacy_loss", "pruned_heads",
    "is_decoder", "is_encoder_decoder", "add_cross_attention", "cross_attention_hidden_size",
    "tie_encoder_decoder", "chunk_size_feed_forward", "finetuning_task", "id2label",
    "label2id", "prefix", "problem_type", "task_specific_params", "tokenizer_class",
    "cache_implementation", "num_logits_to_keep", "use_return_dict", "ignore_index",
    "_attn_implementation_autoset", "keys_to_ignore_at_inference",
    // PretrainedConfig's legacy generation settings (written by older transformers into every
    // config.json; they steer sampling, not the model).
    "max_length", "min_length", "do_sample", "early_stopping", "num_beams", "num_beam_groups",
    "diversity_penalty", "temperature", "top_p", "typical_p", "repetition_penalty",
    "length_penalty", "no_repeat_ngram_size", "encoder_no_repeat_ngram_size", "bad_words_ids",
    "num_return_sequences", "output_scores", "return_dict_in_generate",
    "remove_invalid_values", "exponential_decay_length_penalty", "suppress_tokens",
    "begin_suppress_tokens",
    // Token ids.
    "pad_token_id", "bos_token_id", "eos_token_id", "mm_tokens_per_image",
    // Numerics: norms, RoPE, softcaps, scales, init.
    "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_eps", "norm_epsilon",
    "mixer_rms_eps", "rope_theta", "rope_scaling", "rope_parameters", "rope_type",
    "rope_interleave", "rotary_emb_base", "partial_rotary_factor", "position_embedding_type",
    "initial_context_length", "max_seq_len", "seq_length",
    "original_max_position_embeddings", "initializer_range", "initializer_factor",
    "attn_logit_softcapping", "final_logit_softcapping", "query_pre_attn_scalar",
    "logit_scale", "logits_scaling", "embedding_multiplier", "residual_multiplier",
    "attention_multiplier", "scale_emb", "scale_depth", "dim_model_base", "swiglu_limit",
    "routed_scaling_factor", "norm_topk_prob", "attn_scale", "attn_temperature_tuning",
    "floor_scale", "rescale_prenorm_residual", "residual_in_fp32", "use_mamba_kernels",
    "norm_before_gate", "time_step_floor", "time_step_max", "time_step_min",
    "time_step_init_scheme", "time_step_scale", "time_step_limit", "chunk_size", "clip_qkv",
    "pretraining_tp", "hc_eps", "hc_sinkhorn_iters", "compress_rope_theta",
    "compress_rope_parameters", "moe_router_scaling_factor", "mamba_hidden_act",
    "mamba_chunk_size", "use_mamba_kernel", "rms_norm", "mamba_rms_norm",
    // Training-only: dropout, losses, routing noise and groups.
    "attention_dropout", "hidden_dropout", "embd_pdrop", "resid_pdrop", "attn_pdrop",
    "emb_pdrop", "dropout", "output_router_logits", "router_aux_loss_coef", "aux_loss_alpha",
    "seq_aux", "router_jitter_noise", "input_jitter_noise", "router_z_loss_coef", "n_group",
    "topk_group", "topk_method", "ep_size", "moe_router_dtype", "use_flash_attention",
    "_attn_implementation", "moe_aux_loss_coeff", "attn_implementation", "num_expert_group",
    "use_grouped_topk", "moe_renormalize", "model_max_length", "moe_norm_min",
    "moe_use_aux_free", "moe_capacity", "router_temperature", "attention_in_multiplier",
    "attention_out_multiplier", "key_multiplier", "lm_head_multiplier", "mlp_multipliers",
    "ssm_multipliers", "ssm_in_multiplier", "ssm_out_multiplier", "rotary_dim",
    "use_falcon_mambapy", "use_mambapy",
    // BailingMoeConfig (Ling): dropouts, and the normalised head / softmax (no shape change).
    "embedding_dropout", "output_dropout", "norm_head", "norm_softmax",
    // Settings of a vision front end that is not costed (vision_config says so): Kimi-K2.5's
    // KimiK25Config.
    "use_unified_vision_chunk", "video_placeholder",
};

// Fields a reader leaves out of the step on purpose; each present one adds its line to
// `assumptions`.
struct NotedField {
  std::string_view field, why;
};
inline constexpr NotedField kNotedFields[] = {
    {"vision_config", "the vision tower (vision_config) is not costed and not in params_total"},
    {"audio_config", "the audio tower (audio_config) is not costed and not in params_total"},
    {"vision_tower", "the vision tower is not costed and not in params_total"},
};

// Every field of `object` that was never looked up (a nested object counts as one field):
// quiet, noted (a line in `assumptions`), an error when its name says it changes shapes, else a
// line in `assumptions`. A null field is an absent one (Python's None: the feature is off, as
// MiniMax-M2's "sliding_window": null) and passes. `model_type` names the family in messages.
Result<void> CheckUnreadFields(const ConfigObject& object, std::string_view model_type,
                               std::vector<std::string>& assumptions);

// Whether a field's name says it sizes or counts something (exposed for tests).
bool LooksLikeShapeField(std::string_view field);

}  // namespace opscope::import::hf
