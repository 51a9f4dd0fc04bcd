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
// CSV (RFC 4180, CRLF records): a header, then one record per node in graph order with every
// field of the JSON node object; an absent intensity is an empty field.
std::string RenderCsv(const ReportModel& model);
// The roofline chart, SVG 1.1, 1200×800, self-contained. `standalone` adds the XML
// declaration; HTML inlines it without.
std::string RenderSvg(const ReportModel& model, bool standalone = true);
// One self-contained HTML file: summary, the roofline chart, sortable node table, by-op table,
// not-costed list, assumptions. No network.
std::string RenderHtml(const ReportModel& model);
// "llama-3.1-8b on h100-sxm — decode n=1, seqs=1, ctx=4096" (chart and page titles).
std::string ChartTitle(const ReportModel& model);

}  // namespace opscope::report
