// The model families opscope reads, as data: one row per HF model_type saying which reader
// builds its ModelSpec, where the language model's fields are (the root, or a nested
// text_config / llm_config / language_config), and the defaults of the transformers
// configuration class for the fields a config may omit. A new llama-shaped family is usually
// one row; a family with a new kind of block adds a reader (parse_config.cc) and a row.
// kSupportedModelTypes, `opscope llm --help` and the unknown-type error all come from here.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace opscope::import::hf {

// Which reader builds the spec. kDecoder covers every family made of attention (GQA, sliding
// or chunked windows, per-head or full-width q/k norms, sinks) and a dense or MoE MLP; the
// others read a block kind of their own.
enum class ReaderKind : uint8_t {
  kDecoder,
  kQwenHybrid,    // GatedDeltaNet + gated full attention (qwen3_next, qwen3_5)
  kMla,           // DeepSeek multi-head latent attention, with the DSA indexer when configured
  kMamba1,        // mamba, falcon_mamba: selective-scan blocks, no MLP
  kMamba2,        // mamba2: SSD blocks, no MLP
  kNemotronH,     // Mamba2 / attention / MLP / MoE blocks from a pattern
  kNemotronNas,   // DeciLM's per-layer block_configs
  kJamba,         // Mamba + attention by period, MoE by period
  kFalconH1,      // attention and Mamba2 side by side in every layer, then an MLP
  kGraniteHybrid, // Mamba2 / attention by layer_types, MoE (+ shared MLP) or a shared MLP only
  kKimiLinear,    // Kimi Delta Attention + MLA, MoE
  kDeepseekV4,    // compressed sparse attention, hyper-connections, grouped output projection
  kGemma4,        // Gemma-4: wider global layers (K = V), a dense MLP beside routed experts
  kMimoV2Flash,   // MiMo-V2-Flash: full / sliding layers of their own head shapes, d_v < d_qk
  kMiniMaxM3,     // MiniMax-M3: GQA with MiniMax Sparse Attention (block selection), MoE
  kLaguna,        // Laguna: a query-head count per layer, a softplus output gate of its own (g_proj)
};

// RMSNorm over q and k: none, per head (over head_dim), or over the whole projection
// (heads·head_dim: OLMo-2, OLMoE). kFlag: per head when use_qk_norm is true; kFlagFull: when
// use_qk_norm is true, over the whole projection unless qk_norm_type says "per_head"
// (MiniMax-M2's "per_layer"); kL2Flag: a weightless L2 norm when use_qk_norm (Llama-4).
enum class QkNorm : uint8_t { kNone, kPerHead, kFullWidth, kFlag, kFlagFull, kL2Flag };

// Where a layer's norms sit: before each block (llama), before and after (Gemma's sandwich),
// after only (OLMo-2, EXAONE-4), or one norm feeding attention and MLP in parallel (Cohere).
enum class NormLayout : uint8_t { kPre, kSandwich, kPost, kParallel };

// The norm: RMSNorm (a weight), LayerNorm with weight and bias, or LayerNorm with a weight only.
enum class NormKind : uint8_t { kRms, kLayerNorm, kLayerNormNoBias };

// Which layers are MoE when the config gives no per-layer list: none (dense), all, Qwen's
// decoder_sparse_step / mlp_only_layers, DeepSeek's first_k_dense_replace / moe_layer_freq,
// Llama-4's interleave_moe_layer_step, ERNIE's moe_layer_start_index / _end_index / _interval,
// a 0 / 1 flag per layer in moe_layer_freq (MiMo-V2-Flash), or "dense" / "sparse" per layer in
// mlp_layer_types, the first first_dense layers dense and the rest MoE when it is absent (Laguna).
enum class MoePlacement : uint8_t {
  kNone, kAll, kQwenStep, kFirstDense, kInterleave, kErnie, kLayerFlags, kMlpTypes
};

// Which layers use sliding_window when the config has no layer_types: none (the class has no
// such field), all of them (Mistral), every layer but each full_every-th (Gemma, gpt-oss), or
// Qwen's use_sliding_window from max_window_layers on.
enum class WindowPlacement : uint8_t { kNone, kAll, kPattern, kQwen };

