// Synthetic graphs for the benchmarks: a chain of decode-shaped blocks (RMSNorm, Linear with
// its own weight, SiluMul, Linear, Add), `nodes` nodes in all, over the symbol n.
#pragma once

#include <string>

#include "ir/graph.h"

namespace opscope::bench {

// The same chain as an in-memory graph and as graph JSON text (bench/make_big_graph.py
// writes the identical file for whole-process comparisons).
ir::Graph MakeChainGraph(size_t nodes);
std::string MakeChainGraphJson(size_t nodes);

}  // namespace opscope::bench
