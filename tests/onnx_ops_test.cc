// ONNX op coverage, one test (or more) per family: each model is built in memory, imported and
// costed; FLOPs are checked against the closed form written as arithmetic.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "import/onnx/onnx_ops.h"
#include "onnx_test_util.h"

namespace opscope::testing_onnx {
namespace {

Costed MustCost(const ModelBuilder& b, const import::DimBindings& dims = {}) {
  auto c = ImportAndCost(b.Bytes(), dims);
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().message);
  if (!c) return Costed{};
  return std::move(*c);
}

TEST(OnnxOpTable, EveryRowHasAKindAndIsUnique) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& op : import::onnx_ops::AllOps()) {
    EXPECT_TRUE(seen.insert({std::string(op.domain), std::string(op.op_type)}).second)
        << op.op_type;
    EXPECT_TRUE(ir::ParseOpKind(ir::OpName(op.kind)).has_value()) << op.op_type;
    EXPECT_EQ(import::onnx_ops::FindOp(op.domain, op.op_type), &op);
  }
  EXPECT_EQ(import::onnx_ops::FindOp("ai.onnx", "MatMul")->kind, ir::OpKind::kMatMul);
  EXPECT_EQ(import::onnx_ops::FindOp("", "NoSuchOp"), nullptr);
}

// ---- Matrix -----------------------------------------------------------------------------

TEST(OnnxMatrix, MatMulBatched) {
  ModelBuilder b;
  b.Input("x", kF32, {2, 8, 16}).Weight("w", kF32, {16, 32}).Output("y");
  b.Node("MatMul", {"x", "w"}, {"y"}, "mm");
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("y"), "2,8,32");
  EXPECT_EQ(c.cost("mm").flops, 2u * 2 * 8 * 32 * 16);  // 2·batch·M·N·K
  EXPECT_EQ(c.tensor("w").role, ir::Role::kWeight);
  EXPECT_EQ(c.tensor("y").role, ir::Role::kOutput);
  EXPECT_EQ(c.cost("mm").bytes_weights, 16u * 32 * 4);
}

TEST(OnnxMatrix, GemmTransBBiasNotInFlops) {
  ModelBuilder b;
  b.Input("a", kF32, {4, 16}).Weight("w", kF32, {32, 16}).Weight("bias", kF32, {32}).Output("y");
  AttrInt(b.Node("Gemm", {"a", "w", "bias"}, {"y"}, "fc"), "transB", 1);
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("y"), "4,32");
  EXPECT_EQ(c.cost("fc").flops, 2u * 4 * 32 * 16);  // bias adds not counted
  EXPECT_EQ(c.cost("fc").bytes_read, (4u * 16 + 32 * 16 + 32) * 4);
}

TEST(OnnxMatrix, GemmTransA) {
  ModelBuilder b;
  b.Input("a", kF32, {16, 4}).Weight("w", kF32, {16, 32}).Output("y");
  AttrInt(b.Node("Gemm", {"a", "w"}, {"y"}, "fc"), "transA", 1);
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("y"), "4,32");
  EXPECT_EQ(c.cost("fc").flops, 2u * 4 * 32 * 16);
}

TEST(OnnxMatrix, MatMulIntegerAndQLinearMatMulKeepIntegerFormats) {
  ModelBuilder b;
  b.Input("a", kU8, {4, 64}).Weight("w", kI8, {64, 8}).Output("y").Output("z");
  b.Node("MatMulInteger", {"a", "w"}, {"y"}, "mmi");
  b.Weight("as", kF32, {}).Weight("az", kU8, {}).Weight("ws", kF32, {}).Weight("wz", kI8, {});
  b.Weight("ys", kF32, {}).Weight("yz", kU8, {});
  b.Node("QLinearMatMul", {"a", "as", "az", "w", "ws", "wz", "ys", "yz"}, {"z"}, "qmm");
  Costed c = MustCost(b);
  EXPECT_EQ(c.tensor("y").format, format::Format::kInt32);
  EXPECT_EQ(c.tensor("z").format, format::Format::kUint8);
  EXPECT_EQ(c.tensor("w").format, format::Format::kInt8);
  EXPECT_EQ(c.cost("mmi").flops, 2u * 4 * 8 * 64);
  // QLinearMatMul: A and B first, as the MatMul rule expects.
  EXPECT_EQ(c.graph.tensors[c.node("qmm").inputs[1]].name, "w");
  EXPECT_EQ(c.cost("qmm").flops, 2u * 4 * 8 * 64);
  EXPECT_EQ(c.node("qmm").source_op, "QLinearMatMul");
}

