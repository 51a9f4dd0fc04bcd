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
// its device's Σ node times (collectives included); the step is Σ t_s + (M − 1) · max t_s, so
// equal stages give the classic bubble (P − 1)/(M + P − 1). The floor replaces t_s by the
// device's fused floor, where communication overlaps compute.
#pragma once

#include <cstdint>
#include <optional>
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

// Checks the degrees against the model and the device; errors name the option and the reason
// ("option '--tp': 64 attention heads are not divisible by 3").
Result<Deployment> PlanDeployment(const import::hf::ModelSpec& spec, const Degrees& degrees,
                                  const device::Device& device);

// The request on the deployment: `totals`/`nodes` (run.step) are the busiest device's step,
// the figures the deployment's, plus the parallel block.
struct ParallelRun {
  Run run;
  ir::Graph busiest_graph;  // the graph run.step costs
  report::ParallelFigures parallel;
};
Result<ParallelRun> RunDeployment(const import::hf::ModelSpec& spec,
                                  const import::hf::Recipe& recipe, const device::Device& device,
                                  const Request& request, const Deployment& deployment);

}  // namespace opscope::llm
