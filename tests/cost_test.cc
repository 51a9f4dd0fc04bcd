// The bytes-moved ledger and its cost rules: closed forms per op family (written as the
// arithmetic), the source ledger's own checks, the LLM op contracts (routed experts, paged
// attention incl. MLA, recurrences), views and copies, not-costed reasons, and properties.
#include "cost/ledger.h"
#include "cost/expert_balance.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "testing/graph_builder.h"

namespace opscope::cost {
namespace {

using format::MmaClass;
using ir::OpKind;
using testing::D;
using testing::GraphBuilder;
using testing::MustLedger;

const NodeCost& Only(const Ledger& l) {
  EXPECT_EQ(l.nodes.size(), 1u);
  return l.nodes.at(0);
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// ---- The source ledger's own tests ------------------------------------------------------

// A matmul's traffic and FLOPs match the closed form.
TEST(LedgerSeedTest, MatMulCostMatchesClosedForm) {
  constexpr uint64_t m = 64, k = 128, n = 32;
  GraphBuilder b("mm");
  b.Input("x", {64, 128});
  b.Weight("w", {128, 32});
  b.Tensor("y", {64, 32});
  b.Node("mm", OpKind::kMatMul, {"x", "w"}, {"y"});
  const NodeCost c = Only(MustLedger(b.Build()));
  EXPECT_TRUE(c.costed);
  EXPECT_EQ(c.flops, 2 * m * n * k);                // 2·M·N·K
  EXPECT_EQ(c.bytes_read, (m * k + k * n) * 4);     // A and B, f32, once each
  EXPECT_EQ(c.bytes_written, m * n * 4);            // Y once
  EXPECT_EQ(c.bytes_weights, k * n * 4);            // B is a weight
  EXPECT_EQ(c.bytes_state, 0u);
  EXPECT_EQ(c.mma_class, MmaClass::kFp32);
}

// Leaves are storage, not movement: a weight is counted once, by its consumer.
TEST(LedgerSeedTest, LeavesDoNotDoubleCount) {
  GraphBuilder b("leaf");
  b.Weight("w", {1024});
  b.Tensor("y", {1024});
  b.Node("neg", OpKind::kNeg, {"w"}, {"y"});
  const Ledger l = MustLedger(b.Build());
  ASSERT_EQ(l.nodes.size(), 1u);  // leaves have no ledger row of their own
  EXPECT_EQ(l.nodes[0].bytes(), 1024u * 4 * 2);  // read once, written once
  EXPECT_EQ(l.nodes[0].bytes_weights, 1024u * 4);
  // The fused floor counts the weight once and the graph output once.
  EXPECT_EQ(l.essential_weight_bytes, 1024u * 4);
  EXPECT_EQ(l.essential_io_bytes, 1024u * 4);
}

Ledger DecodeGemv(const std::string& weight_format) {
  GraphBuilder b("w");
  b.Input("x", {1, 4096});
  b.Weight("w", {4096, 4096}, weight_format);
  b.Tensor("y", {1, 4096});
  b.Node("mm", OpKind::kMatMul, {"x", "w"}, {"y"});
  return MustLedger(b.Build());
}

// Halving the weight dtype halves the weight traffic; a decode GEMV is ~all weight bytes.
TEST(LedgerSeedTest, NarrowerWeightsHalveWeightTraffic) {
  const NodeCost f32 = Only(DecodeGemv("f32"));
  const NodeCost f16 = Only(DecodeGemv("f16"));
  EXPECT_EQ(f32.bytes_weights, 4096u * 4096 * 4);
  EXPECT_EQ(f32.bytes_weights, 2 * f16.bytes_weights);
  EXPECT_EQ(f32.flops, f16.flops);  // FLOPs do not depend on the format
  const double share = static_cast<double>(f32.bytes_weights) / static_cast<double>(f32.bytes());
  EXPECT_GT(share, 0.99) << "decode GEMV should be ~all weight bytes";
}

double Intensity(int64_t m) {
  GraphBuilder b("r");
  b.Input("x", {m, 4096});
  b.Weight("w", {4096, 4096});
  b.Tensor("y", {m, 4096});
  b.Node("mm", OpKind::kMatMul, {"x", "w"}, {"y"});
  const NodeCost c = Only(MustLedger(b.Build()));
  return static_cast<double>(c.flops) / static_cast<double>(c.bytes());
}

// A GEMV is far below any ridge point and a 4096-row GEMM far above (roofline_test checks
// the bound on every device).
TEST(LedgerSeedTest, GemvAndGemmIntensities) {
  const double gemv = Intensity(1);
  const double gemm = Intensity(4096);
  EXPECT_LT(gemv, 10.0);
  EXPECT_GT(gemm, 100.0);
  EXPECT_GT(gemm, gemv * 50.0);
  // Closed forms: 2·m·n·k / ((m·k + k·n + m·n)·4).
  EXPECT_DOUBLE_EQ(gemm, 2.0 * 4096 * 4096 * 4096 / (3.0 * 4096 * 4096 * 4));
  EXPECT_DOUBLE_EQ(gemv, 2.0 * 4096 * 4096 / ((4096.0 + 4096.0 * 4096 + 4096) * 4));
}

// Unbound dims are listed with the symbol named, never guessed.
TEST(LedgerSeedTest, UnboundDimsAreListedNotGuessed) {
  GraphBuilder b("dyn");
  b.Input("x", {"n", 16});
  b.Tensor("y", {"n", 16});
  b.Tensor("z", {4, 16});
  b.Input("c", {4, 16});
  b.Node("neg", OpKind::kNeg, {"x"}, {"y"});
  b.Node("abs", OpKind::kAbs, {"c"}, {"z"});
  const ir::Graph g = b.Build();
  const Ledger l = MustLedger(g);
  const NodeCost& neg = l.nodes[0];
  EXPECT_FALSE(neg.costed);
  EXPECT_EQ(l.Reason(0), "dim 'n' of tensor 'x' is not bound (pass --dim n=VALUE)");
  EXPECT_EQ(neg.bytes(), 0u);
  EXPECT_EQ(neg.flops, 0u);
  // Other nodes are still costed.
  EXPECT_TRUE(l.nodes[1].costed);
  EXPECT_EQ(l.nodes[1].bytes(), 2u * 4 * 16 * 4);
  // Bound through the workload, the node is costed.
  const Ledger bound = MustLedger(g, Workload{{{"n", 3}}});
  EXPECT_TRUE(bound.nodes[0].costed);
  EXPECT_EQ(bound.nodes[0].bytes(), 2u * 3 * 16 * 4);
  EXPECT_EQ(bound.nodes[0].flops, 3u * 16);
  ASSERT_EQ(bound.bound_dims.size(), 1u);
  EXPECT_EQ(bound.bound_dims[0], (std::pair<std::string, int64_t>{"n", 3}));
}

TEST(LedgerSeedTest, EmptyGraphIsClean) {
  ir::Graph g;
  g.name = "empty";
  const Ledger l = MustLedger(g);
  EXPECT_TRUE(l.nodes.empty());
  EXPECT_EQ(l.essential_bytes(), 0u);
  EXPECT_TRUE(l.assumptions.empty());
}

// ---- Bindings ------------------------------------------------------------------------------

TEST(LedgerTest, BindingErrorsNameTheDim) {
  GraphBuilder b("g");
  b.Dim("k", 16);
  b.Input("x", {"n", "k"});
  b.Tensor("y", {"n", "k"});
  b.Node("neg", OpKind::kNeg, {"x"}, {"y"});
  const ir::Graph g = b.Build();
  auto unknown = BuildLedger(g, Workload{{{"m", 3}}});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().message, "--dim 'm': the model has no dim named 'm'");
  auto fixed = BuildLedger(g, Workload{{{"k", 3}}});
  ASSERT_FALSE(fixed.has_value());
  EXPECT_EQ(fixed.error().message, "--dim 'k': the model fixes 'k' = 16");
  auto negative = BuildLedger(g, Workload{{{"n", -1}}});
  ASSERT_FALSE(negative.has_value());
  EXPECT_TRUE(Contains(negative.error().message, "'n'"));
  // The graph's own dims bind symbols too.
  const Ledger l = MustLedger(g, Workload{{{"n", 2}}});
  EXPECT_EQ(l.nodes[0].flops, 2u * 16);
}

// A dim that evaluates negative, or a division that is inexact after binding, is bad input
// naming the tensor and quoting the expression.
TEST(LedgerTest, BadDimsAfterBindingNameTheTensor) {
  GraphBuilder b("g");
  b.Input("x", {"n - 8", 4});
  b.Tensor("y", {"n / 3", 4});
  b.Node("neg", OpKind::kNeg, {"x"}, {"y"});
  const ir::Graph g = b.Build();
  auto neg = BuildLedger(g, Workload{{{"n", 6}}});
  ASSERT_FALSE(neg.has_value());
  EXPECT_EQ(neg.error().message, "tensor 'x': dim 0 ('n - 8') is negative (-2)");
  auto inexact = BuildLedger(g, Workload{{{"n", 10}}});
  ASSERT_FALSE(inexact.has_value());
  EXPECT_EQ(inexact.error().message, "tensor 'y': dim 0 ('n / 3'): 10 is not divisible by 3");
}

// Block mismatches: on concrete dims bad input naming the tensor; after binding symbols the
// node is not costed, with the reason.
TEST(LedgerTest, BlockMismatchConcreteIsErrorSymbolicIsNotCosted) {
  {
    GraphBuilder b("g");
    b.Input("x", {4, 64}, "bf16");
    b.Weight("w_q", {24, 64}, "nvfp4");  // fine: blocks run along the last dim (64)
    b.Weight("w_bad", {64, 24}, "nvfp4");
    b.Tensor("y", {4, 24}, "bf16");
    b.Node("mm", OpKind::kMatMul, {"x", "w_bad"}, {"y"});
    auto l = BuildLedger(b.graph(), {});
    ASSERT_FALSE(l.has_value());
    EXPECT_EQ(l.error().message,
              "tensor 'w_bad': last dim 24 is not a multiple of nvfp4's 16-element block");
  }
  {
    GraphBuilder b("g");
    b.Input("x", {4, "d"}, "bf16");
    b.Weight("w", {"d", 32}, "bf16");
    b.Weight("w2", {32, "d"}, "q4_0");
    b.Tensor("y", {4, 32}, "bf16");
    b.Tensor("z", {4, 32}, "bf16");
    b.Node("mm", OpKind::kMatMul, {"x", "w"}, {"y"});
    b.Node("lin", OpKind::kLinear, {"x", "w2"}, {"z"});
    const Ledger l = MustLedger(b.Build(), Workload{{{"d", 48}}});
    EXPECT_TRUE(l.nodes[0].costed);
    EXPECT_FALSE(l.nodes[1].costed);
    EXPECT_EQ(l.Reason(1),
              "tensor 'w2': last dim 48 is not a multiple of q4_0's 32-element block");
  }
}

// ---- Matrix ops ----------------------------------------------------------------------------

TEST(RulesTest, BatchedMatMulAndLinear) {
  GraphBuilder b("g");
  b.Input("a", {3, 5, 7}, "bf16");
  b.Input("bb", {3, 7, 11}, "bf16");
  b.Tensor("c", {3, 5, 11}, "bf16");
  b.Node("bmm", OpKind::kMatMul, {"a", "bb"}, {"c"});
  b.Input("x", {6, 64}, "bf16");
  b.Weight("w", {128, 64}, "bf16");  // Linear: w[out, k]
  b.Tensor("y", {6, 128}, "bf16");
  b.Node("lin", OpKind::kLinear, {"x", "w"}, {"y"});
  const Ledger l = MustLedger(b.Build());
  EXPECT_EQ(l.nodes[0].flops, 2u * 3 * 5 * 11 * 7);  // 2·batch·M·N·K
  EXPECT_EQ(l.nodes[0].bytes(), (3u * 5 * 7 + 3 * 7 * 11 + 3 * 5 * 11) * 2);
  EXPECT_EQ(l.nodes[0].bytes_weights, 0u);           // activations only
  EXPECT_EQ(l.nodes[1].flops, 2u * 6 * 128 * 64);    // 2·rows·out·k
  EXPECT_EQ(l.nodes[1].bytes_weights, 128u * 64 * 2);
  EXPECT_EQ(l.nodes[1].mma_class, MmaClass::kBf16);
}

TEST(RulesTest, GemmWithTransposedA) {
  GraphBuilder b("g");
  b.Input("a", {64, 8});  // transA: A is [K, M]
  b.Weight("w", {64, 16});
  b.Tensor("y", {8, 16});
  b.Node("gemm", OpKind::kGemm, {"a", "w"}, {"y"}, {{"transA", int64_t{1}}});
  EXPECT_EQ(Only(MustLedger(b.Build())).flops, 2u * 8 * 16 * 64);  // K = 64
}

TEST(RulesTest, MatMulContractMismatchIsBadInput) {
  GraphBuilder b("g");
  b.Input("x", {4, 64});
  b.Weight("w", {32, 16});
  b.Tensor("y", {4, 16});
  b.Node("mm", OpKind::kMatMul, {"x", "w"}, {"y"});
  auto l = BuildLedger(b.Build(), {});
  ASSERT_FALSE(l.has_value());
  EXPECT_TRUE(Contains(l.error().message, "node 'mm' (MatMul)")) << l.error().message;
}

// DESIGN "MMA class and peaks": the estimate runs at the activation's class; a plain float
// weight wider than the activation widens it; weight-only formats run at the activation's
// class. The floor may use the weight's own class.
TEST(RulesTest, MmaClassChoice) {
  struct Case {
    const char* act;
    const char* weight;
    MmaClass estimate;
    MmaClass floor;
  } cases[] = {
      {"bf16", "bf16", MmaClass::kBf16, MmaClass::kBf16},
      {"bf16", "int4_g128", MmaClass::kBf16, MmaClass::kInt8},  // W4A16 at bf16
      {"bf16", "int4_g128_zp", MmaClass::kBf16, MmaClass::kInt8},
      {"f16", "q4_0", MmaClass::kFp16, MmaClass::kInt8},         // GGUF: activation's class
      {"f16", "q6_k", MmaClass::kFp16, MmaClass::kInt8},
      {"bf16", "int8", MmaClass::kBf16, MmaClass::kInt8},         // W8A16
      {"fp8_e4m3", "bf16", MmaClass::kBf16, MmaClass::kBf16},     // fp8 act × bf16 weight
      {"fp8_e4m3", "fp8_e4m3_b128x128", MmaClass::kFp8, MmaClass::kFp8},
      {"fp8_e4m3_b128", "fp8_e4m3_b128x128", MmaClass::kFp8, MmaClass::kFp8},
      {"mxfp8", "mxfp8", MmaClass::kFp8, MmaClass::kFp8},
      {"bf16", "fp8_e4m3_b128x128", MmaClass::kBf16, MmaClass::kFp8},
      {"nvfp4", "nvfp4", MmaClass::kFp4, MmaClass::kFp4},
      {"mxfp4", "mxfp4", MmaClass::kFp4, MmaClass::kFp4},
      {"bf16", "nvfp4", MmaClass::kBf16, MmaClass::kFp4},
      {"int8", "int8", MmaClass::kInt8, MmaClass::kInt8},
      {"f32", "f16", MmaClass::kFp32, MmaClass::kFp16},
      {"f16", "f32", MmaClass::kFp32, MmaClass::kFp32},          // wider weight widens
  };
  for (const Case& c : cases) {
    GraphBuilder b("g");
    b.Input("x", {4, 256}, c.act);
    b.Weight("w", {128, 256}, c.weight);
    b.Tensor("y", {4, 128}, c.act);
    b.Node("lin", OpKind::kLinear, {"x", "w"}, {"y"});
    const NodeCost n = Only(MustLedger(b.Build()));
    EXPECT_EQ(n.mma_class, c.estimate) << c.act << " x " << c.weight;
    EXPECT_EQ(n.floor_class, c.floor) << c.act << " x " << c.weight;
    EXPECT_EQ(n.flops, 2u * 4 * 128 * 256) << "FLOPs do not depend on formats";
  }
}

// ---- Routed experts ----------------------------------------------------------------------

struct ExpertCase {
  int64_t experts, out, k, top_k, tokens;
  const char* format = "bf16";
};

Ledger Experts(const ExpertCase& e, OpKind op, bool attr = true) {
  GraphBuilder b("moe");
  const int64_t rows = op == OpKind::kExpertDown ? e.tokens * e.top_k : e.tokens;
  b.Input("x", {rows, e.k}, "bf16");
  b.Weight("w", {e.experts, e.out, e.k}, e.format);
  b.Tensor("y", {rows, e.out}, "bf16");
  std::vector<std::pair<std::string, ir::AttrValue>> attrs;
  if (attr) attrs.emplace_back("top_k", e.top_k);
  b.Node("experts", op, {"x", "w"}, {"y"}, attrs);
  return MustLedger(b.Build());
}

// Distinct experts read for T tokens under uniform routing: E·(1−(1−k/E)^T).
TEST(RulesTest, RoutedExpertsReadDistinctExperts) {
  for (int64_t tokens : {1, 2, 4, 16, 64, 1000}) {
    const ExpertCase e{64, 32, 16, 8, tokens};
    const uint64_t w_bytes = 64u * 32 * 16 * 2;
    const uint64_t x_bytes = static_cast<uint64_t>(tokens) * 16 * 2;
    const uint64_t y_bytes = static_cast<uint64_t>(tokens) * 32 * 2;
    const double distinct = 64.0 * (1.0 - std::pow(1.0 - 8.0 / 64.0, static_cast<double>(tokens)));
    const auto read_w =
        static_cast<uint64_t>(std::llround(static_cast<double>(w_bytes) * distinct / 64.0));
    const NodeCost c = Only(Experts(e, OpKind::kExpertGateUp));
    EXPECT_EQ(c.bytes_weights, read_w) << tokens;
    EXPECT_EQ(c.bytes_read, read_w + x_bytes) << tokens;
    EXPECT_EQ(c.bytes_written, y_bytes);
    EXPECT_EQ(c.flops, 2u * tokens * 8 * 16 * 32) << tokens;  // 2·T·top_k·k·out
    EXPECT_LE(c.bytes_weights, w_bytes);
  }
  // At batch 1 exactly top_k experts are read.
  EXPECT_EQ(Only(Experts({64, 32, 16, 8, 1}, OpKind::kExpertGateUp)).bytes_weights,
            8u * 32 * 16 * 2);
  EXPECT_EQ(Only(Experts({256, 64, 128, 8, 1}, OpKind::kExpertGateUp)).bytes_weights,
            8u * 64 * 128 * 2);
  // Top-1 of 1 expert: a dense layer.
  EXPECT_EQ(Only(Experts({1, 32, 16, 1, 5}, OpKind::kExpertGateUp)).bytes_weights,
            32u * 16 * 2);
}

// ExpertDown's input has T·top_k rows; T = rows / top_k.
TEST(RulesTest, ExpertDownTokensAreRowsOverTopK) {
  const ExpertCase e{64, 16, 32, 8, 1};
  const NodeCost down = Only(Experts(e, OpKind::kExpertDown));
  EXPECT_EQ(down.flops, 2u * 1 * 8 * 32 * 16);          // T = 8 rows / 8
  EXPECT_EQ(down.bytes_weights, 8u * 16 * 32 * 2);      // top_k experts at T = 1
  const NodeCost down4 = Only(Experts({64, 16, 32, 8, 4}, OpKind::kExpertDown));
  EXPECT_EQ(down4.flops, 2u * 4 * 8 * 32 * 16);
}

// The expert count rounds to the nearest byte; at batch 1 quantized experts are exact too.
TEST(RulesTest, RoutedExpertsAtBatchOneWithQuantizedWeights) {
  const NodeCost c = Only(Experts({128, 256, 512, 8, 1, "q4_k"}, OpKind::kExpertGateUp));
  EXPECT_EQ(c.bytes_weights, 8u * 256 * (512 / 256 * 144));  // 8 experts of q4_k rows
}

TEST(RulesTest, MissingTopKNamesNodeAndAttribute) {
  const Ledger l = Experts({64, 32, 16, 8, 4}, OpKind::kExpertGateUp, /*attr=*/false);
  EXPECT_FALSE(l.nodes[0].costed);
  EXPECT_EQ(l.Reason(0),
            "node 'experts' (ExpertGateUp): needs attribute 'top_k', which the model does not "
            "define");
  EXPECT_EQ(l.nodes[0].bytes(), 0u);
  EXPECT_EQ(l.nodes[0].flops, 0u);
  // The graph dim top_k is the fallback.
  GraphBuilder b("moe");
  b.Dim("top_k", 2);
  b.Input("x", {4, 16}, "bf16");
  b.Weight("w", {8, 32, 16}, "bf16");
  b.Tensor("y", {4, 32}, "bf16");
  b.Node("experts", OpKind::kExpertGateUp, {"x", "w"}, {"y"});
  const NodeCost c = Only(MustLedger(b.Build()));
  EXPECT_TRUE(c.costed);
  EXPECT_EQ(c.flops, 2u * 4 * 2 * 16 * 32);
}

TEST(RulesTest, RoutedExpertsStateTheAssumption) {
  const Ledger l = Experts({64, 32, 16, 8, 4}, OpKind::kExpertGateUp);
  ASSERT_EQ(l.assumptions.size(), 1u);
  EXPECT_TRUE(Contains(l.assumptions[0], "uniform routing"));
}

// ---- The busiest expert-parallel device ----------------------------------------------------

// E[max of m Binomial(n, p)] by the pmf summed term by term (a different route from the
// CDF walk under test): Σ_j P(max > j) with P(max ≤ j) = F(j)^m.
double BruteExpectedMax(int n, double p, int m) {
  double cdf = 0, sum = 0;
  for (int j = 0; j < n; ++j) {
    cdf += std::exp(std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) +
                    j * std::log(p) + (n - j) * std::log1p(-p));
    sum += 1 - std::pow(cdf, m);
  }
  return sum;
}

TEST(ExpertBalance, ExpectedMaxOfBinomials) {
  // One expert a device: the busiest of m reads it unless all m skip it.
  for (double p : {0.01, 0.3, 0.5, 0.9}) {
    for (uint64_t m : {1u, 2u, 8u}) {
      EXPECT_NEAR(ExpectedMaxBinomial(1, p, m), 1 - std::pow(1 - p, static_cast<double>(m)), 1e-12);
    }
  }
  // One device: the mean.
  EXPECT_NEAR(ExpectedMaxBinomial(32, 0.2, 1), 32 * 0.2, 1e-9);
  EXPECT_NEAR(ExpectedMaxBinomial(32, 0.8, 1), 32 * 0.8, 1e-9);
  // Both branches (p below and above 1/2) against the pmf summed directly.
  for (const auto& [n, p, m] : std::vector<std::tuple<int, double, int>>{
           {32, 0.03125, 8}, {32, 0.1193, 8}, {10, 0.3, 5}, {4, 0.7, 3}, {64, 0.97, 16},
           {128, 0.5, 4}}) {
    EXPECT_NEAR(ExpectedMaxBinomial(n, p, m), BruteExpectedMax(n, p, m), 1e-9) << n << " " << p;
  }
  // Bounds and monotonicity: between the mean and n, growing with the devices and with p.
  double last = 0;
  for (uint64_t m : {1u, 2u, 4u, 8u, 16u, 64u}) {
    const double v = ExpectedMaxBinomial(32, 0.2, m);
    EXPECT_GE(v, last) << m;
    EXPECT_LE(v, 32.0) << m;
    last = v;
  }
  EXPECT_LT(ExpectedMaxBinomial(32, 0.2, 8), ExpectedMaxBinomial(32, 0.25, 8));
  EXPECT_EQ(ExpectedMaxBinomial(32, 0, 8), 0);
  EXPECT_EQ(ExpectedMaxBinomial(32, 1, 8), 32);
  EXPECT_EQ(ExpectedMaxBinomial(0, 0.5, 8), 0);
  // Thousands of experts near p = 1/2, where (1−p)^n underflows: the normal approximation's
  // mean + 1.42·σ for the max of 8 (σ = √(n/4)).
  EXPECT_NEAR(ExpectedMaxBinomial(4000, 0.5, 8), 2000 + 1.4236 * std::sqrt(1000.0), 1.0);
}

// The busiest of ep devices under uniform top-k routing, against a simulation of the exact
// picks (each token k distinct experts of 256, spread 32 a device over 8 devices): 2.56 at one
// token, 6.58 at four, 16.72 at sixteen (50,000 trials each); the mean device reads 1.0, 3.8
// and 12.7.
TEST(ExpertBalance, BusiestDeviceMatchesASimulationOfTopKRouting) {
  for (const auto& [tokens, simulated, mean] : std::vector<std::tuple<double, double, double>>{
           {1, 2.557, 1.0}, {4, 6.577, 3.816}, {16, 16.717, 12.745}}) {
    const double rows = tokens * 8 / 8;  // this device's routed rows: T·top_k/ep
    EXPECT_NEAR(ExpertParallelActive(rows, 32, 8, 256, 1), mean, 0.01) << tokens;
    EXPECT_NEAR(ExpertParallelActive(rows, 32, 8, 256, 8), simulated, 0.03 * simulated) << tokens;
  }
}

// The rule reads the busiest device's experts when the node says how many devices share the
// pool (busiest_of), the mean device's without it; FLOPs (the mean device's rows) and the
// floor (the fewest experts any device may read) do not move.
TEST(RulesTest, ExpertParallelReadsTheBusiestDevicesExperts) {
  auto graph = [](std::optional<int64_t> busiest_of) {
    GraphBuilder b("moe");
    b.Input("x", {4, 16}, "bf16");  // 4 routed rows: 4 tokens of the group at top-8 over ep 8
    b.Weight("w", {32, 32, 16}, "bf16");
    b.Tensor("y", {4, 32}, "bf16");
    std::vector<std::pair<std::string, ir::AttrValue>> attrs{{"top_k", int64_t{8}},
                                                             {"experts_total", int64_t{256}}};
    if (busiest_of) attrs.emplace_back("busiest_of", *busiest_of);
    b.Node("experts", OpKind::kExpertGateUp, {"x", "w"}, {"y"}, attrs);
    return b.Build();
  };
  const Ledger mean = MustLedger(graph(std::nullopt)), busiest = MustLedger(graph(8));
  const double expert_bytes = 32 * 16 * 2;
  const double used = 1 - std::pow(1 - 8.0 / 256, 4);  // 4 tokens of the group
  EXPECT_EQ(Only(mean).bytes_weights, static_cast<uint64_t>(std::llround(expert_bytes * 32 * used)));
  EXPECT_EQ(Only(busiest).bytes_weights,
            static_cast<uint64_t>(std::llround(expert_bytes * ExpectedMaxBinomial(32, used, 8))));
  EXPECT_GT(Only(busiest).bytes_weights, Only(mean).bytes_weights * 3 / 2);
  EXPECT_EQ(Only(busiest).flops, Only(mean).flops);
  EXPECT_EQ(Only(busiest).floor_input_bytes, Only(mean).floor_input_bytes);
  EXPECT_TRUE(Contains(busiest.assumptions[0], "E[max over ep devices]"));
  const auto bad = BuildLedger(graph(0), {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "node 'experts' (ExpertGateUp): busiest_of 0 must be >= 1");
}

// ---- Paged attention -----------------------------------------------------------------------

struct PagedCase {
  int64_t seqs, t, ctx, q_heads, kv_heads, head_dim;
  const char* kv_format = "bf16";
  bool causal = true;
  int64_t window = 0;
  bool new_rows = false;
};

Ledger Paged(const PagedCase& p) {
  GraphBuilder b("attn");
  const int64_t n = p.seqs * p.t;
  b.Input("q", {n, p.q_heads * p.head_dim}, "bf16");
  b.State("k_cache", {p.seqs, p.ctx, p.kv_heads, p.head_dim}, p.kv_format);
  b.State("v_cache", {p.seqs, p.ctx, p.kv_heads, p.head_dim}, p.kv_format);
  std::vector<std::string> inputs = {"q", "k_cache", "v_cache"};
  if (p.new_rows) {
    b.Input("k_new", {n, p.kv_heads * p.head_dim}, "bf16");
    b.Input("v_new", {n, p.kv_heads * p.head_dim}, "bf16");
    inputs.push_back("k_new");
    inputs.push_back("v_new");
  }
  b.Tensor("o", {n, p.q_heads * p.head_dim}, "bf16");
  b.Node("attn", OpKind::kPagedAttention, inputs, {"o"},
         {{"q_heads", p.q_heads},
          {"head_dim", p.head_dim},
          {"causal", int64_t{p.causal ? 1 : 0}},
          {"window", p.window}});
  return MustLedger(b.Build());
}

// Brute force: query i (1-based) of T after P cached keys sees P + i keys (causal) or P + T,
// capped at W when a window is set.
uint64_t BrutePairs(uint64_t t, uint64_t p, bool causal, uint64_t w) {
  uint64_t pairs = 0;
  for (uint64_t i = 1; i <= t; ++i) {
    uint64_t keys = causal ? p + i : p + t;
    if (w > 0) keys = std::min(keys, w);
    pairs += keys;
  }
  return pairs;
}

TEST(RulesTest, PagedAttentionDecodeClosedForm) {
  // Decode: 4 sequences, 1 new token each, 1000 cached; 32 q heads, 8 kv heads, d = 128.
  const PagedCase p{4, 1, 1000, 32, 8, 128};
  const NodeCost c = Only(Paged(p));
  const uint64_t pairs = 1 * 1000 + 1 * 2 / 2;                 // T·P + T(T+1)/2
  EXPECT_EQ(c.flops, 2u * pairs * 4 * 32 * (128 + 128));        // 2·pairs·seqs·H·(dqk+dv)
  const uint64_t cache = 4u * 1000 * 8 * 128 * 2;               // one cache, bf16
  EXPECT_EQ(c.bytes_state, 2 * cache);                          // K and V read
  EXPECT_EQ(c.bytes_read, 2 * cache + 4u * 32 * 128 * 2);       // + q
  EXPECT_EQ(c.bytes_written, 4u * 32 * 128 * 2);                // o
  EXPECT_EQ(c.mma_class, MmaClass::kBf16);
}

TEST(RulesTest, CausalPrefillPairsAndSlidingWindow) {
  // Prefill of 16 tokens, nothing cached: T(T+1)/2 pairs.
  EXPECT_EQ(Only(Paged({1, 16, 0, 4, 4, 64})).flops, 2u * (16 * 17 / 2) * 1 * 4 * (64 + 64));
  // Chunked prefill: T = 8 after P = 100.
  EXPECT_EQ(Only(Paged({2, 8, 100, 4, 4, 64})).flops,
            2u * (8 * 100 + 8 * 9 / 2) * 2 * 4 * (64 + 64));
  // Not causal: T·(P+T).
  PagedCase nc{2, 8, 100, 4, 4, 64};
  nc.causal = false;
  EXPECT_EQ(Only(Paged(nc)).flops, 2u * (8 * (100 + 8)) * 2 * 4 * (64 + 64));
  // Window 50 < P: every query sees exactly 50 keys.
  PagedCase w50{1, 8, 100, 4, 4, 64};
  w50.window = 50;
  EXPECT_EQ(Only(Paged(w50)).flops, 2u * (8 * 50) * 1 * 4 * (64 + 64));
  // Window 104: queries see 101, 102, 103, 104, then 104.
  PagedCase w104{1, 8, 100, 4, 4, 64};
  w104.window = 104;
  EXPECT_EQ(Only(Paged(w104)).flops,
            2u * (101 + 102 + 103 + 104 + 104 + 104 + 104 + 104) * 1 * 4 * (64 + 64));
  // Against brute force over a grid, causal and not, with and without windows.
  for (int64_t t : {1, 2, 7, 33}) {
    for (int64_t ctx : {0, 1, 5, 64}) {
      for (int64_t w : {0, 1, 3, 40, 100}) {
        for (bool causal : {true, false}) {
          PagedCase pc{3, t, ctx, 2, 1, 16};
          pc.window = w;
          pc.causal = causal;
          const uint64_t pairs = BrutePairs(t, ctx, causal, w);
          EXPECT_EQ(Only(Paged(pc)).flops, 2u * pairs * 3 * 2 * (16 + 16))
              << "T=" << t << " P=" << ctx << " W=" << w << " causal=" << causal;
        }
      }
    }
  }
}

// The KV cache at fp8_e4m3 is exactly half of bf16, plus the per-tensor f32 scale of each cache.
TEST(RulesTest, PagedKvAtFp8IsHalfOfBf16PlusScales) {
  PagedCase bf16{8, 1, 4096, 32, 8, 128};
  PagedCase fp8 = bf16;
  fp8.kv_format = "fp8_e4m3";
  const NodeCost a = Only(Paged(bf16));
  const NodeCost b = Only(Paged(fp8));
  EXPECT_EQ(a.bytes_state, 2u * 8 * 4096 * 8 * 128 * 2);
  EXPECT_EQ(b.bytes_state, a.bytes_state / 2 + 2 * 4);  // two caches, one 4-byte scale each
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.bytes_read - a.bytes_state, b.bytes_read - b.bytes_state);  // q unchanged
}

// New K/V rows are read, and appended to the cache at the cache's format (a state write).
TEST(RulesTest, PagedAttentionAppendsNewRows) {
  PagedCase p{2, 1, 10, 4, 2, 8};
  p.new_rows = true;
  const NodeCost c = Only(Paged(p));
  const uint64_t cache = 2u * 10 * 2 * 8 * 2;
  const uint64_t row = 2u * 2 * 8 * 2;  // n · kv_heads · d, bf16
  EXPECT_EQ(c.bytes_read, 2u * 4 * 8 * 2 + 2 * cache + 2 * row);  // q, caches, new rows
  EXPECT_EQ(c.bytes_written, 2u * 4 * 8 * 2 + 2 * row);           // o + appended rows
  EXPECT_EQ(c.bytes_state, 2 * cache + 2 * row);
}

// Appending to an fp8_e4m3 cache writes the rows only: the cache's per-tensor scale exists.
TEST(RulesTest, PagedAttentionAppendToFp8CacheWritesRowsOnly) {
  PagedCase p{2, 1, 10, 4, 2, 8};
  p.new_rows = true;
  p.kv_format = "fp8_e4m3";
  const NodeCost c = Only(Paged(p));
  const uint64_t cache = 2u * 10 * 2 * 8 + 4;  // fp8 elements + one f32 scale
  const uint64_t row = 2u * 2 * 8;              // n · kv_heads · d at one byte, no scale
  EXPECT_EQ(c.bytes_state, 2 * cache + 2 * row);
}

TEST(RulesTest, PagedAttentionNeedsQHeads) {
  GraphBuilder b("attn");
  b.Input("q", {1, 64}, "bf16");
  b.State("kc", {1, 4, 1, 64}, "bf16");
  b.Tensor("o", {1, 64}, "bf16");
  b.Node("layers.0.attn", OpKind::kPagedAttention, {"q", "kc"}, {"o"});
  const Ledger l = MustLedger(b.Build());
  EXPECT_FALSE(l.nodes[0].costed);
  EXPECT_EQ(l.Reason(0),
            "node 'layers.0.attn' (PagedAttention): needs attribute 'q_heads', which the model "
            "does not define");
}

// MLA: decode attends in the latent space (absorbed); long prefill expands the latent.
Ledger Mla(int64_t seqs, int64_t t, int64_t ctx) {
  constexpr int64_t kH = 128, kR = 512, kRope = 64, kNope = 128, kV = 128;
  GraphBuilder b("mla");
  b.Input("q", {seqs * t, kH * (kNope + kRope)}, "bf16");
  b.State("latent", {seqs, ctx, 1, kR + kRope}, "bf16");
  b.Tensor("o", {seqs * t, kH * kV}, "bf16");
  b.Node("attn", OpKind::kPagedAttention, {"q", "latent"}, {"o"},
         {{"q_heads", kH},
          {"kv_lora_rank", kR},
          {"qk_rope_head_dim", kRope},
          {"qk_nope_head_dim", kNope},
          {"v_head_dim", kV}});
  return MustLedger(b.Build());
}

TEST(RulesTest, MlaDecodePicksAbsorbedPrefillPicksExpanded) {
  constexpr uint64_t H = 128, R = 512, Dr = 64, Dn = 128, Dv = 128;
  {
    const Ledger l = Mla(2, 1, 4096);  // decode: T = 1 after P = 4096
    const NodeCost& c = l.nodes[0];
    const uint64_t pairs = 4096 + 1;
    const uint64_t absorbed = 2 * pairs * 2 * H * ((R + Dr) + R)   // d_qk = R + rope, d_v = R
                              + 2 * 2 * R * H * (Dn + Dv);         // absorbing kv_b into q, o
    const uint64_t expanded = 2 * pairs * 2 * H * ((Dn + Dr) + Dv) +
                              2 * 2 * (1 + 4096) * R * H * (Dn + Dv);
    ASSERT_LT(absorbed, expanded);
    EXPECT_EQ(c.flops, absorbed);
    EXPECT_EQ(c.note, Note::kMlaAbsorbed);
    EXPECT_TRUE(Contains(std::string(NoteText(c.note)), "absorbed"));
    EXPECT_EQ(c.bytes_state, 2u * 4096 * (R + Dr) * 2);  // one shared latent per token
  }
  {
    const Ledger l = Mla(1, 4096, 0);  // prefill of 4096 tokens
    const NodeCost& c = l.nodes[0];
    const uint64_t pairs = 4096u * 4097 / 2;
    const uint64_t absorbed = 2 * pairs * H * ((R + Dr) + R) + 2 * 4096 * R * H * (Dn + Dv);
    const uint64_t expanded =
        2 * pairs * H * ((Dn + Dr) + Dv) + 2 * 1 * 4096 * R * H * (Dn + Dv);
    ASSERT_LT(expanded, absorbed);
    EXPECT_EQ(c.flops, expanded);
    EXPECT_EQ(c.note, Note::kMlaExpanded);
    EXPECT_TRUE(Contains(std::string(NoteText(c.note)), "expanded"));
  }
}

// ---- Recurrences ---------------------------------------------------------------------------

// How a node names the state it updates: the state tensor itself as an output (in place), its
// own output tensor with role `state` (the SSA form of imported graphs), or no output at all.
enum class StateOut { kInPlace, kSeparate, kNotListed };

// The node's outputs for `form`, adding the separate new-state tensor to `b` when needed.
std::vector<std::string> StateOutputs(GraphBuilder& b, StateOut form, const std::string& state,
                                      std::vector<D> shape, const std::string& format,
                                      std::vector<std::string> outs) {
  if (form == StateOut::kInPlace) outs.push_back(state);
  if (form == StateOut::kSeparate) {
    b.State(state + "_new", std::move(shape), format);
    outs.push_back(state + "_new");
  }
  return outs;
}

// Issue 12: the state is read once and written once per step in every form — 2× its bytes,
// never 3× (a separate output counted by the stream and again as the write-back).
TEST(RulesTest, GdnAndMamba2StateReadAndWrittenOnce) {
  struct Case {
    OpKind op;
    int64_t seqs, heads, a, b;  // state [seqs, heads, a, b]
    int64_t x_width;
  };
  // GDN (Qwen3-Next-80B-A3B): 32 value heads, key and value head dims 128.
  // Mamba2 (Mamba-Codestral-7B): 128 heads of head_dim 64, d_state 128.
  for (const Case& k : {Case{OpKind::kGdnRecurrence, 4, 32, 128, 128, 32 * 128},
                        Case{OpKind::kSsmUpdate, 4, 128, 64, 128, 128 * 64}}) {
    for (StateOut form : {StateOut::kInPlace, StateOut::kSeparate, StateOut::kNotListed}) {
      GraphBuilder b("rec");
      b.Input("x", {k.seqs, k.x_width}, "bf16");
      b.State("s", {k.seqs, k.heads, k.a, k.b}, "f32");
      b.Tensor("y", {k.seqs, k.x_width}, "bf16");
      b.Node("rec", k.op, {"x", "s"},
             StateOutputs(b, form, "s", {k.seqs, k.heads, k.a, k.b}, "f32", {"y"}));
      const NodeCost c = Only(MustLedger(b.Build()));
      const auto state = static_cast<uint64_t>(k.seqs * k.heads * k.a * k.b * 4);  // f32
      const auto x = static_cast<uint64_t>(k.seqs * k.x_width * 2);                 // bf16
      const std::string what = std::string(ir::OpName(k.op)) + " form " +
                               std::to_string(static_cast<int>(form));
      EXPECT_EQ(c.bytes_state, 2 * state) << what;         // read once + written once
      EXPECT_EQ(c.bytes_read, state + x) << what;          // the state and x
      EXPECT_EQ(c.bytes_written, state + x) << what;       // the new state and y
      EXPECT_EQ(c.flops, 4u * static_cast<uint64_t>(k.seqs * k.heads * k.a * k.b)) << what;
      // 4·n·(state elements of one sequence), n = seqs decode rows
    }
  }
}

TEST(RulesTest, CausalConv1dReadsAndWritesItsStateOnce) {
  // Qwen3-Next's GDN conv: 3 sequences, conv_dim 8192, kernel 4: state [3, 8192, 3] bf16.
  for (StateOut form : {StateOut::kInPlace, StateOut::kSeparate, StateOut::kNotListed}) {
    GraphBuilder b("conv");
    b.Input("x", {3, 8192}, "bf16");
    b.State("cs", {3, 8192, 3}, "bf16");
    b.Weight("w", {8192, 4}, "bf16");
    b.Tensor("y", {3, 8192}, "bf16");
    b.Node("conv", OpKind::kCausalConv1d, {"x", "cs", "w"},
           StateOutputs(b, form, "cs", {3, 8192, 3}, "bf16", {"y"}), {{"kernel", int64_t{4}}});
    const NodeCost c = Only(MustLedger(b.Build()));
    const std::string what = "form " + std::to_string(static_cast<int>(form));
    EXPECT_EQ(c.flops, 2u * 3 * 8192 * 4) << what;                  // 2·n·channels·kernel
    EXPECT_EQ(c.bytes_state, 2u * (3 * 8192 * 3 * 2)) << what;      // read + written once
    EXPECT_EQ(c.bytes_read, 3u * 8192 * 2 + 3 * 8192 * 3 * 2 + 8192 * 4 * 2) << what;  // x, state, w
    EXPECT_EQ(c.bytes_written, 3u * 8192 * 2 + 3 * 8192 * 3 * 2) << what;              // y, state
    EXPECT_EQ(c.bytes_weights, 8192u * 4 * 2) << what;
  }
}

// KV append: the caches are read whole; what is written is the new rows, at the cache's
// format, once — also when the graph lists new cache tensors (role state) as outputs.
TEST(RulesTest, PagedAttentionAppendsItsNewRowsOnce) {
  // 2 sequences, 1 new token each, after 100 cached; 4 KV heads of 64, 8 query heads, bf16.
  for (bool cache_outputs : {false, true}) {
    GraphBuilder b("attn");
    b.Input("q", {2, 8 * 64}, "bf16");
    b.State("kc", {2, 100, 4, 64}, "bf16");
    b.State("vc", {2, 100, 4, 64}, "bf16");
    b.Input("k", {2, 4 * 64}, "bf16");
    b.Input("v", {2, 4 * 64}, "bf16");
    b.Tensor("o", {2, 8 * 64}, "bf16");
    std::vector<std::string> outs{"o"};
    if (cache_outputs) {
      b.State("kc_new", {2, 101, 4, 64}, "bf16");
      b.State("vc_new", {2, 101, 4, 64}, "bf16");
      outs.insert(outs.end(), {"kc_new", "vc_new"});
    }
    b.Node("attn", OpKind::kPagedAttention, {"q", "kc", "vc", "k", "v"}, outs,
           {{"q_heads", int64_t{8}}, {"head_dim", int64_t{64}}});
    const NodeCost c = Only(MustLedger(b.Build()));
    const uint64_t caches = 2 * (2u * 100 * 4 * 64 * 2);  // K and V caches read
    const uint64_t rows = 2 * (2u * 4 * 64 * 2);          // the new K and V rows appended
    EXPECT_EQ(c.bytes_state, caches + rows) << cache_outputs;
    EXPECT_EQ(c.bytes_written, 2u * 8 * 64 * 2 + rows) << cache_outputs;  // o + the rows
  }
}

// ---- Attention over activations ------------------------------------------------------------

TEST(RulesTest, SdpaAttention) {
  {
    GraphBuilder b("sdpa");
    b.Input("q", {2, 8, 16, 64}, "f16");
    b.Input("k", {2, 8, 32, 64}, "f16");
    b.Input("v", {2, 8, 32, 48}, "f16");
    b.Tensor("o", {2, 8, 16, 48}, "f16");
    b.Node("attn", OpKind::kAttention, {"q", "k", "v"}, {"o"});
    const NodeCost c = Only(MustLedger(b.Build()));
    EXPECT_EQ(c.flops, 2u * 2 * 8 * (16 * 32) * (64 + 48));  // 2·B·H·Tq·Tk·(dqk+dv)
    EXPECT_EQ(c.bytes(), (2u * 8 * 16 * 64 + 2 * 8 * 32 * 64 + 2 * 8 * 32 * 48 +
                          2 * 8 * 16 * 48) * 2);
    EXPECT_EQ(c.mma_class, MmaClass::kFp16);
  }
  {
    // Causal self-attention over S = 16: S(S+1)/2 pairs.
    GraphBuilder b("sdpa");
    b.Input("q", {1, 4, 16, 32}, "bf16");
    b.Input("k", {1, 4, 16, 32}, "bf16");
    b.Input("v", {1, 4, 16, 32}, "bf16");
    b.Tensor("o", {1, 4, 16, 32}, "bf16");
    b.Node("attn", OpKind::kAttention, {"q", "k", "v"}, {"o"}, {{"causal", int64_t{1}}});
    EXPECT_EQ(Only(MustLedger(b.Build())).flops, 2u * 1 * 4 * (16 * 17 / 2) * (32 + 32));
  }
  {
    // [B, S, H·D] with q_heads = 8, kv_heads = 2 (GQA).
    GraphBuilder b("sdpa");
    b.Input("q", {1, 10, 8 * 16}, "bf16");
    b.Input("k", {1, 12, 2 * 16}, "bf16");
    b.Input("v", {1, 12, 2 * 16}, "bf16");
    b.Tensor("o", {1, 10, 8 * 16}, "bf16");
    b.Node("attn", OpKind::kAttention, {"q", "k", "v"}, {"o"},
           {{"q_heads", int64_t{8}}, {"kv_heads", int64_t{2}}});
    EXPECT_EQ(Only(MustLedger(b.Build())).flops, 2u * 1 * 8 * (10 * 12) * (16 + 16));
  }
}

// ---- Convolutions, einsum, pooling -----------------------------------------------------------

TEST(RulesTest, ConvAndConvTranspose) {
  {
    GraphBuilder b("conv");
    b.Input("x", {1, 3, 32, 32});
    b.Weight("w", {16, 3, 3, 3});
    b.Tensor("y", {1, 16, 30, 30});
    b.Node("conv", OpKind::kConv, {"x", "w"}, {"y"});
    const NodeCost c = Only(MustLedger(b.Build()));
    EXPECT_EQ(c.flops, 2u * (16 * 30 * 30) * 3 * (3 * 3));  // 2·out elems·C_in·kernel
    EXPECT_EQ(c.bytes_read, (3u * 32 * 32 + 16 * 3 * 3 * 3) * 4);
    EXPECT_EQ(c.bytes_weights, 16u * 3 * 3 * 3 * 4);
  }
  {
    // Grouped: 8 channels in 4 groups, W[C_out, C_in/groups, 3, 3].
    GraphBuilder b("conv");
    b.Input("x", {2, 8, 10, 10});
    b.Weight("w", {8, 2, 3, 3});
    b.Weight("bias", {8});
    b.Tensor("y", {2, 8, 8, 8});
    b.Node("conv", OpKind::kConv, {"x", "w", "bias"}, {"y"}, {{"group", int64_t{4}}});
    const NodeCost c = Only(MustLedger(b.Build()));
    EXPECT_EQ(c.flops, 2u * (2 * 8 * 8 * 8) * 2 * (3 * 3));  // bias adds ignored
    EXPECT_EQ(c.bytes_weights, (8u * 2 * 3 * 3 + 8) * 4);   // the bias is still read
  }
  {
    // ConvTranspose: W[C_in, C_out/groups, k...]; 2·input elems·C_out/groups·kernel.
    GraphBuilder b("deconv");
    b.Input("x", {1, 16, 8, 8});
    b.Weight("w", {16, 8, 4, 4});
    b.Tensor("y", {1, 8, 18, 18});
    b.Node("deconv", OpKind::kConvTranspose, {"x", "w"}, {"y"});
    EXPECT_EQ(Only(MustLedger(b.Build())).flops, 2u * (16 * 8 * 8) * 8 * (4 * 4));
  }
  {
    // 1-D conv.
    GraphBuilder b("conv1d");
    b.Input("x", {1, 4, 100});
    b.Weight("w", {6, 4, 5});
    b.Tensor("y", {1, 6, 96});
    b.Node("conv", OpKind::kConv, {"x", "w"}, {"y"});
    EXPECT_EQ(Only(MustLedger(b.Build())).flops, 2u * (6 * 96) * 4 * 5);
  }
}

TEST(RulesTest, Einsum) {
  {
    GraphBuilder b("e");
    b.Input("a", {2, 3, 4});
    b.Input("c", {2, 4, 5});
    b.Tensor("y", {2, 3, 5});
    b.Node("bmm", OpKind::kEinsum, {"a", "c"}, {"y"}, {{"equation", std::string("bij,bjk->bik")}});
    const NodeCost n = Only(MustLedger(b.Build()));
    EXPECT_EQ(n.flops, 2u * 2 * 3 * 4 * 5);  // 2·b·i·j·k
    EXPECT_TRUE(n.flop_model);
  }
  {
    // Outer product: no contracted index, still one multiply-add slot per (i, j).
    GraphBuilder b("e");
    b.Input("a", {7});
    b.Input("c", {9});
    b.Tensor("y", {7, 9});
    b.Node("outer", OpKind::kEinsum, {"a", "c"}, {"y"}, {{"equation", std::string("i,j->ij")}});
    EXPECT_EQ(Only(MustLedger(b.Build())).flops, 2u * 7 * 9);
  }
  {
    GraphBuilder b("e");
    b.Input("a", {2, 3});
    b.Input("c", {2, 3});
    b.Input("d", {3, 4});
    b.Tensor("y", {2, 4});
    b.Node("three", OpKind::kEinsum, {"a", "c", "d"}, {"y"},
           {{"equation", std::string("ij,ij,jk->ik")}});
    const NodeCost n = Only(MustLedger(b.Build()));
    EXPECT_TRUE(n.costed);
    EXPECT_FALSE(n.flop_model);  // listed as "no FLOP model", never guessed
    EXPECT_EQ(n.flops, 0u);
    EXPECT_EQ(n.bytes(), (6u + 6 + 12 + 8) * 4);
  }
  {
    GraphBuilder b("e");
    b.Input("a", {2, 3});
    b.Tensor("y", {3, 2});
    b.Node("noeq", OpKind::kEinsum, {"a"}, {"y"});
    const Ledger l = MustLedger(b.Build());
    EXPECT_FALSE(l.nodes[0].costed);
    EXPECT_TRUE(Contains(std::string(l.Reason(0)), "'equation'")) << l.Reason(0);
  }
}

TEST(RulesTest, Pooling) {
  GraphBuilder b("pool");
  b.Input("x", {1, 4, 8, 8});
  b.Tensor("y", {1, 4, 4, 4});
  b.Tensor("z", {1, 4, 4, 4});
  b.Tensor("g", {1, 4, 1, 1});
  b.Tensor("h", {1, 4, 4, 4});
  b.Node("max", OpKind::kMaxPool, {"x"}, {"y"}, {{"kernel_shape", std::vector<int64_t>{2, 2}}});
  b.Node("avg", OpKind::kAveragePool, {"x"}, {"z"},
         {{"kernel_shape", std::vector<int64_t>{3, 3}}});
  b.Node("gap", OpKind::kGlobalAveragePool, {"x"}, {"g"});
  b.Node("nokernel", OpKind::kMaxPool, {"x"}, {"h"});
  const Ledger l = MustLedger(b.Build());
  EXPECT_EQ(l.nodes[0].flops, (4u * 4 * 4) * (2 * 2));  // out elems · kernel elems
  EXPECT_EQ(l.nodes[0].bytes(), (4u * 8 * 8 + 4 * 4 * 4) * 4);
  EXPECT_EQ(l.nodes[1].flops, (4u * 4 * 4) * (3 * 3));
  EXPECT_EQ(l.nodes[2].flops, 4u * 8 * 8);  // one per input element
  EXPECT_FALSE(l.nodes[3].costed);
  EXPECT_TRUE(Contains(std::string(l.Reason(3)), "'kernel_shape'"));
}

// ---- Per-element families ----------------------------------------------------------------

TEST(RulesTest, NormsSoftmaxElementwiseReductions) {
  GraphBuilder b("g");
  b.Input("x", {6, 32});
  b.Weight("gamma", {32});
  b.Tensor("rms", {6, 32});
  b.Tensor("ln", {6, 32});
  b.Tensor("sm", {6, 32});
  b.Tensor("bn", {6, 32});
  b.Tensor("gn", {6, 32});
  b.Tensor("add", {6, 32});
  b.Tensor("sq", {6, 32});
  b.Tensor("sum", {6});
  b.Input("gu", {6, 64}, "bf16");
  b.Tensor("act", {6, 32}, "bf16");
  b.Tensor("rope", {6, 32});
  b.Node("rms", OpKind::kRMSNorm, {"x", "gamma"}, {"rms"});
  b.Node("ln", OpKind::kLayerNorm, {"x", "gamma"}, {"ln"});
  b.Node("sm", OpKind::kSoftmax, {"x"}, {"sm"});
  b.Node("bn", OpKind::kBatchNorm, {"x"}, {"bn"});
  b.Node("gn", OpKind::kGroupNorm, {"x"}, {"gn"});
  b.Node("add", OpKind::kAdd, {"x", "rms"}, {"add"});
  b.Node("sq", OpKind::kMul, {"x", "x"}, {"sq"});  // x read once
  b.Node("sum", OpKind::kReduceSum, {"x"}, {"sum"});
  b.Node("swiglu", OpKind::kSiluMul, {"gu"}, {"act"});
  b.Node("rope", OpKind::kRoPE, {"x"}, {"rope"});
  const Ledger l = MustLedger(b.Build());
  const uint64_t e = 6 * 32, bytes = e * 4;
  EXPECT_EQ(l.nodes[0].flops, 3 * e);  // RMSNorm: 3 per input element
  EXPECT_EQ(l.nodes[0].bytes(), bytes + 32 * 4 + bytes);
  EXPECT_EQ(l.nodes[0].bytes_weights, 32u * 4);
  EXPECT_EQ(l.nodes[1].flops, 3 * e);  // LayerNorm
  EXPECT_EQ(l.nodes[2].flops, 3 * e);  // Softmax
  EXPECT_EQ(l.nodes[3].flops, 2 * e);  // BatchNorm (inference): scale and shift
  EXPECT_EQ(l.nodes[4].flops, 3 * e);  // GroupNorm
  EXPECT_EQ(l.nodes[5].flops, e);      // elementwise: 1 per output element
  EXPECT_EQ(l.nodes[5].bytes(), 3 * bytes);
  EXPECT_EQ(l.nodes[6].bytes(), 2 * bytes);  // x·x reads x once
  EXPECT_EQ(l.nodes[6].flops, e);
  EXPECT_EQ(l.nodes[7].flops, e);      // reduction: 1 per input element
  EXPECT_EQ(l.nodes[7].bytes(), bytes + 6 * 4);
  EXPECT_EQ(l.nodes[8].flops, 6u * 32);  // SiluMul: reads [rows, 2d], writes [rows, d]
  EXPECT_EQ(l.nodes[8].bytes(), (6u * 64 + 6 * 32) * 2);
  EXPECT_EQ(l.nodes[9].flops, 3 * e);  // RoPE: 3 per output element
  for (const NodeCost& c : l.nodes) EXPECT_EQ(c.mma_class, MmaClass::kNone);
}

// ---- Data movement --------------------------------------------------------------------------

TEST(RulesTest, ViewsAreFree) {
  GraphBuilder b("views");
  b.Input("x", {4, 8, 16});
  b.Tensor("r", {32, 16});
  b.Tensor("f", {512});
  b.Tensor("s", {4, 8, 16, 1});
  b.Tensor("u", {4, 8, 16});
  b.Tensor("i", {4, 8, 16});
  b.Tensor("shape", {3}, "int64");
  b.Node("reshape", OpKind::kReshape, {"x"}, {"r"});
  b.Node("flatten", OpKind::kFlatten, {"r"}, {"f"});
  b.Node("unsqueeze", OpKind::kUnsqueeze, {"x"}, {"s"});
  b.Node("squeeze", OpKind::kSqueeze, {"s"}, {"u"});
  b.Node("identity", OpKind::kIdentity, {"u"}, {"i"});
  b.Node("shape", OpKind::kShape, {"x"}, {"shape"});
  const Ledger l = MustLedger(b.Build());
  for (const NodeCost& c : l.nodes) {
    EXPECT_TRUE(c.costed);
    EXPECT_EQ(c.bytes(), 0u);
    EXPECT_EQ(c.flops, 0u);
  }
}

TEST(RulesTest, ContiguousSplitIsFreeOtherSplitsAndCopiesMoveBytes) {
  GraphBuilder b("split");
  b.Input("x", {4, 64}, "bf16");
  b.Tensor("a", {4, 32}, "bf16");
  b.Tensor("c", {4, 32}, "bf16");
  b.Tensor("a2", {4, 32}, "bf16");
  b.Tensor("c2", {4, 32}, "bf16");
  b.Tensor("t", {64, 4}, "bf16");
  b.Tensor("cat", {8, 64}, "bf16");
  b.Tensor("cast", {4, 64}, "f32");
  b.Node("split_view", OpKind::kSplit, {"x"}, {"a", "c"},
         {{"layout", std::string("contiguous")}});
  b.Node("split_copy", OpKind::kSplit, {"x"}, {"a2", "c2"});
  b.Node("transpose", OpKind::kTranspose, {"x"}, {"t"});
  b.Node("concat", OpKind::kConcat, {"x", "x"}, {"cat"});
  b.Node("cast", OpKind::kCast, {"x"}, {"cast"});
  const Ledger l = MustLedger(b.Build());
  const uint64_t x = 4 * 64 * 2;
  EXPECT_EQ(l.nodes[0].bytes(), 0u);
  EXPECT_TRUE(l.nodes[0].costed);
  EXPECT_EQ(l.nodes[1].bytes(), x + x);        // read once, both halves written
  EXPECT_EQ(l.nodes[2].bytes(), x + x);
  EXPECT_EQ(l.nodes[3].bytes(), x + 2 * x);    // x read once though listed twice
  EXPECT_EQ(l.nodes[4].bytes(), x + 4 * 64 * 4);
  for (const NodeCost& c : l.nodes) EXPECT_EQ(c.flops, 0u);  // copies: 0 FLOPs is exact
  for (const NodeCost& c : l.nodes) EXPECT_TRUE(c.flop_model);
}

// Embedding reads only the gathered rows of the table; the table's size does not matter.
TEST(RulesTest, EmbeddingReadsOnlyGatheredRows) {
  for (const char* fmt : {"bf16", "q4_0", "fp8_e4m3_b128x128"}) {
    for (int64_t vocab : {1000, 152064}) {
      GraphBuilder b("emb");
      b.Weight("table", {vocab, 4096}, fmt);
      b.Input("ids", {7}, "int32");
      b.Tensor("h", {7, 4096}, "bf16");
      b.Node("embed", OpKind::kEmbedding, {"table", "ids"}, {"h"});
      const Ledger l = MustLedger(b.Build());
      const NodeCost& c = l.nodes[0];
      const uint64_t row = std::string(fmt) == "bf16"  ? 4096u * 2
                           : std::string(fmt) == "q4_0" ? 4096u / 32 * 18
                                                        : 4096u + 4 * (4096 / 128);
      EXPECT_EQ(c.bytes_weights, 7 * row) << fmt;
      EXPECT_EQ(c.bytes_read, 7 * row + 7 * 4) << fmt;       // rows + ids
      EXPECT_EQ(c.bytes_written, 7u * 4096 * 2) << fmt;
      EXPECT_EQ(c.flops, 0u);
      EXPECT_EQ(l.essential_weight_bytes, 7 * row) << fmt;   // the floor reads the rows too
    }
  }
}

TEST(RulesTest, GatherReadsOnlyGatheredElements) {
  GraphBuilder b("gather");
  b.Weight("data", {100, 64});
  b.Input("idx", {5}, "int64");
  b.Tensor("out", {5, 64});
  b.Node("gather", OpKind::kGather, {"data", "idx"}, {"out"});
  const NodeCost c = Only(MustLedger(b.Build()));
  EXPECT_EQ(c.bytes_read, 5u * 64 * 4 + 5 * 8);
  EXPECT_EQ(c.bytes_weights, 5u * 64 * 4);
  EXPECT_EQ(c.bytes_written, 5u * 64 * 4);
}

// ---- Not costed ------------------------------------------------------------------------------

TEST(RulesTest, UnknownControlFlowCollectivesAndNoFlopModel) {
  GraphBuilder b("g");
  b.Input("x", {4, 8});
  b.Tensor("u", {4, 8});
  b.Tensor("l", {4, 8});
  b.Tensor("ar", {4, 8});
  b.Tensor("tk", {4, 2});
  b.Tensor("rs", {8, 16});
  b.Node("custom", OpKind::kUnknown, {"x"}, {"u"});
  b.LastNode().source_op = "com.example.FancyOp";
  b.Node("loop", OpKind::kLoop, {"x"}, {"l"});
  b.Node("allreduce", OpKind::kAllReduce, {"x"}, {"ar"});
  b.Node("topk", OpKind::kTopK, {"x"}, {"tk"});
  b.Node("resize", OpKind::kResize, {"x"}, {"rs"});
  const Ledger l = MustLedger(b.Build());
  EXPECT_FALSE(l.nodes[0].costed);
  EXPECT_EQ(l.Reason(0), "unknown op 'com.example.FancyOp': no cost rule");
  EXPECT_FALSE(l.nodes[1].costed);
  EXPECT_TRUE(Contains(std::string(l.Reason(1)), "'Loop'")) << l.Reason(1);
  EXPECT_FALSE(l.nodes[2].costed);
  EXPECT_TRUE(Contains(std::string(l.Reason(2)), "'AllReduce'")) << l.Reason(2);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(l.nodes[i].bytes(), 0u);
    EXPECT_EQ(l.nodes[i].flops, 0u);
  }
  // No FLOP model: bytes counted, FLOPs 0 and flagged.
  EXPECT_TRUE(l.nodes[3].costed);
  EXPECT_FALSE(l.nodes[3].flop_model);
  EXPECT_EQ(l.nodes[3].bytes(), (4u * 8 + 4 * 2) * 4);
  EXPECT_FALSE(l.nodes[4].flop_model);
  EXPECT_EQ(l.nodes[4].flops, 0u);
}

