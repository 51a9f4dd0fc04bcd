// Predicted serving figures (`llm.predicted`, docs/engines.md and docs/llm.md "Serving
// dynamics"): a serving engine's profile (predict/) times every node of each stage's step
// graph; those stage times go through THE figures function (ServingFigures) for the step the
// static figures describe, and through the serving dynamics (dynamics.h) for whole requests —
// C requests in flight under continuous batching, disaggregated prefill and decode, and
// speculative decoding with the model's MTP modules. Beside each figure: the fused floor (a
// true lower bound) and the error the profile's fit and the held-out end-to-end measurements
// show (docs/accuracy.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/ledger.h"
#include "llm/dynamics.h"
#include "llm/serving.h"
#include "roofline/roofline.h"
#include "support/error.h"

namespace opscope::predict {
class StepPredictor;
struct EngineProfile;
}  // namespace opscope::predict

namespace opscope::llm {

// --disagg P:D with --prefill-tp / --decode-tp (default: --tp).
struct Disagg {
  int64_t prefill_workers = 1, decode_workers = 1;
  std::optional<int64_t> prefill_tp, decode_tp;
};
// "P:D", both positive; the error names --disagg.
Result<Disagg> ParseDisagg(std::string_view text);

// --speculative mtp:N --acceptance R: N draft tokens from the model's MTP module(s) per step,
// each accepted with probability R (until the first rejection). --speculative draft:N
// --draft-model M: the N draft tokens come from a separate draft model M (a preset, config.json
// or model folder), deployed beside the target at its tensor-parallel degree.
struct Speculative {
  int64_t drafts = 0;
  double acceptance = 0;
  std::optional<std::string> draft_model;  // draft:N; nullopt: mtp:N
};
// "mtp:N" or "draft:N" with N in 1..16; draft:N needs `draft_model`, mtp:N takes none. Errors
// name --speculative, --acceptance or --draft-model.
Result<Speculative> ParseSpeculative(std::string_view text, double acceptance,
                                     std::optional<std::string> draft_model = std::nullopt);

// The --speculative, --acceptance and --draft-model options together (opscope llm, sweep llm,
// plan and their Python calls): nullopt without them; each without its partner an error naming
// it.
Result<std::optional<Speculative>> ParseSpeculativeOptions(
    const std::optional<std::string>& text, std::optional<double> acceptance,
    const std::optional<std::string>& draft_model);

// "mtp:N" or "draft:N": the drafter as --speculative names it.
std::string SpeculativeName(const Speculative& s);

// " --speculative mtp:N --acceptance R" (draft:N adds " --draft-model M"): the options that
// give `s` back, for a command that reproduces a prediction.
std::string SpeculativeArgs(const Speculative& s);

// How the requests are served (default: aggregated continuous batching, no speculation,
// lengths that vary from request to request).
struct ServingModes {
  std::optional<Disagg> disagg;
  std::optional<Speculative> speculative;
  // --lengths fixed: every request exactly --prompt and --gen-len tokens (a fixed-length
  // benchmark), which keeps the loop in groups (llm::FixedLengths); aggregated serving only.
  bool fixed_lengths = false;
};

// --lengths: "varied" (false) or "fixed" (true); the error names --lengths.
Result<bool> ParseFixedLengths(std::string_view text);
// The --lengths value of `fixed` as reports print it: "fixed" or "varied".
inline const char* LengthsName(bool fixed) { return fixed ? "fixed" : "varied"; }

struct PredictOptions : ServingModes {
  // --engine: a built-in id or a profile .json; nullopt: the device's default engine.
  std::optional<std::string> engine;
};

// The prediction options as a user types them (the CLI's --engine, --disagg P:D,
// --prefill-tp, --decode-tp, --speculative mtp:N|draft:N, --acceptance R, --draft-model M,
// --lengths varied|fixed;
// Python's keywords of the same names), checked together: --prefill-tp/--decode-tp only with
// --disagg, --speculative and --acceptance only together, --lengths fixed not with --disagg.
// Errors name the option.
struct PredictTexts {
  std::optional<std::string> engine, disagg, speculative, lengths;
  std::optional<std::string> draft_model;  // --draft-model (with --speculative draft:N)
  std::optional<int64_t> prefill_tp, decode_tp;
  std::optional<double> acceptance;
};
Result<PredictOptions> ParsePredictOptions(const PredictTexts& texts);

// The fit error of a kernel class that holds a large share of the predicted step.
struct KernelClassError {
  std::string kernel_class, variant;  // the parameters used (after fallbacks)
  double share = 0;                   // of the step's kernel time
  std::string basis;                  // fitted, public, derived (a family member too)
  uint32_t samples = 0;               // 0: not fitted (no error figure)
  double median_abs_error = 0, p90_abs_error = 0;
};

// The held-out end-to-end error of the engine (docs/accuracy.md) for one metric.
struct EndToEndErrorFigure {
  std::string metric;  // "tpot", "ttft", "decode_tokens_per_s", ...
  std::string scope;   // the device id, or "all devices"
  uint32_t runs = 0;
  double median_abs_error = 0;
};

// What speculative decoding's drafter holds on each decoding device beside the target (the
// last stage's devices under --pp; the decode workers' under --disagg), and the largest batch
// those devices hold with it: Serving::Fit with them beside the target.
struct DrafterMemory {
  uint64_t weight_bytes = 0;   // per device
  uint64_t bytes_per_seq = 0;  // one sequence's KV at the memory context, per device
  uint64_t max_batch = 0;
  bool fits = false;           // the requests in flight fit (a decode worker's share of them)
};

// The draft model `name` (--draft-model: a preset, config.json or model folder; an EAGLE-3 head)
// for `target`, opened and checked: the target's vocabulary (within llama.cpp's 128 rows of
// padding) and, for an EAGLE-3 head, the hidden size it was trained on. Errors name
// --draft-model.
Result<Model> OpenDraftModel(const std::string& name, const Model& target);

// How `profile`'s engine loads a float32 checkpoint (defaults.float32_dtype); nullopt where
// it keeps float32 (the roofline profile).
std::optional<Float32Load> Float32LoadOf(const predict::EngineProfile& profile);
// The same for the engine --engine names (or the device's default); nullopt also where the
// engine cannot be resolved (the prediction reports why).
std::optional<Float32Load> EngineFloat32Load(const std::optional<std::string>& engine,
                                             const device::Device& device);

// The MTP modules' memory beside `serving`'s target and the fit with them at
// `memory_context` tokens a sequence (what --speculative mtp:N reports; a planner's memory bound).
Result<DrafterMemory> MtpDrafterMemory(const Serving& serving, int64_t memory_context,
                                       double mem_util);

// The serving dynamics of a whole request (with --gen-len).
struct PredictedDynamics {
  std::string mode;  // "aggregated" | "disaggregated"
  std::string lengths = "varied";  // "varied" | "fixed" (--lengths)
  int64_t concurrency = 1, prompt = 0, gen_len = 0;
  int64_t chunk_tokens = 0;    // the engine's chunked-prefill budget (0: whole prompts)
  double tokens_per_step = 1;  // speculative decoding's expected tokens per step
  // Speculative decoding's drafter: "mtp:N" (the MTP modules) or "draft:N <model>"; empty: none.
  std::string speculative;
  std::optional<DrafterMemory> drafter_memory;  // with `speculative`
  // The drafter's time in a decode step of the requests in flight (a decode worker's share
  // under --disagg), inside the step's time; 0 without `speculative`.
  double draft_s = 0;
  int64_t prefill_workers = 0, decode_workers = 0;  // disaggregated
  DynamicsFigures figures;
};

struct Predicted {
  std::string engine;   // the profile's id
  std::string why;      // "--engine", "default for h100-sxm", "no engine profile for tpu-v5e"
  std::string basis;    // the entry's (fitted, public, derived; a family member derived; transparent)
  std::string version;  // engine versions the profile describes
  // The step the static figures describe (llm.step_time_s), predicted.
  double step_time_s = 0, tokens_per_s = 0;
  std::optional<double> ttft_s, tpot_s, e2e_s;  // with --gen-len: the dynamics'; prefill: ttft
  // Fused floors (best-case KV; a speculative step's tokens at most N + 1): nothing beats them.
  std::optional<double> ttft_floor_s, tpot_floor_s;
  std::optional<PredictedDynamics> dynamics;
  std::vector<KernelClassError> kernel_errors;     // the dominant classes, largest first
  std::vector<EndToEndErrorFigure> end_to_end_errors;
  std::vector<double> node_time_s;  // the busiest stage's nodes (the report's), parallel to them
  std::vector<std::string> notes;   // what the prediction assumes or substituted
};

// One stage's engine timing node by node, for callers that cost a stage's nodes themselves (a
// sweep's compiled plans): given a node's ledger entry at a point, its bindings and its
// roofline time, the same time Predict gives that node from the full analysis.
class StageNodeTimer {
 public:
  StageNodeTimer(const predict::StepPredictor& predictor, const predict::EngineProfile& profile)
      : predictor_(&predictor), profile_(&profile) {}
  // Node i's predicted time (0 when it moves no bytes, FLOPs or link bytes).
  double NodeTime(size_t node, const cost::NodeCost& cost, const expr::Bindings& b,
                  const roofline::NodeTime& roof) const;
  // Whether node i, taking time, launches a kernel of its own (not fused into a neighbour).
  bool LaunchesKernel(size_t node) const;
  // The step's fixed costs beside `kernels` launched kernels taking `kernels_s`; `decode`: a
  // decode step, else a step with prompt tokens (each with CUDA graphs where the engine
  // captures them; without, the CPU's excess over kernels_s: predict::StepPredictor::Overhead).
  double Overhead(uint64_t kernels, double kernels_s, bool decode) const;
  // Two timers with the same identity time every node alike (the same compiled predictor).
  const void* identity() const { return predictor_; }

