// The roofline chart (SVG 1.1, 1200×800, self-contained): x arithmetic intensity (FLOP/byte),
// y attainable FLOP/s, both log scaled; the device's DRAM bandwidth slope, one flat roof per
// MMA class it has a peak for (labelled "bf16 989 TFLOP/s"), ridge points marked; every costed
// node that takes time is a circle at (its intensity, its FLOPs / its time) whose area is
// proportional to its share of the step time, coloured by op kind, with a legend.
// A deployment's collectives are timed on their link, not DRAM: each sits at (its FLOPs per
// link byte, its FLOPs / its time) under a dashed roof of its link's bandwidth
// (interconnect or network), and the deployment's block (split, links, per-device figures,
// communication) is printed under the legend.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "report/deployment_lines.h"
#include "report/render.h"
#include "report/svg_canvas.h"
#include "support/human_units.h"

namespace opscope::report {
namespace {

constexpr int kWidth = 1200, kHeight = 800;
constexpr double kLeft = 110, kRight = 900, kTop = 90, kBottom = 700;
constexpr double kMaxRadius = 60;  // a node with the whole step time
constexpr double kPanel = 930;     // the legend's left edge
constexpr size_t kPanelChars = 42; // characters per line of the panel at font-size 11

// "989 TFLOP/s", "1979 TFLOP/s", "67.0 TFLOP/s", "450 GFLOP/s".
std::string PeakLabel(double flops_per_s) {
  const bool tera = flops_per_s >= 1e12;
  const double v = flops_per_s / (tera ? 1e12 : 1e9);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s", v >= 100 ? 0 : (v >= 10 ? 1 : 2), v,
                tera ? "TFLOP/s" : "GFLOP/s");
  return buf;
}

std::string Share(double part, double whole, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, whole > 0 ? 100 * part / whole : 0.0);
  return buf;
}

// The bandwidth of the link a collective is timed on (its `scope`); nullopt when the device
// has no figure (the roofline refuses such a step, so a report never has one).
std::optional<double> LinkBytesPerS(const device::Device& d, const std::string& link) {
  return link == "network" ? d.network_bytes_per_s : d.interconnect_bytes_per_s;
}

// Where a node sits: DRAM intensity, or for a collective its FLOPs per link byte; nullopt
// without FLOPs (such nodes sit on the left and bottom edges).
std::optional<double> ChartIntensity(const NodeRow& n) {
  if (n.flops == 0) return std::nullopt;
  if (!n.link.empty()) {
    if (n.bytes_link == 0) return std::nullopt;
    return static_cast<double>(n.flops) / static_cast<double>(n.bytes_link);
  }
  return n.intensity;
}

struct Axes {
  LogAxis x, y;
};

// Ranges: every marked node and every ridge, with a decade of margin around the ridges.
Axes ChartAxes(const ReportModel& m) {
  double x_lo = 1e300, x_hi = 0, y_lo = 1e300, y_hi = 0;
  for (const roofline::Ridge& r : m.ridges) {
    x_lo = std::min(x_lo, r.flops_per_byte / 10);
    x_hi = std::max(x_hi, r.flops_per_byte * 10);
    y_hi = std::max(y_hi, r.peak_flops_per_s * 1.5);
  }
  for (const NodeRow& n : m.nodes) {
    const std::optional<double> xi = ChartIntensity(n);
    if (!n.costed || n.time_s <= 0 || !xi) continue;
    x_lo = std::min(x_lo, *xi);
    x_hi = std::max(x_hi, *xi);
    const double achieved = static_cast<double>(n.flops) / n.time_s;
    y_lo = std::min(y_lo, achieved);
    y_hi = std::max(y_hi, achieved);
  }
  if (x_hi <= 0) { x_lo = 0.1; x_hi = 1000; }
  if (y_hi <= 0) y_hi = 1e12;
  DecadeRange(x_lo, x_hi);
  const double dram = m.device.dram_bytes_per_s;
  y_lo = std::min(y_lo, dram > 0 ? dram * x_lo : y_hi / 1e6);
  DecadeRange(y_lo, y_hi);
  return {LogAxis{x_lo, x_hi, kLeft, kRight}, LogAxis{y_lo, y_hi, kBottom, kTop}};
}