// ---- Repeats and twins ---------------------------------------------------------------------

TEST(LedgerTest, RepeatMultipliesAndTwinsCopy) {
  GraphBuilder b("g");
  b.Input("x", {4, 64});
  b.Weight("w", {64, 64});
  b.Tensor("y", {4, 64});
  b.Tensor("z", {4, 64});
  b.Node("mm1", OpKind::kMatMul, {"x", "w"}, {"y"});
  b.Node("mm2", OpKind::kMatMul, {"y", "w"}, {"z"});
  b.LastNode().repeat = 3;
  const Ledger l = MustLedger(b.Build());
  EXPECT_EQ(l.nodes[1].flops, 3 * l.nodes[0].flops);
  EXPECT_EQ(l.nodes[1].bytes(), 3 * l.nodes[0].bytes());
  EXPECT_EQ(l.essential_weight_bytes, 64u * 64 * 4);  // the weight counts once

  GraphBuilder t("twins");
  t.Input("x", {4, 64});
  t.Weight("w1", {64, 64});
  t.Weight("w2", {64, 64});
  t.Tensor("y", {4, 64});
  t.Tensor("z", {4, 64});
  t.Node("l1", OpKind::kMatMul, {"x", "w1"}, {"y"});
  t.Node("l2", OpKind::kMatMul, {"y", "w2"}, {"z"});
  t.LastNode().cost_twin = 0;
  const Ledger lt = MustLedger(t.Build());
  EXPECT_EQ(lt.nodes[1].flops, lt.nodes[0].flops);
  EXPECT_EQ(lt.nodes[1].bytes(), lt.nodes[0].bytes());
  EXPECT_EQ(lt.essential_weight_bytes, 2u * 64 * 64 * 4);  // both weights
}

