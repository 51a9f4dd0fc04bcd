// --input NAME=VALUE and the If branches it decides (issue 12): parsing the option, the
// Silero-shaped fixture (tests/fixtures/onnx/if_on_input.onnx, make_input_fixtures.py) with and
// without a value for `sr`, the branch not taken listed with its node count, the warning that
// names the option to pass, --dim errors that list the model's dims, value chains folded into
// pads and If conditions, and the real Silero VAD (tests/fixtures/onnx/silero_vad/).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "onnx_test_util.h"

namespace opscope::testing_onnx {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/onnx/" + name;
}

import::ImportOptions Options(const std::vector<std::string>& inputs, import::DimBindings dims = {}) {
  auto parsed = import::ParseInputOptions(inputs);
  EXPECT_TRUE(parsed) << (parsed ? "" : parsed.error().message);
  import::ImportOptions o(std::move(dims));
  if (parsed) o.inputs = std::move(*parsed);
  return o;
}

Result<Costed> ImportFile(const std::string& file, const import::ImportOptions& o) {
  auto g = import::ImportOnnx(Fixture(file), o);
  if (!g) return std::unexpected(g.error());
  cost::Workload w;
  w.bindings = o.dims;
  auto l = cost::BuildLedger(*g, w);
  if (!l) return std::unexpected(l.error());
  return Costed{std::move(*g), std::move(*l)};
}

size_t CostedNodes(const Costed& c) {
  size_t n = 0;
  for (const auto& node : c.ledger.nodes) n += node.costed;
  return n;
}

// The nodes opscope imports from one branch of the file's If: every node but Constants,
// nested subgraphs included (counted here from the protobuf, independently of the importer).
uint64_t FileBranchNodes(const onnx::GraphProto& g) {
  uint64_t n = 0;
  for (const auto& node : g.node()) {
    n += node.op_type() != "Constant";
    for (const auto& a : node.attribute()) {
      if (a.has_g()) n += FileBranchNodes(a.g());
    }
  }
  return n;
}

const onnx::GraphProto& Branch(const onnx::ModelProto& m, const std::string& if_name, const std::string& which) {
  for (const auto& n : m.graph().node()) {
    if (n.name() != if_name) continue;
    for (const auto& a : n.attribute()) {
      if (a.name() == which) return a.g();
    }
  }
  ADD_FAILURE() << "no If '" << if_name << "'";
  static const onnx::GraphProto none;
  return none;
}

