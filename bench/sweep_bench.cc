// Speed of `opscope sweep llm` (issue 5): the 65,536-point decode sweep of Llama-2-7B
// (batch 1..16 × context 512..4607) — compiling the step plan, evaluating every point from it,
// and rendering the CSV — against LLM-Viewer's own loop, about 49 µs per step (its Python
// import not counted). The goal: at least 100× less time per point (< 0.49 µs).
//   build/bench/sweep_bench
#include <benchmark/benchmark.h>

#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "device/device.h"
#include "llm/serving.h"
#include "report/render.h"
#include "cost/expert_balance.h"
#include "sweep/step_plan.h"
#include "sweep/sweep.h"

namespace {

using namespace opscope;

struct Fixture {
  llm::Model model;
  sweep::SweepSpec sweep;
};

Fixture& Llama2Sweep(const char* preset = "llama-2-7b-hf") {
  static Fixture f = [&] {
    Fixture x;
    x.model = *llm::OpenModel(preset);
    x.sweep.batches.resize(16);
    std::iota(x.sweep.batches.begin(), x.sweep.batches.end(), 1);
    x.sweep.contexts.resize(4096);
    std::iota(x.sweep.contexts.begin(), x.sweep.contexts.end(), 512);
    x.sweep.devices = {*device::ResolveDevice("h100-sxm")};
    x.sweep.weights = {std::nullopt};
    return x;
  }();
  f.sweep.model = &f.model;
  return f;
}

// The whole sweep: step graph, plan, 65,536 points with their serving figures.
void BM_SweepLlama2Decode65536(benchmark::State& state) {
  Fixture& f = Llama2Sweep();
  size_t points = 0;
  for (auto _ : state) {
    auto rep = sweep::RunSweep(f.sweep);
    points = rep->rows.size();
    benchmark::DoNotOptimize(rep->rows.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * points));
  state.counters["ns_per_point"] = benchmark::Counter(
      static_cast<double>(state.iterations() * points), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// 64 points of `model` on `device` (batch 1..4 × 16 contexts from 1024), one thread.
sweep::SweepSpec SixtyFourPoints(const llm::Model& model, const char* device) {
  sweep::SweepSpec spec;
  spec.model = &model;
  spec.batches = {1, 2, 3, 4};
  for (int64_t c = 0; c < 16; ++c) spec.contexts.push_back(1024 + 256 * c);
  spec.devices = {*device::ResolveDevice(device)};
  spec.weights = {std::nullopt};
  spec.threads = 1;
  return spec;
}

// The sweep of `spec` timed, with its cost per point.
void TimeSweepPoints(benchmark::State& state, const sweep::SweepSpec& spec) {
  size_t points = 0;
  for (auto _ : state) {
    auto rep = sweep::RunSweep(spec);
    points = rep->rows.size();
    benchmark::DoNotOptimize(rep->rows.data());
  }
  state.counters["ns_per_point"] = benchmark::Counter(
      static_cast<double>(state.iterations() * points),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Issue 14: predictions may add at most 2x to a sweep point's cost. A 64-point sweep of
// Llama-3.1-8B on H100 (batch 1..4 x 16 contexts) with and without --engine vllm, decode steps
// (arg 0) and whole requests with --gen-len 128 (arg 1); compare ns_per_point.
void SweepPoints(benchmark::State& state, const std::optional<std::string>& engine) {
  static llm::Model model = *llm::OpenModel("llama-3.1-8b");
  sweep::SweepSpec spec = SixtyFourPoints(model, "h100-sxm");
  spec.engine = engine;
  if (state.range(0) == 1) spec.gen_lens = {128};
  TimeSweepPoints(state, spec);
}
void BM_SweepPointRoofline(benchmark::State& state) { SweepPoints(state, std::nullopt); }
void BM_SweepPointPredicted(benchmark::State& state) { SweepPoints(state, "vllm"); }

// An expert-parallel sweep point: DeepSeek-V3 at --ep 8 on H200 (batch 1..4 × 16 contexts,
// decode), whose routed experts are costed on the busiest of the 8 devices
// (cost/expert_balance.h) at every point.
void BM_SweepPointExpertParallel(benchmark::State& state) {
  static llm::Model model = *llm::OpenModel("deepseek-v3");
  sweep::SweepSpec spec = SixtyFourPoints(model, "h200");
  spec.eps = {8};
  TimeSweepPoints(state, spec);
}

// The busiest device's expert count alone (arg 1: the mean device's, arg 8: the busiest of 8),
// at DeepSeek-V3's 32 experts a device and the token counts of a decode batch.
void BM_ExpertParallelActive(benchmark::State& state) {
  const auto busiest_of = static_cast<uint64_t>(state.range(0));
  double rows = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(cost::ExpertParallelActive(rows, 32, 8, 256, busiest_of));
    rows = rows >= 64 ? 1 : rows + 1;
  }
}

// The same points rendered as CSV.
void BM_SweepLlama2Decode65536Csv(benchmark::State& state) {
  Fixture& f = Llama2Sweep();
  auto rep = sweep::RunSweep(f.sweep);
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string csv = report::RenderSweepCsv(*rep);
    bytes = csv.size();
    benchmark::DoNotOptimize(csv.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * rep->rows.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// Plan compilation alone (once per model × recipe).
void BM_CompilePlanLlama2(benchmark::State& state) {
  Fixture& f = Llama2Sweep();
  auto build = llm::BuildModel(f.model, {});
  for (auto _ : state) {
    auto plan = sweep::StepPlan::Compile((*build)->whole->graph);
    benchmark::DoNotOptimize(plan->get());
  }
}

// One block of 64 decode points from a compiled plan (the inner loop).
void BM_PlanTimeBlock(benchmark::State& state) {
  Fixture& f = Llama2Sweep();
  auto build = llm::BuildModel(f.model, {});
  auto plan = sweep::StepPlan::Compile((*build)->whole->graph);
  std::vector<sweep::Point> points(sweep::StepPlan::kBlock);
  for (size_t i = 0; i < points.size(); ++i) points[i] = {8, 8, 1000 + static_cast<int64_t>(i)};
  std::vector<std::optional<sweep::StepTiming>> out(points.size());
  for (auto _ : state) {
    auto ok = (*plan)->TimeBlock(points, f.sweep.devices[0], out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * points.size()));
  state.counters["nodes"] = static_cast<double>((*plan)->stats().nodes);
  state.counters["distinct"] = static_cast<double>((*plan)->stats().distinct);
  state.counters["closed_form"] = static_cast<double>((*plan)->stats().closed_form);
}

BENCHMARK(BM_SweepLlama2Decode65536)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SweepLlama2Decode65536Csv)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SweepPointRoofline)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SweepPointPredicted)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SweepPointExpertParallel)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ExpertParallelActive)->Arg(1)->Arg(8);
BENCHMARK(BM_CompilePlanLlama2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanTimeBlock)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