 private:
  const predict::StepPredictor* predictor_;
  const predict::EngineProfile* profile_;
};

// One stage's predicted step at one binding: what the engine gives each node of the stage's
// graph, and the step (Σ node times in graph order + the fixed costs).
struct StageStep {
  std::vector<double> node_time_s;  // parallel to the stage graph's nodes
  double overhead_s = 0, step_time_s = 0;
  uint64_t kernels = 0;  // nodes that launch a kernel of their own (an eager step's CPU cost)
};
// A caller's own source of stage steps (a sweep's compiled plans): stage `stage`'s step at
// `rows` token rows of `seqs` sequences after `ctx` cached tokens, equal to the engine's
// prediction of that step's full analysis; nullopt where it cannot say (the predictor then
// runs the full analysis).
using StageSource = std::function<Result<std::optional<StageStep>>(
    size_t stage, int64_t rows, int64_t seqs, int64_t ctx, bool decode)>;

// A caller's compiled timing of one stage graph (a sweep's StepPlan): the engine's step at
// `rows` token rows of `seqs` sequences after `ctx` cached tokens, equal to its prediction of
// the full analysis; nullopt where it cannot say (the full analysis then runs).
using GraphStepSource = std::function<Result<std::optional<StageStep>>(
    int64_t rows, int64_t seqs, int64_t ctx, bool decode)>;
// Makes the source of one stage graph on the device, given the graph's node timer.
using GraphSourceMaker = std::function<Result<GraphStepSource>(
    const StepGraph& graph, const device::Device& device, const StageNodeTimer& timer)>;

// The compiled stage predictors of many deployments of one model on one device with one
// engine (a planner's splits): deployments that share a stage graph (Serving::StageCache)
// share its predictor and the steps it timed, and the engine is resolved once. It holds the
// graphs it has seen. With a `maker`, each graph's steps are timed by its source where it
// says them (one call at a time). Predictors are made with it from one thread at a time.
class StagePredictorCache {
 public:
  explicit StagePredictorCache(GraphSourceMaker maker = nullptr);
  ~StagePredictorCache();
  StagePredictorCache(const StagePredictorCache&) = delete;
  StagePredictorCache& operator=(const StagePredictorCache&) = delete;
  struct Impl;  // predicted.cc's

