// Issue 12, items 5, 6, 8 (the request's prompt) and 9, and model_type as people type it: the
// reports say what they mean — the KV cache and recurrent state apart, identical layers
// grouped, one top table when time and traffic agree, a prefill's prompt, numbers without
// exponents, a deployment's block, links and bound the same in every format — and warn
// where the figures will mislead (positions past max_position_embeddings, a step far under
// a kernel launch per node, a --prompt a decode step does not use).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "import/hf_config/model_spec.h"
#include "report/node_groups.h"
#include "report/svg_canvas.h"
#include "testing/run_binary.h"

namespace opscope {
namespace {

using testing::Outcome;

Outcome Opscope(const std::string& line) { return testing::RunOpscope(testing::Args(line)); }

bool Has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

simdjson::dom::element Json(simdjson::dom::parser& parser, const std::string& line) {
  const Outcome o = Opscope(line + " --format json");
  EXPECT_EQ(o.status, 0) << line << "\n" << o.err;
  return parser.parse(o.out).value();
}

std::vector<std::string> Warnings(simdjson::dom::element doc) {
  std::vector<std::string> out;
  simdjson::dom::array warnings;
  if (doc["warnings"].get(warnings) != simdjson::SUCCESS) return out;
  for (simdjson::dom::element w : warnings) out.emplace_back(w.get_string().value());
  return out;
}

bool AnyHas(const std::vector<std::string>& lines, std::string_view part) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return Has(l, part); });
}

// ---- Identical layers grouped (item 6) -------------------------------------------------------

report::NodeRow Row(const std::string& name, uint64_t bytes_read, double time_s) {
  report::NodeRow n;
  n.name = name;
  n.op = "Linear";
  n.costed = true;
  n.bytes_read = bytes_read;
  n.time_s = time_s;
  n.bound = "memory";
  n.mma_class = "bf16";
  return n;
}

TEST(NodeGroups, IdenticalLayersBecomeOneRowWithTheirRangeAndSums) {
  std::vector<report::NodeRow> rows;
  for (int layer = 3; layer <= 60; ++layer) rows.push_back(Row("layers." + std::to_string(layer) + ".moe.up", 100, 1e-6));
  rows.push_back(Row("layers.61.moe.up", 200, 2e-6));  // other figures: its own row
  rows.push_back(Row("conv3", 100, 1e-6));             // "3" is part of a word, not a layer
  rows.push_back(Row("conv4", 100, 1e-6));
  const std::vector<report::NodeGroup> groups = report::GroupIdenticalNodes(rows);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].name, "layers.3\u201360.moe.up");
  EXPECT_EQ(groups[0].nodes.size(), 58u);       // 60 − 3 + 1
  EXPECT_EQ(groups[0].bytes, 58u * 100u);       // summed
  EXPECT_NEAR(groups[0].time_s, 58 * 1e-6, 1e-15);  // a sum of 58 doubles
  EXPECT_EQ(groups[1].name, "layers.61.moe.up");
  EXPECT_EQ(groups[2].name, "conv3");
  EXPECT_EQ(groups[3].name, "conv4");
}

// A run of more than 9 digits is not a layer number (and reading one must not overflow: found by
// fuzz_graph_json under UBSan with a 19-digit component); nodes named with it stay apart.
TEST(NodeGroups, LongDigitRunsAreNotLayerNumbers) {
  std::vector<report::NodeRow> rows;
  rows.push_back(Row("layers.99999999999999999999999.up", 100, 1e-6));
  rows.push_back(Row("layers.77777777777777777777777.up", 100, 1e-6));
  rows.push_back(Row("layers.999999998.up", 100, 1e-6));  // 9 digits: a layer number
  rows.push_back(Row("layers.999999999.up", 100, 1e-6));
  const std::vector<report::NodeGroup> groups = report::GroupIdenticalNodes(rows);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].name, "layers.99999999999999999999999.up");
  EXPECT_EQ(groups[1].name, "layers.77777777777777777777777.up");
  EXPECT_EQ(groups[2].nodes.size(), 2u);
  EXPECT_EQ(groups[2].name, "layers.999999998\u2013999999999.up");
}

