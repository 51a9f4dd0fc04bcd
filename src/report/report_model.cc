// Builds the ReportModel from the graph, ledger and roofline (and an llm run): the only place
// report rows are computed; renderers only format them.
#include "report/report_model.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "support/human_units.h"

namespace opscope::report {
namespace {

// A step whose nodes average less than this is shorter than the work around them: a GPU kernel
// launch alone takes a few microseconds (more without CUDA graphs), and none of it is modelled.
constexpr double kLaunchScaleS = 5e-6;

// The part of the state traffic `c` is of: KV caches belong to the ops that attend over them
// (attention, the DSA indexer's key cache); recurrent state to recurrences, causal convs and
// RNNs.
uint64_t* StateBucket(StateBytes& s, ir::OpKind op) {
  switch (ir::Family(op)) {
    case ir::OpFamily::kPagedAttention:
    case ir::OpFamily::kAttention:
    case ir::OpFamily::kIndexer: return &s.kv_cache;
    case ir::OpFamily::kRecurrence:
    case ir::OpFamily::kCausalConv1d:
    case ir::OpFamily::kRnn: return &s.recurrent;
    default: return &s.other;
  }
}

// "260 ns over 43 nodes (6.05 ns per node, under ~5 us): ..." when the nodes that take time
// average less than kLaunchScaleS; nullopt otherwise.
std::optional<std::string> LaunchOverheadWarning(const ReportModel& m) {
  uint64_t timed = 0;
  for (const NodeRow& n : m.nodes) timed += n.costed && n.time_s > 0 ? 1 : 0;
  if (timed == 0) return std::nullopt;
  const double per_node_s = m.totals.time_s / static_cast<double>(timed);
  if (per_node_s >= kLaunchScaleS) return std::nullopt;
  return HumanSeconds(m.totals.time_s) + " over " + std::to_string(timed) +
         (timed == 1 ? " node (" : " nodes (") +
         HumanSeconds(per_node_s) + " per node, under ~" + HumanSeconds(kLaunchScaleS) +
         "): launch overhead not modelled; real time is dominated by it";
}

}  // namespace

std::string_view FloorBound(const roofline::Totals& t) {
  if (t.fused_floor_s <= 0) return "none";
  if (t.floor_comm_s > std::max({t.floor_memory_s, t.floor_mma_s, t.floor_vector_s})) {
    return "communication";
  }
  if (t.floor_memory_s >= std::max(t.floor_mma_s, t.floor_vector_s)) return "memory";
  return t.floor_mma_s >= t.floor_vector_s ? "tensor compute" : "vector compute";
}

std::string WorkloadText(const ReportModel& m) {
  std::string text;
  for (const auto& [name, value] : m.workload) {
    const bool prompt = m.prompt && name == import::hf::kContextSymbol;
    text += (text.empty() ? "" : ", ") + (prompt ? "prompt" : name) + "=" +
            std::to_string(prompt ? *m.prompt : value);
  }
  return text;
}

ReportModel BuildReport(const ir::Graph& graph, const cost::Ledger& ledger,
                        const roofline::Analysis& analysis, const device::Device& device,
                        int top_n) {
  ReportModel m;
  m.model = graph.name;
  m.device = device;
  m.workload = ledger.bound_dims;
  m.totals = analysis.totals;
  m.ridges = analysis.ridges;
  m.top_n = top_n;
  m.assumptions = ledger.assumptions;
  m.assumptions.insert(m.assumptions.end(), analysis.notes.begin(), analysis.notes.end());

  m.nodes.reserve(graph.nodes.size());
  std::map<std::string_view, ByOpRow> by_op;
  std::set<std::string> no_flop_model;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& n = graph.nodes[i];
    const cost::NodeCost& c = ledger.nodes[i];
    const roofline::NodeTime& t = analysis.nodes[i];
    NodeRow row;
    row.name = n.name;
    row.op = std::string(ir::OpName(n.op));
    row.source_op = n.source_op;
    row.costed = c.costed;
    row.bytes_read = c.bytes_read;
    row.bytes_written = c.bytes_written;
    row.bytes_weights = c.bytes_weights;
    row.bytes_state = c.bytes_state;
    row.bytes_link = c.bytes_link;
    if (c.collective) {
      row.link = n.StringAttr("scope") == std::optional<std::string_view>("network")
                     ? "network"
                     : "interconnect";
    }
    *StateBucket(m.state, n.op) += c.bytes_state;
    row.flops = c.flops;
    if (c.bytes() > 0) row.intensity = static_cast<double>(c.flops) / static_cast<double>(c.bytes());
    row.mma_class = std::string(format::MmaClassName(c.mma_class));
    row.time_s = t.time_s;
    row.bound = std::string(roofline::BoundName(t.bound));
    row.flop_model = c.flop_model;
    if (!c.costed) {
      m.not_costed.push_back({n.name, row.op, std::string(ledger.Reason(i))});
    } else if (!c.flop_model) {
      no_flop_model.insert(n.source_op.empty() ? row.op : n.source_op);
    }
    ByOpRow& agg = by_op[ir::OpName(n.op)];
    agg.op = row.op;
    agg.count += 1;
    agg.bytes += c.bytes();
    agg.bytes_link += c.bytes_link;
    agg.flops += c.flops;
    agg.time_s += t.time_s;
    if (c.note != cost::Note::kNone && c.costed) {
      const std::string_view note_text = cost::NoteText(c.note);
      const std::string note = "node '" + n.name + "': " + std::string(note_text);
      // Notes of identical layers say the same thing; keep the first per distinct note text.
      const bool dup = std::any_of(m.assumptions.begin(), m.assumptions.end(),
                                   [&](const std::string& a) {
                                     return a.ends_with(": " + std::string(note_text));
                                   });
      if (!dup) m.assumptions.push_back(note);
    }
    m.nodes.push_back(std::move(row));
  }
  for (auto& [name, row] : by_op) m.by_op.push_back(row);
  std::stable_sort(m.by_op.begin(), m.by_op.end(), [](const ByOpRow& a, const ByOpRow& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.op < b.op;
  });
  m.no_flop_model.assign(no_flop_model.begin(), no_flop_model.end());
  m.not_taken = graph.not_taken;
  m.floor_bound = std::string(FloorBound(m.totals));
  m.warnings = graph.warnings;
  if (2 * m.totals.nodes_costed < m.totals.nodes) {
    m.partial = "partial: " + std::to_string(m.totals.nodes_costed) + " of " +
                std::to_string(m.totals.nodes) + " nodes costed \u2014 totals are not the model's";
    m.warnings.push_back(m.partial);
  }
  if (auto launch = LaunchOverheadWarning(m)) m.warnings.push_back(std::move(*launch));
  return m;
}

