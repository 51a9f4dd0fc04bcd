// The text report: totals in human units, the top nodes by time and by traffic (identical
// repeated layers grouped; the traffic table only when it differs), traffic by op kind, the
// memory/compute split, what was not costed and why, and the assumptions.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "report/deployment_lines.h"
#include "report/node_groups.h"
#include "report/render.h"
#include "support/human_units.h"

namespace opscope::report {
namespace {

class Text {
 public:
  explicit Text(const TextStyle& style) : style_(style) {}

  void Line(const std::string& s = "") {
    out_ += s;
    out_ += '\n';
  }
  std::string Bold(const std::string& s) const {
    return style_.color ? "\x1b[1m" + s + "\x1b[0m" : s;
  }
  std::string Dim(const std::string& s) const {
    return style_.color ? "\x1b[2m" + s + "\x1b[0m" : s;
  }
  std::string& out() { return out_; }

 private:
  const TextStyle& style_;
  std::string out_;
};

std::string Pad(std::string s, size_t width, bool right) {
  if (s.size() >= width) return s;
  const std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

std::string Percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string Intensity(const NodeRow& n) {
  return n.intensity ? Fixed(*n.intensity, 2) : "-";
}

// Whether any node sends link bytes (a deployment's collectives): the tables add a link column.
bool HasLinks(const ReportModel& m) { return m.totals.bytes_link > 0; }

// One table of node groups: time, traffic, (link bytes,) FLOPs, intensity, bound, class, op
// and name ("×58" after a group of identical layers, whose figures are summed).
void NodeTable(Text& t, const ReportModel& m, const std::vector<NodeGroup>& groups,
               const std::vector<size_t>& rows) {
  const bool links = HasLinks(m);
  t.Line(t.Dim("  " + Pad("time", 10, true) + Pad("share", 8, true) + Pad("bytes", 11, true) +
               (links ? Pad("link", 11, true) : "") + Pad("FLOPs", 13, true) +
               Pad("FLOP/B", 10, true) + "  " + Pad("bound", 8, false) + Pad("class", 6, false) +
               Pad("op", 16, false) + "name"));
  for (size_t i : rows) {
    const NodeGroup& g = groups[i];
    const NodeRow& n = g.first(m.nodes);
    const std::string op = n.source_op.empty() || n.source_op == n.op
                               ? n.op
                               : n.op + "(" + n.source_op + ")";
    const std::string count =
        g.nodes.size() > 1 ? " \xc3\x97" + std::to_string(g.nodes.size()) : "";  // ×58
    t.Line("  " + Pad(HumanSeconds(g.time_s), 10, true) +
           Pad(Percent(g.time_s, m.totals.time_s), 8, true) +
           Pad(HumanBytes(static_cast<double>(g.bytes)), 11, true) +
           (links ? Pad(n.link.empty() ? "-" : HumanBytes(static_cast<double>(g.bytes_link)), 11,
                        true)
                  : "") +
           Pad(HumanFlops(static_cast<double>(g.flops)), 13, true) + Pad(Intensity(n), 10, true) +
           "  " + Pad(n.bound, 8, false) + Pad(n.mma_class, 6, false) + Pad(op, 16, false) +
           g.name + count);
  }
}

// The n groups with the largest key, ties broken by graph order.
template <typename Key>
std::vector<size_t> TopRows(const std::vector<NodeGroup>& groups, int n, Key key) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < groups.size(); ++i) {
    if (key(groups[i]) > 0) idx.push_back(i);
  }
  const size_t k = std::min(idx.size(), static_cast<size_t>(std::max(n, 0)));
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                    [&](size_t a, size_t b) {
                      const auto ka = key(groups[a]), kb = key(groups[b]);
                      return ka != kb ? ka > kb : a < b;
                    });
  idx.resize(k);
  return idx;
}

// The top tables: by time, then by traffic unless it lists the same rows.
void TopTables(Text& t, const ReportModel& m) {
  const std::vector<NodeGroup> groups = GroupIdenticalNodes(m.nodes);
  const auto by_time = TopRows(groups, m.top_n, [](const NodeGroup& g) { return g.time_s; });
  const auto by_bytes = TopRows(groups, m.top_n, [](const NodeGroup& g) { return g.bytes; });
  bool grouped = false;
  for (size_t i : by_time) grouped = grouped || groups[i].nodes.size() > 1;
  for (size_t i : by_bytes) grouped = grouped || groups[i].nodes.size() > 1;
  const std::string note = grouped ? " (identical layers as one row, their figures summed)" : "";
  const bool same = by_time == by_bytes;
  if (!by_time.empty()) {
    t.Line();
    t.Line(t.Bold("top " + std::to_string(by_time.size()) + " nodes by time" +
                  (same ? " and by traffic" : "")) + note);
    NodeTable(t, m, groups, by_time);
  }
  if (!by_bytes.empty() && !same) {
    t.Line();
    t.Line(t.Bold("top " + std::to_string(by_bytes.size()) + " nodes by traffic") + note);
    NodeTable(t, m, groups, by_bytes);
  }
}

