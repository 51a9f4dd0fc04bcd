// libFuzzer target: safetensors bytes -> header reader -> checkpoint table (metadata roles,
// parameters) -> comparison with a small llama's step graph (names, stored formats,
// warnings). The last input byte picks whether the data buffer is the rest of the input or
// claimed past it (sparse tensors).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/fuzz_common.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "import/safetensors/checkpoint.h"
#include "import/safetensors/checkpoint_graph.h"
#include "import/safetensors/safetensors_reader.h"

namespace hf = opscope::import::hf;
namespace st = opscope::import::safetensors;

namespace {

// tests/fixtures/safetensors/tiny-llama's config: the names of a dense llama.
struct Model {
  hf::ModelSpec spec;
  hf::StepGraph step;
};

const Model& TinyLlama() {
  static const Model m = [] {
    const char* config = R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
        "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 64,
        "vocab_size": 64, "torch_dtype": "bfloat16"})";
    Model out;
    out.spec = *hf::ParseHfConfig(config, "config.json");
    out.step = *hf::BuildStepGraph(out.spec, *hf::ResolveRecipe(out.spec, {}));
    return out;
  }();
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t salt = size > 0 ? data[size - 1] : 0;
  const uint64_t file_bytes = (salt & 1) ? size + (uint64_t{1} << 36) : size;
  auto file = st::ParseSafetensorsHeader(std::span(data, size), file_bytes, "fuzz.safetensors");
  if (!file) return opscope::fuzz::CheckErrorMessage(file.error().message), 0;
  if (file->DataOffset() + file->TensorBytes() != file_bytes) {
    opscope::fuzz::Finding("tensors do not tile the buffer", "");
  }
  std::vector<st::SafetensorsFile> shards;
  shards.push_back(std::move(*file));
  auto checkpoint = st::BuildCheckpoint("fuzz", std::move(shards));
  if (!checkpoint) return opscope::fuzz::CheckErrorMessage(checkpoint.error().message), 0;
  if (checkpoint->MetadataBytes() > checkpoint->Bytes()) {
    opscope::fuzz::Finding("metadata bytes above the total", "");
  }
  const Model& m = TinyLlama();
  const st::CheckpointComparison r = st::CompareWithGraph(*checkpoint, m.spec, m.step.graph);
  for (const std::string& w : r.warnings) opscope::fuzz::CheckErrorMessage(w);
  return 0;
}
