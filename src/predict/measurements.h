// Measured kernel latencies for calibration (docs/engines.md "Measurements").
//
// Two layouts, both comma-separated with a header row, no quoting:
//  * the calibration set's (data/calibration/, from NVIDIA's aiconfigurator perf database):
//    <gpu>/<engine>-<version>/<table>.csv, the table name giving the kernel (gemm,
//    attention_context, attention_generation, mla_context, mla_generation, moe,
//    comm_all_reduce, comm_custom_allreduce) and `latency` in milliseconds;
//  * your own: a `kernel` column naming the kernel per row (the same names, all_reduce for
//    both all-reduce tables) and one of `latency_s`, `latency_ms`, `latency_us`.
// Both use the calibration set's column names for shapes (m, n, k, gemm_dtype; batch_size,
// isl, step, num_heads, num_key_value_heads, head_dim, ...: the per-kernel lists are in
// measurements.cc and docs/engines.md). The device comes from a `device` column (an opscope
// device id), else --device, else the calibration set's <gpu> folder; the engine from an
// `engine` column, else the <engine>-<version> folder, else the engine being fitted.
//
// Rows engines do not run in a served step are skipped, and counted: all-reduce in eager mode
// (`*_eager` backends; served steps replay CUDA graphs), MoE with skewed routing
// (`power_law_*`: predictions assume uniform routing) and non-gated MoE kernels, NCCL int8.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"

namespace opscope::predict {

enum class MeasuredKernel : uint8_t {
  kGemm,
  kAttentionContext,
  kAttentionGeneration,
  kMlaContext,
  kMlaGeneration,
  kMoe,
  kAllReduce,
};
std::string_view MeasuredKernelName(MeasuredKernel k);

struct Measurement {
  MeasuredKernel kernel = MeasuredKernel::kGemm;
  std::string device;         // an opscope device id
  std::string engine;         // trtllm, vllm, sglang, nccl, or the engine being fitted
  std::string kernel_source;  // the implementation label, when the file has one
  std::string origin;         // "FILE:LINE"
  std::map<std::string, std::string, std::less<>> values;  // shape columns, verbatim
  double latency_s = 0;

  // A column's value: the text, or an integer (nullopt when absent or not an integer).
  std::optional<std::string_view> Text(std::string_view column) const;
  std::optional<int64_t> Int(std::string_view column) const;
};

struct MeasurementOptions {
  std::string engine;                 // the engine being fitted (rows with no engine of their own)
  std::optional<std::string> device;  // --device: rows with no device of their own, and a filter
  // Other engines whose rows are kept too: those the fitted profile's kernel_sources borrow
  // (Calibrate keeps only the named implementation of them).
  std::vector<std::string> also_engines;
};

struct MeasurementFile {
  std::vector<Measurement> rows;
  // Why rows or the whole file were left out: "12 rows: all-reduce in eager mode", ...
  std::vector<std::string> skipped;
};

// The calibration set's folder name of a GPU ("h100_sxm") as an opscope device id.
std::optional<std::string_view> DeviceOfGpuFolder(std::string_view folder);

// Parses one file. Errors (exit 2 in the CLI) name the file, line and column: a malformed
// header or row, a missing required column, a non-numeric shape or latency, a latency ≤ 0,
// an unknown kernel, a row whose device cannot be told.
Result<MeasurementFile> ParseMeasurements(std::string_view text, const std::string& path,
                                          const MeasurementOptions& options);
Result<MeasurementFile> ReadMeasurements(const std::string& path,
                                         const MeasurementOptions& options);

}  // namespace opscope::predict
