// `opscope llm MODEL`: an HF config.json (or a built-in preset) and a workload and recipe
// become one engine step, costed and timed on a device, with the serving figures
// (DESIGN "The LLM step model"). `opscope llm --list` lists the presets.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/llm_model.h"
#include "device/device.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "llm/llm.h"
#include "llm/parallel.h"
#include "report/report_model.h"
#include "support/file_io.h"
#include "support/human_units.h"

namespace opscope::cli {
namespace {

struct LlmOptions {
  std::string model;
  bool list = false;
  std::string device = kDefaultDevice;
  std::string phase = "decode";
  int64_t batch = 1;
  int64_t context = 4096;
  std::optional<int64_t> prompt;
  std::optional<int64_t> gen_len;
  std::optional<std::string> weights, activations, kv_dtype, state_dtype;
  double mem_util = 0.9;
  llm::Degrees degrees;  // --tp --ep --pp --dp-attention --gpus-per-node --micro-batches
  OutputOptions output;
};

// The config text and the name errors and reports use: a preset, a config.json path or a
// model folder (import/hf_config/model_dir.h).
using ModelSource = LlmModelSource;

Result<ModelSource> LoadModel(const std::string& model) {
  // A preset by its exact name, else an existing path ("Qwen3-8B/", a snapshot folder named
  // like a preset), else a preset as typed ("Llama-3.1-8B", "meta-llama/Llama-3.1-8B").
  std::error_code ec;
  const import::hf::Preset* p = import::hf::FindPreset(model);
  if (p && (p->name == model || !std::filesystem::exists(model, ec))) {
    return ModelSource{std::string(p->json), "preset '" + std::string(p->name) + "'",
                       std::string(p->name), std::nullopt};
  }
  if (std::filesystem::is_directory(model, ec)) {
    auto folder = import::hf::ReadModelFolder(model);
    if (!folder) return std::unexpected(folder.error());
    std::string text = folder->config_text, origin = folder->config_path, name = folder->name;
    return ModelSource{std::move(text), std::move(origin), std::move(name), std::move(*folder)};
  }
  if (std::filesystem::exists(model, ec)) {
    auto folder = import::hf::ReadConfigFile(model);
    if (!folder) return std::unexpected(folder.error());
    std::string text = folder->config_text;
    return ModelSource{std::move(text), model, model, std::move(*folder)};
  }
  if (model.ends_with(".gguf")) {
    return MakeError(model + ": GGUF files are not read yet; pass the model's config.json and "
                     "--weights with its llama.cpp file type (e.g. q4_k_m)");
  }
  return MakeError("model '" + model + "': neither a built-in preset (see 'opscope llm --list') " +
                   "nor an existing config.json file or model folder" +
                   import::hf::PresetHint(model));
}

Result<void> CheckOptions(const LlmOptions& o) {
  if (o.batch <= 0) return MakeError("option '--batch': must be positive, got " + std::to_string(o.batch));
  if (o.context <= 0) {
    return MakeError("option '--context': must be positive, got " + std::to_string(o.context));
  }
  if (o.prompt && *o.prompt <= 0) {
    return MakeError("option '--prompt': must be positive, got " + std::to_string(*o.prompt));
  }
  if (o.gen_len && *o.gen_len <= 0) {
    return MakeError("option '--gen-len': must be positive, got " + std::to_string(*o.gen_len));
  }
  if (!(o.mem_util > 0 && o.mem_util <= 1)) {
    return MakeError("option '--mem-util': must be in (0, 1], got " + std::to_string(o.mem_util));
  }
  return {};
}

Result<int> RunList(const OutputOptions& output) {
  std::string text;
  if (output.format == "json") {
    text = "{\"presets\": [";
    bool first = true;
    for (const import::hf::Preset& p : import::hf::BuiltinPresets()) {
      auto spec = import::hf::ParseHfConfig(p.json, std::string(p.file));
      if (!spec) return std::unexpected(spec.error());
      text += first ? "\n  " : ",\n  ";
      first = false;
      text += "{\"name\": \"" + std::string(p.name) + "\", \"model_type\": \"" + spec->model_type +
              "\", \"layers\": " + std::to_string(spec->num_layers()) +
              ", \"reconstructed\": " + (p.reconstructed ? "true" : "false") + "}";
    }
    text += "\n]}\n";
  } else {
    text = "Built-in model presets (opscope llm NAME):\n";
    for (const import::hf::Preset& p : import::hf::BuiltinPresets()) {
      auto spec = import::hf::ParseHfConfig(p.json, std::string(p.file));
      if (!spec) return std::unexpected(spec.error());
      std::string line = "  " + std::string(p.name);
      line.resize(std::max<size_t>(line.size() + 1, 32), ' ');
      line += spec->model_type;
      line.resize(std::max<size_t>(line.size() + 1, 52), ' ');
      line += std::to_string(spec->num_layers()) + " layers";
      if (p.reconstructed) line += "  (config reconstructed from published figures)";
      text += line + "\n";
    }
  }
  if (auto ok = WriteFileAtomic(output.output, text); !ok) return std::unexpected(ok.error());
  return 0;
}

Result<int> RunLlm(const LlmOptions& o) {
  if (o.list) return RunList(o.output);
  if (o.model.empty()) return MakeError("no MODEL given (a preset name or a config.json; see 'opscope llm --list')");
  if (auto ok = CheckOptions(o); !ok) return std::unexpected(ok.error());
  auto source = LoadModel(o.model);
  if (!source) return std::unexpected(source.error());
  auto device = device::ResolveDevice(o.device);
  if (!device) return std::unexpected(device.error());
  auto spec = ParseLlmModel(*source);
  if (!spec) return std::unexpected(spec.error());
  if (!device->requested_as.empty()) {
    spec->assumptions.push_back("device '" + device->requested_as + "' is " + device->name +
                                " (" + device->description + ")");
  }
  import::hf::RecipeOptions recipe_options{o.weights, o.activations, o.kv_dtype, o.state_dtype};
  auto recipe = import::hf::ResolveRecipe(*spec, recipe_options);
  if (!recipe) return std::unexpected(recipe.error());  // names the option or the file
  auto step = import::hf::BuildStepGraph(*spec, *recipe);
  if (!step) return std::unexpected(Wrap(source->origin, step.error()));
  step->graph.name = source->name;
  if (source->folder) {
    if (auto warning = import::hf::CheckTotalSize(*source->folder, *step)) {
      std::fprintf(stderr, "opscope: warning: %s\n", warning->c_str());
    }
  }

  llm::Request request;
  request.phase = o.phase == "prefill" ? llm::Phase::kPrefill : llm::Phase::kDecode;
  request.batch = o.batch;
  request.context = o.context;
  request.prompt = o.prompt.value_or(o.context);
  request.gen_len = o.gen_len;
  request.mem_util = o.mem_util;
  const llm::Degrees& g = o.degrees;
  if (g.MultiDevice() || g.gpus_per_node || g.micro_batches) {
    auto plan = llm::PlanDeployment(*spec, g, *device);
    if (!plan) return std::unexpected(plan.error());
    if (plan->devices > 1) {
      auto deployed = llm::RunDeployment(*spec, *recipe, *device, request, *plan);
      if (!deployed) return std::unexpected(deployed.error());
      report::ReportModel model =
          report::BuildReport(deployed->busiest_graph, deployed->run.step.ledger,
                              deployed->run.step.analysis, *device, o.output.top);
      model.model = source->name;
      for (std::string& a : deployed->run.assumptions) model.assumptions.push_back(std::move(a));
      model.llm = std::move(deployed->run.figures);
      model.parallel = deployed->parallel;
      return EmitReport(model, o.output);
    }
  }
  auto run = llm::RunRequest(*step, *recipe, *device, request);
  if (!run) return std::unexpected(run.error());

  report::ReportModel model = report::BuildReport(step->graph, run->step.ledger,
                                                  run->step.analysis, *device, o.output.top);
  model.model = source->name;
  for (std::string& a : run->assumptions) {
    if (std::find(model.assumptions.begin(), model.assumptions.end(), a) == model.assumptions.end()) {
      model.assumptions.push_back(std::move(a));
    }
  }
  model.llm = std::move(run->figures);
  return EmitReport(model, o.output);
}

}  // namespace

Result<LlmModelSource> LoadLlmModel(const std::string& model) { return LoadModel(model); }

Result<import::hf::ModelSpec> ParseLlmModel(const LlmModelSource& source) {
  if (source.folder) return import::hf::ParseModelFolder(*source.folder);
  return import::hf::ParseHfConfig(source.text, source.origin);
}

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
  app->footer("Supported model_type: " + types +
              ".\nWeights: any format of the formats table, or a llama.cpp file type (q4_0 q4_1 "
              "q5_0 q5_1 q8_0 q2_k q3_k_m q4_k_m q5_k_m q6_k) mapped per tensor. See docs/llm.md.");
  app->add_option("MODEL", o->model,
                  "Preset name (opscope llm --list), a config.json, or a model folder");
  app->add_flag("--list", o->list, "List the built-in presets and exit");
  app->add_option("--device", o->device, "Device id (see 'opscope devices') or a device .json file")
      ->capture_default_str();
  app->add_option("--phase", o->phase, "decode (one token per sequence) or prefill (whole prompt)")
      ->check(CLI::IsMember({"decode", "prefill"}))
      ->capture_default_str();
  app->add_option("--batch", o->batch, "Sequences in the step")->capture_default_str();
  app->add_option("--context", o->context, "Decode: cached tokens per sequence")
      ->capture_default_str();
  app->add_option("--prompt", o->prompt, "Prefill: prompt tokens per sequence (default: --context)");
  app->add_option("--gen-len", o->gen_len,
                  "Also time the whole request: prefill, then this many decode steps");
  app->add_option("--weights", o->weights,
                  "Weight format or llama.cpp file type (default: the config's dtype and "
                  "quantization_config)");
  app->add_option("--activations", o->activations,
                  "Activation format: a float dtype, or fp8/int8/nvfp4/mxfp4 matrix inputs");
  app->add_option("--kv-dtype", o->kv_dtype, "KV cache format (default: the model dtype)");
  app->add_option("--state-dtype", o->state_dtype,
                  "Recurrent state format (default: mamba_ssm_dtype, else the model dtype)");
  app->add_option("--mem-util", o->mem_util,
                  "Fraction of device memory weights + KV + state may use (max_batch)")
      ->capture_default_str();
  app->add_option("--tp", o->degrees.tp,
                  "Tensor-parallel degree: heads, MLP columns, vocabulary split this many ways")
      ->capture_default_str();
  app->add_option("--ep", o->degrees.ep, "Expert-parallel degree: routed experts spread this many ways")
      ->capture_default_str();
  app->add_option("--pp", o->degrees.pp, "Pipeline-parallel degree: layers split into this many stages")
      ->capture_default_str();
  app->add_option("--dp-attention", o->degrees.dp_attention,
                  "Attention data-parallel replicas (default: ep/tp when ep > tp, else 1)");
  app->add_option("--gpus-per-node", o->degrees.gpus_per_node,
                  "Devices per node (default: the device's devices_per_node); larger groups use "
                  "the network");
  app->add_option("--micro-batches", o->degrees.micro_batches,
                  "Pipeline micro-batches per step (default: --pp)");
  AddOutputOptions(*app, o->output);
  return {app, [o] { return RunLlm(*o); }};
}

}  // namespace opscope::cli
