// THE serving model (DESIGN "The LLM step model", "Multi-device deployments"): a model under a
// recipe (ModelBuild, once per recipe), deployed on a device (Serving: the step graph of every
// pipeline stage, once per recipe and deployment; one device is the deployment tp = ep = pp = 1
// with one stage), and ONE function, ServingFigures, that turns the stages' times at a workload
// into the figures: step time, tokens/s, TTFT, TPOT, the whole request, memory fit, max batch
// and the per-device figures.
//
// Every caller feeds it stage times from its own timing source: `opscope llm` (Evaluate: the
// full ledger and roofline of each stage), `opscope sweep llm` (a compiled plan per stage), and
// whatever comes next (engine-calibrated node times, a deployment planner) on the same Serving.
//
// Memory (DESIGN): the memory context is the most tokens a sequence's cache holds during the
// request — decode: context (+ gen-len); prefill: prompt (+ gen-len). Every device of a stage
// holds the sequences of its attention replica, so max_batch = min over stages of what one
// device holds × dp_attention.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "device/device.h"
#include "import/hf_config/recipe.h"
#include "llm/deployment.h"
#include "llm/figures.h"
#include "llm/llm.h"
#include "llm/model.h"
#include "support/error.h"

namespace opscope::llm {

using RecipeOptions = import::hf::RecipeOptions;  // --weights --activations --kv-dtype --state-dtype

// The workload of one request.
struct Workload {
  Phase phase = Phase::kDecode;
  int64_t batch = 1;               // sequences (a deployment's: all its devices')
  int64_t context = 4096;          // decode: cached tokens per sequence
  // The request's prompt tokens per sequence (default: context): prefill: the step's; decode
  // with gen_len: the prefill before the decode steps (the step reported stays at context).
  std::optional<int64_t> prompt;
  std::optional<int64_t> gen_len;  // the whole request: this many decode steps after the prompt
  double mem_util = 0.9;           // fraction of device memory weights + KV + state may use

  // The prompt the request prefills: --prompt, else --context.
  int64_t Prompt() const { return prompt.value_or(context); }
  // The most tokens a sequence's cache holds: prefill: the prompt (+ gen-len); decode: the
  // step's context, or with gen-len the request's prompt + gen-len when that is more.
  int64_t MemoryContext() const {
    if (phase == Phase::kPrefill) return Prompt() + gen_len.value_or(0);
    return gen_len ? std::max(context, Prompt() + *gen_len) : context;
  }
};

// Every field in range, errors naming the option ("option '--batch': must be positive, got 0";
// a prefill whose batch × prompt tokens overflow 64 bits names both options).
Result<void> CheckWorkload(const Workload& workload);

// A model under one recipe: the one-device step graph (named after the model) and the figures
// of the whole model, shared by every deployment built from it.
struct ModelBuild {
  Model model;
  import::hf::Recipe recipe;
  RecipeLabels labels;
  std::shared_ptr<const StepGraph> whole;
  ModelFigures figures;
  std::vector<KvWindow> kv_windows;
  // What the user should not miss about the inputs (a model folder whose safetensors index
  // disagrees with the weight bytes): JSON `warnings` and stderr.
  std::vector<std::string> warnings;
};
Result<std::shared_ptr<const ModelBuild>> BuildModel(Model model, const RecipeOptions& options);

// A model and recipe deployed on a device: the stages' step graphs (a one-device deployment's
// one stage is the whole model's graph) and what each stage's device holds. Built once, timed
// at any number of workloads; it may be moved, and its graphs stay where they are.
class Serving {
 private:
  struct Stage {
    std::shared_ptr<const StepGraph> step;
    ModelFigures figures;
    std::vector<KvWindow> kv_windows;
  };

 public:
  // The stage graphs of one ModelBuild's deployments, for a caller that deploys many (a
  // planner): a stage whose device holds the same share as one built before reuses its graph
  // (a StepGraph depends on the device's share alone: deployments differing only in
  // dp-attention without expert parallelism hold equal shares). Filled by Deploy.
  class StageCache {
    friend class Serving;
    std::shared_ptr<const ModelBuild> build_;  // the stages' (held: its address stays its own)
    std::map<std::string, Stage> stages_;
  };

  // Errors: a device's share that does not fit the recipe's blocks names the option that split
  // it ("option '--tp': a device's share does not fit the recipe (...)").
  static Result<Serving> Build(std::shared_ptr<const ModelBuild> build, Deployment deployment,
                               const device::Device& device);
  // For grids (sweeps, a planner): the deployment of `degrees` on `device`, or nullopt with
  // `why` when the model or device cannot take it (the degrees do not divide what they split,
  // or a device's share does not fit the recipe). Degrees of one device are not planned: they
  // give the one-device deployment.
  // `cache`: stage graphs to share with earlier deployments of the same build (nullptr: none).
  static Result<std::optional<Serving>> Deploy(std::shared_ptr<const ModelBuild> build,
                                               const Degrees& degrees,
                                               const device::Device& device, std::string& why,
                                               StageCache* cache = nullptr);

  const ModelBuild& build() const { return *build_; }
  const std::shared_ptr<const ModelBuild>& shared_build() const { return build_; }
  const Deployment& deployment() const { return deployment_; }
  const device::Device& device() const { return device_; }
  size_t stage_count() const { return stages_.size(); }
  const StepGraph& stage(size_t s) const { return *stages_[s].step; }
  const std::shared_ptr<const StepGraph>& shared_stage(size_t s) const { return stages_[s].step; }
  std::span<const StepGraph* const> stages() const { return stage_steps_; }
  // What the device of stage s holds: its weights, per-token KV and per-sequence state.
  const ModelFigures& stage_figures(size_t s) const { return stages_[s].figures; }
  // Per field, the most any stage's device holds (weights, per-token KV, per-sequence state).
  const ModelFigures& largest_share() const { return largest_share_; }

