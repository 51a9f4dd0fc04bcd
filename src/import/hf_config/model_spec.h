// The typed description of an LLM that an HF config.json defines: sizes, the kind of every
// layer (attention — full, sliding-window, chunked, DSA-sparse —, MLA, GatedDeltaNet, Kimi
// Delta Attention, Mamba, Mamba2; dense MLP, MoE, latent MoE), per-layer overrides
// (heterogeneous blocks), its dtype and checkpoint quantization. Built by ParseHfConfig from
// config fields only, never from the model's name (families.h says which reader reads which
// model_type); the step graph is built from it (step_graph.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/format.h"
#include "import/hf_config/families.h"
#include "import/hf_config/quant_config.h"
#include "support/error.h"

namespace opscope::import::hf {

// kLinear: the block is one hidden -> hidden projection (DeciLM's replace_with_linear).
// kMamba1: selective scan (Mamba, Jamba). kKda: Kimi Delta Attention. kDeepseekV4: shared-KV
// MQA over a sliding window plus a compressed cache (DeepseekV4Spec).
enum class Mixer : uint8_t {
  kNone, kAttention, kMla, kGatedDeltaNet, kMamba2, kLinear, kMamba1, kKda, kDeepseekV4
};
enum class Ffn : uint8_t { kNone, kDense, kMoe, kLinear };
// The MLP's activation: gated (SwiGLU / GeGLU: gate and up projections), squared ReLU
// (Nemotron-H: up projection only) or plain GELU (StarCoder2: up projection only).
enum class Activation : uint8_t { kSiluGated, kGeluGated, kRelu2, kGelu };

struct LayerSpec {
  Mixer mixer = Mixer::kNone;
  int64_t window = 0;  // sliding-window attention: keys per query (0 = full attention)
  Ffn ffn = Ffn::kNone;
  // Per-layer attention details (0 / defaults: the model's).
  int64_t chunk = 0;     // chunked local attention: a query sees its own chunk (Llama-4)
  bool rope = true;      // false: a NoPE layer (Llama-4, SmolLM3)
  bool sparse = false;   // attends only the keys its indexer selects (DSA, MiniMax-M3's MSA)
  bool indexer_shared = false;  // DSA: reuses the previous layer's selection (no indexer weights)
  int64_t compress = 0;  // DeepSeek-V4: tokens per entry of the layer's long-range cache (0: none;
                         // 4: CSA, entries chosen by an indexer; 128: HCA, all entries read)
  int64_t heads = 0, kv_heads = 0, head_dim = 0;  // 0: spec.attn's (DeciLM, Gemma-4 global)
  int64_t v_head_dim = 0;  // 0: spec.attn's (MiMo-V2-Flash sliding layers: swa_v_head_dim)
  bool sinks = false;      // per-head sink logits in this layer even when spec.attn has none
  bool kv_shared = false;  // reuses an earlier layer's K/V: no k/v projections, no cache
  // Keys double as values (Gemma-4 global layers, attention_k_eq_v): no v projection; V is the
  // k projection through a weightless norm, K the same through k_norm and RoPE, and both are
  // cached, as transformers' Gemma4TextAttention does.
  bool k_eq_v = false;
  int64_t ffn_width = 0;   // dense MLP width, 0: spec.mlp.intermediate (DeciLM ffn_mult)
  Mixer parallel = Mixer::kNone;  // a second mixer on the same normed input (Falcon-H1)
  bool hash_routed = false;       // DeepSeek-V4: experts chosen by token id (no learned top-k)
};


// An attention-output gate computed by a projection of its own (Laguna's g_proj, transformers'
// LagunaAttention): g = softplus(x · W_gᵀ) from the attention's input x, and the attention
// output o (heads · d_v per token) becomes o ⊙ g before o_proj. kPerHead: W_g [heads, hidden],
// one gate per head broadcast over its d_v elements; kPerElement: W_g [heads · d_v, hidden].
enum class GateProj : uint8_t { kNone, kPerHead, kPerElement };

struct AttentionSpec {
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  // The value heads' width when it differs from the key heads' (MiMo-V2-Flash: q and k of 192,
  // v of 128); 0: head_dim.
  int64_t v_head_dim = 0;
  bool qkv_bias = false, o_bias = false;
  bool qk_norm = false;      // RMSNorm over head_dim on q and k (Qwen3, Gemma-3, Qwen3-Next)
  bool output_gate = false;  // q_proj also yields a sigmoid gate on the output (Qwen3-Next)
  GateProj gate_proj = GateProj::kNone;  // a softplus gate from its own projection (Laguna)
  bool sinks = false;        // one learned sink logit per head (gpt-oss)
  bool rope = true;          // Nemotron-H attention has no positional encoding
  bool qk_norm_full = false; // the q/k norm spans the whole projection (OLMo-2, MiniMax-M2)
  bool qk_norm_weightless = false;  // an L2 norm with no weight (Llama-4)
  bool v_norm = false;       // a weightless RMSNorm over each value head (Gemma-4)
};

// Multi-head latent attention (DeepSeek-V3, Kimi-K2).
struct MlaSpec {
  int64_t q_lora_rank = 0;  // 0: q_proj straight from the hidden state
  int64_t kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
};

// A sparse-attention indexer: `heads` index heads of `head_dim` score every cached token
// against one cached index key per token; the attention then sees only what it selects.
//  * DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5; block 0): index queries from the q
//    latent, the heads' scores summed with learned per-head weights, the `topk` best tokens
//    kept for every query head;
//  * MiniMax Sparse Attention (MiniMax-M3; block B): index queries and the index key from the
//    hidden state, one index head per KV head, a block of B tokens scored by its best token,
//    each KV head's query group attending its own `topk` best blocks (topk·B keys).
struct IndexerSpec {
  int64_t heads = 0, head_dim = 0, topk = 0;  // 0 heads: no indexer
  int64_t block = 0;  // tokens per selected block (0: tokens selected one by one)
};

// DeepSeek-V4 (DeepseekV4Config): shared-KV MQA (one head of head_dim, K = V) over a sliding
// window, plus per layer a compressed cache (one entry per compress_ratio tokens; CSA layers,
// ratio 4, choose index_topk entries with an indexer, HCA layers, ratio 128, read all);
// grouped low-rank output projection (o_groups groups -> o_lora_rank each -> hidden);
// hc_mult parallel residual streams mixed by hyper-connections; hash-routed MoE layers.
struct DeepseekV4Spec {
  int64_t hc_mult = 0, o_groups = 0, o_lora_rank = 0;
  int64_t q_lora_rank = 0, window = 0;  // the sliding window every layer attends over
};

// Kimi Delta Attention (Kimi-Linear): per head a [head_dim, head_dim] state updated by a
// gated delta rule with channel-wise decay; short convolutions on q, k and v.
struct KdaSpec {
  int64_t heads = 0, head_dim = 0, conv_kernel = 0;
};

// Mamba (selective scan): in_proj to 2·inner, conv, x_proj to dt_rank + 2·state, dt_proj,
// state [inner, state_size] per sequence.
struct Mamba1Spec {
  int64_t inner = 0, state_size = 0, conv_kernel = 0, dt_rank = 0;
  bool conv_bias = true, proj_bias = false;
  bool bcdt_norms = false;  // RMSNorms with weights on dt, B and C (Jamba)
};

// GatedDeltaNet linear attention (Qwen3-Next, Qwen3.5).
struct GdnSpec {
  int64_t key_heads = 0, value_heads = 0, key_head_dim = 0, value_head_dim = 0;
  int64_t conv_kernel = 0;
  int64_t key_dim() const { return key_heads * key_head_dim; }
  int64_t value_dim() const { return value_heads * value_head_dim; }
  int64_t conv_dim() const { return 2 * key_dim() + value_dim(); }
};

// Mamba2 mixer (Mamba-Codestral, Nemotron-H).
struct Mamba2Spec {
  int64_t heads = 0, head_dim = 0, state_size = 0, groups = 0, conv_kernel = 0;
  bool conv_bias = true, proj_bias = false;
  bool gated_norm = true;  // the gated RMSNorm before out_proj (Falcon-H1: mamba_rms_norm)
  int64_t inner() const { return heads * head_dim; }
  int64_t conv_dim() const { return inner() + 2 * groups * state_size; }
  int64_t in_proj_out() const { return 2 * inner() + 2 * groups * state_size + heads; }
};

struct MlpSpec {
  int64_t intermediate = 0;
  Activation act = Activation::kSiluGated;
  bool bias = false;
};

// Multi-token prediction modules (num_nextn_predict_layers): stored beside the model, not in
// params_total (DESIGN), counted as params_mtp. Each module: two norms, a projection
// [hidden, 2·hidden], its blocks (by default one decoder layer like the model's last), a final
// norm; with `own_embeddings`, its own copy of the embedding table and LM head (DeepSeek's
// checkpoints store one per module).
struct MtpSpec {
  int64_t modules = 0;
  std::vector<LayerSpec> blocks;
  bool own_embeddings = false;
};

// An EAGLE-3 draft head (LlamaForCausalLMEagle3: vLLM's, SGLang's and TensorRT-LLM's EAGLE-3
// drafter): fc [aux · target_hidden -> hidden] over the target's hidden states from `aux`
// layers, then decoder layers of which the first reads [input_norm(embedding),
// hidden_norm(h)] (2 · hidden wide) and keeps h as its residual, and an LM head over the draft
// vocabulary. The token embedding is the target's (the head stores none; engines share it), so
// the head's graph takes it as an input, not a weight. Active when aux > 0.
struct Eagle3Spec {
  int64_t aux = 0;            // target layers whose hidden states fc reads (3)
  int64_t target_hidden = 0;  // the target's hidden size (target_hidden_size, else hidden)
  int64_t draft_vocab = 0;    // rows of the LM head (draft_vocab_size, else the vocabulary)
  // Norms of the aux · target_hidden features before fc (speculators' heads): one RMSNorm
  // over them all (norm_before_fc), one per aux layer's chunk (fc_norm).
  bool norm_before_fc = false;
  bool fc_chunk_norms = false;
};

struct MoeSpec {
  int64_t experts = 0, top_k = 0, intermediate = 0;
  Activation act = Activation::kSiluGated;
  int64_t shared_intermediate = 0;     // total width of the shared expert(s); 0 = none
  bool shared_gate = false;            // sigmoid gate [1, hidden] on the shared expert (Qwen)
  bool router_bias = false;            // gpt-oss
  bool expert_bias = false;            // gpt-oss: biases on the expert projections
  bool score_correction_bias = false;  // e_score_correction_bias (DeepSeek-V3, Nemotron-H)
  bool sigmoid_scores = false;         // sigmoid router scores instead of softmax
  // Latent MoE (Nemotron-3 moe_latent_size): the routed experts run in a latent width; the
  // token is projected hidden -> latent before them and latent -> hidden after them.
  int64_t latent = 0;
  bool router_norm = false;      // the router normalises and scales its input (Gemma-4)
  bool parallel_dense = false;   // MoE layers also run the dense MLP, summed (Gemma-4)
};

// The formats a model's own files store its step-graph weights in, read from their headers
// (a GGUF file: import/gguf; a safetensors checkpoint: import/safetensors). The recipe takes
// each weight named here in its stored format unless --weights replaces them (recipe.h).
struct StoredWeights {
  std::string source;  // the file or folder read, for the recipe label
  // Step-graph weight name ("layers.3.attn.q_proj.weight") -> its stored format.
  std::map<std::string, format::Format, std::less<>> formats;
  // Step-graph weight name -> the bytes of its tensors in the files, scales included: where
  // they differ from the format's bytes for the weight's shape (a fused weight whose parts
  // each carry a per-tensor scale, static activation scales), the model's weight bytes are
  // the files' (llm::StoredWeightBytes).
  std::map<std::string, uint64_t, std::less<>> bytes;
  // llama.cpp's layout: q, k and v as three matrices (their types may differ), not one fused
  // qkv_proj.
  bool separate_qkv = false;
};

struct ModelSpec {
  std::string origin;      // the file or preset, for messages
  std::string model_type;  // of the text model ("qwen3_5_moe_text" -> as written)
  int64_t hidden = 0, vocab = 0;
  bool tie_embeddings = false;
  NormLayout norm_layout = NormLayout::kPre;  // Gemma: kSandwich; OLMo-2: kPost; Cohere: kParallel
  NormKind norm = NormKind::kRms;
  bool lm_head_bias = false;
  format::Format dtype = format::Format::kBf16;
  std::optional<format::Format> ssm_state_dtype;  // mamba_ssm_dtype / mamba_ssm_cache_dtype
  CheckpointQuant quant;  // quantization_config (or hf_quant_config.json: model_dir.h)
  std::shared_ptr<const StoredWeights> stored;  // from the model's files, when read
  AttentionSpec attn;
  MlaSpec mla;
  IndexerSpec indexer;
  DeepseekV4Spec dsv4;
  GdnSpec gdn;
  KdaSpec kda;
  Mamba2Spec mamba;
  Mamba1Spec mamba1;
  MlpSpec mlp;
  MoeSpec moe;
  MtpSpec mtp;
  Eagle3Spec eagle3;
  // Per-layer embeddings (Gemma-4 PLE): a table [per_layer_vocab, layers·per_layer_width]
  // looked up per token, projected and gated into every layer.
  int64_t per_layer_width = 0, per_layer_vocab = 0;
  std::vector<LayerSpec> layers;
  // The config's max_position_embeddings: the positions the model was trained for (nothing is
  // sized by it; a workload past it is warned about). Absent when the config does not say.
  std::optional<int64_t> max_position_embeddings;
  std::vector<std::string> assumptions;  // defaults taken, reported with the analysis

  int64_t num_layers() const { return static_cast<int64_t>(layers.size()); }
};

struct ParseOptions {
  // --model-type NAME: read the config with the reader of NAME (a known type) instead of
  // its own model_type; stated in `assumptions`.
  std::optional<std::string> model_type;
};

// Reads a config.json's text. `origin` names the file (or preset) in every error, e.g.
// "config.json: field 'num_key_value_heads': 5 does not divide num_attention_heads 32".
Result<ModelSpec> ParseHfConfig(std::string_view json_text, const std::string& origin,
                                const ParseOptions& options = {});

}  // namespace opscope::import::hf
