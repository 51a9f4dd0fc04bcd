// The fused floor with the best-case KV cache (see floor.h).
#include "llm/floor.h"

#include <algorithm>

#include "format/format.h"

namespace opscope::llm {
namespace {

// Bits one element of `f` takes with its block scales (per-row and per-tensor scales left
// out: they do not grow with the cache).
double BitsPerElement(format::Format f) {
  const format::FormatInfo& info = format::Info(f);
  double bits = info.bits;
  if (info.block > 1) bits += static_cast<double>(info.block_bits) / info.block / info.block_rows;
  return bits;
}

}  // namespace

double BestCaseKvSavedBytes(const ir::Graph& graph, const cost::Ledger& ledger) {
  double saved = 0;
  for (size_t i = 0; i < graph.nodes.size() && i < ledger.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    const cost::NodeCost& c = ledger.nodes[i];
    if (!c.costed || c.bytes_state == 0 || ir::Family(node.op) != ir::OpFamily::kPagedAttention) {
      continue;
    }
    // The first cache input's format stands for the node's caches (K and V share one).
    for (size_t k = 1; k < node.inputs.size(); ++k) {
      const ir::Tensor& t = graph.tensors[node.inputs[k]];
      if (t.role != ir::Role::kState) continue;
      const double bits = BitsPerElement(t.format);
      if (bits > kBestCaseKvBitsPerElement) {
        saved += static_cast<double>(c.bytes_state) * (1 - kBestCaseKvBitsPerElement / bits);
      }
      break;
    }
  }
  return saved;
}

void LowerMemoryFloor(double saved_bytes, const device::Device& device, roofline::Totals& t) {
  if (saved_bytes <= 0 || device.dram_bytes_per_s <= 0) return;
  t.floor_memory_s = std::max(0.0, t.floor_memory_s - saved_bytes / device.dram_bytes_per_s);
  t.fused_floor_s = std::max({t.floor_memory_s, t.floor_mma_s, t.floor_vector_s, t.floor_comm_s});
}

}  // namespace opscope::llm