  // What memory holds at `memory_context` tokens per sequence: the largest batch the
  // deployment holds, and the whole model's windowed KV of one sequence.
  struct MemoryFit {
    uint64_t max_batch = 0;
    uint64_t kv_window_bytes_per_seq = 0;
  };
  // What another model holds beside this one on each device of the last stage (speculative
  // decoding's drafter, fed by the target's last layers and LM head): its weights and one
  // sequence's bytes at the memory context.
  struct Beside {
    uint64_t weight_bytes = 0;
    uint64_t bytes_per_seq = 0;
  };
  MemoryFit Fit(int64_t memory_context, double mem_util, const Beside& beside) const;
  MemoryFit Fit(int64_t memory_context, double mem_util) const;  // nothing beside
  // Bytes one sequence holds on one device of stage s at `memory_context`.
  uint64_t StageBytesPerSeq(size_t s, int64_t memory_context) const;

 private:
  // The stages of `deployment`; when a device's share does not fit the recipe, nullopt and
  // the importer's reason in `unfit`.
  static Result<std::optional<Serving>> Make(std::shared_ptr<const ModelBuild> build,
                                             Deployment deployment,
                                             const device::Device& device,
                                             std::optional<Error>& unfit,
                                             StageCache* cache = nullptr);
  // Stage k of `deployment`, built (or found in `cache`); nullopt with `unfit` as Make.
  static Result<std::optional<Stage>> MakeStage(const std::shared_ptr<const ModelBuild>& build,
                                                const Deployment& deployment, int64_t k,
                                                std::optional<Error>& unfit, StageCache* cache);

  std::shared_ptr<const ModelBuild> build_;
  Deployment deployment_;
  device::Device device_;
  std::vector<Stage> stages_;
  std::vector<const StepGraph*> stage_steps_;
  ModelFigures largest_share_;  // per field, the most any stage's device holds
};

// What a timing source says about one workload on a Serving, per stage.
struct StageTimes {
  std::span<const double> step_s;   // one micro-batch's step on the stage's device (required)
  std::span<const double> floor_s;  // its fused floor; empty when the source has none
  std::span<const double> comm_s;   // its collectives' time; empty when the source has none
  // With --gen-len (required then): a decode request's prefill of its prompt, per stage, and
  // Σ of its decode steps over the growing context, pipeline included (decode_sum.h).
  std::span<const double> prefill_step_s;
  std::optional<double> decode_sum_s;
};

// THE serving figures of `workload` on `serving` from its stages' times (see the top).
//   step_time_s  = PipelineStepTime(step_s, micro-batches)   (one device: its step)
//   tokens_per_s = tokens of the step / step_time_s          (decode: batch; prefill: batch · prompt)
//   ttft_s       = prefill: the step; decode with gen_len: the prefill of the prompt
//   e2e_s        = ttft_s + decode_sum_s;  tpot_s = decode_sum_s / gen_len
//   max_batch    = Serving::Fit(memory context).max_batch;  fits = batch <= max_batch
// Writes every field of `figures` (a sweep reuses one for all its points). `fit`: the Fit at
// the workload's memory context when the caller has it already (a sweep's contexts repeat for
// every batch); nullptr computes it.
void ServingFigures(const Serving& serving, const Workload& workload, const StageTimes& times,
                    Figures& figures, const Serving::MemoryFit* fit = nullptr);
inline Figures ServingFigures(const Serving& serving, const Workload& workload,
                              const StageTimes& times) {
  Figures figures;
  ServingFigures(serving, workload, times, figures);
  return figures;
}

// The full analysis of one workload on a Serving: each stage's ledger and roofline, timed
// into ServingFigures. The workload must pass CheckWorkload.
struct Evaluation {
  StepResult step;  // the busiest stage's (figures.per_device.busiest_stage; one device: its step)
  Figures figures;
  std::vector<std::string> assumptions;  // what the figures assume, beyond the ledger's
  std::vector<std::string> warnings;     // WorkloadWarnings
};

// What the figures of `workload` cannot show, for stderr and JSON `warnings`: a step or a
// request past the model's max_position_embeddings (positions it was not trained for; the
// message names the field and its value), and a --prompt that a decode step without
// --gen-len does not use.
std::vector<std::string> WorkloadWarnings(const import::hf::ModelSpec& spec,
                                          const Workload& workload);
Result<Evaluation> Evaluate(const Serving& serving, const Workload& workload);
// Σ of a request's decode steps at the roofline, from the prompt on (gen_len steps of
// split.seqs sequences per device): one stage's sum, or the pipeline's with its micro-batches.
// What Evaluate adds to a whole request's figures (and the planner's roofline search).
Result<double> RequestDecodeSum(const Serving& serving, const BatchSplit& split, int64_t prompt,
                                int64_t gen_len);

// One `opscope llm` run from its options (the CLI's and the Python package's one call): opens
// the model, resolves the device and recipe, plans the deployment, builds and evaluates it.
struct Request {
  std::string model;                 // a preset name or a config.json path (OpenModel)
  import::hf::ParseOptions parse;    // --model-type
  RecipeOptions recipe;
  std::string device = "h100-sxm";   // a device id or a device .json file
  Degrees degrees;
  Workload workload;
  // The predicting engine's load of a float32 checkpoint (RunLlmPredicted sets it from the
  // engine's profile): the model is served in its 16-bit dtype (ServeFloat32); nullopt: as
  // saved.
  std::optional<Float32Load> float32_load = std::nullopt;
};
struct LlmRun {
  Serving serving;
  Evaluation evaluation;
};
Result<LlmRun> RunLlm(const Request& request);

}  // namespace opscope::llm
