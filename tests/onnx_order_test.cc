// ONNX graphs in any node order: sorted topologically before import (stable: ties keep file
// order, subgraph reads count as dependencies), costed exactly as the sorted graph; a real
// cycle is an error naming a node on it (onnx_errors_test).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace opscope::testing_onnx {
namespace {

std::vector<std::string> NodeNames(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const auto& n : g.nodes) names.push_back(n.name);
  return names;
}

// x (f32) -> Cast f16 -> MatMul w (f16) -> Relu -> Cast f32 -> y: the nodes in the order an
// fp16 converter leaves them, the input and output Casts appended at the end.
ModelBuilder Fp16Chain(bool casts_last) {
  ModelBuilder b;
  b.Input("x", kF32, {4, 8}).Weight("w", kF16, {8, 16}).Output("y");
  auto mm = [&] { b.Node("MatMul", {"x_half", "w"}, {"h"}, "mm"); };
  auto relu = [&] { b.Node("Relu", {"h"}, {"r"}, "relu"); };
  auto cast_in = [&] { AttrInt(b.Node("Cast", {"x"}, {"x_half"}, "cast_in"), "to", kF16); };
  auto cast_out = [&] { AttrInt(b.Node("Cast", {"r"}, {"y"}, "cast_out"), "to", kF32); };
  if (casts_last) {
    mm(), relu(), cast_in(), cast_out();
  } else {
    cast_in(), mm(), relu(), cast_out();
  }
  return b;
}

TEST(OnnxOrder, CastsAppendedAtTheEndAreSortedAndCostedAsTheSortedGraph) {
  auto unsorted = ImportAndCost(Fp16Chain(true).Bytes());
  ASSERT_TRUE(unsorted) << unsorted.error().message;
  EXPECT_EQ(NodeNames(unsorted->graph), (std::vector<std::string>{"cast_in", "mm", "relu", "cast_out"}));
  auto sorted = ImportAndCost(Fp16Chain(false).Bytes());
  ASSERT_TRUE(sorted) << sorted.error().message;
  ASSERT_EQ(unsorted->ledger.nodes.size(), sorted->ledger.nodes.size());
  for (size_t i = 0; i < sorted->ledger.nodes.size(); ++i) {
    EXPECT_TRUE(unsorted->ledger.nodes[i].costed);
    EXPECT_EQ(unsorted->ledger.nodes[i].bytes_read, sorted->ledger.nodes[i].bytes_read);
    EXPECT_EQ(unsorted->ledger.nodes[i].flops, sorted->ledger.nodes[i].flops);
  }
  EXPECT_EQ(unsorted->cost("mm").flops, 2u * 4 * 8 * 16);  // 2·M·K·N
}

TEST(OnnxOrder, TiesKeepFileOrder) {
  // 'late' needs 'made' (written by the last node); 'free' and 'maker' depend on nothing in
  // the graph. A stable sort moves only 'late': free, maker, late.
  ModelBuilder b;
  b.Input("x", kF32, {2}).Output("a").Output("f");
  b.Node("Relu", {"made"}, {"a"}, "late");
  b.Node("Relu", {"x"}, {"f"}, "free");
  b.Node("Neg", {"x"}, {"made"}, "maker");
  auto g = import::ImportOnnxBytes(b.Bytes(), "t.onnx", {});
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(NodeNames(*g), (std::vector<std::string>{"free", "maker", "late"}));
}

TEST(OnnxOrder, SortedGraphKeepsItsOrderExactly) {
  ModelBuilder b;
  b.Input("x", kF32, {2}).Output("c").Output("d");
  b.Node("Relu", {"x"}, {"a"}, "n0");
  b.Node("Neg", {"x"}, {"b"}, "n1");  // independent of n0: stays second
  b.Node("Add", {"a", "b"}, {"c"}, "n2");
  b.Node("Abs", {"x"}, {"d"}, "n3");
  auto g = import::ImportOnnxBytes(b.Bytes(), "t.onnx", {});
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(NodeNames(*g), (std::vector<std::string>{"n0", "n1", "n2", "n3"}));
}

TEST(OnnxOrder, UnnamedMovedNodeKeepsItsFileIndexInItsName) {
  ModelBuilder b;
  b.Input("x", kF32, {2}).Output("y");
  b.Node("Relu", {"h"}, {"y"}, "out").clear_name();  // index 0 in the file
  b.Node("Neg", {"x"}, {"h"}, "first");
  auto g = import::ImportOnnxBytes(b.Bytes(), "t.onnx", {});
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(NodeNames(*g), (std::vector<std::string>{"first", "Relu_0"}));
}

TEST(OnnxOrder, SubgraphReadsOfOuterNamesAreDependencies) {
  // The If's branches read 'h', written by a node that comes after the If in the file.
  ModelBuilder b;
  b.Input("x", kF32, {2}).Ints("cond", {1}, true).Output("y");
  onnx::NodeProto& if_node = b.Node("If", {"cond"}, {"y"}, "branch");
  for (const char* which : {"then_branch", "else_branch"}) {
    auto* a = if_node.add_attribute();
    a->set_name(which);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* sub = a->mutable_g();
    auto* n = sub->add_node();
    n->set_op_type("Relu");
    n->set_name(std::string(which) + "_relu");
    n->add_input("h");
    n->add_output(std::string(which) + "_out");
    sub->add_output()->set_name(std::string(which) + "_out");
  }
  b.Node("Neg", {"x"}, {"h"}, "producer");
  // The condition is an int64 initializer: give it the bool type the If needs.
  b.graph()->mutable_initializer(0)->set_data_type(kBool);
  b.graph()->mutable_initializer(0)->clear_int64_data();
  b.graph()->mutable_initializer(0)->add_int32_data(1);
  auto g = import::ImportOnnxBytes(b.Bytes(), "t.onnx", {});
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_GE(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[0].name, "producer");
  EXPECT_EQ(g->nodes[1].name, "branch/then/then_branch_relu");
}

// The committed fixtures (make_input_fixtures.py): the fp16 converter's layout, and a cycle.
TEST(OnnxOrder, Fp16FixtureWithCastsAppendedImportsFullyCosted) {
  const std::string dir = std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/onnx/";
  auto g = import::ImportOnnx(dir + "unsorted_fp16.onnx", {});
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->nodes.front().name, "graph_input_cast0");
  EXPECT_EQ(g->nodes.back().name, "graph_output_cast0");
  auto l = cost::BuildLedger(*g, {});
  ASSERT_TRUE(l) << l.error().message;
  for (size_t i = 0; i < l->nodes.size(); ++i) EXPECT_TRUE(l->nodes[i].costed) << l->Reason(i);
  // conv1: 2 · output elements [1, 8, 16, 16] · C_in 3 · 3·3.
  bool conv1 = false;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (g->nodes[i].name == "/conv1/Conv") {
      conv1 = true;
      EXPECT_EQ(l->nodes[i].flops, 2u * (8 * 16 * 16) * 3 * 9);
    }
  }
  EXPECT_TRUE(conv1);
  auto cycle = import::ImportOnnx(dir + "cycle.onnx", {});
  ASSERT_FALSE(cycle);
  EXPECT_EQ(cycle.error().message, dir + "cycle.onnx: node 'add' (Add) is on a cycle: it reads 'b', "
                                         "written by 'relu', which reads 'a', written by the node itself");
}

}  // namespace
}  // namespace opscope::testing_onnx
