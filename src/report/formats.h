// The output formats of every document opscope prints: one table {name, renderer} per kind of
// document, in the order `--format` lists them. The CLI (and the Python package) look a
// format up by name and write the pieces its renderer returns.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "device/device.h"
#include "llm/model.h"
#include "plan/plan.h"
#include "report/report_model.h"
#include "sweep/sweep.h"

namespace opscope::report {

struct RenderOptions {
  bool color = false;  // text: ANSI colour (the CLI: only on a terminal, never with NO_COLOR)
};

template <typename Document>
struct Format {
  std::string_view name;
  // The whole text, in pieces to write one after another (a large sweep's CSV is formatted
  // on several threads and never joined).
  std::vector<std::string> (*render)(const Document& document, const RenderOptions& options);
};

// The documents that are lists.
struct DeviceList {
  std::span<const device::Device> devices;
};
struct PresetList {
  std::span<const llm::PresetInfo> presets;
};

std::span<const Format<ReportModel>> ReportFormats();          // text json csv svg html
std::span<const Format<sweep::SweepResult>> SweepFormats();    // csv json svg html
std::span<const Format<plan::PlanResult>> PlanFormats();        // text json csv html
std::span<const Format<DeviceList>> DeviceListFormats();       // text json
std::span<const Format<PresetList>> PresetListFormats();       // text json

// The row named `name`, or nullptr.
template <typename Document>
const Format<Document>* FindFormat(std::span<const Format<Document>> formats,
                                   std::string_view name) {
  for (const Format<Document>& f : formats) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

template <typename Document>
std::vector<std::string> FormatNames(std::span<const Format<Document>> formats) {
  std::vector<std::string> names;
  for (const Format<Document>& f : formats) names.emplace_back(f.name);
  return names;
}

}  // namespace opscope::report
