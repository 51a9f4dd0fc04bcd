// Real exported models (tests/fixtures/onnx, made by make_fixtures.py with torch, weights
// stripped to external data that was never written): FLOPs against torch.profiler's figures
// and closed forms recorded in expected.json; dynamic exports at two bindings; control flow.
#include <gtest/gtest.h>

#include <string>

#include "onnx_test_util.h"

namespace opscope::testing_onnx {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/onnx/" + name;
}

struct Totals {
  uint64_t matrix_flops = 0;  // MatMul / Gemm / Conv / ConvTranspose / Einsum
  uint64_t conv_flops = 0;
  uint64_t gemm_flops = 0;
  size_t not_costed = 0;
  size_t nodes = 0;
  std::string first_reason;
};

Result<Totals> Analyze(const std::string& file, const import::DimBindings& dims = {}) {
  auto g = import::ImportOnnx(Fixture(file), dims);
  if (!g) return std::unexpected(g.error());
  cost::Workload w;
  w.bindings = dims;
  auto l = cost::BuildLedger(*g, w);
  if (!l) return std::unexpected(l.error());
  Totals t;
  t.nodes = g->nodes.size();
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const auto& c = l->nodes[i];
    if (!c.costed) {
      if (t.first_reason.empty()) t.first_reason = g->nodes[i].name + ": " + std::string(l->Reason(i));
      ++t.not_costed;
    }
    switch (ir::Family(g->nodes[i].op)) {
      case ir::OpFamily::kConv:
      case ir::OpFamily::kConvTranspose:
        t.conv_flops += c.flops;
        t.matrix_flops += c.flops;
        break;
      case ir::OpFamily::kMatMul:
        if (g->nodes[i].op == ir::OpKind::kGemm) t.gemm_flops += c.flops;
        t.matrix_flops += c.flops;
        break;
      case ir::OpFamily::kEinsum:
        t.matrix_flops += c.flops;
        break;
      default:
        break;
    }
  }
  return t;
}

TEST(OnnxModels, ResNet50MatchesTorchProfiler) {
  auto t = Analyze("resnet50.onnx");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->not_costed, 0u) << t->first_reason;
  // torch.profiler at 1x3x224x224 (expected.json): aten::conv2d 8,174,272,512 and
  // aten::addmm 4,096,000 = 2·2048·1000.
  EXPECT_EQ(t->conv_flops, 8'174'272'512u);
  EXPECT_EQ(t->gemm_flops, 4'096'000u);
  EXPECT_EQ(t->matrix_flops, 8'178'368'512u);
}

// GPT-2-like decoder (vocab 1000, d 64, 4 heads, 2 layers): per layer 2·T·d·(3d + d + 8d)
// (QKV, output projection, MLP) + 4·T²·d (QKᵀ and AV), plus the LM head 2·T·d·V; × batch.
uint64_t Gpt2Flops(uint64_t batch, uint64_t t) {
  const uint64_t d = 64, layers = 2, vocab = 1000;
  return batch * (layers * (2 * t * d * (3 * d + d + 8 * d) + 4 * t * t * d) + 2 * t * d * vocab);
}

TEST(OnnxModels, Gpt2StaticMatchesClosedForm) {
  auto t = Analyze("gpt2_tiny_static.onnx");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->not_costed, 0u) << t->first_reason;
  EXPECT_EQ(t->matrix_flops, Gpt2Flops(1, 16));
}

TEST(OnnxModels, Gpt2DynamicAtTwoBindings) {
  for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 128}, {4, 200}}) {
    auto t = Analyze("gpt2_tiny_dynamic.onnx", {{"batch", batch}, {"seq", seq}});
    ASSERT_TRUE(t) << t.error().message;
    EXPECT_EQ(t->not_costed, 0u) << t->first_reason;
    EXPECT_EQ(t->matrix_flops, Gpt2Flops(static_cast<uint64_t>(batch), static_cast<uint64_t>(seq)))
        << batch << "x" << seq;
  }
}

