// The text report: totals in human units, the top nodes by time and by traffic, traffic by
// op kind, the memory/compute split, what was not costed and why, and the assumptions.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

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

// One table of nodes: time, traffic, FLOPs, intensity, bound, class, op and name.
void NodeTable(Text& t, const ReportModel& m, const std::vector<size_t>& rows) {
  t.Line(t.Dim("  " + Pad("time", 10, true) + Pad("share", 8, true) + Pad("bytes", 11, true) +
               Pad("FLOPs", 13, true) + Pad("FLOP/B", 10, true) + "  " + Pad("bound", 8, false) +
               Pad("class", 6, false) + Pad("op", 16, false) + "name"));
  for (size_t i : rows) {
    const NodeRow& n = m.nodes[i];
    const std::string op = n.source_op.empty() || n.source_op == n.op
                               ? n.op
                               : n.op + "(" + n.source_op + ")";
    t.Line("  " + Pad(HumanSeconds(n.time_s), 10, true) +
           Pad(Percent(n.time_s, m.totals.time_s), 8, true) +
           Pad(HumanBytes(static_cast<double>(n.bytes())), 11, true) +
           Pad(HumanFlops(static_cast<double>(n.flops)), 13, true) +
           Pad(Intensity(n), 10, true) + "  " + Pad(n.bound, 8, false) +
           Pad(n.mma_class, 6, false) + Pad(op, 16, false) + n.name);
  }
}

// The n rows with the largest key, ties broken by graph order.
template <typename Key>
std::vector<size_t> TopRows(const ReportModel& m, int n, Key key) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    if (m.nodes[i].costed && key(m.nodes[i]) > 0) idx.push_back(i);
  }
  const size_t k = std::min(idx.size(), static_cast<size_t>(std::max(n, 0)));
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                    [&](size_t a, size_t b) {
                      const auto ka = key(m.nodes[a]), kb = key(m.nodes[b]);
                      return ka != kb ? ka > kb : a < b;
                    });
  idx.resize(k);
  return idx;
}

void Serving(Text& t, const LlmSection& section) {
  const llm::Figures& l = section.figures;
  const llm::RecipeLabels& recipe = section.recipe;
  t.Line(t.Bold("serving (" + std::string(llm::PhaseName(l.phase)) + ")"));
  t.Line("  recipe           weights " + recipe.weights + ", activations " + recipe.activations +
         ", KV " + recipe.kv + ", state " + recipe.state);
  t.Line("  parameters       " + HumanCount(static_cast<double>(l.model.params_total)) +
         " total, " + HumanCount(static_cast<double>(l.model.params_active)) +
         " active per token, " + HumanCount(static_cast<double>(l.model.params_embedding)) +
         " embedding");
  t.Line("  weights stored   " + HumanBytes(static_cast<double>(l.model.weight_bytes)));
  t.Line("  KV per token     " + HumanBytes(static_cast<double>(l.model.kv_bytes_per_token)) +
         " (full-attention layers); windowed KV per sequence " +
         HumanBytes(static_cast<double>(l.kv_window_bytes_per_seq)));
  t.Line("  state per seq    " + HumanBytes(static_cast<double>(l.model.state_bytes_per_seq)));
  t.Line("  step time        " + HumanSeconds(l.step_time_s) + "   " +
         Fixed(l.tokens_per_s, 1) + " tokens/s");
  if (l.ttft_s) t.Line("  time to first token " + HumanSeconds(*l.ttft_s));
  if (l.e2e_s) t.Line("  whole request    " + HumanSeconds(*l.e2e_s));
  if (l.tpot_s) t.Line("  time per output token " + HumanSeconds(*l.tpot_s));
  t.Line("  memory fit       max batch " + std::to_string(l.max_batch) + " at this context; " +
         (l.fits ? "fits" : "does NOT fit"));
}

std::string LinkName(const std::string& scope) {
  return scope == "node" ? "interconnect" : "network";
}

// "tensor-parallel over the interconnect, stage hand-offs over the network": the groups the
// deployment has.
std::string Links(const llm::Deployment& d) {
  std::string links;
  auto add = [&](const std::string& what, const std::string& scope) {
    links += (links.empty() ? "" : ", ") + what + " over the " + LinkName(scope);
  };
  if (d.tp > 1) add("tensor-parallel", d.tp_scope);
  if (d.ep > 1) add("expert all-to-all", d.moe_scope);
  if (d.pp > 1) add("stage hand-offs", d.pp_scope);
  return links;
}

