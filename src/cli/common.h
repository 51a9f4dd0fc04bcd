// Options and output handling shared by the subcommands.
#pragma once

#include <memory>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "report/formats.h"
#include "support/error.h"
#include "support/file_io.h"

namespace opscope::cli {

inline constexpr const char* kDefaultDevice = "h100-sxm";

struct OutputOptions {
  std::string format = "text";  // a row of report::ReportFormats()
  int top = 10;
  std::string output = "-";     // -o FILE; "-" is stdout
  bool strict = false;
};

// Adds --format (the names of report::ReportFormats()), --top, -o/--output and --strict.
void AddOutputOptions(CLI::App& app, OutputOptions& options);

// Adds --speculative (`what` it does here), --acceptance and --draft-model, as
// llm::ParseSpeculativeOptions reads them (opscope sweep llm, opscope plan).
void AddSpeculativeOptions(CLI::App& app, std::optional<std::string>& speculative,
                           std::optional<double>& acceptance, std::optional<std::string>& draft_model,
                           const std::string& what);

// What renderers may use of where the text goes: colour only on a terminal, never with
// NO_COLOR.
report::RenderOptions RenderOptionsFor(const std::string& output);

// Renders `document` in the format named `format` of `formats` and writes it atomically to
// `output` ("-": stdout).
template <typename Document>
Result<void> Emit(std::span<const report::Format<Document>> formats, const Document& document,
                  const std::string& format, const std::string& output) {
  const report::Format<Document>* f = report::FindFormat(formats, format);
  if (f == nullptr) return MakeError("option '--format': no format '" + format + "' here");
  const std::vector<std::string> pieces = f->render(document, RenderOptionsFor(output));
  const std::vector<std::string_view> views(pieces.begin(), pieces.end());
  return WriteFileAtomic(output, views);
}

// Emits an analysis or llm report. Returns the exit status: 1 when --strict and some node was
// not costed, else 0.
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