void Serving(Text& t, const LlmSection& section) {
  const llm::Figures& l = section.figures;
  const llm::RecipeLabels& recipe = section.recipe;
  t.Line(t.Bold("serving (" + std::string(llm::PhaseName(l.phase)) + ")"));
  t.Line("  recipe           weights " + recipe.weights + ", activations " + recipe.activations +
         ", KV cache " + recipe.kv + ", recurrent state " + recipe.state);
  t.Line("  parameters       " + HumanCount(static_cast<double>(l.model.params_total)) +
         " total, " + HumanCount(static_cast<double>(l.model.params_active)) +
         " active per token, " + HumanCount(static_cast<double>(l.model.params_embedding)) +
         " embedding");
  t.Line("  weights stored   " + HumanBytes(static_cast<double>(l.model.weight_bytes)));
  t.Line("  KV cache         " + HumanBytes(static_cast<double>(l.model.kv_bytes_per_token)) +
         " per token (full-attention layers); windowed KV per sequence " +
         HumanBytes(static_cast<double>(l.kv_window_bytes_per_seq)));
  t.Line("  recurrent state  " + HumanBytes(static_cast<double>(l.model.state_bytes_per_seq)) +
         " per sequence");
  t.Line("  step time        " + HumanSeconds(l.step_time_s) + "   " +
         Fixed(l.tokens_per_s, 1) + " tokens/s");
  if (l.ttft_s) t.Line("  time to first token " + HumanSeconds(*l.ttft_s));
  if (l.e2e_s) t.Line("  whole request    " + HumanSeconds(*l.e2e_s));
  if (l.tpot_s) t.Line("  time per output token " + HumanSeconds(*l.tpot_s));
  t.Line("  memory fit       max batch " + std::to_string(l.max_batch) + " at this context; " +
         (l.fits ? "fits" : "does NOT fit"));
}

std::string Share(double fraction) { return Percent(fraction, 1.0); }

// "gemm bf16 6.4% median / 23.6% p90 (81% of the step)" per dominant class.
std::string KernelErrors(const llm::Predicted& p) {
  std::string out;
  for (const llm::KernelClassError& e : p.kernel_errors) {
    out += (out.empty() ? "" : "; ") + e.kernel_class + " " + e.variant + " ";
    out += e.samples > 0 ? Share(e.median_abs_error) + " median / " + Share(e.p90_abs_error) + " p90"
                         : "no held-out error (" + e.basis + " parameters)";
    // A family member's parameters were fitted on another device: their error is that fit's.
    if (e.samples > 0 && e.basis == "derived") out += " on the family's fitted device";
    out += " (" + Share(e.share) + " of the step)";
  }
  return out;
}

std::string EndToEndErrors(const llm::Predicted& p) {
  std::string out;
  for (const llm::EndToEndErrorFigure& e : p.end_to_end_errors) {
    out += (out.empty() ? "" : "; ") + e.metric + " " + Share(e.median_abs_error) +
           " median over " + std::to_string(e.runs) + (e.runs == 1 ? " run (" : " runs (") +
           e.scope + ")";
  }
  return out;
}

std::string Floor(const std::optional<double>& floor_s) {
  return floor_s ? "   (floor " + HumanSeconds(*floor_s) + ")" : "";
}

