// Shared checks of the libFuzzer targets: run an imported graph through the whole analysis
// (ledger, roofline, report, both renderers) and insist the JSON report is valid JSON.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cost/ledger.h"
#include "device/device.h"
#include "ir/graph.h"
#include "report/render.h"
#include "report/report_model.h"
#include "roofline/roofline.h"

namespace opscope::fuzz {

// A finding the sanitizers cannot see: report it and abort, so libFuzzer saves the input.
[[noreturn]] inline void Finding(const char* what, std::string_view detail) {
  std::fprintf(stderr, "opscope fuzz finding: %s: %.*s\n", what,
               static_cast<int>(detail.size() < 2000 ? detail.size() : 2000), detail.data());
  std::abort();
}

// Every bad-input error must be one non-empty line (the CLI prints it after "opscope: error: ").
inline void CheckErrorMessage(const std::string& message) {
  if (message.empty()) Finding("empty error message", "");
}

// The JSON report must parse (valid UTF-8, escaped strings, finite numbers).
inline void CheckJson(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto ec = parser.parse(json).get(doc)) {
    Finding("report is not valid JSON", std::string(simdjson::error_message(ec)) + "\n" + json);
  }
}

inline const device::Device& FuzzDevice(uint8_t pick) {
  const auto& all = device::BuiltinDevices();
  return all[pick % all.size()];
}

// Ledger -> roofline -> report -> renderers. `bind_free` binds every symbol the graph does not
// fix to a small value (so shapes evaluate); without it unbound symbols reach the not-costed
// path.
inline void Analyze(const ir::Graph& graph, cost::Workload workload, uint8_t device_pick,
                    bool bind_free) {
  if (bind_free) {
    for (size_t i = 0; i < graph.symbols.size() && i < 64; ++i) {
      const std::string& name = graph.symbols.Name(static_cast<expr::SymbolId>(i));
      bool fixed = false;
      for (const auto& [id, value] : graph.dims) fixed = fixed || id == i;
      for (const auto& [bound, value] : workload.bindings) fixed = fixed || bound == name;
      if (!fixed) workload.bindings.emplace_back(name, static_cast<int64_t>(1 + (i * 7) % 64));
    }
  }
  auto ledger = cost::BuildLedger(graph, workload);
  if (!ledger) return CheckErrorMessage(ledger.error().message);
  if (ledger->nodes.size() != graph.nodes.size()) Finding("ledger size", graph.name);
  const device::Device& device = FuzzDevice(device_pick);
  auto analysis = roofline::Estimate(graph, *ledger, device);
  if (!analysis) return CheckErrorMessage(analysis.error().message);
  const report::ReportModel model = report::BuildReport(graph, *ledger, *analysis, device, 5);
  CheckJson(report::RenderJson(model));
  (void)report::RenderText(model);
}

}  // namespace opscope::fuzz
