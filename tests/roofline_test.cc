// The roofline: per-node time = max(bytes / bandwidth, FLOPs / peak of its class), the MMA
// class's peak choice, bounds on every built-in device, totals that are sums of nodes, the
// fused floor (never above the per-op sum; exactly essential bytes / bandwidth for a decode
// chain of GEMVs), ridge points, and monotonicity in bandwidth.
#include "roofline/roofline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "testing/graph_builder.h"

namespace opscope::roofline {
namespace {

using format::MmaClass;
using ir::OpKind;
using testing::GraphBuilder;
using testing::MustLedger;

// A device with round figures: 1 TB/s, every class present.
device::Device TestDevice(double bw = 1e12) {
  device::Device d;
  d.name = "test-device";
  d.memory_bytes = 1e11;
  d.dram_bytes_per_s = bw;
  auto set = [&](MmaClass c, double v) { d.peak_flops_per_s[static_cast<int>(c)] = v; };
  set(MmaClass::kFp64, 1e12);
  set(MmaClass::kFp32, 1e13);   // vector
  set(MmaClass::kTf32, 5e13);
  set(MmaClass::kBf16, 1e14);
  set(MmaClass::kFp16, 1e14);
  set(MmaClass::kFp8, 2e14);
  set(MmaClass::kInt8, 2e14);
  set(MmaClass::kFp4, 4e14);
  d.source = "test";
  return d;
}

struct Analyzed {
  ir::Graph graph;
  cost::Ledger ledger;
  Analysis analysis;
};

Analyzed Analyze(ir::Graph g, const device::Device& d, cost::Workload w = {}) {
  Analyzed r{std::move(g), {}, {}};
  r.ledger = MustLedger(r.graph, w);
  auto a = Estimate(r.graph, r.ledger, d);
  EXPECT_TRUE(a.has_value()) << (a ? "" : a.error().message);
  if (a) r.analysis = std::move(*a);
  return r;
}

ir::Graph Gemm(int64_t m, int64_t k, int64_t n, const std::string& act = "bf16",
               const std::string& weight = "bf16") {
  GraphBuilder b("gemm");
  b.Input("x", {m, k}, act);
  b.Weight("w", {n, k}, weight);
  b.Tensor("y", {m, n}, act);
  b.Node("lin", OpKind::kLinear, {"x", "w"}, {"y"});
  return b.Build();
}

TEST(RooflineTest, NodeTimeIsMaxOfMemoryAndCompute) {
  const device::Device d = TestDevice();
  {
    // GEMV: 2·4096·4096 FLOPs, (4096 + 4096² + 4096)·2 bytes.
    const Analyzed r = Analyze(Gemm(1, 4096, 4096), d);
    const NodeTime& t = r.analysis.nodes[0];
    const double bytes = (4096.0 + 4096.0 * 4096 + 4096) * 2;
    const double flops = 2.0 * 4096 * 4096;
    EXPECT_DOUBLE_EQ(t.memory_s, bytes / 1e12);
    EXPECT_DOUBLE_EQ(t.compute_s, flops / 1e14);  // bf16 peak
    EXPECT_DOUBLE_EQ(t.time_s, std::max(bytes / 1e12, flops / 1e14));
    EXPECT_EQ(t.bound, Bound::kMemory);
  }
  {
    const Analyzed r = Analyze(Gemm(4096, 4096, 4096), d);
    const NodeTime& t = r.analysis.nodes[0];
    const double flops = 2.0 * 4096 * 4096 * 4096;
    EXPECT_DOUBLE_EQ(t.compute_s, flops / 1e14);
    EXPECT_DOUBLE_EQ(t.time_s, flops / 1e14);
    EXPECT_EQ(t.bound, Bound::kCompute);
  }
  {
    // A non-MMA op runs at the vector fp32 peak.
    GraphBuilder b("sm");
    b.Input("x", {64, 1024});
    b.Tensor("y", {64, 1024});
    b.Node("sm", OpKind::kSoftmax, {"x"}, {"y"});
    const Analyzed r = Analyze(b.Build(), d);
    EXPECT_DOUBLE_EQ(r.analysis.nodes[0].compute_s, 3.0 * 64 * 1024 / 1e13);
    EXPECT_DOUBLE_EQ(r.analysis.nodes[0].memory_s, 2.0 * 64 * 1024 * 4 / 1e12);
  }
  {
    // A view: no bytes, no FLOPs, no bound.
    GraphBuilder b("view");
    b.Input("x", {64, 1024});
    b.Tensor("y", {65536});
    b.Tensor("z", {65536});
    b.Node("reshape", OpKind::kReshape, {"x"}, {"y"});
    b.Node("neg", OpKind::kNeg, {"y"}, {"z"});
    const Analyzed r = Analyze(b.Build(), d);
    EXPECT_EQ(r.analysis.nodes[0].time_s, 0.0);
    EXPECT_EQ(r.analysis.nodes[0].bound, Bound::kNone);
  }
}

// The source ledger's check on real devices: a decode GEMV is memory-bound and a 4096-row
// GEMM compute-bound on EVERY built-in device.
TEST(RooflineTest, GemvIsMemoryBoundAndGemmComputeBoundOnEveryDevice) {
  const auto& devices = device::BuiltinDevices();
  ASSERT_FALSE(devices.empty());
  for (const device::Device& d : devices) {
    for (const char* fmt : {"bf16", "f32"}) {
      const MmaClass cls = std::string(fmt) == "bf16" ? MmaClass::kBf16 : MmaClass::kFp32;
      if (!d.Peak(cls)) {
        EXPECT_NE(cls, MmaClass::kBf16) << d.name << " has no bf16 peak";
        continue;
      }
      const Analyzed gemv = Analyze(Gemm(1, 4096, 4096, fmt, fmt), d);
      const Analyzed gemm = Analyze(Gemm(4096, 4096, 4096, fmt, fmt), d);
      EXPECT_EQ(gemv.analysis.nodes[0].bound, Bound::kMemory) << d.name << " " << fmt;
      EXPECT_EQ(gemm.analysis.nodes[0].bound, Bound::kCompute) << d.name << " " << fmt;
      EXPECT_EQ(gemv.analysis.totals.memory_bound_bytes, gemv.ledger.nodes[0].bytes());
      EXPECT_EQ(gemm.analysis.totals.compute_bound_bytes, gemm.ledger.nodes[0].bytes());
    }
  }
}

// DESIGN "MMA class and peaks": FP8 activations run the FP8 peak, NVFP4 the FP4 peak, W4A16
// the activation's bf16 peak, fp8 activation × bf16 weight the bf16 peak.
TEST(RooflineTest, PeakChoiceFollowsTheMmaClass) {
  const device::Device d = TestDevice();
  const double flops = 2.0 * 4096 * 4096 * 4096;
  struct Case {
    const char* act;
    const char* weight;
    double peak;
  } cases[] = {
      {"bf16", "bf16", 1e14},
      {"fp8_e4m3", "fp8_e4m3_b128x128", 2e14},
      {"fp8_e4m3_b128", "fp8_e4m3_b128x128", 2e14},
      {"nvfp4", "nvfp4", 4e14},
      {"mxfp4", "mxfp4", 4e14},
      {"bf16", "int4_g128", 1e14},     // W4A16 at the activation's class
      {"bf16", "q4_0", 1e14},
      {"fp8_e4m3", "bf16", 1e14},      // a wider float weight widens the class
      {"f16", "f16", 1e14},
      {"int8", "int8", 2e14},
      {"f32", "f32", 1e13},
  };
  for (const Case& c : cases) {
    const Analyzed r = Analyze(Gemm(4096, 4096, 4096, c.act, c.weight), d);
    EXPECT_DOUBLE_EQ(r.analysis.nodes[0].compute_s, flops / c.peak) << c.act << " x " << c.weight;
    EXPECT_EQ(r.analysis.nodes[0].bound, Bound::kCompute);
  }
}

TEST(RooflineTest, MissingPeakIsAnErrorForMatrixOpsAndMemoryOnlyForVectorOps) {
  device::Device d = TestDevice();
  d.name = "no-fp4";
  d.peak_flops_per_s[static_cast<int>(MmaClass::kFp4)].reset();
  {
    const ir::Graph g = Gemm(16, 256, 256, "nvfp4", "nvfp4");
    const cost::Ledger l = MustLedger(g);
    auto a = Estimate(g, l, d);
    ASSERT_FALSE(a.has_value());
    EXPECT_EQ(a.error().message, "node 'lin' (Linear) runs at fp4, which device 'no-fp4' has no "
                                 "peak for");
  }
  d.peak_flops_per_s[static_cast<int>(MmaClass::kFp32)].reset();
  d.name = "no-vector";
  {
    GraphBuilder b("sm");
    b.Input("x", {64, 1024});
    b.Tensor("y", {64, 1024});
    b.Node("sm", OpKind::kSoftmax, {"x"}, {"y"});
    const Analyzed r = Analyze(b.Build(), d);
    EXPECT_DOUBLE_EQ(r.analysis.nodes[0].time_s, 2.0 * 64 * 1024 * 4 / 1e12);  // memory only
    EXPECT_EQ(r.analysis.nodes[0].bound, Bound::kMemory);
    ASSERT_EQ(r.analysis.notes.size(), 1u);
    EXPECT_NE(r.analysis.notes[0].find("no-vector"), std::string::npos);
  }
}

TEST(RooflineTest, RidgePointsArePeakOverBandwidth) {
  const device::Device d = TestDevice(2e12);
  const Analyzed r = Analyze(Gemm(1, 64, 64), d);
  ASSERT_EQ(r.analysis.ridges.size(), 8u);  // every class of the test device
  for (const Ridge& ridge : r.analysis.ridges) {
    EXPECT_DOUBLE_EQ(ridge.flops_per_byte, *d.Peak(ridge.mma_class) / 2e12);
  }
  device::Device sparse = TestDevice();
  sparse.peak_flops_per_s[static_cast<int>(MmaClass::kFp4)].reset();
  sparse.peak_flops_per_s[static_cast<int>(MmaClass::kFp64)].reset();
  EXPECT_EQ(Analyze(Gemm(1, 64, 64), sparse).analysis.ridges.size(), 6u);
}

// ---- Totals -------------------------------------------------------------------------------

ir::Graph Block() {
  GraphBuilder b("block");
  b.Input("x", {8, 512}, "bf16");
  b.Weight("gamma", {512}, "bf16");
  b.Weight("w_up", {2048, 512}, "q4_0");
  b.Weight("w_down", {512, 1024}, "bf16");
  b.Input("missing", {"n", 512}, "bf16");
  b.Tensor("h", {8, 512}, "bf16");
  b.Tensor("u", {8, 2048}, "bf16");
  b.Tensor("a", {8, 1024}, "bf16");
  b.Tensor("d", {8, 512}, "bf16");
  b.Tensor("y", {8, 512}, "bf16");
  b.Tensor("r", {4096}, "bf16");
  b.Tensor("m", {"n", 512}, "bf16");
  b.Node("norm", OpKind::kRMSNorm, {"x", "gamma"}, {"h"});
  b.Node("up", OpKind::kLinear, {"h", "w_up"}, {"u"});
  b.Node("act", OpKind::kSiluMul, {"u"}, {"a"});
  b.Node("down", OpKind::kLinear, {"a", "w_down"}, {"d"});
  b.Node("res", OpKind::kAdd, {"x", "d"}, {"y"});
  b.Node("flat", OpKind::kReshape, {"y"}, {"r"});
  b.Node("unbound", OpKind::kNeg, {"missing"}, {"m"});
  return b.Build();
}

TEST(RooflineTest, TotalsAreSumsOfNodes) {
  const Analyzed r = Analyze(Block(), TestDevice());
  const Totals& t = r.analysis.totals;
  uint64_t read = 0, written = 0, weights = 0, state = 0, flops = 0, costed = 0;
  double time_s = 0;
  for (size_t i = 0; i < r.ledger.nodes.size(); ++i) {
    const cost::NodeCost& c = r.ledger.nodes[i];
    read += c.bytes_read;
    written += c.bytes_written;
    weights += c.bytes_weights;
    state += c.bytes_state;
    flops += c.flops;
    costed += c.costed ? 1 : 0;
    time_s += r.analysis.nodes[i].time_s;
  }
  EXPECT_EQ(t.bytes_read, read);
  EXPECT_EQ(t.bytes_written, written);
  EXPECT_EQ(t.bytes_weights, weights);
  EXPECT_EQ(t.bytes_state, state);
  EXPECT_EQ(t.flops, flops);
  EXPECT_DOUBLE_EQ(t.time_s, time_s);
  EXPECT_EQ(t.nodes, 7u);
  EXPECT_EQ(t.nodes_costed, 6u);  // 'unbound' is listed, not guessed
  EXPECT_EQ(costed, 6u);
  EXPECT_EQ(t.memory_bound_bytes + t.compute_bound_bytes, t.bytes());
  EXPECT_DOUBLE_EQ(t.intensity(), static_cast<double>(flops) / static_cast<double>(read + written));
  // The not-costed node has zero time.
  EXPECT_EQ(r.analysis.nodes[6].time_s, 0.0);
}

TEST(RooflineTest, EmptyGraph) {
  ir::Graph g;
  g.name = "empty";
  const Analyzed r = Analyze(g, TestDevice());
  EXPECT_EQ(r.analysis.totals.time_s, 0.0);
  EXPECT_EQ(r.analysis.totals.fused_floor_s, 0.0);
  EXPECT_EQ(r.analysis.totals.nodes, 0u);
  EXPECT_EQ(r.analysis.totals.intensity(), 0.0);
}

// Time never rises as bandwidth rises: per node, in total, and for the floor.
TEST(RooflineTest, TimeNeverRisesAsBandwidthRises) {
  const ir::Graph graphs[] = {Block(), Gemm(1, 4096, 4096), Gemm(512, 1024, 1024)};
  for (const ir::Graph& g : graphs) {
    Analyzed prev = Analyze(g, TestDevice(1e9));
    for (double bw : {1e10, 1e11, 5e11, 1e12, 3.35e12, 8e12, 1e14, 1e16}) {
      Analyzed next = Analyze(g, TestDevice(bw));
      for (size_t i = 0; i < g.nodes.size(); ++i) {
        EXPECT_LE(next.analysis.nodes[i].time_s, prev.analysis.nodes[i].time_s) << bw;
      }
      EXPECT_LE(next.analysis.totals.time_s, prev.analysis.totals.time_s) << bw;
      EXPECT_LE(next.analysis.totals.fused_floor_s, prev.analysis.totals.fused_floor_s) << bw;
      prev = std::move(next);
    }
  }
}

// ---- The fused floor -------------------------------------------------------------------------

// A batch-1 decode-shaped chain of GEMVs: the floor is exactly (weights + input + output) /
// bandwidth, and within 0.1 % of weights / bandwidth.
TEST(FusedFloorTest, DecodeChainOfGemvsIsWeightsOverBandwidth) {
  constexpr int kLayers = 8;
  constexpr uint64_t kHidden = 4096;
  GraphBuilder b("chain");
  b.Input("h0", {1, 4096}, "bf16");
  for (int i = 0; i < kLayers; ++i) {
    const std::string w = "w" + std::to_string(i);
    const std::string in = "h" + std::to_string(i);
    const std::string out = "h" + std::to_string(i + 1);
    b.Weight(w, {4096, 4096}, "bf16");
    b.Tensor(out, {1, 4096}, "bf16");
    b.Node("lin" + std::to_string(i), OpKind::kLinear, {in, w}, {out});
  }
  const ir::Graph g = b.Build();
  const double weights = kLayers * kHidden * kHidden * 2.0;
  const double io = 2.0 * kHidden * 2;  // h0 read, h8 written
  std::vector<device::Device> devices = {TestDevice()};
  for (const device::Device& d : device::BuiltinDevices()) devices.push_back(d);
  for (const device::Device& d : devices) {
    const Analyzed r = Analyze(g, d);
    const Totals& t = r.analysis.totals;
    const double bw = d.dram_bytes_per_s;
    EXPECT_DOUBLE_EQ(t.fused_floor_s, (weights + io) / bw) << d.name;
    EXPECT_NEAR(t.fused_floor_s, weights / bw, 0.001 * weights / bw) << d.name;
    EXPECT_LE(t.fused_floor_s, t.time_s) << d.name;
    EXPECT_EQ(r.ledger.essential_weight_bytes, static_cast<uint64_t>(weights));
    EXPECT_EQ(r.ledger.essential_io_bytes, static_cast<uint64_t>(io));
  }
}

// Routed experts: the floor reads only the minimum, top_k experts, however many tokens route.
TEST(FusedFloorTest, ExpertsAtTheMinimum) {
  GraphBuilder b("moe");
  b.Input("x", {64, 256}, "bf16");
  b.Weight("w", {32, 128, 256}, "bf16");
  b.Tensor("y", {64, 128}, "bf16");
  b.Node("experts", OpKind::kExpertGateUp, {"x", "w"}, {"y"}, {{"top_k", int64_t{4}}});
  const Analyzed r = Analyze(b.Build(), TestDevice());
  EXPECT_EQ(r.ledger.essential_weight_bytes, 4u * 128 * 256 * 2);
  EXPECT_GT(r.ledger.nodes[0].bytes_weights, r.ledger.essential_weight_bytes);
  EXPECT_LE(r.analysis.totals.fused_floor_s, r.analysis.totals.time_s);
}

// The floor charges an MMA node at the faster of its estimate class and its weight's class:
// int4 weights with int8 activations quantized on the fly (int8 peak 2e14 > bf16 1e14).
TEST(FusedFloorTest, FloorUsesTheWeightsFasterClass) {
  const Analyzed r = Analyze(Gemm(4096, 4096, 4096, "bf16", "int4_g128"), TestDevice());
  const double flops = 2.0 * 4096 * 4096 * 4096;
  EXPECT_DOUBLE_EQ(r.analysis.nodes[0].compute_s, flops / 1e14);  // estimate: bf16
  EXPECT_DOUBLE_EQ(r.analysis.totals.floor_mma_s, flops / 2e14);   // floor: int8
  // On a device without int8 the floor stays at bf16.
  device::Device no_int8 = TestDevice();
  no_int8.peak_flops_per_s[static_cast<int>(MmaClass::kInt8)].reset();
  const Analyzed r2 = Analyze(Gemm(4096, 4096, 4096, "bf16", "int4_g128"), no_int8);
  EXPECT_DOUBLE_EQ(r2.analysis.totals.floor_mma_s, flops / 1e14);
}

// Views and gathers of graph inputs: the floor must not charge bytes no op has to move.
TEST(FusedFloorTest, ViewsAndGathersOfGraphInputs) {
  {
    GraphBuilder b("view");
    b.Input("x", {64, 1024});
    b.Output("y", {65536});
    b.Node("reshape", OpKind::kReshape, {"x"}, {"y"});
    const Analyzed r = Analyze(b.Build(), TestDevice());
    EXPECT_EQ(r.analysis.totals.time_s, 0.0);
    EXPECT_LE(r.analysis.totals.fused_floor_s, r.analysis.totals.time_s);
  }
  {
    GraphBuilder b("split");
    b.Input("x", {64, 1024});
    b.Tensor("a", {64, 512});
    b.Tensor("c", {64, 512});
    b.Node("split", OpKind::kSplit, {"x"}, {"a", "c"}, {{"layout", std::string("contiguous")}});
    const Analyzed r = Analyze(b.Build(), TestDevice());
    EXPECT_LE(r.analysis.totals.fused_floor_s, r.analysis.totals.time_s);
  }
  {
    // An embedding table passed as a graph input: only the gathered rows must move.
    GraphBuilder b("gather");
    b.Input("table", {100000, 1024}, "bf16");
    b.Input("ids", {4}, "int32");
    b.Tensor("h", {4, 1024}, "bf16");
    b.Node("gather", OpKind::kGather, {"table", "ids"}, {"h"});
    const Analyzed r = Analyze(b.Build(), TestDevice());
    EXPECT_LE(r.analysis.totals.fused_floor_s, r.analysis.totals.time_s);
  }
}

// Random small graphs: the fused floor is never above the per-op sum.
ir::Graph RandomGraph(std::mt19937_64& rng, int nodes) {
  GraphBuilder b("random");
  struct Act {
    std::string name;
    int64_t rows, d;
    std::string format;
  };
  const char* act_formats[] = {"bf16", "f32", "f16", "fp8_e4m3"};
  const char* weight_formats[] = {"bf16", "f32", "q4_0", "int4_g128", "fp8_e4m3_b128x128",
                                  "nvfp4", "q6_k"};
  const int64_t dims[] = {256, 512};
  auto pick = [&](auto& arr) -> auto& { return arr[rng() % std::size(arr)]; };
  std::vector<Act> acts;
  int count = 0;
  auto fresh = [&] { return "t" + std::to_string(count++); };
  // Graph inputs.
  for (int i = 0; i < 2; ++i) {
    Act a{fresh(), int64_t{1} << (rng() % 5), pick(dims), pick(act_formats)};
    b.Input(a.name, {a.rows, a.d}, a.format);
    acts.push_back(a);
  }
  for (int i = 0; i < nodes; ++i) {
    const Act x = acts[rng() % acts.size()];
    const std::string node = "n" + std::to_string(i);
    switch (rng() % 8) {
      case 0:
      case 1: {  // Linear with a fresh or shared weight
        const int64_t out = pick(dims);
        const std::string w = "w" + std::to_string(out) + "_" + std::to_string(x.d) + "_" +
                              std::to_string(rng() % 2);
        bool exists = false;
        for (const ir::Tensor& t : b.graph().tensors) exists = exists || t.name == w;
        if (!exists) b.Weight(w, {out, x.d}, pick(weight_formats));
        Act y{fresh(), x.rows, out, x.format};
        b.Tensor(y.name, {y.rows, y.d}, y.format);
        b.Node(node, OpKind::kLinear, {x.name, w}, {y.name});
        acts.push_back(y);
        break;
      }
      case 2: {  // Add with a same-shaped tensor (or itself)
        std::string other = x.name;
        for (const Act& a : acts) {
          if (a.rows == x.rows && a.d == x.d && a.format == x.format && rng() % 2) other = a.name;
        }
        Act y{fresh(), x.rows, x.d, x.format};
        b.Tensor(y.name, {y.rows, y.d}, y.format);
        b.Node(node, OpKind::kAdd, {x.name, other}, {y.name});
        acts.push_back(y);
        break;
      }
      case 3: {  // Softmax
        Act y{fresh(), x.rows, x.d, x.format};
        b.Tensor(y.name, {y.rows, y.d}, y.format);
        b.Node(node, OpKind::kSoftmax, {x.name}, {y.name});
        acts.push_back(y);
        break;
      }
      case 4: {  // Reshape (a view)
        Act y{fresh(), x.rows, x.d, x.format};
        b.Tensor(y.name, {y.rows, y.d}, y.format);
        b.Node(node, OpKind::kReshape, {x.name}, {y.name});
        acts.push_back(y);
        break;
      }
      case 5: {  // Contiguous split in two halves
        Act y1{fresh(), x.rows, x.d / 2, x.format};
        Act y2{fresh(), x.rows, x.d / 2, x.format};
        b.Tensor(y1.name, {y1.rows, y1.d}, y1.format);
        b.Tensor(y2.name, {y2.rows, y2.d}, y2.format);
        b.Node(node, OpKind::kSplit, {x.name}, {y1.name, y2.name},
               {{"layout", std::string("contiguous")}});
        if (x.d / 2 >= 256) acts.push_back(y1), acts.push_back(y2);
        break;
      }
      case 6: {  // Embedding from a weight table
        const std::string table = "table" + std::to_string(i);
        const std::string ids = "ids" + std::to_string(i);
        b.Weight(table, {1000, x.d}, pick(weight_formats));
        b.Input(ids, {x.rows}, "int32");
        Act y{fresh(), x.rows, x.d, "bf16"};
        b.Tensor(y.name, {y.rows, y.d}, y.format);
        b.Node(node, OpKind::kEmbedding, {table, ids}, {y.name});
        acts.push_back(y);
        break;
      }
      case 7: {  // Gather rows of a graph input
        const std::string data = "data" + std::to_string(i);
        const std::string ids = "gids" + std::to_string(i);
        b.Input(data, {300, x.d}, x.format);
        b.Input(ids, {x.rows}, "int64");
        Act y{fresh(), x.rows, x.d, x.format};
        b.Tensor(y.name, {y.rows, y.d}, y.format);
        b.Node(node, OpKind::kGather, {data, ids}, {y.name});
        acts.push_back(y);
        break;
      }
    }
  }
  return b.Build();
}

TEST(FusedFloorTest, NeverAboveThePerOpSumOnRandomGraphs) {
  std::mt19937_64 rng(20240601);
  for (int trial = 0; trial < 300; ++trial) {
    const ir::Graph g = RandomGraph(rng, 1 + static_cast<int>(rng() % 10));
    for (double bw : {1e11, 1e12, 1e13}) {
      const Analyzed r = Analyze(g, TestDevice(bw));
      const Totals& t = r.analysis.totals;
      ASSERT_LE(t.fused_floor_s, t.time_s * (1 + 1e-12))
          << "trial " << trial << " bw " << bw << ": floor " << t.fused_floor_s << " > sum "
          << t.time_s << " (essential " << r.ledger.essential_bytes() << " B, moved "
          << t.bytes() << " B)";
    }
  }
}

}  // namespace
}  // namespace opscope::roofline

