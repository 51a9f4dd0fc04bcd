// The extension module opscope._opscope: the commands of the CLI as functions over the same
// libraries (wiring only, like src/cli/): options in, the same calls, results as Python
// objects (results.h). The package's Python code (opscope/__init__.py) gives them their
// public signatures, docstrings and DataFrames. Every error is opscope.Error (a ValueError)
// carrying the message the CLI prints after "opscope: error: ".
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cost/ledger.h"
#include "device/device.h"
#include "import/import.h"
#include "llm/model.h"
#include "llm/serving.h"
#include "python/results.h"
#include "report/report_model.h"
#include "roofline/roofline.h"
#include "sweep/sweep.h"
#include "sweep/sweep_list.h"

namespace opscope::python {
namespace {

// Raised as opscope.Error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename T>
T Take(Result<T> r) {
  if (!r) throw Error(r.error().message);
  return std::move(*r);
}

llm::Phase ParsePhase(const std::string& phase) {
  if (phase == "decode") return llm::Phase::kDecode;
  if (phase == "prefill") return llm::Phase::kPrefill;
  throw Error("option '--phase': '" + phase + "' is neither decode nor prefill");
}

// The llm options, as `opscope llm` takes them.
struct LlmArgs {
  std::string model, device, phase;
  int64_t batch = 1, context = 4096;
  std::optional<int64_t> prompt, gen_len;
  std::optional<std::string> weights, activations, kv_dtype, state_dtype, model_type;
  double mem_util = 0.9;
  int64_t tp = 1, ep = 1, pp = 1;
  std::optional<int64_t> dp_attention, gpus_per_node, micro_batches;
};

py::dict Llm(const LlmArgs& a) {
  llm::Request r;
  r.model = a.model;
  r.parse.model_type = a.model_type;
  r.recipe = {a.weights, a.activations, a.kv_dtype, a.state_dtype};
  r.device = a.device;
  r.degrees = {a.tp, a.ep, a.pp, a.dp_attention, a.gpus_per_node, a.micro_batches};
  r.workload = {ParsePhase(a.phase), a.batch, a.context, a.prompt, a.gen_len, a.mem_util};
  std::optional<report::ReportModel> model;
  {
    py::gil_scoped_release unlocked;
    const llm::LlmRun run = Take(llm::RunLlm(r));
    model = report::BuildLlmReport(run.serving, run.evaluation, 10);
  }
  return ReportDict(*model);
}

// `opscope analyze PATH`: `dims` as --dim NAME=VALUE, `inputs` as --input NAME=VALUE texts.
py::dict Analyze(const std::string& path, const std::string& device_name,
                 const std::vector<std::pair<std::string, int64_t>>& dims,
                 const std::vector<std::string>& inputs) {
  import::DimBindings bindings;
  for (const auto& [name, value] : dims) {
    if (value < 0) {
      throw Error("option '--dim " + name + "=" + std::to_string(value) + "': '" +
                  std::to_string(value) + "' is not a non-negative integer that fits 64 bits");
    }
    bindings.emplace_back(name, value);
  }
  std::optional<report::ReportModel> model;
  {
    py::gil_scoped_release unlocked;
    const device::Device device = Take(device::ResolveDevice(device_name));
    import::ImportOptions options(bindings);
    options.inputs = Take(import::ParseInputOptions(inputs));
    const ir::Graph graph = Take(import::ImportModel(path, options));
    auto ledger = cost::BuildLedger(graph, cost::Workload{bindings});
    if (!ledger) throw Error(Wrap(path, ledger.error()).message);
    auto analysis = roofline::Estimate(graph, *ledger, device);
    if (!analysis) throw Error(Wrap(path, analysis.error()).message);
    model = report::BuildReport(graph, *ledger, *analysis, device, 10);
  }
  return ReportDict(*model);
}

// The sweep options, as `opscope sweep llm` takes them: LISTs as text ("1,2,4", "1..64").
struct SweepArgs {
  std::string model, batch, context, device, phase;
  std::vector<std::optional<std::string>> weights;
  std::optional<std::string> tp, ep, pp;
  std::optional<std::string> activations, kv_dtype, state_dtype, model_type;
  std::optional<int64_t> gen_len, dp_attention, gpus_per_node, micro_batches;
  double mem_util = 0.9;
};

sweep::SweepRequest SweepRequestOf(const SweepArgs& a) {
  sweep::SweepRequest r;
  r.model = a.model;
  r.parse.model_type = a.model_type;
  r.phase = ParsePhase(a.phase);
  r.batches = Take(sweep::ParseIntList("--batch", a.batch));
  r.contexts = Take(sweep::ParseIntList("--context", a.context));
  r.devices = Take(sweep::ParseNameList("--device", a.device));
  for (auto [option, text, out] : {std::tuple{"--tp", &a.tp, &r.tps},
                                   std::tuple{"--ep", &a.ep, &r.eps},
                                   std::tuple{"--pp", &a.pp, &r.pps}}) {
    if (*text) *out = Take(sweep::ParseIntList(option, **text));
  }
  r.weights = a.weights.empty() ? std::vector<std::optional<std::string>>{std::nullopt} : a.weights;
  r.activations = a.activations;
  r.kv_dtype = a.kv_dtype;
  r.state_dtype = a.state_dtype;
  r.mem_util = a.mem_util;
  r.gen_len = a.gen_len;
  r.dp_attention = a.dp_attention;
  r.gpus_per_node = a.gpus_per_node;
  r.micro_batches = a.micro_batches;
  return r;
}

py::dict Sweep(const SweepArgs& a) {
  std::optional<sweep::SweepResult> result;
  {
    py::gil_scoped_release unlocked;
    result = Take(sweep::RunSweep(SweepRequestOf(a)));
  }
  return SweepDict(*result);
}

py::list Presets() { return PresetList(Take(llm::ListPresets())); }

}  // namespace
}  // namespace opscope::python

