// `opscope sweep llm`: one LLM over the grid recipe × device × deployment (tp × ep × pp) ×
// request (output length × disaggregation split) × batch × context, each point the figures
// `opscope llm` prints for it. The serving model is llm's: per recipe a llm::ModelBuild, per
// device and deployment a llm::Serving (the stages' step graphs, built once), and each point's
// figures are llm::ServingFigures of its stage times — from step plans compiled once per stage
// (step_plan.h), or the full analysis (llm::Evaluate) where a plan gives a point up or
// --gen-len asks for whole requests. Deployments the model or device cannot take (heads not
// divisible by tp, ...) are skipped and listed in the result with the reason, as are
// disaggregated splits whose workers it cannot take and, with --engine, devices the engine
// cannot predict (no profile entry; ENGINE:NAME's kernels not fitted there); a grid with none
// that can run is an error.
//
// The result is plain data: one row per point, in grid order (context fastest); report/
// renders it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "device/device.h"
#include "llm/model.h"
#include "llm/predicted.h"
#include "llm/serving.h"
#include "support/error.h"

namespace opscope::sweep {

// ---- The result ----------------------------------------------------------------------------

// The parallel degrees of one deployment (all 1: one device).
struct SweepDeployment {
  int64_t tp = 1, ep = 1, pp = 1, dp_attention = 1;
  int64_t devices = 1;

