// Fitting engine profiles to measurements (see calibrate.h).
#include "predict/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "predict/samples.h"

namespace opscope::predict {

namespace {

constexpr std::string_view kFittedPrefix = "kernel classes and all-reduce fitted";

// The measurement's identity without its implementation label and latency: rows that share
// it timed the same call with different kernels.
std::string CallKey(const Measurement& m) {
  std::string key = std::string(MeasuredKernelName(m.kernel)) + '|' + m.device + '|' + m.engine;
  for (const auto& [column, value] : m.values) {
    if (column == "kernel_source" || column == "backend" || column == "implementation" ||
        column == "framework" || column == "version" || column == "op_name") {
      continue;
    }
    key += '|' + column + '=' + value;
  }
  return key;
}

// The fastest measurement of each call, in first-seen order, among the rows `keep` accepts.
std::vector<const Measurement*> FastestPerCall(
    const std::vector<MeasurementFile>& files,
    const std::function<bool(const Measurement&)>& keep) {
  std::map<std::string, size_t> index;
  std::vector<const Measurement*> out;
  for (const MeasurementFile& f : files) {
    for (const Measurement& m : f.rows) {
      if (!keep(m)) continue;
      const auto [it, fresh] = index.emplace(CallKey(m), out.size());
      if (fresh) {
        out.push_back(&m);
      } else if (m.latency_s < out[it->second]->latency_s) {
        out[it->second] = &m;
      }
    }
  }
  return out;
}

// The base entry whose kernel_sources rule the rows of `device` (the last entry serving it that
// has rules), or nullptr.
const DeviceProfile* RuledEntry(const EngineProfile& base, const std::string& device) {
  const DeviceProfile* entry = nullptr;
  for (const DeviceProfile& d : base.devices) {
    if (d.Serves(device) && !d.kernel_sources.empty()) entry = &d;
  }
  return entry;
}

// Whether rule `k` names the table row `m` comes from: the rule's engine (the base profile's
// own when it names none) and implementation label.
bool RuleTimes(const KernelSource& k, const Measurement& m, const std::string& base_engine) {
  return (k.engine.empty() ? base_engine : k.engine) == m.engine &&
         k.kernel_source == m.kernel_source;
}

// The kernel class and variant a row is fitted as; nullopt for a row that is an error or not
// modelled (CollectSamples reports those).
std::optional<std::pair<KernelClass, std::string>> RowClass(const Measurement& m) {
  auto device = device::ResolveDevice(m.device);
  if (!device) return std::nullopt;
  std::string why;
  auto sample = MakeSample(m, *device, &why);
  if (!sample || !*sample) return std::nullopt;
  const KernelInput& first = (*sample)->parts.front();
  return std::pair{first.cls, first.variant};
}

// Whether a row is of the implementation the engine runs by default for its kernel class and
// variant on its device, where the base profile names one (DeviceProfile::kernel_sources); a
// rule may name another engine's rows (KernelSource::engine), which are then the only rows of
// that class and variant fitted. Rows of another engine that no rule names, and rows of a
// device or class no rule covers, are handled as without rules (the former dropped, the latter
// kept). A row counted out adds its reason to `skipped`. Checked before the fastest-per-call
// choice, so that a faster kernel the engine never runs does not stand for a call.
bool IsDefaultImplementation(const Measurement& m, const EngineProfile& base,
                             std::map<std::string, size_t>& skipped) {
  const bool own = m.engine == base.engine || m.engine == "nccl";
  const DeviceProfile* entry = RuledEntry(base, m.device);
  const auto drop = [&](const std::string& reason) {
    ++skipped[reason];
    return false;
  };
  if (entry == nullptr) return own ? true : drop("rows of engine '" + m.engine + "'");
  const auto row = RowClass(m);
  if (!row) return own;  // an error or an unmodelled row: CollectSamples reports it
  const auto& [cls, variant] = *row;
  // A named alternative's row is fitted, and reported, in the alternative's own pass.
  for (const KernelSource& k : entry->kernel_sources) {
    if (!k.implementation.empty() && k.cls == cls && k.variant == variant &&
        RuleTimes(k, m, base.engine)) {
      return false;
    }
  }
  const KernelSource* wanted = entry->SourceOf(cls, variant);
  const std::string group =
      std::string(KernelClassName(cls)) + " '" + variant + "' on " + m.device;
  if (wanted == nullptr) return own ? true : drop("rows of engine '" + m.engine + "'");
  if (RuleTimes(*wanted, m, base.engine)) return true;
  if (!own) return drop("rows of engine '" + m.engine + "'");
  const std::string& wanted_engine = wanted->engine.empty() ? base.engine : wanted->engine;
  if (wanted_engine != base.engine) {
    return drop(group + ": fitted to " + wanted_engine + "'s " + wanted->kernel_source +
                " rows instead (the profile's kernel_sources say why)");
  }
  return drop(group + ": not the engine's default implementation (" + wanted->kernel_source + ")");
}

// The names of the alternative implementations the base profile's rules describe (a rule
// with KernelSource::implementation), sorted, each once.
std::vector<std::string> AlternativeNames(const EngineProfile& base) {
  std::set<std::string> names;
  for (const DeviceProfile& d : base.devices) {
    for (const KernelSource& k : d.kernel_sources) {
      if (!k.implementation.empty()) names.insert(k.implementation);
    }
  }
  return {names.begin(), names.end()};
}

// Whether a row times the alternative `name` of its kernel class and variant on its device:
// the base entry serving the device has a rule so named for the row's class and variant, and
// the row is of that rule's implementation and engine.
bool IsAlternative(const Measurement& m, const EngineProfile& base, const std::string& name) {
  const DeviceProfile* entry = RuledEntry(base, m.device);
  if (entry == nullptr) return false;
  // Cheap first: most rows are of no rule so named (and need no sample to tell).
  if (std::none_of(entry->kernel_sources.begin(), entry->kernel_sources.end(),
                   [&](const KernelSource& k) {
                     return k.implementation == name && RuleTimes(k, m, base.engine);
                   })) {
    return false;
  }
  const auto row = RowClass(m);
  if (!row) return false;
  const KernelSource* rule = entry->SourceOf(row->first, row->second, name);
  return rule != nullptr && RuleTimes(*rule, m, base.engine);
}

// A skip reason with its numbers and quoted names generalised, so rows skipped for the same
// reason count together.
std::string Generalise(std::string_view reason) {
  std::string out;
  bool in_quote = false;
  for (char c : reason) {
    if (c == '\'') {
      in_quote = !in_quote;
      out += in_quote ? "'…" : "'";
      continue;
    }
    if (in_quote) continue;
    if (c >= '0' && c <= '9') {
      if (out.empty() || out.back() != '#') out += '#';
      continue;
    }
    out += c;
  }
  return out;
}

struct Group {
  KernelClass cls = KernelClass::kNone;
  std::string variant;
  std::vector<Sample> samples;
};

struct DeviceData {
  device::Device device;
  std::map<std::pair<int, std::string>, Group> kernels;  // (class, variant) → samples
  std::vector<Sample> nccl, custom;                      // all-reduce rows
  size_t measurements = 0;
};

double RooflineMedian(std::span<const Sample> samples) {
  std::vector<double> predicted, measured;
  for (const Sample& s : samples) {
    predicted.push_back(s.roofline_s);
    measured.push_back(s.measured_s);
  }
  return ErrorStats(predicted, measured, 0).median_abs_error;
}

// Adds a fitted kernel or collective set to the device's entry (created from the base entry
// for the device when there is one).
DeviceProfile& EntryFor(EngineProfile& p, const std::string& device) {
  for (DeviceProfile& d : p.devices) {
    if (d.device == device) return d;
  }
  DeviceProfile d;
  d.device = device;
  d.basis = "fitted";
  p.devices.push_back(std::move(d));
  return p.devices.back();
}

void Replace(DeviceProfile& d, KernelParams k) {
  for (KernelParams& old : d.kernels) {
    if (old.cls == k.cls && old.variant == k.variant && old.implementation == k.implementation) {
      old = std::move(k);
      return;
    }
  }
  d.kernels.push_back(std::move(k));
  std::stable_sort(d.kernels.begin(), d.kernels.end(), [](const auto& a, const auto& b) {
    return std::tie(a.cls, a.variant, a.implementation) <
           std::tie(b.cls, b.variant, b.implementation);
  });
}

Result<std::map<std::string, DeviceData>> CollectSamples(
    const std::vector<const Measurement*>& calls, std::map<std::string, size_t>& skipped) {
  std::map<std::string, DeviceData> devices;
  for (const Measurement* m : calls) {
    auto it = devices.find(m->device);
    if (it == devices.end()) {
      auto d = device::ResolveDevice(m->device);
      if (!d) return std::unexpected(Wrap(m->origin, d.error()));
      it = devices.emplace(m->device, DeviceData{std::move(*d), {}, {}, {}, 0}).first;
    }
    DeviceData& data = it->second;
    std::string why;
    auto sample = MakeSample(*m, data.device, &why);
    if (!sample) return std::unexpected(sample.error());
    if (!*sample) {
      ++skipped[std::string(MeasuredKernelName(m->kernel)) + " rows that cannot be modelled: " +
                Generalise(why)];
      continue;
    }
    ++data.measurements;
    Sample& s = **sample;
    const KernelInput& first = s.parts.front();
    if (first.cls == KernelClass::kAllReduce) {
      (m->engine == "nccl" ? data.nccl : data.custom).push_back(std::move(s));
      continue;
    }
    Group& g = data.kernels[{static_cast<int>(first.cls), first.variant}];
    g.cls = first.cls;
    g.variant = first.variant;
    g.samples.push_back(std::move(s));
  }
  return devices;
}

void AddResiduals(std::span<const Sample> samples, const std::string& device,
                  const std::string& kernel, const std::string& variant,
                  const std::function<double(const Sample&)>& predict,
                  std::vector<Residual>& out) {
  for (const Sample& s : samples) {
    out.push_back({s.origin, device, kernel, variant, s.measured_s, predict(s), s.roofline_s});
  }
}

// "one_shot, two_shot, ring": the algorithms of `params`, in order, for a fit report row.
std::string AlgorithmList(std::span<const CollectiveParams> params) {
  std::string out;
  for (const CollectiveParams& c : params) {
    out += (out.empty() ? "" : ", ") + std::string(AlgorithmName(c.algorithm));
  }
  return out;
}

// NCCL's rows: the ring, and where the entry says NCCL runs NVLS there (nccl_nvls), the ring
// and nvls, each call the faster of the two (NCCL's tuner picks NVLS for large all-reduces on
// NVSwitch systems with NVLink SHARP). The engine's own kernels then fit with these in the
// minimum.
void FitAllReduceRows(DeviceData& data, DeviceProfile& entry, const CalibrateOptions& options,
                      std::vector<FitRow>& rows, std::vector<Residual>& residuals) {
  const DeviceRates rates = RatesOf(data.device);
  if (rates.interconnect_bytes_per_s <= 0) return;
  std::vector<CollectiveParams> ring;
  if (data.nccl.size() >= options.min_samples) {
    static constexpr Algorithm kRingOnly[] = {Algorithm::kRing};
    static constexpr Algorithm kRingAndNvls[] = {Algorithm::kRing, Algorithm::kNvls};
    const std::span<const Algorithm> alg(entry.nccl_nvls ? std::span<const Algorithm>(kRingAndNvls)
                                                         : std::span<const Algorithm>(kRingOnly));
    ring = FitAllReduce(data.nccl, alg, {}, rates, options.fit);
    rows.push_back({data.device.name, "all_reduce", "nccl: " + AlgorithmList(ring),
                    ring.front().fit, RooflineMedian(data.nccl)});
  }
  std::vector<CollectiveParams> fitted = ring;
  if (data.custom.size() >= options.min_samples) {
    const Algorithm alg[] = {Algorithm::kOneShot, Algorithm::kTwoShot};
    std::vector<CollectiveParams> custom = FitAllReduce(data.custom, alg, ring, rates, options.fit);
    // The row names every algorithm in the minimum: its own and NCCL's, held fixed.
    std::vector<CollectiveParams> all = custom;
    all.insert(all.end(), ring.begin(), ring.end());
    rows.push_back({data.device.name, "all_reduce", AlgorithmList(all), custom.front().fit,
                    RooflineMedian(data.custom)});
    fitted.insert(fitted.end(), custom.begin(), custom.end());
  }
  if (fitted.empty()) return;
  const auto predict = [&](const Sample& s) { return SampleTime(s, fitted, rates); };
  AddResiduals(data.nccl, data.device.name, "all_reduce", "nccl", predict, residuals);
  AddResiduals(data.custom, data.device.name, "all_reduce", "custom", predict, residuals);
  std::erase_if(entry.collectives,
                [](const CollectiveParams& c) { return c.cls == KernelClass::kAllReduce; });
  entry.collectives.insert(entry.collectives.begin(), fitted.begin(), fitted.end());
}

// Memory-bound kernels other than GEMVs (norms, elementwise, RoPE, copies) have no kernel
// table: an entry without its own memory class gets the fitted bf16 GEMM's overhead and
// achieved bandwidth (a GEMV streams its weights once, as they stream their tensors).
void AddDerivedMemoryClass(DeviceProfile& entry) {
  if (entry.Find(KernelClass::kMemory, "default") != nullptr) return;
  const KernelParams* gemm = entry.Find(KernelClass::kGemm, "bf16");
  if (gemm == nullptr) return;
  KernelParams m;
  m.cls = KernelClass::kMemory;
  m.variant = "default";
  m.overhead_s = gemm->overhead_s;
  m.bandwidth_efficiency = gemm->bandwidth_efficiency;
  m.overlap = 1;
  Replace(entry, m);
}

std::string FittedSource(const DeviceData& data, const std::string& engine,
                         const std::string& base_source) {
  std::string s = std::string(kFittedPrefix) + " by 'opscope calibrate --engine " + engine +
                  "' (scripts/fit-profiles.sh) to " + std::to_string(data.measurements) +
                  " kernel measurements on " + data.device.name +
                  " from data/calibration/ (NVIDIA aiconfigurator perf database, Apache-2.0; "
                  "data/calibration/README.md); the memory class (no kernel table) takes the "
                  "fitted bf16 GEMM's overhead_s and bandwidth_efficiency unless given";
  if (!base_source.empty()) s += "; " + base_source;
  return s;
}

// Fits each kernel group of one device's samples into `entry` as `implementation`'s kernels
// ("" the default; else tagged with the alternative's name and reported as "variant (name)"),
// with its fit row and residuals; a group under min_samples is counted in `skipped` instead.
// The devices of `data`'s fit family (the base profile's fit_family of its own entry) other
// than itself that have measurements, in id order; none without a family.
std::vector<const DeviceData*> FamilyOf(const std::map<std::string, DeviceData>& devices,
                                        const DeviceData& data, const EngineProfile& base) {
  const auto family = [&](const std::string& id) -> std::string {
    for (const DeviceProfile& d : base.devices) {
      if (d.device == id) return d.fit_family;
    }
    return "";
  };
  const std::string mine = family(data.device.name);
  std::vector<const DeviceData*> out;
  if (mine.empty()) return out;
  for (const auto& [id, other] : devices) {
    if (&other != &data && family(id) == mine) out.push_back(&other);
  }
  return out;
}

// A group too small for k-fold cross-validation (fewer than 10·k samples) is fitted with the
// same class and variant's samples on the devices of its fit family (DeviceProfile::
// fit_family: one die's SM, so one set of efficiencies, each sample timed on its own device's
// bandwidth and peaks). Seventeen to nineteen samples a device, fitting six parameters and a
// tile alone, had put one Hopper SM's grouped GEMMs at 85 % of HBM bandwidth on H100 and 29 %
// on H200, so that H200 was predicted slower than H100 where its tables measure it faster.
// `label` gains "with DEVICES" when others join; nullopt when the group is fitted alone.
struct FitSet {
  std::vector<Sample> samples;
  std::vector<DeviceRates> rates;
};
std::optional<FitSet> PooledSamples(const Group& group, const DeviceData& data,
                                    std::span<const DeviceData* const> family,
                                    const CalibrateOptions& options,
                                    const std::pair<int, std::string>& key, std::string& label) {
  if (group.samples.size() >= MinSamplesToCrossValidate(options.fit)) return std::nullopt;
  FitSet set;
  std::string with;
  for (const DeviceData* other : family) {
    const auto it = other->kernels.find(key);
    if (it == other->kernels.end() || it->second.samples.empty()) continue;
    set.samples.insert(set.samples.end(), it->second.samples.begin(), it->second.samples.end());
    set.rates.insert(set.rates.end(), it->second.samples.size(), RatesOf(other->device));
    with += (with.empty() ? "" : ", ") + other->device.name;
  }
  if (with.empty()) return std::nullopt;
  set.samples.insert(set.samples.begin(), group.samples.begin(), group.samples.end());
  set.rates.insert(set.rates.begin(), group.samples.size(), RatesOf(data.device));
  label += " with " + with;
  return set;
}

void FitKernelGroups(DeviceData& data, std::span<const DeviceData* const> family,
                     const std::string& implementation, const CalibrateOptions& options,
                     DeviceProfile& entry, Calibration& out, std::map<std::string, size_t>& skipped) {
  const DeviceRates rates = RatesOf(data.device);
  for (auto& [key, group] : data.kernels) {
    std::string label =
        implementation.empty() ? group.variant : group.variant + " (" + implementation + ")";
    if (group.samples.size() < options.min_samples) {
      skipped[std::string(KernelClassName(group.cls)) + " '" + label + "' on " +
              data.device.name + ": too few measurements to fit"] += group.samples.size();
      continue;
    }
    const std::optional<FitSet> pooled = PooledSamples(group, data, family, options, key, label);
    KernelParams k =
        pooled ? FitKernel(pooled->samples, pooled->rates, group.cls, group.variant, options.fit)
               : FitKernel(group.samples, group.cls, group.variant, rates, options.fit);
    k.implementation = implementation;
    out.rows.push_back({data.device.name, std::string(KernelClassName(group.cls)), label, k.fit,
                        RooflineMedian(group.samples)});
    AddResiduals(group.samples, data.device.name, out.rows.back().kernel, label,
                 [&](const Sample& s) { return SampleTime(s, k, rates); }, out.residuals);
    Replace(entry, std::move(k));
  }
}

}  // namespace

Result<Calibration> Calibrate(const std::vector<MeasurementFile>& files, const EngineProfile& base,
                              const CalibrateOptions& options) {
  Calibration out;
  out.profile = base;
  for (const MeasurementFile& f : files) {
    out.skipped.insert(out.skipped.end(), f.skipped.begin(), f.skipped.end());
  }
  std::map<std::string, size_t> skipped;
  const std::vector<const Measurement*> calls = FastestPerCall(
      files, [&](const Measurement& m) { return IsDefaultImplementation(m, base, skipped); });
  auto devices = CollectSamples(calls, skipped);
  if (!devices) return std::unexpected(devices.error());
  if (devices->empty()) {
    return MakeError("no measurements to fit for engine '" + base.engine + "'");
  }
  for (auto& [id, data] : *devices) {
    DeviceProfile& entry = EntryFor(out.profile, data.device.name);
    // The base entry's own source (its public figures) follows the fit's; a fit of a fitted
    // profile replaces the earlier fit's sentence.
    std::string base_source = entry.source;
    if (base_source.starts_with(kFittedPrefix)) {
      const size_t next = base_source.find("; ");
      base_source = next == std::string::npos ? "" : base_source.substr(next + 2);
    }
    FitKernelGroups(data, FamilyOf(*devices, data, base), "", options, entry, out, skipped);
    FitAllReduceRows(data, entry, options, out.rows, out.residuals);
    AddDerivedMemoryClass(entry);
    entry.basis = "fitted";
    entry.source = FittedSource(data, base.engine, base_source);
  }
  // Alternatives the engine can be configured to run: each fitted to its own rows only, kept
  // beside the default as kernels tagged with its name (rows the default pass skipped were
  // counted there).
  for (const std::string& name : AlternativeNames(base)) {
    std::map<std::string, size_t> counted_above;
    const std::vector<const Measurement*> alt_calls = FastestPerCall(
        files, [&](const Measurement& m) { return IsAlternative(m, base, name); });
    auto alt = CollectSamples(alt_calls, counted_above);
    if (!alt) return std::unexpected(alt.error());
    for (auto& [id, data] : *alt) {
      FitKernelGroups(data, FamilyOf(*alt, data, base), name, options,
                      EntryFor(out.profile, data.device.name), out, skipped);
    }
  }
  for (const auto& [reason, count] : skipped) {
    out.skipped.push_back(std::to_string(count) + " " + reason);
  }
  return out;
}

std::string ResidualsCsv(const Calibration& c) {
  std::string out = "origin,device,kernel,variant,measured_s,predicted_s,roofline_s\n";
  char numbers[96];
  for (const Residual& r : c.residuals) {
    std::snprintf(numbers, sizeof numbers, "%.6g,%.6g,%.6g\n", r.measured_s, r.predicted_s,
                  r.roofline_s);
    out += r.origin + ',' + r.device + ',' + r.kernel + ',' + r.variant + ',' + numbers;
  }
  return out;
}

std::string CalibrationTable(const Calibration& c) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %-18s %-26s %8s %6s %10s %10s %10s\n", "device",
                "kernel", "variant", "samples", "folds", "median", "p90", "roofline");
  out += line;
  std::snprintf(line, sizeof line, "%-14s %-18s %-26s %8s %6s %10s %10s %10s\n", "", "", "", "",
                "", "|error|", "|error|", "median");
  out += line;
  for (const FitRow& r : c.rows) {
    std::snprintf(line, sizeof line, "%-14s %-18s %-26s %8u %6u %9.1f%% %9.1f%% %9.1f%%\n",
                  r.device.c_str(), r.kernel.c_str(), r.variant.c_str(), r.stats.samples,
                  r.stats.folds, 100 * r.stats.median_abs_error, 100 * r.stats.p90_abs_error,
                  100 * r.roofline_median_abs_error);
    out += line;
  }
  return out;
}

}  // namespace opscope::predict
