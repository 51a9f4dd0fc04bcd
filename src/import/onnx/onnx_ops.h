// The one table of ONNX ops opscope understands: (domain, op_type) -> op kind, and the shape
// rule that infers the op's outputs (onnx_shapes.cc) and drives its emission (onnx_import.cc).
// docs/onnx.md renders this table; an op outside it imports as Unknown.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "ir/graph.h"

namespace opscope::import::onnx_ops {

enum class Rule : uint8_t {
  kNone,             // no own shape rule: the ONNX library's inference only
  kSame,             // output 0 = input 0 (shape and dtype)
  kBroadcast,        // numpy broadcast of all inputs; dtype of input 0
  kCompare,          // broadcast; bool output
  kWhere,            // broadcast of 3 inputs; dtype of input 1
  kMatMul,           // numpy matmul
  kGemm,             // transA / transB
  kConv,             // X, W, (B); also QLinearConv after reordering
  kConvTranspose,
  kPool,             // MaxPool / AveragePool / LpPool (kernel_shape, strides, pads)
  kGlobalPool,       // [N, C, 1, ...]
  kReduce,           // axes attribute or input, keepdims
  kArgReduce,        // ArgMax / ArgMin: int64, one axis
  kReshape,
  kFlatten,
  kSqueeze,
  kUnsqueeze,
  kTranspose,
  kConcat,
  kSlice,
  kGather,
  kGatherElements,   // output = indices' shape
  kGatherNd,
  kSplit,
  kShape,
  kSize,
  kCast,
  kCastLike,
  kExpand,
  kTile,
  kPad,
  kConstant,         // a leaf tensor (no node)
  kConstantOfShape,
  kRange,
  kTopK,
  kResize,
  kEinsum,
  kLayerNorm,        // output 0 = input 0; optional mean / inv_std outputs
  kQuantize,         // dtype from the zero point (default uint8)
  kDequantize,       // dtype from the scale
  kMatMulInteger,    // int32 output
  kQLinearMatMul,
  kQLinearConv,
  kDepthToSpace,
  kSpaceToDepth,
  kIdentity,         // Identity, Dropout (output 0)
  kCumSum,
  kTrilu,
  kNonZero,          // data-dependent output: not inferable
  kRnn,              // LSTM / GRU / RNN: Y, Y_h (, Y_c); inputs keep their ONNX slots
  // com.microsoft
  kMsAttention,      // packed QKV projection inside the op
  kMsMultiHeadAttention,
  kMsGroupQueryAttention,
  kMsSkipNorm,       // SkipLayerNormalization / SkipSimplifiedLayerNormalization
  kMsMatMulNBits,
  kMsFusedMatMul,
  kMsBiasGelu,       // A + bias, then Gelu
  kMsRotary,         // RotaryEmbedding: output = input 0
  // Control flow: inlined when resolvable.
  kIf,
  kLoop,
  kScan,
};

struct OnnxOp {
  std::string_view domain;   // "" = ai.onnx
  std::string_view op_type;
  ir::OpKind kind;
  Rule rule;
};

// The table, in the order docs/onnx.md lists it.
std::span<const OnnxOp> AllOps();

// The row for this op; nullptr for ops outside the table (imported as Unknown). The domain
// "ai.onnx" is the default domain.
const OnnxOp* FindOp(std::string_view domain, std::string_view op_type);

}  // namespace opscope::import::onnx_ops