TEST(NodeGroups, IndexRangesAsTheNameShowsThem) {
  EXPECT_EQ(report::IndexRanges(std::vector<int64_t>{3, 4, 5}), "3\u20135");
  EXPECT_EQ(report::IndexRanges(std::vector<int64_t>{0, 1, 2, 4, 6, 7, 8, 9}), "0\u20132,4,6\u20139");
  // Every fourth layer: an arithmetic run of more than three pieces shows its step.
  EXPECT_EQ(report::IndexRanges(std::vector<int64_t>{3, 7, 11, 15, 19}), "3,7,\u2026,19");
  EXPECT_EQ(report::IndexRanges(std::vector<int64_t>{0, 2, 3, 9, 20}), "0,\u2026,20");
}

TEST(ReportText, DecodeGroupsTheMoeLayersAndPrintsOneTableWhenTheRankingsAgree) {
  // DeepSeek-V3: layers 0-2 dense, 3-60 MoE (first_k_dense_replace 3, 61 layers).
  const Outcome o = Opscope("llm deepseek-v3 --device h200 --tp 8 --ep 8 --batch 64");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(Has(o.out, "layers.3\u201360.moe.experts.gate_up \u00d758\n")) << o.out;
  // No table lists one of 58 identical layers on its own.
  EXPECT_FALSE(Has(o.out, " layers.4.moe.experts.gate_up\n")) << o.out;
  // The mlp golden's five nodes rank the same by time and by traffic: one table, said so.
  const Outcome mlp = Opscope("analyze tests/golden/mlp.json --device tests/golden/device.json --dim n=4");
  EXPECT_TRUE(Has(mlp.out, "top 5 nodes by time and by traffic\n")) << mlp.out;
  EXPECT_FALSE(Has(mlp.out, "nodes by traffic\n        time")) << mlp.out;
}

// ---- KV cache and recurrent state apart (item 6) ---------------------------------------------

TEST(ReportState, KvCacheAndRecurrentStateAreNamedApartAndAddUp) {
  // Qwen3-Next: full-attention layers (a KV cache) and Gated DeltaNet layers (recurrent state).
  const std::string run = "llm qwen3-next-80b-a3b-thinking --batch 2 --context 4096";
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = Json(parser, run);
  const auto totals = doc["totals"];
  const uint64_t kv = totals["bytes_kv_cache"].get_uint64().value();
  const uint64_t recurrent = totals["bytes_recurrent_state"].get_uint64().value();
  EXPECT_EQ(kv + recurrent, totals["bytes_state"].get_uint64().value());  // no other state
  const uint64_t kv_per_token = doc["llm"]["kv_bytes_per_token"].get_uint64().value();
  const uint64_t state_per_seq = doc["llm"]["state_bytes_per_seq"].get_uint64().value();
  // A decode step reads the 4096 cached tokens and writes the new one, per sequence.
  EXPECT_EQ(kv, 2 * (4096 + 1) * kv_per_token);
  // Recurrent state is read once and written once per step (issue 12 item 1), per sequence.
  EXPECT_EQ(recurrent, 2 * 2 * state_per_seq);
  const Outcome text = Opscope(run);
  EXPECT_TRUE(Has(text.out, "    of which KV cache ")) << text.out;
  EXPECT_TRUE(Has(text.out, "    of which recurrent state ")) << text.out;
  EXPECT_FALSE(Has(text.out, "of which state")) << text.out;
  EXPECT_TRUE(Has(text.out, "KV cache bf16, recurrent state bf16")) << text.out;
}

// ---- A prefill shows its prompt (item 6); the request's prompt in decode (item 8) -----------

TEST(ReportWorkload, PrefillShowsThePromptNotAnEmptyContext) {
  const Outcome o = Opscope("llm llama-3.1-8b --phase prefill --batch 2 --prompt 512");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(Has(o.out, "  workload         n=1024, seqs=2, prompt=512\n")) << o.out;
  EXPECT_FALSE(Has(o.out, "ctx=0")) << o.out;
  const Outcome svg = Opscope("llm llama-3.1-8b --phase prefill --batch 2 --prompt 512 --format svg");
  EXPECT_TRUE(Has(svg.out, "prefill n=1024, seqs=2, prompt=512</text>")) << svg.out.substr(0, 800);
}

