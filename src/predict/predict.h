// Predicted node and step times of one engine on one device: each costed node of a step graph
// is mapped to a kernel class (gemm, grouped_gemm, attention, memory, collectives...), its
// shape is resolved from the graph and the ledger's bound dims, and the engine profile's
// parameters turn its bytes and FLOPs into seconds (kernel_model.h). The step adds the
// engine's per-step overheads.
//
// Use (the serving model, per stage and workload point):
//   auto predictor = predict::StepPredictor::Compile(graph, device, profile);  // once per graph
//   auto p = predictor->Predict(ledger, analysis, {.cuda_graphs = decode});    // per point
//   p->node_time_s[i], p->step_time_s
// or predict::PredictStep(...) for a one-off. Compile does the per-node work that does not
// depend on the workload (classes, variants, parameter lookups, fallbacks); Predict evaluates
// the few shape dims each node needs and the kernel formula, and reuses a cost twin's time.
//
// Guarantees: every MMA and memory node's prediction is ≥ its roofline time (efficiencies
// ≤ 1, overheads ≥ 0); a collective's is ≥ the cheapest algorithm's traffic at full link
// bandwidth (CollectiveFloorTime), which may be below the roofline's ring time; a
// transparent profile reproduces the roofline exactly. Whatever could not be predicted from
// the profile as asked (a variant or class it lacks, a network link) is predicted by a named
// fallback and said in `notes`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cost/ledger.h"
#include "device/device.h"
#include "ir/graph.h"
#include "predict/kernel_model.h"
#include "predict/profile.h"
#include "roofline/roofline.h"
#include "support/error.h"

namespace opscope::predict {

struct StepOptions {
  bool cuda_graphs = true;  // the step replays a CUDA graph; false: the CPU issues every kernel
  bool samples = true;      // the step samples tokens (adds sampling_s)
};

// How an engine runs a sampling step: decode steps replay CUDA graphs where it captures them
// (defaults.cuda_graphs), steps with prompt tokens where it captures those
// (defaults.prefill_cuda_graphs); else the CPU issues their kernels one by one.
inline StepOptions EngineStepOptions(const EngineDefaults& d, bool decode) {
  return {decode ? d.cuda_graphs : d.prefill_cuda_graphs, true};
}

struct StepPrediction {
  std::vector<double> node_time_s;  // parallel to graph.nodes; 0 for nodes not costed
  std::vector<KernelClass> node_class;
  double kernels_s = 0;   // Σ node_time_s
  double overhead_s = 0;  // step_s + sampling_s + the CPU's excess without CUDA graphs
  double step_time_s = 0; // kernels_s + overhead_s
  uint64_t kernels = 0;   // nodes that launch a kernel of their own
  std::vector<std::string> notes;
};

// The class of a node from its op alone (PagedAttention and Attention need their shapes:
// see StepPredictor); kNone for views and shape-only ops.
KernelClass ClassOfOp(ir::OpKind op);

class StepPredictor {
 public:
  // `graph` and `profile` must outlive the predictor. Errors: the profile has no entry for
  // the device.
  static Result<std::unique_ptr<StepPredictor>> Compile(const ir::Graph& graph,
                                                        const device::Device& device,
                                                        const EngineProfile& profile);
  ~StepPredictor();

  // Node and step times at the workload the ledger was built for (`analysis` is the
  // roofline of the same ledger on the same device).
  Result<StepPrediction> Predict(const cost::Ledger& ledger, const roofline::Analysis& analysis,
                                 const StepOptions& options = {}) const;

  // The kernel input of node i at the ledger's workload (class, variant, bytes, FLOPs and
  // shape), as Predict times it; the calibration fit uses the same description.
  KernelInput Describe(size_t node, const cost::NodeCost& cost, const expr::Bindings& b) const;

  // Node i's predicted time from its kernel input (Describe's) and its roofline time, as
  // Predict times it; for callers that build inputs themselves (a sweep interpolates them).
  double TimeOf(size_t node, const KernelInput& in, const roofline::NodeTime& roof) const;
  // Whether node i is predicted at its roofline time (a transparent profile, a fused op, no
  // parameters), and whether it launches a kernel of its own when it takes time (not when it
  // is fused into a neighbour, nor when a GEMM group's first member runs it).
  bool AtRoofline(size_t node) const;
  bool Fused(size_t node) const;
  // The parameters node i is predicted with when it runs as class `cls` (its decode or
  // prefill kernel); nullptr for collectives and nodes at their roofline.
  const KernelParams* ParamsOf(size_t node, KernelClass cls) const;
  // The step's fixed costs beside `kernels` launched kernels taking `kernels_s` on the device
  // (StepPrediction::overhead_s). Without CUDA graphs the CPU issues each kernel in launch_s,
  // ahead of the device: the step takes max(kernels_s, kernels · launch_s), so the overhead
  // holds the CPU's excess max(0, kernels · launch_s − kernels_s).
  double Overhead(uint64_t kernels, double kernels_s, const StepOptions& options) const;

  const std::vector<std::string>& notes() const { return notes_; }
  const DeviceProfile& device_profile() const { return *device_profile_; }
  const DeviceRates& rates() const { return rates_; }

 private:
  struct Node;
  StepPredictor(const ir::Graph& graph, const EngineProfile& profile);
  Result<void> Build(const device::Device& device);
  void FillShapeSources(size_t node);
  void FillParams(size_t node, const std::string& label);
  void FillCollectives(Node& n, const std::string& label);
  bool InsideMoeCall(const ir::Node& n) const;
  void GroupGemms();
  double NodeTime(const Node& n, const KernelInput& in, const roofline::NodeTime& roof) const;

  const ir::Graph& graph_;
  const EngineProfile& profile_;
  // defaults.mma_16bit is "fp16": bf16 matmuls are timed at the fp16 rate (read once here,
  // not compared per node).
  const bool fp16_mma_;
  const DeviceProfile* device_profile_ = nullptr;
  bool own_device_ = false;  // the device is the entry's own (not an applies_to member)
  // The device's grouped_gemm parameters were fitted to whole fused-MoE calls, so the parts
  // of the call the profile names (EngineProfile::moe_call) are inside their time.
  bool moe_call_fitted_ = false;
  DeviceRates rates_;
  std::vector<Node> nodes_;
  std::vector<std::string> notes_;
};

// Compile + Predict for one step.
Result<StepPrediction> PredictStep(const ir::Graph& graph, const cost::Ledger& ledger,
                                   const roofline::Analysis& analysis,
                                   const device::Device& device, const EngineProfile& profile,
                                   const StepOptions& options = {});

// The profile variant of an MMA node from its activation (or query) and weight (or KV cache)
// formats (docs/engines.md "Variants").
std::string GemmVariant(format::Format activation, format::Format weight);
std::string AttentionVariant(format::Format kv_cache);

}  // namespace opscope::predict