onnx::ModelProto LoadProto(const std::string& file) {
  std::ifstream in(Fixture(file), std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  onnx::ModelProto m;
  EXPECT_TRUE(m.ParseFromString(s.str())) << file;
  return m;
}

// ---- The option ----------------------------------------------------------------------------

TEST(OnnxInputs, ParseScalarsFloatsAndLists) {
  auto v = import::ParseInputOptions({"sr=16000", "t=0.5", "shape=1,512", "axes=[0,-1]", "neg=-3"});
  ASSERT_TRUE(v) << v.error().message;
  ASSERT_EQ(v->size(), 5u);
  EXPECT_EQ((*v)[0].name, "sr");
  EXPECT_FALSE((*v)[0].list);
  EXPECT_EQ((*v)[0].ints, std::vector<int64_t>{16000});
  EXPECT_TRUE((*v)[1].is_float);
  EXPECT_EQ((*v)[1].real, 0.5);
  EXPECT_TRUE((*v)[2].list);
  EXPECT_EQ((*v)[2].ints, (std::vector<int64_t>{1, 512}));
  EXPECT_EQ((*v)[3].ints, (std::vector<int64_t>{0, -1}));
  EXPECT_EQ((*v)[4].ints, std::vector<int64_t>{-3});
  // NAME=VALUE splits at the last '=', as --dim does.
  auto eq = import::ParseInputOptions({"a=b=2"});
  ASSERT_TRUE(eq) << eq.error().message;
  EXPECT_EQ((*eq)[0].name, "a=b");
}

TEST(OnnxInputs, BadOptionsNameTheOptionAndQuoteTheText) {
  auto error = [](std::vector<std::string> o) {
    auto v = import::ParseInputOptions(o);
    return v ? std::string() : v.error().message;
  };
  EXPECT_EQ(error({"sr"}), "option '--input': expected NAME=VALUE, got 'sr'");
  EXPECT_EQ(error({"=3"}), "option '--input': expected NAME=VALUE, got '=3'");
  EXPECT_EQ(error({"sr=abc"}),
            "option '--input sr=abc': 'abc' is not a number or a comma-separated list of integers");
  EXPECT_EQ(error({"sr="}),
            "option '--input sr=': '' is not a number or a comma-separated list of integers");
  EXPECT_EQ(error({"s=1,0.5"}), "option '--input s=1,0.5': '0.5' is not an integer (lists hold integers)");
  EXPECT_EQ(error({"s=1,,2"}), "option '--input s=1,,2': '' is not an integer (lists hold integers)");
  EXPECT_EQ(error({"sr=inf"}),
            "option '--input sr=inf': 'inf' is not a number or a comma-separated list of integers");
  EXPECT_EQ(error({"sr=1", "sr=2"}), "option '--input': 'sr' given twice");
  std::string big = "big=0";
  for (size_t i = 0; i < import::kMaxInputListElems; ++i) big += ",0";
  EXPECT_TRUE(error({big}).ends_with("': lists hold at most 4096 integers"));
}

TEST(OnnxInputs, ValueMustFitTheInput) {
  const std::string f = "if_on_input.onnx";
  auto error = [&](std::vector<std::string> inputs) {
    auto g = import::ImportOnnx(Fixture(f), Options(inputs));
    return g ? std::string() : g.error().message;
  };
  const std::string at = Fixture(f) + ": option '--input ";
  EXPECT_EQ(error({"rate=1"}), at + "rate=1': the model has no input named 'rate'; its inputs: "
                                    "'input', 'state', 'sr'");
  EXPECT_EQ(error({"sr=1.5"}), at + "sr=1.5': input 'sr' holds INT64; '1.5' is not an integer");
  EXPECT_EQ(error({"sr=1,2"}), at + "sr=1,2': input 'sr' has shape []; a list gives a 1-D input");
  EXPECT_EQ(error({"state=3"}), at + "state=3': input 'state' has shape [2, state:1, 16]; a scalar "
                                     "gives a one-element input");
  // A float input takes integers and floats; a whole float is an integer to the evaluator.
  EXPECT_EQ(error({"sr=16000.0"}), at + "sr=16000.0': input 'sr' holds INT64; '16000.0' is not an "
                                         "integer");
}

TEST(OnnxInputs, InitializerIsNotAGraphInput) {
  ModelBuilder b;
  b.Input("x", kI64, {}).Ints("k", {3}, true).Output("y");
  b.graph()->add_input()->set_name("k");  // IR < 4 style: the initializer listed as an input
  b.Node("Add", {"x", "k"}, {"y"}, "add");
  auto g = import::ImportOnnxBytes(b.Bytes(), "t.onnx", Options({"k=1"}));
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().message,
            "t.onnx: option '--input k=1': 'k' is an initializer (a weight), not a graph input");
}

TEST(OnnxInputs, GraphJsonTakesNoValues) {
  auto g = import::ImportModel(std::string(OPSCOPE_SOURCE_DIR) + "/tests/golden/matmul.json",
                               Options({"n=3"}));
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("option '--input n=3': "), std::string::npos) << g.error().message;
  EXPECT_NE(g.error().message.find("--input applies to ONNX models"), std::string::npos);
}

// ---- If on an input -------------------------------------------------------------------------

const import::DimBindings kOneFrame16k = {{"input:0", 1}, {"input:1", 64}, {"state:1", 1}};

