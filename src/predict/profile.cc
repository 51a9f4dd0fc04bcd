// Loads, validates and writes engine profiles (layout: docs/engines.md).
//
//   {"schema_version": 1, "engine": "vllm", "description": "...", "version": "...",
//    "transparent": false,                         optional, default false
//    "defaults": {"kv_dtype", "chunked_prefill_tokens", "cuda_graphs",
//                 "prefill_cuda_graphs" (optional, default true), "overlap_scheduling"
//                 (optional, default false), "prefill_first" (optional, default false),
//                 "mma_16bit" (optional,
//                 "recipe" or "fp16", default "recipe"), "float32_dtype" (optional, "bf16"
//                 or "f16", default none), "float32_dtype_by_model_type" (optional,
//                 [{"prefix", "dtype"}]), "source"},
//    "overheads": {"step_s", "sampling_s", "launch_s", "request_s" (optional, default 0),
//                  "source"},
//    "fused_ops": ["Add", ...],                    optional op kind names
//    "moe_call": {"parts": ["routing", ...], "source": "..."},   optional (MoeCall)
//    "default_for": ["m4-max", ...],               optional device ids (DefaultEngine)
//    "devices": [{"device": "h100-sxm", "applies_to": [...], "basis": "fitted",
//                 "source": "...", "chunked_prefill_tokens": 8192,   optional
//                 "kernels": [{"class", "variant", "overhead_s", "bandwidth_efficiency",
//                              "compute_efficiency", "overlap", "tile_m", "tile_n",
//                              "wave_exponent", "wave_latency_s", "k_overhead" (optional,
//                              default 0: GEMM classes' depth term),
//                              "implementation" (optional: an alternative's kernels),
//                              "fit": {...}}],
//                 "collectives": [{"class", "algorithm", "latency_s", "latency_per_peer_s",
//                                  "bandwidth_efficiency", "fit": {...}}],
//                 "kernel_sources": [{"class", "variant", "kernel_source", "engine" (optional),
//                                     "implementation" (optional), "source"}]}]}
//                                                   optional: calibrate's default implementations
//                                                   and named alternatives
// simdjson's error-code API: nothing throws.
#include "predict/profile.h"

#include <simdjson.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <functional>
#include <utility>

#include "format/format.h"
#include "ir/graph.h"
#include "support/file_io.h"
#include "support/json_describe.h"
#include "support/utf8.h"

namespace opscope::predict {

extern const std::vector<std::pair<std::string_view, std::string_view>> kEngineProfilesJson;

std::optional<KernelClass> ParseKernelClass(std::string_view name) {
  for (int i = 0; i < kNumKernelClasses; ++i) {
    if (kKernelClasses[i].name == name) return static_cast<KernelClass>(i);
  }
  return std::nullopt;
}

std::optional<Algorithm> ParseAlgorithm(std::string_view name) {
  for (size_t i = 0; i < kAlgorithmNames.size(); ++i) {
    if (kAlgorithmNames[i] == name) return static_cast<Algorithm>(i);
  }
  return std::nullopt;
}

double AlgorithmTrafficFactor(Algorithm a, int64_t group) {
  const auto n = static_cast<double>(std::max<int64_t>(group, 2));
  switch (a) {
    case Algorithm::kRing:
    case Algorithm::kTwoShot: return 1.0;
    case Algorithm::kOneShot: return n / 2.0;           // (n−1)·S over 2(n−1)/n·S
    case Algorithm::kNvls: return n / (2.0 * (n - 1));  // S over 2(n−1)/n·S
  }
  return 1.0;
}

// The fallback chains: a variant a profile lacks is predicted with the next one it has.
std::string_view FallbackVariant(std::string_view variant) {
  static constexpr std::pair<std::string_view, std::string_view> kChain[] = {
      {"fp8_block", "fp8"}, {"fp4", "fp8"},  {"w4a8", "fp8"},  {"int8", "fp8"},
      {"fp8", "bf16"},      {"w4a16", "bf16"}, {"w8a16", "bf16"}, {"fp16", "bf16"},
      {"fp32", "bf16"},     {"fp8_kv", "bf16"},
  };
  for (const auto& [from, to] : kChain) {
    if (from == variant) return to;
  }
  return "";
}

const KernelParams* DeviceProfile::Find(KernelClass cls, std::string_view variant) const {
  for (std::string_view v = variant; !v.empty(); v = FallbackVariant(v)) {
    for (const KernelParams& k : kernels) {
      if (k.cls == cls && k.variant == v && k.implementation.empty()) return &k;
    }
  }
  return nullptr;
}

bool DeviceProfile::Serves(std::string_view device_id) const {
  return device == device_id ||
         std::find(applies_to.begin(), applies_to.end(), device_id) != applies_to.end();
}

const KernelSource* DeviceProfile::SourceOf(KernelClass cls, std::string_view variant,
                                            std::string_view name) const {
  for (const KernelSource& k : kernel_sources) {
    if (k.cls == cls && k.variant == variant && k.implementation == name) return &k;
  }
  return nullptr;
}

std::string_view DeviceProfile::BasisFor(std::string_view device_id) const {
  return device == device_id || device == "*" ? std::string_view(basis) : "derived";
}

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

// Reads one JSON object field by field, refusing duplicates and unknown keys, and naming the
// object's path in every message.
class ObjectReader {
 public:
  using Handler = std::function<std::optional<Error>(element)>;

  ObjectReader(std::string context) : context_(std::move(context)) {}

  void Field(std::string_view key, bool required, Handler handler) {
    fields_.push_back({key, required, std::move(handler)});
  }

