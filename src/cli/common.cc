// Shared option handling and report output for the subcommands.
#include "cli/common.h"

#include <iostream>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <set>

#include "support/checked_math.h"
#include "support/file_io.h"

namespace opscope::cli {

void AddSpeculativeOptions(CLI::App& app, std::optional<std::string>& speculative,
                           std::optional<double>& acceptance, std::optional<std::string>& draft_model,
                           const std::string& what) {
  app.add_option("--speculative", speculative,
                 what + ": speculative decoding, mtp:N draft tokens from the model's MTP modules "
                        "or draft:N from --draft-model (opscope llm --speculative), the drafter's "
                        "memory in the fit");
  app.add_option("--acceptance", acceptance,
                 "With --speculative: probability each draft token is accepted, in [0, 1]");
  app.add_option("--draft-model", draft_model,
                 "With --speculative draft:N: the draft model (preset, config.json or model "
                 "folder; an EAGLE-3 head too), deployed once per deployment of the target");
}

void AddOutputOptions(CLI::App& app, OutputOptions& options) {
  app.add_option("--format", options.format, "Report format")
      ->check(CLI::IsMember(report::FormatNames(report::ReportFormats())))
      ->capture_default_str();
  app.add_option("--top", options.top, "Rows in the text report's top-N lists")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  app.add_option("-o,--output", options.output, "Write the report to FILE (default: stdout)");
  app.add_flag("--strict", options.strict,
               "Exit 1 when any node could not be costed (the report is still written)");
}

report::RenderOptions RenderOptionsFor(const std::string& output) {
  const char* no_color = std::getenv("NO_COLOR");
  report::RenderOptions options;
  options.color = output == "-" && ::isatty(STDOUT_FILENO) != 0 &&
                  (no_color == nullptr || no_color[0] == '\0');
  return options;
}

Result<int> EmitReport(const report::ReportModel& model, const OutputOptions& options) {
  if (auto ok = Emit(report::ReportFormats(), model, options.format, options.output); !ok) {
    return std::unexpected(ok.error());
  }
  // After the report is written: what the reader should not miss, on stderr too.
  for (const std::string& w : model.warnings) std::cerr << "opscope: warning: " << w << "\n";
  return options.strict && !model.not_costed.empty() ? 1 : 0;
}

void RefuseOutOfRangeIntegers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    const std::string type = option->get_type_name();
    if (type != "INT" && type != "UINT") continue;
    const bool is_unsigned = type == "UINT";
    option->check(CLI::Validator(
        [is_unsigned](std::string& text) -> std::string {
          // Only the range: other malformed text is CLI11's "could not convert".
          const char* first = text.data();
          const char* last = text.data() + text.size();
          std::from_chars_result r{};
          if (is_unsigned) {
            uint64_t v = 0;
            r = std::from_chars(first, last, v);
          } else {
            int64_t v = 0;
            r = std::from_chars(first, last, v);
          }
          if (r.ec == std::errc::result_out_of_range) {
            return "'" + text + "' is outside the " + (is_unsigned ? "unsigned " : "") +
                   "64-bit integer range";
          }
          return {};
        },
        "", "in range"));
  }
  for (CLI::App* sub : app.get_subcommands({})) RefuseOutOfRangeIntegers(*sub);
}

Result<std::vector<std::pair<std::string, int64_t>>> ParseDimOptions(
    const std::vector<std::string>& dims) {
  std::vector<std::pair<std::string, int64_t>> out;
  std::set<std::string> seen;
  for (const std::string& d : dims) {
    const size_t eq = d.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      return MakeError("option '--dim': expected NAME=VALUE, got '" + d + "'");
    }
    const std::string name = d.substr(0, eq);
    const std::string value = d.substr(eq + 1);
    auto v = ParseNonNegativeInt(value.data(), value.data() + value.size());
    if (!v) {
      return MakeError("option '--dim " + d + "': '" + value +
                       "' is not a non-negative integer that fits 64 bits");
    }
    if (!seen.insert(name).second) return MakeError("option '--dim': '" + name + "' given twice");
    out.emplace_back(name, *v);
  }
  return out;
}

}  // namespace opscope::cli
