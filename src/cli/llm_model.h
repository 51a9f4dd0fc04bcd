// The model argument of the LLM commands (`opscope llm`, `opscope sweep llm`): a built-in
// preset name or a config.json path, read into text with the names reports and errors use.
#pragma once

#include <string>

#include "support/error.h"

namespace opscope::cli {

struct LlmModelSource {
  std::string text;    // the config JSON
  std::string origin;  // "preset 'NAME'" or the config.json path (errors)
  std::string name;    // what reports call the model
};

// Defined in llm_command.cc, next to the `opscope llm` command it was written for.
Result<LlmModelSource> LoadLlmModel(const std::string& model);

}  // namespace opscope::cli