  std::optional<Error> Read(element value) const {
    object obj;
    if (value.get_object().get(obj) != simdjson::SUCCESS) {
      return Error{context_ + ": expected an object, got " + DescribeJsonValue(value)};
    }
    std::vector<std::string_view> seen;
    for (auto field : obj) {
      if (std::find(seen.begin(), seen.end(), field.key) != seen.end()) {
        return Error{context_ + ": field '" + std::string(field.key) + "' appears more than once"};
      }
      seen.push_back(field.key);
      const auto it = std::find_if(fields_.begin(), fields_.end(),
                                   [&](const Spec& s) { return s.key == field.key; });
      if (it == fields_.end()) {
        std::string known;
        for (const Spec& s : fields_) known += (known.empty() ? "" : ", ") + std::string(s.key);
        return Error{context_ + ": field '" + std::string(field.key) + "': unknown field (known: " +
                     known + ")"};
      }
      if (auto error = it->handler(field.value)) return error;
    }
    for (const Spec& s : fields_) {
      if (s.required && std::find(seen.begin(), seen.end(), s.key) == seen.end()) {
        return Error{context_ + ": missing required field '" + std::string(s.key) + "'"};
      }
    }
    return std::nullopt;
  }

  const std::string& context() const { return context_; }

  // Field readers that validate their value's type and range.
  Handler Number(std::string_view key, double min, double max, bool min_open, double& out) const {
    return [this, key, min, max, min_open, &out](element v) -> std::optional<Error> {
      double x = 0;
      const element_type t = v.type();
      const bool numeric =
          t == element_type::INT64 || t == element_type::UINT64 || t == element_type::DOUBLE;
      if (!numeric || v.get_double().get(x) != simdjson::SUCCESS || !std::isfinite(x) ||
          x < min || x > max || (min_open && x == min)) {
        char range[96];
        std::snprintf(range, sizeof range, "expected a number in %s%g, %g], got ",
                      min_open ? "(" : "[", min, max);
        return Error{context_ + ": field '" + std::string(key) + "': " + range + DescribeJsonValue(v)};
      }
      out = x;
      return std::nullopt;
    };
  }
  Handler Integer(std::string_view key, int64_t min, int64_t max, int64_t& out) const {
    return [this, key, min, max, &out](element v) -> std::optional<Error> {
      int64_t x = 0;
      if (v.type() != element_type::INT64 && v.type() != element_type::UINT64) {
        return Error{context_ + ": field '" + std::string(key) + "': expected an integer, got " +
                     DescribeJsonValue(v)};
      }
      if (v.get_int64().get(x) != simdjson::SUCCESS || x < min || x > max) {
        return Error{context_ + ": field '" + std::string(key) + "': expected an integer in " +
                     std::to_string(min) + ".." + std::to_string(max) + ", got " + DescribeJsonValue(v)};
      }
      out = x;
      return std::nullopt;
    };
  }
  Handler String(std::string_view key, bool non_empty, std::string& out) const {
    return [this, key, non_empty, &out](element v) -> std::optional<Error> {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS || (non_empty && s.empty())) {
        return Error{context_ + ": field '" + std::string(key) + "': expected a " +
                     (non_empty ? "non-empty " : "") + "string, got " + DescribeJsonValue(v)};
      }
      out = std::string(s);
      return std::nullopt;
    };
  }
  Handler Bool(std::string_view key, bool& out) const {
    return [this, key, &out](element v) -> std::optional<Error> {
      if (v.get_bool().get(out) != simdjson::SUCCESS) {
        return Error{context_ + ": field '" + std::string(key) + "': expected true or false, got " +
                     DescribeJsonValue(v)};
      }
      return std::nullopt;
    };
  }
  Handler Strings(std::string_view key, std::vector<std::string>& out) const {
    return [this, key, &out](element v) -> std::optional<Error> {
      simdjson::dom::array list;
      if (v.get_array().get(list) != simdjson::SUCCESS) {
        return Error{context_ + ": field '" + std::string(key) +
                     "': expected an array of strings, got " + DescribeJsonValue(v)};
      }
      for (element item : list) {
        std::string_view s;
        if (item.get_string().get(s) != simdjson::SUCCESS || s.empty()) {
          return Error{context_ + ": field '" + std::string(key) +
                       "': expected non-empty strings, got " + DescribeJsonValue(item)};
        }
        out.emplace_back(s);
      }
      return std::nullopt;
    };
  }

 private:
  struct Spec {
    std::string_view key;
    bool required;
    Handler handler;
  };
  std::string context_;
  std::vector<Spec> fields_;
};

std::optional<Error> ReadFit(element v, const std::string& context, FitStats& fit) {
  ObjectReader r(context + ": field 'fit'");
  int64_t samples = 0, folds = 0;
  r.Field("samples", true, r.Integer("samples", 1, 100000000, samples));
  r.Field("folds", true, r.Integer("folds", 0, 1000, folds));
  r.Field("median_abs_error", true, r.Number("median_abs_error", 0, 1e6, false, fit.median_abs_error));
  r.Field("p90_abs_error", true, r.Number("p90_abs_error", 0, 1e6, false, fit.p90_abs_error));
  if (auto error = r.Read(v)) return error;
  fit.samples = static_cast<uint32_t>(samples);
  fit.folds = static_cast<uint32_t>(folds);
  return std::nullopt;
}

