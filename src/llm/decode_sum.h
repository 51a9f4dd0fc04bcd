// Σ of decode step times over a growing context (the whole request of --gen-len), without
// timing every step: one skeleton for one device and for a deployment's pipeline.
//
// Every node's bytes, FLOPs and link bytes are piecewise affine in the context: the range is
// bisected until the samples at a, a + 1 and b lie on one line (exact integer checks), and
// each such stretch is summed in closed form. Ranges of fewer than five steps are timed step
// by step. On one stretch:
//  * one device: the step is Σ over nodes of max(memory line, compute line), each node's max
//    summed in closed form (split where its two lines cross);
//  * a deployment: the step is PipelineStepTime of its stages' times, each the Σ over its
//    nodes of max(memory, compute, link lines); the stretch is cut where any node's lines
//    cross and where the slowest stage changes, and summed exactly between the cuts.
#pragma once

#include <cstdint>
#include <span>

#include "device/device.h"
#include "import/hf_config/step_graph.h"
#include "support/error.h"

namespace opscope::llm {

// Σ of one device's decode step times at batch B over contexts first, first + 1, ...,
// first + steps − 1 (0 when steps <= 0).
Result<double> SumDecodeSteps(const import::hf::StepGraph& step, const device::Device& device,
                              int64_t batch, int64_t first, int64_t steps);

// The same for a pipeline: each step is PipelineStepTime of the stages' decode times at
// `seqs` sequences (one device's share of a micro-batch) over `micro_batch_count`.
Result<double> SumPipelineDecodeSteps(std::span<const import::hf::StepGraph* const> stages,
                                      const device::Device& device, int64_t seqs,
                                      int64_t micro_batch_count, int64_t first, int64_t steps);

}  // namespace opscope::llm
