// Launch hints per serving engine (one table, hints.cc): the options that start an engine with
// a plan point's split and batch. Hints, not recipes: engines differ in what they accept by
// version, and the planner does not check them.
#pragma once

#include <string>
#include <string_view>

#include "plan/plan.h"

namespace opscope::plan {

// The engines hints exist for ("vllm, sglang, trtllm, llama.cpp").
std::string HintEngineNames();
bool KnownHintEngine(std::string_view engine);

// The launch hint of `point` for `engine` (a known one), the model as `model`, sequences of
// up to `context` tokens.
std::string LaunchHint(std::string_view engine, const PlanPoint& point, const std::string& model,
                       int64_t context);

// The `opscope llm` command(s) whose figures the point's are, with `--engine engine` (the
// roofline's too: `--engine roofline` predicts at the roofline, the estimate is llm's own),
// and `modes`, the serving options the plan was made with (" --lengths fixed",
// " --speculative mtp:N --acceptance R"), appended as given.
std::string ReproduceCommand(const PlanPoint& point, const std::string& model,
                             const std::string& device, int64_t isl, int64_t osl,
                             const std::string& engine, const std::string& modes = "");

}  // namespace opscope::plan
