// ReportModel and its renderers: rows in graph order, by_op in descending bytes with ties by
// name, not-costed rows with reasons, JSON with exactly DESIGN's field names and exact integers,
// text in decimal human units, determinism, and an empty graph that reports cleanly.
#include "report/report_model.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <set>
#include <string>
#include <vector>

#include "report/render.h"
#include "testing/graph_builder.h"

namespace opscope::report {
namespace {

using format::MmaClass;
using ir::OpKind;
using testing::GraphBuilder;
using testing::MustLedger;

device::Device TestDevice() {
  device::Device d;
  d.name = "test-device";
  d.description = "a round-numbered test device";
  d.memory_bytes = 1e11;
  d.dram_bytes_per_s = 1e12;
  d.peak_flops_per_s[static_cast<int>(MmaClass::kFp32)] = 1e13;
  d.peak_flops_per_s[static_cast<int>(MmaClass::kBf16)] = 1e14;
  d.source = "test";
  return d;
}

ReportModel Report(const ir::Graph& g, cost::Workload w = {}, int top_n = 10) {
  const cost::Ledger l = MustLedger(g, w);
  auto a = roofline::Estimate(g, l, TestDevice());
  EXPECT_TRUE(a.has_value()) << (a ? "" : a.error().message);
  return BuildReport(g, l, a.value_or(roofline::Analysis{}), TestDevice(), top_n);
}

ir::Graph Mixed() {
  GraphBuilder b("mixed");
  b.Input("x", {8, 256}, "bf16");
  b.Weight("w", {256, 256}, "bf16");
  b.Input("dyn", {"n", 256}, "bf16");
  b.Tensor("h", {8, 256}, "bf16");
  b.Tensor("a", {8, 256}, "bf16");
  b.Tensor("b", {8, 256}, "bf16");
  b.Tensor("r", {2048}, "bf16");
  b.Tensor("k", {8, 4}, "bf16");
  b.Tensor("u", {"n", 256}, "bf16");
  b.Node("proj", OpKind::kLinear, {"x", "w"}, {"h"});
  b.Node("neg", OpKind::kNeg, {"h"}, {"a"});
  b.Node("abs", OpKind::kAbs, {"h"}, {"b"});  // same bytes as neg: tie broken by name
  b.Node("flat", OpKind::kReshape, {"a"}, {"r"});
  b.Node("topk", OpKind::kTopK, {"b"}, {"k"});
  b.Node("later", OpKind::kNeg, {"dyn"}, {"u"});
  return b.Build();
}

TEST(ReportModelTest, RowsByOpNotCostedAndNoFlopModel) {
  const ReportModel m = Report(Mixed());
  EXPECT_EQ(m.model, "mixed");
  EXPECT_EQ(m.schema_version, 1);
  ASSERT_EQ(m.nodes.size(), 6u);
  const char* order[] = {"proj", "neg", "abs", "flat", "topk", "later"};
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(m.nodes[i].name, order[i]);  // graph order
  EXPECT_EQ(m.nodes[0].mma_class, "bf16");
  EXPECT_EQ(m.nodes[1].mma_class, "none");
  EXPECT_EQ(m.nodes[0].bytes_weights, 256u * 256 * 2);
  EXPECT_FALSE(m.nodes[3].intensity.has_value());  // a view moves no bytes
  EXPECT_EQ(m.nodes[3].bound, "none");
  ASSERT_TRUE(m.nodes[1].intensity.has_value());
  EXPECT_DOUBLE_EQ(*m.nodes[1].intensity, 8.0 * 256 / (2 * 8 * 256 * 2));
  // Not costed: listed with the reason naming the symbol, and zero numbers.
  ASSERT_EQ(m.not_costed.size(), 1u);
  EXPECT_EQ(m.not_costed[0].name, "later");
  EXPECT_EQ(m.not_costed[0].op, "Neg");
  EXPECT_NE(m.not_costed[0].reason.find("'n'"), std::string::npos);
  EXPECT_FALSE(m.nodes[5].costed);
  EXPECT_EQ(m.nodes[5].bytes(), 0u);
  EXPECT_EQ(m.nodes[5].time_s, 0.0);
  // TopK has no FLOP model.
  EXPECT_EQ(m.no_flop_model, (std::vector<std::string>{"TopK"}));
  // by_op: descending bytes, ties by op name; counts include the not-costed node.
  ASSERT_EQ(m.by_op.size(), 5u);
  EXPECT_EQ(m.by_op[0].op, "Linear");
  EXPECT_EQ(m.by_op[1].op, "Abs");  // Abs and Neg tie at 2·8·256·2 bytes
  EXPECT_EQ(m.by_op[2].op, "Neg");
  EXPECT_EQ(m.by_op[1].bytes, m.by_op[2].bytes);
  EXPECT_EQ(m.by_op[2].count, 2u);
  for (size_t i = 1; i < m.by_op.size(); ++i) EXPECT_GE(m.by_op[i - 1].bytes, m.by_op[i].bytes);
  uint64_t by_op_bytes = 0;
  for (const ByOpRow& r : m.by_op) by_op_bytes += r.bytes;
  EXPECT_EQ(by_op_bytes, m.totals.bytes());
}

// ---- JSON --------------------------------------------------------------------------------

std::set<std::string> Keys(simdjson::dom::object o) {
  std::set<std::string> keys;
  for (auto field : o) keys.insert(std::string(field.key));
  return keys;
}

const std::set<std::string> kTotalsKeys = {
    "bytes_read", "bytes_written", "bytes_weights",      "bytes_state",         "bytes",
    "flops",      "intensity",     "time_s",             "memory_bound_bytes",  "compute_bound_bytes",
    "fused_floor_s", "nodes",      "nodes_costed",
    // Additive (issue 12): the state split, the link traffic and what bounds the step.
    "bytes_kv_cache", "bytes_recurrent_state", "bytes_link", "comm_s", "floor_bound"};
const std::set<std::string> kNodeKeys = {
    "name",          "op",         "source_op",   "costed", "bytes_read", "bytes_written",
    "bytes_weights", "bytes_state", "bytes",      "bytes_link", "flops",  "intensity",
    "mma_class",     "time_s",     "bound"};
const std::set<std::string> kByOpKeys = {"op", "count", "bytes", "bytes_link", "flops", "time_s"};
const std::set<std::string> kNotCostedKeys = {"name", "op", "reason"};

TEST(RenderJsonTest, FieldNamesAreExactlyDesigns) {
  const ReportModel m = Report(Mixed(), {}, 3);
  const std::string json = RenderJson(m);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  simdjson::dom::object root = doc.get_object().value();
  // DESIGN's top-level fields; 'no_flop_model' lists the op kinds reported with 0 FLOPs for
  // lack of a model (DESIGN: "listed as 'no FLOP model'"); llm and parallel only for llm runs;
  // 'warnings' only when there is one (here: six tiny nodes, far under a kernel launch each).
  std::set<std::string> top = Keys(root);
  EXPECT_EQ(top, (std::set<std::string>{"schema_version", "model", "device", "workload",
                                        "totals", "nodes", "by_op", "not_costed",
                                        "no_flop_model", "assumptions", "warnings"}));
  EXPECT_EQ(root["schema_version"].get_int64().value(), 1);
  EXPECT_EQ(root["model"].get_string().value(), "mixed");
  simdjson::dom::object device = root["device"].get_object().value();
  EXPECT_EQ(device["name"].get_string().value(), "test-device");
  EXPECT_EQ(device["dram_bytes_per_s"].get_double().value(), 1e12);
  EXPECT_EQ(device["peak_flops_per_s"]["bf16"].get_double().value(), 1e14);
  EXPECT_TRUE(device["source"].is_string());

  simdjson::dom::object totals = root["totals"].get_object().value();
  EXPECT_EQ(Keys(totals), kTotalsKeys);
  EXPECT_EQ(totals["bytes"].get_uint64().value(), m.totals.bytes());
  EXPECT_EQ(totals["flops"].get_uint64().value(), m.totals.flops);
  EXPECT_EQ(totals["nodes"].get_uint64().value(), 6u);
  EXPECT_EQ(totals["nodes_costed"].get_uint64().value(), 5u);
  EXPECT_EQ(totals["time_s"].get_double().value(), m.totals.time_s);  // round-trips exactly

  simdjson::dom::array nodes = root["nodes"].get_array().value();
  ASSERT_EQ(nodes.size(), 6u);  // every node, not only the top N
  size_t i = 0;
  for (simdjson::dom::element n : nodes) {
    simdjson::dom::object o = n.get_object().value();
    EXPECT_EQ(Keys(o), kNodeKeys);
    EXPECT_EQ(o["name"].get_string().value(), m.nodes[i].name);
    EXPECT_EQ(o["bytes"].get_uint64().value(), m.nodes[i].bytes());
    EXPECT_EQ(o["source_op"].get_string().value(), m.nodes[i].op);  // no importer name: the op
    // Numbers are never null, except intensity when the node moves no bytes.
    for (auto field : o) {
      if (field.key == "intensity") {
        EXPECT_EQ(field.value.is_null(), !m.nodes[i].intensity.has_value());
      } else {
        EXPECT_FALSE(field.value.is_null()) << field.key;
      }
    }
    ++i;
  }
  EXPECT_FALSE(nodes.at(5)["costed"].get_bool().value());
  EXPECT_TRUE(nodes.at(0)["costed"].get_bool().value());

  const simdjson::dom::array by_op_rows = root["by_op"].get_array().value();
  for (simdjson::dom::element r : by_op_rows) {
    EXPECT_EQ(Keys(r.get_object().value()), kByOpKeys);
  }
  simdjson::dom::array nc = root["not_costed"].get_array().value();
  ASSERT_EQ(nc.size(), 1u);
  EXPECT_EQ(Keys(nc.at(0).get_object().value()), kNotCostedKeys);
  EXPECT_EQ(nc.at(0)["name"].get_string().value(), "later");
}

TEST(RenderJsonTest, WorkloadAndAssumptions) {
  GraphBuilder b("moe");
  b.Dim("hidden", 64);
  b.Input("x", {"n", "hidden"}, "bf16");
  b.Weight("w", {8, 32, "hidden"}, "bf16");
  b.Tensor("y", {"n", 32}, "bf16");
  b.Node("experts", OpKind::kExpertGateUp, {"x", "w"}, {"y"}, {{"top_k", int64_t{2}}});
  const std::string json = RenderJson(Report(b.Build(), cost::Workload{{{"n", 5}}}));
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json).value();
  simdjson::dom::object workload = doc["workload"].get_object().value();
  EXPECT_EQ(Keys(workload), (std::set<std::string>{"hidden", "n"}));
  EXPECT_EQ(workload["n"].get_int64().value(), 5);
  EXPECT_EQ(workload["hidden"].get_int64().value(), 64);
  simdjson::dom::array assumptions = doc["assumptions"].get_array().value();
  ASSERT_EQ(assumptions.size(), 1u);
  EXPECT_NE(std::string(assumptions.at(0).get_string().value()).find("uniform routing"),
            std::string::npos);
}

// Byte counts above 2^53 are printed exactly (a double would round them).
TEST(RenderJsonTest, IntegersAreExact) {
  GraphBuilder b("big");
  b.Weight("w", {int64_t{18014398509481985}}, "int8");  // 2^54 + 1 bytes
  b.Tensor("y", {int64_t{18014398509481985}}, "int8");
  b.Node("neg", OpKind::kNeg, {"w"}, {"y"});
  const std::string json = RenderJson(Report(b.Build()));
  EXPECT_NE(json.find("\"bytes_read\":18014398509481985"), std::string::npos);
  EXPECT_NE(json.find("\"bytes\":36028797018963970"), std::string::npos);  // 2·(2^54 + 1)
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json).value();
  EXPECT_EQ(doc["totals"]["bytes_weights"].get_uint64().value(), uint64_t{18014398509481985});
}

