// The model argument of the LLM commands (`opscope llm`, `opscope sweep llm`): a built-in
// preset name, a config.json path or a model folder, read into text with the names reports
// and errors use.
#pragma once

#include <optional>
#include <string>

#include "import/hf_config/model_dir.h"
#include "support/error.h"

namespace opscope::cli {

struct LlmModelSource {
  std::string text;    // the config JSON
  std::string origin;  // "preset 'NAME'" or the config.json path (errors)
  std::string name;    // what reports call the model
  std::optional<import::hf::ModelFolder> folder;  // a folder or config.json path: its files
};

// The model spec of a source: a folder's hf_quant_config.json replaces its quantization_config.
Result<import::hf::ModelSpec> ParseLlmModel(const LlmModelSource& source);

// Defined in llm_command.cc, next to the `opscope llm` command it was written for.
Result<LlmModelSource> LoadLlmModel(const std::string& model);

}  // namespace opscope::cli
