// The Python objects of opscope's results, built from the same plain data the JSON renderers
// read (report::ReportModel, sweep::SweepResult, the device table): dicts and lists with the
// JSON report's field names and nesting, numbers as Python ints and floats (a JSON null — an
// absent value or a non-finite number — is None), and the long tables as columns:
//  * a report's `nodes` and a sweep's `points`: a Columns object (below), which the package's
//    Python code turns into a pandas.DataFrame, or a dict of numpy arrays without pandas.
// Keep these in step with src/report/render_json.cc and render_sweep.cc: tests/python checks
// every field against the CLI's JSON.
#pragma once

#include <pybind11/pybind11.h>

#include <span>

#include "device/device.h"
#include "llm/model.h"
#include "report/report_model.h"
#include "sweep/sweep.h"

namespace opscope::python {

namespace py = pybind11;

// A table as columns, in order: {"names": [str], "columns": {name: column}}, where a column is
// a 1-D numpy array (int64, float64 with NaN for an absent number, bool), a list of str, or a
// label column ("labels": (codes, categories) — codes an int8/16/32 numpy array indexing the
// list `categories`, for the few distinct strings a column repeats: op kinds, devices, bound).
// Each row's values are copied once, straight into the arrays.
py::dict ReportDict(const report::ReportModel& model);  // `nodes` as a Columns dict
py::dict SweepDict(const sweep::SweepResult& result);   // `points` as a Columns dict
py::dict DeviceDict(const device::Device& device);
py::list DeviceList(std::span<const device::Device> devices);
py::list PresetList(std::span<const llm::PresetInfo> presets);

}  // namespace opscope::python
