// The roofline estimate: per node time = max(bytes / DRAM bandwidth, FLOPs / peak of its
// class); totals; the fused floor no engine can beat; ridge points; the memory/compute split.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cost/ledger.h"
#include "device/device.h"
#include "ir/graph.h"
#include "support/error.h"

namespace opscope::roofline {

// kLink: a collective, bound by its link (interconnect or network) bandwidth and latency.
enum class Bound : uint8_t { kMemory, kCompute, kNone, kLink };
std::string_view BoundName(Bound b);  // "memory", "compute", "none", "link"

struct NodeTime {
  double memory_s = 0;
  double compute_s = 0;
  // Collectives: bytes_link / link bandwidth + steps · per-step latency (scope "node": the
  // device's interconnect figures; "network": its network figures).
  double link_s = 0;
  double time_s = 0;
  Bound bound = Bound::kNone;
};

// The peak a node's FLOPs run at on `device`: the peak of its MMA class, or the vector fp32
// peak for a node on the vector units (kNone); nullopt when the device publishes none.
inline std::optional<double> NodePeak(const device::Device& device, format::MmaClass mma_class) {
  return device.Peak(mma_class == format::MmaClass::kNone ? format::MmaClass::kFp32 : mma_class);
}

// THE node time (DESIGN "Roofline semantics"), which the full analysis (Estimate) and the
// sweep's compiled plans both call, from a node's counts and its roofs on one device:
//   memory_s  = bytes / dram_bytes_per_s
//   compute_s = flops / peak_flops_per_s          0 without a peak (memory-only)
//   link_s    = a collective's link time (CollectiveTime); 0 for every other node
//   time_s    = max(memory_s, compute_s, link_s)
//   bound     = none when time_s is 0; link when link_s ≥ memory_s and compute_s; compute when
//               compute_s > memory_s; memory otherwise.
// Inline and branch-free, so a loop over a sweep's points vectorizes it.
inline NodeTime TimeNode(double bytes, double flops, std::optional<double> peak_flops_per_s,
                         double dram_bytes_per_s, double link_s = 0) {
  NodeTime t;
  t.memory_s = bytes / dram_bytes_per_s;
  t.compute_s = peak_flops_per_s ? flops / *peak_flops_per_s : 0.0;
  t.link_s = link_s;
  const bool compute_wins = t.compute_s > t.memory_s;
  const double busy_s = compute_wins ? t.compute_s : t.memory_s;
  t.time_s = link_s > 0 && link_s > busy_s ? link_s : busy_s;  // every term is >= 0
  // The same order, written so that a caller with no link time drops the link test (a link
  // time of 0 bounds nothing) and a compute-bound node (time > 0 then) needs no zero test.
  t.bound = link_s > 0 && link_s >= busy_s ? Bound::kLink
            : compute_wins                 ? Bound::kCompute
            : t.time_s > 0                 ? Bound::kMemory
                                           : Bound::kNone;
  return t;
}

struct Ridge {
  format::MmaClass mma_class;
  double peak_flops_per_s;
  double flops_per_byte;  // peak / bandwidth
};

struct Totals {
  uint64_t bytes_read = 0, bytes_written = 0, bytes_weights = 0, bytes_state = 0;
  uint64_t flops = 0;
  double time_s = 0;           // Σ node times: an estimate, not a bound
  // max(essential bytes / dram_bytes_per_s, MMA time at floor classes, vector, communication):
  // a device's collectives overlap its compute at best, so they are a fourth term, not an addend.
  double fused_floor_s = 0;
  double floor_memory_s = 0;   // the first three terms of the floor
  double floor_mma_s = 0;
  double floor_vector_s = 0;
  // The fourth: Σ over collectives of their link time at the cheapest algorithm a real engine
  // has (CollectiveAlgorithm::kCheapest: one-shot / NVLS all-reduce), a lower bound ≤ comm_s.
  double floor_comm_s = 0;
  double comm_s = 0;           // Σ collective link times at the estimate's ring algorithms
  uint64_t bytes_link = 0;     // Σ link bytes this device sends
  uint64_t memory_bound_bytes = 0, compute_bound_bytes = 0;
  uint64_t nodes = 0, nodes_costed = 0;

  uint64_t bytes() const { return bytes_read + bytes_written; }
  double intensity() const {
    return bytes() ? static_cast<double>(flops) / static_cast<double>(bytes()) : 0.0;
  }
};

struct Analysis {
  std::vector<NodeTime> nodes;  // parallel to graph.nodes
  Totals totals;
  std::vector<Ridge> ridges;    // one per class the device has
  std::vector<std::string> notes;  // e.g. "device has no vector fp32 figure: ... memory-only"
};

// Which algorithm a collective's link time assumes (the rows of cost/collectives.h).
enum class CollectiveAlgorithm : uint8_t {
  kRing,      // the estimate's (time_s): NCCL's ring; bytes_link is its traffic
  kCheapest,  // the fused floor's: the cheapest a real engine has (one-shot / NVLS all-reduce)
};

// The link time of collective `node` sending `bytes_link` bytes (the ring's, from its cost
// rule) on `device`, over a group of N (attribute "group_size") and the bandwidth B and
// per-step latency L of the node's scope (attribute "scope": "node" → interconnect,
// "network" → network):
//   ring      bytes_link / B + latency_steps(N) · L
//   cheapest  bytes_link · floor_link_steps(N) / link_steps(N) / B + floor_latency_steps(N) · L
//             e.g. an all-reduce of x bytes: x / B + L, against the ring's
//             2·(N−1)/N · x / B + 2·(N−1) · L
// 0 for a group of one. A missing bandwidth is an error naming the node, the device and the
// field; a missing latency counts as 0 and sets *no_latency.
Result<double> CollectiveTime(const ir::Node& node, uint64_t bytes_link,
                              const device::Device& device, bool* no_latency = nullptr,
                              CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing);

// Times every costed node on `device`. A matrix op whose estimate class the device lacks
// is an error naming the node, the class and the device.
Result<Analysis> Estimate(const ir::Graph& graph, const cost::Ledger& ledger,
                          const device::Device& device);

// A graph costed and timed: `opscope analyze` after the import (the CLI and the Python package
// call this, then render). `origin` (the model file) prefixes the errors of the ledger and the
// estimate.
struct CostedGraph {
  cost::Ledger ledger;
  Analysis analysis;
};
Result<CostedGraph> CostAndTime(const ir::Graph& graph, const cost::Workload& workload,
                                const device::Device& device, std::string_view origin);

}  // namespace opscope::roofline