PYBIND11_MODULE(_opscope, m) {
  namespace py = pybind11;
  using namespace opscope::python;
  m.doc() = "opscope's C++ core (use the opscope package, not this module)";
  m.attr("__version__") = "0.1.0";
  py::register_exception<Error>(m, "Error", PyExc_ValueError);

  m.def(
      "llm",
      [](std::string model, std::string device, int64_t batch, int64_t context, std::string phase,
         std::optional<int64_t> prompt, std::optional<int64_t> gen_len,
         std::optional<std::string> weights, std::optional<std::string> activations,
         std::optional<std::string> kv_dtype, std::optional<std::string> state_dtype,
         double mem_util, int64_t tp, int64_t ep, int64_t pp, std::optional<int64_t> dp_attention,
         std::optional<int64_t> gpus_per_node, std::optional<int64_t> micro_batches,
         std::optional<std::string> model_type) {
        LlmArgs a;
        a.model = std::move(model);
        a.device = std::move(device);
        a.batch = batch;
        a.context = context;
        a.phase = std::move(phase);
        a.prompt = prompt;
        a.gen_len = gen_len;
        a.weights = std::move(weights);
        a.activations = std::move(activations);
        a.kv_dtype = std::move(kv_dtype);
        a.state_dtype = std::move(state_dtype);
        a.mem_util = mem_util;
        a.tp = tp;
        a.ep = ep;
        a.pp = pp;
        a.dp_attention = dp_attention;
        a.gpus_per_node = gpus_per_node;
        a.micro_batches = micro_batches;
        a.model_type = std::move(model_type);
        return Llm(a);
      },
      py::arg("model"), py::arg("device"), py::arg("batch"), py::arg("context"), py::arg("phase"),
      py::arg("prompt"), py::arg("gen_len"), py::arg("weights"), py::arg("activations"),
      py::arg("kv_dtype"), py::arg("state_dtype"), py::arg("mem_util"), py::arg("tp"),
      py::arg("ep"), py::arg("pp"), py::arg("dp_attention"), py::arg("gpus_per_node"),
      py::arg("micro_batches"), py::arg("model_type"));

  m.def("analyze", &Analyze, py::arg("path"), py::arg("device"), py::arg("dims"),
        py::arg("inputs"));

  m.def(
      "sweep",
      [](std::string model, std::string batch, std::string context, std::string device,
         std::vector<std::optional<std::string>> weights, std::string phase,
         std::optional<std::string> tp, std::optional<std::string> ep,
         std::optional<std::string> pp, std::optional<std::string> activations,
         std::optional<std::string> kv_dtype, std::optional<std::string> state_dtype,
         std::optional<int64_t> gen_len, double mem_util, std::optional<int64_t> dp_attention,
         std::optional<int64_t> gpus_per_node, std::optional<int64_t> micro_batches,
         std::optional<std::string> model_type) {
        SweepArgs a;
        a.model = std::move(model);
        a.batch = std::move(batch);
        a.context = std::move(context);
        a.device = std::move(device);
        a.weights = std::move(weights);
        a.phase = std::move(phase);
        a.tp = std::move(tp);
        a.ep = std::move(ep);
        a.pp = std::move(pp);
        a.activations = std::move(activations);
        a.kv_dtype = std::move(kv_dtype);
        a.state_dtype = std::move(state_dtype);
        a.gen_len = gen_len;
        a.mem_util = mem_util;
        a.dp_attention = dp_attention;
        a.gpus_per_node = gpus_per_node;
        a.micro_batches = micro_batches;
        a.model_type = std::move(model_type);
        return Sweep(a);
      },
      py::arg("model"), py::arg("batch"), py::arg("context"), py::arg("device"),
      py::arg("weights"), py::arg("phase"), py::arg("tp"), py::arg("ep"), py::arg("pp"),
      py::arg("activations"), py::arg("kv_dtype"), py::arg("state_dtype"), py::arg("gen_len"),
      py::arg("mem_util"), py::arg("dp_attention"), py::arg("gpus_per_node"),
      py::arg("micro_batches"), py::arg("model_type"));

  m.def("devices", [] { return DeviceList(opscope::device::BuiltinDevices()); });
  m.def("presets", &Presets);
}