TEST(OnnxMatrix, ConvPaddedAndGrouped) {
  ModelBuilder b;
  b.Input("x", kF32, {1, 8, 32, 32}).Weight("w", kF32, {16, 8, 3, 3}).Weight("dw", kF32, {16, 1, 3, 3});
  b.Output("z");
  auto& conv = b.Node("Conv", {"x", "w"}, {"y"}, "conv");
  AttrInts(conv, "pads", {1, 1, 1, 1});
  auto& dw = b.Node("Conv", {"y", "dw"}, {"z"}, "dw");
  AttrInt(dw, "group", 16);
  AttrInts(dw, "strides", {2, 2});
  AttrInts(dw, "pads", {1, 1, 1, 1});
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("y"), "1,16,32,32");
  EXPECT_EQ(c.cost("conv").flops, 2u * 16 * 32 * 32 * 8 * 9);  // 2·out elems·C_in·k²
  EXPECT_EQ(c.shape("z"), "1,16,16,16");
  EXPECT_EQ(c.cost("dw").flops, 2u * 16 * 16 * 16 * 1 * 9);  // depthwise: C_in/groups = 1
}

TEST(OnnxMatrix, ConvTransposeCountsInputElements) {
  ModelBuilder b;
  b.Input("x", kF32, {1, 16, 10, 10}).Weight("w", kF32, {16, 4, 4, 4}).Output("y");
  auto& ct = b.Node("ConvTranspose", {"x", "w"}, {"y"}, "up");
  AttrInt(ct, "group", 2);
  AttrInts(ct, "strides", {2, 2});
  AttrInts(ct, "pads", {1, 1, 1, 1});
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("y"), "1,8,20,20");
  EXPECT_EQ(c.cost("up").flops, 2u * (16 * 10 * 10) * 4 * 16);  // 2·in elems·C_out/g·k²
}

TEST(OnnxMatrix, QLinearConvPutsWeightSecond) {
  ModelBuilder b;
  b.Input("x", kU8, {1, 4, 8, 8}).Weight("w", kI8, {8, 4, 1, 1}).Output("y");
  for (const char* s : {"xs", "ws", "ys"}) b.Weight(s, kF32, {});
  b.Weight("xz", kU8, {}).Weight("wz", kI8, {}).Weight("yz", kU8, {});
  b.Node("QLinearConv", {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, {"y"}, "qc");
  Costed c = MustCost(b);
  EXPECT_EQ(c.graph.tensors[c.node("qc").inputs[1]].name, "w");
  EXPECT_EQ(c.tensor("y").format, format::Format::kUint8);
  EXPECT_EQ(c.cost("qc").flops, 2u * 8 * 64 * 4);
}

TEST(OnnxMatrix, EinsumTwoInputs) {
  ModelBuilder b;
  b.Input("a", kF32, {2, 3, 4}).Input("b", kF32, {2, 4, 5}).Output("y");
  AttrString(b.Node("Einsum", {"a", "b"}, {"y"}, "es"), "equation", "bij,bjk->bik");
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("y"), "2,3,5");
  EXPECT_EQ(c.cost("es").flops, 2u * 2 * 3 * 4 * 5);  // 2·Π extents
}

TEST(OnnxMatrix, MatMulNBitsBecomesInt4G128Weight) {
  ModelBuilder b;
  b.Opset("com.microsoft", 1);
  b.Input("a", kF16, {3, 256}).Weight("qw", kU8, {64, 2, 64}).Weight("scales", kF16, {128}).Output("y");
  auto& n = b.Node("MatMulNBits", {"a", "qw", "scales"}, {"y"}, "q4", "com.microsoft");
  AttrInt(n, "K", 256);
  AttrInt(n, "N", 64);
  AttrInt(n, "bits", 4);
  AttrInt(n, "block_size", 128);
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("y"), "3,64");
  EXPECT_EQ(c.shape("qw"), "64,256");
  EXPECT_EQ(c.tensor("qw").format, format::Format::kInt4G128);
  EXPECT_EQ(c.cost("q4").flops, 2u * 3 * 64 * 256);
  // 4-bit payload + one f16 scale per 128: exactly the packed bytes and the scales.
  EXPECT_EQ(c.cost("q4").bytes_weights, 64u * 256 / 2 + 64 * 2 * 2);
  EXPECT_EQ(c.node("q4").source_op, "com.microsoft.MatMulNBits");
  EXPECT_EQ(c.node("q4").op, ir::OpKind::kLinear);  // x [rows, K] · w [N, K]
}

