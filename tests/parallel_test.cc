// Multi-device deployments against closed forms: tensor parallelism divides layer weights and
// adds two all-reduces per layer, expert parallelism spreads experts and adds the all-to-all,
// pipeline stages pay the bubble, and published deployments fit (or do not).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "device/device.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/step_graph.h"
#include "llm/deployment.h"
#include "llm/llm.h"
#include "llm/serving.h"

namespace opscope::llm {
namespace {

using import::hf::ModelSpec;
using import::hf::Recipe;
using import::hf::StepGraph;

struct Model {
  ModelSpec spec;
  Recipe recipe;
  RecipeOptions options;  // what made the recipe
};

Model Load(std::string_view preset) {
  const import::hf::Preset* p = import::hf::FindPreset(preset);
  EXPECT_NE(p, nullptr) << preset;
  auto spec = import::hf::ParseHfConfig(p->json, std::string(p->file));
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  auto recipe = import::hf::ResolveRecipe(*spec, {});
  EXPECT_TRUE(recipe.has_value()) << recipe.error().message;
  return {*spec, *recipe, {}};
}

const device::Device& Dev(std::string_view name) {
  static std::vector<device::Device> cache;
  for (const device::Device& d : cache) {
    if (d.name == name) return d;
  }
  cache.reserve(16);
  cache.push_back(*device::FindBuiltinDevice(name));
  return cache.back();
}

Deployment Plan(const Model& m, Degrees g, std::string_view device = "h100-sxm") {
  auto d = PlanDeployment(m.spec, g, Dev(device));
  EXPECT_TRUE(d.has_value()) << d.error().message;
  return *d;
}

StepGraph Stage(const Model& m, const Deployment& d, int64_t stage = 0) {
  auto g = import::hf::BuildStepGraph(m.spec, m.recipe, d.Shard(stage));
  EXPECT_TRUE(g.has_value()) << g.error().message;
  EXPECT_TRUE(ir::Validate(g->graph).has_value());
  return std::move(*g);
}

uint64_t WeightBytes(const StepGraph& g) {
  auto f = ComputeModelFigures(g);
  EXPECT_TRUE(f.has_value());
  return f->weight_bytes;
}

// Bytes of the weights every tensor-parallel device keeps whole: norms (and no others in a
// Llama: its KV heads divide by 8 and its vocabulary by 8).
uint64_t NormBytes(const StepGraph& g) {
  uint64_t bytes = 0;
  for (const import::hf::WeightEntry& w : g.weights) {
    const ir::Tensor& t = g.graph.tensors[w.tensor];
    if (t.name.ends_with("norm.weight")) bytes += static_cast<uint64_t>(t.shape[0].constant()) * 2;
  }
  return bytes;
}

// The serving model of `m` on deployment `d`.
Result<Serving> Serve(const Model& m, const Deployment& d, std::string_view device = "h100-sxm") {
  auto build = BuildModel(llm::Model{"test", "test", m.spec}, m.options);
  EXPECT_TRUE(build.has_value()) << build.error().message;
  return Serving::Build(*build, d, Dev(device));
}

// The full analysis of workload `w` on deployment `d`.
Result<Evaluation> RunOn(const Model& m, const Deployment& d, const Workload& w,
                       std::string_view device = "h100-sxm") {
  auto serving = Serve(m, d, device);
  if (!serving) return std::unexpected(serving.error());
  return Evaluate(*serving, w);
}

TEST(Parallel, TensorParallelDividesLayerWeightsAndAddsTwoAllReducesPerLayer) {
  const Model m = Load("llama-3.1-70b");
  auto full = import::hf::BuildStepGraph(m.spec, m.recipe);
  ASSERT_TRUE(full.has_value());
  const int64_t t = 8, batch = 16, hidden = m.spec.hidden;
  const Deployment d = Plan(m, {.tp = t});
  EXPECT_EQ(d.devices, 8);
  const StepGraph dev = Stage(m, d);
  // Llama-3.1-70B at TP=8: per-device weights = 1/8 of the split part + the replicated norms.
  const uint64_t total = WeightBytes(*full), norms = NormBytes(*full);
  EXPECT_EQ((total - norms) % t, 0u);
  EXPECT_EQ(WeightBytes(dev), (total - norms) / t + norms);
  EXPECT_EQ(NormBytes(dev), norms);

  auto r = AnalyzeStep(dev, DecodeBindings(batch, 1024), Dev("h100-sxm"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  int64_t all_reduces = 0;
  for (size_t i = 0; i < dev.graph.nodes.size(); ++i) {
    const ir::Node& n = dev.graph.nodes[i];
    if (n.op != ir::OpKind::kAllReduce) continue;
    ++all_reduces;
    // Ring all-reduce of B·hidden·bytes: each device sends 2·(T−1)/T of it.
    const uint64_t bytes = static_cast<uint64_t>(batch * hidden * 2);  // bf16
    EXPECT_EQ(r->ledger.nodes[i].bytes_link, 2 * (t - 1) * bytes / t) << n.name;
    EXPECT_EQ(r->ledger.nodes[i].bytes(), 0u) << "link traffic is not DRAM traffic";
    EXPECT_EQ(n.StringAttr("scope"), std::optional<std::string_view>("node"));
  }
  EXPECT_EQ(all_reduces, 2 * m.spec.num_layers() + 1);  // + the vocab-parallel embedding
  // Every layer: attention heads and KV heads split.
  size_t attn_index = 0;
  for (size_t i = 0; i < dev.graph.nodes.size(); ++i) {
    if (dev.graph.nodes[i].name == "layers.0.attn.attention") attn_index = i;
  }
  const ir::Node& attn = dev.graph.nodes[attn_index];
  EXPECT_EQ(attn.IntAttr("q_heads"), m.spec.attn.heads / t);
  // The collective time is its link bytes over NVLink plus 2·(T−1) ring steps.
  const device::Device& h100 = Dev("h100-sxm");
  for (size_t i = 0; i < dev.graph.nodes.size(); ++i) {
    if (dev.graph.nodes[i].op != ir::OpKind::kAllReduce) continue;
    const double expect = static_cast<double>(r->ledger.nodes[i].bytes_link) /
                              *h100.interconnect_bytes_per_s +
                          2.0 * (t - 1) * *h100.interconnect_latency_s;
    EXPECT_DOUBLE_EQ(r->analysis.nodes[i].time_s, expect);
    EXPECT_EQ(r->analysis.nodes[i].bound, roofline::Bound::kLink);
    break;
  }
  // The floor overlaps communication: it is at least the communication time at the cheapest
  // algorithm (one-shot / NVLS all-reduce), which is below the ring's.
  EXPECT_GE(r->analysis.totals.fused_floor_s, r->analysis.totals.floor_comm_s);
  EXPECT_LT(r->analysis.totals.floor_comm_s, r->analysis.totals.comm_s);
}

TEST(Parallel, KvHeadsReplicatedWhenFewerThanTp) {
  const Model m = Load("llama-3.1-8b");  // 8 KV heads
  const StepGraph dev = Stage(m, Plan(m, {.tp = 16, .gpus_per_node = 16}, "gb200"));
  for (const import::hf::CacheEntry& c : dev.kv_caches) {
    EXPECT_EQ(dev.graph.tensors[c.tensor].shape[2].constant(), 1);  // one KV head each
  }
}

TEST(Parallel, ExpertParallelSpreadsExpertsAndAddsAllToAll) {
  const Model m = Load("deepseek-v3");
  const int64_t e = 8, batch = 64;
  const Deployment d = Plan(m, {.ep = e}, "h200");
  EXPECT_EQ(d.dp_attention, 8);  // ep / tp
  EXPECT_EQ(d.devices, 8);
  const StepGraph dev = Stage(m, d);
  for (const import::hf::WeightEntry& w : dev.weights) {
    if (w.group != import::hf::WeightGroup::kRoutedExpert) continue;
    EXPECT_EQ(dev.graph.tensors[w.tensor].shape[0].constant(), m.spec.moe.experts / e);
  }
  // Each device runs batch / dp_attention sequences and dispatches their top_k rows.
  const int64_t per_device = batch / d.dp_attention;
  auto r = AnalyzeStep(dev, DecodeBindings(per_device, 2048), Dev("h200"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  int64_t all_to_all = 0;
  for (size_t i = 0; i < dev.graph.nodes.size(); ++i) {
    const ir::Node& n = dev.graph.nodes[i];
    if (n.op != ir::OpKind::kAllToAll) continue;
    ++all_to_all;
    const ir::Tensor& out = dev.graph.tensors[n.outputs[0]];
    // B·top_k rows of hidden in the tensor's format (the checkpoint's fp8 activations with
    // their 1×128 scales), of which (N−1)/N leave the device.
    const uint64_t bytes = *format::MatrixBytes(
        out.format, static_cast<uint64_t>(per_device * m.spec.moe.top_k), m.spec.hidden);
    EXPECT_EQ(r->ledger.nodes[i].bytes_link, (e - 1) * bytes / e) << n.name;
  }
  int64_t moe_layers = 0;
  for (const auto& l : m.spec.layers) moe_layers += l.ffn == import::hf::Ffn::kMoe;
  EXPECT_EQ(all_to_all, 2 * moe_layers);  // dispatch and combine
  // The routed experts are costed on the busiest of the 8 devices holding the pool (the layer
  // waits for it): more experts read than the mean device's 32·(1−(1−8/256)^64), at most its
  // 32; the floor still reads the fewest.
  const double mean = 32 * (1 - std::pow(1 - 8.0 / 256, static_cast<double>(batch)));
  for (size_t i = 0; i < dev.graph.nodes.size(); ++i) {
    const ir::Node& n = dev.graph.nodes[i];
    if (n.op != ir::OpKind::kExpertGateUp) continue;
    EXPECT_EQ(n.IntAttr("busiest_of"), std::optional<int64_t>(e)) << n.name;
    const ir::Tensor& w = dev.graph.tensors[n.inputs[1]];
    const std::vector<int64_t> dims{32, w.shape[1].constant(), w.shape[2].constant()};
    const auto all = static_cast<double>(*format::TensorBytes(w.format, dims));
    const double read = static_cast<double>(r->ledger.nodes[i].bytes_weights) / (all / 32.0);
    EXPECT_GT(read, mean + 1) << n.name;
    EXPECT_LE(read, 32.0) << n.name;
    EXPECT_LT(r->ledger.nodes[i].floor_input_bytes, r->ledger.nodes[i].bytes_weights) << n.name;
  }
}

// One attention replica over the whole expert-parallel group (--tp 8 --ep 8, dp_attention 1):
// every device already holds every token, so no all-to-all moves rows; each device gathers the
// rows routed to its own experts and the partial sums meet in the tensor-parallel all-reduce
// (with DeepSeek-V3's shared expert) — one all-reduce of n·hidden per MoE layer, as the
// engines run expert parallelism without attention data parallelism.
TEST(Parallel, ExpertParallelInsideOneReplicaHasNoAllToAll) {
  for (const char* preset : {"deepseek-v3", "qwen3-30b-a3b"}) {
    const Model m = Load(preset);
    const Deployment d = Plan(m, {.tp = 8, .ep = 8}, "h200");
    EXPECT_EQ(d.dp_attention, 1);
    EXPECT_FALSE(d.dispatches_experts());
    const StepGraph dev = Stage(m, d);
    const int64_t batch = 16;
    auto r = AnalyzeStep(dev, DecodeBindings(batch, 2048), Dev("h200"));
    ASSERT_TRUE(r.has_value()) << r.error().message;
    int64_t moe_layers = 0;
    for (const auto& l : m.spec.layers) moe_layers += l.ffn == import::hf::Ffn::kMoe;
    int64_t gathers = 0, moe_all_reduces = 0;
    for (size_t i = 0; i < dev.graph.nodes.size(); ++i) {
      const ir::Node& n = dev.graph.nodes[i];
      EXPECT_NE(n.op, ir::OpKind::kAllToAll) << preset << ": " << n.name;
      EXPECT_FALSE(n.op == ir::OpKind::kAllGather && n.name.find("experts") != std::string::npos)
          << preset << ": " << n.name;
      if (n.name.ends_with("moe.experts.gather")) {
        ++gathers;
        // ceil(n·top_k / ep) rows of hidden, as the dispatched form receives.
        const ir::Tensor& out = dev.graph.tensors[n.outputs[0]];
        const uint64_t rows = static_cast<uint64_t>(batch * m.spec.moe.top_k + 7) / 8;
        EXPECT_EQ(r->ledger.nodes[i].bytes_written,
                  *format::MatrixBytes(out.format, rows, m.spec.hidden))
            << preset;
      }
      if (n.name.ends_with("moe.moe_all_reduce")) {
        ++moe_all_reduces;
        EXPECT_EQ(n.op, ir::OpKind::kAllReduce);
        // Ring all-reduce of the layer output, n × hidden in bf16: 2·(N−1)/N of it leaves.
        EXPECT_EQ(r->ledger.nodes[i].bytes_link,
                  uint64_t{2} * 7 * static_cast<uint64_t>(batch * m.spec.hidden * 2) / 8)
            << preset;
      }
    }
    EXPECT_EQ(gathers, moe_layers) << preset;
    EXPECT_EQ(moe_all_reduces, moe_layers) << preset;
  }
  // Two replicas (--tp 4 --ep 8: dp_attention 2) hold different tokens: rows are dispatched.
  const Model m = Load("deepseek-v3");
  EXPECT_TRUE(Plan(m, {.tp = 4, .ep = 8}, "h200").dispatches_experts());
}

// top_k counts experts of the router's whole pool, so an expert-parallel device may hold fewer
// than top_k of them: Mixtral's 8 experts at --ep 8 (one each, top_k 2) and gpt-oss-120b's 128
// at --ep 64 (two each, top_k 4) cost, each device running ceil(n·top_k/ep) rows of its group's
// n tokens through its own experts: 2 · rows · k · out FLOPs per expert matrix.
TEST(Parallel, ExpertParallelDevicesMayHoldFewerExpertsThanTopK) {
  for (const auto& [preset, ep] : std::vector<std::pair<const char*, int64_t>>{
           {"mixtral-8x7b", 8}, {"gpt-oss-120b", 64}}) {
    const Model m = Load(preset);
    const Deployment d = Plan(m, {.ep = ep}, "b200");
    const StepGraph dev = Stage(m, d);
    const int64_t batch = 4;  // per attention replica
    auto r = AnalyzeStep(dev, DecodeBindings(batch, 1024), Dev("b200"));
    ASSERT_TRUE(r.has_value()) << preset << ": " << r.error().message;
    int64_t checked = 0;
    for (size_t i = 0; i < dev.graph.nodes.size(); ++i) {
      const ir::Node& n = dev.graph.nodes[i];
      if (n.op != ir::OpKind::kExpertGateUp) continue;
      const ir::Tensor& w = dev.graph.tensors[n.inputs[1]];
      EXPECT_EQ(w.shape[0].constant(), m.spec.moe.experts / ep) << preset;
      EXPECT_LT(w.shape[0].constant(), m.spec.moe.top_k) << preset;
      const uint64_t rows =
          static_cast<uint64_t>(batch * d.dp_attention * m.spec.moe.top_k + ep - 1) /
          static_cast<uint64_t>(ep);
      EXPECT_EQ(r->ledger.nodes[i].flops, 2 * rows * static_cast<uint64_t>(w.shape[2].constant()) *
                                              static_cast<uint64_t>(w.shape[1].constant()))
          << preset << ": " << n.name;
      ++checked;
    }
    EXPECT_GT(checked, 0) << preset;
  }
}

// MiniMax-M2's q and k norms run over the whole projection (qk_norm_type "per_layer"), which
// tensor parallelism splits: every layer all-reduces each norm's per-token sum of squares, n
// f32 values, over the tp devices (and reads x once more for it). One device needs neither.
TEST(Parallel, WholeProjectionQkNormAllReducesItsMeanOfSquares) {
  const Model m = Load("minimax-m2.5");
  ASSERT_TRUE(m.spec.attn.qk_norm_full);
  const int64_t batch = 4;
  const StepGraph one = Stage(m, Plan(m, {}, "b200"));
  for (const ir::Node& n : one.graph.nodes) {
    EXPECT_EQ(n.name.find("norm.all_reduce"), std::string::npos) << n.name;
  }
  const StepGraph dev = Stage(m, Plan(m, {.tp = 8}, "b200"));
  auto r = AnalyzeStep(dev, DecodeBindings(batch, 2048), Dev("b200"));
  ASSERT_TRUE(r.has_value()) << r.error().message;
  int64_t norm_all_reduces = 0;
  for (size_t i = 0; i < dev.graph.nodes.size(); ++i) {
    const ir::Node& n = dev.graph.nodes[i];
    if (!n.name.ends_with("_norm.all_reduce")) continue;
    ++norm_all_reduces;
    EXPECT_EQ(n.op, ir::OpKind::kAllReduce);
    // Ring all-reduce of n f32 sums: 2·(N−1)/N of n·4 bytes leaves the device.
    EXPECT_EQ(r->ledger.nodes[i].bytes_link, uint64_t{2} * 7 * batch * 4 / 8) << n.name;
  }
  EXPECT_EQ(norm_all_reduces, 2 * m.spec.num_layers());  // q and k in every layer
}

TEST(Parallel, DeepSeekV3FitsEightH200WithExpertParallelNotOne) {
  const Model m = Load("deepseek-v3");
  Workload w;
  w.batch = 8;
  w.context = 4096;
  auto one = RunOn(m, Plan(m, {}, "h200"), w, "h200");
  ASSERT_TRUE(one.has_value());
  EXPECT_FALSE(one->figures.fits);  // 673 GB of FP8 weights on one 141 GB device
  const Deployment d = Plan(m, {.ep = 8}, "h200");
  EXPECT_EQ(d.devices, 8);
  auto eight = RunOn(m, d, w, "h200");
  ASSERT_TRUE(eight.has_value()) << eight.error().message;
  EXPECT_TRUE(eight->figures.fits);
  EXPECT_LT(static_cast<double>(eight->figures.per_device.weight_bytes), 0.9 * 141e9);
  ASSERT_TRUE(eight->figures.per_device.comm_time_s.has_value());
  EXPECT_GT(*eight->figures.per_device.comm_time_s, 0);
}

TEST(Parallel, PipelineBubbleIsPMinusOneOverMPlusPMinusOne) {
  // Stages of equal work: a model whose embedding and LM head are negligible.
  const import::hf::Preset* p = import::hf::FindPreset("llama-3.1-8b");
  std::string json(p->json);
  const size_t at = json.find("\"vocab_size\"");
  ASSERT_NE(at, std::string::npos);
  const size_t digits = json.find_first_of("0123456789", at);
  json.replace(digits, json.find_first_not_of("0123456789", digits) - digits, "128");
  auto spec = import::hf::ParseHfConfig(json, "small-vocab");
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  auto recipe = import::hf::ResolveRecipe(*spec, {});
  ASSERT_TRUE(recipe.has_value());
  const Model m{*spec, *recipe, {}};
  for (const auto& [pp, micro] : {std::pair<int64_t, int64_t>{4, 4}, {4, 16}, {2, 8}}) {
    const Deployment d = Plan(m, {.pp = pp, .micro_batches = micro});
    Workload w;
    w.batch = 64;
    auto r = RunOn(m, d, w);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    const double ideal = static_cast<double>(pp - 1) / static_cast<double>(micro + pp - 1);
    EXPECT_NEAR(r->figures.per_device.bubble, ideal, 0.01 * ideal) << pp << " " << micro;
    EXPECT_EQ(r->figures.per_device.micro_batches, micro);
  }
  // Stage hand-offs: one SendRecv of the hidden state per non-last stage.
  const Deployment d = Plan(m, {.pp = 4});
  EXPECT_EQ(d.stage_layers.size(), 4u);
  const StepGraph s0 = Stage(m, d, 0), s3 = Stage(m, d, 3);
  EXPECT_EQ(s0.graph.nodes.back().op, ir::OpKind::kSendRecv);
  EXPECT_EQ(s3.graph.nodes.back().op, ir::OpKind::kLmHead);
}

TEST(Parallel, PipelineStepTimeIsStageSumPlusMMinusOneSlowest) {
  const std::vector<double> stages = {1.0, 2.0, 3.0};
  EXPECT_EQ(PipelineStepTime(stages, 4), 1.0 + 2.0 + 3.0 + 3 * 3.0);  // Σ t_s + (M − 1) · max
  EXPECT_EQ(PipelineStepTime(stages, 1), 6.0);                          // one micro-batch: Σ t_s
  const std::vector<double> one = {0.5};
  EXPECT_EQ(PipelineStepTime(one, 3), 3 * 0.5);                         // one stage: M · t
  // Equal stages: M·t of work in (M + P − 1)·t, the bubble (P − 1)/(M + P − 1).
  const std::vector<double> equal(4, 0.25);
  const double step = PipelineStepTime(equal, 6);
  EXPECT_DOUBLE_EQ(step, (6 + 4 - 1) * 0.25);
  EXPECT_DOUBLE_EQ((step - 6 * 0.25) / step, 3.0 / 9.0);
}

Workload Decode(int64_t batch, int64_t context, std::optional<int64_t> gen_len = std::nullopt) {
  Workload w;
  w.batch = batch;
  w.context = context;
  w.gen_len = gen_len;
  return w;
}

Workload Prefill(int64_t batch, int64_t prompt, std::optional<int64_t> gen_len = std::nullopt) {
  Workload w = Decode(batch, prompt, gen_len);
  w.phase = Phase::kPrefill;
  return w;
}

Figures Deploy(const Model& m, const Deployment& d, const Workload& w) {
  auto run = RunOn(m, d, w);
  EXPECT_TRUE(run.has_value()) << run.error().message;
  return run ? run->figures : Figures{};
}

// gpt-oss-20b at --ep 2 --pp 2: expert all-to-alls, stage hand-offs, and sliding-window layers
// (128 tokens) whose KV stops growing inside the request, so the decode steps are not one
// affine stretch.
TEST(Parallel, WholeRequestIsThePrefillStepThenDecodeStepsOfTheDeployment) {
  const Model m = Load("gpt-oss-20b");
  const Deployment d = Plan(m, {.ep = 2, .pp = 2});
  ASSERT_EQ(d.devices, 4);
  constexpr int64_t kBatch = 6, kPrompt = 100, kGen = 60;  // contexts 100..159
  const Figures r = Deploy(m, d, Decode(kBatch, kPrompt, kGen));
  ASSERT_TRUE(r.ttft_s && r.e2e_s && r.tpot_s);
  // TTFT: the deployment's prefill step of the prompt.
  const Figures prefill = Deploy(m, d, Prefill(kBatch, kPrompt));
  EXPECT_EQ(*r.ttft_s, prefill.step_time_s);
  // Decode: the sum of the deployment's decode steps, each run on its own.
  double decode = 0;
  for (int64_t c = kPrompt; c < kPrompt + kGen; ++c) {
    decode += Deploy(m, d, Decode(kBatch, c)).step_time_s;
  }
  EXPECT_NEAR(*r.e2e_s - *r.ttft_s, decode, 1e-9 * decode);
  EXPECT_NEAR(*r.tpot_s, decode / kGen, 1e-9 * decode / kGen);
  EXPECT_EQ(r.step_time_s, Deploy(m, d, Decode(kBatch, kPrompt)).step_time_s);
  // Memory holds the prompt and every generated token: a decode step at context P + O.
  const Figures end = Deploy(m, d, Decode(kBatch, kPrompt + kGen));
  EXPECT_EQ(r.max_batch, end.max_batch);
  EXPECT_EQ(r.kv_window_bytes_per_seq, end.kv_window_bytes_per_seq);

  // --gen-len 1: the prefill plus one decode step at the prompt.
  const Figures one = Deploy(m, d, Decode(kBatch, kPrompt, 1));
  const double step = Deploy(m, d, Decode(kBatch, kPrompt)).step_time_s;
  EXPECT_NEAR(*one.e2e_s, prefill.step_time_s + step, 1e-12);
  EXPECT_NEAR(*one.tpot_s, step, 1e-12);
  // A prefill request's TTFT is its own step.
  const Figures p = Deploy(m, d, Prefill(kBatch, kPrompt, 1));
  EXPECT_EQ(*p.ttft_s, p.step_time_s);
  EXPECT_NEAR(*p.e2e_s, p.step_time_s + step, 1e-12);
}

// One device is the deployment tp = ep = pp = 1: its one stage is the whole model's step
// graph, and its figures are that step's, exactly — micro-batches (which need a pipeline) and
// the layout do not apply.
TEST(Parallel, OneDeviceIsTheDeploymentOfOneStage) {
  const Model m = Load("gpt-oss-20b");
  const Deployment d = Plan(m, {.gpus_per_node = 8, .micro_batches = 4});
  EXPECT_TRUE(d.one_device());
  EXPECT_EQ(d.micro_batches, 1);
  EXPECT_TRUE(d.assumptions.empty());
  auto step = import::hf::BuildStepGraph(m.spec, m.recipe);
  ASSERT_TRUE(step.has_value());
  const device::Device& dev = Dev("h100-sxm");
  constexpr int64_t kBatch = 3, kContext = 50, kGen = 300;
  const Figures r = Deploy(m, d, Decode(kBatch, kContext, kGen));
  auto decode = AnalyzeStep(*step, DecodeBindings(kBatch, kContext), dev);
  auto prefill = AnalyzeStep(*step, PrefillBindings(kBatch, kContext), dev);
  auto sum = SumDecodeSteps(*step, dev, kBatch, kContext, kGen);
  ASSERT_TRUE(decode && prefill && sum);
  EXPECT_EQ(r.step_time_s, decode->analysis.totals.time_s);
  EXPECT_EQ(r.tokens_per_s, kBatch / decode->analysis.totals.time_s);
  EXPECT_EQ(*r.ttft_s, prefill->analysis.totals.time_s);
  EXPECT_EQ(*r.e2e_s, prefill->analysis.totals.time_s + *sum);
  EXPECT_EQ(*r.tpot_s, *sum / kGen);
  const ModelFigures mf = *ComputeModelFigures(*step);
  EXPECT_EQ(r.max_batch, MaxBatch(mf, BytesPerSeq(*step, mf, kContext + kGen), dev.memory_bytes, 0.9));
  EXPECT_EQ(r.kv_window_bytes_per_seq, KvWindowBytesPerSeq(*step, kContext + kGen));
  EXPECT_EQ(r.per_device.seqs, static_cast<uint64_t>(kBatch));
  EXPECT_EQ(r.per_device.weight_bytes, mf.weight_bytes);
}

// Two stages whose times cross: bf16 weights with an fp8 cache (slow at short contexts) and
// q4_0 weights with an f32 cache (slow at long ones). The closed-form sum follows the slowest
// stage across the switch; the reference evaluates every step.
TEST(Parallel, PipelineDecodeSumFollowsTheSlowestStageAcrossTheSwitch) {
  const Model base = Load("llama-3.1-8b");
  auto stage = [&](import::hf::RecipeOptions o) {
    auto recipe = import::hf::ResolveRecipe(base.spec, o);
    EXPECT_TRUE(recipe.has_value()) << recipe.error().message;
    auto g = import::hf::BuildStepGraph(base.spec, *recipe);
    EXPECT_TRUE(g.has_value()) << g.error().message;
    return std::move(*g);
  };
  std::vector<StepGraph> stages;
  stages.push_back(stage({.kv = "fp8_e4m3"}));
  stages.push_back(stage({.weights = "q4_0", .kv = "f32"}));
  const device::Device& dev = Dev("h100-sxm");
  constexpr int64_t kBatch = 32, kMicro = 3, kFirst = 1000, kSteps = 1500;
  auto times = [&](int64_t c) {
    std::vector<double> t;
    for (const StepGraph& g : stages) {
      auto r = AnalyzeStep(g, DecodeBindings(kBatch, c), dev);
      EXPECT_TRUE(r.has_value());
      t.push_back(r->analysis.totals.time_s);
    }
    return t;
  };
  const std::vector<double> first = times(kFirst), last = times(kFirst + kSteps - 1);
  ASSERT_GT(first[0], first[1]);  // the switch lies inside the request
  ASSERT_LT(last[0], last[1]);
  double reference = 0;
  for (int64_t c = kFirst; c < kFirst + kSteps; ++c) reference += PipelineStepTime(times(c), kMicro);
  const std::vector<const StepGraph*> pointers = {&stages[0], &stages[1]};
  auto sum = SumPipelineDecodeSteps(pointers, dev, kBatch, kMicro, kFirst, kSteps);
  ASSERT_TRUE(sum.has_value()) << sum.error().message;
  EXPECT_NEAR(*sum, reference, 1e-9 * reference);
}

// Replaces the number after "field" in a config's JSON text.
std::string SetNumber(std::string json, std::string_view field, int64_t value) {
  const size_t at = json.find("\"" + std::string(field) + "\"");
  EXPECT_NE(at, std::string::npos) << field;
  const size_t digits = json.find_first_of("0123456789", at);
  json.replace(digits, json.find_first_not_of("0123456789", digits) - digits,
               std::to_string(value));
  return json;
}

// A node whose bound changes inside the request: DeepSeek-V3's MLA attention over an fp8 cache
// is memory-bound at short contexts and compute-bound at long ones (its FLOPs per cached byte
// pass the H100's bf16 ridge near 11,500 tokens at 4 sequences). Two layers, two stages.
TEST(Parallel, PipelineDecodeSumFollowsANodeAcrossItsRidge) {
  const import::hf::Preset* p = import::hf::FindPreset("deepseek-v3");
  const std::string json = SetNumber(SetNumber(std::string(p->json), "num_hidden_layers", 2),
                                     "vocab_size", 1024);
  auto spec = import::hf::ParseHfConfig(json, "deepseek-v3, two layers");
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  auto recipe = import::hf::ResolveRecipe(*spec, {.kv = "fp8_e4m3"});
  ASSERT_TRUE(recipe.has_value()) << recipe.error().message;
  const Model m{*spec, *recipe, {.kv = "fp8_e4m3"}};
  const Deployment d = Plan(m, {.pp = 2});
  std::vector<StepGraph> stages;
  for (int64_t s = 0; s < 2; ++s) stages.push_back(Stage(m, d, s));
  const device::Device& dev = Dev("h100-sxm");
  constexpr int64_t kBatch = 4, kMicro = 2, kFirst = 11000, kSteps = 1500;
  auto attention_bound = [&](int64_t c) {
    auto r = AnalyzeStep(stages[1], DecodeBindings(kBatch, c), dev);
    EXPECT_TRUE(r.has_value());
    for (size_t i = 0; i < stages[1].graph.nodes.size(); ++i) {
      if (stages[1].graph.nodes[i].op == ir::OpKind::kPagedAttention) {
        return r->analysis.nodes[i].bound;
      }
    }
    return roofline::Bound::kNone;
  };
  ASSERT_EQ(attention_bound(kFirst), roofline::Bound::kMemory);  // the ridge lies inside
  ASSERT_EQ(attention_bound(kFirst + kSteps - 1), roofline::Bound::kCompute);
  double reference = 0;
  for (int64_t c = kFirst; c < kFirst + kSteps; ++c) {
    std::vector<double> t;
    for (const StepGraph& g : stages) {
      auto r = AnalyzeStep(g, DecodeBindings(kBatch, c), dev);
      ASSERT_TRUE(r.has_value());
      t.push_back(r->analysis.totals.time_s);
    }
    reference += PipelineStepTime(t, kMicro);
  }
  const std::vector<const StepGraph*> pointers = {&stages[0], &stages[1]};
  auto sum = SumPipelineDecodeSteps(pointers, dev, kBatch, kMicro, kFirst, kSteps);
  ASSERT_TRUE(sum.has_value()) << sum.error().message;
  EXPECT_NEAR(*sum, reference, 1e-9 * reference);
}

TEST(Parallel, InvalidDegreesNameTheOption) {
  const Model m = Load("deepseek-v3");
  const Model llama = Load("llama-3.1-70b");
  auto expect_error = [](const Model& model, Degrees g, std::string_view option,
                         std::string_view why) {
    auto d = PlanDeployment(model.spec, g, Dev("h200"));
    ASSERT_FALSE(d.has_value());
    EXPECT_NE(d.error().message.find("option '" + std::string(option) + "'"), std::string::npos)
        << d.error().message;
    EXPECT_NE(d.error().message.find(why), std::string::npos) << d.error().message;
  };
  expect_error(m, {.tp = 3}, "--tp", "128 attention heads are not divisible by 3");
  expect_error(m, {.ep = 7}, "--ep", "256 routed experts are not divisible by 7");
  expect_error(llama, {.ep = 2}, "--ep", "no routed experts");
  expect_error(m, {.pp = 62}, "--pp", "62 stages for 61 layers");
  expect_error(m, {.tp = 8, .gpus_per_node = 16}, "--gpus-per-node", "node has 8");
  expect_error(m, {.tp = 4, .ep = 8, .dp_attention = 3}, "--dp-attention", "must divide");
  expect_error(m, {.tp = 0}, "--tp", "must be positive");
  // A split row that no longer fits the recipe's block (gpt-oss: 2880 / 4 = 720 columns of
  // mxfp4's 32-element blocks) is padded to whole blocks (llm_quant_test.cc), not an error.
}

}  // namespace
}  // namespace opscope::llm