// Multi-device deployments: the split, per-device memory and the deployment's figures.
void Parallel(Text& t, const llm::Deployment& d, const llm::Figures& l) {
  const llm::DeviceFigures& p = l.per_device;
  t.Line(t.Bold("deployment (" + std::to_string(d.devices) + " devices)"));
  std::string split = "  split            tp " + std::to_string(d.tp) + ", ep " +
                      std::to_string(d.ep) + ", pp " + std::to_string(d.pp) + ", dp-attention " +
                      std::to_string(d.dp_attention) + "; " + std::to_string(d.gpus_per_node) +
                      " per node";
  if (d.ep > 1 && d.expert_tp > 1) split += "; each expert split " + std::to_string(d.expert_tp) + " ways";
  t.Line(split);
  const std::string links = Links(d);
  if (!links.empty()) t.Line("  links            " + links);
  t.Line("  per device       weights " + HumanBytes(static_cast<double>(p.weight_bytes)) +
         ", KV per token " + HumanBytes(static_cast<double>(p.kv_bytes_per_token)) +
         ", state per seq " + HumanBytes(static_cast<double>(p.state_bytes_per_seq)) +
         ", " + std::to_string(p.seqs) + " sequences");
  const double step = l.step_time_s;
  if (p.step_floor_s) {
    t.Line("  step time        " + HumanSeconds(step) + " (communication not overlapped); floor " +
           HumanSeconds(*p.step_floor_s) + " (overlapped)");
  }
  if (p.comm_time_s) {
    t.Line("  communication    " + HumanSeconds(*p.comm_time_s) +
           " per step on the busiest device (" + Percent(*p.comm_time_s, step) + " of the step)");
  }
  if (d.pp > 1) {
    t.Line("  pipeline         " + std::to_string(p.micro_batches) + " micro-batches, bubble " +
           Percent(p.bubble, 1.0) + "; totals and nodes are stage " +
           std::to_string(p.busiest_stage) + "'s device, one micro-batch");
  }
  t.Line("  throughput       " + Fixed(l.tokens_per_s, 1) + " tokens/s, " +
         Fixed(p.tokens_per_s, 1) + " per device");
}

}  // namespace

std::string RenderText(const ReportModel& m, const TextStyle& style) {
  Text t(style);
  const roofline::Totals& tot = m.totals;
  const double bytes = static_cast<double>(tot.bytes());
  std::string workload;
  for (const auto& [name, value] : m.workload) {
    workload += (workload.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  }
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
  const char* floor_by =
      tot.floor_comm_s > std::max({tot.floor_memory_s, tot.floor_mma_s, tot.floor_vector_s})
          ? "communication"
      : tot.floor_memory_s >= std::max(tot.floor_mma_s, tot.floor_vector_s)
          ? "memory"
          : (tot.floor_mma_s >= tot.floor_vector_s ? "tensor compute" : "vector compute");
  t.Line("  fused floor                 " + HumanSeconds(tot.fused_floor_s) + " (bound by " +
         floor_by + "; fusion headroom " +
         (tot.fused_floor_s > 0 ? Fixed(tot.time_s / tot.fused_floor_s, 2) + "x" : "-") + ")");
  t.Line("  bytes moved (lower bound)   " + HumanBytes(bytes) + " (read " +
         HumanBytes(static_cast<double>(tot.bytes_read)) + ", written " +
         HumanBytes(static_cast<double>(tot.bytes_written)) + ")");
  t.Line("    of which weights          " + HumanBytes(static_cast<double>(tot.bytes_weights)) +
         " (" + Percent(static_cast<double>(tot.bytes_weights), bytes) + ")");
  t.Line("    of which state            " + HumanBytes(static_cast<double>(tot.bytes_state)) +
         " (" + Percent(static_cast<double>(tot.bytes_state), bytes) + ")");
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
    if (m.deployment) {
      t.Line();
      Parallel(t, *m.deployment, m.llm->figures);
    }
  }

  const auto by_time = TopRows(m, m.top_n, [](const NodeRow& n) { return n.time_s; });
  if (!by_time.empty()) {
    t.Line();
    t.Line(t.Bold("top " + std::to_string(by_time.size()) + " nodes by time"));
    NodeTable(t, m, by_time);
  }
  const auto by_bytes = TopRows(m, m.top_n, [](const NodeRow& n) { return n.bytes(); });
  if (!by_bytes.empty()) {
    t.Line();
    t.Line(t.Bold("top " + std::to_string(by_bytes.size()) + " nodes by traffic"));
    NodeTable(t, m, by_bytes);
  }
  if (!m.by_op.empty()) {
    t.Line();
    t.Line(t.Bold("by op kind"));
    t.Line(t.Dim("  " + Pad("bytes", 11, true) + Pad("share", 8, true) + Pad("FLOPs", 13, true) +
                 Pad("time", 10, true) + Pad("count", 9, true) + "  op"));
    for (const ByOpRow& b : m.by_op) {
      t.Line("  " + Pad(HumanBytes(static_cast<double>(b.bytes)), 11, true) +
             Pad(Percent(static_cast<double>(b.bytes), bytes), 8, true) +
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