bool ValidVariant(std::string_view v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// A name field (a variant, an implementation) in lower-case letters, digits and '_'; an error
// naming the field otherwise. `optional`: an empty value is allowed (the field was absent).
std::optional<Error> CheckName(const std::string& context, std::string_view field,
                               const std::string& value, bool optional = false) {
  if ((optional && value.empty()) || ValidVariant(value)) return std::nullopt;
  return Error{context + ": field '" + std::string(field) +
               "': expected lower-case letters, digits and '_', got \"" + value + "\""};
}

std::optional<Error> ReadKernel(element v, const std::string& context, KernelParams& k) {
  ObjectReader r(context);
  std::string cls, variant;
  r.Field("class", true, r.String("class", true, cls));
  r.Field("variant", true, r.String("variant", true, variant));
  r.Field("overhead_s", true, r.Number("overhead_s", 0, 1, false, k.overhead_s));
  r.Field("bandwidth_efficiency", true,
          r.Number("bandwidth_efficiency", 0, 1, true, k.bandwidth_efficiency));
  r.Field("compute_efficiency", false,
          r.Number("compute_efficiency", 0, 1, true, k.compute_efficiency));
  r.Field("overlap", false, r.Number("overlap", 0, 1, false, k.overlap));
  r.Field("tile_m", false, r.Integer("tile_m", 1, 4096, k.tile_m));
  r.Field("tile_n", false, r.Integer("tile_n", 1, 4096, k.tile_n));
  r.Field("wave_exponent", false, r.Number("wave_exponent", 0, 1, false, k.wave_exponent));
  r.Field("wave_latency_s", false, r.Number("wave_latency_s", 0, 1, false, k.wave_latency_s));
  r.Field("k_overhead", false, r.Number("k_overhead", 0, 65536, false, k.k_overhead));
  r.Field("implementation", false, r.String("implementation", true, k.implementation));
  r.Field("fit", false, [&](element f) { return ReadFit(f, context, k.fit); });
  if (auto error = r.Read(v)) return error;
  if (auto e = CheckName(context, "implementation", k.implementation, true)) return e;
  const auto parsed = ParseKernelClass(cls);
  if (!parsed || Info(*parsed).kind == KernelKind::kLink ||
      Info(*parsed).kind == KernelKind::kNoKernel) {
    return Error{context + ": field 'class': '" + cls +
                 "' is not a kernel class (known: gemm, grouped_gemm, attention_decode, "
                 "attention_prefill, mla_decode, mla_prefill, memory; collectives go in "
                 "'collectives')"};
  }
  if (auto e = CheckName(context, "variant", variant)) return e;
  k.cls = *parsed;
  k.variant = std::move(variant);
  return std::nullopt;
}

std::optional<Error> ReadKernelSource(element v, const std::string& context, KernelSource& k) {
  ObjectReader r(context);
  std::string cls;
  r.Field("class", true, r.String("class", true, cls));
  r.Field("variant", true, r.String("variant", true, k.variant));
  r.Field("kernel_source", true, r.String("kernel_source", true, k.kernel_source));
  r.Field("engine", false, r.String("engine", true, k.engine));
  r.Field("implementation", false, r.String("implementation", true, k.implementation));
  r.Field("source", true, r.String("source", true, k.source));
  if (auto error = r.Read(v)) return error;
  if (auto e = CheckName(context, "implementation", k.implementation, true)) return e;
  const auto parsed = ParseKernelClass(cls);
  if (!parsed || Info(*parsed).kind == KernelKind::kLink ||
      Info(*parsed).kind == KernelKind::kNoKernel) {
    return Error{context + ": field 'class': '" + cls + "' is not a kernel class"};
  }
  if (auto e = CheckName(context, "variant", k.variant)) return e;
  k.cls = *parsed;
  return std::nullopt;
}

std::optional<Error> ReadCollective(element v, const std::string& context, CollectiveParams& c) {
  ObjectReader r(context);
  std::string cls, algorithm;
  r.Field("class", true, r.String("class", true, cls));
  r.Field("algorithm", true, r.String("algorithm", true, algorithm));
  r.Field("latency_s", true, r.Number("latency_s", 0, 1, false, c.latency_s));
  r.Field("latency_per_peer_s", false,
          r.Number("latency_per_peer_s", 0, 1, false, c.latency_per_peer_s));
  r.Field("bandwidth_efficiency", true,
          r.Number("bandwidth_efficiency", 0, 1, true, c.bandwidth_efficiency));
  r.Field("fit", false, [&](element f) { return ReadFit(f, context, c.fit); });
  if (auto error = r.Read(v)) return error;
  const auto parsed = ParseKernelClass(cls);
  if (!parsed || Info(*parsed).kind != KernelKind::kLink) {
    return Error{context + ": field 'class': '" + cls +
                 "' is not a collective (known: all_reduce, all_gather, reduce_scatter, "
                 "all_to_all, send_recv)"};
  }
  const auto alg = ParseAlgorithm(algorithm);
  if (!alg) {
    return Error{context + ": field 'algorithm': unknown algorithm '" + algorithm +
                 "' (known: ring, two_shot, one_shot, nvls)"};
  }
  if (*parsed != KernelClass::kAllReduce && *alg != Algorithm::kRing) {
    return Error{context + ": field 'algorithm': " + cls + " has only the 'ring' algorithm"};
  }
  c.cls = *parsed;
  c.algorithm = *alg;
  return std::nullopt;
}

template <typename T, typename ReadOne>
ObjectReader::Handler ListOf(const std::string& context, std::string_view key, std::vector<T>& out,
                             ReadOne read_one) {
  return [context, key, &out, read_one](element v) -> std::optional<Error> {
    simdjson::dom::array list;
    if (v.get_array().get(list) != simdjson::SUCCESS) {
      return Error{context + ": field '" + std::string(key) + "': expected an array, got " +
                   DescribeJsonValue(v)};
    }
    size_t index = 0;
    for (element item : list) {
      T t;
      const std::string item_context =
          context + ": " + std::string(key) + "[" + std::to_string(index++) + "]";
      if (auto error = read_one(item, item_context, t)) return error;
      out.push_back(std::move(t));
    }
    return std::nullopt;
  };
}

// The first entry of `list` whose key (the words naming it, e.g. "class 'gemm' variant
// 'bf16'") an earlier entry has: "<context>: <field>[i]: <key> appears more than once".
template <typename T, typename KeyOf>
std::optional<Error> FirstRepeat(const std::vector<T>& list, std::string_view field,
                                 const std::string& context, const KeyOf& key_of) {
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string key = key_of(list[i]);
    for (size_t j = 0; j < i; ++j) {
      if (key_of(list[j]) == key) {
        return Error{context + ": " + std::string(field) + "[" + std::to_string(i) + "]: " +
                     key + " appears more than once"};
      }
    }
  }
  return std::nullopt;
}