TEST(OnnxMatrix, MatMulNBitsWithoutAMatchingFormatIsListed) {
  ModelBuilder b;
  b.Opset("com.microsoft", 1);
  b.Input("a", kF32, {3, 256}).Weight("qw", kU8, {64, 4, 32}).Weight("scales", kF32, {256}).Output("y");
  auto& n = b.Node("MatMulNBits", {"a", "qw", "scales"}, {"y"}, "q4", "com.microsoft");
  AttrInt(n, "K", 256);
  AttrInt(n, "N", 64);
  AttrInt(n, "bits", 4);
  AttrInt(n, "block_size", 64);
  Costed c = MustCost(b);
  EXPECT_FALSE(c.cost("q4").costed);
  EXPECT_EQ(c.node("q4").StringAttr("unresolved_reason"),
            "MatMulNBits with bits=4, block_size=64, non-f16 scales has no matching opscope weight format");
}

// ---- Attention --------------------------------------------------------------------------

TEST(OnnxAttention, MicrosoftAttentionSplitsProjectionAndSdpa) {
  ModelBuilder b;
  b.Opset("com.microsoft", 1);
  b.Input("x", kF32, {2, 16, 64}).Weight("w", kF32, {64, 192}).Weight("bias", kF32, {192}).Output("y");
  AttrInt(b.Node("Attention", {"x", "w", "bias"}, {"y"}, "att", "com.microsoft"), "num_heads", 4);
  Costed c = MustCost(b);
  EXPECT_EQ(c.cost("att/qkv_proj").flops, 2u * 2 * 16 * 192 * 64);
  EXPECT_EQ(c.cost("att/qkv_split").bytes(), 0u);  // a view of the packed projection
  // 2·B·heads·pairs·(d_qk + d_v), head dim 16, non-causal: 16·16 pairs.
  EXPECT_EQ(c.cost("att").flops, 2u * 2 * 4 * (16 * 16) * (16 + 16));
  EXPECT_EQ(c.shape("y"), "2,16,64");
}

TEST(OnnxAttention, GroupQueryAttentionIsCausalWithKvHeads) {
  ModelBuilder b;
  b.Opset("com.microsoft", 1);
  b.Input("q", kF16, {1, 8, 128}).Input("k", kF16, {1, 8, 32}).Input("v", kF16, {1, 8, 32}).Output("y");
  auto& n = b.Node("GroupQueryAttention", {"q", "k", "v"}, {"y"}, "gqa", "com.microsoft");
  AttrInt(n, "num_heads", 8);
  AttrInt(n, "kv_num_heads", 2);
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("y"), "1,8,128");
  EXPECT_EQ(c.node("gqa").IntAttr("kv_heads"), 2);
  EXPECT_EQ(c.cost("gqa").flops, 2u * 1 * 8 * (8 * 9 / 2) * (16 + 16));  // T(T+1)/2 pairs
}

TEST(OnnxAttention, PastKvCacheIsListedNotGuessed) {
  ModelBuilder b;
  b.Opset("com.microsoft", 1);
  b.Input("q", kF16, {1, 1, 128}).Input("k", kF16, {1, 1, 32}).Input("v", kF16, {1, 1, 32});
  b.Input("pk", kF16, {1, 2, "past", 16}).Input("pv", kF16, {1, 2, "past", 16}).Output("y");
  auto& n = b.Node("GroupQueryAttention", {"q", "k", "v", "pk", "pv"}, {"y"}, "gqa", "com.microsoft");
  AttrInt(n, "num_heads", 8);
  AttrInt(n, "kv_num_heads", 2);
  auto g = import::ImportOnnxBytes(b.Bytes(), "t.onnx", import::DimBindings{{"past", 100}});
  ASSERT_TRUE(g) << g.error().message;
  const ir::Node& att = g->nodes.back();
  ASSERT_TRUE(att.StringAttr("unresolved_reason").has_value());
  EXPECT_NE(att.StringAttr("unresolved_reason")->find("past key/value"), std::string::npos);
}

