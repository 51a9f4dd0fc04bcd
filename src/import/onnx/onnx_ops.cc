// The ONNX op table (see onnx_ops.h). Kinds follow DESIGN "Op kinds"; where ONNX has no kind
// of its own the closest kind of the same cost family is used and source_op keeps the name.
#include "import/onnx/onnx_ops.h"

#include <string>
#include <unordered_map>

namespace opscope::import::onnx_ops {
namespace {

using K = ir::OpKind;
using R = Rule;
constexpr std::string_view kMs = "com.microsoft";

constexpr OnnxOp kTable[] = {
    // Matrix.
    {"", "MatMul", K::kMatMul, R::kMatMul},
    {"", "Gemm", K::kGemm, R::kGemm},
    {"", "MatMulInteger", K::kMatMul, R::kMatMulInteger},
    {"", "QLinearMatMul", K::kMatMul, R::kQLinearMatMul},
    {"", "Conv", K::kConv, R::kConv},
    {"", "ConvInteger", K::kConv, R::kConv},
    {"", "QLinearConv", K::kConv, R::kQLinearConv},
    {"", "ConvTranspose", K::kConvTranspose, R::kConvTranspose},
    {"", "Einsum", K::kEinsum, R::kEinsum},
    // Recurrent layers.
    {"", "LSTM", K::kLSTM, R::kRnn},
    {"", "GRU", K::kGRU, R::kRnn},
    {"", "RNN", K::kRNN, R::kRnn},
    // Normalisation and softmax.
    {"", "LayerNormalization", K::kLayerNorm, R::kLayerNorm},
    {"", "GroupNormalization", K::kGroupNorm, R::kSame},
    {"", "InstanceNormalization", K::kGroupNorm, R::kSame},
    {"", "MeanVarianceNormalization", K::kLayerNorm, R::kSame},
    {"", "LpNormalization", K::kLayerNorm, R::kSame},
    {"", "BatchNormalization", K::kBatchNorm, R::kSame},
    {"", "Softmax", K::kSoftmax, R::kSame},
    {"", "LogSoftmax", K::kSoftmax, R::kSame},
    {"", "Hardmax", K::kSoftmax, R::kSame},
    // Elementwise: binary (broadcasting).
    {"", "Add", K::kAdd, R::kBroadcast},
    {"", "Sub", K::kSub, R::kBroadcast},
    {"", "Mul", K::kMul, R::kBroadcast},
    {"", "Div", K::kDiv, R::kBroadcast},
    {"", "Pow", K::kPow, R::kBroadcast},
    {"", "Mod", K::kDiv, R::kBroadcast},
    {"", "Max", K::kMax, R::kBroadcast},
    {"", "Min", K::kMin, R::kBroadcast},
    {"", "Sum", K::kAdd, R::kBroadcast},
    {"", "Mean", K::kAdd, R::kBroadcast},
    {"", "PRelu", K::kRelu, R::kBroadcast},
    {"", "BitShift", K::kLogical, R::kBroadcast},
    {"", "BitwiseAnd", K::kLogical, R::kBroadcast},
    {"", "BitwiseOr", K::kLogical, R::kBroadcast},
    {"", "BitwiseXor", K::kLogical, R::kBroadcast},
    {"", "Where", K::kWhere, R::kWhere},
    {"", "Equal", K::kCompare, R::kCompare},
    {"", "Less", K::kCompare, R::kCompare},
    {"", "LessOrEqual", K::kCompare, R::kCompare},
    {"", "Greater", K::kCompare, R::kCompare},
    {"", "GreaterOrEqual", K::kCompare, R::kCompare},
    {"", "And", K::kLogical, R::kCompare},
    {"", "Or", K::kLogical, R::kCompare},
    {"", "Xor", K::kLogical, R::kCompare},
    // Elementwise: unary.
    {"", "Not", K::kLogical, R::kSame},
    {"", "BitwiseNot", K::kLogical, R::kSame},
    {"", "IsNaN", K::kCompare, R::kCompare},
    {"", "IsInf", K::kCompare, R::kCompare},
    {"", "Neg", K::kNeg, R::kSame},
    {"", "Abs", K::kAbs, R::kSame},
    {"", "Sign", K::kAbs, R::kSame},
    {"", "Floor", K::kAbs, R::kSame},
    {"", "Ceil", K::kAbs, R::kSame},
    {"", "Round", K::kAbs, R::kSame},
    {"", "Exp", K::kExp, R::kSame},
    {"", "Log", K::kLog, R::kSame},
    {"", "Sin", K::kExp, R::kSame},
    {"", "Cos", K::kExp, R::kSame},
    {"", "Tan", K::kExp, R::kSame},
    {"", "Asin", K::kExp, R::kSame},
    {"", "Acos", K::kExp, R::kSame},
    {"", "Atan", K::kExp, R::kSame},
    {"", "Sinh", K::kExp, R::kSame},
    {"", "Cosh", K::kExp, R::kSame},
    {"", "Asinh", K::kExp, R::kSame},
    {"", "Acosh", K::kExp, R::kSame},
    {"", "Atanh", K::kExp, R::kSame},
    {"", "Sqrt", K::kSqrt, R::kSame},
    {"", "Reciprocal", K::kReciprocal, R::kSame},
    {"", "Relu", K::kRelu, R::kSame},
    {"", "LeakyRelu", K::kRelu, R::kSame},
    {"", "ThresholdedRelu", K::kRelu, R::kSame},
    {"", "Elu", K::kRelu, R::kSame},
    {"", "Selu", K::kRelu, R::kSame},
    {"", "Celu", K::kRelu, R::kSame},
    {"", "Softplus", K::kRelu, R::kSame},
    {"", "Softsign", K::kRelu, R::kSame},
    {"", "Shrink", K::kRelu, R::kSame},
    {"", "Mish", K::kSilu, R::kSame},
    {"", "Gelu", K::kGelu, R::kSame},
    {"", "Sigmoid", K::kSigmoid, R::kSame},
    {"", "Tanh", K::kTanh, R::kSame},
    {"", "Erf", K::kErf, R::kSame},
    {"", "Clip", K::kClip, R::kSame},
    {"", "HardSigmoid", K::kHardSigmoid, R::kSame},
    {"", "HardSwish", K::kHardSwish, R::kSame},
    {"", "QuantizeLinear", K::kQuantize, R::kQuantize},
    {"", "DynamicQuantizeLinear", K::kQuantize, R::kQuantize},
    {"", "DequantizeLinear", K::kDequantize, R::kDequantize},
    {"", "Trilu", K::kWhere, R::kTrilu},
    // Reductions and pooling.
    {"", "ReduceSum", K::kReduceSum, R::kReduce},
    {"", "ReduceMean", K::kReduceMean, R::kReduce},
    {"", "ReduceMax", K::kReduceMax, R::kReduce},
    {"", "ReduceMin", K::kReduceMax, R::kReduce},
    {"", "ReduceProd", K::kReduceSum, R::kReduce},
    {"", "ReduceL1", K::kReduceSum, R::kReduce},
    {"", "ReduceL2", K::kReduceSum, R::kReduce},
    {"", "ReduceLogSum", K::kReduceSum, R::kReduce},
    {"", "ReduceLogSumExp", K::kReduceSum, R::kReduce},
    {"", "ReduceSumSquare", K::kReduceSum, R::kReduce},
    {"", "ArgMax", K::kReduceMax, R::kArgReduce},
    {"", "ArgMin", K::kReduceMax, R::kArgReduce},
    {"", "CumSum", K::kCumSum, R::kCumSum},
    {"", "MaxPool", K::kMaxPool, R::kPool},
    {"", "AveragePool", K::kAveragePool, R::kPool},
    {"", "LpPool", K::kAveragePool, R::kPool},
    {"", "GlobalAveragePool", K::kGlobalAveragePool, R::kGlobalPool},
    {"", "GlobalMaxPool", K::kReduceMax, R::kGlobalPool},
    {"", "GlobalLpPool", K::kGlobalAveragePool, R::kGlobalPool},
    {"", "TopK", K::kTopK, R::kTopK},
    // Data movement.
    {"", "Gather", K::kGather, R::kGather},
    {"", "GatherElements", K::kGather, R::kGatherElements},
    {"", "GatherND", K::kGather, R::kGatherNd},
    {"", "ScatterND", K::kScatter, R::kSame},
    {"", "ScatterElements", K::kScatter, R::kSame},
    {"", "Scatter", K::kScatter, R::kSame},
    {"", "Concat", K::kConcat, R::kConcat},
    {"", "Slice", K::kSlice, R::kSlice},
    {"", "Split", K::kSplit, R::kSplit},
    {"", "Transpose", K::kTranspose, R::kTranspose},
    {"", "DepthToSpace", K::kTranspose, R::kDepthToSpace},
    {"", "SpaceToDepth", K::kTranspose, R::kSpaceToDepth},
    {"", "Pad", K::kPad, R::kPad},
    {"", "Cast", K::kCast, R::kCast},
    {"", "CastLike", K::kCast, R::kCastLike},
    {"", "Expand", K::kExpand, R::kExpand},
    {"", "Tile", K::kTile, R::kTile},
    {"", "Resize", K::kResize, R::kResize},
    {"", "Upsample", K::kResize, R::kResize},
    {"", "NonZero", K::kGather, R::kNonZero},
    // Views.
    {"", "Reshape", K::kReshape, R::kReshape},
    {"", "Flatten", K::kFlatten, R::kFlatten},
    {"", "Squeeze", K::kSqueeze, R::kSqueeze},
    {"", "Unsqueeze", K::kUnsqueeze, R::kUnsqueeze},
    {"", "Identity", K::kIdentity, R::kIdentity},
    {"", "Dropout", K::kIdentity, R::kIdentity},
    // Shape-only.
    {"", "Shape", K::kShape, R::kShape},
    {"", "Size", K::kShape, R::kSize},
    {"", "Constant", K::kConstant, R::kConstant},
    {"", "ConstantOfShape", K::kConstant, R::kConstantOfShape},
    {"", "Range", K::kRange, R::kRange},
    // Control flow.
    {"", "If", K::kIf, R::kIf},
    {"", "Loop", K::kLoop, R::kLoop},
    {"", "Scan", K::kScan, R::kScan},
    // com.microsoft (ONNX Runtime contrib ops in optimized exports).
    {kMs, "Attention", K::kAttention, R::kMsAttention},
    {kMs, "MultiHeadAttention", K::kAttention, R::kMsMultiHeadAttention},
    {kMs, "GroupQueryAttention", K::kAttention, R::kMsGroupQueryAttention},
    {kMs, "SkipLayerNormalization", K::kLayerNorm, R::kMsSkipNorm},
    {kMs, "SkipSimplifiedLayerNormalization", K::kRMSNorm, R::kMsSkipNorm},
    {kMs, "SimplifiedLayerNormalization", K::kRMSNorm, R::kLayerNorm},
    {"", "SimplifiedLayerNormalization", K::kRMSNorm, R::kLayerNorm},
    {kMs, "LayerNormalization", K::kLayerNorm, R::kLayerNorm},
    {kMs, "FastGelu", K::kGelu, R::kMsBiasGelu},
    {kMs, "BiasGelu", K::kGelu, R::kMsBiasGelu},
    {kMs, "Gelu", K::kGelu, R::kSame},
    {kMs, "QuickGelu", K::kGelu, R::kSame},
    {kMs, "BiasAdd", K::kAdd, R::kBroadcast},
    {kMs, "MatMulNBits", K::kMatMul, R::kMsMatMulNBits},
    {kMs, "FusedMatMul", K::kMatMul, R::kMsFusedMatMul},
    {kMs, "MatMulIntegerToFloat", K::kMatMul, R::kMatMul},
    {kMs, "DynamicQuantizeMatMul", K::kMatMul, R::kMatMul},
    {kMs, "FusedConv", K::kConv, R::kConv},
    {kMs, "FusedGemm", K::kGemm, R::kGemm},
    {kMs, "RotaryEmbedding", K::kRoPE, R::kMsRotary},
    {kMs, "QuantizeLinear", K::kQuantize, R::kQuantize},
    {kMs, "DequantizeLinear", K::kDequantize, R::kDequantize},
};

std::string Key(std::string_view domain, std::string_view op) {
  std::string k(domain == "ai.onnx" ? std::string_view() : domain);
  k.push_back('\0');
  k.append(op);
  return k;
}

}  // namespace

std::span<const OnnxOp> AllOps() { return kTable; }

const OnnxOp* FindOp(std::string_view domain, std::string_view op_type) {
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string, const OnnxOp*>();
    for (const OnnxOp& op : kTable) m->emplace(Key(op.domain, op.op_type), &op);
    return m;
  }();
  auto it = index->find(Key(domain, op_type));
  return it == index->end() ? nullptr : it->second;
}

}  // namespace opscope::import::onnx_ops
