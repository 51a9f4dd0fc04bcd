// `opscope plan`: the best deployment of an LLM on N devices under latency targets (issue 15).
// Searches aggregated deployments (every split of up to N devices, replicated to fill N, at
// every batch, for each recipe) and, with --disagg, disaggregated ones (x prefill workers and y
// decode workers, each with its own split, the KV moved between them), keeps what meets the
// TTFT and TPOT targets, and returns the Pareto front of tokens/s per device against tokens/s
// per user (1 / TPOT), the best point, the fewest devices that serve a request rate, and the
// cost and energy of each point.
//
// Every figure of a point is the serving model's (llm/serving.h): the point's deployment is a
// llm::Serving and its TTFT, TPOT and request time are those of the workload `opscope llm
// --phase prefill --prompt ISL --gen-len OSL --batch B` with the point's degrees and weights:
// llm.predicted's when an engine profile exists for the device (the default engine or
// --engine E; one llm::ServingPredictor per split, B requests in flight under continuous
// batching; disaggregated points are `--disagg x:y` predictions), else llm::Evaluate's roofline
// estimate — the same functions, the same numbers (plan_test checks them against the binary).
//
// The search prunes instead of enumerating (search.cc): a split's batches are bisected to the
// largest one that fits memory and meets the targets (the roofline estimate's TTFT and TPOT
// never fall as the batch grows; a prediction's can — prompts sharing a chunk, fixed lengths'
// waves — so there every ladder batch is tried first); batches between two evaluated ones are skipped when the corner they cannot beat is
// already dominated by the front; a pipeline split is skipped where the same split without
// stages holds the batch (its points dominate); each evaluation is memoized per split, and
// splits whose devices hold the same share build their stage graphs once and share the
// engine's compiled predictors, timed steps and roofline figures of them.
//
// The result is plain data; report/ renders it (text, JSON, CSV, HTML).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llm/model.h"  // import::hf::ParseOptions, through the serving model
#include "llm/predicted.h"  // llm::Speculative
#include "support/error.h"