TEST(OnnxInputs, IfOnAnInputWithoutAValueNamesTheOptionOnce) {
  auto c = ImportFile("if_on_input.onnx", Options({}, kOneFrame16k));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->graph.warnings, std::vector<std::string>{
                                   "If 'If_0' depends on the value of input 'sr' (pass --input "
                                   "sr=VALUE); neither branch is costed"});
  // If_0 takes neither branch (the Ifs nested in its branches still decide on the bound dims).
  for (const ir::NotTaken& b : c->graph.not_taken) EXPECT_NE(b.node, "If_0");
  // Both branches are imported and listed, the reason naming `sr`, not the tensor Equal wrote.
  const std::string reason = "condition of If 'If_0' depends on the value of input 'sr' (pass --input sr=VALUE)";
  EXPECT_EQ(c->ledger.Reason(static_cast<size_t>(&c->node("If_0") - c->graph.nodes.data())),
            "control flow 'If': " + reason);
  for (size_t i = 0; i < c->graph.nodes.size(); ++i) {
    if (c->graph.nodes[i].name == "Equal_0") continue;  // the condition itself is costed
    EXPECT_FALSE(c->ledger.nodes[i].costed) << c->graph.nodes[i].name;
    EXPECT_NE(c->ledger.Reason(i).find(reason), std::string::npos)
        << c->graph.nodes[i].name << ": " << c->ledger.Reason(i);
  }
  EXPECT_EQ(CostedNodes(*c), 1u);
}

TEST(OnnxInputs, ValueDecidesTheBranchAndTheOtherIsListedNotCounted) {
  const onnx::ModelProto proto = LoadProto("if_on_input.onnx");
  const uint64_t then_nodes = FileBranchNodes(Branch(proto, "If_0", "then_branch"));
  const uint64_t else_nodes = FileBranchNodes(Branch(proto, "If_0", "else_branch"));
  for (const auto& [sr, taken, not_taken, skipped] :
       {std::tuple{"16000", "/then/", "else", else_nodes}, std::tuple{"8000", "/else/", "then", then_nodes}}) {
    import::DimBindings dims = {{"input:0", 1}, {"input:1", sr == std::string("16000") ? 64 : 32}, {"state:1", 1}};
    auto c = ImportFile("if_on_input.onnx", Options({std::string("sr=") + sr}, dims));
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_TRUE(c->graph.warnings.empty()) << c->graph.warnings[0];
    ASSERT_GE(c->graph.not_taken.size(), 1u);
    EXPECT_EQ(c->graph.not_taken[0].node, "If_0");
    EXPECT_EQ(c->graph.not_taken[0].branch, not_taken);
    EXPECT_EQ(c->graph.not_taken[0].nodes, skipped);
    // Every node imported is from the taken branch (or the condition), and all are costed.
    for (const auto& n : c->graph.nodes) {
      const bool ok = n.name == "Equal_0" || n.name.starts_with(std::string("If_0") + taken);
      EXPECT_TRUE(ok) << n.name;
    }
    EXPECT_EQ(CostedNodes(*c), c->graph.nodes.size());
  }
}

TEST(OnnxInputs, PadChainAndShapeConditionFoldOnceTheirInputsAreKnown) {
  // ConstantOfShape -> Concat -> Reshape -> Slice(step -1) -> Transpose -> Reshape -> Cast gives
  // Pad [0, 0, 0, 16]: 64 samples become 80 (window 64 / 4 = 16 of reflect padding).
  auto one = ImportFile("if_on_input.onnx", Options({"sr=16000"}, kOneFrame16k));
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->shape("If_0/then//16k/padded"), "1,80");
  // (80 − 64)/32 + 1 = 1 frame: If(Equal(Gather(Shape(enc), -1), 1)) takes the Squeeze.
  EXPECT_EQ(one->shape("If_0/then//16k/spec"), "1,66,1");
  ASSERT_EQ(one->graph.not_taken.size(), 2u);
  EXPECT_EQ(one->graph.not_taken[1].node, "If_0/then//16k/If_squeeze");
  EXPECT_EQ(one->graph.not_taken[1].branch, "else");
  // 512 samples: (512 + 16 − 64)/32 + 1 = 15 frames, averaged instead.
  import::DimBindings long_input = {{"input:0", 1}, {"input:1", 512}, {"state:1", 1}};
  auto many = ImportFile("if_on_input.onnx", Options({"sr=16000"}, long_input));
  ASSERT_TRUE(many) << many.error().message;
  EXPECT_EQ(many->shape("If_0/then//16k/spec"), "1,66,15");
  ASSERT_EQ(many->graph.not_taken.size(), 2u);
  EXPECT_EQ(many->graph.not_taken[1].branch, "then");
  EXPECT_EQ(CostedNodes(*many), many->graph.nodes.size());
}

