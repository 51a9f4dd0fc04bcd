// The serving figures of one request (DESIGN's `llm` block and, on a deployment, its
// `parallel` block), as ServingFigures (serving.h) computes them: plain numbers that the
// report renders and a sweep copies into its rows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "llm/llm.h"

namespace opscope::llm {

// The recipe as reports print it: "q4_k_m (llama.cpp)", "bf16", ...
struct RecipeLabels {
  std::string weights, activations, kv, state;
};

// Per device: a deployment's busiest device (one device: the device itself).
struct DeviceFigures {
  uint64_t weight_bytes = 0;         // the device holding the most weights
  uint64_t kv_bytes_per_token = 0;   // full-attention KV of one of its sequences' tokens
  uint64_t state_bytes_per_seq = 0;
  uint64_t seqs = 0;                 // sequences one device holds (all micro-batches)
  double tokens_per_s = 0;           // the deployment's tokens/s over its devices
  int64_t micro_batches = 1;         // micro-batches the step runs
  int64_t busiest_stage = 0;         // the slowest stage: whose step the report's nodes show
  double bubble = 0;                 // pipeline idle share of the busiest device's step
  // From timing sources that give them (the full analysis does): the busiest device's
  // collectives in one step, and the step with communication overlapped (fused floors).
  std::optional<double> comm_time_s, step_floor_s;
};

struct Figures {
  Phase phase = Phase::kDecode;
  ModelFigures model;                 // the whole model under its recipe
  uint64_t kv_window_bytes_per_seq = 0;  // the whole model's, at the memory context
  double step_time_s = 0;
  double tokens_per_s = 0;
  std::optional<double> ttft_s;  // prefill; decode with --gen-len
  std::optional<double> e2e_s;   // with --gen-len
  std::optional<double> tpot_s;  // with --gen-len
  uint64_t max_batch = 0;
  bool fits = false;
  DeviceFigures per_device;
};

}  // namespace opscope::llm
