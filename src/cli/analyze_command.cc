// `opscope analyze MODEL`: import a graph (opscope JSON or ONNX), cost it, time it, report.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "import/import.h"
#include "report/report_model.h"
#include "roofline/roofline.h"

namespace opscope::cli {
namespace {

struct AnalyzeOptions {
  std::string model;
  std::string device = kDefaultDevice;
  std::vector<std::string> dims;
  std::vector<std::string> inputs;
  OutputOptions output;
};

Result<int> RunAnalyze(const AnalyzeOptions& o) {
  auto dims = ParseDimOptions(o.dims);
  if (!dims) return std::unexpected(dims.error());
  auto device = device::ResolveDevice(o.device);
  if (!device) return std::unexpected(device.error());
  auto inputs = import::ParseInputOptions(o.inputs);
  if (!inputs) return std::unexpected(inputs.error());
  import::ImportOptions import_options(*dims);
  import_options.inputs = std::move(*inputs);
  auto graph = import::ImportModel(o.model, import_options);
  if (!graph) return std::unexpected(graph.error());
  auto costed = roofline::CostAndTime(*graph, cost::Workload{*dims}, *device, o.model);
  if (!costed) return std::unexpected(costed.error());
  const report::ReportModel model =
      report::BuildReport(*graph, costed->ledger, costed->analysis, *device, o.output.top);
  return EmitReport(model, o.output);
}

}  // namespace

Command AddAnalyzeCommand(CLI::App& root) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* app = root.add_subcommand(
      "analyze", "Cost every node of a model graph (opscope graph JSON or ONNX) on a device");
  app->add_option("MODEL", options->model, "opscope graph .json or .onnx file")->required();
  app->add_option("--device", options->device,
                  "Device id (see 'opscope devices') or a device .json file")
      ->capture_default_str();
  app->add_option("--dim", options->dims, "Bind a symbolic dim: NAME=VALUE (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  app->add_option("--input", options->inputs,
                  "Give a graph input a value: NAME=VALUE, an integer, a float or a list of "
                  "integers 1,512 (repeatable; decides If branches and shapes)")
      ->take_all()
      ->allow_extra_args(false);
  AddOutputOptions(*app, options->output);
  return {app, [options] { return RunAnalyze(*options); }};
}

}  // namespace opscope::cli
