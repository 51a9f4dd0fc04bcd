// libFuzzer target: device file text (one device, or {"devices": [...]}) -> Device, and the
// same text as a whole database; a parsed device must carry finite positive figures and time a
// small graph without trouble.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "device/device.h"
#include "fuzz/fuzz_common.h"
#include "import/opscope_json/graph_json.h"

namespace {

// A matmul and an elementwise op: one MMA node and one vector node.
constexpr std::string_view kGraph = R"({"name": "g", "tensors": [
  {"name": "x", "shape": [64, 128], "format": "bf16", "role": "input"},
  {"name": "w", "shape": [256, 128], "format": "fp8_e4m3", "role": "weight"},
  {"name": "y", "shape": [64, 256], "format": "bf16"},
  {"name": "z", "shape": [64, 256], "format": "bf16", "role": "output"}],
 "nodes": [{"name": "mm", "op": "Linear", "inputs": ["x", "w"], "outputs": ["y"]},
           {"name": "act", "op": "Relu", "inputs": ["y"], "outputs": ["z"]}]})";

void CheckDevice(const opscope::device::Device& d) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  if (!positive(d.dram_bytes_per_s)) opscope::fuzz::Finding("device bandwidth", d.name);
  for (const auto& peak : d.peak_flops_per_s) {
    if (peak && !positive(*peak)) opscope::fuzz::Finding("device peak", d.name);
  }
  static const opscope::ir::Graph graph = *opscope::import::ParseGraphJson(kGraph, "g.json");
  static const opscope::cost::Ledger ledger = *opscope::cost::BuildLedger(graph, {});
  auto analysis = opscope::roofline::Estimate(graph, ledger, d);
  if (!analysis) return opscope::fuzz::CheckErrorMessage(analysis.error().message);
  const auto model = opscope::report::BuildReport(graph, ledger, *analysis, d, 5);
  opscope::fuzz::CheckJson(opscope::report::RenderJson(model));
  (void)opscope::report::RenderText(model);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto device = opscope::device::ParseDeviceJson(text, "device.json");
  if (device) {
    CheckDevice(*device);
  } else {
    opscope::fuzz::CheckErrorMessage(device.error().message);
  }
  auto db = opscope::device::ParseDeviceDatabase(text, "devices.json");
  if (db) {
    for (const auto& d : *db) CheckDevice(d);
  } else {
    opscope::fuzz::CheckErrorMessage(db.error().message);
  }
  return 0;
}
