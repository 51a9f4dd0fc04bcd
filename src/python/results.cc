// Results as Python objects (see results.h): the JSON renderers' documents read back with
// Python's json module (so every field is the JSON's, now and whenever the JSON changes), and
// the long tables -- a report's nodes, a sweep's points -- as columns filled straight from
// the rows, never printed.
#include "python/results.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "report/render.h"

namespace opscope::python {
namespace {

// A JSON document as Python objects: dicts in the document's key order, ints, floats, None.
py::dict Parse(const std::string& json) {
  return py::module_::import("json").attr("loads")(json);
}

py::list Strings(std::span<const std::string> values) {
  py::list out;
  for (const std::string& v : values) out.append(py::str(v));
  return out;
}

// ---- Columns ----------------------------------------------------------------------------------

// The columns of one table, in order (results.h "Columns").
class Columns {
 public:
  explicit Columns(size_t rows) : rows_(rows) {}

  // A numeric or bool column: value(i) for each row, written straight into the array.
  template <typename T, typename F>
  void Add(const char* name, F value) {
    py::array_t<T> a(static_cast<py::ssize_t>(rows_));
    T* p = a.mutable_data();
    for (size_t i = 0; i < rows_; ++i) p[i] = static_cast<T>(value(i));
    Put(name, std::move(a));
  }
  // A float column with NaN where a row has no value.
  template <typename F>
  void AddOptional(const char* name, F value) {
    Add<double>(name, [&](size_t i) {
      const std::optional<double> v = value(i);
      return v ? *v : std::nan("");
    });
  }
  // A column of free text (names): a list of str.
  template <typename F>
  void AddText(const char* name, F value) {
    py::list out(rows_);
    for (size_t i = 0; i < rows_; ++i) {
      const std::string_view s = value(i);
      PyList_SET_ITEM(out.ptr(), static_cast<py::ssize_t>(i),
                      py::str(s.data(), s.size()).release().ptr());
    }
    Put(name, std::move(out));
  }
  // A label column: codes into `categories`, in the narrowest integer type pandas keeps.
  template <typename F>
  void AddLabels(const char* name, const std::vector<std::string>& categories, F code) {
    py::object codes;
    if (categories.size() < 128) {
      codes = Codes<int8_t>(code);
    } else if (categories.size() < 32768) {
      codes = Codes<int16_t>(code);
    } else {
      codes = Codes<int32_t>(code);
    }
    Put(name, py::make_tuple(codes, Strings(categories)), true);
  }
  // A label column from strings: the distinct values in order of first appearance.
  template <typename F>
  void AddLabelsOf(const char* name, F value) {
    std::map<std::string, uint32_t, std::less<>> index;
    std::vector<std::string> categories;
    std::vector<uint32_t> codes(rows_);
    for (size_t i = 0; i < rows_; ++i) {
      const std::string_view s = value(i);
      auto it = index.find(s);
      if (it == index.end()) {
        it = index.emplace(std::string(s), static_cast<uint32_t>(categories.size())).first;
        categories.emplace_back(s);
      }
      codes[i] = it->second;
    }
    AddLabels(name, categories, [&](size_t i) { return codes[i]; });
  }

  py::dict Finish() {
    py::dict d;
    d["names"] = names_;
    d["data"] = data_;
    d["labels"] = labels_;
    d["rows"] = py::int_(rows_);
    return d;
  }

 private:
  template <typename T, typename F>
  py::array_t<T> Codes(F code) {
    py::array_t<T> a(static_cast<py::ssize_t>(rows_));
    T* p = a.mutable_data();
    for (size_t i = 0; i < rows_; ++i) p[i] = static_cast<T>(code(i));
    return a;
  }
  void Put(const char* name, py::object column, bool label = false) {
    names_.append(py::str(name));
    data_[py::str(name)] = std::move(column);
    if (label) labels_.append(py::str(name));
  }

