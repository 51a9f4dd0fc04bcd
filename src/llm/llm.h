// Serving figures of an LLM step (DESIGN "The LLM step model"): parameter counts, stored
// weight bytes, KV and state bytes, the step's ledger and roofline, tokens/s, TTFT, the whole
// request with --gen-len, and the largest decode batch that fits a device's memory.
//
// Conventions (docs/llm.md):
//  * params_total: every weight tensor of the step graph once (a tied LM head shares the
//    embedding table); params_active: minus the routed experts one token does not use
//    ((E − top_k)/E of every routed-expert tensor); params_embedding: the input table.
//  * weight_bytes: every weight tensor at its format, scales included, all experts.
//  * memory context: the most tokens a sequence's cache holds during the request — decode:
//    context (+ gen-len); prefill: prompt (+ gen-len). KV, windowed KV and max_batch use it.
//  * per-tensor scale constants of the KV cache (fp8_e4m3: 4 bytes per cache tensor) are left
//    out of the per-token and per-sequence figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/ledger.h"
#include "device/device.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "report/report_model.h"
#include "roofline/roofline.h"
#include "support/error.h"

namespace opscope::llm {

enum class Phase : uint8_t { kDecode, kPrefill };

struct Request {
  Phase phase = Phase::kDecode;
  int64_t batch = 1;
  int64_t context = 4096;              // decode: cached tokens per sequence
  int64_t prompt = 0;                  // prefill: prompt tokens per sequence (> 0)
  std::optional<int64_t> gen_len;      // the whole request: O decode steps after the prefill
  double mem_util = 0.9;               // fraction of device memory weights + KV + state may use
};

// Figures that depend on the model and recipe only.
struct ModelFigures {
  uint64_t params_total = 0, params_active = 0, params_embedding = 0;
  uint64_t weight_bytes = 0;
  uint64_t kv_bytes_per_token = 0;  // full-attention layers, one sequence
  uint64_t state_bytes_per_seq = 0; // recurrent + conv state, one sequence
};
Result<ModelFigures> ComputeModelFigures(const import::hf::StepGraph& step);

// Σ over sliding-window caches of min(context, window) · bytes per token.
uint64_t KvWindowBytesPerSeq(const import::hf::StepGraph& step, int64_t context);

// Bytes one sequence holds at `context` cached tokens: full KV + windowed KV + state.
uint64_t BytesPerSeq(const import::hf::StepGraph& step, const ModelFigures& m, int64_t context);

// The largest batch whose weights + per-sequence bytes fit mem_util · memory; 0 if the weights
// alone do not fit.
uint64_t MaxBatch(const ModelFigures& m, uint64_t bytes_per_seq, double memory_bytes,
                  double mem_util);

// The workload bindings of one step (DESIGN's symbols n, seqs, ctx).
cost::Workload DecodeBindings(int64_t batch, int64_t context);
cost::Workload PrefillBindings(int64_t batch, int64_t prompt);

struct StepResult {
  cost::Ledger ledger;
  roofline::Analysis analysis;
};
Result<StepResult> AnalyzeStep(const import::hf::StepGraph& step, const cost::Workload& workload,
                               const device::Device& device);

// Σ of decode step times at batch B over contexts first, first + 1, ..., first + steps − 1.
// Exact: node bytes and FLOPs are piecewise affine in the context, so each affine stretch is
// summed in closed form (max of two affine functions), found by evaluating a few contexts.
Result<double> SumDecodeSteps(const import::hf::StepGraph& step, const device::Device& device,
                              int64_t batch, int64_t first, int64_t steps);

struct Run {
  StepResult step;  // the requested step (decode or prefill)
  report::LlmFigures figures;
  std::vector<std::string> assumptions;  // what the serving figures assume
};
Result<Run> RunRequest(const import::hf::StepGraph& step, const import::hf::Recipe& recipe,
                       const device::Device& device, const Request& request);

}  // namespace opscope::llm