TEST(RequestPrompt, DecodeWithGenLenPrefillsThePromptThenDecodesFromIt) {
  simdjson::dom::parser p1, p2, p3;
  const auto short_prompt = Json(p1, "llm llama-3.1-8b --batch 4 --gen-len 10 --prompt 100");
  const auto long_prompt = Json(p2, "llm llama-3.1-8b --batch 4 --gen-len 10 --prompt 8000");
  // TTFT is the prefill of the prompt: the prefill step of 4 × 8000 tokens, as its own run.
  const auto prefill = Json(p3, "llm llama-3.1-8b --phase prefill --batch 4 --prompt 8000");
  const double ttft_long = long_prompt["llm"]["ttft_s"].get_double().value();
  EXPECT_LT(short_prompt["llm"]["ttft_s"].get_double().value(), ttft_long);
  EXPECT_DOUBLE_EQ(ttft_long, prefill["llm"]["step_time_s"].get_double().value());
  // --context keeps meaning the single step reported (4096 by default).
  EXPECT_EQ(long_prompt["workload"]["ctx"].get_int64().value(), 4096);
  // Without --gen-len a decode step does not use --prompt, and says so.
  const Outcome unused = Opscope("llm llama-3.1-8b --prompt 100");
  EXPECT_EQ(unused.status, 0);
  EXPECT_TRUE(Has(unused.err, "opscope: warning: option '--prompt': a decode step without --gen-len "
                              "does not use it"))
      << unused.err;
}

// ---- Numbers for people, never exponents (item 6) --------------------------------------------

TEST(PlainNumbers, NeverAnExponent) {
  EXPECT_EQ(report::PlainNumber(2890.4), "2.89k");
  EXPECT_EQ(report::PlainNumber(0.000123), "0.000123");
  EXPECT_EQ(report::PlainNumber(1.5e6), "1.5M");
  EXPECT_EQ(report::PlainNumber(0), "0");
  EXPECT_EQ(report::PlainNumber(-42), "-42");
  EXPECT_EQ(report::PlainNumberLabel(12500), "12.5k");
  EXPECT_EQ(report::FlopRateLabel(989.4e12), "989.4 TFLOP/s");
}

// What people read — every <text>, <title>, <th> and <td> of an SVG or HTML page — free of
// "2.89e+03"-style numbers (the page's script and style are not read).
void ExpectNoExponents(const std::string& markup, const std::string& what) {
  static const std::regex kElement(R"(<(text|title|th|td)\b[^>]*>([^<]*)<)");
  static const std::regex kExponent(R"([0-9]e[+-]?[0-9])");
  size_t elements = 0;
  for (auto it = std::sregex_iterator(markup.begin(), markup.end(), kElement);
       it != std::sregex_iterator(); ++it) {
    ++elements;
    const std::string content = (*it)[2].str();
    EXPECT_FALSE(std::regex_search(content, kExponent)) << what << ": " << content;
  }
  EXPECT_GT(elements, 10u) << what;
}

TEST(PlainNumbers, SweepAndReportChartsPrintNoExponents) {
  const Outcome sweep = Opscope("sweep llm llama-3.1-8b --batch 1,8,64 --context 1024 --format svg");
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  ExpectNoExponents(sweep.out, "sweep svg");
  const Outcome report = Opscope("llm llama-3.1-8b --batch 64 --format html");
  ASSERT_EQ(report.status, 0) << report.err;
  ExpectNoExponents(report.out, "llm html");
}

// ---- A deployment's report shows it (item 5) -------------------------------------------------

// Qwen3-235B-A22B (the Qwen3-VL text model) on 8 × H200, TP=8, batch 64: the case the issue
// found (the page dropped the deployment; the all-reduces were a dot in a corner).
const char kTp8[] = "llm qwen3-vl-235b-a22b-thinking --tp 8 --device h200 --batch 64";

TEST(DeploymentReport, EveryFormatSaysTheSameBoundAndShowsTheCommunication) {
  simdjson::dom::parser parser;
  const auto doc = Json(parser, kTp8);
  const std::string bound(doc["totals"]["floor_bound"].get_string().value());
  EXPECT_GT(doc["totals"]["bytes_link"].get_uint64().value(), 0u);
  const Outcome text = Opscope(kTp8);
  EXPECT_TRUE(Has(text.out, "(bound by " + bound + ";")) << text.out;
  EXPECT_TRUE(Has(text.out, "  communication    ")) << text.out;
  const Outcome html = Opscope(std::string(kTp8) + " --format html");
  ASSERT_EQ(html.status, 0) << html.err;
  EXPECT_TRUE(Has(html.out, "<tr><th>bound by</th><td>" + bound + " (")) << "HTML disagrees";
  EXPECT_TRUE(Has(html.out, "<title>opscope: qwen3-vl-235b-a22b-thinking on 8 \u00d7 h200 (tp 8)"));
  EXPECT_TRUE(Has(html.out, "<table class=\"summary\" id=\"deployment\">"));
  EXPECT_TRUE(Has(html.out, "<tr><th>communication</th><td>"));
  EXPECT_TRUE(Has(html.out, "<th class=\"n\" data-key=\"bytes_link\">link bytes</th>"));
  const Outcome svg = Opscope(std::string(kTp8) + " --format svg");
  EXPECT_TRUE(Has(svg.out, "on 8 \u00d7 h200 (tp 8)")) << "the chart's title names the deployment";
  EXPECT_TRUE(Has(svg.out, "; bound by " + bound + ";"));
  EXPECT_TRUE(Has(svg.out, "class=\"link-roof\" data-link=\"interconnect\""));
  EXPECT_TRUE(Has(svg.out, "data-op=\"AllReduce\" data-link=\"interconnect\""));
  EXPECT_TRUE(Has(svg.out, "<g class=\"deployment\">"));
  // The by-op rows of the collectives carry their link bytes.
  bool all_reduce = false;
  for (simdjson::dom::element r : doc["by_op"].get_array()) {
    if (std::string_view(r["op"].get_string().value()) != "AllReduce") continue;
    all_reduce = true;
    EXPECT_GT(r["bytes_link"].get_uint64().value(), 0u);
  }
  EXPECT_TRUE(all_reduce);
}