// ---- Norms ------------------------------------------------------------------------------

TEST(OnnxNorm, NormsAndSoftmaxFamilies) {
  ModelBuilder b;
  b.Opset("com.microsoft", 1);
  b.Input("x", kF32, {2, 16, 8, 8}).Input("s", kF32, {4, 64}).Weight("g16", kF32, {16});
  b.Weight("g64", kF32, {64}).Output("bn").Output("in").Output("sm").Output("ls").Output("ln");
  b.Output("rms").Output("skip");
  b.Weight("mean", kF32, {16}).Weight("var", kF32, {16});
  b.Node("BatchNormalization", {"x", "g16", "g16", "mean", "var"}, {"bn"}, "bn");
  b.Node("InstanceNormalization", {"x", "g16", "g16"}, {"in"}, "in");
  b.Node("Softmax", {"s"}, {"sm"}, "sm");
  b.Node("LogSoftmax", {"s"}, {"ls"}, "ls");
  b.Node("LayerNormalization", {"s", "g64", "g64"}, {"ln"}, "ln");
  b.Node("SimplifiedLayerNormalization", {"s", "g64"}, {"rms"}, "rms", "com.microsoft");
  b.Node("SkipLayerNormalization", {"s", "s", "g64", "g64"}, {"skip"}, "skip", "com.microsoft");
  Costed c = MustCost(b);
  const uint64_t x = 2 * 16 * 8 * 8, s = 4 * 64;
  EXPECT_EQ(c.cost("bn").flops, 2 * x);
  EXPECT_EQ(c.node("in").op, ir::OpKind::kGroupNorm);
  EXPECT_EQ(c.cost("in").flops, 3 * x);
  EXPECT_EQ(c.cost("sm").flops, 3 * s);
  EXPECT_EQ(c.node("ls").op, ir::OpKind::kSoftmax);
  EXPECT_EQ(c.cost("ln").flops, 3 * s);
  EXPECT_EQ(c.node("rms").op, ir::OpKind::kRMSNorm);
  // SkipLayerNormalization: an Add, then the LayerNorm over the sum.
  EXPECT_EQ(c.node("skip/skip_add").op, ir::OpKind::kAdd);
  EXPECT_EQ(c.cost("skip/skip_add").flops, s);
  EXPECT_EQ(c.node("skip").op, ir::OpKind::kLayerNorm);
  EXPECT_EQ(c.cost("skip").flops, 3 * s);
}

// ---- Elementwise ------------------------------------------------------------------------

TEST(OnnxElementwise, BroadcastActivationsCompareWhere) {
  ModelBuilder b;
  b.Opset("com.microsoft", 1);
  b.Input("x", kF32, {4, 1, 8}).Input("y", kF32, {3, 1}).Output("r").Output("g").Output("w");
  b.Node("Add", {"x", "y"}, {"a"}, "add");
  b.Node("Relu", {"a"}, {"r"}, "relu");
  b.Node("FastGelu", {"a"}, {"g"}, "fg", "com.microsoft");
  b.Node("Greater", {"a", "y"}, {"m"}, "gt");
  b.Node("Where", {"m", "a", "y"}, {"w"}, "where");
  for (const char* op : {"Erf", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Exp", "Log",
                         "Sqrt", "Reciprocal", "Neg", "Abs", "Clip"}) {
    b.Node(op, {"a"}, {std::string("u_") + op}, op);
  }
  b.Node("Not", {"m"}, {"nm"}, "not");
  b.Node("Pow", {"a", "y"}, {"p"}, "pow");
  Costed c = MustCost(b);
  const uint64_t n = 4 * 3 * 8;
  EXPECT_EQ(c.shape("a"), "4,3,8");
  EXPECT_EQ(c.cost("add").flops, n);
  EXPECT_EQ(c.cost("relu").flops, n);
  EXPECT_EQ(c.node("fg").op, ir::OpKind::kGelu);
  EXPECT_EQ(c.node("gt").op, ir::OpKind::kCompare);
  EXPECT_EQ(c.tensor("m").format, format::Format::kBool);
  EXPECT_EQ(c.node("not").op, ir::OpKind::kLogical);
  EXPECT_EQ(c.cost("where").flops, n);
  EXPECT_EQ(c.node("HardSwish").op, ir::OpKind::kHardSwish);
  EXPECT_EQ(c.cost("Erf").flops, n);
  for (size_t i = 0; i < c.ledger.nodes.size(); ++i) {
    EXPECT_TRUE(c.ledger.nodes[i].costed) << c.ledger.Reason(i);
  }
}

