// The roofline chart (SVG 1.1, 1200×800, self-contained): x arithmetic intensity (FLOP/byte),
// y attainable FLOP/s, both log scaled; the device's DRAM bandwidth slope, one flat roof per
// MMA class it has a peak for (labelled "bf16 989 TFLOP/s"), ridge points marked; every costed
// node that takes time is a circle at (its intensity, its FLOPs / its time) whose area is
// proportional to its share of the step time, coloured by op kind, with a legend.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "report/render.h"
#include "report/svg_canvas.h"
#include "support/human_units.h"

namespace opscope::report {
namespace {

constexpr int kWidth = 1200, kHeight = 800;
constexpr double kLeft = 110, kRight = 900, kTop = 90, kBottom = 700;
constexpr double kMaxRadius = 60;  // a node with the whole step time

// "989 TFLOP/s", "1979 TFLOP/s", "67.0 TFLOP/s", "450 GFLOP/s".
std::string PeakLabel(double flops_per_s) {
  const bool tera = flops_per_s >= 1e12;
  const double v = flops_per_s / (tera ? 1e12 : 1e9);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s", v >= 100 ? 0 : (v >= 10 ? 1 : 2), v,
                tera ? "TFLOP/s" : "GFLOP/s");
  return buf;
}

std::string Compact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

struct Mark {
  size_t node;
  double x, y, r;
};

}  // namespace

