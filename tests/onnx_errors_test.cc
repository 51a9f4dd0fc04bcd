// ONNX bad input: every case is an error naming the file (and the node or tensor), never a
// crash; external data that is absent is fine because it is never opened.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "onnx_test_util.h"
#include "support/file_io.h"

namespace opscope::testing_onnx {
namespace {

std::string ErrorOf(const std::string& bytes, const import::DimBindings& dims = {}) {
  auto g = import::ImportOnnxBytes(bytes, "bad.onnx", dims);
  if (g) return "";
  return g.error().message;
}

ModelBuilder SmallModel() {
  ModelBuilder b;
  b.Input("x", kF32, {2, 8}).Weight("w", kF32, {8, 4}).Output("y");
  b.Node("MatMul", {"x", "w"}, {"y"}, "mm");
  return b;
}

TEST(OnnxErrors, RandomBytes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::string bytes(static_cast<size_t>(1 + rng() % 4096), '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    const std::string e = ErrorOf(bytes);
    ASSERT_FALSE(e.empty()) << "random bytes imported as a model";
    EXPECT_EQ(e.rfind("bad.onnx: not an ONNX model", 0), 0u) << e;
  }
}

// A convolution whose weight has more spatial axes than its input (a fuzzed model: X [1, 3, 8],
// W [4, 3, 3, 3], no kernel_shape) crashed Debian's libonnx shape inference, which indexes X's
// per-axis attributes with W's axes. The importer writes kernel_shape out from W's shape first
// (its default), so the library reports the mismatch: the model imports, the convolution not
// costed. Alike for ConvTranspose, ConvInteger and QLinearConv (W its fourth input), and for a
// W declared as a graph input; a Conv whose X comes from another node (its rank inferred) too.
TEST(OnnxErrors, AConvolutionWhoseWeightOutranksItsInputNeverCrashes) {
  for (const char* op : {"Conv", "ConvTranspose", "ConvInteger", "QLinearConv"}) {
    for (const bool declared : {false, true}) {
      for (const bool produced : {false, true}) {
        ModelBuilder b;
        b.Input("x", kF32, {1, 3, 8});
        if (declared) {
          b.Input("w", kF32, {4, 3, 3, 3});
        } else {
          b.Weight("w", kF32, {4, 3, 3, 3});
        }
        b.Output("y");
        std::string x = "x";
        if (produced) {
          b.Node("Relu", {"x"}, {"r"}, "relu");
          x = "r";
        }
        const std::string qop(op);
        std::vector<std::string> ins = {x, "w"};
        if (qop == "QLinearConv") ins = {x, "s", "z", "w", "s", "z", "s", "z"};
        if (qop == "QLinearConv") b.Weight("s", kF32, {}).Weight("z", kF32, {});
        if (!declared && produced) {  // a quantized model's weight: DequantizeLinear(W)
          b.Node("DequantizeLinear", {"w", "s", "z"}, {"wq"}, "dq");
          if (qop != "QLinearConv") b.Weight("s", kF32, {}).Weight("z", kF32, {});
          for (std::string& i : ins) i = i == "w" ? "wq" : i;
        }
        b.Node(op, ins, {"y"}, "conv");
        auto g = import::ImportOnnxBytes(b.Bytes(), "conv.onnx", import::DimBindings{});
        EXPECT_TRUE(g) << op << (g ? "" : ": " + g.error().message);
      }
    }
  }
}

TEST(OnnxErrors, EmptyAndTruncated) {
  EXPECT_EQ(ErrorOf(""), "bad.onnx: empty file, not an ONNX model");
  const std::string full = SmallModel().Bytes();
  for (size_t cut = 1; cut < full.size(); ++cut) {
    const std::string e = ErrorOf(full.substr(0, cut));
    // A cut that happens to end on a field boundary may still parse: it must then fail for
    // what is missing, never crash.
    if (!e.empty()) {
      EXPECT_EQ(e.rfind("bad.onnx: ", 0), 0u) << e;
    }
  }
  EXPECT_NE(ErrorOf(full.substr(0, full.size() / 2)), "");
}

TEST(OnnxErrors, ProtobufThatIsNotAModel) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(kF32);
  t.add_dims(3);
  for (float f : {1.f, 2.f, 3.f}) t.add_float_data(f);
  const std::string e = ErrorOf(t.SerializeAsString());
  EXPECT_EQ(e.rfind("bad.onnx: not an ONNX model", 0), 0u) << e;
  onnx::NodeProto n;
  n.set_op_type("Relu");
  EXPECT_EQ(ErrorOf(n.SerializeAsString()).rfind("bad.onnx: not an ONNX model", 0), 0u);
}

TEST(OnnxErrors, MissingNodeInputNamesNode) {
  ModelBuilder b;
  b.Input("x", kF32, {2, 8}).Output("y");
  b.Node("MatMul", {"x", "nowhere"}, {"y"}, "mm");
  EXPECT_EQ(ErrorOf(b.Bytes()),
            "bad.onnx: node 'mm' (MatMul): input 'nowhere' is not a graph input, an "
            "initializer or the output of an earlier node");
}

TEST(OnnxErrors, CycleNamesANodeOnIt) {
  // Out of order is fine (the importer sorts); a cycle cannot be ordered.
  ModelBuilder b;
  b.Input("x", kF32, {2}).Output("z");
  b.Node("Add", {"x", "w"}, {"y"}, "first");
  b.Node("Relu", {"y"}, {"w"}, "second");
  b.Node("Relu", {"y"}, {"z"}, "out");
  EXPECT_EQ(ErrorOf(b.Bytes()),
            "bad.onnx: node 'first' (Add) is on a cycle: it reads 'w', written by 'second', "
            "which reads 'y', written by the node itself");
  ModelBuilder self;
  self.Input("x", kF32, {2}).Output("y");
  self.Node("Add", {"x", "y"}, {"y"}, "loop");
  EXPECT_EQ(ErrorOf(self.Bytes()),
            "bad.onnx: node 'loop' (Add) is on a cycle: it reads 'y', written by the node itself");
}

TEST(OnnxErrors, UnknownOpset) {
  ModelBuilder b(99);
  b.Input("x", kF32, {2}).Output("y");
  b.Node("Relu", {"x"}, {"y"}, "r");
  EXPECT_EQ(ErrorOf(b.Bytes()),
            "bad.onnx: opset 99 of the default ONNX domain is not known (opscope knows opsets 1-21)");
}

TEST(OnnxErrors, NegativeDims) {
  ModelBuilder b;
  b.Input("x", kF32, {2, -3}).Output("y");
  b.Node("Relu", {"x"}, {"y"}, "r");
  EXPECT_EQ(ErrorOf(b.Bytes()), "bad.onnx: tensor 'x' has the negative dim -3");
  ModelBuilder w;
  w.Input("x", kF32, {2}).Weight("bad", kF32, {-1}).Output("y");
  w.Node("Add", {"x", "bad"}, {"y"}, "a");
  EXPECT_EQ(ErrorOf(w.Bytes()), "bad.onnx: initializer: tensor 'bad' has the negative dim -1");
  ModelBuilder s;
  s.Input("x", kF32, {"n"}).Output("y");
  s.Node("Relu", {"x"}, {"y"}, "r");
  EXPECT_EQ(ErrorOf(s.Bytes(), {{"n", -4}}), "bad.onnx: --dim n=-4: dims must be non-negative");
}

TEST(OnnxErrors, OverflowingDimsAreRejectedByTheLedger) {
  ModelBuilder b;
  b.Input("x", kF32, {int64_t{1} << 40, int64_t{1} << 40}).Output("y");
  b.Node("Relu", {"x"}, {"y"}, "r");
  auto c = ImportAndCost(b.Bytes());
  EXPECT_FALSE(c.has_value());
}

TEST(OnnxErrors, MissingExternalDataIsNeverOpened) {
  // SmallModel's weight points at missing.weights.bin: importing and costing still work.
  auto c = ImportAndCost(SmallModel().Bytes());
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->cost("mm").flops, 2u * 2 * 4 * 8);
}

TEST(OnnxErrors, MissingFile) {
  auto g = import::ImportOnnx("/nonexistent/model.onnx", {});
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().message.rfind("/nonexistent/model.onnx: cannot open", 0), 0u);
}

TEST(OnnxErrors, ControlFlowNeverCrashesWithoutBranches) {
  ModelBuilder b;
  b.Input("c", kBool, {}).Output("y");
  b.Node("If", {"c"}, {"y"}, "branch");
  EXPECT_EQ(ErrorOf(b.Bytes()), "bad.onnx: node 'branch' (If): needs a condition and both branches");
}

}  // namespace
}  // namespace opscope::testing_onnx
