// libFuzzer target: GGUF bytes -> header reader -> ModelSpec and per-weight ggml formats ->
// recipe -> step graph -> the graph checked against the file. The last input byte picks
// whether the file is the input alone or claims a large data section past it (sparse
// tensors), so model mappings are reached without megabytes of input.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "import/gguf/gguf_model.h"
#include "import/gguf/gguf_reader.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"

namespace gguf = opscope::import::gguf;
namespace hf = opscope::import::hf;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t salt = size > 0 ? data[size - 1] : 0;
  const uint64_t file_bytes = (salt & 1) ? size + (uint64_t{1} << 36) : size;
  auto file = gguf::ParseGgufHeader(std::span(data, size), file_bytes, "fuzz.gguf");
  if (!file) return opscope::fuzz::CheckErrorMessage(file.error().message), 0;
  if (file->TensorBytes() > file_bytes) opscope::fuzz::Finding("tensor bytes past the file", "");
  std::vector<gguf::GgufFile> files;
  files.push_back(std::move(*file));
  auto model = gguf::BuildGgufModel(std::move(files));
  if (!model) return opscope::fuzz::CheckErrorMessage(model.error().message), 0;
  hf::RecipeOptions options;
  if (salt & 2) options.weights = "q8_0";  // llama.cpp layout: separate q, k, v
  auto recipe = hf::ResolveRecipe(model->spec, options);
  if (!recipe) return opscope::fuzz::CheckErrorMessage(recipe.error().message), 0;
  auto step = hf::BuildStepGraph(model->spec, *recipe);
  if (!step) return opscope::fuzz::CheckErrorMessage(step.error().message), 0;
  const gguf::GraphCheck check = gguf::CheckGgufGraph(*model, step->graph);
  for (const std::string& e : check.errors) opscope::fuzz::CheckErrorMessage(e);
  return 0;
}