ReportModel BuildLlmReport(const llm::Serving& serving, const llm::Evaluation& evaluation,
                           int top_n, const llm::Predicted* predicted) {
  const auto busiest = static_cast<size_t>(evaluation.figures.per_device.busiest_stage);
  ReportModel m = BuildReport(serving.stage(busiest).graph, evaluation.step.ledger,
                              evaluation.step.analysis, serving.device(), top_n);
  m.model = serving.build().model.name;
  for (const std::string& a : evaluation.assumptions) {
    if (std::find(m.assumptions.begin(), m.assumptions.end(), a) == m.assumptions.end()) {
      m.assumptions.push_back(a);
    }
  }
  for (const std::string& w : serving.build().warnings) m.warnings.push_back(w);
  for (const std::string& w : evaluation.warnings) m.warnings.push_back(w);
  m.llm = LlmSection{evaluation.figures, serving.build().labels, std::nullopt};
  if (evaluation.figures.phase == llm::Phase::kPrefill) {
    // PrefillBindings: n = seqs · prompt.
    int64_t n = 0, seqs = 0;
    for (const auto& [name, value] : m.workload) {
      if (name == import::hf::kTokensSymbol) n = value;
      if (name == import::hf::kSeqsSymbol) seqs = value;
    }
    if (seqs > 0) m.prompt = n / seqs;
  }
  if (predicted) {
    m.llm->predicted = *predicted;
    for (size_t i = 0; i < m.nodes.size() && i < predicted->node_time_s.size(); ++i) {
      m.nodes[i].predicted_time_s = predicted->node_time_s[i];
    }
    for (const std::string& n : predicted->notes) {
      if (std::find(m.assumptions.begin(), m.assumptions.end(), n) == m.assumptions.end()) {
        m.assumptions.push_back(n);
      }
    }
  }
  if (!serving.deployment().one_device()) m.deployment = serving.deployment();
  return m;
}

}  // namespace opscope::report
