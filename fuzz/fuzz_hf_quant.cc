// libFuzzer target: an hf_quant_config.json (NVIDIA ModelOpt) text -> the checkpoint's
// per-module formats -> applied to a real model (the last input byte picks which: a dense
// Llama, a Qwen3 MoE, DeepSeek-V3's MLA + MoE) -> recipe -> step graph -> stored weight bytes.
// A rule set that names modules in any way must never crash the lookup or the graph.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz/fuzz_common.h"
#include "import/hf_config/model_dir.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/quant_config.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"

namespace hf = opscope::import::hf;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto quant = hf::ReadHfQuantConfig(text, "hf_quant_config.json", text);
  if (!quant) {
    opscope::fuzz::CheckErrorMessage(quant.error().message);
    return 0;
  }
  const uint8_t salt = size > 0 ? data[size - 1] : 0;
  static constexpr const char* kModels[] = {"llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3",
                                            "gpt-oss-20b"};
  const hf::Preset* preset = hf::FindPreset(kModels[salt & 3]);
  auto spec = hf::ParseHfConfig(preset->json, std::string(preset->file));
  if (!spec) return 0;
  spec->quant = std::move(*quant);
  hf::RecipeOptions options;
  if (salt & 4) options.kv = "bf16";
  auto recipe = hf::ResolveRecipe(*spec, options);
  if (!recipe) return opscope::fuzz::CheckErrorMessage(recipe.error().message), 0;
  hf::DeviceShard shard;
  shard.tp = (salt & 8) ? 4 : 1;
  if (spec->attn.heads % shard.tp != 0) shard.tp = 1;
  auto step = hf::BuildStepGraph(*spec, *recipe, shard);
  if (!step) return opscope::fuzz::CheckErrorMessage(step.error().message), 0;
  (void)hf::CountStoredWeightBytes(*step);
  return 0;
}
