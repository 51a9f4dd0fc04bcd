// LSTM / GRU / RNN: output shapes from the ONNX importer and the cost rule's closed forms
// (src/cost/rules.cc RnnRule), imported from ONNX and built directly as graph JSON would.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "onnx_test_util.h"
#include "testing/graph_builder.h"

namespace opscope::testing_onnx {
namespace {

constexpr uint64_t kF32Bytes = 4;

struct Layer {
  std::string op = "LSTM";  // LSTM | GRU | RNN
  int64_t steps = 5, batch = 3, input = 8, hidden = 16, dirs = 1;
  bool bias = false, peepholes = false, batch_first = false, seq_lens = false;
};

int64_t Gates(const Layer& l) { return l.op == "LSTM" ? 4 : l.op == "GRU" ? 3 : 1; }

// One recurrent node with weights W, R (and B, P), absent optional inputs written as "".
std::string Model(const Layer& l) {
  ModelBuilder b;
  const int64_t g = Gates(l);
  if (l.batch_first) {
    b.Input("x", kF32, {l.batch, l.steps, l.input});
  } else {
    b.Input("x", kF32, {l.steps, l.batch, l.input});
  }
  b.Weight("W", kF32, {l.dirs, g * l.hidden, l.input}).Weight("R", kF32, {l.dirs, g * l.hidden, l.hidden});
  if (l.bias) b.Weight("B", kF32, {l.dirs, 2 * g * l.hidden});
  if (l.peepholes) b.Weight("P", kF32, {l.dirs, 3 * l.hidden});
  if (l.seq_lens) b.Input("lens", onnx::TensorProto::INT32, {l.batch});
  b.Output("y").Output("y_h");
  std::vector<std::string> ins{"x", "W", "R", l.bias ? "B" : "", l.seq_lens ? "lens" : ""};
  if (l.peepholes) ins.insert(ins.end(), {"", "", "P"});
  onnx::NodeProto& n = b.Node(l.op, ins, {"y", "y_h"}, "rnn");
  AttrInt(n, "hidden_size", l.hidden);
  if (l.dirs == 2) AttrString(n, "direction", "bidirectional");
  if (l.batch_first) AttrInt(n, "layout", 1);
  return b.Bytes();
}

// steps · dirs · batch · (2·G·H·(I + H) + E·H)
uint64_t ClosedForm(const Layer& l, uint64_t e) {
  const auto g = static_cast<uint64_t>(Gates(l));
  const auto h = static_cast<uint64_t>(l.hidden), i = static_cast<uint64_t>(l.input);
  return static_cast<uint64_t>(l.steps * l.dirs * l.batch) * (2 * g * h * (i + h) + e * h);
}

TEST(OnnxRecurrent, LstmForwardClosedFormAndShapes) {
  const Layer l;
  auto c = ImportAndCost(Model(l));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->shape("y"), "5,1,3,16");  // [steps, dirs, batch, H]
  EXPECT_EQ(c->shape("y_h"), "1,3,16");  // [dirs, batch, H]
  const cost::NodeCost& k = c->cost("rnn");
  ASSERT_TRUE(k.costed);
  // 13 = 4 gate sums + 4 activations + 3 for the cell + 2 for the hidden state.
  EXPECT_EQ(k.flops, 5u * 1 * 3 * (2 * 4 * 16 * (8 + 16) + 13 * 16));
  EXPECT_EQ(k.flops, ClosedForm(l, 13));
  // Every input once (weights reused across steps), every output once.
  const uint64_t x = 5 * 3 * 8, w = 64 * 8, r = 64 * 16, y = 5 * 3 * 16, y_h = 3 * 16;
  EXPECT_EQ(k.bytes_read, (x + w + r) * kF32Bytes);
  EXPECT_EQ(k.bytes_weights, (w + r) * kF32Bytes);
  EXPECT_EQ(k.bytes_written, (y + y_h) * kF32Bytes);
}

TEST(OnnxRecurrent, BidirectionalBatchFirstWithBiasAndPeepholes) {
  Layer l;
  l.dirs = 2;
  l.bias = l.peepholes = l.batch_first = true;
  auto c = ImportAndCost(Model(l));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->shape("y"), "3,5,2,16");  // layout 1: [batch, steps, dirs, H]
  EXPECT_EQ(c->shape("y_h"), "3,2,16");  // [batch, dirs, H]
  // + 2·4 bias adds and + 6 for the peepholes: E = 13 + 8 + 6.
  EXPECT_EQ(c->cost("rnn").flops, 5u * 2 * 3 * (2 * 4 * 16 * (8 + 16) + (13 + 8 + 6) * 16));
  EXPECT_EQ(c->cost("rnn").bytes_weights,
            (2 * 64 * 8 + 2 * 64 * 16 + 2 * 128 + 2 * 48) * kF32Bytes);  // W, R, B, P
}

