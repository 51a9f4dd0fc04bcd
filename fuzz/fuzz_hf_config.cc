// libFuzzer target: HF config.json text -> ModelSpec -> recipe -> step graph -> ledger ->
// roofline and serving figures -> JSON and text reports. The last input byte picks the
// recipe options and the workload, so quantized and prefill paths are reached too.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz/fuzz_common.h"
#include "import/hf_config/model_spec.h"
#include "llm/serving.h"

namespace hf = opscope::import::hf;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = hf::ParseHfConfig(text, "config.json");
  if (!spec) {
    opscope::fuzz::CheckErrorMessage(spec.error().message);
    return 0;
  }
  const uint8_t salt = size > 0 ? data[size - 1] : 0;
  static constexpr const char* kWeights[] = {nullptr, "q4_k_m", "nvfp4", "fp8_e4m3_b128x128",
                                             "q6_k", "int4_g128", "mxfp4", "q2_k"};
  hf::RecipeOptions options;
  if (const char* w = kWeights[salt & 7]) options.weights = w;
  if (salt & 8) options.activations = "fp8_e4m3";
  if (salt & 16) options.kv = "fp8_e4m3";
  auto build = opscope::llm::BuildModel(opscope::llm::Model{"config.json", "config.json", *spec},
                                        options);
  if (!build) return opscope::fuzz::CheckErrorMessage(build.error().message), 0;

  opscope::llm::Workload workload;
  workload.phase = (salt & 32) ? opscope::llm::Phase::kPrefill : opscope::llm::Phase::kDecode;
  workload.batch = (salt & 64) ? 64 : 1;
  workload.context = 4096;
  workload.prompt = 512;
  if (salt & 128) workload.gen_len = 16;
  const opscope::device::Device& device = opscope::fuzz::FuzzDevice(salt);
  auto serving = opscope::llm::Serving::Build(
      *build, opscope::llm::Deployment::OneDevice(spec->num_layers()), device);
  if (!serving) return opscope::fuzz::CheckErrorMessage(serving.error().message), 0;
  auto run = opscope::llm::Evaluate(*serving, workload);
  if (!run) return opscope::fuzz::CheckErrorMessage(run.error().message), 0;
  const opscope::report::ReportModel model = opscope::report::BuildLlmReport(*serving, *run, 5);
  opscope::fuzz::CheckJson(opscope::report::RenderJson(model));
  (void)opscope::report::RenderText(model);
  return 0;
}
