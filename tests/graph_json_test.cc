// The graph JSON reader: a valid file gives the graph DESIGN describes; every kind of bad input
// is an error that names the file and quotes the offending tensor, node or text; truncated or
// mutated files never crash.
#include "import/opscope_json/graph_json.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace opscope::import {
namespace {

constexpr std::string_view kOrigin = "model.json";

// DESIGN's example, with every field kind exercised.
constexpr std::string_view kValid = R"({"name": "mm",
  "dims": {"k": 128},
  "tensors": [ {"name": "x", "shape": ["n", "k"], "format": "f32", "role": "input"},
               {"name": "w", "shape": ["k", 32], "format": "bf16", "role": "weight"},
               {"name": "y", "shape": ["n", 32]},
               {"name": "z", "shape": ["n", "min(k, 64) / 2"], "format": "q4_0"} ],
  "nodes":   [ {"name": "mm", "op": "MatMul", "inputs": ["x", "w"], "outputs": ["y"],
                "attrs": {}},
               {"name": "odd", "op": "FancyOp", "inputs": ["y"], "outputs": ["z"],
                "attrs": {"top_k": 8, "alpha": 0.5, "layout": "contiguous",
                          "kernel_shape": [3, 3]}} ] })";

std::string ErrorOf(std::string_view text) {
  auto g = ParseGraphJson(text, kOrigin);
  EXPECT_FALSE(g.has_value()) << "accepted: " << text;
  return g ? std::string() : g.error().message;
}

// The error names the file first and quotes every `parts` verbatim.
void ExpectError(std::string_view text, std::initializer_list<std::string_view> parts) {
  const std::string e = ErrorOf(text);
  EXPECT_TRUE(e.starts_with(std::string(kOrigin) + ": ")) << e;
  for (std::string_view p : parts) {
    EXPECT_NE(e.find(p), std::string::npos) << "'" << p << "' missing from: " << e;
  }
  EXPECT_EQ(e.find('\n'), std::string::npos) << "multi-line error: " << e;
}

// A small graph with one tensor or node spliced in, for the bad-input cases.
std::string Graph(std::string_view tensors, std::string_view nodes,
                  std::string_view extra = "") {
  return std::string(R"({"name": "g", )") + std::string(extra) + R"("tensors": [)" +
         std::string(tensors) + R"(], "nodes": [)" + std::string(nodes) + "]}";
}

constexpr std::string_view kX = R"({"name": "x", "shape": [4, 8], "role": "input"})";

TEST(GraphJsonTest, ParsesDesignsExample) {
  auto g = ParseGraphJson(kValid, kOrigin);
  ASSERT_TRUE(g.has_value()) << g.error().message;
  EXPECT_EQ(g->name, "mm");
  EXPECT_EQ(g->Dim("k"), 128);
  EXPECT_FALSE(g->Dim("n").has_value());
  ASSERT_EQ(g->tensors.size(), 4u);
  const ir::Tensor& x = g->tensors[0];
  EXPECT_EQ(x.role, ir::Role::kInput);
  EXPECT_EQ(x.format, format::Format::kF32);
  ASSERT_EQ(x.shape.size(), 2u);
  EXPECT_EQ(x.shape[0].ToString(g->symbols), "n");
  EXPECT_EQ(g->tensors[1].format, format::Format::kBf16);
  EXPECT_EQ(g->tensors[1].role, ir::Role::kWeight);
  EXPECT_TRUE(g->tensors[1].shape[1].IsConstant());
  EXPECT_EQ(g->tensors[1].shape[1].constant(), 32);
  // Defaults: f32, activation.
  EXPECT_EQ(g->tensors[2].format, format::Format::kF32);
  EXPECT_EQ(g->tensors[2].role, ir::Role::kActivation);
  EXPECT_EQ(g->tensors[3].format, format::Format::kQ4_0);
  ASSERT_EQ(g->nodes.size(), 2u);
  const ir::Node& mm = g->nodes[0];
  EXPECT_EQ(mm.op, ir::OpKind::kMatMul);
  EXPECT_EQ(mm.inputs, (std::vector<ir::TensorId>{0, 1}));
  EXPECT_EQ(mm.outputs, (std::vector<ir::TensorId>{2}));
  // An op outside the closed list becomes Unknown, keeping its name.
  const ir::Node& odd = g->nodes[1];
  EXPECT_EQ(odd.op, ir::OpKind::kUnknown);
  EXPECT_EQ(odd.source_op, "FancyOp");
  EXPECT_EQ(odd.IntAttr("top_k"), 8);
  EXPECT_EQ(odd.StringAttr("layout"), "contiguous");
  ASSERT_NE(odd.IntsAttr("kernel_shape"), nullptr);
  EXPECT_EQ(*odd.IntsAttr("kernel_shape"), (std::vector<int64_t>{3, 3}));
  const ir::AttrValue* alpha = odd.FindAttr("alpha");
  ASSERT_NE(alpha, nullptr);
  EXPECT_EQ(std::get<double>(*alpha), 0.5);
}

