// A model folder (a Hugging Face snapshot: `opscope llm path/to/Qwen3-32B/`), or the folder
// of a config.json given by path. opscope reads three files of it:
//  * config.json (required): the model (ParseHfConfig);
//  * hf_quant_config.json (optional, NVIDIA ModelOpt checkpoints): the checkpoint's
//    quantization, which then replaces config.json's quantization_config (quant_config.h);
//    TensorRT-LLM's quant_cfg.json beside it gives a MIXED_PRECISION per-module map;
//  * model.safetensors.index.json (optional): {"metadata": {"total_size": BYTES}, "weight_map":
//    {...}}; total_size, the bytes of every stored tensor, cross-checks the weight bytes the
//    step graph counts (CheckTotalSize). Nothing else of the index is read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "import/hf_config/model_spec.h"
#include "import/hf_config/step_graph.h"
#include "support/error.h"

namespace opscope::import::hf {

struct ModelFolder {
  std::string dir;                                 // as given
  std::string name;                                // the folder's own name (reports)
  std::string config_path, config_text;            // config.json
  std::optional<std::string> hf_quant_path, hf_quant_text;  // hf_quant_config.json
  std::optional<std::string> quant_cfg_text;       // quant_cfg.json (TensorRT-LLM)
  std::optional<std::string> index_path;           // model.safetensors.index.json
  std::optional<uint64_t> total_size;              // its metadata.total_size
};

// Reads the folder's files. Errors name the file: a folder without config.json, an index
// that is not JSON or whose metadata.total_size is not a non-negative integer.
Result<ModelFolder> ReadModelFolder(const std::string& dir);

// The folder of a config.json given by path: its config text, and the other files when the
// file is named config.json (a folder's own), else just the file.
Result<ModelFolder> ReadConfigFile(const std::string& path);

// config.json -> ModelSpec, with hf_quant_config.json (when present) as the checkpoint's
// quantization; an assumptions line says which file the quantization came from.
Result<ModelSpec> ParseModelFolder(const ModelFolder& folder, const ParseOptions& parse = {});

// Every stored weight tensor of an unsharded step graph, with its scales (what total_size
// counts), and the part of that which is scales.
struct StoredWeightBytes {
  uint64_t total = 0, scales = 0;
};
StoredWeightBytes CountStoredWeightBytes(const StepGraph& step);

// The index's total_size against the weight bytes of `step` (unsharded): a disagreement
// larger than the scales' share (how checkpoints store scales differs: f32 or bf16, GPTQ's
// zero points and g_idx, ModelOpt's input scales) is a warning naming both numbers, e.g.
// multi-token-prediction layers or a vision tower that the step does not cost. nullopt when
// they agree or the folder has no total_size.
std::optional<std::string> CheckTotalSize(const ModelFolder& folder, const StepGraph& step);

}  // namespace opscope::import::hf
