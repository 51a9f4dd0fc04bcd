// ONNX import speed: parsing (weights skipped at the wire level), shape inference and op
// mapping for the committed fixtures, and, when OPSCOPE_ONNX_FULL names a directory holding
// full-weight exports (make_fixtures.py --full DIR), for those too. Whole-process times
// against onnx-tool are in docs/onnx.md.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cost/ledger.h"
#include "import/onnx/onnx_import.h"
#include "import/onnx/onnx_reader.h"
#include "support/file_io.h"

namespace {

using opscope::import::DimBindings;

std::string Fixture(const char* name) {
  return std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/onnx/" + name;
}

// Import from a file already in memory (the parse and everything after it).
void BM_ImportBytes(benchmark::State& state, const std::string& path, DimBindings dims) {
  auto bytes = opscope::ReadFile(path);
  if (!bytes) {
    state.SkipWithError(bytes.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    auto g = opscope::import::ImportOnnxBytes(*bytes, path, dims);
    if (!g) {
      state.SkipWithError(g.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(g->nodes.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes->size()));
}

// Import from the path (mmap) and cost: what `opscope analyze` does before reporting.
void BM_ImportAndCost(benchmark::State& state, const std::string& path, DimBindings dims) {
  if (!std::filesystem::exists(path)) {
    state.SkipWithError(("missing " + path).c_str());
    return;
  }
  opscope::cost::Workload w;
  w.bindings = dims;
  for (auto _ : state) {
    auto g = opscope::import::ImportOnnx(path, dims);
    if (!g) {
      state.SkipWithError(g.error().message.c_str());
      return;
    }
    auto l = opscope::cost::BuildLedger(*g, w);
    if (!l) {
      state.SkipWithError(l.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(l->nodes.size());
  }
}

// The wire-level parse alone on a full-weight file: its cost must not grow with the weights.
void BM_ParseOnly(benchmark::State& state, const std::string& path) {
  auto file = opscope::import::onnx_reader::MappedFile::Open(path);
  if (!file) {
    state.SkipWithError(file.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    auto m = opscope::import::onnx_reader::ParseModel(file->bytes(), path);
    if (!m) {
      state.SkipWithError(m.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(m->graph().node_size());
  }
}

const DimBindings kGptDims{{"batch", 1}, {"seq", 128}};

BENCHMARK_CAPTURE(BM_ImportBytes, resnet50_stripped, Fixture("resnet50.onnx"), DimBindings{})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportBytes, gpt2_tiny_dynamic, Fixture("gpt2_tiny_dynamic.onnx"), kGptDims)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportAndCost, resnet50_stripped, Fixture("resnet50.onnx"), DimBindings{})
    ->Unit(benchmark::kMillisecond);

void RegisterFullWeightBenchmarks() {
  const char* dir = std::getenv("OPSCOPE_ONNX_FULL");
  if (dir == nullptr) return;
  const std::string d(dir);
  benchmark::RegisterBenchmark("BM_ParseOnly/resnet50_full", BM_ParseOnly, d + "/resnet50_full.onnx")
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_ParseOnly/gpt2_full", BM_ParseOnly, d + "/gpt2_full.onnx")
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_ImportAndCost/resnet50_full", BM_ImportAndCost,
                               d + "/resnet50_full.onnx", DimBindings{})
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_ImportAndCost/gpt2_full", BM_ImportAndCost,
                               d + "/gpt2_full.onnx", kGptDims)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  RegisterFullWeightBenchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
