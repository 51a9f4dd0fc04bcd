// Results as Python objects (see results.h): the JSON report's structure, field by field as
// render_json.cc writes it, and the long tables as columns.
#include "python/results.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opscope::python {
namespace {

// A JSON number: None where JSON writes null (non-finite).
py::object Number(double v) {
  if (!std::isfinite(v)) return py::none();
  return py::float_(v);
}
py::object Number(const std::optional<double>& v) { return v ? Number(*v) : py::none(); }
py::int_ Int(uint64_t v) { return py::int_(v); }

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

// ---- The analysis report ------------------------------------------------------------------------

py::dict TotalsDict(const roofline::Totals& t) {
  py::dict d;
  d["bytes_read"] = Int(t.bytes_read);
  d["bytes_written"] = Int(t.bytes_written);
  d["bytes_weights"] = Int(t.bytes_weights);
  d["bytes_state"] = Int(t.bytes_state);
  d["bytes"] = Int(t.bytes());
  d["flops"] = Int(t.flops);
  d["intensity"] = Number(t.intensity());
  d["time_s"] = Number(t.time_s);
  d["memory_bound_bytes"] = Int(t.memory_bound_bytes);
  d["compute_bound_bytes"] = Int(t.compute_bound_bytes);
  d["fused_floor_s"] = Number(t.fused_floor_s);
  d["nodes"] = py::int_(t.nodes);
  d["nodes_costed"] = py::int_(t.nodes_costed);
  return d;
}

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
  return c.Finish();
}

py::dict LlmDict(const report::LlmSection& l) {
  const llm::Figures& f = l.figures;
  py::dict d;
  d["phase"] = py::str(std::string(llm::PhaseName(f.phase)));
  d["params_total"] = Int(f.model.params_total);
  d["params_active"] = Int(f.model.params_active);
  d["params_embedding"] = Int(f.model.params_embedding);
  d["weight_bytes"] = Int(f.model.weight_bytes);
  d["kv_bytes_per_token"] = Int(f.model.kv_bytes_per_token);
  d["kv_window_bytes_per_seq"] = Int(f.kv_window_bytes_per_seq);
  d["state_bytes_per_seq"] = Int(f.model.state_bytes_per_seq);
  d["step_time_s"] = Number(f.step_time_s);
  d["tokens_per_s"] = Number(f.tokens_per_s);
  if (f.ttft_s) d["ttft_s"] = Number(*f.ttft_s);
  if (f.e2e_s) d["e2e_s"] = Number(*f.e2e_s);
  if (f.tpot_s) d["tpot_s"] = Number(*f.tpot_s);
  d["max_batch"] = Int(f.max_batch);
  d["fits"] = py::bool_(f.fits);
  py::dict recipe;
  recipe["weights"] = l.recipe.weights;
  recipe["activations"] = l.recipe.activations;
  recipe["kv"] = l.recipe.kv;
  recipe["state"] = l.recipe.state;
  d["recipe"] = recipe;
  return d;
}

py::dict ParallelDict(const llm::Deployment& dep, const llm::DeviceFigures& p) {
  py::dict d;
  d["tp"] = py::int_(dep.tp);
  d["ep"] = py::int_(dep.ep);
  d["pp"] = py::int_(dep.pp);
  d["dp_attention"] = py::int_(dep.dp_attention);
  d["devices"] = py::int_(dep.devices);
  d["weight_bytes_per_device"] = Int(p.weight_bytes);
  d["kv_bytes_per_token_per_device"] = Int(p.kv_bytes_per_token);
  d["comm_time_s"] = Number(p.comm_time_s);
  d["tokens_per_s_per_device"] = Number(p.tokens_per_s);
  return d;
}

py::list ByOpList(const std::vector<report::ByOpRow>& rows) {
  py::list out;
  for (const report::ByOpRow& b : rows) {
    py::dict d;
    d["op"] = b.op;
    d["count"] = Int(b.count);
    d["bytes"] = Int(b.bytes);
    d["flops"] = Int(b.flops);
    d["time_s"] = Number(b.time_s);
    out.append(d);
  }
  return out;
}

py::list NotCostedList(const std::vector<report::NotCosted>& rows) {
  py::list out;
  for (const report::NotCosted& n : rows) {
    py::dict d;
    d["name"] = n.name;
    d["op"] = n.op;
    d["reason"] = n.reason;
    out.append(d);
  }
  return out;
}