std::string ChartTitle(const ReportModel& m) {
  std::string w;
  for (const auto& [name, value] : m.workload) {
    w += (w.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  }
  std::string title = m.model + " on " + m.device.name;
  if (m.llm) title += " \xe2\x80\x94 " + std::string(llm::PhaseName(m.llm->figures.phase));
  if (!w.empty()) title += (m.llm ? " " : " \xe2\x80\x94 ") + w;
  return title;
}

std::string RenderSvg(const ReportModel& m, bool standalone) {
  const double dram_bytes_per_s = m.device.dram_bytes_per_s;
  const double total_s = m.totals.time_s;
  // Ranges: every marked node and every ridge, with a decade of margin around the ridges.
  double x_lo = 1e300, x_hi = 0, y_lo = 1e300, y_hi = 0;
  for (const roofline::Ridge& r : m.ridges) {
    x_lo = std::min(x_lo, r.flops_per_byte / 10);
    x_hi = std::max(x_hi, r.flops_per_byte * 10);
    y_hi = std::max(y_hi, r.peak_flops_per_s * 1.5);
  }
  for (const NodeRow& n : m.nodes) {
    if (!n.costed || n.time_s <= 0 || n.flops == 0 || !n.intensity) continue;
    x_lo = std::min(x_lo, *n.intensity);
    x_hi = std::max(x_hi, *n.intensity);
    const double achieved = static_cast<double>(n.flops) / n.time_s;
    y_lo = std::min(y_lo, achieved);
    y_hi = std::max(y_hi, achieved);
  }
  if (x_hi <= 0) { x_lo = 0.1; x_hi = 1000; }
  if (y_hi <= 0) y_hi = 1e12;
  DecadeRange(x_lo, x_hi);
  y_lo = std::min(y_lo, dram_bytes_per_s > 0 ? dram_bytes_per_s * x_lo : y_hi / 1e6);
  DecadeRange(y_lo, y_hi);
  const LogAxis x{x_lo, x_hi, kLeft, kRight};
  const LogAxis y{y_lo, y_hi, kBottom, kTop};

  Svg svg(kWidth, kHeight, standalone);
  svg.Text(kLeft, 34, "Roofline: " + ChartTitle(m), "font-size=\"18\" font-weight=\"bold\" fill=\"#111111\"");
  std::string sub = m.device.description.empty() ? m.device.name : m.device.description;
  sub += ", " + HumanRate(dram_bytes_per_s, "B") + " DRAM";
  if (m.llm) {
    sub += "; step " + HumanSeconds(m.llm->figures.step_time_s) + ", " +
           Compact(m.llm->figures.tokens_per_s) +
           " tokens/s";
  } else {
    sub += "; sum of op times " + HumanSeconds(total_s);
  }
  sub += "; circle area = share of step time";
  svg.Text(kLeft, 58, sub, "font-size=\"13\" fill=\"#444444\"");
  DrawLogXAxis(svg, x, kBottom, kTop, PlainNumberLabel, "arithmetic intensity (FLOP/byte)");
  DrawLogYAxis(svg, y, kLeft, kRight, FlopRateLabel, "attainable FLOP/s");

  // Bandwidth slope up to the highest roof, then one flat roof per class from its ridge.
  svg.Raw("<g class=\"roofs\">\n");
  double top_peak = 0, top_ridge = x_lo;
  for (const roofline::Ridge& r : m.ridges) {
    if (r.peak_flops_per_s > top_peak) top_peak = r.peak_flops_per_s, top_ridge = r.flops_per_byte;
  }
  if (dram_bytes_per_s > 0) {
    const double x0 = std::max(x_lo, y_lo / dram_bytes_per_s);
    svg.Line(x.Map(x0), y.Map(dram_bytes_per_s * x0), x.Map(top_ridge), y.Map(dram_bytes_per_s * top_ridge),
             "class=\"bandwidth\" stroke=\"#222222\" stroke-width=\"2\"");
    const double lx = std::max(x0 * 1.6, x_lo * 1.6);
    const double angle = std::atan2(y.Map(dram_bytes_per_s * lx * 10) - y.Map(dram_bytes_per_s * lx), x.Map(lx * 10) - x.Map(lx)) * 180 / M_PI;
    svg.Text(x.Map(lx), y.Map(dram_bytes_per_s * lx) - 8, "DRAM " + HumanRate(dram_bytes_per_s, "B"),
             "fill=\"#222222\" transform=\"rotate(" + Svg::Num(angle) + " " + Svg::Num(x.Map(lx)) +
                 " " + Svg::Num(y.Map(dram_bytes_per_s * lx) - 8) + ")\"");
  }
  // Labels of classes sharing one peak are stacked so none hides another.
  std::map<double, int> labels_at;
  for (const roofline::Ridge& r : m.ridges) {
    const std::string cls(format::MmaClassName(r.mma_class));
    const double py = y.Map(r.peak_flops_per_s);
    svg.Line(x.Map(r.flops_per_byte), py, kRight, py,
             "class=\"roof\" data-class=\"" + cls + "\" stroke=\"#555555\" stroke-width=\"1.5\"");
    const int stack = labels_at[r.peak_flops_per_s]++;
    svg.Text(kRight - 4, py - 5 - 14 * stack, cls + " " + PeakLabel(r.peak_flops_per_s),
             "class=\"roof-label\" text-anchor=\"end\" fill=\"#333333\"");
    svg.Circle(x.Map(r.flops_per_byte), py, 4,
               "class=\"ridge\" data-class=\"" + cls + "\" fill=\"#ffffff\" stroke=\"#222222\" stroke-width=\"1.5\"",
               cls + " ridge point: " + Compact(r.flops_per_byte) + " FLOP/byte");
  }
  svg.Raw("</g>\n");

  // Colours by op kind: kinds ordered by their share of the time, ties by name.
  std::map<std::string, double> kind_time;
  for (const NodeRow& n : m.nodes) {
    if (n.costed && n.time_s > 0) kind_time[n.op] += n.time_s;
  }
  std::vector<std::pair<std::string, double>> kinds(kind_time.begin(), kind_time.end());
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::map<std::string, std::string> colour;
  for (size_t i = 0; i < kinds.size(); ++i) {
    colour[kinds[i].first] = std::string(i < kPaletteSize ? PaletteColour(i) : kOtherColour);
  }

  // Marks, largest first so small ones stay visible on top; ties in graph order.
  std::vector<Mark> marks;
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const NodeRow& n = m.nodes[i];
    if (!n.costed || n.time_s <= 0) continue;
    // A node without FLOPs has no place on a log axis: it sits on the left and bottom edges.
    const double xi = n.flops > 0 && n.intensity ? std::max(*n.intensity, x_lo) : x_lo;
    const double yi = n.flops > 0 ? std::max(static_cast<double>(n.flops) / n.time_s, y_lo) : y_lo;
    const double share = total_s > 0 ? n.time_s / total_s : 0;
    marks.push_back({i, x.Map(xi), y.Map(yi), std::max(1.0, kMaxRadius * std::sqrt(share))});
  }
  std::stable_sort(marks.begin(), marks.end(), [&](const Mark& a, const Mark& b) {
    return m.nodes[a.node].time_s > m.nodes[b.node].time_s;
  });
  svg.Raw("<g class=\"nodes\" fill-opacity=\"0.45\" stroke-width=\"0.8\">\n");
  for (const Mark& mk : marks) {
    const NodeRow& n = m.nodes[mk.node];
    const std::string c = colour[n.op];
    char share[32];
    std::snprintf(share, sizeof share, "%.2f%%", total_s > 0 ? 100 * n.time_s / total_s : 0.0);
    const std::string title = n.name + " (" + n.op + "): " + HumanSeconds(n.time_s) + ", " +
                              share + " of time, " + HumanBytes(static_cast<double>(n.bytes())) +
                              ", " + HumanFlops(static_cast<double>(n.flops)) + ", " +
                              (n.intensity ? Compact(*n.intensity) : std::string("-")) +
                              " FLOP/B, " + n.bound + "-bound";
    svg.Circle(mk.x, mk.y, mk.r,
               "class=\"node\" data-op=\"" + Svg::Escape(n.op) + "\" fill=\"" + c +
                   "\" stroke=\"" + c + "\"",
               title);
  }
  svg.Raw("</g>\n");

  // Legend.
  svg.Raw("<g class=\"legend\">\n");
  double ly = kTop + 10;
  svg.Text(930, ly, "op kind (share of time)", "font-weight=\"bold\" fill=\"#222222\"");
  ly += 22;
  double other_time = 0;
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (i >= kPaletteSize) {
      other_time += kinds[i].second;
      continue;
    }
    svg.Rect(930, ly - 10, 12, 12, "fill=\"" + colour[kinds[i].first] + "\"");
    char share[32];
    std::snprintf(share, sizeof share, " %.1f%%", total_s > 0 ? 100 * kinds[i].second / total_s : 0.0);
    svg.Text(950, ly, kinds[i].first + share, "fill=\"#222222\"");
    ly += 20;
  }
  if (kinds.size() > kPaletteSize) {
    svg.Rect(930, ly - 10, 12, 12, "fill=\"" + std::string(kOtherColour) + "\"");
    char share[32];
    std::snprintf(share, sizeof share, " %.1f%%", total_s > 0 ? 100 * other_time / total_s : 0.0);
    svg.Text(950, ly, std::string("other") + share, "fill=\"#222222\"");
    ly += 20;
  }
  ly += 14;
  svg.Circle(936, ly - 4, 4, "fill=\"#ffffff\" stroke=\"#222222\" stroke-width=\"1.5\"", "");
  svg.Text(950, ly, "ridge point (peak / bandwidth)", "fill=\"#222222\"");
  ly += 20;
  svg.Text(930, ly, "nodes without FLOPs sit on the", "fill=\"#666666\" font-size=\"11\"");
  svg.Text(930, ly + 14, "left and bottom edges", "fill=\"#666666\" font-size=\"11\"");
  svg.Raw("</g>\n");
  return svg.Finish();
}

}  // namespace opscope::report