std::optional<Error> CheckDevice(const DeviceProfile& d, const std::string& context) {
  const auto class_and_variant = [](const auto& k) {
    return "class '" + std::string(KernelClassName(k.cls)) + "' variant '" + k.variant + "'" +
           (k.implementation.empty() ? "" : " implementation '" + k.implementation + "'");
  };
  if (auto e = FirstRepeat(d.kernels, "kernels", context, class_and_variant)) return e;
  if (auto e = FirstRepeat(d.kernel_sources, "kernel_sources", context, class_and_variant)) {
    return e;
  }
  if (auto e = FirstRepeat(d.collectives, "collectives", context, [](const CollectiveParams& c) {
        return "class '" + std::string(KernelClassName(c.cls)) + "' algorithm '" +
               std::string(AlgorithmName(c.algorithm)) + "'";
      })) {
    return e;
  }
  if (d.basis != "fitted" && d.basis != "public" && d.basis != "derived") {
    return Error{context + ": field 'basis': expected \"fitted\", \"public\" or \"derived\", got \"" +
                 d.basis + "\""};
  }
  return std::nullopt;
}

std::optional<Error> ReadDevice(element v, const std::string& outer, DeviceProfile& d) {
  // Name the entry by its device id in later messages when it has one.
  std::string context = outer;
  object obj;
  std::string_view id;
  if (v.get_object().get(obj) == simdjson::SUCCESS && obj["device"].get_string().get(id) ==
                                                          simdjson::SUCCESS) {
    context = outer.substr(0, outer.rfind(": ")) + ": device '" + std::string(id) + "'";
  }
  ObjectReader r(context);
  r.Field("device", true, r.String("device", true, d.device));
  r.Field("applies_to", false, r.Strings("applies_to", d.applies_to));
  r.Field("fit_family", false, r.String("fit_family", true, d.fit_family));
  r.Field("nccl_nvls", false, r.Bool("nccl_nvls", d.nccl_nvls));
  r.Field("basis", true, r.String("basis", true, d.basis));
  r.Field("source", true, r.String("source", true, d.source));
  r.Field("chunked_prefill_tokens", false,
          r.Integer("chunked_prefill_tokens", 0, 1000000000, d.chunked_prefill_tokens));
  r.Field("kernels", false, ListOf(context, "kernels", d.kernels, ReadKernel));
  r.Field("collectives", false, ListOf(context, "collectives", d.collectives, ReadCollective));
  r.Field("kernel_sources", false,
          ListOf(context, "kernel_sources", d.kernel_sources, ReadKernelSource));
  if (auto error = r.Read(v)) return error;
  return CheckDevice(d, context);
}

std::optional<Error> ReadMemoryTier(element v, const std::string& context, MemoryTier& t) {
  ObjectReader r(context);
  r.Field("below_gib", true, r.Number("below_gib", 0, 1e6, true, t.below_gib));
  r.Field("tokens", true, r.Integer("tokens", 0, 1000000000, t.tokens));
  return r.Read(v);
}

// `field` names the field read ("...: field 'float32_dtype'").
std::optional<Error> CheckFloat32Dtype(const std::string& field, const std::string& dtype) {
  if (dtype == "bf16" || dtype == "f16") return std::nullopt;
  return Error{field + ": expected \"bf16\" or \"f16\" (the 16-bit float a "
               "float32 checkpoint is loaded in), got '" + dtype + "'"};
}

std::optional<Error> ReadFloat32Exception(element v, const std::string& context,
                                          Float32Exception& e) {
  ObjectReader r(context);
  r.Field("prefix", true, r.String("prefix", true, e.prefix));
  r.Field("dtype", true, r.String("dtype", true, e.dtype));
  if (auto error = r.Read(v)) return error;
  return CheckFloat32Dtype(context + ": field 'dtype'", e.dtype);
}

