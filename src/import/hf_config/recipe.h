// The quantization recipe of an LLM step: which format every weight tensor is stored in, and
// the formats of activations, KV cache and recurrent state. Defaults come from the config
// (dtype, quantization_config, mamba_ssm_dtype); options override them.
//
// Weights (docs/llm.md has the table):
//  * the formats the model's files store (a GGUF file, a safetensors checkpoint: ModelSpec::
//    stored), weight by weight; a weight the files do not hold falls to the rules below.
//  * the checkpoint's own quantization (quant_config.h: quantization_config or
//    hf_quant_config.json), per module: each Linear module in the format its checkpoint
//    declares, excluded modules in the model dtype; its activation and KV formats too.
//  * a format of the formats table (--weights nvfp4): every matrix of the layers (attention
//    and MLA projections, MLP, routed and shared experts, GatedDeltaNet and Mamba2
//    projections); embeddings, LM head, router, norms, biases, sinks and conv weights keep the
//    model dtype (e_score_correction_bias: f32).
//  * a llama.cpp file type (q4_0 q4_1 q5_0 q5_1 q8_0 q2_k q3_k_m q4_k_m q5_k_m q6_k, and
//    mxfp4_moe below): per
//    tensor as llama.cpp's llama_tensor_get_type chooses (src/llama-quant.cpp): the output
//    tensor gets q6_k (q8_0 when its rows are not a multiple of 256), attention-V and some
//    FFN-down tensors more bits, 1-D tensors, norms, the router and conv weights f32, and a
//    row length that is not a multiple of 256 falls back to a 32-block type (q4_k -> q5_0,
//    q5_k -> q5_1, q6_k -> q8_0, q2_k/q3_k -> q4_0), as llama.cpp's tensor_type_fallback.
//    mxfp4_moe (LLAMA_FTYPE_MOSTLY_MXFP4_MOE, the type of ggml-org's gpt-oss files): the
//    routed experts (3-D tensors, ne[2] > 1) in mxfp4, every other quantized tensor —
//    attention, dense and shared-expert matrices, embeddings and output alike — in q8_0, the
//    never-quantized ones in f32 (llama_tensor_get_type's MXFP4_MOE branches).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/format.h"
#include "import/hf_config/model_spec.h"
#include "support/error.h"

