// `opscope devices`: the built-in device database as a table or as JSON.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "report/json_writer.h"
#include "support/file_io.h"
#include "support/human_units.h"

namespace opscope::cli {
namespace {

std::string Pad(std::string s, size_t width, bool right) {
  if (s.size() >= width) return s + " ";
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

std::string PeakText(const device::Device& d, format::MmaClass c) {
  auto p = d.Peak(c);
  if (!p) return "-";
  const double tflops = *p / 1e12;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", tflops >= 100 ? 0 : (tflops >= 10 ? 1 : 2), tflops);
  return buf;
}

std::string DevicesText(const std::vector<device::Device>& devices) {
  std::string out = Pad("id", 17, false) + Pad("memory", 10, true) + Pad("DRAM", 12, true) +
                    Pad("fp32", 8, true) + Pad("bf16", 8, true) + Pad("fp16", 8, true) +
                    Pad("fp8", 8, true) + Pad("int8", 8, true) + Pad("fp4", 8, true) +
                    Pad("ridge", 7, true) + "  description\n";
  out += Pad("", 17, false) + Pad("", 10, true) + Pad("", 12, true) +
         Pad("(dense TFLOP/s)", 48, true) + Pad("bf16", 7, true) + "\n";
  for (const device::Device& d : devices) {
    auto bf16 = d.Peak(format::MmaClass::kBf16);
    const std::string ridge = bf16 ? std::to_string(static_cast<int>(*bf16 / d.dram_bytes_per_s))
                                   : "-";
    out += Pad(d.name, 17, false) + Pad(HumanBytes(d.memory_bytes), 10, true) +
           Pad(HumanRate(d.dram_bytes_per_s, "B"), 12, true) +
           Pad(PeakText(d, format::MmaClass::kFp32), 8, true) +
           Pad(PeakText(d, format::MmaClass::kBf16), 8, true) +
           Pad(PeakText(d, format::MmaClass::kFp16), 8, true) +
           Pad(PeakText(d, format::MmaClass::kFp8), 8, true) +
           Pad(PeakText(d, format::MmaClass::kInt8), 8, true) +
           Pad(PeakText(d, format::MmaClass::kFp4), 8, true) + Pad(ridge, 7, true) + "  " +
           d.description + "\n";
  }
  out += "\nFigures are dense (sparse datasheet figures halved), decimal units; each entry's\n"
         "source is in 'opscope devices --format json'.\n";
  return out;
}

std::string DevicesJson(const std::vector<device::Device>& devices) {
  std::string out;
  report::JsonWriter w(out);
  using report::WriteDeviceJson;
  w.BeginObject().Key("devices").BeginArray();
  for (const device::Device& d : devices) WriteDeviceJson(w, d);
  w.EndArray().EndObject();
  out += '\n';
  return out;
}

struct DevicesOptions {
  std::string format = "text";
  std::string output = "-";
};

}  // namespace

Command AddDevicesCommand(CLI::App& root) {
  auto options = std::make_shared<DevicesOptions>();
  CLI::App* app = root.add_subcommand("devices", "List the built-in devices and their figures");
  app->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app->add_option("-o,--output", options->output, "Write to FILE (default: stdout)");
  return {app, [options]() -> Result<int> {
            const auto& devices = device::BuiltinDevices();
            const std::string text =
                options->format == "json" ? DevicesJson(devices) : DevicesText(devices);
            if (auto ok = WriteFileAtomic(options->output, text); !ok) {
              return std::unexpected(ok.error());
            }
            return 0;
          }};
}

}  // namespace opscope::cli
