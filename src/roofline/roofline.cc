// Roofline timing of a ledger on one device (DESIGN "MMA class and peaks", "Roofline
// semantics").
#include "roofline/roofline.h"

#include <algorithm>
#include <array>

#include "cost/collectives.h"
#include "support/huge_pages.h"

namespace opscope::roofline {

using format::MmaClass;

std::string_view BoundName(Bound b) {
  switch (b) {
    case Bound::kMemory: return "memory";
    case Bound::kCompute: return "compute";
    case Bound::kNone: return "none";
    case Bound::kLink: return "link";
  }
  return "none";
}

namespace {

// The class the fused floor charges an MMA node at: the faster (on this device) of the
// estimate's class and the weight's own class.
MmaClass FloorClass(MmaClass estimate, MmaClass weight, const device::Device& d) {
  const auto estimate_flops_per_s = d.Peak(estimate);
  const auto floor_flops_per_s = d.Peak(weight);
  if (floor_flops_per_s && (!estimate_flops_per_s || *floor_flops_per_s > *estimate_flops_per_s)) {
    return weight;
  }
  return estimate;
}

// FloorClass for every (estimate, weight) pair of classes on one device, looked up per node.
using FloorClasses = std::array<std::array<MmaClass, format::kNumMmaClasses>, format::kNumMmaClasses>;
FloorClasses FloorClassTable(const device::Device& d) {
  FloorClasses table{};
  for (int e = 0; e < format::kNumMmaClasses; ++e) {
    for (int w = 0; w < format::kNumMmaClasses; ++w) {
      table[e][w] = FloorClass(static_cast<MmaClass>(e), static_cast<MmaClass>(w), d);
    }
  }
  return table;
}

}  // namespace

Result<double> CollectiveTime(const ir::Node& node, uint64_t bytes_link,
                              const device::Device& device, bool* no_latency,
                              CollectiveAlgorithm algorithm) {
  const bool network = node.StringAttr("scope") == std::optional<std::string_view>("network");
  const std::optional<double>& link_bytes_per_s = network ? device.network_bytes_per_s
                                                          : device.interconnect_bytes_per_s;
  const std::optional<double>& step_latency_s = network ? device.network_latency_s
                                                        : device.interconnect_latency_s;
  const int64_t n = node.IntAttr("group_size").value_or(1);
  if (n <= 1) return 0.0;
  if (!link_bytes_per_s) {
    return MakeError("node '" + node.name + "' (" + std::string(ir::OpName(node.op)) +
                     ") communicates over the " + (network ? "network" : "interconnect") +
                     ", which device '" + device.name + "' has no " +
                     (network ? "network_bytes_per_s" : "interconnect_bytes_per_s") +
                     " figure for");
  }
  if (!step_latency_s && no_latency != nullptr) *no_latency = true;
  // The collectives table: the cost rule gave the ring's link bytes; its latency steps, and
  // the cheapest algorithm's link parts and steps, are read here.
  const cost::CollectiveInfo* info = cost::FindCollective(node.op);
  if (info == nullptr) {
    return MakeError("node '" + node.name + "' (" + std::string(ir::OpName(node.op)) +
                     ") is not a collective: it has no link time");
  }
  const auto group = static_cast<uint64_t>(n);
  if (algorithm == CollectiveAlgorithm::kRing) {
    const auto steps = static_cast<double>(info->latency_steps.At(group));
    return static_cast<double>(bytes_link) / *link_bytes_per_s + steps * step_latency_s.value_or(0);
  }
  // bytes_link = ring parts · message / N, so the cheapest algorithm sends
  // bytes_link · floor parts / ring parts.
  const double floor_bytes = static_cast<double>(bytes_link) *
                             static_cast<double>(info->floor_link_steps.At(group)) /
                             static_cast<double>(info->link_steps.At(group));
  const auto steps = static_cast<double>(info->floor_latency_steps.At(group));
  return floor_bytes / *link_bytes_per_s + steps * step_latency_s.value_or(0);
}

Result<Analysis> Estimate(const ir::Graph& graph, const cost::Ledger& ledger,
                          const device::Device& device) {
  Analysis a;
  ReserveHugePages(a.nodes, ledger.nodes.size());  // filled one entry per node below
  Totals& t = a.totals;
  const double dram_bytes_per_s = device.dram_bytes_per_s;
  const auto vector_flops_per_s = device.Peak(MmaClass::kFp32);
  std::array<double, format::kNumMmaClasses> floor_flops{};  // MMA FLOPs by floor class
  const FloorClasses floor_classes = FloorClassTable(device);
  double vector_flops = 0;
  bool memory_only_vector = false;
  bool no_latency = false;

  t.nodes = ledger.nodes.size();
  for (size_t i = 0; i < ledger.nodes.size(); ++i) {
    const cost::NodeCost& c = ledger.nodes[i];
    NodeTime& nt = a.nodes.emplace_back();  // reserved: never reallocates
    if (!c.costed) continue;
    ++t.nodes_costed;
    // The ledger marks collectives, so only they read the graph's node (its attributes).
    double link_s = 0;
    if (c.collective) {
      auto link = CollectiveTime(graph.nodes[i], c.bytes_link, device, &no_latency);
      if (!link) return std::unexpected(link.error());
      auto cheapest = CollectiveTime(graph.nodes[i], c.bytes_link, device, nullptr,
                                     CollectiveAlgorithm::kCheapest);
      if (!cheapest) return std::unexpected(cheapest.error());
      link_s = *link;
      t.comm_s += link_s;
      t.floor_comm_s += *cheapest;
      t.bytes_link += c.bytes_link;
    }
    const std::optional<double> peak_flops_per_s = NodePeak(device, c.mma_class);
    if (c.flops > 0) {
      if (c.mma_class != MmaClass::kNone) {
        if (!peak_flops_per_s) {
          return MakeError("node '" + graph.nodes[i].name + "' (" +
                           std::string(ir::OpName(graph.nodes[i].op)) + ") runs at " +
                           std::string(format::MmaClassName(c.mma_class)) + ", which device '" +
                           device.name + "' has no peak for");
        }
        const MmaClass floor_class = floor_classes[static_cast<int>(c.mma_class)]
                                                  [static_cast<int>(c.floor_class)];
        floor_flops[static_cast<int>(floor_class)] += static_cast<double>(c.flops);
      } else {
        memory_only_vector |= !peak_flops_per_s;
        vector_flops += static_cast<double>(c.flops);
      }
    }
    nt = TimeNode(static_cast<double>(c.bytes()), static_cast<double>(c.flops), peak_flops_per_s,
                  dram_bytes_per_s, link_s);
    if (nt.bound == Bound::kCompute) t.compute_bound_bytes += c.bytes();
    if (nt.bound == Bound::kMemory) t.memory_bound_bytes += c.bytes();
    t.bytes_read += c.bytes_read;
    t.bytes_written += c.bytes_written;
    t.bytes_weights += c.bytes_weights;
    t.bytes_state += c.bytes_state;
    t.flops += c.flops;
    t.time_s += nt.time_s;
  }

  // Fused floor: essential bytes at full bandwidth, MMA FLOPs at each node's floor class,
  // vector FLOPs on the vector units, and the collectives at the cheapest algorithm a real
  // engine has, all four overlapped.
  t.floor_memory_s = static_cast<double>(ledger.essential_bytes()) / dram_bytes_per_s;
  for (int k = 0; k < format::kNumMmaClasses; ++k) {
    if (floor_flops[k] > 0) {
      t.floor_mma_s += floor_flops[k] / *device.Peak(static_cast<MmaClass>(k));
    }
  }
  if (vector_flops_per_s) t.floor_vector_s = vector_flops / *vector_flops_per_s;
  t.fused_floor_s = std::max({t.floor_memory_s, t.floor_mma_s, t.floor_vector_s, t.floor_comm_s});

  for (MmaClass cls : format::kPeakClasses) {
    if (auto peak = device.Peak(cls)) a.ridges.push_back({cls, *peak, *peak / dram_bytes_per_s});
  }
  if (memory_only_vector) {
    a.notes.push_back("device '" + device.name +
                      "' publishes no vector fp32 figure: non-MMA ops are costed memory-only");
  }
  if (no_latency) {
    a.notes.push_back("device '" + device.name +
                      "' publishes no collective latency for a link it uses: those collectives "
                      "are costed by bandwidth only");
  }
  return a;
}

Result<CostedGraph> CostAndTime(const ir::Graph& graph, const cost::Workload& workload,
                                const device::Device& device, std::string_view origin) {
  auto ledger = cost::BuildLedger(graph, workload);
  if (!ledger) return std::unexpected(Wrap(origin, ledger.error()));
  auto analysis = Estimate(graph, *ledger, device);
  if (!analysis) return std::unexpected(Wrap(origin, analysis.error()));
  return CostedGraph{std::move(*ledger), std::move(*analysis)};
}

}  // namespace opscope::roofline
