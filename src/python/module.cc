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
#include "llm/predicted.h"
#include "llm/serving.h"
#include "plan/plan.h"
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

// One function per command, each over the request the CLI fills (llm::Request,
// sweep::SweepRequest) and the same entry point; the bindings below fill the requests from
// keyword arguments named as the CLI's options.

// `opscope llm MODEL`.
py::dict Llm(const llm::Request& request, const llm::PredictTexts& predict) {
  std::optional<report::ReportModel> model;
  {
    py::gil_scoped_release unlocked;
    const llm::PredictOptions options = Take(llm::ParsePredictOptions(predict));
    const llm::PredictedRun run = Take(llm::RunLlmPredicted(request, options));
    model = report::BuildLlmReport(run.run.serving, run.run.evaluation, 10, &run.predicted);
  }
  return ReportDict(std::move(*model));
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
    const roofline::CostedGraph costed =
        Take(roofline::CostAndTime(graph, cost::Workload{bindings}, device, path));
    model = report::BuildReport(graph, costed.ledger, costed.analysis, device, 10);
  }
  return ReportDict(std::move(*model));
}

// A LIST option as the CLI takes it ("1,2,4", "1..64", "1024..32768:1024"), when given.
void ParseListOption(const char* option, const std::optional<std::string>& text,
                     std::vector<int64_t>& out) {
  if (text) out = Take(sweep::ParseIntList(option, *text));
}

// `opscope sweep llm MODEL`.
py::dict Sweep(const sweep::SweepRequest& request) {
  std::optional<sweep::SweepResult> result;
  {
    py::gil_scoped_release unlocked;
    result = Take(sweep::RunSweep(request));
  }
  return SweepDict(std::move(*result));
}

