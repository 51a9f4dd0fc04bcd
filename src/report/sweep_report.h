// The plain-data report of a sweep (`opscope sweep llm`): one row per point of the grid
// recipe × device × batch × context, in that order (context fastest). Renderers only read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opscope::report {

struct SweepRow {
  uint32_t device = 0;  // index into SweepReport::devices
  uint32_t recipe = 0;  // index into SweepReport::recipes
  int64_t batch = 0;
  int64_t context = 0;  // decode: cached tokens per sequence; prefill: prompt tokens
  double step_time_s = 0;
  double tokens_per_s = 0;
  std::optional<double> tpot_s;  // decode: the step time, or the request's mean with --gen-len
  std::optional<double> ttft_s;  // prefill: the step time; decode with --gen-len: the prefill
  bool compute_bound = false;    // the step's time is mostly in compute-bound nodes
  uint64_t max_batch = 0;
  bool fits = false;
};

struct SweepReport {
  std::string model;
  std::string phase;  // "decode" | "prefill"
  std::vector<std::string> devices;  // ids
  std::vector<std::string> recipes;  // "weights/activations/kv"
  std::vector<SweepRow> rows;
  std::vector<std::string> assumptions;
  // How the points were costed (for the summary): compiled plan vs full analysis.
  uint64_t points_by_plan = 0, points_by_full_analysis = 0;
};

// CSV (RFC 4180, CRLF): model, device, recipe, phase, batch, context, step_time_s,
// tokens_per_s, tpot_s, ttft_s, bound, max_batch, fits. Absent values are empty fields.
std::string RenderSweepCsv(const SweepReport& report);
// {"schema_version": 1, "model", "phase", "points": [{...the CSV fields...}], "assumptions"}.
std::string RenderSweepJson(const SweepReport& report);
// Two charts, 1200×800 SVG: tokens/s vs batch (a line per context × device × recipe) and
// the serving trade-off, tokens/s per sequence vs total tokens/s.
std::string RenderSweepSvg(const SweepReport& report, bool standalone = true);
// One self-contained HTML file: summary, the charts, a sortable table of the points.
std::string RenderSweepHtml(const SweepReport& report);

}  // namespace opscope::report
