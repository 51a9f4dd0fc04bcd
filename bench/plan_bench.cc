// Speed of `opscope plan` (issue 15): the full search for DeepSeek-V3 on up to 64 H200s —
// aggregated and disaggregated, three recipes (FP8 blocks, NVFP4, INT4 g128), batches 1..512
// per replica, no targets (the widest front) — and the small Llama-3.1-8B case, on one core;
// each predicted by the H200's default engine (vLLM's profile) and at the roofline.
// The counters give the configurations evaluated and the splits built and pruned. A
// process's first search also pays for first touching its memory: repetitions show both.
//   build/bench/plan_bench --benchmark_filter=DeepSeek --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include "plan/plan.h"

namespace {

using namespace opscope;

void Run(benchmark::State& state, const plan::PlanRequest& r) {
  plan::PlanResult last;
  for (auto _ : state) {
    auto p = plan::RunPlan(r);
    if (!p) {
      state.SkipWithError(p.error().message.c_str());
      return;
    }
    last = std::move(*p);
    benchmark::DoNotOptimize(last.front.data());
  }
  state.counters["searched"] = static_cast<double>(last.searched);
  state.counters["splits"] = static_cast<double>(last.splits);
  state.counters["pruned"] = static_cast<double>(last.splits_pruned);
  state.counters["front"] = static_cast<double>(last.front.size());
}

void BM_PlanDeepSeekV3On64H200(benchmark::State& state, const char* engine) {
  plan::PlanRequest r;
  r.engine = engine;
  r.model = "deepseek-v3";
  r.device = "h200";
  r.gpus = 64;
  r.weights = {"fp8_e4m3_b128x128", "nvfp4", "int4_g128"};
  r.disagg = true;
  Run(state, r);
}

void BM_PlanLlama8bOn8H200(benchmark::State& state, const char* engine) {
  plan::PlanRequest r;
  r.engine = engine;
  r.model = "llama-3.1-8b";
  r.device = "h200";
  r.gpus = 8;
  r.disagg = true;
  Run(state, r);
}

BENCHMARK_CAPTURE(BM_PlanDeepSeekV3On64H200, vllm, "vllm")
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_PlanDeepSeekV3On64H200, roofline, "roofline")
    ->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_CAPTURE(BM_PlanLlama8bOn8H200, vllm, "vllm")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_PlanLlama8bOn8H200, roofline, "roofline")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
