// The collectives table: for each collective op kind, which tensor sizes its message, how much
// of it one device sends over its link and how many per-step latencies it pays, over a group of
// N devices — for the ring algorithms the estimate charges, and for the cheapest algorithm a
// real engine has, which the fused floor charges. The cost rule (rules.cc: bytes_link, FLOPs)
// and the roofline (CollectiveTime: latency steps; the floor's link bytes) both read it;
// nothing else describes a collective's algorithm.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace opscope::cost {

// A count that grows with the group: per_peer·(N−1) + fixed, for a group of N ≥ 2 devices.
struct GroupSteps {
  uint8_t per_peer = 0;
  uint8_t fixed = 0;
  constexpr uint64_t At(uint64_t n) const { return per_peer * (n - 1) + fixed; }
};

// The tensor whose bytes a collective's traffic is a share of.
enum class Message : uint8_t {
  kInput,   // x: the full input (all-reduce, reduce-scatter, send/recv)
  kOutput,  // y: the gathered output, or the rows a device ends up with (all-to-all)
};

struct CollectiveInfo {
  ir::OpKind kind;
  Message message;
  // Ring algorithms (the estimate, as NCCL runs them): one device sends link_steps parts of
  // message/N each, and waits latency_steps per-step latencies:
  //   AllReduce      2·(N−1) parts, 2·(N−1) steps   (reduce-scatter, then all-gather, of x)
  //   AllGather      N−1 parts,     N−1 steps
  //   ReduceScatter  N−1 parts,     N−1 steps
  //   AllToAll       N−1 parts,     1 step          (every pair at once, as NCCL's grouped
  //                                                  send/recv and DeepEP do; 1/N of the rows
  //                                                  stay on the device)
  //   SendRecv       N parts = x,   1 step          (to the next pipeline stage)
  GroupSteps link_steps;
  GroupSteps latency_steps;
  // One add per received element: FLOPs = (N−1)/N · elements(x).
  bool reduces;
  // The cheapest algorithm a real engine has (the fused floor's: a lower bound, never above
  // the ring's), in the same units:
  //   AllReduce      N parts = x,   1 step   one-shot / NVLS all-reduce (NVLink SHARP reduces
  //                                          in the switch: each device sends its x once and
  //                                          receives the sum once — the least any algorithm
  //                                          moves per direction; ≤ the ring's 2·(N−1) parts
  //                                          for N ≥ 2), the one-shot kernel's single step
  //                                          (TensorRT-LLM's, also fused with the residual
  //                                          add and RMSNorm that follow)
  //   AllGather      N−1 parts,     1 step   one-shot: every device writes its part to all
  //                                          peers at once (N−1 parts must arrive anyway)
  //   ReduceScatter  N−1 parts,     1 step   one-shot (its N−1 parts for the others must leave)
  //   AllToAll       N−1 parts,     1 step   as the ring row
  //   SendRecv       N parts = x,   1 step   as the ring row
  GroupSteps floor_link_steps;
  GroupSteps floor_latency_steps;
};

inline constexpr CollectiveInfo kCollectives[] = {
    //  kind                        message           ring: link latency  reduces  floor: link latency
    {ir::OpKind::kAllReduce,     Message::kInput,  {2, 0}, {2, 0}, true,  {1, 1}, {0, 1}},
    {ir::OpKind::kAllGather,     Message::kOutput, {1, 0}, {1, 0}, false, {1, 0}, {0, 1}},
    {ir::OpKind::kReduceScatter, Message::kInput,  {1, 0}, {1, 0}, true,  {1, 0}, {0, 1}},
    {ir::OpKind::kAllToAll,      Message::kOutput, {1, 0}, {0, 1}, false, {1, 0}, {0, 1}},
    {ir::OpKind::kSendRecv,      Message::kInput,  {1, 1}, {0, 1}, false, {1, 1}, {0, 1}},
};

// The row of a collective kind; nullptr for any other op.
constexpr const CollectiveInfo* FindCollective(ir::OpKind kind) {
  for (const CollectiveInfo& c : kCollectives) {
    if (c.kind == kind) return &c;
  }
  return nullptr;
}

// The floor's algorithm never costs more than the ring: fewer or as many link parts and
// latency steps for every group size (both are affine in N−1, so N = 2 and the slopes decide).
constexpr bool FloorNeverAboveRing() {
  for (const CollectiveInfo& c : kCollectives) {
    if (c.floor_link_steps.At(2) > c.link_steps.At(2) ||
        c.floor_link_steps.per_peer > c.link_steps.per_peer ||
        c.floor_latency_steps.At(2) > c.latency_steps.At(2) ||
        c.floor_latency_steps.per_peer > c.latency_steps.per_peer) {
      return false;
    }
  }
  return true;
}
static_assert(FloorNeverAboveRing(), "a collective's floor algorithm costs more than its ring");

// Every op of the collective family has its row.
constexpr bool EveryCollectiveHasARow() {
  for (int k = 0; k < ir::kNumOpKinds; ++k) {
    if (ir::kOpKinds[k].family == ir::OpFamily::kCollective &&
        FindCollective(static_cast<ir::OpKind>(k)) == nullptr) {
      return false;
    }
  }
  return true;
}
static_assert(EveryCollectiveHasARow(), "a collective op kind has no row in kCollectives");

}  // namespace opscope::cost
