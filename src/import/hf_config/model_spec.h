// The typed description of an LLM that an HF config.json defines: sizes, the kind of every
// layer (attention, sliding-window attention, MLA, GatedDeltaNet, Mamba2; dense MLP or MoE),
// its dtype and checkpoint quantization. Built by ParseHfConfig from config fields only,
// never from the model's name; the step graph is built from it (step_graph.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/format.h"
#include "import/hf_config/quant_config.h"
#include "support/error.h"

namespace opscope::import::hf {

enum class Mixer : uint8_t { kNone, kAttention, kMla, kGatedDeltaNet, kMamba2 };
enum class Ffn : uint8_t { kNone, kDense, kMoe };
// The MLP's activation: gated (SwiGLU / GeGLU: gate and up projections) or squared ReLU
// (Nemotron-H: up projection only).
enum class Activation : uint8_t { kSiluGated, kGeluGated, kRelu2 };

struct LayerSpec {
  Mixer mixer = Mixer::kNone;
  int64_t window = 0;  // sliding-window attention: keys per query (0 = full attention)
  Ffn ffn = Ffn::kNone;
};

struct AttentionSpec {
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  bool qkv_bias = false, o_bias = false;
  bool qk_norm = false;      // RMSNorm over head_dim on q and k (Qwen3, Gemma-3, Qwen3-Next)
  bool output_gate = false;  // q_proj also yields a sigmoid gate on the output (Qwen3-Next)
  bool sinks = false;        // one learned sink logit per head (gpt-oss)
  bool rope = true;          // Nemotron-H attention has no positional encoding
};

// Multi-head latent attention (DeepSeek-V3, Kimi-K2).
struct MlaSpec {
  int64_t q_lora_rank = 0;  // 0: q_proj straight from the hidden state
  int64_t kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;
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
  int64_t inner() const { return heads * head_dim; }
  int64_t conv_dim() const { return inner() + 2 * groups * state_size; }
  int64_t in_proj_out() const { return 2 * inner() + 2 * groups * state_size + heads; }
};

struct MlpSpec {
  int64_t intermediate = 0;
  Activation act = Activation::kSiluGated;
  bool bias = false;
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
};

struct ModelSpec {
  std::string origin;      // the file or preset, for messages
  std::string model_type;  // of the text model ("qwen3_5_moe_text" -> as written)
  int64_t hidden = 0, vocab = 0;
  bool tie_embeddings = false;
  bool sandwich_norms = false;  // Gemma: norms after attention and after the MLP as well
  format::Format dtype = format::Format::kBf16;
  std::optional<format::Format> ssm_state_dtype;  // mamba_ssm_dtype / mamba_ssm_cache_dtype
  CheckpointQuant quant;  // quantization_config (or hf_quant_config.json: model_dir.h)
  AttentionSpec attn;
  MlaSpec mla;
  GdnSpec gdn;
  Mamba2Spec mamba;
  MlpSpec mlp;
  MoeSpec moe;
  std::vector<LayerSpec> layers;
  std::vector<std::string> assumptions;  // defaults taken, reported with the analysis

  int64_t num_layers() const { return static_cast<int64_t>(layers.size()); }
};

// The model types opscope reads, in the order `opscope llm --help` lists them.
inline constexpr std::string_view kSupportedModelTypes[] = {
    "llama",     "mistral",     "qwen2",   "qwen3",       "qwen3_moe", "qwen3_next",
    "qwen3_5",   "qwen3_5_moe", "mixtral", "deepseek_v3", "kimi_k2",   "gpt_oss",
    "gemma2",    "gemma3",      "gemma3_text", "mamba2",  "nemotron_h"};

// Reads a config.json's text. `origin` names the file (or preset) in every error, e.g.
// "config.json: field 'num_key_value_heads': 5 does not divide num_attention_heads 32".
Result<ModelSpec> ParseHfConfig(std::string_view json_text, const std::string& origin);

}  // namespace opscope::import::hf
