// The planner's search (see plan.h): the splits of up to N devices, each split's serving
// deployment evaluated through llm::Evaluate at whole batches (memoized), and the pruned
// searches for the aggregated and disaggregated fronts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llm/predicted.h"
#include "llm/serving.h"
#include "plan/front.h"
#include "plan/plan.h"

namespace opscope::plan {

// The degrees of a split as `opscope llm` takes them.
struct SplitDegrees {
  int64_t tp = 1, ep = 1, pp = 1, dp_attention = 1;
};

// Every split of at most `gpus` devices the model and device can take, in search order
// (fewer pipeline stages first: a pipeline split is pruned against the same split without
// stages). The search space: tp, ep, pp and dp_attention powers of two; tensor parallelism
// within one node; experts either not spread (ep 1) or spread over every device of a stage
// (ep = tp · dp_attention, as vLLM's --enable-expert-parallel and SGLang's --enable-ep-moe
// do). Splits the model cannot take (heads not divisible, ...) go to `skipped`, with why.
std::vector<SplitDegrees> EnumerateSplits(const llm::ModelBuild& build,
                                          const device::Device& device, int64_t gpus,
                                          double mem_util, std::vector<std::string>& skipped,
                                          uint64_t& pruned);

// The figures of one batch on one split: what `opscope llm --phase prefill --prompt ISL
// --gen-len OSL --batch B` prints for it — llm.ttft_s/tpot_s/e2e_s (the roofline estimate), or
// llm.predicted's with an engine (`--engine E`: B requests in flight, continuous batching).
struct BatchFigures {
  double ttft_s = 0, tpot_s = 0, e2e_s = 0;
};

// The roofline figures of the deployments that run the same stage graphs with the same
// micro-batches, at s sequences per device (a batch's per-device share): equal for all of
// them (llm::Evaluate's ttft_s, tpot_s and e2e_s depend on the stages' steps at s alone).
// Shared by splits differing in dp-attention alone without expert parallelism.
using SharedFigures = std::map<int64_t, BatchFigures>;

// One split deployed (a llm::Serving) and its batches evaluated on demand: at the roofline
// (llm::Evaluate's figures), or by the engine's predictor made once for the split (no graph
// rebuilt per batch). Batches are whole per device: B = s · dp_attention · micro_batches for s sequences
// per device and micro-batch (any other batch runs the same steps as the next such batch,
// with fewer sequences). The serving and its predictor are shared: the page's grid evaluates
// the same split at other ISL and OSL.
class SplitEval {
 public:
  // `shared`: roofline figures to share with splits on the same stage graphs (nullptr: none;
  // unused with a predictor).
  // `modes`: the predictor's serving modes (--lengths fixed); unused without a predictor.
  SplitEval(std::shared_ptr<const llm::Serving> serving,
            std::shared_ptr<const llm::ServingPredictor> predictor, SplitDegrees degrees,
            int64_t isl, int64_t osl, int64_t max_batch, double mem_util,
            std::shared_ptr<SharedFigures> shared = nullptr, llm::ServingModes modes = {});

  const llm::Serving& serving() const { return *serving_; }
  const std::shared_ptr<const llm::Serving>& shared_serving() const { return serving_; }
  // nullptr: the roofline estimate.
  const std::shared_ptr<const llm::ServingPredictor>& predictor() const { return predictor_; }
  const SplitDegrees& degrees() const { return degrees_; }
  const llm::ServingModes& modes() const { return modes_; }
  int64_t devices() const { return serving_->deployment().devices; }
  int64_t Batch(int64_t s) const { return s * per_s_; }
  // The largest batch of the deployment memory holds at `context` tokens a sequence: Serving::Fit,
  // with --speculative the fit beside the drafter (ServingPredictor::DrafterFit).
  uint64_t FitBatch(int64_t context) const;
  // The most sequences per device that memory holds at `context` tokens and the batch cap
  // allows (0: not even one).
  int64_t MaxS(int64_t context) const;
  // The figures at s sequences per device (memoized); `evaluated` counts the split's fresh
  // evaluations (a batch whose figures a sibling split shared counts for both).
  Result<BatchFigures> At(int64_t s, uint64_t& evaluated);
  // The KV a prefill worker's devices send for a batch at s: per device, in parallel.
  double KvTransferS(int64_t s, double link_bytes_per_s, double link_latency_s) const;

 private:
  std::shared_ptr<const llm::Serving> serving_;
  std::shared_ptr<const llm::ServingPredictor> predictor_;
  SplitDegrees degrees_;
  int64_t isl_, osl_, max_batch_;
  double mem_util_;
  int64_t per_s_ = 1;  // dp_attention · micro_batches
  std::map<int64_t, BatchFigures> memo_;
  std::shared_ptr<SharedFigures> shared_;
  llm::ServingModes modes_;
};

// llm::Evaluate's ttft_s, tpot_s and e2e_s of `w` (a whole request, prefill phase) without
// the rest of its analysis (floors, assumptions, the busiest stage's step): each stage's
// prefill step at its roofline time and the Σ of the decode steps, through ServingFigures.
Result<BatchFigures> RooflineFigures(const llm::Serving& serving, const llm::Workload& w);

// The link a disaggregated request's KV crosses (the interconnect when all `devices` fit one
// node, else the network) and its latency; nullopt when the device has no figure for it.
std::optional<std::pair<double, double>> KvLink(const device::Device& device, int64_t devices);

}  // namespace opscope::plan
