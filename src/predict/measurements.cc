// Reads measured kernel latencies (layouts: measurements.h, docs/engines.md).
#include "predict/measurements.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "support/file_io.h"
#include "support/split.h"
#include "support/utf8.h"

namespace opscope::predict {

namespace {

struct KernelLayout {
  MeasuredKernel kernel;
  std::string_view name;
  std::array<std::string_view, 9> required;  // empty entries unused
  std::array<std::string_view, 5> optional;
};

// The columns each kernel's rows need (and may have); names as in the calibration set.
constexpr KernelLayout kLayouts[] = {
    {MeasuredKernel::kGemm, "gemm", {"gemm_dtype", "m", "n", "k"}, {}},
    {MeasuredKernel::kAttentionContext,
     "attention_context",
     {"batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype"},
     {"window_size", "attn_dtype", "step", "beam_width"}},
    {MeasuredKernel::kAttentionGeneration,
     "attention_generation",
     {"batch_size", "step", "num_heads", "num_key_value_heads", "head_dim", "kv_cache_dtype"},
     {"window_size", "attn_dtype", "isl", "beam_width"}},
    {MeasuredKernel::kMlaContext,
     "mla_context",
     {"batch_size", "isl", "num_heads", "kv_cache_dtype"},
     {"tp_size", "mla_dtype", "step"}},
    {MeasuredKernel::kMlaGeneration,
     "mla_generation",
     {"batch_size", "step", "num_heads", "kv_cache_dtype"},
     {"tp_size", "mla_dtype", "isl"}},
    {MeasuredKernel::kMoe,
     "moe",
     {"moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts",
      "moe_tp_size", "moe_ep_size", "distribution"},
     {}},
    {MeasuredKernel::kAllReduce,
     "all_reduce",
     {"num_gpus", "message_size"},
     {"nccl_dtype", "allreduce_dtype", "backend", "implementation"}},
};

// Columns any file may carry that say nothing about the shape.
constexpr std::string_view kCommonColumns[] = {"kernel", "kernel_source", "framework", "version",
                                               "device", "engine", "op_name", "latency",
                                               "latency_s", "latency_ms", "latency_us"};

constexpr std::pair<std::string_view, std::string_view> kGpuFolders[] = {
    {"h100_sxm", "h100-sxm"}, {"h200_sxm", "h200"},  {"b200_sxm", "b200"},
    {"gb200", "gb200"},       {"a100_sxm", "a100-80g"}, {"l40s", "l40s"},
    {"rtx_pro_6000_server", "rtx-pro-6000"},
};

const KernelLayout* LayoutByName(std::string_view name) {
  if (name == "comm_all_reduce" || name == "comm_custom_allreduce") name = "all_reduce";
  for (const KernelLayout& l : kLayouts) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

std::vector<std::string_view> SplitCsv(std::string_view line) {
  std::vector<std::string_view> fields = SplitFields(line, ',');
  for (std::string_view& field : fields) field = TrimBlanks(field);
  return fields;
}

std::optional<double> ParseDouble(std::string_view s) {
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The folder names of a path: ".../h100_sxm/vllm-0.24.0/gemm.csv" → {..., "h100_sxm",
// "vllm-0.24.0"}; and the file's stem.
struct PathParts {
  std::string_view stem, parent, grandparent;
};
PathParts SplitPath(std::string_view path) {
  PathParts p;
  size_t end = path.size();
  std::array<std::string_view, 3> parts;
  for (auto& part : parts) {
    const size_t slash = path.rfind('/', end == 0 ? 0 : end - 1);
    const size_t begin = slash == std::string_view::npos ? 0 : slash + 1;
    part = path.substr(begin, end - begin);
    if (slash == std::string_view::npos) break;
    end = slash;
  }
  p.stem = parts[0].substr(0, parts[0].rfind('.'));
  p.parent = parts[1];
  p.grandparent = parts[2];
  return p;
}

std::optional<std::string_view> EngineOfFolder(std::string_view folder) {
  for (std::string_view e : {"trtllm", "vllm", "sglang", "nccl"}) {
    if (folder.starts_with(e) && folder.size() > e.size() && folder[e.size()] == '-') return e;
  }
  return std::nullopt;
}

// Why a row of a step no engine serves is left out of a fit, or "" to keep it.
std::string_view ServedStepSkipReason(const Measurement& m) {
  if (m.kernel == MeasuredKernel::kAllReduce) {
    const auto backend = m.Text("backend");
    if ((backend && backend->ends_with("eager")) || m.kernel_source.ends_with("eager")) {
      return "all-reduce in eager mode (served steps replay CUDA graphs)";
    }
    if (m.Text("nccl_dtype") == std::optional<std::string_view>("int8")) {
      return "int8 all-reduce (engines reduce 16-bit activations)";
    }
  }
  if (m.kernel == MeasuredKernel::kMoe) {
    if (m.Text("distribution") != std::optional<std::string_view>("balanced")) {
      return "MoE with skewed routing (predictions assume uniform routing)";
    }
    if (m.kernel_source.find("nongated") != std::string::npos) {
      return "non-gated MoE kernel (the step graphs' experts are gated)";
    }
  }
  return "";
}

}  // namespace

std::string_view MeasuredKernelName(MeasuredKernel k) {
  for (const KernelLayout& l : kLayouts) {
    if (l.kernel == k) return l.name;
  }
  return "?";
}

std::optional<std::string_view> Measurement::Text(std::string_view column) const {
  const auto it = values.find(column);
  if (it == values.end()) return std::nullopt;
  return std::string_view(it->second);
}

std::optional<int64_t> Measurement::Int(std::string_view column) const {
  const auto text = Text(column);
  if (!text) return std::nullopt;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size()) return std::nullopt;
  return v;
}

std::optional<std::string_view> DeviceOfGpuFolder(std::string_view folder) {
  for (const auto& [f, id] : kGpuFolders) {
    if (f == folder) return id;
  }
  return std::nullopt;
}

namespace {

struct Header {
  std::vector<std::string_view> names;
  int kernel = -1, latency = -1, device = -1, engine = -1, source = -1;
  double latency_scale = 0;  // seconds per unit of the latency column
};

Result<Header> ReadHeader(std::string_view line, const std::string& path) {
  Header h;
  h.names = SplitCsv(line);
  for (size_t i = 0; i < h.names.size(); ++i) {
    const std::string_view name = h.names[i];
    if (name.empty()) return MakeError(path + ":1: column " + std::to_string(i + 1) + " has no name");
    if (name.find('"') != std::string_view::npos) {
      return MakeError(path + ":1: quoted fields are not supported");
    }
    for (size_t j = 0; j < i; ++j) {
      if (h.names[j] == name) {
        return MakeError(path + ":1: column '" + std::string(name) + "' appears more than once");
      }
    }
    const int col = static_cast<int>(i);
    double scale = 0;
    if (name == "latency") scale = 1e-3;  // the calibration set: milliseconds
    if (name == "latency_s") scale = 1;
    if (name == "latency_ms") scale = 1e-3;
    if (name == "latency_us") scale = 1e-6;
    if (scale > 0) {
      if (h.latency >= 0) {
        return MakeError(path + ":1: more than one latency column ('" +
                         std::string(h.names[h.latency]) + "' and '" + std::string(name) + "')");
      }
      h.latency = col;
      h.latency_scale = scale;
    }
    if (name == "kernel") h.kernel = col;
    if (name == "device") h.device = col;
    if (name == "engine") h.engine = col;
    if (name == "kernel_source") h.source = col;
  }
  if (h.latency < 0) {
    return MakeError(path + ":1: no latency column (one of latency_s, latency_ms, latency_us; "
                            "'latency' is milliseconds, as in the calibration set)");
  }
  return h;
}

// Checks that the header has every column `layout` needs and nothing unknown.
std::optional<Error> CheckColumns(const Header& h, const KernelLayout& layout,
                                  const std::string& where) {
  for (std::string_view need : layout.required) {
    if (!need.empty() && std::find(h.names.begin(), h.names.end(), need) == h.names.end()) {
      return Error{where + ": kernel '" + std::string(layout.name) + "' needs column '" +
                   std::string(need) + "'"};
    }
  }
  return std::nullopt;
}

bool KnownColumn(std::string_view name) {
  if (std::find(std::begin(kCommonColumns), std::end(kCommonColumns), name) !=
      std::end(kCommonColumns)) {
    return true;
  }
  for (const KernelLayout& l : kLayouts) {
    for (std::string_view c : l.required) {
      if (!c.empty() && c == name) return true;
    }
    for (std::string_view c : l.optional) {
      if (!c.empty() && c == name) return true;
    }
  }
  return false;
}

// Reads one data row: its kernel, latency, shape columns, device and engine.
struct RowReader {
  const Header& header;
  const KernelLayout* file_layout;  // nullptr: the row's `kernel` column names it
  std::optional<std::string_view> folder_device, folder_engine;
  const MeasurementOptions& options;

  Result<Measurement> Read(const std::vector<std::string_view>& fields,
                           const std::string& where) const {
    if (fields.size() != header.names.size()) {
      return MakeError(where + ": " + std::to_string(fields.size()) + " fields, the header has " +
                       std::to_string(header.names.size()));
    }
    Measurement m;
    m.origin = where;
    const KernelLayout* layout = file_layout;
    if (header.kernel >= 0) {
      layout = LayoutByName(fields[header.kernel]);
      if (layout == nullptr) {
        return MakeError(where + ": unknown kernel '" + std::string(fields[header.kernel]) +
                         "' (known: gemm, attention_context, attention_generation, mla_context, "
                         "mla_generation, moe, all_reduce)");
      }
      if (auto error = CheckColumns(header, *layout, where)) return std::unexpected(*error);
    }
    m.kernel = layout->kernel;
    const auto latency = ParseDouble(fields[header.latency]);
    if (!latency || *latency <= 0) {
      return MakeError(where + ": column '" + std::string(header.names[header.latency]) +
                       "': expected a positive number, got '" +
                       std::string(fields[header.latency]) + "'");
    }
    m.latency_s = *latency * header.latency_scale;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (static_cast<int>(i) != header.latency) {
        m.values.emplace(std::string(header.names[i]), std::string(fields[i]));
      }
    }
    if (auto error = CheckValues(m, *layout, where)) return std::unexpected(*error);
    if (header.source >= 0) m.kernel_source = std::string(fields[header.source]);
    return Identify(std::move(m), fields, where);
  }

  // The device: the row's own, else the calibration set's folder, else --device; the engine:
  // the row's own, else the folder's, else the engine being fitted.
  Result<Measurement> Identify(Measurement m, const std::vector<std::string_view>& fields,
                               const std::string& where) const {
    if (header.device >= 0 && !fields[header.device].empty()) {
      m.device = std::string(fields[header.device]);
    } else if (folder_device) {
      m.device = std::string(*folder_device);
    } else if (options.device) {
      m.device = *options.device;
    } else {
      return MakeError(where + ": cannot tell the device (no 'device' column and not in a "
                               "calibration-set folder): pass --device");
    }
    if (header.engine >= 0 && !fields[header.engine].empty()) {
      m.engine = std::string(fields[header.engine]);
    } else {
      m.engine = folder_engine ? std::string(*folder_engine) : options.engine;
    }
    return m;
  }

  // Why a parsed row is not fitted ("" to fit it).
  std::string SkipReason(const Measurement& m) const {
    if (options.device && m.device != *options.device) {
      return "rows of device '" + m.device + "' (--device " + *options.device + ")";
    }
    if (m.engine != options.engine && m.engine != "nccl" &&
        std::find(options.also_engines.begin(), options.also_engines.end(), m.engine) ==
            options.also_engines.end()) {
      return "rows of engine '" + m.engine + "'";
    }
    return std::string(ServedStepSkipReason(m));
  }

  // The largest value of an integer column. A kernel's dimension (tokens, heads, head size,
  // m/n/k, ...) fits the 32-bit range kernels index with, so the sample graphs' products of
  // two dimensions stay inside 64 bits; an all-reduce's message_size (elements) may be larger.
  static int64_t MaxValue(std::string_view column) {
    return column == "message_size" ? int64_t{1} << 48 : int64_t{INT32_MAX};
  }

  // Every required column holds a value: text for dtypes and distributions, an integer in
  // [0, MaxValue] elsewhere.
  static std::optional<Error> CheckValues(const Measurement& m, const KernelLayout& layout,
                                          const std::string& where) {
    for (std::string_view need : layout.required) {
      if (need.empty()) continue;
      const std::string_view v = *m.Text(need);
      const bool text_column = need.ends_with("dtype") || need == "distribution";
      const std::optional<int64_t> value = text_column ? std::nullopt : m.Int(need);
      if (v.empty() || (!text_column && (!value || *value < 0 || *value > MaxValue(need)))) {
        return Error{where + ": column '" + std::string(need) + "': expected " +
                     (text_column ? std::string("a value")
                                  : "an integer in [0, " + std::to_string(MaxValue(need)) + "]") +
                     ", got '" + std::string(v) + "'"};
      }
    }
    return std::nullopt;
  }
};

}  // namespace

Result<MeasurementFile> ParseMeasurements(std::string_view text, const std::string& path,
                                          const MeasurementOptions& options) {
  text = SkipUtf8Bom(text);
  const PathParts parts = SplitPath(path);
  MeasurementFile out;
  if (parts.stem.ends_with("_module")) {
    out.skipped.push_back(path + ": a whole attention module (projections included), not a "
                                 "kernel: not fitted");
    return out;
  }
  size_t pos = 0;
  auto next_line = [&](std::string_view& line) {
    if (pos >= text.size()) return false;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    return true;
  };
  std::string_view line;
  if (!next_line(line) || line.empty()) return MakeError(path + ": empty file, expected a header row");
  auto header = ReadHeader(line, path);
  if (!header) return std::unexpected(header.error());
  for (std::string_view name : header->names) {
    if (!KnownColumn(name)) {
      return MakeError(path + ":1: unknown column '" + std::string(name) +
                       "' (docs/engines.md lists the columns of each kernel)");
    }
  }
  const KernelLayout* file_layout = header->kernel < 0 ? LayoutByName(parts.stem) : nullptr;
  if (header->kernel < 0 && file_layout == nullptr) {
    return MakeError(path + ": no 'kernel' column, and the file name '" + std::string(parts.stem) +
                     "' names no kernel (gemm, attention_context, attention_generation, "
                     "mla_context, mla_generation, moe, all_reduce)");
  }
  if (file_layout != nullptr) {
    if (auto error = CheckColumns(*header, *file_layout, path)) return std::unexpected(*error);
  }
  const RowReader reader{*header, file_layout, DeviceOfGpuFolder(parts.grandparent),
                         EngineOfFolder(parts.parent), options};
  std::map<std::string, size_t, std::less<>> skipped;
  size_t line_number = 1;
  while (next_line(line)) {
    ++line_number;
    if (line.empty()) continue;
    auto m = reader.Read(SplitCsv(line), path + ":" + std::to_string(line_number));
    if (!m) return std::unexpected(m.error());
    if (const std::string reason = reader.SkipReason(*m); !reason.empty()) {
      ++skipped[reason];
      continue;
    }
    out.rows.push_back(std::move(*m));
  }
  for (const auto& [reason, count] : skipped) {
    out.skipped.push_back(path + ": " + std::to_string(count) + " rows skipped: " + reason);
  }
  return out;
}

Result<MeasurementFile> ReadMeasurements(const std::string& path,
                                         const MeasurementOptions& options) {
  Result<std::string> text = ReadFile(path, uint64_t{1} << 32);
  if (!text) return std::unexpected(text.error());
  return ParseMeasurements(*text, path, options);
}

}  // namespace opscope::predict
