// The kernel model: one kernel's predicted time from its bytes, FLOPs, shape and a profile's
// parameters (docs/engines.md "Kernel model"). Pure arithmetic on precomputed inputs, shared
// by step predictions and the calibration fit, so a fitted parameter means the same thing in
// both.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "device/device.h"
#include "format/mma_class.h"
#include "predict/profile.h"

namespace opscope::predict {

// The shape a kernel class's tile and wave quantization reads; 0 where unknown (no
// quantization is then applied).
//   gemm           m rows, n output columns, k the reduction depth
//   grouped_gemm   m rows per active expert, n output columns, k the reduction depth,
//                  groups = active experts
//   *_decode       m = query rows per KV head (new tokens · heads per KV head),
//                  groups = sequences · KV heads, keys = cached + new tokens per sequence
//   *_prefill      m = new tokens per sequence, keys = cached tokens before them,
//                  groups = sequences · query heads, causal
struct KernelShape {
  double m = 0, n = 0;
  double k = 0;  // GEMM classes: the reduction depth K (0: unknown, no depth term)
  double groups = 1;
  double keys = 0;
  bool causal = true;
  // The share of the FLOPs the tiles pad (MLA: the attention itself, not the latent absorb or
  // expand GEMMs that run beside it); the rest run at full tile efficiency.
  double tiled_fraction = 1;
};

// Everything a kernel's time depends on, fixed before any parameter is chosen.
struct KernelInput {
  KernelClass cls = KernelClass::kNone;
  std::string variant;         // the profile variant the node asks for (before fallbacks)
  double bytes = 0;            // DRAM bytes (the ledger's bytes_read + bytes_written)
  double flops = 0;
  format::MmaClass mma_class = format::MmaClass::kNone;
  KernelShape shape;
  // Collectives: the ledger's ring link bytes, the group size, and the link's figures.
  double bytes_link = 0;
  int64_t group = 1;
  bool network = false;
};

// The device figures a prediction reads, looked up once.
struct DeviceRates {
  double dram_bytes_per_s = 0;
  std::array<double, format::kNumMmaClasses> peak_flops_per_s{};  // 0: the device has none
  double interconnect_bytes_per_s = 0;                              // 0: none
  double network_bytes_per_s = 0;
  double interconnect_latency_s = 0, network_latency_s = 0;
  int64_t compute_units = 0;  // SMs / CUs (the device's compute_units); 0: unknown
};
DeviceRates RatesOf(const device::Device& device);

// Tile and wave quantization of a kernel's shape under tiles tile_m × tile_n (both ≤ 1):
//   tile_eff = useful / padded work, wave_eff = tiles / (waves · compute units).
struct TileWave {
  double tile_eff = 1, wave_eff = 1;
  double waves = 0;  // ceil(tiles / compute units); 0 when either is unknown
};
TileWave TileAndWave(const KernelInput& in, int64_t tile_m, int64_t tile_n,
                     int64_t compute_units);

// The factor that divides the compute rate: tile_eff · wave_eff^wave_exponent.
double ShapeEfficiency(const TileWave& tw, const KernelParams& p);

// The share of a tile's time its K loop streams: K / (K + k_overhead) (1 when K is unknown
// or the parameter 0). See KernelParams::k_overhead.
double DepthEfficiency(double k, double k_overhead);

// Time of an MMA or memory kernel (KernelParams' formula). Never below the roofline time
// max(bytes / bandwidth, FLOPs / peak) of the same inputs.
double KernelTime(const KernelInput& in, const KernelParams& p, const DeviceRates& rates);

// The same with the shape's tiling already computed (it depends on the shape and the tiles
// only: callers that time one shape under many parameters cache it).
double KernelTimeWithShape(const KernelInput& in, const KernelParams& p, const DeviceRates& rates,
                           const TileWave& tw);

// Time of a collective with one algorithm's parameters; the link is the interconnect (or the
// network for a network-scope collective). Returns a negative value when the device has no
// figure for that link.
double CollectiveTime(const KernelInput& in, const CollectiveParams& p, const DeviceRates& rates);

// The least time any algorithm can take: the cheapest algorithm's traffic at the full link
// bandwidth, no latency (nvls for an all-reduce of more than two ranks).
double CollectiveFloorTime(const KernelInput& in, const DeviceRates& rates);

}  // namespace opscope::predict
