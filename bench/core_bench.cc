// Speed of the core: ledger + roofline over a synthetic 1,000,000-node graph (target ≥ 5 M
// nodes/s on one core), and parse + analysis + JSON report of the same graph as JSON text.
//   build/bench/core_bench --benchmark_filter=. --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include "bench/synthetic_graph.h"
#include "cost/ledger.h"
#include "device/device.h"
#include "import/opscope_json/graph_json.h"
#include "report/render.h"
#include "report/report_model.h"
#include "roofline/roofline.h"

namespace {

using namespace opscope;

void BM_LedgerAndRoofline(benchmark::State& state) {
  const auto nodes = static_cast<size_t>(state.range(0));
  ir::Graph g = bench::MakeChainGraph(nodes);
  const device::Device g_device = *device::FindBuiltinDevice("h100-sxm");
  cost::Workload w{{{"n", 1}}};
  for (auto _ : state) {
    auto ledger = cost::BuildLedger(g, w);
    auto analysis = roofline::Estimate(g, *ledger, g_device);
    benchmark::DoNotOptimize(analysis->totals.time_s);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * nodes));
  state.counters["nodes/s"] = benchmark::Counter(static_cast<double>(state.iterations() * nodes),
                                                 benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LedgerAndRoofline)->Arg(1000)->Arg(1000000)->Unit(benchmark::kMillisecond);

void BM_GraphJsonEndToEnd(benchmark::State& state) {
  const auto nodes = static_cast<size_t>(state.range(0));
  const std::string text = bench::MakeChainGraphJson(nodes);
  const auto dev = *device::FindBuiltinDevice("h100-sxm");
  for (auto _ : state) {
    auto g = import::ParseGraphJson(text, "chain.json");
    auto ledger = cost::BuildLedger(*g, {});
    auto analysis = roofline::Estimate(*g, *ledger, dev);
    auto model = report::BuildReport(*g, *ledger, *analysis, dev, 10);
    std::string json = report::RenderJson(model);
    benchmark::DoNotOptimize(json.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["nodes/s"] = benchmark::Counter(static_cast<double>(state.iterations() * nodes),
                                                 benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GraphJsonEndToEnd)->Arg(1000)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