std::optional<Error> ReadDefaults(element v, const std::string& context, EngineDefaults& d) {
  ObjectReader r(context + ": field 'defaults'");
  r.Field("kv_dtype", true, r.String("kv_dtype", true, d.kv_dtype));
  r.Field("chunked_prefill_tokens", true,
          r.Integer("chunked_prefill_tokens", 0, 1000000000, d.chunked_prefill_tokens));
  r.Field("chunked_prefill_by_memory", false,
          ListOf(r.context(), "chunked_prefill_by_memory", d.chunked_prefill_by_memory,
                 ReadMemoryTier));
  r.Field("cuda_graphs", true, r.Bool("cuda_graphs", d.cuda_graphs));
  r.Field("prefill_cuda_graphs", false, r.Bool("prefill_cuda_graphs", d.prefill_cuda_graphs));
  r.Field("overlap_scheduling", false, r.Bool("overlap_scheduling", d.overlap_scheduling));
  r.Field("prefill_first", false, r.Bool("prefill_first", d.prefill_first));
  r.Field("mma_16bit", false, r.String("mma_16bit", true, d.mma_16bit));
  r.Field("float32_dtype", false, r.String("float32_dtype", true, d.float32_dtype));
  r.Field("float32_dtype_by_model_type", false,
          ListOf(r.context(), "float32_dtype_by_model_type", d.float32_dtype_by_model_type,
                 ReadFloat32Exception));
  r.Field("source", true, r.String("source", true, d.source));
  if (auto error = r.Read(v)) return error;
  const std::vector<MemoryTier>& tiers = d.chunked_prefill_by_memory;
  for (size_t i = 1; i < tiers.size(); ++i) {
    if (tiers[i].below_gib <= tiers[i - 1].below_gib) {
      return Error{r.context() + ": chunked_prefill_by_memory[" + std::to_string(i) +
                   "]: field 'below_gib': must be above the tier before it (tiers ascend)"};
    }
  }
  if (d.mma_16bit != "recipe" && d.mma_16bit != "fp16") {
    return Error{r.context() + ": field 'mma_16bit': expected \"recipe\" or \"fp16\", got '" +
                 d.mma_16bit + "'"};
  }
  if (!d.float32_dtype.empty()) {
    if (auto error = CheckFloat32Dtype(r.context() + ": field 'float32_dtype'", d.float32_dtype)) {
      return error;
    }
  } else if (!d.float32_dtype_by_model_type.empty()) {
    return Error{r.context() + ": field 'float32_dtype_by_model_type': exceptions to a "
                 "float32_dtype the defaults do not give"};
  }
  if (d.kv_dtype != "auto" && !format::ParseFormat(d.kv_dtype)) {
    return Error{r.context() + ": field 'kv_dtype': unknown format '" + d.kv_dtype +
                 "' (a format name such as bf16 or fp8_e4m3, or \"auto\")"};
  }
  return std::nullopt;
}

std::optional<Error> ReadOverheads(element v, const std::string& context, StepOverheads& o) {
  ObjectReader r(context + ": field 'overheads'");
  r.Field("step_s", true, r.Number("step_s", 0, 10, false, o.step_s));
  r.Field("sampling_s", true, r.Number("sampling_s", 0, 10, false, o.sampling_s));
  r.Field("launch_s", true, r.Number("launch_s", 0, 1, false, o.launch_s));
  r.Field("request_s", false, r.Number("request_s", 0, 10, false, o.request_s));
  r.Field("source", true, r.String("source", true, o.source));
  return r.Read(v);
}

std::optional<Error> ReadMoeCall(element v, const std::string& context, MoeCall& m) {
  ObjectReader r(context + ": field 'moe_call'");
  r.Field("parts", true, r.Strings("parts", m.parts));
  r.Field("source", true, r.String("source", true, m.source));
  if (auto error = r.Read(v)) return error;
  for (const std::string& part : m.parts) {
    if (std::find(ir::kMoeParts.begin(), ir::kMoeParts.end(), part) == ir::kMoeParts.end()) {
      return Error{r.context() + ": field 'parts': unknown part '" + part +
                   "' (routing, permute, activation or combine)"};
    }
  }
  return FirstRepeat(m.parts, "parts", r.context(),
                     [](const std::string& part) { return "'" + part + "'"; });
}

std::optional<Error> CheckProfile(const EngineProfile& p, const std::string& context) {
  for (const std::string& op : p.fused_ops) {
    if (!ir::ParseOpKind(op)) {
      return Error{context + ": field 'fused_ops': unknown op kind '" + op + "'"};
    }
  }
  for (size_t i = 0; i < p.devices.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const DeviceProfile& a = p.devices[i];
      const DeviceProfile& b = p.devices[j];
      std::vector<std::string> ids = a.applies_to;
      ids.push_back(a.device);
      for (const std::string& id : ids) {
        if (b.Serves(id)) {
          return Error{context + ": device '" + id + "' has two entries (devices[" +
                       std::to_string(j) + "] and devices[" + std::to_string(i) + "])"};
        }
      }
    }
  }
  if (p.devices.empty() && !p.transparent) {
    return Error{context + ": field 'devices': a profile that is not transparent needs at least "
                           "one device entry"};
  }
  return std::nullopt;
}

std::string DescribeParseError(simdjson::error_code code) {
  switch (code) {
    case simdjson::TAPE_ERROR:
      return "truncated or malformed JSON (unbalanced brackets, a missing value or comma, or a "
             "non-JSON literal such as NaN)";
    case simdjson::UNCLOSED_STRING: return "truncated JSON: unclosed string";
    case simdjson::NUMBER_ERROR: return "malformed or out-of-range number";
    case simdjson::UTF8_ERROR: return "invalid UTF-8";
    default: break;
  }
  std::string message = simdjson::error_message(code);
  if (!message.empty() && message[0] >= 'A' && message[0] <= 'Z') {
    message[0] = static_cast<char>(message[0] - 'A' + 'a');
  }
  while (!message.empty() && (message.back() == '.' || message.back() == ' ')) message.pop_back();
  return "not valid JSON: " + message;
}

}  // namespace

