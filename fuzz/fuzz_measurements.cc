// libFuzzer target: measurement CSV text (both layouts of docs/engines.md) -> measurements ->
// samples (the measured call rebuilt as a graph, costed and described) -> a kernel time under
// fixed parameters. Errors must be one-line messages; every sample's time must be finite.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "device/device.h"
#include "fuzz/fuzz_common.h"
#include "predict/fit.h"
#include "predict/measurements.h"
#include "predict/samples.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The first byte picks the path: the calibration set's layout (kernel from the file name)
  // or the user's (a kernel column).
  static const char* kPaths[] = {"x/h100_sxm/vllm-0.24.0/gemm.csv",
                                 "x/h100_sxm/vllm-0.24.0/attention_generation.csv",
                                 "x/b200_sxm/trtllm-1.3.0rc20/moe.csv",
                                 "x/h200_sxm/nccl-2.29.2/comm_all_reduce.csv", "mine.csv"};
  const std::string path = kPaths[data[0] % 5];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  opscope::predict::MeasurementOptions options;
  options.engine = "vllm";
  options.device = "h100-sxm";
  auto file = opscope::predict::ParseMeasurements(text, path, options);
  if (!file) {
    opscope::fuzz::CheckErrorMessage(file.error().message);
    return 0;
  }
  opscope::predict::KernelParams params;
  params.overhead_s = 2e-6;
  params.bandwidth_efficiency = 0.7;
  params.compute_efficiency = 0.6;
  params.tile_m = params.tile_n = 128;
  params.wave_exponent = 0.5;
  for (const auto& m : file->rows) {
    auto device = opscope::device::FindBuiltinDevice(m.device);
    if (!device) continue;
    std::string why;
    auto sample = opscope::predict::MakeSample(m, *device, &why);
    if (!sample) opscope::fuzz::Finding("MakeSample error on a parsed row", sample.error().message);
    if (!*sample) {
      opscope::fuzz::CheckErrorMessage(why);
      continue;
    }
    const auto rates = opscope::predict::RatesOf(*device);
    double t = 0;
    for (auto in : (*sample)->parts) {
      params.cls = in.cls;
      t += in.cls == opscope::predict::KernelClass::kAllReduce ? 0 : opscope::predict::KernelTime(in, params, rates);
    }
    if (!std::isfinite(t)) opscope::fuzz::Finding("non-finite sample time", m.origin);
  }
  return 0;
}