namespace opscope::roofline {
namespace {

// ---- Collectives in the fused floor -----------------------------------------------------

// One collective of a 1 MiB bf16 message over `group` devices on a device with a 450 GB/s
// link and 2.5 us per step (H100 SXM's figures in data/devices.json).
Analyzed OneCollective(OpKind op, int64_t group, const std::string& scope = "node") {
  GraphBuilder b("collective");
  b.Input("x", {512, 1024}, "bf16");
  b.Output("y", {512, 1024}, "bf16");
  b.Node("c", op, {"x"}, {"y"}, {{"group_size", group}, {"scope", scope}});
  device::Device d = TestDevice();
  d.interconnect_bytes_per_s = 450e9;
  d.interconnect_latency_s = 2.5e-6;
  d.network_bytes_per_s = 50e9;
  d.network_latency_s = 5e-6;
  return Analyze(b.Build(), d);
}

// Issue 14: the floor charges an all-reduce at one-shot / NVLS: the message once over the
// link and one latency step; the estimate keeps the ring.
TEST(FusedFloorTest, AllReduceAtOneShotNvlsAgainstTheRing) {
  const Analyzed r = OneCollective(OpKind::kAllReduce, 8);
  const double x = 512.0 * 1024 * 2;  // bytes of the message
  const Totals& t = r.analysis.totals;
  EXPECT_DOUBLE_EQ(t.comm_s, 2.0 * 7 / 8 * x / 450e9 + 2 * 7 * 2.5e-6);  // ring: 2·(N−1)/N, 2·(N−1)
  EXPECT_DOUBLE_EQ(t.floor_comm_s, x / 450e9 + 2.5e-6);                // x once, one step
  EXPECT_DOUBLE_EQ(r.analysis.nodes[0].time_s, t.comm_s);              // the estimate: the ring
  EXPECT_DOUBLE_EQ(t.fused_floor_s, t.floor_comm_s);  // the link bounds this graph's floor
}

// The floor's collective term never exceeds the ring's, and the floor never the estimate, for
// every collective, group size and link.
TEST(FusedFloorTest, CollectiveTermNeverAboveTheRing) {
  for (OpKind op : {OpKind::kAllReduce, OpKind::kAllGather, OpKind::kReduceScatter,
                    OpKind::kAllToAll, OpKind::kSendRecv}) {
    for (int64_t group : {1, 2, 3, 4, 8, 16, 72}) {
      for (const char* scope : {"node", "network"}) {
        const Analyzed r = OneCollective(op, group, scope);
        const Totals& t = r.analysis.totals;
        const std::string what =
            std::string(ir::OpName(op)) + " over " + std::to_string(group) + " " + scope;
        EXPECT_LE(t.floor_comm_s, t.comm_s) << what;
        EXPECT_LE(t.fused_floor_s, t.time_s) << what;
        if (group > 1) {
          EXPECT_GT(t.floor_comm_s, 0) << what;  // one step at least
        } else {
          EXPECT_EQ(t.comm_s, 0) << what;  // a group of one sends nothing
        }
      }
    }
  }
}

// Below the all-reduce's one-shot term, the other collectives keep their link bytes and pay
// one step: an all-gather of N parts, each 1/N of y, over 8 devices.
TEST(FusedFloorTest, AllGatherInOneStep) {
  const Analyzed r = OneCollective(OpKind::kAllGather, 8);
  const double y = 512.0 * 1024 * 2;
  EXPECT_DOUBLE_EQ(r.analysis.totals.comm_s, 7.0 / 8 * y / 450e9 + 7 * 2.5e-6);
  EXPECT_DOUBLE_EQ(r.analysis.totals.floor_comm_s, 7.0 / 8 * y / 450e9 + 2.5e-6);
}

}  // namespace
}  // namespace opscope::roofline
