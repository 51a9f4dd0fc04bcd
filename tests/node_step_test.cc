// The one node time (roofline::TimeNode) and the one per-node costing step
// (cost::CostResolvedNode) that the full analysis and the sweep's compiled plans share: the
// sweep's per-node evaluator gives every node the ledger's entry, field for field, on nodes
// that repeat (a loop's trip count) and communicate — where two copies of the step had
// drifted (the sweep's copy left bytes_link unrepeated) — and the plan times such a graph as
// roofline::Estimate does, to the bit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cost/ledger.h"
#include "device/device.h"
#include "roofline/roofline.h"
#include "sweep/node_eval.h"
#include "sweep/step_plan.h"
#include "testing/graph_builder.h"

namespace opscope {
namespace {

using ir::OpKind;
using testing::GraphBuilder;

// A step over n token rows of `seqs` sequences whose nodes all repeat: a matmul 3 times, an
// all-reduce over 4 devices twice, a recurrence twice.
ir::Graph RepeatedStep() {
  GraphBuilder b("repeated");
  b.Input("x", {"n", 64});
  b.Weight("w", {64, 32});
  b.Tensor("y", {"n", 32});
  b.Tensor("z", {"n", 32});
  b.State("h", {"seqs", 2, 4, 4});
  b.State("h_new", {"seqs", 2, 4, 4});
  b.Output("out", {"n", 32});
  b.Node("mm", OpKind::kMatMul, {"x", "w"}, {"y"});
  b.LastNode().repeat = 3;
  b.Node("ar", OpKind::kAllReduce, {"y"}, {"z"},
         {{"group_size", int64_t{4}}, {"scope", std::string("node")}});
  b.LastNode().repeat = 2;
  b.Node("gdn", OpKind::kGdnRecurrence, {"z", "h"}, {"out", "h_new"});
  b.LastNode().repeat = 2;
  return b.Build();
}

void ExpectSameEntry(const cost::NodeCost& a, const cost::NodeCost& b, const std::string& what) {
  EXPECT_EQ(a.costed, b.costed) << what;
  EXPECT_EQ(a.flop_model, b.flop_model) << what;
  EXPECT_EQ(a.mma_class, b.mma_class) << what;
  EXPECT_EQ(a.floor_class, b.floor_class) << what;
  EXPECT_EQ(a.collective, b.collective) << what;
  EXPECT_EQ(a.bytes_read, b.bytes_read) << what;
  EXPECT_EQ(a.bytes_written, b.bytes_written) << what;
  EXPECT_EQ(a.bytes_weights, b.bytes_weights) << what;
  EXPECT_EQ(a.bytes_state, b.bytes_state) << what;
  EXPECT_EQ(a.flops, b.flops) << what;
  EXPECT_EQ(a.bytes_link, b.bytes_link) << what;
}

TEST(NodeStep, SweepEvaluatorGivesTheLedgerEntryOfRepeatedNodes) {
  const ir::Graph g = RepeatedStep();
  for (int64_t seqs : {1, 3, 8}) {
    const int64_t n = seqs;
    const cost::Ledger ledger = testing::MustLedger(g, {{{"n", n}, {"seqs", seqs}}});
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      sweep::NodeEvaluator eval(g, i);
      auto c = eval.Eval(sweep::Point{n, seqs, 0});
      ASSERT_TRUE(c) << c.error().message;
      ExpectSameEntry(*c, ledger.nodes[i], g.nodes[i].name + " at seqs " + std::to_string(seqs));
    }
    // The repeated all-reduce: twice the ring's 2·(N−1)/N of x (n·32 f32 = 128·n bytes), N = 4.
    EXPECT_EQ(ledger.nodes[1].bytes_link, 2 * (2 * 3 * 128 * static_cast<uint64_t>(n) / 4));
    // The repeated matmul: 3 × 2·n·64·32 FLOPs.
    EXPECT_EQ(ledger.nodes[0].flops, 3 * 2 * static_cast<uint64_t>(n) * 64 * 32);
  }
}

TEST(NodeStep, PlanTimesRepeatedCollectivesAsTheAnalysis) {
  const ir::Graph g = RepeatedStep();
  auto device = device::FindBuiltinDevice("h100-sxm");
  ASSERT_TRUE(device) << device.error().message;
  auto plan = sweep::StepPlan::Compile(g);
  ASSERT_TRUE(plan) << plan.error().message;
  for (int64_t seqs : {1, 2, 64, 4096}) {
    const cost::Ledger ledger = testing::MustLedger(g, {{{"n", seqs}, {"seqs", seqs}}});
    auto analysis = roofline::Estimate(g, ledger, *device);
    ASSERT_TRUE(analysis) << analysis.error().message;
    auto timing = (*plan)->Time(sweep::Point{seqs, seqs, 0}, *device);
    ASSERT_TRUE(timing) << timing.error().message;
    ASSERT_TRUE(timing->has_value()) << seqs;
    EXPECT_EQ((*timing)->time_s, analysis->totals.time_s) << seqs;  // bit for bit
  }
}

// The node time's closed forms: each bound where its term is the largest, none at zero.
TEST(NodeStep, TimeNodeIsTheLargestOfItsThreeTerms) {
  using roofline::Bound;
  const double dram_bytes_per_s = 2e12, peak_flops_per_s = 1e15;
  auto memory = roofline::TimeNode(4e9, 1e12, peak_flops_per_s, dram_bytes_per_s);
  EXPECT_EQ(memory.memory_s, 4e9 / 2e12);
  EXPECT_EQ(memory.compute_s, 1e12 / 1e15);
  EXPECT_EQ(memory.time_s, 2e-3);  // 4 GB at 2 TB/s > 1 TFLOP at 1 PFLOP/s
  EXPECT_EQ(memory.bound, Bound::kMemory);
  auto compute = roofline::TimeNode(4e9, 1e13, peak_flops_per_s, dram_bytes_per_s);
  EXPECT_EQ(compute.time_s, 1e13 / 1e15);
  EXPECT_EQ(compute.bound, Bound::kCompute);
  auto link = roofline::TimeNode(4e9, 1e12, peak_flops_per_s, dram_bytes_per_s, 5e-3);
  EXPECT_EQ(link.time_s, 5e-3);
  EXPECT_EQ(link.bound, Bound::kLink);
  auto no_peak = roofline::TimeNode(4e9, 1e15, std::nullopt, dram_bytes_per_s);
  EXPECT_EQ(no_peak.compute_s, 0.0);  // memory-only without a peak
  EXPECT_EQ(no_peak.bound, Bound::kMemory);
  auto nothing = roofline::TimeNode(0, 0, peak_flops_per_s, dram_bytes_per_s);
  EXPECT_EQ(nothing.time_s, 0.0);
  EXPECT_EQ(nothing.bound, Bound::kNone);
}

}  // namespace
}  // namespace opscope
