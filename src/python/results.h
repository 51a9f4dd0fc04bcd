// The Python objects of opscope's results: the JSON documents the command line prints
// (report::RenderJson, RenderSweepJson, RenderDevicesJson, RenderPresetsJson) as dicts and
// lists -- the same field names, nesting and values, numbers as ints and floats, null as None
// -- with the long tables as columns instead of lists of records:
//  * a report's `nodes` and a sweep's `points`: a Columns dict (below), which the package's
//    Python code turns into a pandas.DataFrame, or a dict of numpy arrays without pandas.
// The columns are the JSON's / CSV's fields of a row (render_json.cc WriteNode,
// render_sweep.cc); tests/python checks them against the CLI's JSON.
#pragma once

#include <pybind11/pybind11.h>

#include <span>

#include "device/device.h"
#include "llm/model.h"
#include "plan/plan.h"
#include "report/report_model.h"
#include "sweep/sweep.h"

namespace opscope::python {

namespace py = pybind11;

// A table as columns: {"names": [str] (in order), "data": {name: column}, "labels": [names
// of label columns], "rows": int}, where a column is a 1-D numpy array (int64, float64 with NaN
// for an absent number, bool), a list of str, or for a label column (codes, categories): codes
// an int8/16/32 numpy array indexing the list `categories`, for the few distinct strings a
// column repeats (op kinds, devices, bound). Each row's values are copied once, straight into
// the arrays.
py::dict ReportDict(report::ReportModel model);    // `nodes` as a Columns dict
py::dict SweepDict(sweep::SweepResult result);     // `points` as a Columns dict
py::list DeviceList(std::span<const device::Device> devices);
py::dict PlanDict(const plan::PlanResult& result);  // `opscope plan --format json`, as is
py::list PresetList(std::span<const llm::PresetInfo> presets);

}  // namespace opscope::python
