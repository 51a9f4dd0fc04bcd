// The HTML report: one self-contained file (inline CSS, SVG and JS; no network) with the
// summary, a deployment's block, the roofline chart, a sortable per-node table, the by-op
// table, what was not costed and the assumptions.
#include <cstdio>
#include <string>

#include "report/deployment_lines.h"
#include "report/html_page.h"
#include "report/render.h"
#include "support/human_units.h"

namespace opscope::report {
namespace {

std::string Cell(const std::string& text) { return "<td>" + HtmlEscape(text) + "</td>"; }

std::string Shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A numeric cell: the human text, and the exact value the sort reads.
std::string NumCell(const std::string& text, double value) {
  return "<td class=\"n\" data-v=\"" + Shortest(value) + "\">" + HtmlEscape(text) + "</td>";
}

std::string Percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", whole > 0 ? 100 * part / whole : 0.0);
  return buf;
}

std::string Row(const std::string& label, const std::string& value) {
  return "<tr><th>" + HtmlEscape(label) + "</th><td>" + HtmlEscape(value) + "</td></tr>\n";
}

std::string WithFloor(double value_s, const std::optional<double>& floor_s) {
  return HumanSeconds(value_s) + (floor_s ? " (floor " + HumanSeconds(*floor_s) + ")" : "");
}

// llm.predicted: the engine's figures and the errors beside them.
void PredictedRows(std::string& out, const llm::Predicted& p) {
  char tps[48];
  std::snprintf(tps, sizeof tps, "%.1f tokens/s", p.tokens_per_s);
  out += Row("predicted by", p.engine + " (" + p.why + "; " + p.basis + ")");
  out += Row("predicted step time", HumanSeconds(p.step_time_s) + " (" + tps + ")");
  if (p.ttft_s) out += Row("predicted time to first token", WithFloor(*p.ttft_s, p.ttft_floor_s));
  if (p.tpot_s) out += Row("predicted time per output token", WithFloor(*p.tpot_s, p.tpot_floor_s));
  if (p.e2e_s) out += Row("predicted whole request", HumanSeconds(*p.e2e_s));
  if (p.dynamics && p.dynamics->drafter_memory) {
    const llm::DrafterMemory& m = *p.dynamics->drafter_memory;
    out += Row("memory fit with the drafter",
               "max batch " + std::to_string(m.max_batch) + " (" + p.dynamics->speculative + ": " +
                   HumanBytes(static_cast<double>(m.weight_bytes)) + " weights, " +
                   HumanBytes(static_cast<double>(m.bytes_per_seq)) +
                   " KV per sequence per device); " + (m.fits ? "fits" : "does not fit"));
  }
  std::string errors;
  for (const llm::KernelClassError& e : p.kernel_errors) {
    if (e.samples == 0) continue;
    errors += (errors.empty() ? "" : "; ") + e.kernel_class + " " + e.variant + " " +
              Percent(e.median_abs_error, 1.0) + " median, " + Percent(e.p90_abs_error, 1.0) +
              " p90 (" + Percent(e.share, 1.0) + " of the step)";
  }
  for (const llm::EndToEndErrorFigure& e : p.end_to_end_errors) {
    errors += (errors.empty() ? "" : "; ") + std::string("end to end ") + e.metric + " " +
              Percent(e.median_abs_error, 1.0) + " median over " + std::to_string(e.runs) +
              " runs (" + e.scope + ")";
  }
  if (!errors.empty()) out += Row("prediction error", errors);
}

void Summary(std::string& out, const ReportModel& m) {
  const roofline::Totals& t = m.totals;
  const std::string workload = WorkloadText(m);
  out += "<table class=\"summary\">\n";
  out += Row("model", m.model);
  out += Row("device", m.device.name + (m.device.description.empty() ? "" : " (" + m.device.description + ")") +
                           ", " + HumanRate(m.device.dram_bytes_per_s, "B") + " DRAM");
  out += Row("workload", (m.llm ? std::string(llm::PhaseName(m.llm->figures.phase)) + ": "
                                 : std::string()) +
                             workload);
  if (m.llm) {
    const llm::Figures& f = m.llm->figures;
    const llm::RecipeLabels& recipe = m.llm->recipe;
    char tps[48];
    std::snprintf(tps, sizeof tps, "%.1f tokens/s", f.tokens_per_s);
    out += Row("step time", HumanSeconds(f.step_time_s) + " (" + tps + ")");
    if (f.ttft_s) out += Row("time to first token", HumanSeconds(*f.ttft_s));
    if (f.tpot_s) out += Row("time per output token", HumanSeconds(*f.tpot_s));
    out += Row("recipe", "weights " + recipe.weights + ", activations " + recipe.activations +
                             ", KV cache " + recipe.kv + ", recurrent state " + recipe.state);
    out += Row("memory fit", "max batch " + std::to_string(f.max_batch) + "; " +
                                 (f.fits ? "fits" : "does not fit"));
    if (m.llm->predicted) PredictedRows(out, *m.llm->predicted);
  } else {
    out += Row("time (sum of op rooflines)", HumanSeconds(t.time_s));
  }
  std::string parts = "weights " + HumanBytes(static_cast<double>(t.bytes_weights));
  for (const auto& [label, part] : {std::pair<const char*, uint64_t>{"KV cache", m.state.kv_cache},
                                    {"recurrent state", m.state.recurrent},
                                    {"other state", m.state.other}}) {
    if (part > 0) parts += std::string(", ") + label + " " + HumanBytes(static_cast<double>(part));
  }
  out += Row("bytes moved", HumanBytes(static_cast<double>(t.bytes())) + " (" + parts + ")");
  out += Row("FLOPs", HumanFlops(static_cast<double>(t.flops)));
  char intensity[48];
  std::snprintf(intensity, sizeof intensity, "%.2f FLOP/B", t.intensity());
  out += Row("intensity", intensity);
  char headroom[64];
  std::snprintf(headroom, sizeof headroom, "; fusion headroom %.2fx",
                t.fused_floor_s > 0 ? t.time_s / t.fused_floor_s : 1.0);
  out += Row("fused floor", HumanSeconds(t.fused_floor_s) + headroom);
  out += Row("bound by", m.floor_bound + " (memory-bound traffic " +
                             Percent(static_cast<double>(t.memory_bound_bytes),
                                     static_cast<double>(t.bytes())) + ")");
  out += Row("nodes", std::to_string(t.nodes) + " (" + std::to_string(t.nodes_costed) + " costed)");
  out += "</table>\n";
}

// A deployment: the split, links, per-device figures, communication and throughput (the text
// report's block, line for line).
void Deployment(std::string& out, const ReportModel& m) {
  const std::vector<LabelledLine> lines = DeploymentLines(m);
  if (lines.empty()) return;
  std::string heading = DeploymentHeading(*m.deployment);
  heading[0] = 'D';
  out += "<h2>" + HtmlEscape(heading) + "</h2>\n<table class=\"summary\" id=\"deployment\">\n";
  for (const LabelledLine& line : lines) out += Row(line.label, line.value);
  out += "</table>\n";
}

void NodeTable(std::string& out, const ReportModel& m) {
  out += "<h2>Nodes</h2>\n<p class=\"muted\">Click a column to sort; graph order by default.</p>\n";
  out += "<table class=\"sortable\" id=\"nodes\">\n<thead><tr>"
         "<th class=\"n\" data-key=\"index\">#</th><th data-key=\"name\">name</th>"
         "<th data-key=\"op\">op</th><th class=\"n\" data-key=\"time_s\">time</th>"
         "<th class=\"n\" data-key=\"share\">share</th><th class=\"n\" data-key=\"bytes\">bytes</th>"
         "<th class=\"n\" data-key=\"flops\">FLOPs</th>";
  const bool links = m.totals.bytes_link > 0;
  if (links) out += "<th class=\"n\" data-key=\"bytes_link\">link bytes</th>";
  out += "<th class=\"n\" data-key=\"intensity\">FLOP/B</th><th data-key=\"bound\">bound</th>"
         "<th data-key=\"mma_class\">class</th>";
  const bool predicted = m.llm && m.llm->predicted;
  if (predicted) out += "<th class=\"n\" data-key=\"predicted_time_s\">predicted</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const NodeRow& n = m.nodes[i];
    const std::string op = n.source_op.empty() || n.source_op == n.op ? n.op
                                                                     : n.op + " (" + n.source_op + ")";
    char intensity[32] = "-";
    if (n.intensity) std::snprintf(intensity, sizeof intensity, "%.2f", *n.intensity);
    out += "<tr>" + NumCell(std::to_string(i), static_cast<double>(i)) + Cell(n.name) + Cell(op) +
           NumCell(n.costed ? HumanSeconds(n.time_s) : "not costed", n.time_s) +
           NumCell(Percent(n.time_s, m.totals.time_s),
                   m.totals.time_s > 0 ? n.time_s / m.totals.time_s : 0) +
           NumCell(HumanBytes(static_cast<double>(n.bytes())), static_cast<double>(n.bytes())) +
           NumCell(HumanFlops(static_cast<double>(n.flops)), static_cast<double>(n.flops)) +
           (links ? NumCell(n.link.empty() ? "-" : HumanBytes(static_cast<double>(n.bytes_link)) +
                                                        " (" + n.link + ")",
                            static_cast<double>(n.bytes_link))
                  : "") +
           NumCell(intensity, n.intensity.value_or(-1)) + Cell(n.bound) + Cell(n.mma_class);
    if (predicted) {
      out += NumCell(HumanSeconds(n.predicted_time_s.value_or(0)), n.predicted_time_s.value_or(0));
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
}

void ByOpTable(std::string& out, const ReportModel& m) {
  out += "<h2>By op kind</h2>\n<table class=\"sortable\" id=\"by-op\">\n<thead><tr>"
         "<th>op</th><th class=\"n\">count</th><th class=\"n\">bytes</th>";
  const bool links = m.totals.bytes_link > 0;
  if (links) out += "<th class=\"n\">link bytes</th>";
  out += "<th class=\"n\">FLOPs</th><th class=\"n\">time</th><th class=\"n\">share</th>"
         "</tr></thead>\n<tbody>\n";
  for (const ByOpRow& r : m.by_op) {
    out += "<tr>" + Cell(r.op) + NumCell(std::to_string(r.count), static_cast<double>(r.count)) +
           NumCell(HumanBytes(static_cast<double>(r.bytes)), static_cast<double>(r.bytes)) +
           (links ? NumCell(r.bytes_link > 0 ? HumanBytes(static_cast<double>(r.bytes_link)) : "-",
                            static_cast<double>(r.bytes_link))
                  : "") +
           NumCell(HumanFlops(static_cast<double>(r.flops)), static_cast<double>(r.flops)) +
           NumCell(HumanSeconds(r.time_s), r.time_s) +
           NumCell(Percent(r.time_s, m.totals.time_s),
                   m.totals.time_s > 0 ? r.time_s / m.totals.time_s : 0) +
           "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
}

void Lists(std::string& out, const ReportModel& m) {
  out += "<h2>Not costed (" + std::to_string(m.not_costed.size()) + ")</h2>\n";
  if (m.not_costed.empty()) {
    out += "<p class=\"muted\">Every node was costed.</p>\n";
  } else {
    out += "<ul id=\"not-costed\">\n";
    for (const NotCosted& n : m.not_costed) {
      out += "<li><b>" + HtmlEscape(n.name) + "</b> (" + HtmlEscape(n.op) + "): " +
             HtmlEscape(n.reason) + "</li>\n";
    }
    out += "</ul>\n";
  }
  if (!m.no_flop_model.empty()) {
    out += "<p>No FLOP model (bytes counted, 0 FLOPs): ";
    for (size_t i = 0; i < m.no_flop_model.size(); ++i) {
      out += (i ? ", " : "") + HtmlEscape(m.no_flop_model[i]);
    }
    out += "</p>\n";
  }
  if (!m.assumptions.empty()) {
    out += "<h2>Assumptions</h2>\n<ul>\n";
    for (const std::string& a : m.assumptions) out += "<li>" + HtmlEscape(a) + "</li>\n";
    out += "</ul>\n";
  }
}

}  // namespace

std::string RenderHtml(const ReportModel& m) {
  std::string out = HtmlPageBegin("opscope: " + ChartTitle(m));
  out.reserve(out.size() + 400 * m.nodes.size() + 200 * m.nodes.size() + 65536);
  out += "<h1>opscope: " + HtmlEscape(ChartTitle(m)) + "</h1>\n";
  for (const std::string& w : m.warnings) {
    out += "<p class=\"warning\" style=\"color:#b00000\"><strong>" + HtmlEscape(w) + "</strong></p>\n";
  }
  Summary(out, m);
  Deployment(out, m);
  out += "<h2>Roofline</h2>\n<div class=\"chart\" id=\"roofline\">\n";
  out += RenderSvg(m, /*standalone=*/false);
  out += "</div>\n";
  NodeTable(out, m);
  ByOpTable(out, m);
  Lists(out, m);
  out += HtmlPageEnd();
  return out;
}

}  // namespace opscope::report