// ---- Properties ----------------------------------------------------------------------------

// A small MLP whose FLOPs must not depend on any format.
ir::Graph Mlp(const std::string& act, const std::string& weight) {
  GraphBuilder b("mlp");
  b.Input("x", {8, 512}, act);
  b.Weight("w_up", {1024, 512}, weight);
  b.Weight("w_down", {512, 512}, weight);
  b.Weight("gamma", {512}, "f32");
  b.Tensor("n", {8, 512}, act);
  b.Tensor("u", {8, 1024}, act);
  b.Tensor("a", {8, 512}, act);
  b.Tensor("d", {8, 512}, act);
  b.Tensor("y", {8, 512}, act);
  b.Node("norm", OpKind::kRMSNorm, {"x", "gamma"}, {"n"});
  b.Node("up", OpKind::kLinear, {"n", "w_up"}, {"u"});
  b.Node("act", OpKind::kSiluMul, {"u"}, {"a"});
  b.Node("down", OpKind::kLinear, {"a", "w_down"}, {"d"});
  b.Node("res", OpKind::kAdd, {"x", "d"}, {"y"});
  return b.Build();
}

TEST(LedgerPropertyTest, FlopsDoNotDependOnFormat) {
  const Ledger ref = MustLedger(Mlp("f32", "f32"));
  for (const char* act : {"f32", "bf16", "f16", "fp8_e4m3", "nvfp4", "mxfp8"}) {
    for (const format::FormatInfo& w : format::kFormats) {
      if (w.kind == format::Kind::kInt && w.bits > 8) continue;  // not a weight format
      const Ledger l = MustLedger(Mlp(act, std::string(w.name)));
      for (size_t i = 0; i < l.nodes.size(); ++i) {
        EXPECT_EQ(l.nodes[i].flops, ref.nodes[i].flops) << act << " x " << w.name << " node " << i;
      }
    }
  }
}