// A bandwidth slope y = bytes_per_s · x from the left or bottom edge up to `x_end`, labelled
// along the line at its start.
void Slope(Svg& svg, const Axes& a, double bytes_per_s, double x_end, const std::string& label,
           const std::string& attrs) {
  const double x0 = std::max(a.x.lo, a.y.lo / bytes_per_s);
  if (x0 >= x_end) return;
  svg.Line(a.x.Map(x0), a.y.Map(bytes_per_s * x0), a.x.Map(x_end), a.y.Map(bytes_per_s * x_end),
           attrs);
  const double lx = x0 * 1.6;
  const double ly = a.y.Map(bytes_per_s * lx) - 8;
  const double angle = std::atan2(a.y.Map(bytes_per_s * lx * 10) - a.y.Map(bytes_per_s * lx),
                                  a.x.Map(lx * 10) - a.x.Map(lx)) * 180 / M_PI;
  svg.Text(a.x.Map(lx), ly, label,
           "fill=\"#222222\" transform=\"rotate(" + Svg::Num(angle) + " " +
               Svg::Num(a.x.Map(lx)) + " " + Svg::Num(ly) + ")\"");
}

// The DRAM slope up to the highest roof, one flat roof per class from its ridge, and a
// dashed link roof per link the collectives use.
void Roofs(Svg& svg, const ReportModel& m, const Axes& a) {
  svg.Raw("<g class=\"roofs\">\n");
  double top_peak = 0, top_ridge = a.x.lo;
  for (const roofline::Ridge& r : m.ridges) {
    if (r.peak_flops_per_s > top_peak) top_peak = r.peak_flops_per_s, top_ridge = r.flops_per_byte;
  }
  const double dram = m.device.dram_bytes_per_s;
  if (dram > 0) {
    Slope(svg, a, dram, top_ridge, "DRAM " + HumanRate(dram, "B"),
          "class=\"bandwidth\" stroke=\"#222222\" stroke-width=\"2\"");
  }
  // Labels of classes sharing one peak are stacked so none hides another.
  std::map<double, int> labels_at;
  for (const roofline::Ridge& r : m.ridges) {
    const std::string cls(format::MmaClassName(r.mma_class));
    const double py = a.y.Map(r.peak_flops_per_s);
    svg.Line(a.x.Map(r.flops_per_byte), py, kRight, py,
             "class=\"roof\" data-class=\"" + cls + "\" stroke=\"#555555\" stroke-width=\"1.5\"");
    const int stack = labels_at[r.peak_flops_per_s]++;
    svg.Text(kRight - 4, py - 5 - 14 * stack, cls + " " + PeakLabel(r.peak_flops_per_s),
             "class=\"roof-label\" text-anchor=\"end\" fill=\"#333333\"");
    svg.Circle(a.x.Map(r.flops_per_byte), py, 4,
               "class=\"ridge\" data-class=\"" + cls + "\" fill=\"#ffffff\" stroke=\"#222222\" stroke-width=\"1.5\"",
               cls + " ridge point: " + PlainNumber(r.flops_per_byte) + " FLOP/byte");
  }
  std::vector<std::string> links;
  for (const NodeRow& n : m.nodes) {
    if (!n.link.empty() && std::find(links.begin(), links.end(), n.link) == links.end()) {
      links.push_back(n.link);
    }
  }
  // A collective's reduction runs on the vector units: its link roof ends at their peak.
  const double vector_peak = m.device.Peak(format::MmaClass::kFp32).value_or(top_peak);
  for (const std::string& link : links) {
    const std::optional<double> bw = LinkBytesPerS(m.device, link);
    if (!bw || *bw <= 0 || vector_peak <= 0) continue;
    Slope(svg, a, *bw, vector_peak / *bw, link + " " + HumanRate(*bw, "B") + " (collectives)",
          "class=\"link-roof\" data-link=\"" + link +
              "\" stroke=\"#7a4fa0\" stroke-width=\"2\" stroke-dasharray=\"8 5\"");
  }
  svg.Raw("</g>\n");
}

struct Mark {
  size_t node;
  double x, y, r;
};

// Colours by op kind: kinds ordered by their share of the time, ties by name.
std::vector<std::pair<std::string, double>> KindsByTime(const ReportModel& m) {
  std::map<std::string, double> kind_time;
  for (const NodeRow& n : m.nodes) {
    if (n.costed && n.time_s > 0) kind_time[n.op] += n.time_s;
  }
  std::vector<std::pair<std::string, double>> kinds(kind_time.begin(), kind_time.end());
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return kinds;
}