TEST(GraphJsonTest, MinimalAndEmptyGraphs) {
  auto empty = ParseGraphJson(R"({"tensors": [], "nodes": []})", "dir/empty.json");
  ASSERT_TRUE(empty.has_value()) << empty.error().message;
  EXPECT_TRUE(empty->nodes.empty());
  EXPECT_EQ(empty->name, "empty");  // defaults to the file's stem
  auto with_source = ParseGraphJson(
      Graph(std::string(kX) + R"(, {"name": "y", "shape": [4, 8]})",
            R"({"name": "g", "op": "Gelu", "source_op": "com.microsoft.FastGelu",
                "inputs": ["x"], "outputs": ["y"]})"),
      kOrigin);
  ASSERT_TRUE(with_source.has_value()) << with_source.error().message;
  EXPECT_EQ(with_source->nodes[0].op, ir::OpKind::kGelu);
  EXPECT_EQ(with_source->nodes[0].source_op, "com.microsoft.FastGelu");
}

// A UTF-8 byte-order mark before the JSON is ignored (RFC 8259 §8.1), not "malformed".
TEST(GraphJsonTest, LeadingByteOrderMarkIsIgnored) {
  auto g = ParseGraphJson("\xEF\xBB\xBF" + std::string(kValid), kOrigin);
  ASSERT_TRUE(g) << g.error().message;
  EXPECT_EQ(g->nodes.size(), 2u);
  // Only at the start: elsewhere it is still not JSON.
  ExpectError(std::string(R"({"tensors": [], "nodes": [])") + "\xEF\xBB\xBF}", {"not valid JSON"});
}

TEST(GraphJsonTest, MalformedJson) {
  ExpectError(R"({"name": "mm",)", {"not valid JSON: truncated"});
  ExpectError(R"({"tensors": [}, "nodes": []})", {"not valid JSON: truncated or malformed"});
  ExpectError("", {"empty document"});
  // A value of the wrong type is named, as in device and config files.
  ExpectError(R"({"tensors": {}, "nodes": []})", {"field 'tensors': expected an array, got an object"});
  ExpectError(R"({"tensors": [{"name": 7, "shape": []}], "nodes": []})",
              {"tensors[0].name: expected a string, got 7"});
  ExpectError("", {});
  ExpectError("   ", {});
  ExpectError(R"({"tensors": [], "nodes": []} trailing)", {});
  ExpectError("\xff\xfe{}", {});
}

// Truncating a valid file at every byte offset gives an error, never a crash or a graph.
TEST(GraphJsonTest, EveryTruncationIsAnError) {
  for (size_t len = 0; len < kValid.size(); ++len) {
    const std::string prefix(kValid.substr(0, len));
    auto g = ParseGraphJson(prefix, kOrigin);
    ASSERT_FALSE(g.has_value()) << "truncated at " << len << " parsed";
    EXPECT_TRUE(g.error().message.starts_with("model.json: ")) << g.error().message;
  }
}

// Random byte mutations: the reader returns a graph or an error, never crashes or hangs.
TEST(GraphJsonTest, MutatedFilesNeverCrash) {
  std::mt19937_64 rng(12345);
  const std::string alphabet = "{}[]\",:0123456789-. nkxyzabcdefghijklmnopqrstuvw\\/e+*()";
  int errors = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text(kValid);
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[pos] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.erase(pos, 1 + rng() % 8); break;
        case 2: text.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
      }
      if (text.empty()) text = "{";
    }
    auto g = ParseGraphJson(text, kOrigin);
    if (!g) {
      ++errors;
      EXPECT_TRUE(g.error().message.starts_with("model.json: ")) << g.error().message;
    }
  }
  EXPECT_GT(errors, 1500);  // most mutations break the file
}

