// The model argument of `opscope llm` and `opscope sweep llm` (and of the Python package):
// a built-in preset name, a config.json path or a model folder (a Hugging Face snapshot:
// config.json, hf_quant_config.json, model.safetensors.index.json), opened into the model spec
// the serving model is built from, with the names reports and errors use.
//
// OpenModel tries the openers of one table in order (model.cc: kOpeners); each either claims
// the argument (and opens it, or says why it cannot) or passes: a preset by its exact name, a
// model folder, a config.json file (with the files beside it when it is named config.json), a
// preset as people type it (case-insensitive, organisation dropped), GGUF files.
//
// Model files: a GGUF file (llama.cpp) gives the spec from its metadata and every weight's
// ggml type; a model folder (or its config.json) with .safetensors shards beside it also
// reads the shards' headers: every weight's stored format and bytes (scales included), with
// the tensors the config does not expect, or expects and the files lack, as warnings. Either
// way spec.stored holds the formats (the recipe's default weights) and bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/format.h"
#include "import/hf_config/model_dir.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/step_graph.h"
#include "support/error.h"

namespace opscope::llm {

struct Model {
  std::string name;    // what reports call the model: the preset's name or the path given
  std::string origin;  // errors: "preset 'NAME'" or the config.json path
  import::hf::ModelSpec spec;
  // A model folder or config.json path: the files read with it (the index's total_size
  // cross-checks the weight bytes once the step graph is built).
  std::optional<import::hf::ModelFolder> folder = std::nullopt;
  // What reading the model's files found that the report must not hide (tensors the step
  // graph does not use, fused weights of mixed types, checkpoint tensors the config does not
  // expect): JSON `warnings` and stderr.
  std::vector<std::string> warnings = {};
};

// Errors name the argument: "model 'llama-9000': neither a built-in preset (see 'opscope llm
// --list') nor an existing config.json file", or the file and field at fault. `parse` carries
// --model-type (read the config with a known type's reader, stated in assumptions).
Result<Model> OpenModel(std::string_view arg, const import::hf::ParseOptions& parse = {});

// The weight bytes of `step` when its weights are in the formats the model's files store: Σ
// over its weights of their tensors' bytes in the files (scales included) where the weight is
// in its stored format, else its bytes at its format. Exact for the one-device step graph.
uint64_t StoredWeightBytes(const import::hf::StoredWeights& stored,
                           const import::hf::StepGraph& step);

// The model as a serving engine loads it by default: a checkpoint saved in float32 (its
// config's dtype) runs in `served`, a 16-bit float — the model dtype, and every weight its
// files store in float32 — as vLLM and SGLang load one with dtype "auto" (each engine's rule:
// its profile's defaults.float32_dtype, ServeFloat32). `why` says whose rule in the assumption
// the cast adds. Other dtypes are left as they are, and so is a GGUF file
// (its spec's dtype is f16: llama.cpp loads the file as stored). Returns whether it cast.
bool ServeFloat32As(Model& model, format::Format served, std::string_view why);

// An engine's rule for float32 checkpoints (its profile's defaults.float32_dtype and the
// model types excepted from it): ServeFloat32 serves a float32 model in For(its model_type).
struct Float32Load {
  std::string engine;
  format::Format dtype = format::Format::kBf16;
  std::vector<std::pair<std::string, format::Format>> by_model_type_prefix;  // first match wins
  format::Format For(std::string_view model_type) const;
};
bool ServeFloat32(Model& model, const Float32Load& load);

// One row of `opscope llm --list`.
struct PresetInfo {
  std::string name;
  std::string model_type;
  int64_t layers = 0;
  bool reconstructed = false;  // rebuilt from published figures, not the original file
};
// Every built-in preset, sorted by name.
Result<std::vector<PresetInfo>> ListPresets();

}  // namespace opscope::llm