// `opscope plan MODEL`: `weights` the --weights LIST text, when given.
py::dict Plan(plan::PlanRequest request, const std::optional<std::string>& weights) {
  std::optional<plan::PlanResult> result;
  {
    py::gil_scoped_release unlocked;
    if (weights) {
      request.weights.clear();
      for (std::string& n : Take(sweep::ParseNameList("--weights", *weights))) {
        request.weights.emplace_back(std::move(n));
      }
    }
    result = Take(plan::RunPlan(request));
  }
  return PlanDict(*result);
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
         std::optional<std::string> model_type, std::optional<std::string> engine,
         std::optional<std::string> disagg, std::optional<int64_t> prefill_tp,
         std::optional<int64_t> decode_tp, std::optional<std::string> speculative,
         std::optional<double> acceptance, std::optional<std::string> lengths,
         std::optional<std::string> draft_model) {
        opscope::llm::Request r;
        r.model = std::move(model);
        r.parse.model_type = std::move(model_type);
        r.recipe = {std::move(weights), std::move(activations), std::move(kv_dtype),
                    std::move(state_dtype)};
        r.device = std::move(device);
        r.degrees = {tp, ep, pp, dp_attention, gpus_per_node, micro_batches};
        r.workload = {ParsePhase(phase), batch, context, prompt, gen_len, mem_util};
        opscope::llm::PredictTexts texts;
        texts.engine = std::move(engine);
        texts.disagg = std::move(disagg);
        texts.speculative = std::move(speculative);
        texts.lengths = std::move(lengths);
        texts.draft_model = std::move(draft_model);
        texts.prefill_tp = prefill_tp;
        texts.decode_tp = decode_tp;
        texts.acceptance = acceptance;
        return Llm(r, texts);
      },
      py::kw_only(), py::arg("model"), py::arg("device"), py::arg("batch"), py::arg("context"),
      py::arg("phase"), py::arg("prompt"), py::arg("gen_len"), py::arg("weights"),
      py::arg("activations"), py::arg("kv_dtype"), py::arg("state_dtype"), py::arg("mem_util"),
      py::arg("tp"), py::arg("ep"), py::arg("pp"), py::arg("dp_attention"),
      py::arg("gpus_per_node"), py::arg("micro_batches"), py::arg("model_type"),
      py::arg("engine"), py::arg("disagg"), py::arg("prefill_tp"), py::arg("decode_tp"),
      py::arg("speculative"), py::arg("acceptance"), py::arg("lengths"), py::arg("draft_model"));

  m.def("analyze", &Analyze, py::kw_only(), py::arg("path"), py::arg("device"), py::arg("dims"),
        py::arg("inputs"));

  m.def(
      "sweep",
      [](std::string model, std::string batch, std::string context, std::string device,
         std::vector<std::optional<std::string>> weights, std::string phase,
         std::optional<std::string> tp, std::optional<std::string> ep,
         std::optional<std::string> pp, std::optional<std::string> activations,
         std::optional<std::string> kv_dtype, std::optional<std::string> state_dtype,
         std::optional<std::string> gen_len, double mem_util,
         std::optional<std::string> dp_attention,
         std::optional<int64_t> gpus_per_node, std::optional<int64_t> micro_batches,
         std::optional<std::string> model_type, std::optional<std::string> engine,
         std::optional<std::string> disagg, std::optional<std::string> prefill_tp,
         std::optional<std::string> decode_tp, std::optional<std::string> lengths,
         std::optional<std::string> speculative, std::optional<double> acceptance,
         std::optional<std::string> draft_model) {
        opscope::sweep::SweepRequest r;
        r.model = std::move(model);
        r.parse.model_type = std::move(model_type);
        r.phase = ParsePhase(phase);
        r.batches = Take(opscope::sweep::ParseIntList("--batch", batch));
        r.contexts = Take(opscope::sweep::ParseIntList("--context", context));
        r.devices = Take(opscope::sweep::ParseNameList("--device", device));
        ParseListOption("--tp", tp, r.tps);
        ParseListOption("--ep", ep, r.eps);
        ParseListOption("--pp", pp, r.pps);
        r.weights = weights.empty() ? std::vector<std::optional<std::string>>{std::nullopt}
                                    : std::move(weights);
        r.activations = std::move(activations);
        r.kv_dtype = std::move(kv_dtype);
        r.state_dtype = std::move(state_dtype);
        r.mem_util = mem_util;
        ParseListOption("--gen-len", gen_len, r.gen_lens);
        if (disagg) r.disaggs = Take(opscope::sweep::ParseDisaggList(*disagg));
        ParseListOption("--prefill-tp", prefill_tp, r.prefill_tps);
        ParseListOption("--decode-tp", decode_tp, r.decode_tps);
        ParseListOption("--dp-attention", dp_attention, r.dp_attentions);
        r.gpus_per_node = gpus_per_node;
        r.micro_batches = micro_batches;
        r.engine = std::move(engine);
        if (lengths) r.fixed_lengths = Take(opscope::llm::ParseFixedLengths(*lengths));
        r.speculative =
            Take(opscope::llm::ParseSpeculativeOptions(speculative, acceptance, draft_model));
        return Sweep(r);
      },
      py::kw_only(), py::arg("model"), py::arg("batch"), py::arg("context"), py::arg("device"),
      py::arg("weights"), py::arg("phase"), py::arg("tp"), py::arg("ep"), py::arg("pp"),
      py::arg("activations"), py::arg("kv_dtype"), py::arg("state_dtype"), py::arg("gen_len"),
      py::arg("mem_util"), py::arg("dp_attention"), py::arg("gpus_per_node"),
      py::arg("micro_batches"), py::arg("model_type"), py::arg("engine"), py::arg("disagg"),
      py::arg("prefill_tp"), py::arg("decode_tp"), py::arg("lengths"), py::arg("speculative"),
      py::arg("acceptance"), py::arg("draft_model"));

  m.def(
      "plan",
      [](std::string model, std::string device, int64_t gpus, int64_t isl, int64_t osl,
         std::optional<double> ttft_ms, std::optional<double> tpot_ms, std::optional<double> rate,
         std::optional<std::string> engine, std::optional<std::string> weights, bool disagg,
         std::optional<double> price, std::optional<std::string> activations,
         std::optional<std::string> kv_dtype, int64_t max_batch, double mem_util,
         std::optional<std::string> model_type, std::optional<std::string> lengths,
         std::optional<std::string> speculative, std::optional<double> acceptance,
         std::optional<std::string> draft_model) {
        opscope::plan::PlanRequest r;
        r.model = std::move(model);
        r.parse.model_type = std::move(model_type);
        r.device = std::move(device);
        r.gpus = gpus;
        r.isl = isl;
        r.osl = osl;
        // As the CLI's --ttft-ms/--tpot-ms: milliseconds, positive.
        for (const auto& [option, ms, target] :
             {std::tuple{"--ttft-ms", ttft_ms, &r.targets.ttft_s},
              std::tuple{"--tpot-ms", tpot_ms, &r.targets.tpot_s}}) {
          if (!ms) continue;
          if (!(*ms > 0)) throw Error(std::string("option '") + option + "': must be positive");
          *target = *ms / 1e3;
        }
        r.rate = rate;
        r.engine = std::move(engine);
        r.disagg = disagg;
        r.price_usd_per_gpu_hour = price;
        r.activations = std::move(activations);
        r.kv_dtype = std::move(kv_dtype);
        r.max_batch = max_batch;
        r.mem_util = mem_util;
        if (lengths) r.fixed_lengths = Take(opscope::llm::ParseFixedLengths(*lengths));
        r.speculative =
            Take(opscope::llm::ParseSpeculativeOptions(speculative, acceptance, draft_model));
        return Plan(std::move(r), weights);
      },
      py::kw_only(), py::arg("model"), py::arg("device"), py::arg("gpus"), py::arg("isl"),
      py::arg("osl"), py::arg("ttft_ms"), py::arg("tpot_ms"), py::arg("rate"), py::arg("engine"),
      py::arg("weights"), py::arg("disagg"), py::arg("price"), py::arg("activations"),
      py::arg("kv_dtype"), py::arg("max_batch"), py::arg("mem_util"), py::arg("model_type"),
      py::arg("lengths"), py::arg("speculative"), py::arg("acceptance"), py::arg("draft_model"));

  m.def("devices", [] { return DeviceList(opscope::device::BuiltinDevices()); });
  m.def("presets", &Presets);
}