TEST(GraphJsonTest, NotAGraph) {
  ExpectError("[1, 2, 3]", {"not an opscope graph"});
  ExpectError("42", {"not an opscope graph"});
  ExpectError(R"("tensors")", {"not an opscope graph"});
  ExpectError("{}", {"'tensors'"});
  ExpectError(R"({"tensors": []})", {"'nodes'"});
  ExpectError(R"({"model_type": "llama", "hidden_size": 4096})", {"'model_type'", "opscope llm"});
  ExpectError(R"({"tensors": {}, "nodes": []})", {"'tensors'"});
  ExpectError(R"({"tensors": [], "nodes": {}})", {"'nodes'"});
  ExpectError(R"({"name": 3, "tensors": [], "nodes": []})", {"'name'"});
  ExpectError(R"({"tensors": [], "nodes": [], "tensors": []})", {"duplicate field 'tensors'"});
  ExpectError(R"({"nodes": [], "tensors": []})", {"'tensors' must come before 'nodes'"});
}

TEST(GraphJsonTest, UnknownFields) {
  ExpectError(Graph(kX, "", R"("tensorz": [], )"), {"unknown field 'tensorz'"});
  ExpectError(Graph(R"({"name": "x", "shap": [4]})", ""), {"'x'", "unknown field 'shap'"});
  ExpectError(Graph(std::string(kX) + R"(, {"name": "y", "shape": [4, 8]})",
                    R"({"name": "neg", "op": "Neg", "inputs": ["x"], "outputs": ["y"],
                        "attr": {}})"),
              {"'neg'", "unknown field 'attr'"});
}

TEST(GraphJsonTest, UnknownFormatAndRole) {
  ExpectError(Graph(R"({"name": "w_q", "shape": [4, 8], "format": "fp7"})", ""),
              {"'w_q'", "unknown format 'fp7'"});
  ExpectError(Graph(R"({"name": "w_q", "shape": [4, 8], "format": "F32"})", ""),
              {"'w_q'", "'F32'"});
  ExpectError(Graph(R"({"name": "kv", "shape": [4, 8], "role": "cache"})", ""),
              {"'kv'", "unknown role 'cache'"});
}

TEST(GraphJsonTest, UndefinedAndDuplicateNames) {
  const std::string y = R"({"name": "y", "shape": [4, 8]})";
  ExpectError(Graph(std::string(kX) + ", " + y,
                    R"({"name": "neg", "op": "Neg", "inputs": ["ghost"], "outputs": ["y"]})"),
              {"'neg'", "'ghost'"});
  ExpectError(Graph(std::string(kX) + ", " + y,
                    R"({"name": "neg", "op": "Neg", "inputs": ["x"], "outputs": ["phantom"]})"),
              {"'neg'", "'phantom'"});
  ExpectError(Graph(std::string(kX) + ", " + std::string(kX), ""),
              {"duplicate tensor name 'x'"});
  ExpectError(Graph(std::string(kX) + ", " + y + R"(, {"name": "z", "shape": [4, 8]})",
                    R"({"name": "neg", "op": "Neg", "inputs": ["x"], "outputs": ["y"]},
                       {"name": "neg", "op": "Abs", "inputs": ["x"], "outputs": ["z"]})"),
              {"duplicate node name 'neg'"});
  // Produced twice.
  ExpectError(Graph(std::string(kX) + ", " + y,
                    R"({"name": "a", "op": "Neg", "inputs": ["x"], "outputs": ["y"]},
                       {"name": "b", "op": "Abs", "inputs": ["x"], "outputs": ["y"]})"),
              {"'b'", "'y'", "'a'"});
  // Consumed but never produced, and not a leaf.
  ExpectError(Graph(std::string(kX) + ", " + y + R"(, {"name": "h", "shape": [4, 8]})",
                    R"({"name": "a", "op": "Neg", "inputs": ["h"], "outputs": ["y"]})"),
              {"'a'", "'h'"});
}