struct Family {
  std::string_view model_type;
  ReaderKind reader = ReaderKind::kDecoder;
  // Where the language model's fields are: "" (the root), or the key of a nested object
  // (text_config, llm_config, language_config); `nested_optional`: the root when absent.
  std::string_view text_config = "";
  bool nested_optional = false;
  // transformers' configuration-class defaults (0: the field is required, or "none").
  int64_t vocab = 0;              // vocab_size
  int64_t kv_heads = 0;           // num_key_value_heads (0: num_attention_heads)
  int64_t head_dim = 0;           // head_dim (0: hidden_size / num_attention_heads)
  std::string_view act = "silu";  // hidden_act
  std::string_view act_key = "hidden_act";
  bool tie = false;               // tie_word_embeddings
  std::string_view bias_key = "attention_bias";  // q/k/v and o biases (attention_bias)
  bool bias = false;                             // its default
  bool qkv_bias_only = false;     // the bias field covers q/k/v only, o_proj has none
  bool qkv_bias_always = false;   // q/k/v always carry a bias (Qwen2)
  bool mlp_bias = false;          // mlp_bias default (read when the config has it)
  // A separate switch for the o_proj bias ("" : o_proj follows bias_key), and its default
  // (BailingMoeConfig: use_qkv_bias for q/k/v, use_bias for the output projection).
  std::string_view o_bias_key = "";
  bool o_bias = false;
  QkNorm qk_norm = QkNorm::kNone;
  NormLayout norms = NormLayout::kPre;
  NormKind norm = NormKind::kRms;
  bool plain_mlp = false;         // up + activation + down, no gate (StarCoder2)
  bool bias_covers_mlp = false;   // the bias field covers the MLP too (StarCoder2's use_bias)
  int64_t window = 0;             // sliding_window default (0: none)
  WindowPlacement window_placement = WindowPlacement::kNone;
  int64_t full_every = 0;         // kPattern: every full_every-th layer is full attention
  std::string_view pattern_key = "";  // kPattern: the field that overrides full_every
  int64_t nope_every = 0;         // no_rope_layer_interval default: every n-th layer has no RoPE
  // When sliding_window is set, the full-attention layers take no RoPE (EXAONE-4's "global
  // NoPE for hybrid attention": Exaone4Attention rotates only if sliding_window is None or the
  // layer slides).
  bool global_nope = false;
  bool sinks = false;             // one learned sink logit per head (gpt-oss)
  MoePlacement moe = MoePlacement::kNone;
  int64_t first_dense = 0;        // first_k_dense_replace default (kFirstDense)
  std::string_view dense_width = "intermediate_size";       // the dense MLP's width field
  std::string_view expert_width = "moe_intermediate_size";  // one routed expert's width field
  int64_t shared_experts = 0;     // n_shared_experts default (each as wide as a routed expert)
  bool router_bias = false;       // the router has a bias (gpt-oss)
  bool expert_bias = false;       // the expert projections have biases (gpt-oss)
  bool sigmoid_router = false;    // sigmoid scores with e_score_correction_bias
  // Sigmoid scores and no correction bias: Llama 4 (Llama4TextMoe takes the top-k of the router
  // logits, then the sigmoid of the [tokens, experts] scores with the others at -inf).
  bool sigmoid_scores = false;
  bool correction_bias = false;   // e_score_correction_bias on softmax scores (ERNIE-4.5)
  bool shared_gate = false;       // a sigmoid gate [1, hidden] on the shared expert (Qwen)
  bool mtp_stores_embeddings = false;  // each MTP module stores its own embedding and head
  // MTP modules when the config names none (num_nextn_predict_layers and its aliases absent):
  // the checkpoints that carry modules their config does not declare.
  int64_t mtp_modules = 0;
};

