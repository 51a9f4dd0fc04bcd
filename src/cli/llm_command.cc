// `opscope llm MODEL`: an HF config.json (or a built-in preset) and a workload and recipe
// become one engine step, costed and timed on a device, with the serving figures
// (DESIGN "The LLM step model"). `opscope llm --list` lists the presets.
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/recipe.h"
#include "llm/predicted.h"
#include "llm/serving.h"
#include "report/formats.h"

namespace opscope::cli {
namespace {

struct LlmOptions {
  bool list = false;
  std::string phase = "decode";
  llm::Request request;  // the model, recipe, device, degrees and workload
  llm::PredictTexts predict;  // --engine and the serving modes as typed (parsed by llm)
  OutputOptions output;
};

Result<int> RunList(const OutputOptions& output) {
  auto presets = llm::ListPresets();
  if (!presets) return std::unexpected(presets.error());
  // The list has text and JSON; any other --format prints the text.
  const std::string format =
      report::FindFormat(report::PresetListFormats(), output.format) ? output.format : "text";
  auto ok = Emit(report::PresetListFormats(), report::PresetList{*presets}, format, output.output);
  if (!ok) return std::unexpected(ok.error());
  return 0;
}

Result<int> RunLlm(LlmOptions& o) {
  if (o.list) return RunList(o.output);
  if (o.request.model.empty()) {
    return MakeError("no MODEL given (a preset name or a config.json; see 'opscope llm --list')");
  }
  o.request.workload.phase = o.phase == "prefill" ? llm::Phase::kPrefill : llm::Phase::kDecode;
  auto predict = llm::ParsePredictOptions(o.predict);
  if (!predict) return std::unexpected(predict.error());
  auto r = llm::RunLlmPredicted(o.request, *predict);
  if (!r) return std::unexpected(r.error());
  return EmitReport(report::BuildLlmReport(r->run.serving, r->run.evaluation, o.output.top,
                                           &r->predicted),
                    o.output);
}

}  // namespace

Command AddLlmCommand(CLI::App& root) {
  auto o = std::make_shared<LlmOptions>();
  CLI::App* app = root.add_subcommand(
      "llm", "One engine step of an LLM from its HF config.json or a built-in preset: bytes, "
             "FLOPs, roofline time and serving figures");
  std::string types;
  for (std::string_view t : import::hf::kSupportedModelTypes) {
    if (!types.empty()) types += ", ";
    types += t;
  }
  std::string file_types;
  for (std::string_view t : import::hf::kGgufFileTypeNames) {
    if (!file_types.empty()) file_types += " ";
    file_types += t;
  }
  app->footer("Supported model_type: " + types +
              ".\nWeights: any format of the formats table, or a llama.cpp file type (" +
              file_types + ") mapped per tensor. See docs/llm.md.");
  llm::Request& r = o->request;
  llm::Workload& w = r.workload;
  app->add_option("MODEL", r.model, "Preset name (opscope llm --list) or path to a config.json");
  app->add_option("--model-type", r.parse.model_type,
                  "Read the config as this known model_type (a custom type of that shape)");
  app->add_flag("--list", o->list, "List the built-in presets and exit");
  r.device = kDefaultDevice;
  app->add_option("--device", r.device, "Device id (see 'opscope devices') or a device .json file")
      ->capture_default_str();
  app->add_option("--phase", o->phase, "decode (one token per sequence) or prefill (whole prompt)")
      ->check(CLI::IsMember({"decode", "prefill"}))
      ->capture_default_str();
  app->add_option("--batch", w.batch, "Sequences in the step")->capture_default_str();
  app->add_option("--context", w.context, "Decode: cached tokens per sequence")
      ->capture_default_str();
  app->add_option("--prompt,--isl", w.prompt, "Prefill: prompt tokens per sequence (default: --context)");
  app->add_option("--gen-len,--osl", w.gen_len,
                  "Also time the whole request: prefill, then this many decode steps");
  app->add_option("--weights", r.recipe.weights,
                  "Weight format or llama.cpp file type (default: the config's dtype and "
                  "quantization_config)");
  app->add_option("--activations", r.recipe.activations,
                  "Activation format: a float dtype, or fp8/int8/nvfp4/mxfp4 matrix inputs "
                  "(bf16 runs a quantized checkpoint weight-only)");
  app->add_option("--kv-dtype", r.recipe.kv, "KV cache format (default: the model dtype)");
  app->add_option("--state-dtype", r.recipe.state,
                  "Recurrent state format (default: mamba_ssm_dtype, else the model dtype)");
  app->add_option("--mem-util", w.mem_util,
                  "Fraction of device memory weights + KV + state may use (max_batch)")
      ->capture_default_str();
  app->add_option("--tp", r.degrees.tp,
                  "Tensor-parallel degree: heads, MLP columns, vocabulary split this many ways")
      ->capture_default_str();
  app->add_option("--ep", r.degrees.ep, "Expert-parallel degree: routed experts spread this many ways")
      ->capture_default_str();
  app->add_option("--pp", r.degrees.pp, "Pipeline-parallel degree: layers split into this many stages")
      ->capture_default_str();
  app->add_option("--dp-attention", r.degrees.dp_attention,
                  "Attention data-parallel replicas (default: ep/tp when ep > tp, else 1)");
  app->add_option("--gpus-per-node", r.degrees.gpus_per_node,
                  "Devices per node (default: the device's devices_per_node); larger groups use "
                  "the network");
  app->add_option("--micro-batches", r.degrees.micro_batches,
                  "Pipeline micro-batches per step (default: --pp)");
  app->add_option("--engine", o->predict.engine,
                  "Serving engine whose profile predicts the figures (vllm, sglang, trtllm, "
                  "llama.cpp, roofline) or a profile .json (default: the device's; docs/engines.md); "
                  "ENGINE:NAME runs an alternative kernel implementation the profile offers "
                  "(trtllm:trtllm_gen, TensorRT-LLM's moe_config.backend TRTLLM)");
  app->add_option("--disagg", o->predict.disagg,
                  "Predict disaggregated serving: P:D prefill and decode workers");
  app->add_option("--prefill-tp", o->predict.prefill_tp, "With --disagg: a prefill worker's tensor-parallel degree (default: --tp)");
  app->add_option("--decode-tp", o->predict.decode_tp, "With --disagg: a decode worker's tensor-parallel degree (default: --tp)");
  app->add_option("--speculative", o->predict.speculative,
                  "Predict speculative decoding: mtp:N draft tokens from the model's MTP module, "
                  "or draft:N from a --draft-model");
  app->add_option("--draft-model", o->predict.draft_model,
                  "With --speculative draft:N: the draft model (preset, config.json or model "
                  "folder), deployed at the target's tensor parallelism");
  app->add_option("--acceptance", o->predict.acceptance,
                  "With --speculative: probability each draft token is accepted, in [0, 1]");
  app->add_option("--lengths", o->predict.lengths,
                  "With --gen-len: 'varied' (default: requests' lengths differ, their steps "
                  "spread over the loop) or 'fixed' (every request exactly --prompt and "
                  "--gen-len tokens, as a fixed-length benchmark sends them: requests move in "
                  "groups whose prompts share steps)");
  AddOutputOptions(*app, o->output);
  return {app, [o] { return RunLlm(*o); }};
}

}  // namespace opscope::cli
