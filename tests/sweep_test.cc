// Sweeps: DESIGN's LIST syntax, the compiled step plan against the full analysis (bit-equal
// step times, equal bounds across dense, MoE, MLA, sliding-window, hybrid and SSM models, both
// phases, several recipes), the sweep runner against `opscope llm` (llm::RunLlm), the grid's
// option checks, and the CLI: sweep rows
// against individual `opscope llm` runs, and bad LISTs named in the error.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <array>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <numeric>
#include <string>
#include <vector>

#include "device/device.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "llm/llm.h"
#include "llm/predicted.h"
#include "llm/serving.h"
#include "report/render.h"
#include "sweep/step_plan.h"
#include "sweep/sweep.h"
#include "sweep/sweep_list.h"
#include "sweep/sweep_list.h"
#include "testing/run_binary.h"

namespace opscope::sweep {
namespace {

// ---- LIST syntax -------------------------------------------------------------------------

TEST(SweepList, ValuesRangesAndSteps) {
  EXPECT_EQ(*ParseIntList("--batch", "1,2,4,8"), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(ParseIntList("--context", "512..4607")->size(), 4096u);
  EXPECT_EQ(ParseIntList("--context", "512..4607")->back(), 4607);
  const auto stepped = *ParseIntList("--context", "1024..32768:1024");
  EXPECT_EQ(stepped.size(), 32u);
  EXPECT_EQ(stepped.front(), 1024);
  EXPECT_EQ(stepped.back(), 32768);
  EXPECT_EQ(*ParseIntList("--batch", "1..10:4,64"), (std::vector<int64_t>{1, 5, 9, 64}));
  EXPECT_EQ(*ParseIntList("--batch", "7"), (std::vector<int64_t>{7}));
}

TEST(SweepList, BadListsNameTheOptionAndItem) {
  struct Case {
    const char* text;
    const char* fragment;
  };
  for (const Case& c : {Case{"", "''"}, Case{"1,,2", "''"}, Case{"0", "'0'"}, Case{"-3", "'-3'"},
                        Case{"4..2", "'4..2'"}, Case{"1..8:0", "'1..8:0'"},
                        Case{"1..x", "'1..x'"}, Case{"2,2", "repeats 2"}, Case{"1.5", "'1.5'"},
                        Case{"99999999999999999999", "'99999999999999999999'"}}) {
    auto r = ParseIntList("--batch", c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_NE(r.error().message.find("option '--batch'"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(c.fragment), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(ParseIntList("--context", "1..100", 50));
  EXPECT_FALSE(ParseNameList("--device", "h100-sxm,,h200"));
  EXPECT_EQ(ParseNameList("--device", "h100-sxm,h200")->size(), 2u);
}

// --disagg LIST: "agg" or P:D per item, as `opscope llm --disagg` reads P:D.
TEST(SweepList, DisaggLists) {
  const auto splits = ParseDisaggList("agg,1:1,2:6");
  ASSERT_TRUE(splits) << splits.error().message;
  ASSERT_EQ(splits->size(), 3u);
  EXPECT_FALSE((*splits)[0]);
  EXPECT_EQ((*splits)[1]->prefill_workers, 1);
  EXPECT_EQ((*splits)[2]->prefill_workers, 2);
  EXPECT_EQ((*splits)[2]->decode_workers, 6);
  for (const auto& [text, fragment] : std::vector<std::pair<const char*, const char*>>{
           {"1:1,,2:2", "empty item"}, {"1", "got '1'"}, {"1:0", "got '1:0'"},
           {"1:1,agg,1:1", "'1:1' is listed twice"}, {"x:y", "got 'x:y'"}}) {
    auto r = ParseDisaggList(text);
    ASSERT_FALSE(r) << text;
    EXPECT_TRUE(r.error().message.starts_with("option '--disagg': ")) << r.error().message;
    EXPECT_NE(r.error().message.find(fragment), std::string::npos) << r.error().message;
  }
}

// ---- The plan equals the full analysis ----------------------------------------------------

struct Model {
  import::hf::ModelSpec spec;
  import::hf::Recipe recipe;
  import::hf::StepGraph step;
};

Model Load(const std::string& preset, std::optional<std::string> weights = std::nullopt,
           std::optional<std::string> activations = std::nullopt) {
  const import::hf::Preset* p = import::hf::FindPreset(preset);
  EXPECT_NE(p, nullptr) << preset;
  auto spec = import::hf::ParseHfConfig(p->json, preset);
  EXPECT_TRUE(spec) << spec.error().message;
  auto recipe = import::hf::ResolveRecipe(*spec, {weights, activations, std::nullopt, std::nullopt});
  EXPECT_TRUE(recipe) << recipe.error().message;
  auto step = import::hf::BuildStepGraph(*spec, *recipe);
  EXPECT_TRUE(step) << step.error().message;
  return Model{std::move(*spec), std::move(*recipe), std::move(*step)};
}

struct Case {
  const char* preset;
  std::optional<std::string> weights, activations;
  const char* device;
};

// Decode (batch, context) and prefill (batch, prompt) points, including both sides of the
// sliding windows the presets use (128, 512, 1024, 4096) and of MLA's form switch.
const std::vector<std::pair<int64_t, int64_t>> kDecodePoints = {
    {1, 1},     {1, 4096},  {3, 4095},  {16, 4607}, {7, 127},   {7, 128},  {7, 129},
    {2, 511},   {2, 512},   {2, 513},   {5, 1023},  {5, 1024},  {5, 1025}, {9, 4096},
    {9, 4097},  {64, 32768}, {128, 1},  {33, 777}};
const std::vector<std::pair<int64_t, int64_t>> kPrefillPoints = {
    {1, 1},   {1, 2},    {1, 512},  {2, 1000}, {4, 4096}, {1, 8192}, {3, 333},
    {1, 127}, {1, 129},  {2, 4097}, {1, 300},  {1, 400},  {2, 1025}};

class PlanEqualsAnalysis : public ::testing::TestWithParam<Case> {};

TEST_P(PlanEqualsAnalysis, StepTimeAndBoundBitForBit) {
  const Case& c = GetParam();
  Model m = Load(c.preset, c.weights, c.activations);
  auto device = device::ResolveDevice(c.device);
  ASSERT_TRUE(device) << device.error().message;
  auto plan = StepPlan::Compile(m.step.graph);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_LT((*plan)->stats().distinct, m.step.graph.nodes.size());
  for (bool prefill : {false, true}) {
    for (const auto& [b, x] : prefill ? kPrefillPoints : kDecodePoints) {
      const cost::Workload w = prefill ? llm::PrefillBindings(b, x) : llm::DecodeBindings(b, x);
      auto full = llm::AnalyzeStep(m.step, w, *device);
      ASSERT_TRUE(full) << full.error().message;
      const Point p = prefill ? Point{b * x, b, 0} : Point{b, b, x};
      auto t = (*plan)->Time(p, *device);
      ASSERT_TRUE(t) << t.error().message;
      ASSERT_TRUE(t->has_value()) << c.preset << " " << b << " " << x;
      const std::string where = std::string(c.preset) + (prefill ? " prefill " : " decode ") +
                                std::to_string(b) + " x " + std::to_string(x);
      EXPECT_EQ((*t)->time_s, full->analysis.totals.time_s) << where;  // exact, not near
      double memory_s = 0, compute_s = 0;
      for (const roofline::NodeTime& n : full->analysis.nodes) {
        if (n.bound == roofline::Bound::kMemory) memory_s += n.time_s;
        if (n.bound == roofline::Bound::kCompute) compute_s += n.time_s;
      }
      EXPECT_EQ((*t)->compute_bound, compute_s > memory_s) << where;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Models, PlanEqualsAnalysis,
    ::testing::Values(Case{"llama-2-7b-hf", {}, {}, "h100-sxm"},
                      Case{"llama-3.1-8b", std::string("q4_k_m"), {}, "m4-max"},
                      Case{"llama-3.1-8b", std::string("fp8_e4m3"), std::string("fp8_e4m3"), "h200"},
                      Case{"llama-3.1-8b", std::string("nvfp4"), std::string("nvfp4"), "b200"},
                      Case{"qwen3-30b-a3b", {}, {}, "h100-sxm"},
                      Case{"mixtral-8x7b", {}, {}, "a100-80g"},
                      Case{"deepseek-v3", {}, {}, "h200"},
                      Case{"gpt-oss-20b", {}, {}, "h100-sxm"},
                      Case{"gemma-2-9b-it", {}, {}, "l40s"},
                      Case{"gemma-3-27b-it", {}, {}, "h100-sxm"},
                      Case{"qwen3-next-80b-a3b-thinking", {}, {}, "b200"},
                      Case{"mamba-codestral-7b-v0.1", {}, {}, "rtx-4090"},
                      Case{"nemotron-h-8b-base-8k", {}, {}, "h100-sxm"}),
    [](const ::testing::TestParamInfo<Case>& param) {
      std::string name = std::string(param.param.preset) + "_" + param.param.weights.value_or("default");
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return name;
    });

TEST(StepPlan, DenseLayersCompileToClosedFormsAndRepeatOnce) {
  Model m = Load("llama-2-7b-hf");
  auto plan = StepPlan::Compile(m.step.graph);
  ASSERT_TRUE(plan);
  const PlanStats& s = (*plan)->stats();
  EXPECT_EQ(s.nodes, m.step.graph.nodes.size());
  // 32 identical layers: one layer's nodes + embedding, final norm, gather, LM head.
  EXPECT_LE(s.distinct, s.nodes / 16);
  EXPECT_EQ(s.rule_per_point, 1u);  // select_last_tokens: min(rows, whole input)
}

// A block of points costs each point as a point alone does (and so as the full analysis):
// blocks that vary ctx (decode sweeps), rows per sequence (prefill sweeps), or both.
TEST(StepPlan, BlocksEqualSinglePoints) {
  for (const char* preset : {"llama-2-7b-hf", "deepseek-v3", "gemma-2-9b-it", "gpt-oss-20b",
                             "qwen3-next-80b-a3b-thinking"}) {
    Model m = Load(preset);
    const device::Device device = *device::ResolveDevice("h100-sxm");
    auto plan = StepPlan::Compile(m.step.graph);
    ASSERT_TRUE(plan) << plan.error().message;
    auto single = StepPlan::Compile(m.step.graph);  // fresh memo and fold caches
    ASSERT_TRUE(single);
    std::vector<std::vector<Point>> blocks(5);
    for (int64_t i = 0; i < int64_t{StepPlan::kBlock}; ++i) {
      blocks[0].push_back({4, 4, 100 + 67 * i});            // decode, ctx varies
      blocks[1].push_back({3 * (1 + 97 * i), 3, 0});        // prefill, rows per sequence vary
      blocks[2].push_back({2 + i, 2 + i, 4000 - 31 * i});   // everything varies
      blocks[3].push_back({1 + 5 * i, 1 + 5 * i, 4096});    // decode, sequences vary
      blocks[4].push_back({(1 + i) * 700, 1 + i, 0});       // prefill, sequences vary
    }
    for (const std::vector<Point>& block : blocks) {
      std::vector<std::optional<StepTiming>> out(block.size());
      ASSERT_TRUE((*plan)->TimeBlock(block, device, out));
      for (size_t i = 0; i < block.size(); ++i) {
        auto t = (*single)->Time(block[i], device);
        ASSERT_TRUE(t && out[i].has_value() && t->has_value()) << preset << " lane " << i;
        EXPECT_EQ(out[i]->time_s, (*t)->time_s) << preset << " lane " << i;
        EXPECT_EQ(out[i]->compute_bound, (*t)->compute_bound) << preset << " lane " << i;
      }
      // And one lane against the full analysis directly.
      const Point& p = block[37];
      auto full = llm::AnalyzeStep(m.step, {{{"n", p.n}, {"seqs", p.seqs}, {"ctx", p.ctx}}}, device);
      ASSERT_TRUE(full) << full.error().message;
      EXPECT_EQ(out[37]->time_s, full->analysis.totals.time_s) << preset;
    }
  }
}

// ---- The runner equals `opscope llm` -------------------------------------------------------

// A preset, opened as `opscope llm` opens it (the sweep tests' input).
llm::Model PresetModel(const char* preset) {
  auto model = llm::OpenModel(preset);
  EXPECT_TRUE(model) << model.error().message;
  return std::move(*model);
}

// A sweep of `model` at the config's own weights on `devices`; the caller sets the grid.
SweepSpec SweepOf(const llm::Model& model, std::initializer_list<const char*> devices) {
  SweepSpec s;
  s.model = &model;
  for (const char* d : devices) s.devices.push_back(*device::ResolveDevice(d));
  s.weights = {std::nullopt};
  return s;
}

// The `opscope llm` request of one row's point (its --gen-len the row's).
llm::Request RequestAt(const llm::Model& model, const SweepSpec& s, const SweepResult& rep,
                       const SweepRow& row) {
  llm::Request r;
  r.model = model.name;
  r.recipe.weights = s.weights[row.recipe];
  r.device = rep.devices[row.device];
  const SweepDeployment& d = rep.deployments[row.deployment];
  // --dp-attention as the sweep was given it (none: llm's default, as the sweep's).
  r.degrees = {d.tp, d.ep, d.pp,
               s.dp_attentions.empty() ? std::nullopt : std::optional(d.dp_attention),
               std::nullopt, std::nullopt};
  r.workload.phase = s.phase;
  r.workload.batch = row.batch;
  r.workload.context = row.context;
  r.workload.gen_len = rep.servings.at(row.serving).gen_len;
  return r;
}

// What `opscope llm` computes for one row's point (llm::RunLlm, the command's one call).
llm::Figures LlmAt(const llm::Model& model, const SweepSpec& s, const SweepResult& rep,
                   const SweepRow& row) {
  auto run = llm::RunLlm(RequestAt(model, s, rep, row));
  EXPECT_TRUE(run) << run.error().message;
  return run ? run->evaluation.figures : llm::Figures{};
}

TEST(RunSweep, RowsEqualLlm) {
  for (const char* preset : {"qwen3-30b-a3b", "gpt-oss-20b", "deepseek-v3"}) {
    const llm::Model model = PresetModel(preset);
    for (llm::Phase phase : {llm::Phase::kDecode, llm::Phase::kPrefill}) {
      SweepSpec s = SweepOf(model, {"h100-sxm", "h200"});
      s.phase = phase;
      s.batches = {1, 3, 16};
      s.contexts = {1, 127, 128, 129, 4096, 8192};
      s.weights = {std::nullopt, std::string("bf16")};
      auto rep = RunSweep(s);
      ASSERT_TRUE(rep) << rep.error().message;
      ASSERT_EQ(rep->rows.size(), 2u * 2 * 3 * 6);
      EXPECT_EQ(rep->points_by_full_analysis, 0u);
      for (const SweepRow& row : rep->rows) {
        const llm::Figures f = LlmAt(model, s, *rep, row);
        const std::string where = std::string(preset) + " " + std::to_string(row.batch) + "x" +
                                  std::to_string(row.context);
        EXPECT_EQ(row.step_time_s, f.step_time_s) << where;
        EXPECT_EQ(row.tokens_per_s, f.tokens_per_s) << where;
        EXPECT_EQ(row.max_batch, f.max_batch) << where;
        EXPECT_EQ(row.fits, f.fits) << where;
        if (phase == llm::Phase::kPrefill) {
          EXPECT_EQ(row.ttft_s, f.ttft_s) << where;
        } else {
          EXPECT_EQ(row.tpot_s, f.step_time_s) << where;
        }
      }
    }
  }
}

// Deployments: each row equals `opscope llm --tp --ep --pp` at its point, decode and prefill,
// with pipelines whose micro-batches split the batch unevenly.
TEST(RunSweep, DeploymentRowsEqualLlm) {
  for (const char* preset : {"deepseek-v3", "llama-3.1-70b-instruct"}) {
    const llm::Model model = PresetModel(preset);
    for (llm::Phase phase : {llm::Phase::kDecode, llm::Phase::kPrefill}) {
      SweepSpec s = SweepOf(model, {"h200"});
      s.phase = phase;
      s.batches = {1, 5, 64};
      s.contexts = {1, 511, 4096};
      s.tps = {1, 2};
      s.eps = {1, 8};
      s.pps = {1, 3};
      auto rep = RunSweep(s);
      ASSERT_TRUE(rep) << rep.error().message;
      EXPECT_EQ(rep->points_by_full_analysis, 0u);
      for (const SweepRow& row : rep->rows) {
        const SweepDeployment& d = rep->deployments[row.deployment];
        const std::string where = std::string(preset) + " tp " + std::to_string(d.tp) + " ep " +
                                  std::to_string(d.ep) + " pp " + std::to_string(d.pp) + " " +
                                  std::to_string(row.batch) + "x" + std::to_string(row.context);
        const llm::Figures f = LlmAt(model, s, *rep, row);
        EXPECT_EQ(row.step_time_s, f.step_time_s) << where;
        EXPECT_EQ(row.tokens_per_s, f.tokens_per_s) << where;
        EXPECT_EQ(row.max_batch, f.max_batch) << where;
        EXPECT_EQ(row.fits, f.fits) << where;
        if (phase == llm::Phase::kPrefill) {
          EXPECT_EQ(row.ttft_s, f.ttft_s) << where;
        }
      }
      // llama-3.1-70b has no experts: ep 8 is skipped, with the reason.
      const size_t deployments = std::string(preset) == "deepseek-v3" ? 8 : 4;
      EXPECT_EQ(rep->rows.size(), deployments * 3 * 3) << preset;
      EXPECT_EQ(rep->skipped.size(), 8 - deployments) << preset;
    }
  }
}

// A large grid is costed on several threads, each with its own plans: the same rows, in the
// same order, as one thread — for blocks over contexts and over batches.
TEST(RunSweep, ThreadsGiveTheSameRows) {
  const llm::Model model = PresetModel("qwen3-30b-a3b");
  SweepSpec s = SweepOf(model, {"h100-sxm"});
  for (auto [batches, contexts] : {std::pair<int64_t, int64_t>{9, 4000}, {40000, 1}}) {
    s.batches.clear();
    s.contexts.clear();
    for (int64_t b = 1; b <= batches; ++b) s.batches.push_back(b);
    for (int64_t c = 0; c < contexts; ++c) s.contexts.push_back(100 + 3 * c);
    s.threads = 1;
    auto one = RunSweep(s);
    ASSERT_TRUE(one) << one.error().message;
    s.threads = 3;
    auto three = RunSweep(s);
    ASSERT_TRUE(three) << three.error().message;
    ASSERT_EQ(one->rows.size(), static_cast<size_t>(batches * contexts));
    ASSERT_EQ(three->rows.size(), one->rows.size());
    EXPECT_EQ(three->points_by_plan, one->points_by_plan);
    for (size_t i = 0; i < one->rows.size(); ++i) {
      const SweepRow &a = one->rows[i], &b = three->rows[i];
      ASSERT_TRUE(a.batch == b.batch && a.context == b.context && a.step_time_s == b.step_time_s &&
                  a.tokens_per_s == b.tokens_per_s && a.max_batch == b.max_batch &&
                  a.compute_bound == b.compute_bound && a.fits == b.fits)
          << "row " << i;
    }
  }
}

// Few contexts and many batches: the sweep costs blocks over batches (sequences vary); rows
// still equal `opscope llm`, including batches that micro-batches split unevenly.
TEST(RunSweep, BatchBlocksEqualLlm) {
  const llm::Model model = PresetModel("deepseek-v3");
  SweepSpec s = SweepOf(model, {"h200"});
  for (int64_t b = 1; b <= 70; ++b) s.batches.push_back(b);
  s.contexts = {777};
  s.tps = {2};
  s.eps = {8};
  s.pps = {3};
  auto rep = RunSweep(s);
  ASSERT_TRUE(rep) << rep.error().message;
  ASSERT_EQ(rep->rows.size(), 70u);
  EXPECT_EQ(rep->points_by_full_analysis, 0u);
  for (const SweepRow& row : rep->rows) {
    const llm::Figures f = LlmAt(model, s, *rep, row);
    EXPECT_EQ(row.step_time_s, f.step_time_s) << row.batch;
    EXPECT_EQ(row.max_batch, f.max_batch) << row.batch;
  }
}

// --gen-len/--osl as an axis: each output length's rows are `opscope llm --gen-len O` at that
// point, in grid order (output length outside batch × context).
TEST(RunSweep, GenLenRunsTheFullRequest) {
  const llm::Model model = PresetModel("llama-3.1-8b");
  SweepSpec s = SweepOf(model, {"h100-sxm"});
  s.batches = {1, 8};
  s.contexts = {1024, 3000};
  s.gen_lens = {64, 1, 700};
  auto rep = RunSweep(s);
  ASSERT_TRUE(rep);
  ASSERT_EQ(rep->rows.size(), 3u * 2 * 2);
  EXPECT_EQ(rep->points_by_full_analysis, 12u);
  ASSERT_EQ(rep->servings.size(), 3u);
  for (size_t i = 0; i < rep->rows.size(); ++i) {
    const SweepRow& row = rep->rows[i];
    EXPECT_EQ(rep->servings[row.serving].gen_len, s.gen_lens[i / 4]) << i;
    EXPECT_EQ(row.batch, s.batches[i / 2 % 2]) << i;
    EXPECT_EQ(row.context, s.contexts[i % 2]) << i;
    const llm::Figures f = LlmAt(model, s, *rep, row);
    ASSERT_TRUE(f.tpot_s) << i;
    EXPECT_EQ(row.tpot_s, f.tpot_s) << i;
    EXPECT_EQ(row.ttft_s, f.ttft_s) << i;
    EXPECT_EQ(row.max_batch, f.max_batch) << i;  // the memory at prompt + output
  }
  // Longer requests hold more KV: the largest batch never grows with the output length.
  EXPECT_GE(rep->rows[4].max_batch, rep->rows[8].max_batch);
  EXPECT_GT(rep->rows[4].max_batch, rep->rows[8].max_batch);
}

// What `opscope llm --engine E` predicts for one row's point (llm.predicted: RunLlmPredicted,
// the command's one call).
llm::Predicted PredictedAt(const llm::Model& model, const SweepSpec& s, const SweepResult& rep,
                           const SweepRow& row) {
  const llm::Request r = RequestAt(model, s, rep, row);
  llm::PredictOptions o;
  o.engine = s.engine;
  o.disagg = rep.servings.at(row.serving).disagg;  // --disagg P:D --prefill-tp --decode-tp
  o.fixed_lengths = s.fixed_lengths;               // --lengths fixed
  o.speculative = s.speculative;                   // --speculative mtp:N --acceptance R
  auto run = llm::RunLlmPredicted(r, o);
  EXPECT_TRUE(run) << run.error().message;
  return run ? run->predicted : llm::Predicted{};
}

// --engine: every predicted row (the engine timing the compiled plans' nodes) equals
// llm.predicted at its point — bit for bit: the same node times summed in the same order —
// for dense, MoE and MLA models, both phases, a deployment with a pipeline, and whole
// requests (--gen-len: the serving dynamics over the plans' steps), of several output lengths
// and, with --disagg, disaggregated (`opscope llm --disagg P:D --prefill-tp --decode-tp`).
TEST(RunSweep, PredictedRowsEqualLlmPredicted) {
  struct PredictedCase {
    const char* preset;
    const char* device;
    const char* engine;
    llm::Phase phase;
    std::vector<int64_t> tps, eps, pps;
    std::vector<int64_t> gen_lens;
    std::vector<std::optional<llm::Disagg>> disaggs{};
    std::vector<int64_t> prefill_tps{}, decode_tps{};
  };
  const llm::Phase decode = llm::Phase::kDecode, prefill = llm::Phase::kPrefill;
  const llm::Disagg one_one{1, 1, std::nullopt, std::nullopt}, two_three{2, 3, std::nullopt,
                                                                         std::nullopt};
  for (const PredictedCase& c : {PredictedCase{"llama-3.1-8b", "h100-sxm", "vllm", decode, {}, {}, {}, {}},
                        PredictedCase{"qwen3-30b-a3b", "h200", "sglang", prefill, {}, {}, {}, {}},
                        PredictedCase{"deepseek-v3", "h200", "trtllm", decode, {2}, {8}, {1, 3}, {}},
                        PredictedCase{"llama-3.1-70b-instruct", "h200", "vllm", prefill, {2, 4}, {}, {2},
                             {}},
                        PredictedCase{"llama-3.1-8b", "h100-sxm", "vllm", decode, {1, 2}, {}, {}, {40}},
                        PredictedCase{"qwen3-30b-a3b", "h200", "sglang", decode, {}, {1, 2}, {}, {9, 100}},
                        // Disaggregated: the split at the row's tp, and at tps of its own.
                        PredictedCase{"llama-3.1-8b", "h200", "vllm", prefill, {1, 2}, {}, {},
                                      {64, 300}, {std::nullopt, one_one, two_three}},
                        PredictedCase{"qwen3-30b-a3b", "h200", "sglang", decode, {}, {1, 2}, {},
                                      {50}, {one_one}, {1, 4}, {2}}}) {
    const llm::Model model = PresetModel(c.preset);
    SweepSpec s = SweepOf(model, {c.device});
    s.phase = c.phase;
    s.batches = {1, 5, 32};
    s.contexts = {1, 500, 4096};
    s.tps = c.tps;
    s.eps = c.eps;
    s.pps = c.pps;
    s.gen_lens = c.gen_lens;
    s.disaggs = c.disaggs;
    s.prefill_tps = c.prefill_tps;
    s.decode_tps = c.decode_tps;
    s.engine = c.engine;
    auto rep = RunSweep(s);
    ASSERT_TRUE(rep) << rep.error().message;
    ASSERT_EQ(rep->predicted.size(), rep->rows.size());
    ASSERT_FALSE(rep->rows.empty());
    for (size_t i = 0; i < rep->rows.size(); ++i) {
      const SweepRow& row = rep->rows[i];
      const PredictedRow& got = rep->predicted[i];
      const llm::Predicted want = PredictedAt(model, s, *rep, row);
      const SweepDeployment& d = rep->deployments[row.deployment];
      const SweepServing& serving = rep->servings[row.serving];
      const std::string where = std::string(c.preset) + " tp " + std::to_string(d.tp) + " ep " +
                                std::to_string(d.ep) + " pp " + std::to_string(d.pp) + " " +
                                std::to_string(row.batch) + "x" + std::to_string(row.context) +
                                " osl " + std::to_string(serving.gen_len.value_or(0)) +
                                (serving.disagg ? " disagg" : "");
      EXPECT_GT(got.step_time_s, 0) << where;
      EXPECT_EQ(got.step_time_s, want.step_time_s) << where;
      EXPECT_EQ(got.tokens_per_s, want.tokens_per_s) << where;
      EXPECT_EQ(got.ttft_s, want.ttft_s) << where;
      // A decode step's TPOT is the step itself; with --gen-len the request's.
      EXPECT_EQ(got.tpot_s, want.tpot_s ? want.tpot_s
                                        : c.phase == decode ? std::optional(want.step_time_s)
                                                            : std::nullopt)
          << where;
      // --disagg: the split's KV transfer, part of its TTFT; none for an aggregated row.
      ASSERT_EQ(got.kv_transfer_s.has_value(), serving.disagg.has_value()) << where;
      if (!serving.disagg) continue;
      ASSERT_TRUE(want.dynamics) << where;
      EXPECT_EQ(want.dynamics->mode, "disaggregated") << where;
      EXPECT_EQ(got.kv_transfer_s, want.dynamics->figures.kv_transfer_s) << where;
      EXPECT_GT(*got.kv_transfer_s, 0) << where;
      EXPECT_GT(*got.ttft_s, *got.kv_transfer_s) << where;
    }
  }
}

// --lengths fixed: every predicted row equals `opscope llm --lengths fixed` at its point, and
// differs from the varied steady state where requests share the engine; the option needs an
// engine and whole requests and refuses a disaggregated split, naming itself.
TEST(RunSweep, FixedLengthRowsEqualLlmPredicted) {
  const llm::Model model = PresetModel("qwen3-30b-a3b");
  SweepSpec s = SweepOf(model, {"h200"});
  s.batches = {1, 8};
  s.contexts = {1000, 3000};
  s.gen_lens = {64};
  s.engine = "sglang";
  s.fixed_lengths = true;
  auto rep = RunSweep(s);
  ASSERT_TRUE(rep) << rep.error().message;
  ASSERT_EQ(rep->rows.size(), 4u);
  SweepSpec varied = s;
  varied.fixed_lengths = false;
  auto steady = RunSweep(varied);
  ASSERT_TRUE(steady) << steady.error().message;
  for (size_t i = 0; i < rep->rows.size(); ++i) {
    const SweepRow& row = rep->rows[i];
    const llm::Predicted want = PredictedAt(model, s, *rep, row);
    ASSERT_TRUE(want.dynamics) << i;
    EXPECT_EQ(want.dynamics->lengths, "fixed") << i;
    EXPECT_EQ(rep->predicted[i].ttft_s, want.ttft_s) << i;
    EXPECT_EQ(rep->predicted[i].tpot_s, want.tpot_s) << i;
    if (row.batch > 1) {
      EXPECT_NE(rep->predicted[i].ttft_s, steady->predicted[i].ttft_s) << i;
    }
  }
  SweepSpec bad = s;
  bad.gen_lens.clear();
  auto no_request = RunSweep(bad);
  ASSERT_FALSE(no_request);
  EXPECT_NE(no_request.error().message.find("option '--lengths'"), std::string::npos);
  bad = s;
  bad.disaggs = {std::nullopt, llm::Disagg{1, 1, std::nullopt, std::nullopt}};
  auto split = RunSweep(bad);
  ASSERT_FALSE(split);
  EXPECT_NE(split.error().message.find("not with --disagg"), std::string::npos);
}

// --speculative draft:N --draft-model M: every predicted row equals `opscope llm --speculative
// draft:N --draft-model M` at its point — TTFT, TPOT, the drafter named, the fit beside the
// draft at the row's tp — with the draft deployed once per deployment of the target; a draft
// of another vocabulary is refused naming --draft-model, and draft:N needs its draft model.
TEST(RunSweep, DraftModelRowsEqualLlmPredicted) {
  const llm::Model model = PresetModel("qwen3-32b");
  SweepSpec s = SweepOf(model, {"h200"});
  s.tps = {1, 2};
  s.batches = {1, 16};
  s.contexts = {1024};
  s.gen_lens = {256};
  s.engine = "vllm";
  s.speculative = llm::Speculative{3, 0.7, std::string("qwen3-8b")};
  auto rep = RunSweep(s);
  ASSERT_TRUE(rep) << rep.error().message;
  ASSERT_EQ(rep->rows.size(), 4u);
  EXPECT_TRUE(rep->speculative.has_value());
  for (size_t i = 0; i < rep->rows.size(); ++i) {
    const SweepRow& row = rep->rows[i];
    const llm::Predicted want = PredictedAt(model, s, *rep, row);
    ASSERT_TRUE(want.dynamics && want.dynamics->drafter_memory) << i;
    EXPECT_EQ(want.dynamics->speculative, "draft:3 qwen3-8b") << i;
    EXPECT_EQ(rep->predicted[i].ttft_s, want.ttft_s) << i;
    EXPECT_EQ(rep->predicted[i].tpot_s, want.tpot_s) << i;
    EXPECT_EQ(rep->predicted[i].drafter_max_batch, want.dynamics->drafter_memory->max_batch) << i;
    EXPECT_EQ(rep->predicted[i].drafter_fits, want.dynamics->drafter_memory->fits) << i;
    EXPECT_LT(rep->predicted[i].drafter_max_batch, row.max_batch) << i;  // the draft takes room
  }
  SweepSpec other = s;
  other.speculative->draft_model = "llama-3.1-8b";
  auto refused = RunSweep(other);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().message.rfind("option '--draft-model': llama-3.1-8b's vocabulary", 0),
            0u)
      << refused.error().message;
  EXPECT_EQ(llm::ParseSpeculativeOptions(std::string("draft:2"), 0.5, std::nullopt)
                .error()
                .message.rfind("option '--speculative': draft:N needs the draft model", 0),
            0u);
  auto parsed = llm::ParseSpeculativeOptions(std::string("draft:2"), 0.5, "qwen3-8b");
  ASSERT_TRUE(parsed && *parsed);
  EXPECT_EQ((*parsed)->draft_model, std::optional<std::string>("qwen3-8b"));
}

// --speculative mtp:N: every predicted row equals `opscope llm --speculative mtp:N` at its
// point — TTFT, TPOT and the fit with the MTP module beside the target (aggregated and on a
// disaggregated split's decode worker) — and the MTP rows decode faster than the plain ones;
// the option needs an engine and whole requests and takes its --acceptance, each error naming
// the option (a draft model: DraftModelRowsEqualLlmPredicted).
TEST(RunSweep, SpeculativeRowsEqualLlmPredicted) {
  const llm::Model model = PresetModel("deepseek-v3");
  SweepSpec s = SweepOf(model, {"h200"});
  s.tps = {8};
  s.batches = {4, 64};
  s.contexts = {1024};
  s.gen_lens = {256};
  s.engine = "sglang";
  s.disaggs = {std::nullopt, llm::Disagg{1, 2, std::nullopt, std::nullopt}};
  s.speculative = llm::Speculative{2, 0.7, std::nullopt};
  auto rep = RunSweep(s);
  ASSERT_TRUE(rep) << rep.error().message;
  ASSERT_EQ(rep->rows.size(), 4u);
  EXPECT_TRUE(rep->speculative.has_value());
  SweepSpec plain = s;
  plain.speculative.reset();
  auto base = RunSweep(plain);
  ASSERT_TRUE(base) << base.error().message;
  EXPECT_FALSE(base->speculative.has_value());
  for (size_t i = 0; i < rep->rows.size(); ++i) {
    const SweepRow& row = rep->rows[i];
    const llm::Predicted want = PredictedAt(model, s, *rep, row);
    ASSERT_TRUE(want.dynamics && want.dynamics->drafter_memory) << i;
    EXPECT_EQ(want.dynamics->speculative, "mtp:2") << i;
    EXPECT_EQ(rep->predicted[i].ttft_s, want.ttft_s) << i;
    EXPECT_EQ(rep->predicted[i].tpot_s, want.tpot_s) << i;
    EXPECT_EQ(rep->predicted[i].drafter_max_batch, want.dynamics->drafter_memory->max_batch) << i;
    EXPECT_EQ(rep->predicted[i].drafter_fits, want.dynamics->drafter_memory->fits) << i;
    EXPECT_LT(rep->predicted[i].drafter_max_batch, row.max_batch) << i;  // the module takes room
    EXPECT_LT(*rep->predicted[i].tpot_s, *base->predicted[i].tpot_s) << i;
  }
  const auto error = [&](const std::function<void(SweepSpec&)>& change) {
    SweepSpec bad = s;
    bad.disaggs.clear();  // (--disagg names its own needs first)
    change(bad);
    auto r = RunSweep(bad);
    return r ? std::string("(no error)") : r.error().message;
  };
  EXPECT_NE(error([](SweepSpec& b) { b.gen_lens.clear(); }).find("option '--speculative'"),
            std::string::npos);
  EXPECT_NE(error([](SweepSpec& b) { b.engine.reset(); }).find("give --engine E"),
            std::string::npos);
  // Without a --draft-model, draft:N is refused.
  EXPECT_EQ(llm::ParseSpeculativeOptions(std::string("draft:2"), 0.5, std::nullopt)
                .error()
                .message.rfind("option '--speculative': draft:N needs the draft model", 0),
            0u);
  EXPECT_EQ(llm::ParseSpeculativeOptions(std::string("mtp:2"), std::nullopt, std::nullopt)
                .error()
                .message,
            "option '--speculative': needs --acceptance R");
  EXPECT_EQ(llm::ParseSpeculativeOptions(std::nullopt, 0.5, std::nullopt).error().message,
            "option '--acceptance': only with --speculative mtp:N or draft:N");
  EXPECT_FALSE(*llm::ParseSpeculativeOptions(std::nullopt, std::nullopt, std::nullopt));
  auto parsed = llm::ParseSpeculativeOptions(std::string("mtp:3"), 0.6, std::nullopt);
  ASSERT_TRUE(parsed && *parsed);
  EXPECT_EQ((*parsed)->drafts, 3);
  // A model without MTP modules is refused by the prediction, naming the option.
  const llm::Model llama = PresetModel("llama-3.1-8b");
  SweepSpec no_mtp = SweepOf(llama, {"h200"});
  no_mtp.batches = {4};
  no_mtp.contexts = {1024};
  no_mtp.gen_lens = {64};
  no_mtp.engine = "vllm";
  no_mtp.speculative = llm::Speculative{1, 0.7, std::nullopt};
  auto refused = RunSweep(no_mtp);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("option '--speculative'"), std::string::npos);
}

// A disaggregated split whose workers the model cannot take at their tp is skipped and named
// (as a deployment is); the rest of the grid runs.
TEST(RunSweep, DisaggSplitsTheModelCannotTakeAreSkipped) {
  const llm::Model model = PresetModel("llama-3.1-8b");  // 32 heads, 8 KV heads
  SweepSpec s = SweepOf(model, {"h200"});
  s.batches = {4};
  s.contexts = {1024};
  s.gen_lens = {32};
  s.engine = "vllm";
  s.disaggs = {std::nullopt, llm::Disagg{1, 1, std::nullopt, std::nullopt}};
  s.prefill_tps = {2, 3};
  auto rep = RunSweep(s);
  ASSERT_TRUE(rep) << rep.error().message;
  // agg, 1:1 at prefill tp 2, 1:1 at prefill tp 3 (skipped): two rows.
  ASSERT_EQ(rep->servings.size(), 3u);
  ASSERT_EQ(rep->rows.size(), 2u);
  ASSERT_EQ(rep->skipped.size(), 1u);
  EXPECT_NE(rep->skipped[0].find("disagg 1:1, prefill-tp 3"), std::string::npos) << rep->skipped[0];
  EXPECT_NE(rep->skipped[0].find("option '--prefill-tp'"), std::string::npos) << rep->skipped[0];
}

// With --engine, a device the engine cannot predict (no profile entry: trtllm on an AMD GPU;
// an alternative implementation not fitted there: trtllm_gen on H200) is skipped and named
// once; the other devices' rows are predicted as if they were swept alone. An engine that
// does not resolve at all is still an error, and so is a grid where no device can run.
TEST(RunSweep, DevicesTheEngineCannotPredictAreSkipped) {
  const llm::Model model = PresetModel("llama-3.1-8b");
  SweepSpec s = SweepOf(model, {"mi300x", "h100-sxm", "h200"});
  s.batches = {1, 8};
  s.contexts = {1024};
  s.engine = "trtllm";
  auto rep = RunSweep(s);
  ASSERT_TRUE(rep) << rep.error().message;
  ASSERT_EQ(rep->skipped.size(), 1u);
  EXPECT_EQ(rep->skipped[0].rfind("mi300x: option '--engine'", 0), 0u) << rep->skipped[0];
  ASSERT_EQ(rep->rows.size(), 4u);
  SweepSpec alone = SweepOf(model, {"h100-sxm", "h200"});
  alone.batches = s.batches;
  alone.contexts = s.contexts;
  alone.engine = s.engine;
  auto want = RunSweep(alone);
  ASSERT_TRUE(want) << want.error().message;
  ASSERT_EQ(want->rows.size(), rep->rows.size());
  for (size_t i = 0; i < rep->rows.size(); ++i) {
    EXPECT_EQ(rep->devices[rep->rows[i].device], want->devices[want->rows[i].device]) << i;
    EXPECT_EQ(rep->predicted[i].step_time_s, want->predicted[i].step_time_s) << i;
  }

  const llm::Model moe = PresetModel("deepseek-v3");
  SweepSpec gen = SweepOf(moe, {"h200", "b200"});
  gen.batches = {8};
  gen.contexts = {1024};
  gen.tps = {8};
  gen.engine = "trtllm:trtllm_gen";
  auto alt = RunSweep(gen);
  ASSERT_TRUE(alt) << alt.error().message;
  ASSERT_EQ(alt->skipped.size(), 1u);
  EXPECT_NE(alt->skipped[0].find("not for h200"), std::string::npos) << alt->skipped[0];
  ASSERT_EQ(alt->rows.size(), 1u);
  EXPECT_EQ(alt->devices[alt->rows[0].device], "b200");

  gen.devices = {gen.devices[0]};  // h200 alone: nothing can run
  auto none = RunSweep(gen);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("not for h200"), std::string::npos) << none.error().message;
  s.engine = "trtllm:no_such_kernels";
  auto bad = RunSweep(s);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("no kernel implementation 'no_such_kernels'"),
            std::string::npos)
      << bad.error().message;
}

// The grid's options are checked once, in the library, naming the option.
TEST(RunSweep, BadOptionsNameTheOption) {
  const llm::Model model = PresetModel("llama-3.1-8b");
  SweepSpec s = SweepOf(model, {"h100-sxm"});
  s.batches = {1};
  s.contexts = {1024};
  auto expect_error = [&](const SweepSpec& bad, std::string_view message) {
    auto r = RunSweep(bad);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, message);
  };
  SweepSpec x = s;
  x.mem_util = 1.5;
  expect_error(x, "option '--mem-util': must be in (0, 1], got 1.500000");
  x = s;
  x.gen_lens = {5, 0};
  expect_error(x, "option '--gen-len': must be positive, got 0");
  // --disagg: an engine's prediction of whole requests.
  x = s;
  x.disaggs = {llm::Disagg{}};
  x.gen_lens = {8};
  expect_error(x, "option '--disagg': needs --engine E (disaggregated figures are an engine's "
                  "predictions, as opscope llm --disagg gives them)");
  x.engine = "vllm";
  x.gen_lens.clear();
  expect_error(x, "option '--disagg': needs --gen-len/--osl (a disaggregated deployment serves "
                  "whole requests)");
  x.gen_lens = {8};
  x.decode_tps = {0};
  expect_error(x, "option '--decode-tp': must be positive, got 0");
  x = s;
  x.prefill_tps = {2};
  expect_error(x, "option '--prefill-tp': only with --disagg P:D");
  x = s;
  x.tps = {1, 70000};
  expect_error(x, "option '--tp': must be at most 65536, got 70000");
  x = s;
  x.micro_batches = 0;  // checked even where the grid has no pipeline
  expect_error(x, "option '--micro-batches': must be positive, got 0");
  x = s;
  x.phase = llm::Phase::kPrefill;
  x.batches = {1, int64_t{1} << 40};
  x.contexts = {1, int64_t{1} << 30};
  expect_error(x, "options '--batch' and '--context': 1099511627776 x 1073741824 tokens overflow "
                  "64 bits");
  x = s;
  x.batches.clear();
  expect_error(x, "option '--batch': no values");
  x = s;
  x.batches = {4, 0};
  expect_error(x, "option '--batch': must be positive, got 0");
  x = s;
  x.batches.resize(1 << 14);
  std::iota(x.batches.begin(), x.batches.end(), 1);
  x.contexts.resize(1 << 13);
  std::iota(x.contexts.begin(), x.contexts.end(), 1);
  expect_error(x, "options '--batch', '--context', '--device', '--weights', '--tp', '--ep', "
                  "'--pp', '--dp-attention', '--gen-len', '--disagg': 134217728 points is more "
                  "than 67108864 per sweep");
  // The request axes count: 33 batches x 4,096 contexts x 64 output lengths x 2 splits x 2 x 2
  // tps.
  x = s;
  x.contexts.resize(1 << 12);
  std::iota(x.contexts.begin(), x.contexts.end(), 1);
  x.gen_lens.resize(64);
  std::iota(x.gen_lens.begin(), x.gen_lens.end(), 1);
  x.engine = "vllm";
  x.disaggs = {llm::Disagg{1, 1, std::nullopt, std::nullopt},
               llm::Disagg{1, 2, std::nullopt, std::nullopt}};
  x.prefill_tps = {1, 2};
  x.decode_tps = {1, 2};
  x.batches.resize(33);
  std::iota(x.batches.begin(), x.batches.end(), 1);
  expect_error(x, "options '--batch', '--context', '--device', '--weights', '--tp', '--ep', "
                  "'--pp', '--dp-attention', '--gen-len', '--disagg': 69206016 points is more "
                  "than 67108864 per sweep");
  // --dp-attention is a LIST axis: each value checked, naming it.
  SweepSpec dp = s;
  dp.dp_attentions = {2, 0};
  expect_error(dp, "option '--dp-attention': must be positive, got 0");
}

// ---- Through the binary -----------------------------------------------------------------

using opscope::testing::Args;
using opscope::testing::Outcome;

Outcome RunOpscope(const std::string& args) { return opscope::testing::RunOpscope(Args(args)); }

// RFC 4180 quoting: quoted fields may hold commas and doubled quotes; records end in LF (a
// CR would stay in the last field and fail the comparisons).
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      rows.back().push_back(std::move(field));
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  if (rows.back().empty() && field.empty()) rows.pop_back();
  return rows;
}

// The column of `name` in a CSV header row.
size_t Column(const std::vector<std::string>& header, std::string_view name) {
  const auto it = std::find(header.begin(), header.end(), name);
  EXPECT_NE(it, header.end()) << name;
  return static_cast<size_t>(it - header.begin());
}

// Every sweep row equals `opscope llm` run alone at its point: step time, tokens/s, time per
// output token, max batch, fits, and the bound of the (busiest device's) step.
void ExpectRowsEqualLlmRuns(const std::string& model, const std::string& sweep_args,
                            size_t expected_rows) {
  const Outcome sweep = RunOpscope("sweep llm " + model + " " + sweep_args);
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  const auto rows = ParseCsv(sweep.out);
  ASSERT_EQ(rows.size(), 1u + expected_rows);
  const std::vector<std::string>& h = rows[0];
  EXPECT_EQ(h, (std::vector<std::string>{"model", "device", "recipe", "phase", "tp", "ep", "pp",
                                         "dp_attention", "devices", "batch", "context",
                                         "step_time_s", "tokens_per_s", "tpot_s", "ttft_s",
                                         "bound", "max_batch", "fits"}));
  simdjson::dom::parser parser;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    ASSERT_EQ(r.size(), h.size());
    auto at = [&](std::string_view name) { return r[Column(h, name)]; };
    std::string args = "llm " + model + " --device " + at("device") + " --batch " + at("batch") +
                       " --context " + at("context") + " --format json";
    if (at("devices") != "1") {
      args += " --tp " + at("tp") + " --ep " + at("ep") + " --pp " + at("pp") +
              " --dp-attention " + at("dp_attention");
    }
    const Outcome one = RunOpscope(args);
    ASSERT_EQ(one.status, 0) << args << ": " << one.err;
    simdjson::dom::element doc = parser.parse(one.out);
    const double step = doc["llm"]["step_time_s"].get_double();
    const double tps = doc["llm"]["tokens_per_s"].get_double();
    EXPECT_EQ(std::strtod(at("step_time_s").c_str(), nullptr), step) << args;
    EXPECT_EQ(std::strtod(at("tokens_per_s").c_str(), nullptr), tps) << args;
    EXPECT_EQ(std::strtod(at("tpot_s").c_str(), nullptr), step) << args;  // decode: the step
    EXPECT_EQ(at("max_batch"), std::to_string(doc["llm"]["max_batch"].get_uint64().value())) << args;
    EXPECT_EQ(at("fits"), doc["llm"]["fits"].get_bool().value() ? "true" : "false") << args;
    double memory_s = 0, compute_s = 0;
    for (simdjson::dom::element n : doc["nodes"].get_array()) {
      const std::string_view bound = n["bound"].get_string();
      if (bound == "memory") memory_s += n["time_s"].get_double();
      if (bound == "compute") compute_s += n["time_s"].get_double();
    }
    EXPECT_EQ(at("bound"), compute_s > memory_s ? "compute" : "memory") << args;
  }
}

TEST(SweepCli, RowsEqualIndividualLlmRuns) {
  ExpectRowsEqualLlmRuns("gpt-oss-20b", "--batch 1,4 --context 127..129,4096 --device h100-sxm,h200",
                         2 * 2 * 4);
}

// Parallel degrees as axes: every deployment the model takes has its rows, equal to `opscope
// llm --tp --ep --pp` alone; the ones it cannot take (64 heads / tp 3) are skipped and named.
TEST(SweepCli, DeploymentAxesEqualIndividualLlmRuns) {
  // qwen3-30b-a3b: 32 heads, 4 KV heads, 128 experts. tp 3 divides neither; the rest run:
  // tp {1, 2} × ep {1, 4} × pp {1, 3} = 8 deployments × 2 batches × 2 contexts.
  ExpectRowsEqualLlmRuns("qwen3-30b-a3b",
                         "--batch 3,64 --context 100,5000 --device h100-sxm --tp 1..3 --ep 1,4 "
                         "--pp 1,3",
                         8 * 2 * 2);
  const Outcome sweep = RunOpscope(
      "sweep llm qwen3-30b-a3b --batch 3 --context 100 --tp 1..3 --ep 1,4 --format json");
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  EXPECT_NE(sweep.err.find("opscope: note: 2 deployment(s) of the grid skipped"), std::string::npos)
      << sweep.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(sweep.out);
  simdjson::dom::array skipped = doc["skipped"].get_array();
  ASSERT_EQ(skipped.size(), 2u);
  const std::string_view first = (*skipped.begin()).get_string();
  EXPECT_NE(first.find("tp 3, ep 1, pp 1"), std::string_view::npos) << first;
  EXPECT_NE(first.find("option '--tp'"), std::string_view::npos) << first;
  // A grid with nothing that can run is an error naming why.
  const Outcome none = RunOpscope("sweep llm qwen3-30b-a3b --batch 1 --context 1 --tp 3,5");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("no deployment of the grid can run"), std::string::npos) << none.err;
  const Outcome bad = RunOpscope("sweep llm qwen3-30b-a3b --batch 1 --context 1 --pp 0");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("option '--pp'"), std::string::npos) << bad.err;
}