TEST(OnnxInputs, IfOnAnUnboundDimNamesTheDim) {
  auto c = ImportFile("if_on_input.onnx", Options({"sr=16000"}));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->graph.warnings,
            std::vector<std::string>{"If 'If_0/then//16k/If_squeeze' depends on dim 'input:1' (pass "
                                     "--dim input:1=VALUE); neither branch is costed"});
}

TEST(OnnxInputs, DimErrorListsTheModelsDimsWithInputAxisNames) {
  auto g = import::ImportOnnx(Fixture("if_on_input.onnx"), import::DimBindings{{"samples", 512}});
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().message,
            Fixture("if_on_input.onnx") +
                ": --dim 'samples': the model has no dim named 'samples'; its dims: 'input:0', "
                "'input:1', 'state:1' (unnamed dims of graph inputs are INPUT:AXIS)");
  ModelBuilder named;
  named.Input("x", kF32, {"batch", 8}).Output("y");
  named.Node("Relu", {"x"}, {"y"}, "r");
  auto n = import::ImportOnnxBytes(named.Bytes(), "t.onnx", import::DimBindings{{"Batch", 2}});
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().message, "t.onnx: --dim 'Batch': the model has no dim named 'Batch'; its dims: "
                               "'batch' (unnamed dims of graph inputs are INPUT:AXIS)");
  ModelBuilder fixed;
  fixed.Input("x", kF32, {2, 8}).Output("y");
  fixed.Node("Relu", {"x"}, {"y"}, "r");
  auto f = import::ImportOnnxBytes(fixed.Bytes(), "t.onnx", import::DimBindings{{"n", 2}});
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().message, "t.onnx: --dim 'n': the model has no dim named 'n'; the model "
                               "declares no symbolic dims (all its dims are fixed)");
}

// ---- Folding, in memory --------------------------------------------------------------------

TEST(OnnxInputs, NotOfSizeOfShapeDecidesAnIf) {
  // If(Not(Equal(Size(Shape(x)), 2))): x is rank 2, so the else branch (Relu) runs.
  ModelBuilder b;
  b.Input("x", kF32, {4, 8}).Ints("two", {2}, true).Output("y");
  b.Node("Shape", {"x"}, {"s"}, "shape");
  b.Node("Size", {"s"}, {"rank"}, "size");
  b.Node("Equal", {"rank", "two"}, {"is2"}, "eq");
  b.Node("Not", {"is2"}, {"not2"}, "not");
  onnx::NodeProto& n = b.Node("If", {"not2"}, {"y"}, "branch");
  for (const auto& [which, op] : {std::pair{"then_branch", "Neg"}, std::pair{"else_branch", "Relu"}}) {
    auto* a = n.add_attribute();
    a->set_name(which);
    a->set_type(onnx::AttributeProto::GRAPH);
    auto* node = a->mutable_g()->add_node();
    node->set_op_type(op);
    node->set_name(op);
    node->add_input("x");
    node->add_output(std::string(which) + "_y");
    a->mutable_g()->add_output()->set_name(std::string(which) + "_y");
  }
  auto c = ImportAndCost(b.Bytes());
  ASSERT_TRUE(c) << c.error().message;
  ASSERT_EQ(c->graph.not_taken.size(), 1u);
  EXPECT_EQ(c->graph.not_taken[0].branch, "then");
  EXPECT_EQ(c->graph.not_taken[0].nodes, 1u);
  EXPECT_TRUE(c->cost("branch/else/Relu").costed);
}

TEST(OnnxInputs, InputValueFeedsShapes) {
  // Reshape(x, shape) with shape an input: --input shape=4,2 gives y its dims.
  ModelBuilder b;
  b.Input("x", kF32, {8}).Input("shape", kI64, {2}).Output("y");
  b.Node("Reshape", {"x", "shape"}, {"y"}, "reshape");
  auto unknown = import::ImportOnnxBytes(b.Bytes(), "t.onnx", {});
  ASSERT_TRUE(unknown) << unknown.error().message;
  auto g = import::ImportOnnxBytes(b.Bytes(), "t.onnx", Options({"shape=4,2"}));
  ASSERT_TRUE(g) << g.error().message;
  for (const auto& t : g->tensors) {
    if (t.name != "y") continue;
    ASSERT_EQ(t.shape.size(), 2u);
    EXPECT_EQ(t.shape[0].constant(), 4);
    EXPECT_EQ(t.shape[1].constant(), 2);
  }
  auto mismatch = import::ImportOnnxBytes(b.Bytes(), "t.onnx", Options({"shape=1,2,4"}));
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().message,
            "t.onnx: option '--input shape=1,2,4': input 'shape' holds 2 elements; the list has 3");
}

