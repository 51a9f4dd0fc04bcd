// The model argument of `opscope llm` and `opscope sweep llm` (and of the Python package):
// a built-in preset name or a config.json path, opened into the model spec the serving model
// is built from, with the names reports and errors use.
//
// OpenModel tries the openers of one table in order (model.cc: kOpeners); each either claims
// the argument (and opens it, or says why it cannot) or passes. Model folders, GGUF files and
// case-insensitive preset names join the table there.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "import/hf_config/model_spec.h"
#include "support/error.h"

namespace opscope::llm {

struct Model {
  std::string name;    // what reports call the model: the preset's name or the path given
  std::string origin;  // errors: "preset 'NAME'" or the config.json path
  import::hf::ModelSpec spec;
};

// Errors name the argument: "model 'llama-9000': neither a built-in preset (see 'opscope llm
// --list') nor an existing config.json file", or the file and field at fault. `parse` carries
// --model-type (read the config with a known type's reader, stated in assumptions).
Result<Model> OpenModel(std::string_view arg, const import::hf::ParseOptions& parse = {});

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
