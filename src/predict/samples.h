// A measurement as the kernels predictions see: the measured call is rebuilt as a small graph
// of DESIGN's op kinds (a Linear, a PagedAttention, MoE's ExpertGateUp + ExpertDown, an
// AllReduce) with the measured shapes and dtypes, costed by the same ledger and roofline as a
// step graph, and each node described by the same code as a prediction (StepPredictor::
// Describe). A fitted parameter therefore means the same thing in a fit and in a step.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "device/device.h"
#include "predict/kernel_model.h"
#include "predict/measurements.h"
#include "support/error.h"

namespace opscope::predict {

struct Sample {
  std::vector<KernelInput> parts;  // the kernels of the call (MoE: gate-up and down)
  double measured_s = 0;
  double roofline_s = 0;           // Σ of the parts' roofline times on the device
  std::string origin;              // the measurement's FILE:LINE
};

// Builds the sample of one measurement on `device`. nullopt with *why set when the row
// cannot be modelled (a dtype with no format, a shape whose dims do not fit a block format,
// a class the device has no peak for); an error only for a bug in the graph built here.
Result<std::optional<Sample>> MakeSample(const Measurement& m, const device::Device& device,
                                         std::string* why);

}  // namespace opscope::predict