TEST(LedgerPropertyTest, WeightAndStateBytesArePartsOfTheTraffic) {
  for (const char* fmt : {"bf16", "q4_0", "nvfp4", "fp8_e4m3_b128x128"}) {
    const Ledger l = MustLedger(Mlp("bf16", fmt));
    for (const NodeCost& c : l.nodes) {
      EXPECT_LE(c.bytes_weights, c.bytes_read);
      EXPECT_LE(c.bytes_state, c.bytes());
    }
  }
}

// Reordering independent nodes leaves every node's cost and the essential traffic unchanged.
TEST(LedgerPropertyTest, ReorderingIndependentNodesLeavesTotalsUnchanged) {
  auto build = [](bool swapped) {
    GraphBuilder b("par");
    b.Input("x", {16, 256}, "bf16");
    b.Weight("wa", {128, 256}, "bf16");
    b.Weight("wb", {64, 256}, "q4_0");
    b.Tensor("a", {16, 128}, "bf16");
    b.Tensor("c", {16, 64}, "bf16");
    b.Tensor("s", {16, 256}, "bf16");
    auto first = [&] { b.Node("a", OpKind::kLinear, {"x", "wa"}, {"a"}); };
    auto second = [&] { b.Node("c", OpKind::kLinear, {"x", "wb"}, {"c"}); };
    auto third = [&] { b.Node("s", OpKind::kSoftmax, {"x"}, {"s"}); };
    if (swapped) {
      third();
      second();
      first();
    } else {
      first();
      second();
      third();
    }
    return MustLedger(b.Build());
  };
  const Ledger a = build(false), b = build(true);
  uint64_t bytes_a = 0, bytes_b = 0, flops_a = 0, flops_b = 0;
  for (const NodeCost& c : a.nodes) bytes_a += c.bytes(), flops_a += c.flops;
  for (const NodeCost& c : b.nodes) bytes_b += c.bytes(), flops_b += c.flops;
  EXPECT_EQ(bytes_a, bytes_b);
  EXPECT_EQ(flops_a, flops_b);
  EXPECT_EQ(a.essential_bytes(), b.essential_bytes());
  EXPECT_EQ(a.nodes[0].flops, b.nodes[2].flops);
}