// A long name is quoted up to 80 bytes, cut at a character boundary so the message stays
// valid UTF-8 (a 2-byte "é" straddles byte 80 here).
TEST(GraphJsonTest, LongNamesAreCutAtACharacterBoundary) {
  const std::string name = std::string(79, 'a') + "\xc3\xa9" + std::string(1000, 'b');
  const std::string e = ErrorOf(Graph(std::string(kX) + R"(, {"name": ")" + name +
                                          R"(", "shape": [4, 8], "format": "nope"})",
                                      ""));
  EXPECT_NE(e.find("'" + std::string(79, 'a') + "...'"), std::string::npos) << e;
  EXPECT_EQ(e.find('b'), std::string::npos) << "not cut: " << e.size() << " bytes";
  // Every byte of the message is ASCII or part of a whole UTF-8 sequence.
  for (size_t i = 0; i < e.size();) {
    const auto c = static_cast<unsigned char>(e[i]);
    const size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : 4;
    ASSERT_LE(i + len, e.size()) << "truncated sequence at " << i;
    for (size_t k = 1; k < len; ++k) {
      ASSERT_EQ(static_cast<unsigned char>(e[i + k]) & 0xC0, 0x80) << "broken sequence at " << i;
    }
    i += len;
  }
}

TEST(GraphJsonTest, ConsumerBeforeProducer) {
  ExpectError(Graph(std::string(kX) + R"(, {"name": "h", "shape": [4, 8]},
                                          {"name": "y", "shape": [4, 8]})",
                    R"({"name": "second", "op": "Neg", "inputs": ["h"], "outputs": ["y"]},
                       {"name": "first", "op": "Abs", "inputs": ["x"], "outputs": ["h"]})"),
              {"'second'", "'h'", "'first'"});
}

TEST(GraphJsonTest, LeavesCannotBeProduced) {
  ExpectError(Graph(std::string(kX) + R"(, {"name": "w", "shape": [4, 8], "role": "weight"})",
                    R"({"name": "bad", "op": "Neg", "inputs": ["x"], "outputs": ["w"]})"),
              {"'bad'", "'w'"});
}

TEST(GraphJsonTest, BadDims) {
  ExpectError(Graph(R"({"name": "neg_t", "shape": [-1, 4]})", ""), {"'neg_t'", "-1"});
  ExpectError(Graph(R"({"name": "neg_e", "shape": ["0 - 4", 4]})", ""), {"'neg_e'", "'0 - 4'"});
  ExpectError(Graph(R"({"name": "frac", "shape": [1.5, 4]})", ""), {"'frac'"});
  ExpectError(Graph(R"({"name": "obj", "shape": [{}, 4]})", ""), {"'obj'"});
  ExpectError(Graph(R"({"name": "notarr", "shape": "n"})", ""), {"'notarr'"});
  ExpectError(Graph(R"({"name": "huge", "shape": [18446744073709551615]})", ""), {"'huge'"});
  // The product of concrete dims overflows 64 bits.
  ExpectError(Graph(R"({"name": "big", "shape": [4294967296, 4294967296, 2]})", ""),
              {"'big'", "overflows 64 bits"});
  // Elements fit, bytes do not: 2^62 f64 elements.
  ExpectError(Graph(R"({"name": "bytes", "shape": [4611686018427387904], "format": "f64"})", ""),
              {"'bytes'", "overflows 64 bits"});
  // Graph dims.
  ExpectError(Graph(kX, "", R"("dims": {"n": -3}, )"), {"dims: 'n'", "-3"});
  ExpectError(Graph(kX, "", R"("dims": {"n": "4"}, )"), {"dims: 'n'"});
  ExpectError(Graph(kX, "", R"("dims": {"a+b": 4}, )"), {"'a+b'"});
  ExpectError(Graph(kX, "", R"("dims": {"n": 4, "n": 5}, )"), {"'n'"});
}

TEST(GraphJsonTest, UnparsableAndInexactExpressions) {
  ExpectError(Graph(R"({"name": "t1", "shape": ["n +", 4]})", ""), {"'t1'", "'n +'"});
  ExpectError(Graph(R"({"name": "t2", "shape": ["7 / 2"]})", ""),
              {"'t2'", "'7 / 2'", "7 is not divisible by 2"});
  ExpectError(Graph(R"j({"name": "t3", "shape": ["foo(n, 2)"]})j", ""), {"'t3'", "'foo'"});
  ExpectError(Graph(R"({"name": "t4", "shape": ["9223372036854775807 + 1"]})", ""),
              {"'t4'", "overflows 64 bits"});
  ExpectError(Graph(R"({"name": "t5", "shape": [""]})", ""), {"'t5'"});
}

