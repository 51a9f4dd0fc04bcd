// Speed of predictions (issue 14: they may add at most 2x to a sweep point's cost once the
// serving model calls them). Measured per step graph: the analysis a point needs today (ledger
// + roofline), StepPredictor::Predict on that analysis (per-node shapes, kernel formula, cost
// twins reused), and one distinct node's Describe + KernelTime, the call a compiled sweep
// would make per distinct node; plus compiling the predictor once per graph.
//   build/bench/predict_bench
#include <benchmark/benchmark.h>

#include <string>

#include "cost/ledger.h"
#include "device/device.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "predict/kernel_model.h"
#include "predict/predict.h"
#include "predict/profile.h"
#include "roofline/roofline.h"

namespace {

using namespace opscope;

struct Fixture {
  import::hf::StepGraph step;
  cost::Ledger ledger;
  roofline::Analysis analysis;
  device::Device device;
};

const Fixture& Model(const char* preset) {
  static std::vector<std::pair<std::string, Fixture>> cache;
  for (const auto& [name, f] : cache) {
    if (name == preset) return f;
  }
  const import::hf::Preset* p = import::hf::FindPreset(preset);
  auto spec = import::hf::ParseHfConfig(p->json, std::string(p->file));
  auto recipe = import::hf::ResolveRecipe(*spec, {});
  Fixture f;
  f.step = std::move(*import::hf::BuildStepGraph(*spec, *recipe));
  f.device = *device::FindBuiltinDevice("h200");
  f.ledger = *cost::BuildLedger(f.step.graph, {{{"n", 16}, {"seqs", 16}, {"ctx", 4096}}});
  f.analysis = *roofline::Estimate(f.step.graph, f.ledger, f.device);
  cache.reserve(8);
  cache.emplace_back(preset, std::move(f));
  return cache.back().second;
}

const char* kModels[] = {"llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3"};

// Today's cost of a point without a compiled plan: the ledger and the roofline.
void BM_LedgerAndRoofline(benchmark::State& state) {
  const Fixture& f = Model(kModels[state.range(0)]);
  const cost::Workload w{{{"n", 16}, {"seqs", 16}, {"ctx", 4096}}};
  for (auto _ : state) {
    auto ledger = cost::BuildLedger(f.step.graph, w);
    auto analysis = roofline::Estimate(f.step.graph, *ledger, f.device);
    benchmark::DoNotOptimize(analysis->totals.time_s);
  }
  state.SetLabel(kModels[state.range(0)]);
  state.counters["nodes"] = static_cast<double>(f.step.graph.nodes.size());
}
BENCHMARK(BM_LedgerAndRoofline)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

// The prediction on top of that analysis, the predictor compiled once.
void BM_Predict(benchmark::State& state) {
  const Fixture& f = Model(kModels[state.range(0)]);
  const predict::EngineProfile& vllm = **predict::FindBuiltinProfile("vllm");
  auto predictor = predict::StepPredictor::Compile(f.step.graph, f.device, vllm);
  for (auto _ : state) {
    auto p = (*predictor)->Predict(f.ledger, f.analysis);
    benchmark::DoNotOptimize(p->step_time_s);
  }
  state.SetLabel(kModels[state.range(0)]);
}
BENCHMARK(BM_Predict)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

void BM_CompilePredictor(benchmark::State& state) {
  const Fixture& f = Model(kModels[state.range(0)]);
  const predict::EngineProfile& vllm = **predict::FindBuiltinProfile("vllm");
  for (auto _ : state) {
    auto predictor = predict::StepPredictor::Compile(f.step.graph, f.device, vllm);
    benchmark::DoNotOptimize(predictor->get());
  }
  state.SetLabel(kModels[state.range(0)]);
}
BENCHMARK(BM_CompilePredictor)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond);

// Per distinct node: what a compiled sweep adds per node and point. The nodes cycled through
// are every node of the step that is not a cost twin.
void BM_DescribeAndTimeOneNode(benchmark::State& state) {
  const Fixture& f = Model(kModels[state.range(0)]);
  const predict::EngineProfile& vllm = **predict::FindBuiltinProfile("vllm");
  auto predictor = predict::StepPredictor::Compile(f.step.graph, f.device, vllm);
  const predict::DeviceProfile& entry = (*predictor)->device_profile();
  expr::Bindings b(f.step.graph.symbols);
  for (const auto& [name, value] : f.ledger.bound_dims) {
    if (auto id = f.step.graph.symbols.Find(name)) b.Set(*id, value);
  }
  std::vector<size_t> distinct;
  for (size_t i = 0; i < f.step.graph.nodes.size(); ++i) {
    if (f.step.graph.nodes[i].cost_twin < 0 && f.ledger.nodes[i].costed) distinct.push_back(i);
  }
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = distinct[k++ % distinct.size()];
    const predict::KernelInput in = (*predictor)->Describe(i, f.ledger.nodes[i], b);
    const predict::KernelParams* p = entry.Find(in.cls, in.variant);
    double t = 0;
    if (p != nullptr) t = predict::KernelTime(in, *p, (*predictor)->rates());
    benchmark::DoNotOptimize(t);
  }
  state.SetLabel(std::string(kModels[state.range(0)]) + ", " + std::to_string(distinct.size()) +
                 " distinct nodes");
}
BENCHMARK(BM_DescribeAndTimeOneNode)->DenseRange(0, 2);

}  // namespace

BENCHMARK_MAIN();