// Every roofline `opscope plan` point is a sweep row (issue 15): the planner's serving axes are the
// sweep's — its isl/osl (--isl/--osl), its batch (sequences of one replica: --concurrency) and
// its split (--tp/--ep/--pp/--dp-attention lists) — and its figures are those rows': an agg
// point's TTFT and TPOT; a disaggregated point's prefill workers' TTFT (+ the KV transfer) and
// decode workers' TPOT, each the row of that side's split and batch. One sweep over the union
// of the fronts' axes holds them all; a dense model with --disagg and a MoE model whose splits
// spread experts over attention replicas.
TEST(SweepCli, PlanPointsAreSweepRows) {
  for (const char* plan_args :
       {"llama-3.1-8b --device h200 --gpus 8 --isl 2048 --osl 256 --ttft-ms 800 --tpot-ms 8 "
        "--disagg",
        "qwen3-30b-a3b --device h200 --gpus 8 --isl 1024 --osl 128 --tpot-ms 20"}) {
    // The roofline plan: its points are the sweep's roofline rows (a predicted plan's are
    // `opscope llm --engine E` runs, checked in plan_test).
    const Outcome plan =
        RunOpscope(std::string("plan ") + plan_args + " --engine roofline --format json");
    ASSERT_EQ(plan.status, 0) << plan.err;
    simdjson::dom::parser parser;
    simdjson::dom::element result = parser.parse(plan.out)["plan"];
    // Each side to check: its split and batch, and the figure the row must give.
    struct Side {
      std::array<int64_t, 5> key;  // tp, ep, pp, dp_attention, batch
      const char* field;           // "ttft_s" | "tpot_s"
      double want;
    };
    std::vector<Side> sides;
    std::set<int64_t> tps, eps, pps, dps, batches;
    auto add = [&](simdjson::dom::element x, const char* field, double want) {
      const std::array<int64_t, 5> key{x["tp"].get_int64(), x["ep"].get_int64(),
                                       x["pp"].get_int64(), x["dp_attention"].get_int64(),
                                       x["batch"].get_int64()};
      tps.insert(key[0]), eps.insert(key[1]), pps.insert(key[2]), dps.insert(key[3]);
      batches.insert(key[4]);
      sides.push_back({key, field, want});
    };
    for (simdjson::dom::element p : result["front"].get_array()) {
      if (std::string_view(p["mode"].get_string()) == "agg") {
        add(p, "ttft_s", p["ttft_s"].get_double());
        add(p, "tpot_s", p["tpot_s"].get_double());
      } else {
        add(p["prefill"], "ttft_s",
            p["ttft_s"].get_double().value() - p["kv_transfer_s"].get_double().value());
        add(p["decode"], "tpot_s", p["tpot_s"].get_double());
      }
    }
    ASSERT_FALSE(sides.empty()) << plan_args;
    auto list = [](const std::set<int64_t>& v) {
      std::string out;
      for (int64_t x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
      return out;
    };
    const std::string args(plan_args);
    const std::string model = args.substr(0, args.find(' '));
    const auto isl = result["isl"].get_int64().value(), osl = result["osl"].get_int64().value();
    const std::string sweep_args = "sweep llm " + model + " --device h200 --phase prefill --isl " +
                                   std::to_string(isl) + " --osl " + std::to_string(osl) +
                                   " --concurrency " + list(batches) + " --tp " + list(tps) +
                                   " --ep " + list(eps) + " --pp " + list(pps) +
                                   " --dp-attention " + list(dps) + " --format json";
    const Outcome sweep = RunOpscope(sweep_args);
    ASSERT_EQ(sweep.status, 0) << sweep_args << ": " << sweep.err;
    simdjson::dom::parser sp;
    std::map<std::array<int64_t, 5>, simdjson::dom::element> rows;
    for (simdjson::dom::element r : sp.parse(sweep.out)["points"].get_array()) {
      rows[{r["tp"].get_int64(), r["ep"].get_int64(), r["pp"].get_int64(),
            r["dp_attention"].get_int64(), r["batch"].get_int64()}] = r;
    }
    for (const Side& side : sides) {
      const auto& k = side.key;
      const std::string where = model + " tp " + std::to_string(k[0]) + " ep " +
                                std::to_string(k[1]) + " pp " + std::to_string(k[2]) + " dp " +
                                std::to_string(k[3]) + " batch " + std::to_string(k[4]) + " " +
                                side.field;
      auto it = rows.find(k);
      ASSERT_NE(it, rows.end()) << where;
      EXPECT_DOUBLE_EQ(it->second[side.field].get_double().value(), side.want) << where;
    }
  }
}

// The request axes through the binary: --osl LIST and --disagg LIST (with 'agg', and a
// --decode-tp of their own) give one row per output length × split, each equal to `opscope
// llm --gen-len O [--disagg P:D --prefill-tp X --decode-tp Y] --engine E` run alone: the
// roofline columns llm's own, the predicted_* columns llm.predicted's (a disaggregated row's
// TTFT with its KV transfer, the column predicted_kv_transfer_s).
TEST(SweepCli, OslAndDisaggRowsEqualLlmRuns) {
  const std::string model = "llama-3.1-8b";
  const Outcome sweep = RunOpscope(
      "sweep llm " + model + " --device h200 --phase prefill --isl 2048 --osl 64,256 "
      "--concurrency 1,16 --tp 1,2 --engine vllm --disagg agg,1:1,1:3 --decode-tp 2");
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  const auto rows = ParseCsv(sweep.out);
  // 2 tps × 2 output lengths × 3 splits × 2 batches.
  ASSERT_EQ(rows.size(), 1u + 2 * 2 * 3 * 2);
  const std::vector<std::string>& h = rows[0];
  EXPECT_EQ(h, (std::vector<std::string>{
                   "model", "device", "recipe", "phase", "tp", "ep", "pp", "dp_attention",
                   "devices", "prefill_workers", "decode_workers", "prefill_tp", "decode_tp",
                   "batch", "context", "gen_len", "step_time_s", "tokens_per_s", "tpot_s",
                   "ttft_s", "bound", "max_batch", "fits", "predicted_step_time_s",
                   "predicted_tokens_per_s", "predicted_tpot_s", "predicted_ttft_s",
                   "predicted_kv_transfer_s"}));
  simdjson::dom::parser parser;
  size_t disaggregated = 0;
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto& r = rows[i];
    ASSERT_EQ(r.size(), h.size());
    auto at = [&](std::string_view name) { return r[Column(h, name)]; };
    auto number = [&](std::string_view name) { return std::strtod(at(name).c_str(), nullptr); };
    std::string args = "llm " + model + " --device h200 --phase prefill --prompt " +
                       at("context") + " --gen-len " + at("gen_len") + " --batch " + at("batch") +
                       " --tp " + at("tp") + " --engine vllm --format json";
    const bool disagg = !at("prefill_workers").empty();
    if (disagg) {
      // The row's split: the --decode-tp given, the prefill tp the row's.
      EXPECT_EQ(at("decode_tp"), "2");
      EXPECT_EQ(at("prefill_tp"), at("tp"));
      args += " --disagg " + at("prefill_workers") + ":" + at("decode_workers") +
              " --prefill-tp " + at("prefill_tp") + " --decode-tp " + at("decode_tp");
      ++disaggregated;
    }
    const Outcome one = RunOpscope(args);
    ASSERT_EQ(one.status, 0) << args << ": " << one.err;
    simdjson::dom::element llm = parser.parse(one.out)["llm"];
    EXPECT_EQ(number("tpot_s"), llm["tpot_s"].get_double().value()) << args;
    EXPECT_EQ(number("ttft_s"), llm["ttft_s"].get_double().value()) << args;
    simdjson::dom::element p = llm["predicted"];
    EXPECT_EQ(number("predicted_tpot_s"), p["tpot_s"].get_double().value()) << args;
    EXPECT_EQ(number("predicted_ttft_s"), p["ttft_s"].get_double().value()) << args;
    EXPECT_EQ(number("predicted_tokens_per_s"), p["tokens_per_s"].get_double().value()) << args;
    const std::string_view mode = p["dynamics"]["mode"].get_string().value();
    EXPECT_EQ(mode, disagg ? "disaggregated" : "aggregated") << args;
    if (disagg) {
      EXPECT_EQ(number("predicted_kv_transfer_s"),
                p["dynamics"]["kv_transfer_s"].get_double().value())
          << args;
    } else {
      EXPECT_EQ(at("predicted_kv_transfer_s"), "") << args;
    }
  }
  EXPECT_EQ(disaggregated, 2u * 2 * 2 * 2);
  // JSON names the split of each point (null: aggregated) and its output length.
  const Outcome json = RunOpscope(
      "sweep llm " + model + " --device h200 --isl 2048 --osl 64 --concurrency 8 --engine vllm "
      "--disagg agg,2:1 --prefill-tp 2 --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  simdjson::dom::array points = parser.parse(json.out)["points"].get_array();
  ASSERT_EQ(points.size(), 2u);
  EXPECT_TRUE(points.at(0)["disagg"].is_null());
  EXPECT_TRUE(points.at(0)["predicted"]["kv_transfer_s"].is_null());
  EXPECT_EQ(points.at(1)["disagg"]["prefill_workers"].get_int64().value(), 2);
  EXPECT_EQ(points.at(1)["disagg"]["decode_workers"].get_int64().value(), 1);
  EXPECT_EQ(points.at(1)["disagg"]["prefill_tp"].get_int64().value(), 2);
  EXPECT_EQ(points.at(1)["disagg"]["decode_tp"].get_int64().value(), 1);  // the row's tp
  EXPECT_EQ(points.at(1)["gen_len"].get_int64().value(), 64);
  EXPECT_GT(points.at(1)["predicted"]["kv_transfer_s"].get_double().value(), 0);
}

// A predicted disaggregated `opscope plan` point is a sweep row: its reproduce command (one
// `opscope llm ... --disagg x:y --prefill-tp a --decode-tp b` run of the whole deployment)
// with `sweep llm` for `llm` and --isl for --prompt is a one-row sweep whose predicted
// figures are the point's.
TEST(SweepCli, PredictedDisaggPlanPointsAreSweepRows) {
  const Outcome plan = RunOpscope(
      "plan llama-3.1-8b --device h200 --gpus 8 --isl 2048 --osl 256 --ttft-ms 800 --tpot-ms 8 "
      "--disagg --format json");
  ASSERT_EQ(plan.status, 0) << plan.err;
  simdjson::dom::parser parser;
  simdjson::dom::element result = parser.parse(plan.out)["plan"];
  ASSERT_EQ(std::string_view(result["estimate"].get_string().value()), "predicted");
  size_t checked = 0;
  for (simdjson::dom::element p : result["front"].get_array()) {
    if (std::string_view(p["mode"].get_string().value()) != "disagg") continue;
    std::string command(p["reproduce"].get_string().value());
    ASSERT_TRUE(command.starts_with("opscope llm ")) << command;
    command = "sweep llm " + command.substr(12);
    const size_t prompt = command.find(" --prompt ");
    ASSERT_NE(prompt, std::string::npos) << command;
    command.replace(prompt, 10, " --isl ");
    const Outcome sweep = RunOpscope(command + " --format json");
    ASSERT_EQ(sweep.status, 0) << command << ": " << sweep.err;
    simdjson::dom::parser sp;
    simdjson::dom::array points = sp.parse(sweep.out)["points"].get_array();
    ASSERT_EQ(points.size(), 1u) << command;
    simdjson::dom::element q = points.at(0)["predicted"];
    EXPECT_EQ(q["ttft_s"].get_double().value(), p["ttft_s"].get_double().value()) << command;
    EXPECT_EQ(q["tpot_s"].get_double().value(), p["tpot_s"].get_double().value()) << command;
    EXPECT_DOUBLE_EQ(q["tokens_per_s"].get_double().value(),
                     p["tokens_per_s"].get_double().value())
        << command;
    ++checked;
  }
  EXPECT_GT(checked, 0u) << "the front has no disaggregated point";
}

// Bad values of the request axes: one line naming the option, status 2, nothing on stdout.
TEST(SweepCli, RequestAxisErrors) {
  const std::string base = "sweep llm llama-3.1-8b --batch 1 --context 512 ";
  for (const auto& [args, option] : std::vector<std::pair<std::string, std::string>>{
           {"--osl 0", "option '--gen-len'"},
           {"--osl 64,x", "option '--gen-len'"},
           {"--osl 8 --engine vllm --disagg 1:x", "option '--disagg'"},
           {"--osl 8 --engine vllm --disagg 1:1,1:1", "option '--disagg'"},
           {"--osl 8 --disagg 1:1", "option '--disagg': needs --engine"},
           {"--engine vllm --disagg 1:1", "option '--disagg': needs --gen-len"},
           {"--osl 8 --prefill-tp 2", "option '--prefill-tp': only with --disagg"},
           {"--osl 8 --engine vllm --disagg 1:1 --decode-tp 0", "option '--decode-tp'"},
           {"--osl 8 --engine vllm --disagg 1:1 --prefill-tp 3", "no deployment of the grid can run"}}) {
    const Outcome o = RunOpscope(base + args);
    EXPECT_EQ(o.status, 2) << args;
    EXPECT_TRUE(o.err.starts_with("opscope: error: ")) << o.err;
    EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << o.err;
    EXPECT_NE(o.err.find(option), std::string::npos) << args << ": " << o.err;
    EXPECT_EQ(o.out, "") << args;
  }
}

TEST(SweepCli, FormatsAndErrors) {
  const Outcome json = RunOpscope("sweep llm llama-3.1-8b --batch 1,2 --context 1024 --format json");
  ASSERT_EQ(json.status, 0) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(json.out);
  EXPECT_EQ(doc["points"].get_array().size(), 2u);
  const Outcome svg = RunOpscope("sweep llm llama-3.1-8b --batch 1,2,4 --context 1024,2048 --format svg");
  ASSERT_EQ(svg.status, 0) << svg.err;
  EXPECT_TRUE(svg.out.starts_with("<?xml"));
  EXPECT_NE(svg.out.find("class=\"series\""), std::string::npos);

  for (const auto& [args, option] : std::vector<std::pair<std::string, std::string>>{
           {"sweep llm llama-3.1-8b --batch 1..x --context 1024", "--batch"},
           {"sweep llm llama-3.1-8b --batch 1 --context 0", "--context"},
           {"sweep llm llama-3.1-8b --batch 1 --context 9..3", "--context"},
           {"sweep llm llama-3.1-8b --batch 1 --context 8 --device h100-sxm,,b200", "--device"}}) {
    const Outcome o = RunOpscope(args);
    EXPECT_EQ(o.status, 2) << args;
    EXPECT_TRUE(o.err.starts_with("opscope: error: ")) << o.err;
    EXPECT_NE(o.err.find(option), std::string::npos) << o.err;
    EXPECT_EQ(o.out, "");
  }
}

}  // namespace
// A large sweep's CSV is formatted on several threads: the same text for any count, every row
// once, in order, each double round-tripping.
TEST(SweepCsv, ThreadedFormattingIsTheSameText) {
  SweepResult rep;
  rep.model = "m";
  rep.phase = llm::Phase::kDecode;
  rep.devices = {"h100-sxm", "h200"};
  rep.recipes = {"bf16/bf16/bf16"};
  rep.deployments = {SweepDeployment{}, SweepDeployment{2, 1, 1, 1, 2}};
  constexpr size_t kRows = 70001;
  for (size_t i = 0; i < kRows; ++i) {
    SweepRow r;
    r.device = static_cast<uint32_t>(i % 2);
    r.deployment = static_cast<uint32_t>((i / 7) % 2);
    r.batch = static_cast<int64_t>(i % 97) + 1;
    r.context = static_cast<int64_t>(i);
    r.step_time_s = 1e-3 + static_cast<double>(i) * 1.234567e-9;
    r.tokens_per_s = static_cast<double>(r.batch) / r.step_time_s;
    r.tpot_s = r.step_time_s;
    r.max_batch = i;
    r.fits = i % 3 == 0;
    rep.rows.push_back(r);
  }
  const std::string one = report::RenderSweepCsv(rep, 1);
  EXPECT_EQ(report::RenderSweepCsv(rep, 3), one);
  EXPECT_EQ(report::RenderSweepCsv(rep, 8), one);
  const auto rows = ParseCsv(one);
  ASSERT_EQ(rows.size(), kRows + 1);
  for (size_t i : {size_t{0}, size_t{23333}, size_t{23334}, size_t{46667}, kRows - 1}) {
    const auto& r = rows[i + 1];
    EXPECT_EQ(r[10], std::to_string(i));
    EXPECT_EQ(std::strtod(r[11].c_str(), nullptr), rep.rows[i].step_time_s);
    EXPECT_EQ(std::strtod(r[12].c_str(), nullptr), rep.rows[i].tokens_per_s);
    EXPECT_EQ(r[4], rep.rows[i].deployment == 1 ? "2" : "1");
  }
}

}  // namespace opscope::sweep