namespace opscope::plan {

// ---- What to plan --------------------------------------------------------------------------

struct Targets {
  std::optional<double> ttft_s;  // --ttft-ms / 1000
  std::optional<double> tpot_s;  // --tpot-ms / 1000
};

struct PlanRequest {
  std::string model;               // a preset name, config.json or model folder (llm::OpenModel)
  import::hf::ParseOptions parse;  // --model-type
  std::string device = "h100-sxm";
  int64_t gpus = 8;                // N: devices to deploy on
  int64_t isl = 4096;              // prompt tokens per request
  int64_t osl = 1024;              // output tokens per request
  Targets targets;
  std::optional<double> rate;      // requests/s to size for (--rate)
  // The engine whose profile predicts the figures (a built-in id or a profile .json, as
  // `opscope llm --engine`): nullopt the device's default (predict::DefaultEngine), "roofline"
  // the roofline estimate. The launch hints are for it when it is vllm, sglang, trtllm or
  // llama.cpp, else vLLM's.
  std::optional<std::string> engine;
  // The recipes searched: each a --weights value (nullopt: the config's own).
  std::vector<std::optional<std::string>> weights{std::nullopt};
  std::optional<std::string> activations, kv_dtype;
  bool disagg = false;
  // --lengths fixed: every request exactly isl and osl tokens, as a fixed-length benchmark
  // sends them (`opscope llm --lengths fixed`: requests that start together share prefill
  // steps). A prediction of the serving loop: an engine profile's, aggregated points only.
  bool fixed_lengths = false;
  // --speculative mtp:N | draft:N --acceptance R [--draft-model M]: every point predicted with
  // the model's MTP modules or the draft model drafting (`opscope llm --speculative`), the
  // drafter's memory in each worker's fit. A prediction of the serving loop: an engine
  // profile's.
  std::optional<llm::Speculative> speculative;
  std::optional<double> price_usd_per_gpu_hour;  // --price; else the device's list price
  int64_t max_batch = 512;         // sequences one replica runs at most (engines cap it too)
  double mem_util = 0.9;
  // Also evaluate the grid the HTML page's sliders move over (PlanResult::grid).
  bool page_grid = false;
};

// ---- The result ----------------------------------------------------------------------------

// One side of a deployment: an aggregated replica, or a disaggregated worker pool.
struct Side {
  int64_t tp = 1, ep = 1, pp = 1, dp_attention = 1;
  int64_t devices = 1;    // of one replica / worker
  int64_t batch = 1;      // sequences one replica / worker runs (`opscope llm --batch`)
  int64_t count = 1;      // replicas (agg) or workers (disagg)
  double ttft_s = 0;      // its prefill of `batch` prompts
  std::optional<double> tpot_s;  // agg and decode workers: the mean decode step
  double requests_per_s = 0;     // one replica / worker
  uint64_t max_batch = 0;        // what its memory holds (at the request's context)
};

enum class Mode : uint8_t { kAgg, kDisagg };
const char* ModeName(Mode mode);  // "agg" | "disagg"

struct PlanPoint {
  Mode mode = Mode::kAgg;
  std::optional<std::string> weights;  // the --weights value (nullopt: the config's own)
  std::string recipe;                  // "weights/activations/kv" as reports print it
  Side agg;                            // mode agg
  Side prefill, decode;                // mode disagg
  double kv_transfer_s = 0;            // disagg: a prefill batch's KV to the decode workers
  // Predicted disagg: the requests in flight of the whole deployment (the `--batch` of its
  // `opscope llm --disagg x:y` run); 0 otherwise.
  int64_t requests_in_flight = 0;
  int64_t gpus = 0;                    // devices the point uses (≤ N)
  double ttft_s = 0, tpot_s = 0;
  double tokens_per_s = 0;             // output tokens/s of all its devices
  double tokens_per_s_per_device = 0;
  double tokens_per_s_per_user = 0;    // 1 / tpot_s
  double memory_headroom = 0;          // 1 − batch / max_batch (the decode side's)
  std::optional<double> usd_per_mtoken, tokens_per_joule;
  bool meets_targets = false;
  std::string hint;                    // the engine's launch options (a hint, not a recipe)
  std::string reproduce;               // the `opscope llm` command(s) that give its figures
};

// The fewest devices that serve --rate within the targets, and the configuration that does.
struct RateSizing {
  int64_t gpus = 0;
  PlanPoint point;  // its figures at the configuration (gpus = the sized count)
};

// The HTML page's grid: per (ISL, OSL) cell, every deployed split at a ladder of batches, with
// the figures the page needs to redo the search's filtering and front in the browser.
struct GridCandidate {
  uint32_t config = 0;  // index into PageGrid::configs
  int64_t batch = 0;
  double ttft_s = 0, tpot_s = 0, e2e_s = 0;
  double kv_transfer_s = 0;  // as a disaggregated prefill worker
};
struct GridCell {
  int64_t isl = 0, osl = 0;
  std::vector<GridCandidate> candidates;
};
struct PageGrid {
  std::vector<std::string> configs;  // "tp 8 ep 8 pp 1 dp 8"
  std::vector<int64_t> config_devices;
  std::vector<std::string> config_recipes;
  std::vector<GridCell> cells;  // ISL-major: 3 ISLs × 3 OSLs
  double link_bytes_per_s = 0, link_latency_s = 0;  // disagg KV transfer
};

struct PlanResult {
  std::string model, device;
  int64_t gpus = 0, isl = 0, osl = 0;
  bool fixed_lengths = false;  // --lengths fixed (PlanRequest::fixed_lengths)
  std::optional<llm::Speculative> speculative;  // --speculative (PlanRequest::speculative)
  Targets targets;
  std::optional<double> rate;
  std::string engine;       // the predicting engine's id ("roofline": none)
  std::string engine_why;   // "--engine", "default for h200", ...
  std::string hint_engine;  // the engine the launch hints are for
  std::string estimate;     // "roofline" | "predicted"
  std::vector<PlanPoint> front;        // meets the targets, none dominated, by tokens/s per device
  std::optional<size_t> best;          // index into front: the most tokens/s per device
  std::optional<RateSizing> rate_sizing;
  uint64_t searched = 0;               // configurations evaluated (per split, shared ones too)
  uint64_t splits = 0, splits_pruned = 0;  // splits considered; of those, never built
  std::vector<std::string> skipped;    // splits that cannot run or meet the targets, with why
  std::vector<std::string> assumptions;
  // Cost and energy inputs, with where they come from.
  std::optional<double> usd_per_gpu_hour, power_w;
  std::string price_basis, power_basis;
  std::optional<PageGrid> grid;
};

// Checks the request (every option in range, naming it), opens the model and device, and
// searches. Errors name the option or the input.
Result<PlanResult> RunPlan(const PlanRequest& request);

}  // namespace opscope::plan
