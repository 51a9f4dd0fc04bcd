// The bytes-moved ledger: per node, the bytes that must move and the FLOPs that must happen,
// computed by one cost rule per op family (rules.cc) from the node's resolved shapes.
//
// Per op it is a lower bound on traffic: each input read once, each output written once,
// perfect reuse inside the op and none across ops. Leaves (inputs, weights, constants) move
// nothing by themselves. A node that cannot be costed (unbound symbol, missing attribute,
// unknown op) is listed with its reason and contributes zeros: nothing is guessed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/mma_class.h"
#include "ir/graph.h"
#include "support/error.h"

namespace opscope::cost {

// A per-node choice that changes numbers, reported as a note (one row per note; the text is
// NoteText's). Rules that pick between forms say which one they took.
enum class Note : uint8_t { kNone, kMlaAbsorbed, kMlaExpanded };
std::string_view NoteText(Note n);  // "" for kNone

// One node's ledger entry: 64 bytes, one cache line, trivially copyable (a million-node graph's
// ledger is built and read at memory speed). Why a node is not costed lives in
// Ledger::not_costed, out of line: few nodes have a reason, every node has the numbers.
struct NodeCost {
  bool costed = false;
  // False when the op has no FLOP model: its 0 FLOPs are "unknown", listed in the report.
  bool flop_model = true;
  // The class the node's estimate runs at (kNone: vector units), and the fastest class an
  // engine may run it at by quantizing activations on the fly (the fused floor's class).
  format::MmaClass mma_class = format::MmaClass::kNone;
  format::MmaClass floor_class = format::MmaClass::kNone;
  Note note = Note::kNone;
  // A collective: the roofline times its link traffic (bytes_link) as well.
  bool collective = false;
  // An input the fused floor reads at less than its full size (routed experts at top_k
  // experts, an embedding table or gathered data at the gathered rows), by input position
  // (the rules that set it name input 0 or 1). Every other weight or graph input counts its
  // full size once per step.
  static constexpr uint8_t kNoInput = UINT8_MAX;
  uint8_t floor_input = kNoInput;
  uint64_t floor_input_bytes = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  uint64_t bytes_weights = 0;  // the part of bytes_read from weight/constant tensors
  uint64_t bytes_state = 0;    // the part of reads + writes from state tensors
  uint64_t flops = 0;
  // Collectives only: bytes this device sends over its link (interconnect or network, per the
  // node's `scope` attribute) in the step, from the collective's closed form. Link traffic is
  // not DRAM traffic: it is not part of bytes_read / bytes_written.
  uint64_t bytes_link = 0;

  uint64_t bytes() const { return bytes_read + bytes_written; }
};
static_assert(sizeof(NodeCost) == 64, "NodeCost is meant to fill one cache line");

// Symbol bindings for one analysis, by name: --dim NAME=VALUE, or an importer's workload
// (n, seqs, ctx). The graph's own dims take precedence and may not be rebound.
struct Workload {
  std::vector<std::pair<std::string, int64_t>> bindings;
};

struct Ledger {
  std::vector<NodeCost> nodes;  // parallel to graph.nodes
  // Why each node that is not costed is not costed: (node index, reason), in graph order.
  std::vector<std::pair<size_t, std::string>> not_costed;
  // Essential traffic for the fused floor: each weight once (at its minimum), state reads
  // and writes, graph inputs read and graph outputs written by costed nodes.
  uint64_t essential_weight_bytes = 0;
  uint64_t essential_state_bytes = 0;
  uint64_t essential_io_bytes = 0;
  // Assumptions that changed numbers (uniform routing, causal masking, ...), deduplicated,
  // in first-seen order.
  std::vector<std::string> assumptions;
  // The bindings in effect (graph dims, then workload), for the report.
  std::vector<std::pair<std::string, int64_t>> bound_dims;

  uint64_t essential_bytes() const {
    return essential_weight_bytes + essential_state_bytes + essential_io_bytes;
  }
  // Why node `node` is not costed; empty when it is costed.
  std::string_view Reason(size_t node) const;
};

// Costs every node. Bad input found on the way (a --dim for a symbol the graph does not
// have or already fixes, a negative, inexact or overflowing dim after binding, a block
// mismatch on concrete dims) is an error naming the tensor; everything else is recorded
// per node.
Result<Ledger> BuildLedger(const ir::Graph& graph, const Workload& workload);

}  // namespace opscope::cost