py::list NotTakenList(const std::vector<ir::NotTaken>& rows) {
  py::list out;
  for (const ir::NotTaken& b : rows) {
    py::dict d;
    d["name"] = b.node;
    d["branch"] = b.branch;
    d["nodes"] = py::int_(b.nodes);
    out.append(d);
  }
  return out;
}

}  // namespace

py::dict DeviceDict(const device::Device& d) {
  py::dict out;
  out["name"] = d.name;
  out["description"] = d.description;
  out["memory_bytes"] = Number(d.memory_bytes);
  out["dram_bytes_per_s"] = Number(d.dram_bytes_per_s);
  py::dict peaks;
  for (format::MmaClass c : format::kPeakClasses) {
    if (auto p = d.Peak(c)) peaks[py::str(std::string(format::MmaClassName(c)))] = Number(*p);
  }
  out["peak_flops_per_s"] = peaks;
  if (d.l2_bytes) out["l2_bytes"] = Number(*d.l2_bytes);
  if (d.interconnect_bytes_per_s) {
    out["interconnect_bytes_per_s"] = Number(*d.interconnect_bytes_per_s);
  }
  if (d.network_bytes_per_s) out["network_bytes_per_s"] = Number(*d.network_bytes_per_s);
  if (d.interconnect_latency_s) out["interconnect_latency_s"] = Number(*d.interconnect_latency_s);
  if (d.network_latency_s) out["network_latency_s"] = Number(*d.network_latency_s);
  if (d.devices_per_node) out["devices_per_node"] = Number(*d.devices_per_node);
  out["source"] = d.source;
  return out;
}

py::list DeviceList(std::span<const device::Device> devices) {
  py::list out;
  for (const device::Device& d : devices) out.append(DeviceDict(d));
  return out;
}

py::list PresetList(std::span<const llm::PresetInfo> presets) {
  py::list out;
  for (const llm::PresetInfo& p : presets) {
    py::dict d;
    d["name"] = p.name;
    d["model_type"] = p.model_type;
    d["layers"] = py::int_(p.layers);
    d["reconstructed"] = py::bool_(p.reconstructed);
    out.append(d);
  }
  return out;
}

py::dict ReportDict(const report::ReportModel& m) {
  py::dict d;
  d["schema_version"] = py::int_(m.schema_version);
  d["model"] = m.model;
  d["device"] = DeviceDict(m.device);
  py::dict workload;
  for (const auto& [name, value] : m.workload) workload[py::str(name)] = py::int_(value);
  d["workload"] = workload;
  d["totals"] = TotalsDict(m.totals);
  d["nodes"] = NodeColumns(m.nodes);
  d["by_op"] = ByOpList(m.by_op);
  d["not_costed"] = NotCostedList(m.not_costed);
  d["no_flop_model"] = Strings(m.no_flop_model);
  d["assumptions"] = Strings(m.assumptions);
  if (!m.warnings.empty()) d["warnings"] = Strings(m.warnings);
  if (!m.not_taken.empty()) d["not_taken"] = NotTakenList(m.not_taken);
  if (m.llm) d["llm"] = LlmDict(*m.llm);
  if (m.deployment && m.llm) d["parallel"] = ParallelDict(*m.deployment, m.llm->figures.per_device);
  return d;
}

py::dict SweepDict(const sweep::SweepResult& rep) {
  const std::vector<sweep::SweepRow>& rows = rep.rows;
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
  c.Add<int64_t>("batch", [&](size_t i) { return rows[i].batch; });
  c.Add<int64_t>("context", [&](size_t i) { return rows[i].context; });
  c.Add<double>("step_time_s", [&](size_t i) { return rows[i].step_time_s; });
  c.Add<double>("tokens_per_s", [&](size_t i) { return rows[i].tokens_per_s; });
  c.AddOptional("tpot_s", [&](size_t i) { return rows[i].tpot_s; });
  c.AddOptional("ttft_s", [&](size_t i) { return rows[i].ttft_s; });
  c.AddLabels("bound", {"memory", "compute"}, [&](size_t i) { return rows[i].compute_bound ? 1 : 0; });
  c.Add<int64_t>("max_batch", [&](size_t i) { return rows[i].max_batch; });
  c.Add<bool>("fits", [&](size_t i) { return rows[i].fits; });
  py::dict d;
  d["schema_version"] = py::int_(1);
  d["model"] = rep.model;
  d["phase"] = py::str(std::string(llm::PhaseName(rep.phase)));
  d["points"] = c.Finish();
  d["skipped"] = Strings(rep.skipped);
  d["assumptions"] = Strings(rep.assumptions);
  return d;
}

}  // namespace opscope::python