// ---- Warnings where the answer will mislead (item 9) -----------------------------------------

TEST(Warnings, PositionsPastMaxPositionEmbeddingsNameTheFieldAndItsValue) {
  // tests/fixtures/hf/llama-3.1-8b/config.json: "max_position_embeddings": 131072.
  const std::string model = "llm tests/fixtures/hf/llama-3.1-8b";
  const Outcome context = Opscope(model + " --context 1000000");
  EXPECT_EQ(context.status, 0) << context.err;
  EXPECT_TRUE(Has(context.err, "opscope: warning: option '--context': a decode step at context 1000000 "
                               "attends over 1000001 positions, more than the model's "
                               "max_position_embeddings (131072)\n"))
      << context.err;
  const Outcome gen = Opscope(model + " --prompt 100 --gen-len 200000");
  EXPECT_TRUE(Has(gen.err, "option '--gen-len': the request reaches 200100 positions (prompt 100 + "
                           "200000 generated), more than the model's max_position_embeddings (131072)"))
      << gen.err;
  const Outcome prompt = Opscope(model + " --phase prefill --prompt 200000");
  EXPECT_TRUE(Has(prompt.err, "option '--prompt': a prompt of 200000 tokens is more positions than "
                              "the model's max_position_embeddings (131072)"))
      << prompt.err;
  simdjson::dom::parser parser;
  EXPECT_TRUE(AnyHas(Warnings(Json(parser, model + " --context 1000000")), "max_position_embeddings (131072)"));
  // Within the limit: nothing said (131071 cached + the new token = 131072 positions).
  EXPECT_EQ(Opscope(model + " --context 131071").err, "");
}

TEST(Warnings, AStepFarUnderAKernelLaunchPerNodeSaysLaunchOverheadIsNotModelled) {
  simdjson::dom::parser p1, p2;
  // gpt2.onnx-sized toy: five nodes, 437 ns in all, 87 ns per node.
  const auto mlp = Json(p1, "analyze tests/golden/mlp.json --device tests/golden/device.json --dim n=4");
  EXPECT_TRUE(AnyHas(Warnings(mlp), "437 ns over 5 nodes (87.3 ns per node, under ~5.00 us): launch "
                                    "overhead not modelled; real time is dominated by it"));
  // Llama-3.1-8B decode on an H100: 4.64 ms over 388 nodes, ~12 us per node: no warning.
  const auto llama = Json(p2, "llm llama-3.1-8b");
  EXPECT_FALSE(AnyHas(Warnings(llama), "launch overhead"));
  EXPECT_EQ(Opscope("llm llama-3.1-8b").err, "");
}

// The predicted block of a batch the devices cannot hold says so beside its figures (the
// serving block's "does NOT fit" is a screen above them); a batch that fits says nothing.
TEST(Predicted, ABatchMemoryCannotHoldIsSaidBesideTheFigures) {
  const Outcome big = Opscope("llm llama-3.1-70b --device h100-sxm --batch 8 --gen-len 16");
  ASSERT_EQ(big.status, 0) << big.err;
  const std::string predicted = big.out.substr(big.out.find("predicted (engine"));
  EXPECT_TRUE(Has(predicted, "  memory fit       does NOT fit (max batch 0 at this context): "
                             "the figures are of a run the devices cannot hold"))
      << predicted;
  const Outcome fits = Opscope("llm llama-3.1-70b --device h100-sxm --tp 4 --batch 8 --gen-len 16");
  ASSERT_EQ(fits.status, 0) << fits.err;
  EXPECT_FALSE(Has(fits.out, "does NOT fit")) << fits.out;
}