TEST(OnnxElementwise, QuantizeDequantize) {
  ModelBuilder b;
  b.Input("x", kF32, {8, 8}).Weight("s", kF32, {}).Weight("z", kI8, {}).Output("d");
  b.Node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "q");
  b.Node("DequantizeLinear", {"q", "s", "z"}, {"d"}, "dq");
  Costed c = MustCost(b);
  EXPECT_EQ(c.tensor("q").format, format::Format::kInt8);
  EXPECT_EQ(c.tensor("d").format, format::Format::kF32);
  EXPECT_EQ(c.node("q").op, ir::OpKind::kQuantize);
  EXPECT_EQ(c.cost("dq").flops, 64u);
}

// ---- Reductions and pooling -------------------------------------------------------------

TEST(OnnxReduce, ReduceAxesAsInputAndAttribute) {
  ModelBuilder b(18);
  b.Input("x", kF32, {2, 8, 16}).Ints("ax", {-1}).Output("m").Output("s").Output("am");
  b.Node("ReduceMean", {"x", "ax"}, {"m"}, "mean");
  AttrInt(b.Node("ReduceSum", {"x"}, {"s"}, "sum"), "keepdims", 0);
  AttrInt(b.Node("ArgMax", {"x"}, {"am"}, "argmax"), "axis", 1);
  b.Node("ReduceMin", {"x", "ax"}, {"mn"}, "min");
  b.Node("CumSum", {"x", "ax"}, {"cs"}, "cumsum");
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("m"), "2,8,1");
  EXPECT_EQ(c.shape("s"), "");  // all axes, keepdims 0: a scalar
  EXPECT_EQ(c.shape("am"), "2,1,16");
  EXPECT_EQ(c.tensor("am").format, format::Format::kInt64);
  EXPECT_EQ(c.cost("mean").flops, 2u * 8 * 16);  // 1 per input element
  EXPECT_EQ(c.node("min").op, ir::OpKind::kReduceMax);
  EXPECT_EQ(c.node("min").source_op, "ReduceMin");
  EXPECT_EQ(c.cost("cumsum").flops, 2u * 8 * 16);
}

TEST(OnnxReduce, PoolingWindows) {
  ModelBuilder b;
  b.Input("x", kF32, {1, 4, 112, 112}).Output("g").Output("a");
  auto& mp = b.Node("MaxPool", {"x"}, {"p"}, "maxpool");
  AttrInts(mp, "kernel_shape", {3, 3});
  AttrInts(mp, "strides", {2, 2});
  AttrInts(mp, "pads", {1, 1, 1, 1});
  b.Node("GlobalAveragePool", {"p"}, {"g"}, "gap");
  auto& ap = b.Node("AveragePool", {"p"}, {"a"}, "avgpool");
  AttrInts(ap, "kernel_shape", {2, 2});
  AttrInts(ap, "strides", {2, 2});
  AttrInt(ap, "ceil_mode", 1);
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("p"), "1,4,56,56");
  EXPECT_EQ(c.cost("maxpool").flops, 4u * 56 * 56 * 9);  // output elems · kernel elems
  EXPECT_EQ(c.shape("g"), "1,4,1,1");
  EXPECT_EQ(c.cost("gap").flops, 4u * 56 * 56);
  EXPECT_EQ(c.shape("a"), "1,4,28,28");
}