namespace opscope::import::hf {

// llama.cpp file types (LLAMA_FTYPE_MOSTLY_*) opscope maps per tensor.
enum class GgufFileType : uint8_t {
  kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0, kQ2K, kQ3KM, kQ4KM, kQ5KM, kQ6K, kMxfp4Moe
};
std::optional<GgufFileType> ParseGgufFileType(std::string_view name);
std::string_view GgufFileTypeName(GgufFileType t);
inline constexpr std::string_view kGgufFileTypeNames[] = {
    "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_k", "q3_k_m", "q4_k_m", "q5_k_m", "q6_k",
    "mxfp4_moe"};
static_assert(std::size(kGgufFileTypeNames) == static_cast<std::size_t>(GgufFileType::kMxfp4Moe) + 1,
              "one name per llama.cpp file type");

// What a weight tensor is, for choosing its format (llama.cpp's tensor categories, plus the
// tensors llama.cpp never quantizes).
enum class WeightRole : uint8_t {
  kEmbedding,      // token_embd
  kLmHead,         // output
  kAttnQ, kAttnK, kAttnV,
  kAttnQkv,        // a fused projection (attention-V-like in llama.cpp)
  kAttnKvB,        // MLA kv_b_proj (attention-V-like)
  kAttnOut,
  kFfnGate,        // dense or shared gate(+up) projection
  kFfnUp,          // up projection of a non-gated MLP
  kFfnDown,
  kExpertGate,     // routed experts [E, out, k]
  kExpertUp,
  kExpertDown,
  kOtherMatrix,    // MLA q_a/q_b/kv_a, GatedDeltaNet and Mamba2 projections
  kRouter,         // ffn_gate_inp: never quantized
  kConv,           // ssm_conv1d: never quantized
  kNorm,
  kVector,         // biases, sinks, A_log, D, dt_bias: 1-D or bias tensors
  kScoreBias,      // e_score_correction_bias (f32 in checkpoints)
};

struct RecipeOptions {
  std::optional<std::string> weights{}, activations{}, kv{}, state{};  // as typed
};

struct Recipe {
  std::optional<GgufFileType> gguf;  // per-tensor llama.cpp mapping
  // --weights: a uniform matrix format and which matrices it covers (kNone: all in the
  // model dtype).
  CheckpointQuant::Scope scope = CheckpointQuant::Scope::kNone;
  format::Format matrix = format::Format::kBf16;
  // The checkpoint's per-module formats, when --weights does not replace them.
  std::optional<CheckpointQuant> checkpoint;
  // The formats the model's files store (model_spec.h StoredWeights), when --weights does not
  // replace them: a weight named there takes its stored format, before any rule above.
  std::shared_ptr<const StoredWeights> stored;
  // q, k and v as three matrices (llama.cpp: a llama.cpp file type or a GGUF file), not one
  // fused qkv_proj.
  bool separate_qkv = false;
  format::Format dtype = format::Format::kBf16;       // norms, embeddings, biases (HF)
  format::Format compute = format::Format::kBf16;     // activations between ops
  format::Format gemm_input = format::Format::kBf16;  // activations entering matrix ops
  format::Format kv = format::Format::kBf16;
  format::Format state = format::Format::kBf16;       // GatedDeltaNet / SSM state
  format::Format conv_state = format::Format::kBf16;  // causal-conv state (compute dtype)
  // For reports: "q4_k_m (llama.cpp)", "fp8_e4m3_b128x128 (config) + bf16", ...
  std::string weights_label, activations_label;
  std::vector<std::string> assumptions;
};

// Resolves options against the config's defaults. Errors name the option and value
// ("--weights 'q4_x': unknown format or llama.cpp file type ...").
Result<Recipe> ResolveRecipe(const ModelSpec& spec, const RecipeOptions& options);

// Where a weight sits, for the per-layer llama.cpp rules.
struct WeightSite {
  WeightRole role;
  int64_t layer = -1;  // -1 outside the layers
  int64_t row = 0;     // the row length k (GGUF blocks run along it)
};

// Chooses formats of weight tensors. Precomputes the layer indices llama.cpp's counters
// would reach (attention-V tensors in layer order, FFN-down tensors).
class WeightFormats {
 public:
  WeightFormats(const ModelSpec& spec, const Recipe& recipe);
  // The format of one weight; an error names the tensor when its rows do not fit the
  // recipe's block and no fallback exists.
  Result<format::Format> Choose(const WeightSite& site, std::string_view tensor_name) const;
  // The format the recipe assigns, before the row-length check (llama.cpp's fallbacks aside).
  format::Format Assigned(const WeightSite& site, std::string_view tensor_name) const;

 private:
  format::Format Gguf(const WeightSite& site) const;
  format::Format FromCheckpoint(const WeightSite& site, std::string_view tensor_name) const;

  const ModelSpec& spec_;
  const Recipe& recipe_;
  std::vector<int64_t> attn_v_index_;    // per layer: index among attention-V tensors
  int64_t attn_v_count_ = 0;
  std::vector<int64_t> ffn_down_index_;  // per layer: llama.cpp's i_layer for ffn_down
};

// The Hugging Face module names a step-graph weight stands for ("layers.3.attn.qkv_proj.weight"
// -> "model.layers.3.self_attn.q_proj", "...k_proj", "...v_proj", ...), under the naming of
// every family opscope reads (self_attn / mixer, mlp / block_sparse_moe, shared_expert(s),
// MLA's kv_a_proj_with_mqa, TensorRT-LLM's fused_a), and the family's own where its
// checkpoints differ (`model_type`: Gemma-4's router / experts, DeepSeek-V4's wq_a ... ffn.*).
// `prefix` precedes "layers." ("model.").
std::vector<std::string> HfModuleNames(std::string_view tensor_name, std::string_view prefix,
                                       std::string_view model_type = {});

// A tensor-parallel shard whose MLP or expert intermediate width does not divide the
// quantization block of its down projection (or of the matrix inputs) is padded to whole
// blocks, as engines pad such shards (vLLM rounds gpt-oss's MXFP4 expert shards up): `local`
// is this device's share of `full`. Each padding is added to local.assumptions; the padded
// columns' bytes and FLOPs are counted. Called by BuildStepGraph.
void PadShardToBlocks(ModelSpec& local, const ModelSpec& full, const Recipe& recipe);

}  // namespace opscope::import::hf
