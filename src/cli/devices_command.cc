// `opscope devices`: the built-in device database as a table or as JSON (report renders it).
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "report/formats.h"

namespace opscope::cli {
namespace {

struct DevicesOptions {
  std::string format = "text";
  std::string output = "-";
};

}  // namespace

Command AddDevicesCommand(CLI::App& root) {
  auto options = std::make_shared<DevicesOptions>();
  CLI::App* app = root.add_subcommand("devices", "List the built-in devices and their figures");
  app->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember(report::FormatNames(report::DeviceListFormats())))
      ->capture_default_str();
  app->add_option("-o,--output", options->output, "Write to FILE (default: stdout)");
  return {app, [options]() -> Result<int> {
            const report::DeviceList list{device::BuiltinDevices()};
            auto ok = Emit(report::DeviceListFormats(), list, options->format, options->output);
            if (!ok) return std::unexpected(ok.error());
            return 0;
          }};
}

}  // namespace opscope::cli