// How the requests share the engine (with --gen-len).
void Dynamics(Text& t, const llm::PredictedDynamics& d) {
  const llm::DynamicsFigures& f = d.figures;
  std::string line = "  batching         " + std::to_string(d.concurrency) +
                     (d.concurrency == 1 ? " request" : " requests") + " in flight, " +
                     Fixed(f.decode_seqs, 1) + " sequences per decode step";
  if (d.mode == "disaggregated") {
    line += " per decode worker; " + std::to_string(d.prefill_workers) + " prefill and " +
            std::to_string(d.decode_workers) + " decode workers, KV transfer " +
            HumanSeconds(f.kv_transfer_s);
  } else {
    line += "; " +
            (d.chunk_tokens > 0 ? "prompt chunks of " + std::to_string(d.chunk_tokens) + " tokens"
                                : std::string("whole prompts")) +
            " add " + HumanSeconds(f.interference_s) + " per output token";
    if (d.lengths == "fixed") {
      line += "; fixed lengths: requests move in groups of " + Fixed(f.group_size, 1);
    }
  }
  t.Line(line);
  t.Line("  time to first    " + HumanSeconds(f.queue_s) + " waiting (running step and queue), " +
         HumanSeconds(f.prefill_s) + " prefill" +
         (f.request_s > 0 ? ", " + HumanSeconds(f.request_s) + " request path" : std::string()));
  if (!d.speculative.empty()) {
    t.Line("  speculative      " + d.speculative + ": " + Fixed(d.tokens_per_step, 2) +
           " tokens per decode step, " + HumanSeconds(d.draft_s) + " of it drafting");
  }
}

// llm.predicted: the engine's figures beside the roofline estimate and the floor.
void Predicted(Text& t, const LlmSection& section) {
  const llm::Predicted& p = *section.predicted;
  const llm::Figures& l = section.figures;
  t.Line(t.Bold("predicted (engine " + p.engine + ": " + p.why + "; " + p.basis + ")"));
  const double floor_s = l.per_device.step_floor_s.value_or(0);
  t.Line("  step time        " + HumanSeconds(p.step_time_s) + "   (roofline estimate " +
         HumanSeconds(l.step_time_s) + ", floor " + HumanSeconds(floor_s) + ")");
  if (p.ttft_s) t.Line("  time to first token " + HumanSeconds(*p.ttft_s) + Floor(p.ttft_floor_s));
  if (p.tpot_s) t.Line("  time per output token " + HumanSeconds(*p.tpot_s) + Floor(p.tpot_floor_s));
  if (p.e2e_s) t.Line("  whole request    " + HumanSeconds(*p.e2e_s));
  t.Line("  throughput       " + Fixed(p.tokens_per_s, 1) + " tokens/s");
  // A batch memory cannot hold is not a run the engine would make: say so next to its figures.
  // With a drafter its weights and KV share the devices: the fit is the one with them.
  if (p.dynamics && p.dynamics->drafter_memory) {
    const llm::DrafterMemory& m = *p.dynamics->drafter_memory;
    const bool disaggregated = p.dynamics->mode == "disaggregated";
    t.Line("  memory fit       max batch " + std::to_string(m.max_batch) +
           (disaggregated ? " on a decode worker" : "") + " with the drafter (" +
           HumanBytes(static_cast<double>(m.weight_bytes)) + " weights, " +
           HumanBytes(static_cast<double>(m.bytes_per_seq)) + " KV per sequence per device); " +
           (m.fits ? "fits" : "does NOT fit: the figures are of a run the devices cannot hold"));
  } else if (!l.fits) {
    t.Line("  memory fit       does NOT fit (max batch " + std::to_string(l.max_batch) +
           " at this context): the figures are of a run the devices cannot hold");
  }
  if (p.dynamics) Dynamics(t, *p.dynamics);
  const std::string kernels = KernelErrors(p);
  if (!kernels.empty()) t.Line("  kernel fit error " + kernels);
  const std::string e2e = EndToEndErrors(p);
  t.Line("  end-to-end error " + (e2e.empty() ? std::string("no held-out measurement for this engine")
                                               : e2e));
}

// Multi-device deployments: the split, per-device memory and the deployment's figures.
void Parallel(Text& t, const ReportModel& m) {
  t.Line(t.Bold(DeploymentHeading(*m.deployment)));
  for (const LabelledLine& line : DeploymentLines(m)) t.Line("  " + Pad(line.label, 17, false) + line.value);
}

}  // namespace