TEST(OnnxReduce, TopKAndResizeHaveNoFlopModel) {
  ModelBuilder b(13);
  b.Input("x", kF32, {1, 3, 8, 8}).Ints("k", {5}).Output("v").Output("r");
  AttrInt(b.Node("TopK", {"x", "k"}, {"v", "i"}, "topk"), "axis", -1);
  auto* scales = b.graph()->add_initializer();
  scales->set_name("scales");
  scales->set_data_type(kF32);
  scales->add_dims(4);
  for (float f : {1.f, 1.f, 2.f, 2.f}) scales->add_float_data(f);
  b.Node("Resize", {"x", "", "scales"}, {"r"}, "resize");
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("v"), "1,3,8,5");
  EXPECT_EQ(c.tensor("i").format, format::Format::kInt64);
  EXPECT_FALSE(c.cost("topk").flop_model);
  EXPECT_EQ(c.shape("r"), "1,3,16,16");
  EXPECT_FALSE(c.cost("resize").flop_model);
}

// ---- Data movement and views ------------------------------------------------------------

TEST(OnnxData, CopiesViewsAndGathers) {
  ModelBuilder b(13);
  b.Input("x", kF32, {4, 6}).Input("ids", kI64, {3}).Weight("table", kF32, {100, 6});
  b.Ints("starts", {1}).Ints("ends", {3}).Ints("axes1", {1}).Ints("shape", {6, 4});
  b.Ints("pads", {0, 1, 0, 1}).Ints("reps", {1, 2}).Ints("eshape", {2, 4, 6}).Ints("split", {1, 3});
  for (const char* o : {"g", "cc", "sl", "tr", "rs", "pd", "ca", "ex", "ti", "s0", "s1", "t0", "t1",
                        "ge", "sq", "us", "fl", "id"}) {
    b.Output(o);
  }
  b.Node("Gather", {"table", "ids"}, {"g"}, "gather");
  AttrInt(b.Node("Concat", {"x", "x"}, {"cc"}, "concat"), "axis", 0);
  b.Node("Slice", {"x", "starts", "ends", "axes1"}, {"sl"}, "slice");
  b.Node("Transpose", {"x"}, {"tr"}, "transpose");
  b.Node("Reshape", {"x", "shape"}, {"rs"}, "reshape");
  b.Node("Pad", {"x", "pads"}, {"pd"}, "pad");
  AttrInt(b.Node("Cast", {"x"}, {"ca"}, "cast"), "to", kF16);
  b.Node("Expand", {"x", "eshape"}, {"ex"}, "expand");
  b.Node("Tile", {"x", "reps"}, {"ti"}, "tile");
  b.Node("Split", {"x", "split"}, {"s0", "s1"}, "split_rows");
  AttrInt(b.Node("Split", {"x"}, {"t0", "t1"}, "split_cols"), "axis", 1);
  AttrInt(b.Node("GatherElements", {"x", "x_idx"}, {"ge"}, "gather_el"), "axis", 0);
  b.Input("x_idx", kI64, {2, 6});
  b.Ints("ax0", {0});
  b.Node("Unsqueeze", {"x", "ax0"}, {"us"}, "unsqueeze");
  b.Node("Squeeze", {"us", "ax0"}, {"sq"}, "squeeze");
  b.Node("Flatten", {"us"}, {"fl"}, "flatten");
  b.Node("Identity", {"x"}, {"id"}, "identity");
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("g"), "3,6");
  EXPECT_EQ(c.cost("gather").bytes_weights, 3u * 6 * 4);  // only the gathered rows
  EXPECT_EQ(c.shape("cc"), "8,6");
  EXPECT_EQ(c.shape("sl"), "4,2");
  EXPECT_EQ(c.shape("tr"), "6,4");
  EXPECT_EQ(c.shape("rs"), "6,4");
  EXPECT_EQ(c.cost("reshape").bytes(), 0u);  // a view
  EXPECT_EQ(c.shape("pd"), "4,8");
  EXPECT_EQ(c.tensor("ca").format, format::Format::kF16);
  EXPECT_EQ(c.shape("ex"), "2,4,6");
  EXPECT_EQ(c.shape("ti"), "4,12");
  EXPECT_EQ(c.shape("s1"), "3,6");
  EXPECT_EQ(c.node("split_rows").StringAttr("layout"), "contiguous");
  EXPECT_EQ(c.cost("split_rows").bytes(), 0u);
  EXPECT_FALSE(c.node("split_cols").StringAttr("layout").has_value());
  EXPECT_EQ(c.shape("t0"), "4,3");
  EXPECT_EQ(c.cost("split_cols").bytes(), 2u * 4 * 6 * 4);
  EXPECT_EQ(c.shape("ge"), "2,6");
  EXPECT_EQ(c.shape("us"), "1,4,6");
  EXPECT_EQ(c.shape("sq"), "4,6");
  EXPECT_EQ(c.shape("fl"), "1,24");
  EXPECT_EQ(c.cost("transpose").flops, 0u);
  EXPECT_EQ(c.cost("transpose").bytes(), 2u * 4 * 6 * 4);
}

