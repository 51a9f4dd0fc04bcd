// Identical repeated layers as one row of the text report's top tables: nodes whose names
// differ only in one number (the layer index, "layers.3.moe.experts.gate_up") and whose
// figures are all equal become "layers.3–60.moe.experts.gate_up ×58", with their figures
// summed. The JSON, CSV and HTML still list every node.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "report/report_model.h"

namespace opscope::report {

struct NodeGroup {
  std::vector<size_t> nodes;  // indices into the report's nodes, in graph order
  // The shared name with the layer indices in place of the one number: "layers.3–60.x",
  // "layers.0–2,4,6–9.x", "layers.3,7,…,47.x" (an arithmetic run of more than three pieces);
  // a group of one keeps its node's name.
  std::string name;
  // Sums over the nodes (equal figures: each node's times the count).
  double time_s = 0;
  uint64_t bytes = 0, bytes_link = 0, flops = 0;

  const NodeRow& first(std::span<const NodeRow> rows) const { return rows[nodes.front()]; }
};

// Every costed node in exactly one group; groups in the order of their first node.
std::vector<NodeGroup> GroupIdenticalNodes(std::span<const NodeRow> nodes);

// "3–60", "0–2,4,6–9", "3,7,…,47": sorted distinct layer indices as the group name shows them.
std::string IndexRanges(std::span<const int64_t> sorted_indices);

}  // namespace opscope::report