 private:
  friend class ServingPredictor;
  std::unique_ptr<Impl> impl_;
};

class ServingPredictor;
// A disaggregated request's workers already deployed (a planner's splits): the predictors of
// the deployment at --prefill-tp and of the one at --decode-tp, the other degrees, the device
// and the engine as the predictor's they are passed to. Their steps are timed on them (and
// stay cached there) rather than on deployments made again per call.
struct DisaggWorkers {
  const ServingPredictor* prefill = nullptr;
  const ServingPredictor* decode = nullptr;
};

// THE prediction entry point for callers that predict many points (a sweep, a planner): one
// deployment (`serving`, deployed with `degrees`) with one engine — the engine's profile
// resolved for the device and every stage's StepPredictor compiled once — then Predict per
// point: each step it times is analyzed (ledger + roofline) and timed by the profile; no graph
// is rebuilt (--disagg alone redeploys the prefill and decode workers at their own tp).
// `serving` must outlive the predictor.
//
//   auto p = ServingPredictor::Make(serving, degrees, "vllm");      // once per deployment
//   for (const Workload& w : points) auto figures = p->Predict(w);   // per point
//
// Predict's figures: the static step of `workload` (step_time_s, tokens_per_s; prefill:
// ttft_s and its floor) and, with workload.gen_len, the whole request under the serving
// dynamics (ttft_s, tpot_s, e2e_s, tokens_per_s, their floors; `modes`: --disagg,
// --speculative, --lengths). `node_stage`: the stage whose per-node times to keep in node_time_s (the
// report's busiest stage); nullopt keeps none (the cheaper call for a planner).
// Errors name the option: --engine without a profile for the device, --speculative on a model
// without MTP modules, --disagg over a link the device has no figure for.
class ServingPredictor {
 public:
  // `shared`: stage predictors to share with other deployments (nullptr: its own).
  static Result<ServingPredictor> Make(const Serving& serving, const Degrees& degrees,
                                       const std::optional<std::string>& engine,
                                       StagePredictorCache* shared = nullptr);
  Result<Predicted> Predict(const Workload& workload, const ServingModes& modes = {},
                            std::optional<size_t> node_stage = std::nullopt) const;
  // The whole request only (workload.gen_len set): ttft_s, tpot_s, e2e_s, tokens_per_s and
  // the dynamics, equal to Predict's; no static step, no floors, no error figures (the
  // planner's call, per batch of a split). With modes.disagg, `workers` (when given) are
  // the workers' deployments; equal figures to redeploying them.
  Result<Predicted> PredictRequestFigures(const Workload& workload,
                                          const ServingModes& modes = {},
                                          const DisaggWorkers* workers = nullptr) const;
  const std::string& engine() const;  // the profile's id