TEST(OnnxModels, Gpt2DynamicUnboundIsSymbolicNotGuessed) {
  auto g = import::ImportOnnx(Fixture("gpt2_tiny_dynamic.onnx"), {});
  ASSERT_TRUE(g) << g.error().message;
  // Every shape resolved to expressions of the input dims: nothing left unresolved.
  for (const auto& n : g->nodes) {
    EXPECT_FALSE(n.StringAttr("unresolved_reason").has_value())
        << n.name << ": " << *n.StringAttr("unresolved_reason");
  }
  EXPECT_TRUE(g->symbols.Find("batch").has_value());
  EXPECT_TRUE(g->symbols.Find("seq").has_value());
  // Costing without bindings lists nodes as not costed, naming the dims.
  cost::Workload none;
  auto l = cost::BuildLedger(*g, none);
  ASSERT_TRUE(l) << l.error().message;
  size_t not_costed = 0;
  for (const auto& c : l->nodes) not_costed += !c.costed;
  EXPECT_GT(not_costed, 0u);
}

TEST(OnnxModels, ConvTransposeAndEinsumFixtures) {
  auto ct = Analyze("conv_transpose.onnx");
  ASSERT_TRUE(ct) << ct.error().message;
  EXPECT_EQ(ct->matrix_flops, 2u * (16 * 10 * 10) * (8 / 2) * 16);  // 2·in elems·C_out/g·k²
  auto es = Analyze("einsum.onnx");
  ASSERT_TRUE(es) << es.error().message;
  EXPECT_EQ(es->matrix_flops, 2u * 2 * 3 * 4 * 5);
  auto norms = Analyze("norms.onnx");
  ASSERT_TRUE(norms) << norms.error().message;
  EXPECT_EQ(norms->not_costed, 0u) << norms->first_reason;
}

TEST(OnnxModels, IfWithConstantConditionCostsTheTakenBranch) {
  auto t = Analyze("if_const.onnx");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->not_costed, 0u) << t->first_reason;
  EXPECT_EQ(t->matrix_flops, 2u * 2 * 16 * 8);  // then branch: MatMul [2,8]·[8,16]
}

TEST(OnnxModels, IfWithRuntimeConditionIsListed) {
  auto g = import::ImportOnnx(Fixture("if_dynamic.onnx"), {});
  ASSERT_TRUE(g) << g.error().message;
  bool if_node = false;
  for (const auto& n : g->nodes) {
    EXPECT_TRUE(n.StringAttr("unresolved_reason").has_value()) << n.name;
    if_node = if_node || n.op == ir::OpKind::kIf;
  }
  EXPECT_TRUE(if_node);
  cost::Workload none;
  auto l = cost::BuildLedger(*g, none);
  ASSERT_TRUE(l) << l.error().message;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (g->nodes[i].op == ir::OpKind::kIf) {
      EXPECT_FALSE(l->nodes[i].costed);
      // The reason names the graph input the condition is, and the option that decides it.
      EXPECT_NE(l->Reason(i).find("depends on the value of input 'cond' (pass --input cond=VALUE)"),
                std::string::npos)
          << l->Reason(i);
    }
  }
}

TEST(OnnxModels, LoopWithConstantTripCountRepeatsTheBody) {
  auto g = import::ImportOnnx(Fixture("loop_const.onnx"), {});
  ASSERT_TRUE(g) << g.error().message;
  bool found = false;
  for (const auto& n : g->nodes) {
    if (n.op == ir::OpKind::kMatMul) {
      EXPECT_EQ(n.repeat, 5u);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  auto t = Analyze("loop_const.onnx");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_EQ(t->not_costed, 0u) << t->first_reason;
  EXPECT_EQ(t->matrix_flops, 5u * 2 * 4 * 16 * 16);
}

TEST(OnnxModels, LoopWithRuntimeTripCountIsListed) {
  auto g = import::ImportOnnx(Fixture("loop_dynamic.onnx"), {});
  ASSERT_TRUE(g) << g.error().message;
  bool loop = false;
  for (const auto& n : g->nodes) {
    EXPECT_TRUE(n.StringAttr("unresolved_reason").has_value()) << n.name;
    EXPECT_EQ(n.repeat, 1u);
    loop = loop || n.op == ir::OpKind::kLoop;
  }
  EXPECT_TRUE(loop);
}

}  // namespace
}  // namespace opscope::testing_onnx
