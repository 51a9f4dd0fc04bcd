// Speed of `opscope llm`: building DeepSeek-V3's step graph (61 layers, identical layers as
// cost twins) and costing one decode step must take under 1 ms; the whole request sum over a
// growing context (--gen-len) evaluates a handful of contexts, not one per token.
//   build/llm_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <string>

#include "cost/ledger.h"
#include "device/device.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/step_graph.h"
#include "llm/llm.h"
#include "llm/serving.h"
#include "roofline/roofline.h"

namespace {

using namespace opscope;

struct Model {
  import::hf::ModelSpec spec;
  import::hf::Recipe recipe;
};

Model Load(std::string_view preset) {
  const import::hf::Preset* p = import::hf::FindPreset(preset);
  auto spec = import::hf::ParseHfConfig(p->json, std::string(p->file));
  auto recipe = import::hf::ResolveRecipe(*spec, {});
  return Model{std::move(*spec), std::move(*recipe)};
}

// Graph construction + the ledger of one decode step (batch 1, context 4096). Freeing the
// graph (a few thousand strings and vectors) is not part of building and costing it, so it
// happens with the clock paused.
void BM_DeepSeekV3BuildAndCostDecode(benchmark::State& state) {
  const Model m = Load("deepseek-v3");
  const cost::Workload w = llm::DecodeBindings(1, 4096);
  size_t nodes = 0;
  for (auto _ : state) {
    auto step = import::hf::BuildStepGraph(m.spec, m.recipe);
    auto ledger = cost::BuildLedger(step->graph, w);
    benchmark::DoNotOptimize(ledger->nodes.data());
    nodes = step->graph.nodes.size();
    state.PauseTiming();
    step = {};
    ledger = {};
    state.ResumeTiming();
  }
  state.counters["nodes"] = static_cast<double>(nodes);
}
BENCHMARK(BM_DeepSeekV3BuildAndCostDecode)->Unit(benchmark::kMicrosecond);

// The same, freeing the graph inside the timed loop.
void BM_DeepSeekV3BuildCostAndFree(benchmark::State& state) {
  const Model m = Load("deepseek-v3");
  const cost::Workload w = llm::DecodeBindings(1, 4096);
  for (auto _ : state) {
    auto step = import::hf::BuildStepGraph(m.spec, m.recipe);
    auto ledger = cost::BuildLedger(step->graph, w);
    benchmark::DoNotOptimize(ledger->nodes.data());
  }
}
BENCHMARK(BM_DeepSeekV3BuildCostAndFree)->Unit(benchmark::kMicrosecond);

// The two halves of the above, separately.
void BM_DeepSeekV3BuildOnly(benchmark::State& state) {
  const Model m = Load("deepseek-v3");
  for (auto _ : state) {
    auto step = import::hf::BuildStepGraph(m.spec, m.recipe);
    benchmark::DoNotOptimize(step->graph.nodes.data());
  }
}
BENCHMARK(BM_DeepSeekV3BuildOnly)->Unit(benchmark::kMicrosecond);

void BM_DeepSeekV3CostOnly(benchmark::State& state) {
  const Model m = Load("deepseek-v3");
  const auto step = import::hf::BuildStepGraph(m.spec, m.recipe);
  const cost::Workload w = llm::DecodeBindings(1, 4096);
  for (auto _ : state) {
    auto ledger = cost::BuildLedger(step->graph, w);
    benchmark::DoNotOptimize(ledger->nodes.data());
  }
}
BENCHMARK(BM_DeepSeekV3CostOnly)->Unit(benchmark::kMicrosecond);

// Everything `opscope llm deepseek-v3` does before rendering (llm::RunLlm): parse the config,
// resolve the device and recipe, plan the deployment, build, cost, time, serving figures.
void BM_DeepSeekV3EndToEnd(benchmark::State& state) {
  llm::Request request;
  request.model = "deepseek-v3";
  for (auto _ : state) {
    auto run = llm::RunLlm(request);
    benchmark::DoNotOptimize(run->evaluation.figures.step_time_s);
  }
}
BENCHMARK(BM_DeepSeekV3EndToEnd)->Unit(benchmark::kMicrosecond);

// Σ of 4000 decode steps of gpt-oss-20b (sliding windows of 128) from context 100, exact.
void BM_GptOssDecodeSum4000(benchmark::State& state) {
  const Model m = Load("gpt-oss-20b");
  auto step = import::hf::BuildStepGraph(m.spec, m.recipe);
  const device::Device dev = *device::FindBuiltinDevice("h100-sxm");
  for (auto _ : state) {
    auto sum = llm::SumDecodeSteps(*step, dev, 8, 100, 4000);
    benchmark::DoNotOptimize(*sum);
  }
}
BENCHMARK(BM_GptOssDecodeSum4000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