  bool operator==(const SweepDeployment&) const = default;
};

// How a row's requests are served: whole requests of --gen-len/--osl tokens (nullopt: one
// step) and, with --disagg, the disaggregated split (`opscope llm --disagg P:D --prefill-tp
// --decode-tp`; nullopt: aggregated; its tps nullopt: the row's tp, as llm's default).
struct SweepServing {
  std::optional<int64_t> gen_len;
  std::optional<llm::Disagg> disagg;
};

struct SweepRow {
  uint32_t device = 0;      // index into SweepResult::devices
  uint32_t recipe = 0;      // index into SweepResult::recipes
  uint32_t deployment = 0;  // index into SweepResult::deployments
  uint32_t serving = 0;     // index into SweepResult::servings
  int64_t batch = 0;
  int64_t context = 0;  // decode: cached tokens per sequence; prefill: prompt tokens
  double step_time_s = 0;
  double tokens_per_s = 0;
  std::optional<double> tpot_s;  // decode: the step time, or the request's mean with --gen-len
  std::optional<double> ttft_s;  // prefill: the step time; decode with --gen-len: the prefill
  bool compute_bound = false;    // the step's time is mostly in compute-bound nodes
  uint64_t max_batch = 0;        // a deployment's: per its busiest device's memory
  bool fits = false;
};

// With --engine: the engine profile's figures of a point (llm.predicted's for its workload).
struct PredictedRow {
  double step_time_s = 0, tokens_per_s = 0;
  std::optional<double> tpot_s;  // decode: the predicted step, or the request's with --gen-len
  std::optional<double> ttft_s;  // prefill: the step; with --gen-len: the serving dynamics'
  // With --disagg: the TTFT spent moving a request's KV to the decode workers (nullopt:
  // aggregated). The disaggregated ttft_s includes it; the tpot_s has no prompt chunks.
  std::optional<double> kv_transfer_s;
  // With --speculative: the fit with the drafter beside the target (llm.predicted's
  // dynamics.drafter_memory: max_batch and fits; a decode worker's under --disagg).
  uint64_t drafter_max_batch = 0;
  bool drafter_fits = false;
};

struct SweepResult {
  std::string model;
  llm::Phase phase = llm::Phase::kDecode;
  std::vector<std::string> devices;  // ids
  std::vector<std::string> recipes;  // "weights/activations/kv"
  std::vector<SweepDeployment> deployments;
  std::vector<SweepServing> servings;  // the grid's output lengths × disaggregation splits
  bool disagg = false;                 // --disagg was given: rows name their split
  // --speculative, --acceptance and --draft-model as given: rows give the drafter's fit.
  std::optional<llm::Speculative> speculative;
  std::vector<SweepRow> rows;
  // With --engine: the engine's id and each point's prediction, parallel to `rows` (empty
  // without --engine).
  std::optional<std::string> engine;
  std::vector<PredictedRow> predicted;
  // Deployments of the grid the model or device cannot take (heads not divisible by tp, ...):
  // "tp 3, ep 1, pp 1 on h200: option '--tp': ...", in grid order. They have no rows.
  std::vector<std::string> skipped;
  std::vector<std::string> assumptions;
  // How the points were costed (for the summary): compiled plan vs full analysis.
  uint64_t points_by_plan = 0, points_by_full_analysis = 0;
};

// ---- What to sweep ------------------------------------------------------------------------

// The grid's axes and the options every point shares (as `opscope llm` takes them). The
// serving axes `opscope plan` searches are these: its isl is `contexts` (a prefill's prompt, or
// the request's prompt with gen_lens), its osl `gen_lens`, its batch (sequences of one replica,
// `opscope llm --batch`; with --disagg the requests in flight of the whole deployment)
// `batches`, its split tps × eps × pps × dp_attentions, and its disaggregated points `disaggs`
// × prefill_tps × decode_tps.
struct Grid {
  llm::Phase phase = llm::Phase::kDecode;
  std::vector<int64_t> batches;
  std::vector<int64_t> contexts;    // decode: cached tokens; prefill: prompt tokens
  std::vector<std::optional<std::string>> weights;  // nullopt: the config's own
  std::optional<std::string> activations, kv_dtype, state_dtype;
  double mem_util = 0.9;
  // --gen-len/--osl LIST: time whole requests of each output length (empty: single steps).
  std::vector<int64_t> gen_lens;
  // --engine: predict every point with this engine's profile (llm::ServingPredictor; one per
  // deployment) beside its roofline figures.
  std::optional<std::string> engine;
  // --disagg P:D[,P:D...]: each point also predicted as `opscope llm --disagg P:D` (needs
  // --engine and --gen-len; a nullopt item, "agg", the aggregated prediction), with
  // --prefill-tp / --decode-tp LISTs (empty: the row's tp). The roofline columns are the
  // deployment's own, as llm's are.
  std::vector<std::optional<llm::Disagg>> disaggs;
  std::vector<int64_t> prefill_tps, decode_tps;
  // --lengths fixed: every request of fixed lengths, as `opscope llm --lengths fixed` predicts
  // it (needs --engine and --gen-len; aggregated serving only).
  bool fixed_lengths = false;
  // --speculative mtp:N | draft:N --acceptance R: every request predicted with the model's MTP
  // modules or the draft model (an EAGLE-3 head included) drafting, as `opscope llm
  // --speculative` (needs --engine and --gen-len); a draft is deployed once per deployment of
  // the target (each ServingPredictor keeps its own).
  std::optional<llm::Speculative> speculative;
  // Parallel degrees (empty: 1; dp_attentions empty: llm's default, ep/tp when ep > tp), swept
  // as axes; the rest as `opscope llm` takes them.
  std::vector<int64_t> tps, eps, pps, dp_attentions;
  std::optional<int64_t> gpus_per_node, micro_batches;
  // Threads that cost a large grid (0: the machine's cores, at most 8); the rows are the same
  // for any count.
  unsigned threads = 0;
};

// A grid over an opened model and resolved devices.
struct SweepSpec : Grid {
  const llm::Model* model = nullptr;  // must outlive the sweep
  std::vector<device::Device> devices;
};

// A grid by name, as the CLI and the Python package take it.
struct SweepRequest : Grid {
  std::string model;                 // a preset name or a config.json path (llm::OpenModel)
  import::hf::ParseOptions parse;    // --model-type
  std::vector<std::string> devices;  // device ids or device .json files
};

// At most this many points a sweep.
inline constexpr uint64_t kMaxPoints = uint64_t{1} << 26;

// Called now and then with the points done and the total.
using Progress = std::function<void(uint64_t done, uint64_t total)>;

// Both check the grid first (every option in range, naming it; at most kMaxPoints points).
Result<SweepResult> RunSweep(const SweepSpec& spec, const Progress& progress = {});
Result<SweepResult> RunSweep(const SweepRequest& request, const Progress& progress = {});

}  // namespace opscope::sweep