TEST(OnnxRecurrent, GruAndRnnClosedForms) {
  Layer gru;
  gru.op = "GRU";
  gru.bias = true;
  auto g = ImportAndCost(Model(gru));
  ASSERT_TRUE(g) << g.error().message;
  // 11 = 3 gate sums + 3 activations + r⊙h + 4 for (1−z)⊙h̃ + z⊙h; + 2·3 bias adds.
  EXPECT_EQ(g->cost("rnn").flops, 5u * 1 * 3 * (2 * 3 * 16 * (8 + 16) + (11 + 6) * 16));
  Layer rnn;
  rnn.op = "RNN";
  auto r = ImportAndCost(Model(rnn));
  ASSERT_TRUE(r) << r.error().message;
  // 2 = one gate sum and one activation.
  EXPECT_EQ(r->cost("rnn").flops, 5u * 1 * 3 * (2 * 1 * 16 * (8 + 16) + 2 * 16));
  EXPECT_EQ(r->cost("rnn").mma_class, format::MmaClass::kFp32);
}

TEST(OnnxRecurrent, SequenceLengthsAreAnUpperBoundAndSaidSo) {
  Layer l;
  l.seq_lens = true;
  auto c = ImportAndCost(Model(l));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->cost("rnn").flops, ClosedForm(l, 13));
  bool said = false;
  for (const std::string& a : c->ledger.assumptions) said = said || a.find("sequence_lens") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(OnnxRecurrent, WrongWeightShapeIsBadInputNamingTheNode) {
  ModelBuilder b;
  b.Input("x", kF32, {5, 3, 8}).Weight("W", kF32, {1, 48, 8}).Weight("R", kF32, {1, 64, 16}).Output("y");
  AttrInt(b.Node("LSTM", {"x", "W", "R"}, {"y"}, "rnn"), "hidden_size", 16);
  auto c = ImportAndCost(b.Bytes());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message,
            "node 'rnn' (LSTM): W must be [dirs, 4·H, I] and R [dirs, 4·H, H] with H = 16 and I = 8");
}

TEST(OnnxRecurrent, GraphJsonNodeWithPositionalInputs) {
  // Without input_slots the inputs are positional: x, W, R, B.
  testing::GraphBuilder gb("gru");
  gb.Input("x", {4, 2, 8});
  gb.Weight("W", {1, 48, 8});
  gb.Weight("R", {1, 48, 16});
  gb.Weight("B", {1, 96});
  gb.Output("y", {4, 1, 2, 16});
  gb.Node("gru", ir::OpKind::kGRU, {"x", "W", "R", "B"}, {"y"});
  const cost::Ledger l = testing::MustLedger(gb.Build());
  ASSERT_TRUE(l.nodes[0].costed);
  EXPECT_EQ(l.nodes[0].flops, 4u * 1 * 2 * (2 * 3 * 16 * (8 + 16) + (11 + 6) * 16));
}

}  // namespace
}  // namespace opscope::testing_onnx