// The tooltip of a node's mark.
std::string MarkTitle(const NodeRow& n, double total_s) {
  std::string title = n.name + " (" + n.op + "): " + HumanSeconds(n.time_s) + ", " +
                      Share(n.time_s, total_s, "%.2f%%") + " of time, ";
  if (!n.link.empty()) {
    return title + HumanBytes(static_cast<double>(n.bytes_link)) + " over the " + n.link + ", " +
           HumanFlops(static_cast<double>(n.flops)) + ", " +
           (ChartIntensity(n) ? PlainNumber(*ChartIntensity(n)) : std::string("-")) +
           " FLOP per link byte, " + n.bound + "-bound";
  }
  return title + HumanBytes(static_cast<double>(n.bytes())) + ", " +
         HumanFlops(static_cast<double>(n.flops)) + ", " +
         (n.intensity ? PlainNumber(*n.intensity) : std::string("-")) + " FLOP/B, " + n.bound +
         "-bound";
}

// Marks, largest first so small ones stay visible on top; ties in graph order.
void Marks(Svg& svg, const ReportModel& m, const Axes& a,
           std::map<std::string, std::string>& colour) {
  const double total_s = m.totals.time_s;
  std::vector<Mark> marks;
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const NodeRow& n = m.nodes[i];
    if (!n.costed || n.time_s <= 0) continue;
    // A node without FLOPs has no place on a log axis: it sits on the left and bottom edges.
    const std::optional<double> intensity = ChartIntensity(n);
    const double xi = intensity ? std::max(*intensity, a.x.lo) : a.x.lo;
    const double yi = n.flops > 0 ? std::max(static_cast<double>(n.flops) / n.time_s, a.y.lo) : a.y.lo;
    const double share = total_s > 0 ? n.time_s / total_s : 0;
    marks.push_back({i, a.x.Map(xi), a.y.Map(yi), std::max(1.0, kMaxRadius * std::sqrt(share))});
  }
  std::stable_sort(marks.begin(), marks.end(), [&](const Mark& p, const Mark& q) {
    return m.nodes[p.node].time_s > m.nodes[q.node].time_s;
  });
  svg.Raw("<g class=\"nodes\" fill-opacity=\"0.45\" stroke-width=\"0.8\">\n");
  for (const Mark& mk : marks) {
    const NodeRow& n = m.nodes[mk.node];
    const std::string c = colour[n.op];
    svg.Circle(mk.x, mk.y, mk.r,
               "class=\"node\" data-op=\"" + Svg::Escape(n.op) + "\"" +
                   (n.link.empty() ? "" : " data-link=\"" + n.link + "\"") + " fill=\"" + c +
                   "\" stroke=\"" + c + "\"",
               MarkTitle(n, total_s));
  }
  svg.Raw("</g>\n");
}

// `text` in lines of at most `width` characters, cut at spaces but never between a number
// and its unit ("0 B"); a longer word keeps its own line.
std::vector<std::string> Wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines(1);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    while (end != std::string::npos && end > start && std::isdigit(static_cast<unsigned char>(text[end - 1])) &&
           end + 1 < text.size() && std::isalpha(static_cast<unsigned char>(text[end + 1]))) {
      end = text.find(' ', end + 1);  // the unit goes with its number
    }
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!lines.back().empty() && lines.back().size() + 1 + word.size() > width) lines.emplace_back();
    lines.back() += (lines.back().empty() ? "" : " ") + word;
    start = end + 1;
  }
  return lines;
}

