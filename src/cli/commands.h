// The subcommands of the opscope binary. Each file registers its options on the root app and
// returns the function that runs it; main.cc only dispatches.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "support/error.h"

namespace opscope::cli {

// Exit status of a successful run: 0, or 1 when --strict and the analysis is incomplete.
// Any Error is printed as "opscope: error: ..." and exits 2.
struct Command {
  CLI::App* app = nullptr;
  std::function<Result<int>()> run;
};

Command AddAnalyzeCommand(CLI::App& root);
Command AddDevicesCommand(CLI::App& root);
Command AddLlmCommand(CLI::App& root);
Command AddSweepCommand(CLI::App& root);  // `opscope sweep llm ...`
Command AddPlanCommand(CLI::App& root);   // `opscope plan MODEL ...`
Command AddCalibrateCommand(CLI::App& root);

}  // namespace opscope::cli
