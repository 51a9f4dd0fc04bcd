// The held-out end-to-end error of each engine's predictions (docs/accuracy.md), as the
// accuracy script computes it from tests/data/e2e_measurements.csv and writes it to
// data/engines/e2e_errors.csv (embedded at build time): predictions print it beside their
// figures. Never an input to a prediction or a fit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace opscope::predict {

struct EndToEndError {
  std::string engine;
  std::string device;  // a device id, or "*": all the engine's measured devices
  std::string metric;  // "tpot", "ttft", "e2e", "decode_tokens_per_s", "prefill_tokens_per_s"
  uint32_t runs = 0;
  double median_abs_error = 0;  // |predicted / measured − 1|
  double p90_abs_error = 0;
};

// The embedded table, in file order (empty if the file has no rows).
const std::vector<EndToEndError>& EndToEndErrors();

}  // namespace opscope::predict