// The rows. Defaults are cited from transformers' models/<type>/configuration_<type>.py (or
// the model's remote code where transformers has no class).
inline constexpr Family kFamilies[] = {
    // Llama and its direct descendants.
    {.model_type = "llama", .vocab = 32000},
    {.model_type = "mistral", .vocab = 32000, .kv_heads = 8, .window = 4096,
     .window_placement = WindowPlacement::kAll},
    {.model_type = "mixtral", .vocab = 32000, .kv_heads = 8,
     .window_placement = WindowPlacement::kAll, .moe = MoePlacement::kAll,
     .expert_width = "intermediate_size"},
    {.model_type = "qwen2", .vocab = 151936, .kv_heads = 32, .qkv_bias_always = true,
     .window = 4096, .window_placement = WindowPlacement::kQwen},
    {.model_type = "qwen3", .vocab = 151936, .kv_heads = 32, .head_dim = 128,
     .qk_norm = QkNorm::kPerHead, .window = 4096, .window_placement = WindowPlacement::kQwen},
    {.model_type = "qwen3_moe", .vocab = 151936, .kv_heads = 4, .qk_norm = QkNorm::kPerHead,
     .window = 4096, .window_placement = WindowPlacement::kQwen,
     .moe = MoePlacement::kQwenStep},
    // Llama-shaped relatives (decoder reader).
    {.model_type = "gemma", .vocab = 256000, .kv_heads = 16, .head_dim = 256,
     .act = "gelu_pytorch_tanh", .act_key = "hidden_activation", .tie = true},
    {.model_type = "phi3", .vocab = 32064, .window_placement = WindowPlacement::kAll},
    {.model_type = "olmo2", .vocab = 50304, .qk_norm = QkNorm::kFullWidth,
     .norms = NormLayout::kPost},
    {.model_type = "internlm2", .vocab = 103168, .bias_key = "bias", .bias = true},
    {.model_type = "cohere", .vocab = 256000, .tie = true, .qk_norm = QkNorm::kFlag,
     .norms = NormLayout::kParallel, .norm = NormKind::kLayerNormNoBias},
    {.model_type = "starcoder2", .vocab = 49152, .kv_heads = 2, .act = "gelu_pytorch_tanh",
     .tie = true, .bias_key = "use_bias", .bias = true, .norm = NormKind::kLayerNorm,
     .plain_mlp = true, .bias_covers_mlp = true, .window_placement = WindowPlacement::kAll},
    {.model_type = "minicpm", .vocab = 32000},
    {.model_type = "ministral3", .vocab = 131072, .kv_heads = 8, .head_dim = 128,
     .window_placement = WindowPlacement::kAll},
    {.model_type = "mistral3", .text_config = "text_config", .vocab = 131072, .kv_heads = 8,
     .head_dim = 128, .window_placement = WindowPlacement::kAll},
    {.model_type = "seed_oss", .vocab = 155136, .kv_heads = 8, .head_dim = 128, .bias = true,
     .qkv_bias_only = true},
    {.model_type = "smollm3", .vocab = 128256, .kv_heads = 4, .tie = true,
     .window_placement = WindowPlacement::kQwen, .nope_every = 4},
    {.model_type = "exaone4", .vocab = 102400, .qk_norm = QkNorm::kPerHead,
     .norms = NormLayout::kPost, .window = 4096, .window_placement = WindowPlacement::kPattern,
     .full_every = 4, .pattern_key = "sliding_window_pattern", .global_nope = true},
    {.model_type = "granite", .vocab = 32000},
    {.model_type = "mimo", .vocab = 151936, .kv_heads = 32, .qkv_bias_always = true,
     .window = 4096, .window_placement = WindowPlacement::kQwen},
    {.model_type = "qwen3_vl", .text_config = "text_config", .vocab = 151936, .kv_heads = 32,
     .head_dim = 128, .qk_norm = QkNorm::kPerHead},
    {.model_type = "qwen3_vl_text", .vocab = 151936, .kv_heads = 32, .head_dim = 128,
     .qk_norm = QkNorm::kPerHead},
    // Llama-shaped MoE families.
    {.model_type = "qwen2_moe", .vocab = 151936, .kv_heads = 16, .qkv_bias_always = true,
     .window = 4096, .window_placement = WindowPlacement::kQwen, .moe = MoePlacement::kQwenStep,
     .shared_gate = true},
    {.model_type = "qwen3_vl_moe", .text_config = "text_config", .vocab = 151936, .kv_heads = 4,
     .head_dim = 128, .qk_norm = QkNorm::kPerHead, .moe = MoePlacement::kQwenStep},
    {.model_type = "granitemoe", .vocab = 32000, .moe = MoePlacement::kAll,
     .expert_width = "intermediate_size"},
    {.model_type = "granitemoeshared", .vocab = 32000, .moe = MoePlacement::kAll,
     .expert_width = "intermediate_size"},
    {.model_type = "olmoe", .vocab = 50304, .qk_norm = QkNorm::kFullWidth,
     .moe = MoePlacement::kAll, .expert_width = "intermediate_size"},
    {.model_type = "phimoe", .vocab = 32064, .kv_heads = 8, .bias = true,
     .norm = NormKind::kLayerNorm, .window_placement = WindowPlacement::kAll,
     .moe = MoePlacement::kAll, .expert_width = "intermediate_size"},
    {.model_type = "dbrx", .vocab = 32000, .norm = NormKind::kLayerNormNoBias,
     .moe = MoePlacement::kAll, .expert_width = "intermediate_size"},
    {.model_type = "glm4_moe", .vocab = 151552, .kv_heads = 8, .head_dim = 128,
     .qkv_bias_only = true, .qk_norm = QkNorm::kFlag, .moe = MoePlacement::kFirstDense,
     .first_dense = 1, .shared_experts = 1, .sigmoid_router = true},
    {.model_type = "ernie4_5_moe", .vocab = 103424, .kv_heads = 4, .tie = true,
     .bias_key = "use_bias", .moe = MoePlacement::kErnie, .shared_experts = 2,
     .correction_bias = true},
    // Ling / Ring v1 (inclusionAI's BailingMoeConfig, remote code): fused q/k/v with
    // use_qkv_bias, o_proj ("dense") with use_bias, softmax router without bias, shared experts
    // num_shared_experts · moe_intermediate_size wide, first_k_dense_replace dense layers.
    {.model_type = "bailing_moe", .vocab = 30592, .bias_key = "use_qkv_bias",
     .qkv_bias_only = true, .o_bias_key = "use_bias", .o_bias = true,
     .moe = MoePlacement::kFirstDense},
    // Step-3.7-Flash (stepfun-ai; the vLLM recipe's "hybrid SWA/Global attention" at 3:1, 288
    // experts top-8 with one shared expert, sigmoid routing, 3 MTP layers). layer_types says which
    // layers slide; the text fields may sit at the top level or in a text_config.
    {.model_type = "step3p7", .text_config = "text_config", .nested_optional = true,
     .window_placement = WindowPlacement::kAll, .moe = MoePlacement::kFirstDense,
     .shared_experts = 1, .sigmoid_router = true},
    {.model_type = "minimax_m2", .vocab = 200064, .kv_heads = 8, .head_dim = 128,
     .qk_norm = QkNorm::kFlagFull, .moe = MoePlacement::kAll,
     .expert_width = "intermediate_size", .sigmoid_router = true},
    {.model_type = "llama4", .text_config = "text_config", .vocab = 202048, .kv_heads = 8,
     .head_dim = 128, .qk_norm = QkNorm::kL2Flag, .nope_every = 4,
     .moe = MoePlacement::kInterleave, .dense_width = "intermediate_size_mlp",
     .expert_width = "intermediate_size", .shared_experts = 1, .sigmoid_scores = true},
    {.model_type = "llama4_text", .vocab = 202048, .kv_heads = 8, .head_dim = 128,
     .qk_norm = QkNorm::kL2Flag, .nope_every = 4, .moe = MoePlacement::kInterleave,
     .dense_width = "intermediate_size_mlp", .expert_width = "intermediate_size",
     .shared_experts = 1, .sigmoid_scores = true},
    // GatedDeltaNet hybrids.
    // Qwen3-Next: its checkpoints store one MTP layer (mtp.* tensors; llama.cpp's conversion
    // writes it as blk.48.nextn.* of the 80B-A3B) that Qwen3NextConfig has no field for;
    // vLLM's Qwen3NextMultiTokenPredictor builds getattr(config, "num_nextn_predict_layers", 1).
    {.model_type = "qwen3_next", .reader = ReaderKind::kQwenHybrid, .vocab = 151936,
     .kv_heads = 2, .head_dim = 256, .moe = MoePlacement::kQwenStep, .shared_gate = true,
     .mtp_modules = 1},
    {.model_type = "qwen3_5", .reader = ReaderKind::kQwenHybrid, .text_config = "text_config",
     .vocab = 248320, .kv_heads = 2, .head_dim = 256},
    {.model_type = "qwen3_5_moe", .reader = ReaderKind::kQwenHybrid,
     .text_config = "text_config", .vocab = 248320, .kv_heads = 2, .head_dim = 256,
     .moe = MoePlacement::kQwenStep, .shared_gate = true},
    // Multi-head latent attention.
    {.model_type = "deepseek_v3", .reader = ReaderKind::kMla, .vocab = 129280,
     .moe = MoePlacement::kFirstDense, .first_dense = 3, .shared_experts = 1,
     .sigmoid_router = true, .mtp_stores_embeddings = true},
    {.model_type = "kimi_k2", .reader = ReaderKind::kMla, .vocab = 129280,
     .moe = MoePlacement::kFirstDense, .first_dense = 3, .shared_experts = 1,
     .sigmoid_router = true, .mtp_stores_embeddings = true},
    {.model_type = "deepseek_v2", .reader = ReaderKind::kMla, .vocab = 102400,
     .moe = MoePlacement::kFirstDense},
    {.model_type = "kimi_k25", .reader = ReaderKind::kMla, .text_config = "text_config",
     .nested_optional = true, .vocab = 129280, .moe = MoePlacement::kFirstDense, .first_dense = 3, .shared_experts = 1,
     .sigmoid_router = true, .mtp_stores_embeddings = true},
    // DeepSeek Sparse Attention: MLA plus the lightning indexer.
    {.model_type = "deepseek_v32", .reader = ReaderKind::kMla, .vocab = 129280,
     .moe = MoePlacement::kFirstDense, .first_dense = 3, .shared_experts = 1,
     .sigmoid_router = true, .mtp_stores_embeddings = true},
    {.model_type = "glm_moe_dsa", .reader = ReaderKind::kMla, .vocab = 154880,
     .moe = MoePlacement::kFirstDense, .first_dense = 3, .shared_experts = 1,
     .sigmoid_router = true},
    // GLM-4.7-Flash (Glm4MoeLiteConfig): DeepSeek-V2's layout, MLA with a noaux_tc router.
    {.model_type = "glm4_moe_lite", .reader = ReaderKind::kMla, .vocab = 154880,
     .moe = MoePlacement::kFirstDense, .first_dense = 1, .shared_experts = 1,
     .sigmoid_router = true},
    {.model_type = "kimi_linear", .reader = ReaderKind::kKimiLinear, .vocab = 163840,
     .moe = MoePlacement::kFirstDense, .first_dense = 1, .shared_experts = 1,
     .sigmoid_router = true},
    // DeepSeek-V4 (deepseek_ref: sgl-project's copies of its configs).
    {.model_type = "deepseek_v4", .reader = ReaderKind::kDeepseekV4, .vocab = 129280,
     .kv_heads = 1, .head_dim = 512, .moe = MoePlacement::kAll, .shared_experts = 1,
     .sigmoid_router = true},
    {.model_type = "deepseek_ref", .reader = ReaderKind::kDeepseekV4, .vocab = 129280,
     .kv_heads = 1, .head_dim = 512, .moe = MoePlacement::kAll, .shared_experts = 1,
     .sigmoid_router = true},
    // Sliding-window families.
    {.model_type = "gpt_oss", .vocab = 201088, .kv_heads = 8, .head_dim = 64, .bias = true,
     .window = 128, .window_placement = WindowPlacement::kPattern, .full_every = 2,
     .sinks = true, .moe = MoePlacement::kAll, .expert_width = "intermediate_size",
     .router_bias = true, .expert_bias = true},
    {.model_type = "gemma2", .vocab = 256000, .kv_heads = 4, .head_dim = 256,
     .act = "gelu_pytorch_tanh", .act_key = "hidden_activation", .tie = true,
     .norms = NormLayout::kSandwich, .window = 4096,
     .window_placement = WindowPlacement::kPattern, .full_every = 2},
    {.model_type = "gemma3", .text_config = "text_config", .vocab = 262208, .kv_heads = 4,
     .head_dim = 256, .act = "gelu_pytorch_tanh", .act_key = "hidden_activation", .tie = true,
     .qk_norm = QkNorm::kPerHead, .norms = NormLayout::kSandwich, .window = 4096,
     .window_placement = WindowPlacement::kPattern, .full_every = 6,
     .pattern_key = "sliding_window_pattern"},
    {.model_type = "gemma3_text", .vocab = 262208, .kv_heads = 4, .head_dim = 256,
     .act = "gelu_pytorch_tanh", .act_key = "hidden_activation", .tie = true,
     .qk_norm = QkNorm::kPerHead, .norms = NormLayout::kSandwich, .window = 4096,
     .window_placement = WindowPlacement::kPattern, .full_every = 6,
     .pattern_key = "sliding_window_pattern"},
    // Gemma 4 (transformers' Gemma4TextConfig / modular_gemma4.py): layer_types is required;
    // the global layers take global_head_dim and, with attention_k_eq_v, no v_proj and
    // num_global_key_value_heads; enable_moe_block adds routed experts beside the dense MLP.
    // No window default: the released sizes differ (512, 1024), so sliding layers need
    // sliding_window.
    {.model_type = "gemma4", .reader = ReaderKind::kGemma4, .text_config = "text_config",
     .vocab = 262144, .head_dim = 256, .act = "gelu_pytorch_tanh",
     .act_key = "hidden_activation", .tie = true, .qk_norm = QkNorm::kPerHead,
     .norms = NormLayout::kSandwich, .window_placement = WindowPlacement::kAll},
    {.model_type = "gemma4_text", .reader = ReaderKind::kGemma4, .vocab = 262144,
     .head_dim = 256, .act = "gelu_pytorch_tanh", .act_key = "hidden_activation", .tie = true,
     .qk_norm = QkNorm::kPerHead, .norms = NormLayout::kSandwich,
     .window_placement = WindowPlacement::kAll},
    // State-space models.
    {.model_type = "mamba", .reader = ReaderKind::kMamba1, .vocab = 50280, .tie = true},
    {.model_type = "falcon_mamba", .reader = ReaderKind::kMamba1, .vocab = 50280, .tie = true},
    {.model_type = "mamba2", .reader = ReaderKind::kMamba2, .vocab = 32768},
    {.model_type = "jamba", .reader = ReaderKind::kJamba, .vocab = 65536, .kv_heads = 8},
    {.model_type = "falcon_h1", .reader = ReaderKind::kFalconH1, .vocab = 128000, .kv_heads = 8},
    {.model_type = "granitemoehybrid", .reader = ReaderKind::kGraniteHybrid, .vocab = 32000},
    {.model_type = "nemotron_h", .reader = ReaderKind::kNemotronH, .vocab = 131072,
     .kv_heads = 8, .head_dim = 128},
    // MiMo-V2-Flash (XiaomiMiMo's remote MiMoV2FlashConfig; parse_mimo.cc): hybrid_layer_pattern
    // says which layers slide, the sliding layers take the swa_* head shapes, v_head_dim is
    // narrower than head_dim, sink logits per add_*_attention_sink_bias; MoE per moe_layer_freq,
    // sigmoid router with e_score_correction_bias, no shared expert. The remote class's
    // defaults are not taken: every size is required.
    {.model_type = "mimo_v2_flash", .reader = ReaderKind::kMimoV2Flash,
     .moe = MoePlacement::kLayerFlags, .sigmoid_router = true},
    // MiniMax-M3 (parse_minimax_m3.cc; MiniMaxAI's remote MiniMaxM3VLConfig and the engines'
    // minimax_m3 models): GQA whose sparse layers (sparse_attention_config) attend the blocks an
    // indexer selects; dense MLPs then MoE per moe_layer_freq (routed experts of
    // intermediate_size, a shared expert of shared_intermediate_size, sigmoid router with
    // e_score_correction_bias); per-head q/k norms. minimax_m3_vl nests it under text_config
    // (whose model_type is absent in the release). No class defaults: every size is required.
    {.model_type = "minimax_m3", .reader = ReaderKind::kMiniMaxM3, .qk_norm = QkNorm::kFlagFull,
     .moe = MoePlacement::kLayerFlags, .dense_width = "dense_intermediate_size",
     .expert_width = "intermediate_size", .sigmoid_router = true},
    {.model_type = "minimax_m3_vl", .reader = ReaderKind::kMiniMaxM3,
     .text_config = "text_config", .qk_norm = QkNorm::kFlagFull,
     .moe = MoePlacement::kLayerFlags, .dense_width = "dense_intermediate_size",
     .expert_width = "intermediate_size", .sigmoid_router = true},
    // Laguna (poolside's LagunaForCausalLM; transformers' LagunaConfig, models/laguna;
    // parse_laguna.cc): query heads per layer (num_attention_heads_per_layer) over 8 KV heads of
    // 128, per-head q/k RMSNorm, layer_types full / sliding (sliding_window 512), a softplus output
    // gate from its own projection g_proj (gating), mlp_layer_types dense / sparse (default: the
    // first layer dense), a sigmoid router with e_score_correction_bias and one shared expert
    // of shared_expert_intermediate_size.
    {.model_type = "laguna", .reader = ReaderKind::kLaguna, .vocab = 100352, .kv_heads = 8,
     .head_dim = 128, .qk_norm = QkNorm::kPerHead, .window = 512,
     .window_placement = WindowPlacement::kNone, .moe = MoePlacement::kMlpTypes, .first_dense = 1,
     .sigmoid_router = true},
    // Per-layer heterogeneous blocks.
    {.model_type = "nemotron-nas", .reader = ReaderKind::kNemotronNas, .vocab = 32000},
};

