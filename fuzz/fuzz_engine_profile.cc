// libFuzzer target: engine profile text -> EngineProfile (data/engines/*.json layout). A
// parsed profile must carry only physical parameters, write JSON that parses back to itself,
// and predict a small step graph on every device it serves without a crash, a non-finite time
// or a time below the roofline.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "device/device.h"
#include "fuzz/fuzz_common.h"
#include "import/opscope_json/graph_json.h"
#include "predict/predict.h"
#include "predict/profile.h"

namespace {

// A GEMM, a paged attention step (decode: one row per sequence after 64 cached) and a norm.
constexpr std::string_view kGraph = R"({"name": "g", "tensors": [
  {"name": "x", "shape": [4, 256], "format": "bf16", "role": "input"},
  {"name": "w", "shape": [256, 256], "format": "bf16", "role": "weight"},
  {"name": "q", "shape": [4, 256], "format": "bf16"},
  {"name": "kc", "shape": [4, 64, 2, 64], "format": "bf16", "role": "state"},
  {"name": "vc", "shape": [4, 64, 2, 64], "format": "bf16", "role": "state"},
  {"name": "o", "shape": [4, 256], "format": "bf16"},
  {"name": "y", "shape": [4, 256], "format": "bf16", "role": "output"}],
 "nodes": [{"name": "proj", "op": "Linear", "inputs": ["x", "w"], "outputs": ["q"]},
           {"name": "attn", "op": "PagedAttention", "inputs": ["q", "kc", "vc"], "outputs": ["o"],
            "attrs": {"q_heads": 4, "head_dim": 64}},
           {"name": "norm", "op": "RMSNorm", "inputs": ["o"], "outputs": ["y"]}]})";

void CheckPredictions(const opscope::predict::EngineProfile& p) {
  static const opscope::ir::Graph graph = *opscope::import::ParseGraphJson(kGraph, "g.json");
  static const opscope::cost::Ledger ledger = *opscope::cost::BuildLedger(graph, {});
  for (const auto& entry : p.devices) {
    auto device = opscope::device::FindBuiltinDevice(entry.device);
    if (!device) continue;
    auto analysis = opscope::roofline::Estimate(graph, ledger, *device);
    if (!analysis) continue;
    auto pred = opscope::predict::PredictStep(graph, ledger, *analysis, *device, p);
    if (!pred) return opscope::fuzz::CheckErrorMessage(pred.error().message);
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const double t = pred->node_time_s[i];
      if (!std::isfinite(t)) opscope::fuzz::Finding("non-finite prediction", graph.nodes[i].name);
      if (t < analysis->nodes[i].time_s * (1 - 1e-9)) {
        opscope::fuzz::Finding("prediction below the roofline", graph.nodes[i].name);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto profile = opscope::predict::ParseEngineProfile(text, "engine.json");
  if (!profile) {
    opscope::fuzz::CheckErrorMessage(profile.error().message);
    return 0;
  }
  const std::string json = opscope::predict::EngineProfileJson(*profile);
  auto again = opscope::predict::ParseEngineProfile(json, "written.json");
  if (!again) opscope::fuzz::Finding("written profile does not parse", again.error().message);
  CheckPredictions(*profile);
  return 0;
}
