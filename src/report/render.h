// Renderers: each reads a ReportModel and returns the whole document as a string.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "llm/model.h"
#include "plan/plan.h"
#include "report/report_model.h"
#include "sweep/sweep.h"

namespace opscope::report {

struct TextStyle {
  bool color = false;  // ANSI colour (only on a terminal, never with NO_COLOR)
};

std::string RenderText(const ReportModel& model, const TextStyle& style = {});
// JSON schema_version 1, exactly DESIGN's field names; deterministic.
std::string RenderJson(const ReportModel& model);
// CSV (RFC 4180 quoting, LF records): a header, then one record per node in graph order with every
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

// ---- Listings --------------------------------------------------------------------------------

// `opscope devices`: a table of the devices' memory, bandwidth and dense peaks, or
// {"devices": [{"name", "memory_bytes", "dram_bytes_per_s", "peak_flops_per_s": {...}, ...}]}.
std::string RenderDevicesText(std::span<const device::Device> devices);
std::string RenderDevicesJson(std::span<const device::Device> devices);
// `opscope llm --list`: one line per preset (name, model_type, layers), or
// {"presets": [{"name", "model_type", "layers", "reconstructed"}, ...]}, one preset a line.
std::string RenderPresetsText(std::span<const llm::PresetInfo> presets);
std::string RenderPresetsJson(std::span<const llm::PresetInfo> presets);

// ---- Sweeps (`opscope sweep llm`): one record per point of a sweep::SweepResult ------------

// CSV (RFC 4180 quoting, LF records): model, device, recipe, phase, tp, ep, pp, dp_attention, devices, batch,
// context, step_time_s, tokens_per_s, tpot_s, ttft_s, bound, max_batch, fits. Absent values
// are empty fields. A deployment's figures are the deployment's (tokens/s of all its devices;
// max_batch and fits per its busiest device's memory).
// `threads`: how many threads format a large sweep's rows (0: the machine's cores, at most 8);
// the text is the same for any count.
std::string RenderSweepCsv(const sweep::SweepResult& result, unsigned threads = 0);
// The same text in consecutive pieces, one per formatting thread, to write without joining.
std::vector<std::string> RenderSweepCsvParts(const sweep::SweepResult& result, unsigned threads = 0);
// {"schema_version": 1, "model", "phase", "points": [{...the CSV fields...}], "skipped",
// "assumptions"}.
std::string RenderSweepJson(const sweep::SweepResult& result);
// Two charts, 1200×800 SVG: tokens/s vs batch (a line per context × device × recipe) and
// the serving trade-off, tokens/s per sequence vs total tokens/s.
std::string RenderSweepSvg(const sweep::SweepResult& result, bool standalone = true);
// One self-contained HTML file: summary, the charts, a sortable table of the points.
std::string RenderSweepHtml(const sweep::SweepResult& result);

// ---- Plans (`opscope plan`): the front of a plan::PlanResult -------------------------------

// A text table of the front (the best point starred), the best point's launch hint and
// reproducing command, the rate sizing, and where prices and power come from.
std::string RenderPlanText(const plan::PlanResult& result);
// {"schema_version": 1, "plan": {"model", "device", "gpus", "isl", "osl", "targets", "engine",
// "estimate", "front": [...], "best", "min_gpus_for_rate", "searched", "skipped", ...}}.
std::string RenderPlanJson(const plan::PlanResult& result);
// CSV (RFC 4180, CRLF): one record per front point.
std::string RenderPlanCsv(const plan::PlanResult& result);
// The interactive offline page: the front charted, sliders for ISL, OSL, the targets and the
// device count that recompute it from the embedded grid, the sortable table.
std::string RenderPlanHtml(const plan::PlanResult& result);
// "8 x (tp1, batch 64)" / "2P (tp8, batch 4) + 6D (tp8, batch 128)".
std::string PlanConfigLabel(const plan::PlanPoint& point);
// "TTFT <= 2.00 s, TPOT <= 50.0 ms".
std::string PlanTargetsText(const plan::PlanResult& result);
// "MTP speculative decoding (--speculative mtp:1 --acceptance 0.8)", or "speculative decoding
// (... --draft-model M)" with a draft model; empty without --speculative.
std::string PlanSpeculativeText(const plan::PlanResult& result);

}  // namespace opscope::report
