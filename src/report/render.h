// Renderers: each reads a ReportModel and returns the whole document as a string.
#pragma once

#include <string>

#include "report/report_model.h"

namespace opscope::report {

struct TextStyle {
  bool color = false;  // ANSI colour (only on a terminal, never with NO_COLOR)
};

std::string RenderText(const ReportModel& model, const TextStyle& style = {});
// JSON schema_version 1, exactly DESIGN's field names; deterministic.
std::string RenderJson(const ReportModel& model);

}  // namespace opscope::report