std::string RenderText(const ReportModel& m, const TextStyle& style) {
  Text t(style);
  const roofline::Totals& tot = m.totals;
  const double bytes = static_cast<double>(tot.bytes());
  const std::string workload = WorkloadText(m);
  t.Line(t.Bold("opscope: " + m.model) + " on " + m.device.name +
         (m.device.description.empty() ? "" : " (" + m.device.description + ")"));
  t.Line("  device           " + HumanRate(m.device.dram_bytes_per_s, "B") + " DRAM, " +
         HumanBytes(m.device.memory_bytes) + " memory");
  if (!workload.empty()) t.Line("  workload         " + workload);
  t.Line("  nodes            " + std::to_string(tot.nodes) + " (" +
         std::to_string(tot.nodes_costed) + " costed)");
  if (!m.partial.empty()) t.Line("  " + t.Bold(m.partial));
  t.Line();
  t.Line(t.Bold("totals"));
  t.Line("  time (sum of op rooflines)  " + HumanSeconds(tot.time_s));
  t.Line("  fused floor                 " + HumanSeconds(tot.fused_floor_s) + " (bound by " +
         m.floor_bound + "; fusion headroom " +
         (tot.fused_floor_s > 0 ? Fixed(tot.time_s / tot.fused_floor_s, 2) + "x" : "-") + ")");
  t.Line("  bytes moved (lower bound)   " + HumanBytes(bytes) + " (read " +
         HumanBytes(static_cast<double>(tot.bytes_read)) + ", written " +
         HumanBytes(static_cast<double>(tot.bytes_written)) + ")");
  t.Line("    of which weights          " + HumanBytes(static_cast<double>(tot.bytes_weights)) +
         " (" + Percent(static_cast<double>(tot.bytes_weights), bytes) + ")");
  for (const auto& [label, part] : {std::pair<const char*, uint64_t>{"KV cache", m.state.kv_cache},
                                    {"recurrent state", m.state.recurrent},
                                    {"other state", m.state.other}}) {
    if (part == 0) continue;
    t.Line("    of which " + Pad(label, 17, false) + HumanBytes(static_cast<double>(part)) + " (" +
           Percent(static_cast<double>(part), bytes) + ")");
  }
  t.Line("  FLOPs                       " + HumanFlops(static_cast<double>(tot.flops)));
  t.Line("  intensity                   " + Fixed(tot.intensity(), 2) + " FLOP/B");
  t.Line("  memory-bound traffic        " +
         HumanBytes(static_cast<double>(tot.memory_bound_bytes)) + " (" +
         Percent(static_cast<double>(tot.memory_bound_bytes), bytes) + "), compute-bound " +
         HumanBytes(static_cast<double>(tot.compute_bound_bytes)) + " (" +
         Percent(static_cast<double>(tot.compute_bound_bytes), bytes) + ")");
  std::string ridges;
  for (const roofline::Ridge& r : m.ridges) {
    ridges += (ridges.empty() ? "" : ", ") + std::string(format::MmaClassName(r.mma_class)) +
              " " + Fixed(r.flops_per_byte, 0);
  }
  t.Line("  ridge points (FLOP/B)       " + (ridges.empty() ? "-" : ridges));
  if (m.llm) {
    t.Line();
    Serving(t, *m.llm);
    if (m.llm->predicted) {
      t.Line();
      Predicted(t, *m.llm);
    }
    if (m.deployment) {
      t.Line();
      Parallel(t, m);
    }
  }

  TopTables(t, m);
  if (!m.by_op.empty()) {
    const bool links = HasLinks(m);
    t.Line();
    t.Line(t.Bold("by op kind"));
    t.Line(t.Dim("  " + Pad("bytes", 11, true) + Pad("share", 8, true) +
                 (links ? Pad("link", 11, true) : "") + Pad("FLOPs", 13, true) +
                 Pad("time", 10, true) + Pad("count", 9, true) + "  op"));
    for (const ByOpRow& b : m.by_op) {
      t.Line("  " + Pad(HumanBytes(static_cast<double>(b.bytes)), 11, true) +
             Pad(Percent(static_cast<double>(b.bytes), bytes), 8, true) +
             (links ? Pad(b.bytes_link > 0 ? HumanBytes(static_cast<double>(b.bytes_link)) : "-",
                          11, true)
                    : "") +
             Pad(HumanFlops(static_cast<double>(b.flops)), 13, true) +
             Pad(HumanSeconds(b.time_s), 10, true) + Pad(std::to_string(b.count), 9, true) +
             "  " + b.op);
    }
  }
  if (!m.not_costed.empty()) {
    t.Line();
    t.Line(t.Bold("not costed (" + std::to_string(m.not_costed.size()) + ")"));
    for (const NotCosted& n : m.not_costed) {
      t.Line("  " + n.name + " (" + n.op + "): " + n.reason);
    }
  }
  if (!m.no_flop_model.empty()) {
    t.Line();
    std::string ops;
    for (const std::string& op : m.no_flop_model) ops += (ops.empty() ? "" : ", ") + op;
    t.Line(t.Bold("no FLOP model") + " (bytes counted, FLOPs reported as 0): " + ops);
  }
  if (!m.assumptions.empty()) {
    t.Line();
    t.Line(t.Bold("assumptions"));
    for (const std::string& a : m.assumptions) t.Line("  - " + a);
  }
  return std::move(t.out());
}

}  // namespace opscope::report
