// Deployments of an LLM step (DESIGN "Multi-device deployments"): tensor, expert, pipeline and
// attention-data parallelism. One device is the deployment tp = ep = pp = 1 with one stage;
// on several, the one-device step becomes one step graph per pipeline stage for one of its
// devices (the devices of a stage are symmetric: equal shards, uniform routing), with
// collective nodes; the same ledger and roofline cost them.
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
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "device/device.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/step_graph.h"
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

// Every degree given is in 1..65536; the error names the option ("option '--tp': must be
// positive, got 0"). PlanDeployment checks this first; a sweep checks each listed value.
Result<void> CheckDegree(std::string_view option, int64_t value);
Result<void> CheckDegrees(const Degrees& degrees);

// How a deployment runs a batch of B sequences: micro-batches of ceil(B / M) sequences, of
// which an attention replica runs ceil(micro / D) (the busiest replica's share).
struct BatchSplit {
  int64_t micro_seqs = 1;   // sequences per micro-batch
  int64_t micro_count = 1;  // micro-batches the step runs: ceil(B / micro_seqs)
  int64_t seqs = 1;         // one device's sequences per micro-batch
  int64_t resident = 1;     // sequences one device holds over all micro-batches: ceil(B / D)
};

struct Deployment {
  int64_t tp = 1, ep = 1, pp = 1, dp_attention = 1;
  int64_t stage_devices = 1;  // max(tp · dp_attention, ep)
  int64_t devices = 1;        // pp · stage_devices
  int64_t expert_tp = 1;      // ep > 1: stage_devices / ep
  int64_t gpus_per_node = 1;
  int64_t micro_batches = 1;  // as requested (default pp; one device: 1)
  std::vector<std::pair<int64_t, int64_t>> stage_layers;  // [first, end) per stage
  std::string tp_scope = "node", moe_scope = "node", pp_scope = "node";  // "node" | "network"
  std::vector<std::string> assumptions;  // the layout (several devices only)

  // The deployment of one device: the whole model, one stage, one micro-batch.
  static Deployment OneDevice(int64_t layers);
  bool one_device() const { return devices == 1; }
  // Whether the routed experts' rows cross devices by all-to-all (step_graph.h DeviceShard).
  bool dispatches_experts() const {
    return import::hf::DispatchesExperts(ep, tp, dp_attention, stage_devices);
  }
  import::hf::DeviceShard Shard(int64_t stage) const;
  BatchSplit Split(int64_t batch) const;
};

// The step time of a pipeline whose stages take stage_time_s[s] seconds per micro-batch, over
// M = micro_batch_count micro-batches:
//   step_s = Σ_s t_s + (M − 1) · max_s t_s
// (the first micro-batch crosses every stage; each further one leaves one slowest-stage time
// later). Equal stages give the bubble (P − 1)/(M + P − 1); one stage gives M · t; one device
// (one stage, M = 1) gives t exactly. Every figure that combines stage times uses this.
double PipelineStepTime(std::span<const double> stage_time_s, int64_t micro_batch_count);

// Checks the degrees against the model and the device; errors name the option and the reason
// ("option '--tp': 64 attention heads are not divisible by 3"). Degrees that come to one
// device give Deployment::OneDevice (micro-batches and the layout apply to several devices).
Result<Deployment> PlanDeployment(const import::hf::ModelSpec& spec, const Degrees& degrees,
                                  const device::Device& device);

}  // namespace opscope::llm
