// `opscope plan MODEL --device D --gpus N [--isl I --osl O] [--ttft-ms X] [--tpot-ms Y]
// [--rate R] [--engine E] [--weights LIST] [--disagg] [--lengths varied|fixed]
// [--speculative mtp:N|draft:N --acceptance R [--draft-model M]] [--price USD]
// [--format ...] [-o FILE]`:
// the best deployment under latency targets (issue 15; docs/plan.md).
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "cli/common.h"
#include "llm/predicted.h"
#include "plan/plan.h"
#include "report/formats.h"
#include "sweep/sweep_list.h"

namespace opscope::cli {
namespace {

struct PlanOptions {
  plan::PlanRequest request;
  std::optional<std::string> model_type, weights, lengths, speculative, draft_model;
  std::optional<double> acceptance;
  std::optional<double> ttft_ms, tpot_ms;
  std::string format = "text";
  std::string output = "-";
};

Result<int> RunPlanCommand(PlanOptions& o) {
  plan::PlanRequest& r = o.request;
  r.parse.model_type = o.model_type;
  if (o.ttft_ms) r.targets.ttft_s = *o.ttft_ms / 1e3;
  if (o.tpot_ms) r.targets.tpot_s = *o.tpot_ms / 1e3;
  if (o.ttft_ms && !(*o.ttft_ms > 0)) return MakeError("option '--ttft-ms': must be positive");
  if (o.tpot_ms && !(*o.tpot_ms > 0)) return MakeError("option '--tpot-ms': must be positive");
  if (o.weights) {
    auto names = sweep::ParseNameList("--weights", *o.weights);
    if (!names) return std::unexpected(names.error());
    r.weights.clear();
    for (std::string& n : *names) r.weights.emplace_back(std::move(n));
  }
  if (o.lengths) {
    auto fixed = llm::ParseFixedLengths(*o.lengths);
    if (!fixed) return std::unexpected(fixed.error());
    r.fixed_lengths = *fixed;
  }
  auto speculative =
      llm::ParseSpeculativeOptions(o.speculative, o.acceptance, o.draft_model);
  if (!speculative) return std::unexpected(speculative.error());
  r.speculative = *speculative;
  r.page_grid = o.format == "html";
  auto result = plan::RunPlan(r);
  if (!result) return std::unexpected(result.error());
  if (auto ok = Emit(report::PlanFormats(), *result, o.format, o.output); !ok) {
    return std::unexpected(ok.error());
  }
  return 0;
}

}  // namespace

Command AddPlanCommand(CLI::App& root) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* app = root.add_subcommand(
      "plan", "The best deployment of an LLM on N devices under TTFT/TPOT targets: the Pareto "
              "front of tokens/s per device against tokens/s per user");
  app->footer(
      "Searches every split (tp x ep x pp x dp-attention, powers of two) of up to --gpus devices,\n"
      "replicated to fill them, at every batch, for each --weights recipe; with --disagg also\n"
      "prefill and decode worker pools. Every point's figures are 'opscope llm --phase prefill\n"
      "--prompt ISL --gen-len OSL --engine E' for its split and batch (llm.predicted's when the\n"
      "engine has a profile for the device; the 'reproduce' field). See docs/plan.md.");
  plan::PlanRequest& r = o->request;
  app->add_option("MODEL", r.model, "Preset name (opscope llm --list), config.json or model folder")
      ->required();
  app->add_option("--model-type", o->model_type,
                  "Read the config as this known model_type (a custom type of that shape)");
  r.device = kDefaultDevice;
  app->add_option("--device", r.device, "Device id (see 'opscope devices') or a device .json file")
      ->capture_default_str();
  app->add_option("--gpus", r.gpus, "Devices to deploy on (N)")->capture_default_str();
  app->add_option("--isl,--prompt", r.isl, "Prompt tokens per request")->capture_default_str();
  app->add_option("--osl,--gen-len", r.osl, "Output tokens per request")->capture_default_str();
  app->add_option("--ttft-ms", o->ttft_ms, "Time-to-first-token target, milliseconds");
  app->add_option("--tpot-ms", o->tpot_ms, "Time-per-output-token target, milliseconds");
  app->add_option("--rate", r.rate, "Requests/s to serve: report the fewest devices that do");
  app->add_option("--engine", r.engine,
                  "Engine whose profile predicts the figures (vllm, sglang, trtllm, llama.cpp, "
                  "roofline) or a profile .json (default: the device's; roofline: the roofline "
                  "estimate; ENGINE:NAME for an alternative kernel implementation); the launch "
                  "hints are for it");
  app->add_option("--weights", o->weights,
                  "Weight formats or llama.cpp file types to search, comma-separated (default: the config's)");
  app->add_option("--activations", r.activations, "Activation format");
  app->add_option("--kv-dtype", r.kv_dtype, "KV cache format");
  app->add_flag("--disagg", r.disagg, "Also search disaggregated prefill/decode worker pools (xPyD)");
  app->add_option("--lengths", o->lengths,
                  "'varied' (default: requests' lengths differ, their steps spread over the loop) "
                  "or 'fixed' (every request exactly --isl and --osl tokens, as a fixed-length "
                  "benchmark sends them; opscope llm --lengths fixed); predicted, aggregated only");
  AddSpeculativeOptions(*app, o->speculative, o->acceptance, o->draft_model,
                        "Predict every point (an engine profile's prediction) with");
  app->add_option("--price", r.price_usd_per_gpu_hour,
                  "USD per device-hour for $/Mtoken (default: the device's list price over 3 years)");
  app->add_option("--max-batch", r.max_batch, "Sequences one replica runs at most")
      ->capture_default_str();
  app->add_option("--mem-util", r.mem_util, "Fraction of device memory for weights + KV + state")
      ->capture_default_str();
  app->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember(report::FormatNames(report::PlanFormats())))
      ->capture_default_str();
  app->add_option("-o,--output", o->output, "Write to FILE (default: stdout)");
  return {app, [o] { return RunPlanCommand(*o); }};
}

}  // namespace opscope::cli
