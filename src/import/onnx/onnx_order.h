// Puts an ONNX graph's nodes in topological order before import, as ONNX Runtime does: fp16
// converters append their Cast nodes at the end of the node list, and other tools emit nodes in
// whatever order they built them. The order is stable — a node never moves ahead of an earlier
// node it does not depend on — so a sorted graph keeps its order exactly. A node depends on
// the producers of its inputs and of the outer-scope names its subgraphs (If branches, Loop
// and Scan bodies) read.
#pragma once

#include <string_view>

#include "support/error.h"

#include <onnx/onnx_pb.h>

namespace opscope::import::onnx_order {

// Sorts `g`'s nodes and, recursively, every subgraph's nodes in place. A node the sort moves
// and that has no name is first named "<op_type>_<index in the file>", the name the importer
// gives unnamed nodes, so reports still point at the file. A graph with a cycle is an error
// naming a node on it and the tensors that close the cycle; a graph in which two nodes write
// the same name is left as it is (the importer reports that).
Result<void> SortNodes(onnx::GraphProto& g);

}  // namespace opscope::import::onnx_order