// ---- Shape subgraphs --------------------------------------------------------------------

// Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Range and ConstantOfShape on a dynamic
// input: resolved symbolically, and to numbers once dims are bound.
ModelBuilder ShapeSubgraphModel() {
  ModelBuilder b(13);
  b.Input("x", kF32, {"batch", "seq", 64}).Ints("i1", {1}, true).Ints("zero", {0}, true);
  b.Ints("one", {1}, true).Ints("ax0", {0}).Ints("tail", {4, 16}).Output("y").Output("pos").Output("c");
  b.Node("Shape", {"x"}, {"shp"}, "shape");
  b.Node("Gather", {"shp", "zero"}, {"b"}, "gather_b");
  b.Node("Gather", {"shp", "i1"}, {"s"}, "gather_s");
  b.Node("Unsqueeze", {"b", "ax0"}, {"bu"}, "unsq_b");
  b.Node("Unsqueeze", {"s", "ax0"}, {"su"}, "unsq_s");
  AttrInt(b.Node("Concat", {"bu", "su", "tail"}, {"target"}, "concat"), "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"y"}, "reshape");
  b.Node("Range", {"zero", "s", "one"}, {"pos"}, "range");
  b.Node("ConstantOfShape", {"target"}, {"c"}, "cos");
  return b;
}

TEST(OnnxShapeEval, ShapeSubgraphSymbolicAndBound) {
  Costed sym = MustCost(ShapeSubgraphModel(), {});
  EXPECT_EQ(sym.shape("y"), "batch,seq,4,16");
  EXPECT_EQ(sym.shape("pos"), "seq");
  EXPECT_EQ(sym.shape("c"), "batch,seq,4,16");
  Costed bound = MustCost(ShapeSubgraphModel(), {{"batch", 2}, {"seq", 128}});
  EXPECT_EQ(bound.shape("y"), "2,128,4,16");
  EXPECT_EQ(bound.shape("pos"), "128");
  for (size_t i = 0; i < bound.ledger.nodes.size(); ++i) {
    EXPECT_TRUE(bound.ledger.nodes[i].costed) << bound.ledger.Reason(i);
  }
}

TEST(OnnxShapeEval, UnnamedDynamicDimIsInputColonAxis) {
  ModelBuilder b;
  b.Input("input_ids", kI64, {1, ""}).Weight("emb", kF32, {50, 8}).Output("e");
  b.Node("Gather", {"emb", "input_ids"}, {"e"}, "embed");
  auto g = import::ImportOnnxBytes(b.Bytes(), "t.onnx", {});
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_TRUE(g->symbols.Find("input_ids:1").has_value());
  Costed c = MustCost(b, {{"input_ids:1", 7}});
  EXPECT_EQ(c.shape("e"), "1,7,8");
}

TEST(OnnxShapeEval, DataDependentShapeIsListedWithReason) {
  ModelBuilder b;
  b.Input("x", kF32, {4, 4}).Output("y");
  b.Node("NonZero", {"x"}, {"nz"}, "nonzero");
  b.Node("Transpose", {"nz"}, {"y"}, "after");
  auto g = import::ImportOnnxBytes(b.Bytes(), "t.onnx", {});
  ASSERT_TRUE(g) << g.error().message;
  for (const auto& n : g->nodes) {
    auto why = n.StringAttr("unresolved_reason");
    ASSERT_TRUE(why.has_value()) << n.name;
    EXPECT_NE(why->find("nonzero"), std::string::npos) << *why;
  }
}

TEST(OnnxShapeEval, LibraryMessageWhenNeitherCanInfer) {
  ModelBuilder b;
  b.Input("x", kF32, {2, 3, 4}).Weight("w", kF32, {4, 5}).Output("y");
  b.Node("Gemm", {"x", "w"}, {"y"}, "bad_gemm");
  auto g = import::ImportOnnxBytes(b.Bytes(), "t.onnx", {});
  ASSERT_TRUE(g) << g.error().message;
  const auto why = g->nodes[0].StringAttr("unresolved_reason");
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("node 'bad_gemm' (Gemm): Gemm inputs must be 2-D"), std::string::npos) << *why;
  EXPECT_NE(why->find("; ONNX: "), std::string::npos) << *why;
}