  // The drafter `modes.speculative` names beside this deployment's target — its MTP modules,
  // or the draft model deployed at its tp (once per predictor) — and the fit with it at
  // `memory_context` tokens a sequence (a planner's memory bound; `fits` unset).
  Result<DrafterMemory> DrafterFit(int64_t memory_context, double mem_util,
                                   const ServingModes& modes) const;
  // The figures alone (step_time_s, tokens_per_s, ttft_s, tpot_s, e2e_s, dynamics — no
  // floors, node times, notes or error figures: a sweep's row), the steps of this deployment
  // from `source` where it says them. Equal to Predict's figures.
  Result<Predicted> PredictFigures(const Workload& workload, const ServingModes& modes,
                                   const StageSource& source) const;
  // Stage s's node timer (valid while the predictor lives).
  StageNodeTimer NodeTimer(size_t stage) const;

  ServingPredictor(ServingPredictor&&) noexcept;
  ServingPredictor& operator=(ServingPredictor&&) noexcept;
  ~ServingPredictor();

 private:
  struct State;
  explicit ServingPredictor(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Whether `engine` (as --engine names it; nullopt: the device's default) predicts on
// `device`: an error where the engine does not resolve at all (an unknown id, a bad profile
// file, an implementation it does not offer); the reason it cannot predict this device (no
// entry for it; ENGINE:NAME's kernels not fitted there), in the words ServingPredictor::Make
// would refuse it with; nullopt where it can. For a grid over devices (a sweep) that lists
// the devices an engine cannot take rather than failing on the first.
Result<std::optional<std::string>> EngineCannotPredict(const std::optional<std::string>& engine,
                                                       const device::Device& device);

// The prediction of `evaluation` (Evaluate of `workload` on `serving`): a ServingPredictor
// made for it, its node times those of the evaluation's busiest stage. Errors name the option:
// an engine without a profile for the device, --speculative on a model without MTP modules,
// --disagg over a link the device has no figure for.
Result<Predicted> PredictServing(const Serving& serving, const Workload& workload,
                                 const Evaluation& evaluation, const PredictOptions& options,
                                 const Degrees& degrees);

// `opscope llm` with its prediction: RunLlm, then PredictServing of its evaluation.
struct PredictedRun {
  LlmRun run;
  Predicted predicted;
};
Result<PredictedRun> RunLlmPredicted(const Request& request, const PredictOptions& options);

}  // namespace opscope::llm