// The legend (op kinds by share of time, the ridge point, where FLOP-less nodes and
// collectives sit), then a deployment's block. Returns the y under the last line.
double Legend(Svg& svg, const ReportModel& m,
              const std::vector<std::pair<std::string, double>>& kinds,
              std::map<std::string, std::string>& colour) {
  const double total_s = m.totals.time_s;
  svg.Raw("<g class=\"legend\">\n");
  double ly = kTop + 10;
  svg.Text(kPanel, ly, "op kind (share of time)", "font-weight=\"bold\" fill=\"#222222\"");
  ly += 22;
  double other_time = 0;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (i >= kPaletteSize) {
      other_time += kinds[i].second;
      continue;
    }
    svg.Rect(kPanel, ly - 10, 12, 12, "fill=\"" + colour[kinds[i].first] + "\"");
    svg.Text(kPanel + 20, ly, kinds[i].first + Share(kinds[i].second, total_s, " %.1f%%"),
             "fill=\"#222222\"");
    ly += 20;
  }
  if (kinds.size() > kPaletteSize) {
    svg.Rect(kPanel, ly - 10, 12, 12, "fill=\"" + std::string(kOtherColour) + "\"");
    svg.Text(kPanel + 20, ly, "other" + Share(other_time, total_s, " %.1f%%"), "fill=\"#222222\"");
    ly += 20;
  }
  ly += 14;
  svg.Circle(kPanel + 6, ly - 4, 4, "fill=\"#ffffff\" stroke=\"#222222\" stroke-width=\"1.5\"", "");
  svg.Text(kPanel + 20, ly, "ridge point (peak / bandwidth)", "fill=\"#222222\"");
  ly += 20;
  std::vector<std::string> notes = {"nodes without FLOPs sit on the", "left and bottom edges"};
  if (m.totals.bytes_link > 0) {
    notes.insert(notes.end(), {"collectives: FLOPs per link byte,", "under the dashed link roof"});
  }
  for (const std::string& note : notes) {
    svg.Text(kPanel, ly, note, "fill=\"#666666\" font-size=\"11\"");
    ly += 14;
  }
  svg.Raw("</g>\n");
  return ly;
}

// A deployment's block under the legend: its heading, then each line wrapped to the panel.
void DeploymentBlock(Svg& svg, const ReportModel& m, double ly) {
  const std::vector<LabelledLine> lines = DeploymentLines(m);
  if (lines.empty()) return;
  svg.Raw("<g class=\"deployment\">\n");
  ly += 16;
  svg.Text(kPanel, ly, DeploymentHeading(*m.deployment), "font-weight=\"bold\" fill=\"#222222\"");
  ly += 18;
  for (const LabelledLine& line : lines) {
    for (const std::string& part : Wrap(line.label + ": " + line.value, kPanelChars)) {
      svg.Text(kPanel, ly, part, "fill=\"#222222\" font-size=\"11\"");
      ly += 14;
    }
    ly += 3;
  }
  svg.Raw("</g>\n");
}

}  // namespace

std::string ChartTitle(const ReportModel& m) {
  const std::string w = WorkloadText(m);
  std::string title = m.model + " on " +
                      (m.deployment ? DeploymentShort(*m.deployment, m.device.name) : m.device.name);
  if (m.llm) title += " \xe2\x80\x94 " + std::string(llm::PhaseName(m.llm->figures.phase));
  if (!w.empty()) title += (m.llm ? " " : " \xe2\x80\x94 ") + w;
  return title;
}

std::string RenderSvg(const ReportModel& m, bool standalone) {
  const double dram_bytes_per_s = m.device.dram_bytes_per_s;
  const Axes axes = ChartAxes(m);

  Svg svg(kWidth, kHeight, standalone);
  svg.Text(kLeft, 34, "Roofline: " + ChartTitle(m), "font-size=\"18\" font-weight=\"bold\" fill=\"#111111\"");
  std::string sub = m.device.description.empty() ? m.device.name : m.device.description;
  sub += ", " + HumanRate(dram_bytes_per_s, "B") + " DRAM";
  if (m.llm) {
    sub += "; step " + HumanSeconds(m.llm->figures.step_time_s) + ", " +
           PlainNumber(m.llm->figures.tokens_per_s) + " tokens/s";
  } else {
    sub += "; sum of op times " + HumanSeconds(m.totals.time_s);
  }
  sub += "; bound by " + m.floor_bound + "; circle area = share of step time";
  svg.Text(kLeft, 58, sub, "font-size=\"13\" fill=\"#444444\"");
  DrawLogXAxis(svg, axes.x, kBottom, kTop, PlainNumberLabel, "arithmetic intensity (FLOP/byte)");
  DrawLogYAxis(svg, axes.y, kLeft, kRight, FlopRateLabel, "attainable FLOP/s");

  Roofs(svg, m, axes);
  const std::vector<std::pair<std::string, double>> kinds = KindsByTime(m);
  std::map<std::string, std::string> colour;
  for (size_t i = 0; i < kinds.size(); ++i) {
    colour[kinds[i].first] = std::string(i < kPaletteSize ? PaletteColour(i) : kOtherColour);
  }
  Marks(svg, m, axes, colour);
  DeploymentBlock(svg, m, Legend(svg, m, kinds, colour));
  return svg.Finish();
}

}  // namespace opscope::report