Result<EngineProfile> ParseEngineProfile(std::string_view json_text, std::string_view origin) {
  json_text = SkipUtf8Bom(json_text);
  const std::string context(origin);
  if (json_text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return MakeError(context + ": empty document, expected a JSON object");
  }
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json_text);
  element root;
  if (auto code = parser.parse(padded).get(root); code != simdjson::SUCCESS) {
    return MakeError(context + ": " + DescribeParseError(code));
  }
  EngineProfile p;
  ObjectReader r(context);
  r.Field("schema_version", true, r.Integer("schema_version", 1, 1, p.schema_version));
  r.Field("engine", true, r.String("engine", true, p.engine));
  r.Field("description", true, r.String("description", true, p.description));
  r.Field("version", true, r.String("version", true, p.version));
  r.Field("transparent", false, r.Bool("transparent", p.transparent));
  r.Field("defaults", true, [&](element v) { return ReadDefaults(v, context, p.defaults); });
  r.Field("overheads", true, [&](element v) { return ReadOverheads(v, context, p.overheads); });
  r.Field("fused_ops", false, r.Strings("fused_ops", p.fused_ops));
  r.Field("moe_call", false, [&](element v) { return ReadMoeCall(v, context, p.moe_call); });
  r.Field("default_for", false, r.Strings("default_for", p.default_for));
  r.Field("devices", true, ListOf(context, "devices", p.devices, ReadDevice));
  if (auto error = r.Read(root)) return std::unexpected(*error);
  if (auto error = CheckProfile(p, context)) return std::unexpected(*error);
  return p;
}

Result<EngineProfile> LoadEngineProfileFile(const std::string& path) {
  Result<std::string> text = ReadFile(path, uint64_t{1} << 28);
  if (!text) return std::unexpected(text.error());
  return ParseEngineProfile(*text, path);
}

const std::vector<EngineProfile>& BuiltinProfiles() {
  static const std::vector<EngineProfile> profiles = [] {
    std::vector<EngineProfile> out;
    for (const auto& [file, json] : kEngineProfilesJson) {
      Result<EngineProfile> p = ParseEngineProfile(json, "built-in " + std::string(file));
      if (!p) std::fprintf(stderr, "opscope: internal error: %s\n", p.error().message.c_str());
      assert(p && "every embedded data/engines/*.json must parse");
      if (p) out.push_back(std::move(*p));
    }
    return out;
  }();
  return profiles;
}

Result<const EngineProfile*> FindBuiltinProfile(std::string_view engine) {
  std::string known;
  for (const EngineProfile& p : BuiltinProfiles()) {
    if (p.engine == engine) return &p;
    known += (known.empty() ? "" : ", ") + p.engine;
  }
  return MakeError("unknown engine '" + std::string(engine) + "' (known: " + known +
                   "; or pass --engine FILE.json)");
}

Result<EngineProfile> ResolveEngineProfile(std::string_view name_or_path) {
  // "ENGINE:NAME" / "profile.json:NAME": an alternative implementation; a ':' inside a path
  // (before its last '/') is the path's own.
  const size_t colon = name_or_path.rfind(':');
  const bool has_name = colon != std::string_view::npos && colon + 1 < name_or_path.size() &&
                        name_or_path.find('/', colon) == std::string_view::npos &&
                        !name_or_path.ends_with(".json");
  const std::string_view engine = has_name ? name_or_path.substr(0, colon) : name_or_path;
  Result<EngineProfile> p;
  if (engine.ends_with(".json")) {
    p = LoadEngineProfileFile(std::string(engine));
  } else if (auto builtin = FindBuiltinProfile(engine)) {
    p = **builtin;
  } else {
    return std::unexpected(builtin.error());
  }
  if (!p || !has_name) return p;
  return SelectImplementation(std::move(*p), name_or_path.substr(colon + 1));
}