TEST(RenderJsonTest, NamesAreEscaped) {
  GraphBuilder b("quote\"back\\slash\nnewline\ttab\x01");
  b.Input("x", {4});
  b.Tensor("y", {4});
  b.Node("we\"ird\\name", OpKind::kNeg, {"x"}, {"y"});
  const std::string json = RenderJson(Report(b.Build()));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  EXPECT_EQ(doc["model"].get_string().value(), "quote\"back\\slash\nnewline\ttab\x01");
  EXPECT_EQ(doc["nodes"].at(0)["name"].get_string().value(), "we\"ird\\name");
}

TEST(RenderJsonTest, Deterministic) {
  const ir::Graph g = Mixed();
  const std::string a = RenderJson(Report(g));
  const std::string b = RenderJson(Report(g));
  EXPECT_EQ(a, b);
  EXPECT_EQ(RenderText(Report(g)), RenderText(Report(g)));
  EXPECT_EQ(a.back(), '\n');
}

// ---- Empty graph ---------------------------------------------------------------------------

TEST(ReportTest, EmptyGraphReportsCleanly) {
  ir::Graph g;
  g.name = "empty";
  const ReportModel m = Report(g);
  EXPECT_TRUE(m.nodes.empty());
  EXPECT_TRUE(m.by_op.empty());
  const std::string text = RenderText(m);
  EXPECT_NE(text.find("opscope: empty"), std::string::npos) << text;
  EXPECT_NE(text.find("bytes moved (lower bound)"), std::string::npos) << text;
  EXPECT_NE(text.find("0 (0 costed)"), std::string::npos) << text;
  EXPECT_EQ(text.find("nan"), std::string::npos) << text;
  EXPECT_EQ(text.find("inf"), std::string::npos) << text;
  const std::string json = RenderJson(m);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(json).get(doc), simdjson::SUCCESS) << json;
  EXPECT_EQ(doc["nodes"].get_array().value().size(), 0u);
  EXPECT_EQ(doc["totals"]["bytes"].get_uint64().value(), 0u);
  EXPECT_EQ(doc["totals"]["intensity"].get_double().value(), 0.0);
  EXPECT_EQ(doc["totals"]["fused_floor_s"].get_double().value(), 0.0);
}

