// libFuzzer target: ONNX model bytes -> import (wire parse, topological sort, shape
// inference, op mapping, If branches) -> ledger -> roofline -> JSON and text reports. With a
// salt bit set, the model is imported again with --input values for its graph inputs (a
// scalar or a list as their declared rank asks), which decides If branches on them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_common.h"
#include "import/onnx/onnx_import.h"

namespace {

// --input values for every graph input of `g`, from the salt: 0/1 scalars, or 1-D lists.
opscope::import::InputBindings InputsFor(const opscope::ir::Graph& g, uint8_t salt) {
  opscope::import::InputBindings inputs;
  for (const auto& t : g.tensors) {
    if (t.role != opscope::ir::Role::kInput) continue;
    opscope::import::InputValue v;
    v.name = t.name;
    v.list = t.shape.size() == 1;
    const int64_t n = v.list && t.shape[0].IsConstant() ? t.shape[0].constant() : 1;
    for (int64_t i = 0; i < n && i < 16; ++i) v.ints.push_back((salt >> 4) & 1 ? 16000 : (salt >> 5) & 1);
    if (v.ints.empty()) v.ints.push_back(1);
    v.text = std::to_string(v.ints[0]);
    inputs.push_back(std::move(v));
  }
  return inputs;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const uint8_t salt = size > 0 ? data[size / 2] : 0;
  opscope::import::ImportOptions options;
  if (salt & 1) options.dims = {{"batch", 2}, {"sequence", 7}, {"N", 3}};
  auto graph = opscope::import::ImportOnnxBytes(bytes, "fuzz.onnx", options);
  if (!graph) {
    opscope::fuzz::CheckErrorMessage(graph.error().message);
    return 0;
  }
  if (salt & 4) {
    options.inputs = InputsFor(*graph, salt);
    auto valued = opscope::import::ImportOnnxBytes(bytes, "fuzz.onnx", options);
    if (!valued) {
      opscope::fuzz::CheckErrorMessage(valued.error().message);
      return 0;
    }
    graph = std::move(valued);
  }
  opscope::fuzz::Analyze(*graph, opscope::cost::Workload{}, salt, /*bind_free=*/(salt & 2) == 0);
  return 0;
}