  size_t rows_;
  py::list names_, labels_;
  py::dict data_;
};

// The nodes of a report: the fields of render_json.cc's WriteNode, in its order.
py::dict NodeColumns(const std::vector<report::NodeRow>& nodes) {
  Columns c(nodes.size());
  auto at = [&](size_t i) -> const report::NodeRow& { return nodes[i]; };
  c.AddText("name", [&](size_t i) -> std::string_view { return at(i).name; });
  c.AddLabelsOf("op", [&](size_t i) -> std::string_view { return at(i).op; });
  c.AddText("source_op", [&](size_t i) -> std::string_view {
    return at(i).source_op.empty() ? at(i).op : at(i).source_op;
  });
  c.Add<bool>("costed", [&](size_t i) { return at(i).costed; });
  c.Add<int64_t>("bytes_read", [&](size_t i) { return at(i).bytes_read; });
  c.Add<int64_t>("bytes_written", [&](size_t i) { return at(i).bytes_written; });
  c.Add<int64_t>("bytes_weights", [&](size_t i) { return at(i).bytes_weights; });
  c.Add<int64_t>("bytes_state", [&](size_t i) { return at(i).bytes_state; });
  c.Add<int64_t>("bytes", [&](size_t i) { return at(i).bytes(); });
  c.Add<int64_t>("bytes_link", [&](size_t i) { return at(i).bytes_link; });
  c.Add<int64_t>("flops", [&](size_t i) { return at(i).flops; });
  c.AddOptional("intensity", [&](size_t i) { return at(i).intensity; });
  c.AddLabelsOf("mma_class", [&](size_t i) -> std::string_view { return at(i).mma_class; });
  c.Add<double>("time_s", [&](size_t i) { return at(i).time_s; });
  c.AddLabelsOf("bound", [&](size_t i) -> std::string_view { return at(i).bound; });
  // With an engine's prediction (llm.predicted), every node's predicted time.
  const bool predicted = std::any_of(nodes.begin(), nodes.end(), [](const report::NodeRow& n) {
    return n.predicted_time_s.has_value();
  });
  if (predicted) {
    c.AddOptional("predicted_time_s", [&](size_t i) { return at(i).predicted_time_s; });
  }
  return c.Finish();
}

// The points of a sweep: the CSV's fields (render_sweep.cc), in its order.
py::dict PointColumns(const sweep::SweepResult& rep, const std::vector<sweep::SweepRow>& rows) {
  auto dep = [&](size_t i) -> const sweep::SweepDeployment& {
    return rep.deployments[rows[i].deployment];
  };
  Columns c(rows.size());
  c.AddLabels("model", {rep.model}, [](size_t) { return 0; });
  c.AddLabels("device", rep.devices, [&](size_t i) { return rows[i].device; });
  c.AddLabels("recipe", rep.recipes, [&](size_t i) { return rows[i].recipe; });
  c.AddLabels("phase", {std::string(llm::PhaseName(rep.phase))}, [](size_t) { return 0; });
  c.Add<int64_t>("tp", [&](size_t i) { return dep(i).tp; });
  c.Add<int64_t>("ep", [&](size_t i) { return dep(i).ep; });
  c.Add<int64_t>("pp", [&](size_t i) { return dep(i).pp; });
  c.Add<int64_t>("dp_attention", [&](size_t i) { return dep(i).dp_attention; });
  c.Add<int64_t>("devices", [&](size_t i) { return dep(i).devices; });
  auto serving = [&](size_t i) -> const sweep::SweepServing& {
    return rep.servings[rows[i].serving];
  };
  if (rep.disagg) {  // disagg=: the split (NaN for an aggregated row, the CSV's empty field)
    auto side = [&](size_t i, auto field) -> std::optional<double> {
      const std::optional<llm::Disagg>& g = serving(i).disagg;
      if (!g) return std::nullopt;
      return static_cast<double>(field(*g, dep(i)));
    };
    c.AddOptional("prefill_workers", [&](size_t i) {
      return side(i, [](const llm::Disagg& g, const sweep::SweepDeployment&) { return g.prefill_workers; });
    });
    c.AddOptional("decode_workers", [&](size_t i) {
      return side(i, [](const llm::Disagg& g, const sweep::SweepDeployment&) { return g.decode_workers; });
    });
    c.AddOptional("prefill_tp", [&](size_t i) {
      return side(i, [](const llm::Disagg& g, const sweep::SweepDeployment& d) {
        return g.prefill_tp.value_or(d.tp);
      });
    });
    c.AddOptional("decode_tp", [&](size_t i) {
      return side(i, [](const llm::Disagg& g, const sweep::SweepDeployment& d) {
        return g.decode_tp.value_or(d.tp);
      });
    });
  }
  c.Add<int64_t>("batch", [&](size_t i) { return rows[i].batch; });
  c.Add<int64_t>("context", [&](size_t i) { return rows[i].context; });
  if (!rep.servings.empty() && rep.servings.front().gen_len) {  // gen_len= / osl=
    c.Add<int64_t>("gen_len", [&](size_t i) { return *serving(i).gen_len; });
  }
  c.Add<double>("step_time_s", [&](size_t i) { return rows[i].step_time_s; });
  c.Add<double>("tokens_per_s", [&](size_t i) { return rows[i].tokens_per_s; });
  c.AddOptional("tpot_s", [&](size_t i) { return rows[i].tpot_s; });
  c.AddOptional("ttft_s", [&](size_t i) { return rows[i].ttft_s; });
  c.AddLabels("bound", {"memory", "compute"}, [&](size_t i) { return rows[i].compute_bound ? 1 : 0; });
  c.Add<int64_t>("max_batch", [&](size_t i) { return rows[i].max_batch; });
  c.Add<bool>("fits", [&](size_t i) { return rows[i].fits; });
  if (!rep.predicted.empty()) {  // engine=: the CSV's predicted_* columns (llm.predicted)
    const std::vector<sweep::PredictedRow>& q = rep.predicted;
    c.Add<double>("predicted_step_time_s", [&](size_t i) { return q[i].step_time_s; });
    c.Add<double>("predicted_tokens_per_s", [&](size_t i) { return q[i].tokens_per_s; });
    c.AddOptional("predicted_tpot_s", [&](size_t i) { return q[i].tpot_s; });
    c.AddOptional("predicted_ttft_s", [&](size_t i) { return q[i].ttft_s; });
    if (rep.disagg) {
      c.AddOptional("predicted_kv_transfer_s", [&](size_t i) { return q[i].kv_transfer_s; });
    }
    if (rep.speculative) {  // speculative=: the fit with the drafter beside the target
      c.Add<int64_t>("predicted_max_batch", [&](size_t i) {
        return static_cast<int64_t>(q[i].drafter_max_batch);
      });
      c.Add<bool>("predicted_fits", [&](size_t i) { return q[i].drafter_fits; });
    }
  }
  return c.Finish();
}

}  // namespace

py::dict ReportDict(report::ReportModel model) {
  const std::vector<report::NodeRow> nodes = std::move(model.nodes);
  model.nodes.clear();
  py::dict d = Parse(report::RenderJson(model));
  d["nodes"] = NodeColumns(nodes);
  return d;
}

py::dict SweepDict(sweep::SweepResult result) {
  std::vector<sweep::SweepRow> rows = std::move(result.rows);
  result.rows.clear();
  py::dict d = Parse(report::RenderSweepJson(result));
  d["points"] = PointColumns(result, rows);
  return d;
}

py::list DeviceList(std::span<const device::Device> devices) {
  return Parse(report::RenderDevicesJson(devices))["devices"];
}

py::dict PlanDict(const plan::PlanResult& result) {
  // The front is a few dozen points, each with nested sides: kept as the JSON's records.
  return Parse(report::RenderPlanJson(result));
}

py::list PresetList(std::span<const llm::PresetInfo> presets) {
  return Parse(report::RenderPresetsJson(presets))["presets"];
}

}  // namespace opscope::python