TEST(GraphJsonTest, BlockMismatchOnConcreteDimsNamesTheTensor) {
  ExpectError(Graph(R"({"name": "w_fp4", "shape": [4, 24], "format": "nvfp4", "role": "weight"})",
                    ""),
              {"'w_fp4'", "24", "nvfp4"});
  // Symbolic dims are checked when bound (in the ledger), not at import.
  auto ok = ParseGraphJson(
      Graph(R"({"name": "w", "shape": ["n", "d"], "format": "q4_0", "role": "weight"})", ""),
      kOrigin);
  EXPECT_TRUE(ok.has_value()) << ok.error().message;
}

TEST(GraphJsonTest, BadAttributesAndReferences) {
  const std::string tensors = std::string(kX) + R"(, {"name": "y", "shape": [4, 8]})";
  auto node = [](std::string_view attrs) {
    return std::string(R"({"name": "n1", "op": "Neg", "inputs": ["x"], "outputs": ["y"],
                           "attrs": )") + std::string(attrs) + "}";
  };
  ExpectError(Graph(tensors, node(R"({"big": 18446744073709551615})")), {"'n1'", "'big'"});
  ExpectError(Graph(tensors, node(R"({"nested": {"a": 1}})")), {"'n1'", "'nested'"});
  ExpectError(Graph(tensors, node(R"({"names": ["a", "b"]})")), {"'n1'", "'names'"});
  ExpectError(Graph(tensors, node(R"({"flag": true})")), {"'n1'", "'flag'"});
  ExpectError(Graph(tensors, node(R"({"k": 1, "k": 2})")), {"'n1'", "'k'"});
  ExpectError(Graph(tensors, node("[]")), {"'n1'"});
  ExpectError(Graph(tensors, R"({"name": "n2", "op": "Neg", "inputs": "x", "outputs": ["y"]})"),
              {"'n2'", "inputs"});
  ExpectError(Graph(tensors, R"({"name": "n3", "op": "Neg", "inputs": [1], "outputs": ["y"]})"),
              {"'n3'", "inputs"});
  ExpectError(Graph(tensors, R"({"name": "n4", "inputs": ["x"], "outputs": ["y"]})"),
              {"'n4'", "'op'"});
  ExpectError(Graph(tensors, R"({"name": "n5", "op": "Neg", "inputs": ["x"]})"),
              {"'n5'", "'outputs'"});
  ExpectError(Graph(tensors, R"({"op": "Neg", "inputs": ["x"], "outputs": ["y"]})"),
              {"nodes[0]", "'name'"});
  ExpectError(Graph(R"({"shape": [4]})", ""), {"tensors[0]", "'name'"});
  ExpectError(Graph(R"({"name": "noshape"})", ""), {"'noshape'", "'shape'"});
  ExpectError(Graph(R"({"name": ""})", ""), {"tensors[0]"});
  ExpectError(Graph(R"(42)", ""), {"tensors[0]"});
}

class GraphJsonFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("opscope_graph_json_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(GraphJsonFileTest, LoadsFilesAndNamesMissingOnesAndDirectories) {
  const std::string path = (dir_ / "tiny_model.json").string();
  std::ofstream(path) << R"({"tensors": [], "nodes": []})";
  auto g = LoadGraphJson(path);
  ASSERT_TRUE(g.has_value()) << g.error().message;
  EXPECT_EQ(g->name, "tiny_model");

  const std::string missing = (dir_ / "missing.json").string();
  auto m = LoadGraphJson(missing);
  ASSERT_FALSE(m.has_value());
  EXPECT_TRUE(m.error().message.starts_with(missing + ": ")) << m.error().message;

  auto d = LoadGraphJson(dir_.string());
  ASSERT_FALSE(d.has_value());
  EXPECT_TRUE(d.error().message.starts_with(dir_.string() + ": ")) << d.error().message;
  EXPECT_NE(d.error().message.find("directory"), std::string::npos);

  const std::string bad = (dir_ / "bad.json").string();
  std::ofstream(bad) << R"({"tensors": [{"name": "q", "shape": [1], "format": "fp7"}], "nodes": []})";
  auto b = LoadGraphJson(bad);
  ASSERT_FALSE(b.has_value());
  EXPECT_TRUE(b.error().message.starts_with(bad + ": ")) << b.error().message;
  EXPECT_NE(b.error().message.find("'fp7'"), std::string::npos);
}

}  // namespace
}  // namespace opscope::import
