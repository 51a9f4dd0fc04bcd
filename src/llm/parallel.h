// Multi-device deployments of an LLM step (DESIGN "Multi-device deployments"): tensor, expert,
// pipeline and attention-data parallelism. The one-device step becomes one step graph per
// pipeline stage for one of its devices (the devices of a stage are symmetric: equal shards,
// uniform routing), with collective nodes; the same ledger and roofline cost them.
//
// Degrees: devices = pp · max(tp · dp_attention, ep), where the smaller of tp · dp_attention
// and ep divides the larger; dp_attention defaults to ep / tp when ep > tp. --batch is the
// deployment's: a pipeline runs ceil(batch / micro_batches) sequences per micro-batch, and an
// attention replica ceil(of those / dp_attention) (the busiest device's share).
//
// Layout: ranks run tensor-parallel innermost, then attention replicas / expert ranks, then
// pipeline stages; a node holds gpus_per_node consecutive ranks. A group whose devices fit in
// one node talks over the interconnect ("node"), else over the network ("network"); pipeline
// hand-offs use the network as soon as the deployment spans more than one node (the slowest
// hop paces the pipeline).
//
// Step time (the estimate, communication not overlapped): each stage's micro-batch time t_s is
// its device's Σ node times (collectives included); the step is PipelineStepTime, so equal
// stages give the classic bubble (P − 1)/(M + P − 1). The floor replaces t_s by the device's
// fused floor, where communication overlaps compute.
//
// The whole request (--gen-len O) is the deployment's prefill step (TTFT), then O decode steps
// at contexts P, P + 1, ..., P + O − 1, each timed as that one decode step would be.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "device/device.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "llm/llm.h"
#include "support/error.h"

namespace opscope::llm {

// The degrees as the user gave them (--tp --ep --pp --dp-attention --gpus-per-node
// --micro-batches); absent ones take their defaults.
struct Degrees {
  int64_t tp = 1, ep = 1, pp = 1;
  std::optional<int64_t> dp_attention{}, gpus_per_node{}, micro_batches{};

  bool MultiDevice() const {
    return tp > 1 || ep > 1 || pp > 1 || dp_attention.value_or(1) > 1;
  }
};

struct Deployment {
  int64_t tp = 1, ep = 1, pp = 1, dp_attention = 1;
  int64_t stage_devices = 1;  // max(tp · dp_attention, ep)
  int64_t devices = 1;        // pp · stage_devices
  int64_t expert_tp = 1;      // ep > 1: stage_devices / ep
  int64_t gpus_per_node = 1;
  int64_t micro_batches = 1;  // as requested (default pp)
  std::vector<std::pair<int64_t, int64_t>> stage_layers;  // [first, end) per stage
  std::string tp_scope, moe_scope, pp_scope;              // "node" | "network"
  std::vector<std::string> assumptions;

  import::hf::DeviceShard Shard(int64_t stage) const;
};

// The step time of a pipeline whose stages take stage_time_s[s] seconds per micro-batch, over
// M = micro_batch_count micro-batches:
//   step_s = Σ_s t_s + (M − 1) · max_s t_s
// (the first micro-batch crosses every stage; each further one leaves one slowest-stage time
// later). Equal stages give the bubble (P − 1)/(M + P − 1); one stage gives M · t. Every
// figure that combines stage times (step, floor, each step of a request, sweeps) uses this.
double PipelineStepTime(std::span<const double> stage_time_s, int64_t micro_batch_count);

// Σ of the deployment's decode step times over contexts first, first + 1, ...,
// first + steps − 1: each step is PipelineStepTime of the stages' decode times at batch
// `seqs` (one device's sequences per micro-batch). Exact and fast: every node's bytes, FLOPs
// and link bytes are piecewise affine in the context, so each affine stretch (found by
// evaluating a few contexts) is cut where any node's memory, compute or link line overtakes
// another and where the slowest stage changes; between cuts the step is affine and summed in
// closed form.
Result<double> SumPipelineDecodeSteps(std::span<const import::hf::StepGraph> stages,
                                      const device::Device& device, int64_t seqs,
                                      int64_t micro_batch_count, int64_t first, int64_t steps);

// Checks the degrees against the model and the device; errors name the option and the reason
// ("option '--tp': 64 attention heads are not divisible by 3").
Result<Deployment> PlanDeployment(const import::hf::ModelSpec& spec, const Degrees& degrees,
                                  const device::Device& device);

// The request on the deployment: `totals`/`nodes` (run.step) are the busiest device's step,
// the figures the deployment's, plus the parallel block. With request.gen_len the figures add
// the whole request as RunRequest does (ttft_s, e2e_s, tpot_s), and memory holds the prompt
// plus the generated tokens.
struct ParallelRun {
  Run run;
  ir::Graph busiest_graph;  // the graph run.step costs
  report::ParallelFigures parallel;
};
Result<ParallelRun> RunDeployment(const import::hf::ModelSpec& spec,
                                  const import::hf::Recipe& recipe, const device::Device& device,
                                  const Request& request, const Deployment& deployment);

}  // namespace opscope::llm