// The fused floor's essential traffic: graph inputs at what must be read of them (a gather
// reads only its rows), views passing graph inputs on to the node that reads them.
TEST(LedgerTest, EssentialInputsAndViews) {
  {
    GraphBuilder b("gather");
    b.Input("table", {100000, 1024}, "bf16");
    b.Input("ids", {4}, "int32");
    b.Tensor("h", {4, 1024}, "bf16");
    b.Node("gather", OpKind::kGather, {"table", "ids"}, {"h"});
    const Ledger l = MustLedger(b.Build());
    EXPECT_EQ(l.essential_io_bytes, 4u * 1024 * 2 + 4 * 4 + 4 * 1024 * 2);  // rows, ids, h
    EXPECT_EQ(l.essential_io_bytes, l.nodes[0].bytes());
  }
  {
    GraphBuilder b("view_then_op");
    b.Input("x", {64, 1024});
    b.Tensor("r", {65536});
    b.Tensor("y", {65536});
    b.Node("reshape", OpKind::kReshape, {"x"}, {"r"});
    b.Node("relu", OpKind::kRelu, {"r"}, {"y"});
    const Ledger l = MustLedger(b.Build());
    EXPECT_EQ(l.essential_io_bytes, 2u * 65536 * 4);  // x (read through its view) and y
  }
  {
    GraphBuilder b("only_view");
    b.Input("x", {64, 1024});
    b.Output("y", {65536});
    b.Node("reshape", OpKind::kReshape, {"x"}, {"y"});
    EXPECT_EQ(MustLedger(b.Build()).essential_bytes(), 0u);  // nothing must move
  }
}

