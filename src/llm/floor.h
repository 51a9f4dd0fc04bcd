// The fused floor of an LLM step as a true lower bound over real engines (DESIGN "Roofline
// semantics"): the roofline's floor reads the KV cache at the recipe's format, but an engine
// may store it smaller, so the floor charges every attention cache at the smallest KV cache a
// real engine offers; the estimate keeps the recipe's (the engine's) choice.
#pragma once

#include "cost/ledger.h"
#include "device/device.h"
#include "ir/graph.h"
#include "roofline/roofline.h"

namespace opscope::llm {

// The smallest KV cache element a real serving engine stores: 4 bits with an 8-bit scale per
// 16 elements (TensorRT-LLM's NVFP4 KV cache on Blackwell) or a 16-bit scale per 32
// (llama.cpp's q4_0 cache, --cache-type-k/-v, on every backend): 4.5 bits.
inline constexpr double kBestCaseKvBitsPerElement = 4.5;

// The KV bytes of the step's attention caches (PagedAttention's state) the floor would no
// longer read or write with every cache at kBestCaseKvBitsPerElement (0 when the recipe's
// cache is no larger).
double BestCaseKvSavedBytes(const ir::Graph& graph, const cost::Ledger& ledger);

// Lowers `totals`' memory floor by `saved_bytes` and recomputes the fused floor
//   fused_floor_s = max(floor_memory_s − saved / DRAM bytes/s, floor_mma_s, floor_vector_s,
//                       floor_comm_s)   (collectives at the cheapest algorithm, as the
//                                          roofline's own fused floor charges them).
void LowerMemoryFloor(double saved_bytes, const device::Device& device, roofline::Totals& totals);

}  // namespace opscope::llm