// ---- Text ----------------------------------------------------------------------------------

TEST(RenderTextTest, HumanUnitsAndSections) {
  // 375,000,000 f32 elements: 1.5 GB read, 1.5 GB written, 375 MFLOP; 3 ms at 1 TB/s.
  GraphBuilder b("units");
  b.Input("x", {375000000});
  b.Tensor("y", {375000000});
  b.Input("d", {"n"});
  b.Tensor("z", {"n"});
  b.Node("neg", OpKind::kNeg, {"x"}, {"y"});
  b.Node("pending", OpKind::kNeg, {"d"}, {"z"});
  const std::string text = RenderText(Report(b.Build()));
  for (const char* part : {"opscope: units on test-device", "bytes moved (lower bound)   3.00 GB",
                           "read 1.50 GB, written 1.50 GB", "375 MFLOP", "3.00 ms",
                           "1.00 TB/s DRAM", "not costed (1)",
                           "pending (Neg): dim 'n' of tensor 'd' is not bound",
                           "top 1 nodes by time and by traffic", "by op kind", "memory-bound traffic"}) {
    EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' missing from:\n" << text;
  }
  EXPECT_EQ(text.find("\x1b["), std::string::npos);  // no colour unless asked
  EXPECT_NE(RenderText(Report(b.Build()), TextStyle{true}).find("\x1b[1m"), std::string::npos);
}

