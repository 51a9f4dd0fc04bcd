// The listings: `opscope devices` (the device database as a table or JSON) and `opscope llm
// --list` (the built-in model presets as a list or JSON).
#include <algorithm>
#include <cstdio>

#include "report/json_writer.h"
#include "report/render.h"
#include "support/human_units.h"

namespace opscope::report {
namespace {

std::string Pad(std::string s, size_t width, bool right) {
  if (s.size() >= width) return s + " ";
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

// A dense peak in TFLOP/s with two, one or no decimals as it grows; "-" when absent.
std::string PeakText(const device::Device& d, format::MmaClass c) {
  auto p = d.Peak(c);
  if (!p) return "-";
  const double tflops = *p / 1e12;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", tflops >= 100 ? 0 : (tflops >= 10 ? 1 : 2), tflops);
  return buf;
}

// The peak columns of the devices table, in order.
constexpr format::MmaClass kPeakColumns[] = {format::MmaClass::kFp32, format::MmaClass::kBf16,
                                             format::MmaClass::kFp16, format::MmaClass::kFp8,
                                             format::MmaClass::kInt8, format::MmaClass::kFp4};

}  // namespace

std::string RenderDevicesText(std::span<const device::Device> devices) {
  std::string out = Pad("id", 17, false) + Pad("memory", 10, true) + Pad("DRAM", 12, true);
  for (format::MmaClass c : kPeakColumns) out += Pad(std::string(format::MmaClassName(c)), 8, true);
  out += Pad("ridge", 7, true) + "  description\n";
  out += Pad("", 17, false) + Pad("", 10, true) + Pad("", 12, true) +
         Pad("(dense TFLOP/s)", 48, true) + Pad("bf16", 7, true) + "\n";
  for (const device::Device& d : devices) {
    auto bf16 = d.Peak(format::MmaClass::kBf16);
    const std::string ridge = bf16 ? std::to_string(static_cast<int>(*bf16 / d.dram_bytes_per_s))
                                   : "-";
    out += Pad(d.name, 17, false) + Pad(HumanBytes(d.memory_bytes), 10, true) +
           Pad(HumanRate(d.dram_bytes_per_s, "B"), 12, true);
    for (format::MmaClass c : kPeakColumns) out += Pad(PeakText(d, c), 8, true);
    out += Pad(ridge, 7, true) + "  " + d.description + "\n";
  }
  out += "\nFigures are dense (sparse datasheet figures halved), decimal units; each entry's\n"
         "source is in 'opscope devices --format json'.\n";
  return out;
}

std::string RenderDevicesJson(std::span<const device::Device> devices) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("devices").BeginArray();
  for (const device::Device& d : devices) WriteDeviceJson(w, d);
  w.EndArray().EndObject();
  out += '\n';
  return out;
}

std::string RenderPresetsText(std::span<const llm::PresetInfo> presets) {
  std::string text = "Built-in model presets (opscope llm NAME):\n";
  for (const llm::PresetInfo& p : presets) {
    std::string line = "  " + p.name;
    line.resize(std::max<size_t>(line.size() + 1, 32), ' ');
    line += p.model_type;
    line.resize(std::max<size_t>(line.size() + 1, 52), ' ');
    line += std::to_string(p.layers) + " layers";
    if (p.reconstructed) line += "  (config reconstructed from published figures)";
    text += line + "\n";
  }
  return text;
}

std::string RenderPresetsJson(std::span<const llm::PresetInfo> presets) {
  std::string out;
  SpacedJsonWriter w(out);
  w.BeginObject().Key("presets").BeginArray();
  for (size_t i = 0; i < presets.size(); ++i) {
    const llm::PresetInfo& p = presets[i];
    w.Layout(i == 0 ? "\n  " : ",\n  ");
    w.BeginObject();
    w.Key("name").Value(p.name);
    w.Key("model_type").Value(p.model_type);
    w.Key("layers").Value(p.layers);
    w.Key("reconstructed").Value(p.reconstructed);
    w.EndObject();
  }
  w.Layout("\n").EndArray().EndObject();
  out += '\n';
  return out;
}

}  // namespace opscope::report