TEST(OnnxInputs, SliceOfKnownContentsFollowsOnnxClamping) {
  // data = [2, 3, 4, 6] sliced, then ConstantOfShape: its dims are the slice's contents.
  auto sliced = [](int64_t start, int64_t end, int64_t step) {
    ModelBuilder b;
    b.Ints("data", {2, 3, 4, 6}).Output("y");
    b.Ints("s", {start}).Ints("e", {end}).Ints("a", {0}).Ints("st", {step});
    b.Node("Slice", {"data", "s", "e", "a", "st"}, {"shape"}, "slice");
    b.Node("ConstantOfShape", {"shape"}, {"y"}, "fill");
    auto g = ImportAndCost(b.Bytes());
    EXPECT_TRUE(g) << g.error().message;
    return g ? g->shape("y") : std::string();
  };
  EXPECT_EQ(sliced(0, 2, 1), "2,3");
  EXPECT_EQ(sliced(-1, INT64_MIN, -1), "6,4,3,2");   // reversed, all four
  EXPECT_EQ(sliced(-100, -200, -1), "2");            // start clamps to 0, end to -1: [2]
  EXPECT_EQ(sliced(0, INT64_MAX, INT64_MAX), "2");   // one step covers it
  EXPECT_EQ(sliced(3, INT64_MIN, INT64_MIN), "6");
  EXPECT_EQ(sliced(1, 4, 2), "3,6");
}

// ---- The real Silero VAD --------------------------------------------------------------------

TEST(OnnxInputs, SileroVadWithSampleRateCostsTheTakenBranch) {
  const std::string f = "silero_vad/silero_vad.onnx";
  auto none = ImportFile(f, Options({}));
  ASSERT_TRUE(none) << none.error().message;
  ASSERT_FALSE(none->graph.warnings.empty());
  EXPECT_EQ(none->graph.warnings[0],
            "If 'If_0' depends on the value of input 'sr' (pass --input sr=VALUE); neither branch "
            "is costed");
  // 16 kHz, one 512-sample chunk, batch 1.
  const import::DimBindings dims = {{"input:0", 1}, {"input:1", 512}, {"state:1", 1}};
  auto c = ImportFile(f, Options({"sr=16000"}, dims));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_TRUE(c->graph.warnings.empty());
  ASSERT_FALSE(c->graph.not_taken.empty());
  EXPECT_EQ(c->graph.not_taken[0].node, "If_0");
  EXPECT_EQ(c->graph.not_taken[0].branch, "else");
  const onnx::ModelProto proto = LoadProto(f);
  EXPECT_EQ(c->graph.not_taken[0].nodes, FileBranchNodes(Branch(proto, "If_0", "else_branch")));
  const size_t costed = CostedNodes(*c);
  EXPECT_GE(10 * costed, 9 * c->graph.nodes.size())
      << costed << " of " << c->graph.nodes.size() << " costed";
  // The decoder's LSTM (hidden 128, input 128, one step, batch 1, with biases) is costed by its
  // closed form: 2·4·128·(128 + 128) + (13 + 2·4)·128.
  bool lstm = false;
  for (size_t i = 0; i < c->graph.nodes.size(); ++i) {
    if (c->graph.nodes[i].op != ir::OpKind::kLSTM) continue;
    lstm = true;
    EXPECT_TRUE(c->ledger.nodes[i].costed) << c->ledger.Reason(i);
    EXPECT_EQ(c->ledger.nodes[i].flops, 2u * 4 * 128 * (128 + 128) + (13 + 2 * 4) * 128);
  }
  EXPECT_TRUE(lstm);
}

}  // namespace
}  // namespace opscope::testing_onnx
