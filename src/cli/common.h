// Options and output handling shared by the subcommands.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "device/device.h"
#include "report/report_model.h"
#include "support/error.h"

namespace opscope::cli {

inline constexpr const char* kDefaultDevice = "h100-sxm";

struct OutputOptions {
  std::string format = "text";  // text | json | csv | svg | html
  int top = 10;
  std::string output = "-";     // -o FILE; "-" is stdout
  bool strict = false;
};

// Adds --format, --top, -o/--output and --strict.
void AddOutputOptions(CLI::App& app, OutputOptions& options);

// Renders the report in the chosen format and writes it atomically. Returns the exit status:
// 1 when --strict and some node was not costed, else 0.
Result<int> EmitReport(const report::ReportModel& model, const OutputOptions& options);

// CLI11 saturates an integer past its type's range instead of refusing it (--batch
// 99999999999999999999 became INT64_MAX, and the error then blamed a tensor): gives every
// integer option of `app` and its subcommands a check that refuses such values, naming the
// option.
void RefuseOutOfRangeIntegers(CLI::App& app);

// Parses repeated --dim NAME=VALUE (split at the last '='); VALUE a non-negative integer.
Result<std::vector<std::pair<std::string, int64_t>>> ParseDimOptions(
    const std::vector<std::string>& dims);

}  // namespace opscope::cli