// Every op kind name parses back to its kind; names outside the list do not.
TEST(RulesTest, OpKindTableRoundTrips) {
  for (int i = 0; i < ir::kNumOpKinds; ++i) {
    const auto k = static_cast<OpKind>(i);
    EXPECT_EQ(ir::ParseOpKind(ir::OpName(k)), k);
  }
  EXPECT_FALSE(ir::ParseOpKind("matmul").has_value());
  EXPECT_FALSE(ir::ParseOpKind("LogSoftmax").has_value());  // importers map it onto Softmax
}

// Resolved dims live in blocks sized for rank 4 per tensor; tensors of higher rank spill into
// further blocks and still resolve exactly.
TEST(LedgerSeedTest, HighRankTensorsResolveExactly) {
  GraphBuilder b("rank12");
  const std::vector<testing::D> shape(12, testing::D(2));  // 2^12 = 4096 elements
  b.Input("x", shape);
  b.Tensor("y", shape);
  b.Tensor("z", shape);
  b.Node("neg", OpKind::kNeg, {"x"}, {"y"});
  b.Node("abs", OpKind::kAbs, {"y"}, {"z"});
  const Ledger l = MustLedger(b.Build());
  for (const NodeCost& c : l.nodes) {
    EXPECT_EQ(c.bytes_read, 4096u * 4);
    EXPECT_EQ(c.bytes_written, 4096u * 4);
    EXPECT_EQ(c.flops, 4096u);  // one per output element
  }
  EXPECT_EQ(l.essential_io_bytes, 4096u * 4 * 2);  // x read once, z written once
}

// A node with more inputs than NodeCost::floor_input can name: every graph input still counts
// its full size in the fused floor (input 255 is not mistaken for "no floor input").
TEST(LedgerSeedTest, ManyInputsEachCountOnceInTheFloor) {
  GraphBuilder b("concat");
  std::vector<std::string> inputs;
  for (int i = 0; i < 300; ++i) {
    inputs.push_back("x" + std::to_string(i));
    b.Input(inputs.back(), {1, 4});
  }
  b.Tensor("y", {300, 4});
  b.Node("cat", OpKind::kConcat, inputs, {"y"});
  const Ledger l = MustLedger(b.Build());
  EXPECT_EQ(l.nodes[0].bytes_read, 300u * 4 * 4);
  EXPECT_EQ(l.essential_io_bytes, 300u * 4 * 4 + 300u * 4 * 4);  // inputs read, y written
}

}  // namespace
}  // namespace opscope::cost
