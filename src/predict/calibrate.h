// `opscope calibrate`: fits an engine profile's device entries to measured kernel latencies.
//
// Measurements are grouped by device and by the kernel class and variant predictions would
// give them; where several implementations were measured for the same call (the calibration
// set times vLLM's CUTLASS, DeepGEMM and FlashInfer FP8 GEMMs, SGLang's FA3 and Triton
// attention, ...), the fastest counts, as an engine's kernel selection or autotuner would pick
// it, unless the base profile names the implementation the engine runs by default for that
// class and variant on the device (DeviceProfile::kernel_sources): then only its rows count
// (another engine's, where the rule names one), and the other rows are reported as skipped.
// Each group with enough samples is fitted (fit.h); all-reduce rows fit NCCL's ring from
// NCCL's own rows and the engine's custom one-shot / two-shot kernels from its rows, with the
// ring in the minimum. The result is the base profile with those device entries fitted;
// everything else (defaults, overheads, memory-class figures, public entries) is the base's.
#pragma once

#include <string>
#include <vector>

#include "predict/fit.h"
#include "predict/measurements.h"
#include "predict/profile.h"
#include "support/error.h"

namespace opscope::predict {

struct CalibrateOptions {
  FitOptions fit;
  size_t min_samples = 12;  // fewer measurements in a group: not fitted (reported)
};

// One fitted group, for the report and docs/accuracy.md.
struct FitRow {
  std::string device;
  std::string kernel;   // class name
  std::string variant;  // variant, or the algorithms of an all-reduce fit
  FitStats stats;       // held-out errors of the fitted parameters
  double roofline_median_abs_error = 0;  // the same samples at their roofline time
};

// One fitted measurement under the fitted parameters (opscope calibrate --residuals).
struct Residual {
  std::string origin;  // FILE:LINE of the measurement
  std::string device, kernel, variant;
  double measured_s = 0, predicted_s = 0, roofline_s = 0;
};

struct Calibration {
  EngineProfile profile;
  std::vector<FitRow> rows;
  std::vector<Residual> residuals;
  std::vector<std::string> skipped;  // rows not fitted, by reason, with counts
};

// Fits `base` (whose engine names the rows to use) to the measurements of `files`.
Result<Calibration> Calibrate(const std::vector<MeasurementFile>& files, const EngineProfile& base,
                              const CalibrateOptions& options);

// The per-class error table `opscope calibrate` prints.
std::string CalibrationTable(const Calibration& c);
// The residuals as CSV: origin,device,kernel,variant,measured_s,predicted_s,roofline_s.
std::string ResidualsCsv(const Calibration& c);

}  // namespace opscope::predict