TEST(OnnxShapeEval, LibraryInfersOpsWithoutAnOpscopeRule) {
  ModelBuilder b;
  b.Input("x", kF32, {4, 3}).Input("lens", kI64, {3}).Output("y");
  b.Node("ReverseSequence", {"x", "lens"}, {"y"}, "rev");
  Costed c = MustCost(b);
  EXPECT_EQ(c.shape("y"), "4,3");
  EXPECT_EQ(c.tensor("y").format, format::Format::kF32);
  EXPECT_EQ(c.node("rev").op, ir::OpKind::kUnknown);  // outside the table: listed
  EXPECT_EQ(c.node("rev").source_op, "ReverseSequence");
}

// ---- Control flow built in memory ------------------------------------------------------

TEST(OnnxControlFlow, ScanWithKnownLengthRepeatsItsBody) {
  ModelBuilder b;
  b.Input("init", kF32, {4}).Input("xs", kF32, {5, 4}).Output("final").Output("ys");
  auto& scan = b.Node("Scan", {"init", "xs"}, {"final", "ys"}, "scan");
  AttrInt(scan, "num_scan_inputs", 1);
  auto* a = scan.add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = a->mutable_g();
  body->set_name("body");
  SetType(body->add_input(), kF32, {4});
  body->mutable_input(0)->set_name("s_in");
  SetType(body->add_input(), kF32, {4});
  body->mutable_input(1)->set_name("x_t");
  auto* add = body->add_node();
  add->set_op_type("Add");
  add->set_name("acc");
  add->add_input("s_in");
  add->add_input("x_t");
  add->add_output("s_out");
  auto* relu = body->add_node();
  relu->set_op_type("Relu");
  relu->set_name("act");
  relu->add_input("s_out");
  relu->add_output("y_t");
  body->add_output()->set_name("s_out");
  body->add_output()->set_name("y_t");
  Costed c = MustCost(b);
  EXPECT_EQ(c.node("scan/body/acc").repeat, 5u);
  EXPECT_EQ(c.cost("scan/body/acc").flops, 5u * 4);  // 4 adds per step, 5 steps
  EXPECT_EQ(c.shape("ys"), "5,4");
  EXPECT_EQ(c.shape("final"), "4");
  for (size_t i = 0; i < c.ledger.nodes.size(); ++i) {
    EXPECT_TRUE(c.ledger.nodes[i].costed) << c.ledger.Reason(i);
  }
}

// ---- Unknown ops and weights ------------------------------------------------------------

TEST(OnnxUnknown, UnknownOpKeepsDomainAndName) {
  ModelBuilder b;
  b.Opset("my.domain", 1);
  b.Input("x", kF32, {4}).Output("y");
  b.Node("Frobnicate", {"x"}, {"y"}, "frob", "my.domain");
  auto c = ImportAndCost(b.Bytes());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->node("frob").op, ir::OpKind::kUnknown);
  EXPECT_EQ(c->node("frob").source_op, "my.domain.Frobnicate");
  EXPECT_FALSE(c->cost("frob").costed);
}

TEST(OnnxWeights, SharedInitializerIsOneTensor) {
  ModelBuilder b;
  b.Input("x", kF32, {2, 8}).Weight("w", kF32, {8, 8}).Output("z");
  b.Node("MatMul", {"x", "w"}, {"y"}, "mm1");
  b.Node("MatMul", {"y", "w"}, {"z"}, "mm2");
  Costed c = MustCost(b);
  int weights = 0;
  for (const auto& t : c.graph.tensors) weights += t.role == ir::Role::kWeight;
  EXPECT_EQ(weights, 1);
  EXPECT_EQ(c.node("mm1").inputs[1], c.node("mm2").inputs[1]);
}

}  // namespace
}  // namespace opscope::testing_onnx