std::vector<std::string> Implementations(const EngineProfile& profile) {
  std::vector<std::string> names;
  for (const DeviceProfile& d : profile.devices) {
    for (const KernelParams& k : d.kernels) {
      if (!k.implementation.empty()) names.push_back(k.implementation);
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Result<EngineProfile> SelectImplementation(EngineProfile profile, std::string_view name) {
  const std::vector<std::string> offered = Implementations(profile);
  if (std::find(offered.begin(), offered.end(), name) == offered.end()) {
    std::string known;
    for (const std::string& n : offered) known += (known.empty() ? "" : ", ") + n;
    return MakeError("engine '" + profile.engine + "' has no kernel implementation '" +
                     std::string(name) + "' (" +
                     (known.empty() ? std::string("it offers none") : "it offers: " + known) +
                     ")");
  }
  for (DeviceProfile& d : profile.devices) {
    std::vector<KernelParams> kept;
    std::vector<KernelParams> chosen;
    for (KernelParams& k : d.kernels) {
      if (k.implementation.empty()) {
        kept.push_back(std::move(k));
      } else if (k.implementation == name) {
        chosen.push_back(std::move(k));
      }
    }
    for (KernelParams& k : chosen) {
      auto same = std::find_if(kept.begin(), kept.end(), [&](const KernelParams& o) {
        return o.cls == k.cls && o.variant == k.variant;
      });
      k.implementation.clear();
      if (same != kept.end()) {
        *same = std::move(k);
      } else {
        kept.push_back(std::move(k));
      }
    }
    if (!chosen.empty()) d.implementation = std::string(name);
    d.kernels = std::move(kept);
  }
  profile.implementation = std::string(name);
  return profile;
}

Result<void> CheckImplementationServes(const EngineProfile& profile, const DeviceProfile& entry,
                                       std::string_view device) {
  const std::string& chosen = profile.implementation;
  if (chosen.empty() || entry.implementation == chosen) return {};
  std::string where;
  for (const DeviceProfile& d : profile.devices) {
    if (d.implementation == chosen) where += (where.empty() ? "" : ", ") + d.device;
  }
  return MakeError(profile.engine + "'s '" + chosen + "' kernels are fitted for " + where +
                   ", not for " + std::string(device));
}

int64_t ChunkedPrefillTokens(const EngineProfile& profile, const DeviceProfile& entry,
                             const device::Device& device) {
  if (entry.chunked_prefill_tokens > 0) return entry.chunked_prefill_tokens;
  constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;
  const double memory_gib = static_cast<double>(device.memory_bytes) / kBytesPerGib;
  for (const MemoryTier& t : profile.defaults.chunked_prefill_by_memory) {
    if (memory_gib < t.below_gib) return t.tokens;
  }
  return profile.defaults.chunked_prefill_tokens;
}

Result<const DeviceProfile*> FindDeviceProfile(const EngineProfile& profile,
                                               const device::Device& device) {
  for (const DeviceProfile& d : profile.devices) {
    if (d.device == device.name) return &d;
  }
  for (const DeviceProfile& d : profile.devices) {
    if (d.Serves(device.name)) return &d;
  }
  for (const DeviceProfile& d : profile.devices) {
    if (d.device == "*") return &d;
  }
  if (profile.transparent) {
    static const DeviceProfile kTransparent = [] {
      DeviceProfile d;
      d.device = "*";
      d.basis = "derived";
      d.source = "transparent profile";
      return d;
    }();
    return &kTransparent;
  }
  std::string known;
  for (const DeviceProfile& d : profile.devices) {
    known += (known.empty() ? "" : ", ") + d.device;
    for (const std::string& a : d.applies_to) known += ", " + a;
  }
  return MakeError("engine '" + profile.engine + "' has no profile for device '" + device.name +
                   "' (it has: " + known + "); '--engine roofline' predicts any device at its "
                   "roofline");
}

std::string_view DefaultEngine(const device::Device& device) {
  for (const EngineProfile& p : BuiltinProfiles()) {
    if (std::find(p.default_for.begin(), p.default_for.end(), device.name) != p.default_for.end()) {
      return p.engine;
    }
  }
  for (std::string_view engine : {std::string_view("vllm"), std::string_view("llama.cpp")}) {
    auto p = FindBuiltinProfile(engine);
    if (!p) continue;
    for (const DeviceProfile& d : (*p)->devices) {
      if (d.device != "*" && d.Serves(device.name)) return engine;
    }
  }
  return "roofline";
}

// ---- Writing ------------------------------------------------------------------------------

namespace {

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

std::string FitJson(const FitStats& f) {
  return "{\"samples\": " + std::to_string(f.samples) + ", \"folds\": " + std::to_string(f.folds) +
         ", \"median_abs_error\": " + Num(f.median_abs_error) +
         ", \"p90_abs_error\": " + Num(f.p90_abs_error) + "}";
}

std::string KernelJson(const KernelParams& k) {
  std::string s = "{\"class\": " + Quote(KernelClassName(k.cls)) + ", \"variant\": " +
                  Quote(k.variant) + ", \"overhead_s\": " + Num(k.overhead_s) +
                  ", \"bandwidth_efficiency\": " + Num(k.bandwidth_efficiency) +
                  ", \"compute_efficiency\": " + Num(k.compute_efficiency) +
                  ", \"overlap\": " + Num(k.overlap) + ", \"tile_m\": " + std::to_string(k.tile_m) +
                  ", \"tile_n\": " + std::to_string(k.tile_n) +
                  ", \"wave_exponent\": " + Num(k.wave_exponent) +
                  ", \"wave_latency_s\": " + Num(k.wave_latency_s);
  if (k.k_overhead > 0) s += ", \"k_overhead\": " + Num(k.k_overhead);
  if (!k.implementation.empty()) s += ", \"implementation\": " + Quote(k.implementation);
  if (k.fit.samples > 0) s += ",\n         \"fit\": " + FitJson(k.fit);
  return s + "}";
}

std::string CollectiveJson(const CollectiveParams& c) {
  std::string s = "{\"class\": " + Quote(KernelClassName(c.cls)) + ", \"algorithm\": " +
                  Quote(AlgorithmName(c.algorithm)) + ", \"latency_s\": " + Num(c.latency_s) +
                  ", \"latency_per_peer_s\": " + Num(c.latency_per_peer_s) +
                  ", \"bandwidth_efficiency\": " + Num(c.bandwidth_efficiency);
  if (c.fit.samples > 0) s += ",\n         \"fit\": " + FitJson(c.fit);
  return s + "}";
}

std::string StringList(const std::vector<std::string>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + Quote(v[i]);
  return s + "]";
}

// ', "chunked_prefill_by_memory": [...]' inside "defaults"; nothing without tiers.
std::string MemoryTiersJson(const std::vector<MemoryTier>& tiers) {
  if (tiers.empty()) return "";
  std::string s = ",\n    \"chunked_prefill_by_memory\": [";
  for (size_t i = 0; i < tiers.size(); ++i) {
    s += (i ? ", " : "") + std::string("{\"below_gib\": ") + Num(tiers[i].below_gib) +
         ", \"tokens\": " + std::to_string(tiers[i].tokens) + "}";
  }
  return s + "]";
}

std::string Float32ExceptionsJson(const std::vector<Float32Exception>& exceptions) {
  if (exceptions.empty()) return "";
  std::string s = ", \"float32_dtype_by_model_type\": [";
  for (size_t i = 0; i < exceptions.size(); ++i) {
    s += (i ? ", " : "") + std::string("{\"prefix\": ") + Quote(exceptions[i].prefix) +
         ", \"dtype\": " + Quote(exceptions[i].dtype) + "}";
  }
  return s + "]";
}

std::string DeviceJson(const DeviceProfile& d) {
  std::string s = "    {\"device\": " + Quote(d.device) + ",\n";
  if (!d.applies_to.empty()) s += "     \"applies_to\": " + StringList(d.applies_to) + ",\n";
  if (!d.fit_family.empty()) s += "     \"fit_family\": " + Quote(d.fit_family) + ",\n";
  if (d.nccl_nvls) s += "     \"nccl_nvls\": true,\n";
  s += "     \"basis\": " + Quote(d.basis) + ",\n     \"source\": " + Quote(d.source) + ",\n";
  if (d.chunked_prefill_tokens > 0) {
    s += "     \"chunked_prefill_tokens\": " + std::to_string(d.chunked_prefill_tokens) + ",\n";
  }
  s += "     \"kernels\": [";
  for (size_t i = 0; i < d.kernels.size(); ++i) {
    s += (i ? ",\n        " : "\n        ") + KernelJson(d.kernels[i]);
  }
  s += d.kernels.empty() ? "],\n" : "\n     ],\n";
  s += "     \"collectives\": [";
  for (size_t i = 0; i < d.collectives.size(); ++i) {
    s += (i ? ",\n        " : "\n        ") + CollectiveJson(d.collectives[i]);
  }
  s += d.collectives.empty() ? "]" : "\n     ]";
  if (!d.kernel_sources.empty()) {
    s += ",\n     \"kernel_sources\": [";
    for (size_t i = 0; i < d.kernel_sources.size(); ++i) {
      const KernelSource& k = d.kernel_sources[i];
      s += (i ? ",\n        " : "\n        ") + std::string("{\"class\": ") +
           Quote(KernelClassName(k.cls)) + ", \"variant\": " + Quote(k.variant) +
           ", \"kernel_source\": " + Quote(k.kernel_source) +
           (k.engine.empty() ? std::string() : ", \"engine\": " + Quote(k.engine)) +
           (k.implementation.empty() ? std::string()
                                     : ", \"implementation\": " + Quote(k.implementation)) +
           ",\n         \"source\": " + Quote(k.source) + "}";
    }
    s += "\n     ]";
  }
  return s + "}";
}

}  // namespace

std::string EngineProfileJson(const EngineProfile& p) {
  std::string s = "{\n  \"schema_version\": " + std::to_string(p.schema_version) + ",\n";
  s += "  \"engine\": " + Quote(p.engine) + ",\n";
  s += "  \"description\": " + Quote(p.description) + ",\n";
  s += "  \"version\": " + Quote(p.version) + ",\n";
  if (p.transparent) s += "  \"transparent\": true,\n";
  s += "  \"defaults\": {\"kv_dtype\": " + Quote(p.defaults.kv_dtype) +
       ", \"chunked_prefill_tokens\": " + std::to_string(p.defaults.chunked_prefill_tokens) +
       ", \"cuda_graphs\": " + (p.defaults.cuda_graphs ? "true" : "false") +
       ", \"prefill_cuda_graphs\": " + (p.defaults.prefill_cuda_graphs ? "true" : "false") +
       (p.defaults.overlap_scheduling ? ", \"overlap_scheduling\": true" : "") +
       (p.defaults.prefill_first ? ", \"prefill_first\": true" : "") +
       (p.defaults.mma_16bit != "recipe" ? ", \"mma_16bit\": " + Quote(p.defaults.mma_16bit)
                                          : std::string()) +
       (!p.defaults.float32_dtype.empty()
            ? ", \"float32_dtype\": " + Quote(p.defaults.float32_dtype)
            : std::string()) +
       Float32ExceptionsJson(p.defaults.float32_dtype_by_model_type) +
       MemoryTiersJson(p.defaults.chunked_prefill_by_memory) +
       ",\n    \"source\": " + Quote(p.defaults.source) + "},\n";
  s += "  \"overheads\": {\"step_s\": " + Num(p.overheads.step_s) +
       ", \"sampling_s\": " + Num(p.overheads.sampling_s) +
       ", \"launch_s\": " + Num(p.overheads.launch_s) +
       ", \"request_s\": " + Num(p.overheads.request_s) +
       ",\n    \"source\": " + Quote(p.overheads.source) + "},\n";
  s += "  \"fused_ops\": " + StringList(p.fused_ops) + ",\n";
  if (!p.moe_call.parts.empty()) {
    s += "  \"moe_call\": {\"parts\": " + StringList(p.moe_call.parts) +
         ",\n    \"source\": " + Quote(p.moe_call.source) + "},\n";
  }
  if (!p.default_for.empty()) s += "  \"default_for\": " + StringList(p.default_for) + ",\n";
  s += "  \"devices\": [";
  for (size_t i = 0; i < p.devices.size(); ++i) {
    s += (i ? ",\n" : "\n") + DeviceJson(p.devices[i]);
  }
  s += p.devices.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return s;
}

}  // namespace opscope::predict
