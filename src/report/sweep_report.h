// The plain-data report of a sweep (`opscope sweep llm`): one row per point of the grid
// recipe × device × deployment (tp × ep × pp) × batch × context, in that order (context
// fastest). Renderers only read it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace opscope::report {

// The parallel degrees of one deployment (all 1: one device).
struct SweepDeployment {
  int64_t tp = 1, ep = 1, pp = 1, dp_attention = 1;
  int64_t devices = 1;

  bool operator==(const SweepDeployment&) const = default;
};

struct SweepRow {
  uint32_t device = 0;      // index into SweepReport::devices
  uint32_t recipe = 0;      // index into SweepReport::recipes
  uint32_t deployment = 0;  // index into SweepReport::deployments
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
  std::vector<SweepDeployment> deployments;
  std::vector<SweepRow> rows;
  // Deployments of the grid the model or device cannot take (heads not divisible by tp, ...):
  // "tp 3, ep 1, pp 1 on h200: option '--tp': ...", in grid order. They have no rows.
  std::vector<std::string> skipped;
  std::vector<std::string> assumptions;
  // How the points were costed (for the summary): compiled plan vs full analysis.
  uint64_t points_by_plan = 0, points_by_full_analysis = 0;
};

// CSV (RFC 4180, CRLF): model, device, recipe, phase, tp, ep, pp, dp_attention, devices, batch,
// context, step_time_s, tokens_per_s, tpot_s, ttft_s, bound, max_batch, fits. Absent values
// are empty fields. A deployment's figures are the deployment's (tokens/s of all its devices;
// max_batch and fits per its busiest device's memory).
// `threads`: how many threads format a large sweep's rows (0: the machine's cores, at most 8);
// the text is the same for any count.
std::string RenderSweepCsv(const SweepReport& report, unsigned threads = 0);
// The same text in consecutive pieces, one per formatting thread, to write without joining.
std::vector<std::string> RenderSweepCsvParts(const SweepReport& report, unsigned threads = 0);
// {"schema_version": 1, "model", "phase", "points": [{...the CSV fields...}], "skipped",
// "assumptions"}.
std::string RenderSweepJson(const SweepReport& report);
// Two charts, 1200×800 SVG: tokens/s vs batch (a line per context × device × recipe) and
// the serving trade-off, tokens/s per sequence vs total tokens/s.
std::string RenderSweepSvg(const SweepReport& report, bool standalone = true);
// One self-contained HTML file: summary, the charts, a sortable table of the points.
std::string RenderSweepHtml(const SweepReport& report);

}  // namespace opscope::report