inline constexpr size_t kFamilyCount = std::size(kFamilies);

// Model types opscope knows of but does not read, each with why: the unsupported-type error
// says it, instead of only listing what is supported.
struct RefusedFamily {
  std::string_view model_type, why;
};
inline constexpr RefusedFamily kRefusedFamilies[] = {
    {"kimi_k3", "its KDA / MLA hybrid adds a latent MoE with a norm (routed_expert_hidden_size, "
                "latent_moe_use_norm), block attention residuals (attn_res_block_size), an MLA "
                "output gate and a 'situ' activation, none of which is modelled"},
    {"hunyuan_v1_moe", "no public config.json with this model_type was found (the published "
                       "Hunyuan-A13B config is remote code, model_type 'hunyuan', per-layer lists)"},
};

constexpr const RefusedFamily* FindRefusedFamily(std::string_view model_type) {
  for (const RefusedFamily& f : kRefusedFamilies) {
    if (f.model_type == model_type) return &f;
  }
  return nullptr;
}

// The model types opscope reads, in table order (`opscope llm --help`).
inline constexpr std::array<std::string_view, kFamilyCount> kSupportedModelTypes = [] {
  std::array<std::string_view, kFamilyCount> names{};
  for (size_t i = 0; i < kFamilyCount; ++i) names[i] = kFamilies[i].model_type;
  return names;
}();

// The row of a model_type, or nullptr.
constexpr const Family* FindFamily(std::string_view model_type) {
  for (const Family& f : kFamilies) {
    if (f.model_type == model_type) return &f;
  }
  return nullptr;
}

}  // namespace opscope::import::hf