TEST(RenderTextTest, TopListsHonourTopN) {
  GraphBuilder b("many");
  b.Input("x", {1024});
  for (int i = 0; i < 12; ++i) {
    b.Tensor("y" + std::to_string(i), {1024 * (i + 1)});
    b.Node("n" + std::to_string(i), OpKind::kTile, {"x"}, {"y" + std::to_string(i)});
  }
  const std::string text = RenderText(Report(b.Build(), {}, 3));
  // Time and traffic rank the nodes alike here: one table says so.
  EXPECT_NE(text.find("top 3 nodes by time and by traffic"), std::string::npos) << text;
  EXPECT_EQ(text.find("top 3 nodes by traffic"), std::string::npos) << text;
  // The heaviest three are n11, n10, n9; n0 is not in either list.
  EXPECT_NE(text.find(" n11\n"), std::string::npos) << text;
  EXPECT_EQ(text.find(" n0\n"), std::string::npos) << text;
}

// An MLA note is reported once however many identical layers carry it.
TEST(ReportModelTest, PerNodeNotesAreDeduplicated) {
  GraphBuilder b("mla");
  b.Input("q", {1, 4 * 96}, "bf16");
  b.State("c0", {1, 64, 1, 64 + 32}, "bf16");
  b.State("c1", {1, 64, 1, 64 + 32}, "bf16");
  b.Tensor("o0", {1, 4 * 64}, "bf16");
  b.Tensor("o1", {1, 4 * 64}, "bf16");
  const std::vector<std::pair<std::string, ir::AttrValue>> attrs = {
      {"q_heads", int64_t{4}},          {"kv_lora_rank", int64_t{64}},
      {"qk_rope_head_dim", int64_t{32}}, {"qk_nope_head_dim", int64_t{64}},
      {"v_head_dim", int64_t{64}}};
  b.Node("layers.0.attn", OpKind::kPagedAttention, {"q", "c0"}, {"o0"}, attrs);
  b.Node("layers.1.attn", OpKind::kPagedAttention, {"q", "c1"}, {"o1"}, attrs);
  const ReportModel m = Report(b.Build());
  int mla_notes = 0;
  for (const std::string& a : m.assumptions) mla_notes += a.find("MLA") != std::string::npos;
  EXPECT_EQ(mla_notes, 1);
}

}  // namespace
}  // namespace opscope::report
