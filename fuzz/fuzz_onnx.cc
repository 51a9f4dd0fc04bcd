// libFuzzer target: ONNX model bytes -> import (wire parse, shape inference, op mapping) ->
// ledger -> roofline -> JSON and text reports.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_common.h"
#include "import/onnx/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const uint8_t salt = size > 0 ? data[size / 2] : 0;
  opscope::import::DimBindings dims;
  if (salt & 1) dims = {{"batch", 2}, {"sequence", 7}, {"N", 3}};
  auto graph = opscope::import::ImportOnnxBytes(bytes, "fuzz.onnx", dims);
  if (!graph) {
    opscope::fuzz::CheckErrorMessage(graph.error().message);
    return 0;
  }
  opscope::fuzz::Analyze(*graph, opscope::cost::Workload{}, salt, /*bind_free=*/(salt & 2) == 0);
  return 0;
}