// A draft model's weights and KV share the decoding devices: a batch the target holds alone but
// not beside its draft fits in the serving block and does NOT fit in the predicted one, which
// gives the fit with the drafter (JSON llm.predicted.dynamics.drafter_memory).
TEST(Predicted, ABatchThatFitsOnlyWithoutItsDraftIsSaidNotToFit) {
  const std::string line = "llm llama-3.1-70b --device h200 --tp 4 --context 8192 --gen-len 16 "
                           "--speculative draft:4 --draft-model llama-3.1-8b --acceptance 0.7";
  simdjson::dom::parser parser;
  const auto doc = Json(parser, line);
  const uint64_t alone = doc["llm"]["max_batch"].get_uint64().value();
  const auto memory = doc["llm"]["predicted"]["dynamics"]["drafter_memory"];
  const uint64_t beside = memory["max_batch"].get_uint64().value();
  EXPECT_TRUE(memory["fits"].get_bool().value());
  EXPECT_GT(memory["weight_bytes"].get_uint64().value(), 0u);
  ASSERT_LT(beside + 1, alone);  // the premise: the draft takes room
  const Outcome crowded = Opscope(line + " --batch " + std::to_string(beside + 1));
  ASSERT_EQ(crowded.status, 0) << crowded.err;
  const size_t at = crowded.out.find("predicted (engine");
  ASSERT_NE(at, std::string::npos);
  EXPECT_TRUE(Has(crowded.out.substr(0, at), "; fits")) << crowded.out;
  EXPECT_TRUE(Has(crowded.out.substr(at), "  memory fit       max batch " +
                                              std::to_string(beside) + " with the drafter ("))
      << crowded.out;
  EXPECT_TRUE(Has(crowded.out.substr(at), "does NOT fit: the figures are of a run the devices "
                                          "cannot hold"))
      << crowded.out;
}

// ---- model_type as people type it ------------------------------------------------------------

std::string LlamaConfig(const std::string& model_type) {
  std::ifstream in(std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/hf/llama-3.1-8b/config.json");
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  const std::string field = "\"model_type\": \"llama\"";
  const size_t at = text.find(field);
  EXPECT_NE(at, std::string::npos);
  if (at != std::string::npos) text.replace(at, field.size(), "\"model_type\": \"" + model_type + "\"");
  return text;
}

TEST(ModelType, MatchedInAnyCaseWithTheCanonicalSpellingInTheAssumptions) {
  for (const char* typed : {"Llama", "LLAMA"}) {
    const auto spec = import::hf::ParseHfConfig(LlamaConfig(typed), "config.json");
    ASSERT_TRUE(spec.has_value()) << typed << ": " << spec.error().message;
    EXPECT_EQ(spec->model_type, "llama");
    EXPECT_NE(std::find(spec->assumptions.begin(), spec->assumptions.end(),
                        "model_type '" + std::string(typed) + "' read as 'llama'"),
              spec->assumptions.end())
        << typed;
  }
  // The canonical spelling says nothing.
  const auto exact = import::hf::ParseHfConfig(LlamaConfig("llama"), "config.json");
  ASSERT_TRUE(exact.has_value());
  for (const std::string& a : exact->assumptions) EXPECT_FALSE(Has(a, "read as")) << a;
  // --model-type in another case reads as its row too.
  import::hf::ParseOptions options;
  options.model_type = "MISTRAL";
  const auto as_mistral = import::hf::ParseHfConfig(LlamaConfig("llama"), "config.json", options);
  ASSERT_TRUE(as_mistral.has_value()) << as_mistral.error().message;
  EXPECT_NE(std::find(as_mistral->assumptions.begin(), as_mistral->assumptions.end(),
                      "model_type 'llama' read as 'mistral' (--model-type)"),
            as_mistral->assumptions.end());
  // A misspelling is still an error, with the nearest type.
  const auto typo = import::hf::ParseHfConfig(LlamaConfig("lama"), "config.json");
  ASSERT_FALSE(typo.has_value());
  EXPECT_TRUE(Has(typo.error().message, "field 'model_type': \"lama\" is not supported; did you mean 'llama'?"))
      << typo.error().message;
}

}  // namespace
}  // namespace opscope
