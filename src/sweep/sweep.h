// `opscope sweep llm`: one LLM over the grid recipe × device × deployment (tp × ep × pp) ×
// batch × context, each point the figures `opscope llm` prints for it — from step plans
// compiled once per recipe, device and deployment (one per pipeline stage; step_plan.h), or
// the full analysis where a plan gives a point up or --gen-len asks for whole requests.
// Deployments the model or device cannot take (heads not divisible by tp, ...) are skipped
// and listed in the report with the reason; a grid with none that can run is an error.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "device/device.h"
#include "import/hf_config/model_spec.h"
#include "llm/llm.h"
#include "report/sweep_report.h"
#include "support/error.h"

namespace opscope::sweep {

struct SweepSpec {
  std::string model_name;           // what the report calls the model
  std::string origin;               // the config's file or preset, for errors
  const import::hf::ModelSpec* model = nullptr;
  llm::Phase phase = llm::Phase::kDecode;
  std::vector<int64_t> batches;
  std::vector<int64_t> contexts;    // decode: cached tokens; prefill: prompt tokens
  std::vector<device::Device> devices;
  std::vector<std::optional<std::string>> weights;  // nullopt: the config's own
  std::optional<std::string> activations, kv_dtype, state_dtype;
  double mem_util = 0.9;
  std::optional<int64_t> gen_len;
  // Parallel degrees (empty: 1), swept as axes; the rest as `opscope llm` takes them.
  std::vector<int64_t> tps, eps, pps;
  std::optional<int64_t> dp_attention, gpus_per_node, micro_batches;
  // Threads that cost a large grid (0: the machine's cores, at most 8); the rows are the same
  // for any count.
  unsigned threads = 0;
};

// Called now and then with the points done and the total.
using Progress = std::function<void(uint64_t done, uint64_t total)>;

Result<report::SweepReport> RunSweep(const SweepSpec& spec, const Progress& progress = {});

}  // namespace opscope::sweep
