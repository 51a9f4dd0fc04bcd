// The kernel model's arithmetic (see kernel_model.h and docs/engines.md "Kernel model").
#include "predict/kernel_model.h"

#include <algorithm>
#include <cmath>

namespace opscope::predict {

using format::MmaClass;

DeviceRates RatesOf(const device::Device& device) {
  DeviceRates r;
  r.dram_bytes_per_s = device.dram_bytes_per_s;
  for (int i = 0; i < format::kNumMmaClasses; ++i) {
    r.peak_flops_per_s[i] = device.peak_flops_per_s[i].value_or(0.0);
  }
  r.interconnect_bytes_per_s = device.interconnect_bytes_per_s.value_or(0.0);
  r.network_bytes_per_s = device.network_bytes_per_s.value_or(0.0);
  r.interconnect_latency_s = device.interconnect_latency_s.value_or(0.0);
  r.network_latency_s = device.network_latency_s.value_or(0.0);
  r.compute_units = static_cast<int64_t>(device.compute_units.value_or(0));
  return r;
}

namespace {

double RoundUp(double x, double tile) { return std::ceil(x / tile) * tile; }

// The M tile a kernel picks for m rows: the smallest power of two ≥ m, at least the MMA
// atom's 16 rows, at most the profile's tile (libraries ship several M tiles and pick the
// smallest that covers m; small m never pays for a 128-row tile).
double TileM(double m, int64_t tile_m) {
  const auto tile = static_cast<double>(tile_m);
  if (tile <= 1) return 1;
  const double pow2 = std::exp2(std::ceil(std::log2(std::max(m, 1.0))));
  return std::min(tile, std::max(std::min(16.0, tile), pow2));
}

// tiles / (waves · units): the busy fraction of the last wave, spread over all waves.
double WaveEfficiency(double tiles, int64_t units) {
  if (units <= 0 || tiles <= 0) return 1;
  const auto u = static_cast<double>(units);
  return tiles / (std::ceil(tiles / u) * u);
}

struct Tiling {
  double tile_eff = 1;
  double tiles = 0;
};

// GEMM and grouped GEMM: m and n padded to their tiles, one tile per CTA.
Tiling GemmTiling(const KernelShape& s, int64_t tile_m, int64_t tile_n) {
  if (s.m <= 0 || s.n <= 0) return {};
  const double mt = TileM(s.m, tile_m);
  const double nt = static_cast<double>(std::max<int64_t>(tile_n, 1));
  const double m_pad = RoundUp(s.m, mt), n_pad = RoundUp(s.n, nt);
  return {s.m * s.n / (m_pad * n_pad), s.groups * (m_pad / mt) * (n_pad / nt)};
}

// Decode attention: the query rows sharing one KV head form the MMA's M side, padded to the
// M tile; CTAs = (sequence, KV head) pairs times the splits of the keys in tile_n chunks.
Tiling DecodeTiling(const KernelShape& s, int64_t tile_m, int64_t tile_n) {
  if (s.m <= 0) return {};
  const double mt = TileM(s.m, tile_m);
  const double splits =
      tile_n > 1 && s.keys > 0 ? std::ceil(s.keys / static_cast<double>(tile_n)) : 1;
  return {s.m / RoundUp(s.m, mt), s.groups * std::ceil(s.m / mt) * splits};
}

// Prefill attention: Br × Bc tiles (tile_m query rows, tile_n keys); a causal query tile
// computes every key tile up to its last row's keys.
Tiling PrefillTiling(const KernelShape& s, int64_t tile_m, int64_t tile_n) {
  const double t = s.m, keys = s.keys;
  if (t <= 0) return {};
  const double br = static_cast<double>(std::max<int64_t>(tile_m, 1));
  const double bc = static_cast<double>(std::max<int64_t>(tile_n, 1));
  const double nq = std::ceil(t / br);
  double useful = 0, padded = 0;
  if (s.causal) {
    useful = t * keys + t * (t + 1) / 2;  // T·P + T(T+1)/2, as the ledger counts
    // Σ over query tiles i = 1..nq of Br · roundup(P + i·Br, Bc); the rounding adds half a
    // key tile on average unless both P and Br are whole key tiles.
    const bool aligned = std::fmod(br, bc) == 0 && std::fmod(keys, bc) == 0;
    padded = br * (nq * keys + br * nq * (nq + 1) / 2) + (aligned ? 0 : br * nq * (bc - 1) / 2);
  } else {
    useful = t * (keys + t);
    padded = RoundUp(t, br) * RoundUp(keys + t, bc);
  }
  return {std::min(1.0, useful / padded), s.groups * nq};
}

}  // namespace

TileWave TileAndWave(const KernelInput& in, int64_t tile_m, int64_t tile_n,
                     int64_t compute_units) {
  Tiling tiling;
  switch (in.cls) {
    case KernelClass::kGemm:
    case KernelClass::kGroupedGemm: tiling = GemmTiling(in.shape, tile_m, tile_n); break;
    case KernelClass::kAttentionDecode:
    case KernelClass::kMlaDecode: tiling = DecodeTiling(in.shape, tile_m, tile_n); break;
    case KernelClass::kAttentionPrefill:
    case KernelClass::kMlaPrefill: tiling = PrefillTiling(in.shape, tile_m, tile_n); break;
    default: return {};
  }
  const double waves = tiling.tiles > 0 && compute_units > 0
                           ? std::ceil(tiling.tiles / static_cast<double>(compute_units))
                           : 0.0;
  // Only the tiled share of the FLOPs is padded: padded / useful = f / tile_eff + (1 − f).
  const double f = std::clamp(in.shape.tiled_fraction, 0.0, 1.0);
  tiling.tile_eff = 1.0 / (f / std::max(tiling.tile_eff, 1e-9) + (1.0 - f));
  return {std::clamp(tiling.tile_eff, 1e-6, 1.0),
          tiling.tiles > 0 ? WaveEfficiency(tiling.tiles, compute_units) : 1.0, waves};
}

double DepthEfficiency(double k, double k_overhead) {
  return k > 0 && k_overhead > 0 ? k / (k + k_overhead) : 1.0;
}

double ShapeEfficiency(const TileWave& tw, const KernelParams& p) {
  const double wave = p.wave_exponent > 0 ? std::pow(tw.wave_eff, p.wave_exponent) : 1.0;
  return std::clamp(tw.tile_eff * wave, 1e-6, 1.0);
}

double KernelTimeWithShape(const KernelInput& in, const KernelParams& p, const DeviceRates& rates,
                           const TileWave& tw) {
  const double shape_efficiency = ShapeEfficiency(tw, p);
  const double depth = DepthEfficiency(in.shape.k, p.k_overhead);
  const double memory_s = in.bytes / (p.bandwidth_efficiency * rates.dram_bytes_per_s);
  // As the roofline: an MMA operand's class, else the vector units.
  const MmaClass cls = in.mma_class != MmaClass::kNone ? in.mma_class : MmaClass::kFp32;
  const double peak = rates.peak_flops_per_s[static_cast<int>(cls)];
  const double compute_s =
      in.flops > 0 && peak > 0
          ? in.flops / (p.compute_efficiency * depth * shape_efficiency * peak)
          : 0.0;
  const double longer = std::max(memory_s, compute_s), shorter = std::min(memory_s, compute_s);
  const double waves_s = tw.waves * p.wave_latency_s;
  return p.overhead_s + std::max(longer, waves_s) + (1.0 - p.overlap) * shorter;
}

double KernelTime(const KernelInput& in, const KernelParams& p, const DeviceRates& rates) {
  return KernelTimeWithShape(in, p, rates, TileAndWave(in, p.tile_m, p.tile_n, rates.compute_units));
}

double CollectiveTime(const KernelInput& in, const CollectiveParams& p, const DeviceRates& rates) {
  if (in.group <= 1) return 0.0;
  const double link = in.network ? rates.network_bytes_per_s : rates.interconnect_bytes_per_s;
  if (link <= 0) return -1.0;
  return p.latency_s + p.latency_per_peer_s * static_cast<double>(in.group - 1) +
         AlgorithmTrafficFactor(p.algorithm, in.group) * in.bytes_link /
             (p.bandwidth_efficiency * link);
}

double CollectiveFloorTime(const KernelInput& in, const DeviceRates& rates) {
  if (in.group <= 1) return 0.0;
  const double link = in.network ? rates.network_bytes_per_s : rates.interconnect_bytes_per_s;
  if (link <= 0) return 0.0;
  double factor = 1.0;
  if (in.cls == KernelClass::kAllReduce) {
    for (Algorithm a : {Algorithm::kRing, Algorithm::kTwoShot, Algorithm::kOneShot,
                        Algorithm::kNvls}) {
      factor = std::min(factor, AlgorithmTrafficFactor(a, in.group));
    }
  }
  return factor * in.bytes_link / link;
}

}  // namespace opscope::predict
