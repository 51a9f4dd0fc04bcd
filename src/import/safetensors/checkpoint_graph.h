// A checkpoint's tensors against the step graph built from its config.json: which tensors
// (and their scales) make each graph weight, the format they are stored in when it is a row
// of the format table, and warnings for a tensor the graph does not expect or a graph weight
// the checkpoint lacks (each named).
//
// Names: Hugging Face module names map to the step graph's (step_graph.cc) after the model
// prefix ("model.", "model.language_model.", "language_model.model.", "backbone.") is
// dropped: layers.3.self_attn.{q,k,v}_proj -> layers.3.attn.qkv_proj (fused, as engines run
// it), mlp.{gate,up}_proj -> mlp.gate_up_proj, mlp.experts.<j>.* (and Mixtral's
// block_sparse_moe.experts.<j>.w1/w3/w2, gpt-oss's stacked experts) -> moe.experts.*, the
// norms by the layer's kind (post_attention_layernorm is the FFN norm unless the model has
// sandwich norms). docs/model_files.md has the table. Quantization metadata goes with the
// weight it belongs to (checkpoint.h).
//
// Formats: a weight whose parts are all one plain dtype is that dtype; F8_E4M3 with an f32
// scale per tensor, per row or per 128×128 block is fp8_e4m3, fp8_e4m3_rowwise or
// fp8_e4m3_b128x128; packed FP4 with an e4m3 scale per 16 is nvfp4 and with an e8m0 scale
// per 32 mxfp4; INT32-packed 4-bit with an f16 scale per 128 is int4_g128 (int4_g128_zp with
// zero points). Anything else has no format here, and the weight's note says why.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "format/format.h"
#include "import/hf_config/model_spec.h"
#include "import/safetensors/checkpoint.h"
#include "ir/graph.h"

namespace opscope::import::safetensors {

struct GraphWeightSource {
  std::string graph_name;
  uint64_t graph_elements = 0;
  std::vector<std::string> tensors;  // parameters, then their metadata
  uint64_t bytes = 0;                // Σ checkpoint bytes, metadata included
  uint64_t parameters = 0;           // Σ logical parameters
  std::optional<format::Format> format;
  std::string note;                  // why there is no format
};

struct CheckpointComparison {
  std::vector<GraphWeightSource> weights;                 // in graph order
  std::map<std::string, format::Format> weight_formats;   // graph weight -> stored format
  std::vector<std::string> unexpected;  // checkpoint tensors no graph weight takes
  std::vector<std::string> missing;     // graph weights with no tensor
  // Tensors of the MTP modules the config declares (IsMtpTensor): not in the step graph, not
  // unexpected; their parameters are checked against the model's params_mtp.
  std::vector<std::string> mtp;
  uint64_t mtp_parameters = 0;
  std::vector<std::string> warnings;    // the lists and element mismatches, as messages
};

// The step-graph weight name of a checkpoint parameter tensor, or nullopt when the graph has
// no place for it (a vision tower, an MTP layer, a layer past num_hidden_layers).
std::optional<std::string> GraphWeightName(const hf::ModelSpec& spec, std::string_view tensor);

// Whether a checkpoint tensor belongs to one of the MTP modules the config declares
// (spec.mtp.modules > 0): DeepSeek's layout numbers them after the model's layers
// (model.layers.<num_hidden_layers + i>.*: DeepSeek-V3, GLM-5), Qwen's keeps them under mtp.*
// (Qwen3-Next, Qwen3.5).
bool IsMtpTensor(const hf::ModelSpec& spec, std::string_view tensor);

// `params_mtp`: the model's MTP parameters (hf::StepGraph::params_mtp); the MTP tensors'
// parameters that differ from it are a warning.
CheckpointComparison CompareWithGraph(const Checkpoint& checkpoint, const hf::ModelSpec& spec,
                                      const ir::Graph& graph, uint64_t params_mtp = 0);

}  // namespace opscope::import::safetensors
