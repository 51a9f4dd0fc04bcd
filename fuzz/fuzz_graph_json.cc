// libFuzzer target: graph JSON text -> import -> ledger -> roofline -> JSON and text reports.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_common.h"
#include "import/opscope_json/graph_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto graph = opscope::import::ParseGraphJson(text, "fuzz.json");
  if (!graph) {
    opscope::fuzz::CheckErrorMessage(graph.error().message);
    return 0;
  }
  const uint8_t salt = size > 0 ? data[size / 2] : 0;
  opscope::fuzz::Analyze(*graph, {}, salt, /*bind_free=*/(salt & 1) == 0);
  return 0;
}
