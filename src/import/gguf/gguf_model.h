// A GGUF model file as opscope's LLM model: the ModelSpec its `<arch>.*` metadata keys and
// tensor shapes define, and the ggml format of every step-graph weight from the file's own
// tensors, so weight bytes are the file's tensor bytes exactly.
//
// Architectures (general.architecture; docs/model_files.md has the key table): llama (and
// Mixtral: llama with expert_count), mistral3, qwen2, qwen2moe, qwen3, qwen3moe, gemma2,
// gemma3, phi3, deepseek2 (DeepSeek V2/V3/R1, Kimi K2), glm4moe (GLM-4.5 .. 4.7), minimax-m2,
// gpt-oss, and the GatedDeltaNet hybrids qwen3next, qwen35, qwen35moe (Qwen3-Next, Qwen3.5 /
// 3.6: a layer with ssm_out is a GatedDeltaNet layer, sized by the ssm.* keys; the others gated
// full attention), nemotron_h and nemotron_h_moe (Nemotron-H, Nemotron-3: each block one
// Mamba2 mixer, attention without RoPE, a squared-ReLU MLP or a (latent) MoE of squared-ReLU
// experts, told apart by the tensors it holds). block_count counts the nextn (MTP) blocks of
// qwen35, qwen35moe, glm4moe and nemotron_h_moe, which llama.cpp's main pass never runs: the
// model is block_count − nextn_predict_layers layers and the nextn blocks' tensors are listed
// as not in the step graph. Sizes come from
// the keys (embedding_length, block_count, attention.head_count(_kv), attention.key_length,
// feed_forward_length, expert_*); what a key cannot say comes from which tensors exist
// (biases, q/k norms, sandwich norms, MoE vs dense per layer, shared experts, the router's
// bias) or their shapes (vocabulary from token_embd, shared-expert width). Sliding windows
// follow llama.cpp's loader per architecture (gemma2: every other layer, default 4096;
// gemma3: five of six; gpt-oss: every other layer), each default noted in the assumptions.
//
// Weight names: GGUF tensors map to the step graph's names (token_embd -> embed_tokens,
// blk.3.attn_q -> layers.3.attn.q_proj, blk.3.ffn_gate + ffn_up -> layers.3.mlp.gate_up_proj,
// blk.3.ffn_gate_exps + ffn_up_exps -> layers.3.moe.experts.gate_up_proj, ...). A fused
// graph weight whose parts have different ggml types takes the type of its largest part and
// says so in `warnings` (the bytes then differ from the file's by the amount it names).
// Split files (general split.count > 1, "<name>-00001-of-00003.gguf") are read shard by shard.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "format/format.h"
#include "import/gguf/gguf_reader.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/step_graph.h"
#include "ir/graph.h"
#include "support/error.h"

namespace opscope::import::gguf {

// The architectures opscope reads from GGUF (general.architecture values).
inline constexpr std::string_view kSupportedArchitectures[] = {
    "llama", "mistral3", "qwen2", "qwen2moe", "qwen3", "qwen3moe", "qwen3next", "qwen35",
    "qwen35moe", "gemma2", "gemma3", "gemma4", "phi3", "deepseek2", "glm4moe", "minimax-m2",
    "nemotron_h", "nemotron_h_moe", "gpt-oss", "gptoss", "seed_oss", "ernie4_5-moe", "llama4"};

// One step-graph weight group and the GGUF tensors that hold it: usually one to one; a
// fused graph weight (gate_up_proj) takes two tensors; phi3's fused attn_qkv gives three
// graph weights (q_proj, k_proj, v_proj) one tensor.
struct WeightGroup {
  std::vector<std::string> graph_names;  // in the llama.cpp layout of the step graph
  std::string fused_name;                // the same weights fused (attn.qkv_proj), or empty
  std::vector<std::string> tensors;      // GGUF tensor names
  format::Format format = format::Format::kF32;
  uint64_t elements = 0;                 // Σ tensor elements
  uint64_t bytes = 0;                    // Σ tensor bytes in the file
};

struct GgufModel {
  std::vector<GgufFile> files;     // the shards, in order (one for an unsplit file)
  hf::ModelSpec spec;
  std::vector<WeightGroup> groups;  // in tensor order
  // Step-graph weight name -> its ggml format (both the split and the fused attention names).
  std::map<std::string, format::Format> weight_formats;
  std::vector<std::string> unused_tensors;  // tensors no step-graph weight takes
  std::vector<std::string> warnings;        // mixed-type fused weights, unused tensors

  uint64_t TensorBytes() const;   // Σ over every shard's tensors
  uint64_t TensorCount() const;
};

// Reads the header(s) of a GGUF file and builds the spec and weight formats.
Result<GgufModel> LoadGgufModel(const std::string& path);

// The same for headers already read (tests, the fuzzer): files[0] holds the metadata.
Result<GgufModel> BuildGgufModel(std::vector<GgufFile> files);

// Checks a step graph built from model.spec against the file. Errors: a graph weight with no
// tensor, a tensor whose graph weight is missing, or a weight whose element count differs from
// its tensors' (each message names the weight and the tensors). Warnings: a fused weight the
// graph uses (attn.qkv_proj) over tensors of different types.
struct GraphCheck {
  std::vector<std::string> errors, warnings;
};
GraphCheck CheckGgufGraph(const GgufModel& model, const ir::Graph& graph);

// The file's formats and bytes as the recipe takes them (model_spec.h StoredWeights), in
// llama.cpp's layout (q, k and v apart); `source` names the file in the recipe's label.
std::shared_ptr<const hf::StoredWeights> StoredWeightsOf(const GgufModel& model,
                                                         const std::string& source);

// The model's step graph with every weight in its tensor's type (spec.stored set from
// StoredWeightsOf), checked against the file: a CheckGgufGraph error is an error (the first,
// naming the file and how many more), its warnings join model.warnings.
Result<hf::StepGraph> BuildCheckedStepGraph(GgufModel& model, const std::string& path);

// `opscope analyze model.gguf`: that step graph as a graph to analyse (symbols n, seqs and ctx
// bound with --dim), with the model's warnings and assumptions.
Result<ir::Graph> ImportGgufGraph(const std::string& path);

}  // namespace opscope::import::gguf
