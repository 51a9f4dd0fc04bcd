// One engine step of an LLM (DESIGN "The LLM step model"): the figures of a step graph that do
// not depend on the workload (parameter counts, stored weight bytes, KV and state bytes), the
// memory a sequence holds and the largest batch that fits, and the step's ledger and roofline
// at a workload. The serving model built on it (stages, deployments, the figures of a request)
// is serving.h; the decode sums over a growing context are decode_sum.h.
//
// Conventions (docs/llm.md):
//  * params_total: every weight tensor of the step graph once (a tied LM head shares the
//    embedding table); params_active: minus the routed experts one token does not use
//    ((E − top_k)/E of every routed-expert tensor); params_embedding: the input table.
//  * weight_bytes: every weight tensor at its format, scales included, all experts.
//  * per-tensor scale constants of the KV cache (fp8_e4m3: 4 bytes per cache tensor) are left
//    out of the per-token and per-sequence figures.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "cost/ledger.h"
#include "device/device.h"
#include "import/hf_config/step_graph.h"
#include "llm/decode_sum.h"
#include "roofline/roofline.h"
#include "support/error.h"

namespace opscope::llm {

using import::hf::StepGraph;

enum class Phase : uint8_t { kDecode, kPrefill };
std::string_view PhaseName(Phase phase);  // "decode" | "prefill"

// Figures that depend on the model and recipe only.
struct ModelFigures {
  uint64_t params_total = 0, params_active = 0, params_embedding = 0;
  uint64_t weight_bytes = 0;
  // Of weight_bytes, the embedding table's and the LM head's (the decoder layers hold the rest).
  uint64_t table_weight_bytes = 0;
  uint64_t kv_bytes_per_token = 0;  // full-attention layers, one sequence
  // The largest one full-attention layer caches per token of one sequence (what a speculative
  // decoder's extra attention layer, an MTP module's block, adds per token).
  uint64_t layer_kv_bytes_per_token = 0;
  uint64_t state_bytes_per_seq = 0; // recurrent + conv state, one sequence
};
Result<ModelFigures> ComputeModelFigures(const StepGraph& step);

// A step's sliding-window caches with one window: their bytes per cached token together.
struct KvWindow {
  int64_t window = 0;
  uint64_t bytes_per_token = 0;
};
// By window, in order of first appearance (what a sequence's windowed KV costs at any context,
// without walking every cache again).
std::vector<KvWindow> KvWindows(const StepGraph& step);

// Σ over sliding-window caches of min(context, window) · bytes per token.
inline uint64_t KvWindowBytesPerSeq(std::span<const KvWindow> windows, int64_t context) {
  uint64_t total = 0;
  for (const KvWindow& w : windows) {
    total += static_cast<uint64_t>(std::min(context, w.window)) * w.bytes_per_token;
  }
  return total;
}
uint64_t KvWindowBytesPerSeq(const StepGraph& step, int64_t context);

// Bytes one sequence holds at `context` cached tokens: full KV + windowed KV + state.
inline uint64_t BytesPerSeq(const ModelFigures& m, std::span<const KvWindow> windows,
                            int64_t context) {
  return m.kv_bytes_per_token * static_cast<uint64_t>(context) +
         KvWindowBytesPerSeq(windows, context) + m.state_bytes_per_seq;
}
uint64_t BytesPerSeq(const StepGraph& step, const ModelFigures& m, int64_t context);

// The largest batch whose weights + per-sequence bytes fit mem_util · memory; 0 if the weights
// alone do not fit:  floor((mem_util · memory_bytes − weight_bytes) / bytes_per_seq).
inline uint64_t MaxBatch(const ModelFigures& m, uint64_t bytes_per_seq, double memory_bytes,
                         double mem_util) {
  const double budget = memory_bytes * mem_util - static_cast<double>(m.weight_bytes);
  if (budget <= 0 || bytes_per_seq == 0) return 0;
  return static_cast<uint64_t>(std::floor(budget / static_cast<double>(bytes_per_seq)));
}

// The workload bindings of one step (DESIGN's symbols n, seqs, ctx).
cost::Workload DecodeBindings(int64_t batch, int64_t context);
cost::Workload PrefillBindings(int64_t batch, int64_t prompt);

struct StepResult {
  cost::Ledger ledger;
  roofline::Analysis analysis;
};
Result<StepResult> AnalyzeStep(const StepGraph& step, const cost::Workload& workload,
                               const device::Device& device);

}  // namespace opscope::llm
