// The SVG builder and log axes shared by the chart renderers (see svg_canvas.h).
#include "report/svg_canvas.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace opscope::report {

double LogAxis::Map(double v) const {
  const double t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  return px0 + t * (px1 - px0);
}

double LinearAxis::Map(double v) const {
  const double t = hi > lo ? (v - lo) / (hi - lo) : 0;
  return px0 + t * (px1 - px0);
}

Svg::Svg(int width, int height, bool standalone) {
  if (standalone) out_ += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  const std::string w = std::to_string(width), h = std::to_string(height);
  out_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" + w +
          "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
          "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"12\">\n";
  out_ += "<rect x=\"0\" y=\"0\" width=\"" + w + "\" height=\"" + h + "\" fill=\"#ffffff\"/>\n";
}

std::string Svg::Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s == "-0.0") s = "0.0";
  return s;
}

std::string Svg::Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // XML 1.0 forbids most control characters even escaped: drop them.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n') out += c;
    }
  }
  return out;
}

void Svg::Line(double x1, double y1, double x2, double y2, std::string_view attrs) {
  out_ += "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" +
          Num(y2) + "\" ";
  out_.append(attrs);
  out_ += "/>\n";
}

void Svg::Text(double x, double y, std::string_view text, std::string_view attrs) {
  out_ += "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" ";
  out_.append(attrs);
  out_ += ">" + Escape(text) + "</text>\n";
}

void Svg::Circle(double cx, double cy, double r, std::string_view attrs, std::string_view title) {
  out_ += "<circle cx=\"" + Num(cx) + "\" cy=\"" + Num(cy) + "\" r=\"" + Num(r) + "\" ";
  out_.append(attrs);
  if (title.empty()) {
    out_ += "/>\n";
  } else {
    out_ += "><title>" + Escape(title) + "</title></circle>\n";
  }
}

void Svg::Rect(double x, double y, double w, double h, std::string_view attrs) {
  out_ += "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(w) + "\" height=\"" +
          Num(h) + "\" ";
  out_.append(attrs);
  out_ += "/>\n";
}

std::string Svg::Finish() {
  out_ += "</svg>\n";
  return std::move(out_);
}

void DecadeRange(double& lo, double& hi) {
  lo = std::pow(10.0, std::floor(std::log10(lo)));
  hi = std::pow(10.0, std::ceil(std::log10(hi)));
  if (hi <= lo) hi = lo * 10;
}

namespace {

constexpr std::string_view kGrid = "stroke=\"#e3e3e3\" stroke-width=\"1\"";
constexpr std::string_view kAxis = "stroke=\"#333333\" stroke-width=\"1\"";

}  // namespace

void DrawLogXAxis(Svg& svg, const LogAxis& x, double y_bottom, double y_top,
                  std::string (*label)(double), std::string_view title) {
  const int first = static_cast<int>(std::lround(std::log10(x.lo)));
  const int last = static_cast<int>(std::lround(std::log10(x.hi)));
  for (int e = first; e <= last; ++e) {
    const double v = std::pow(10.0, e);
    const double px = x.Map(v);
    svg.Line(px, y_bottom, px, y_top, kGrid);
    svg.Line(px, y_bottom, px, y_bottom + 5, kAxis);
    svg.Text(px, y_bottom + 18, label(v), "text-anchor=\"middle\" fill=\"#333333\"");
  }
  svg.Line(x.px0, y_bottom, x.px1, y_bottom, kAxis);
  svg.Text((x.px0 + x.px1) / 2, y_bottom + 40, title,
           "text-anchor=\"middle\" font-size=\"14\" fill=\"#222222\"");
}

namespace {

// A horizontal grid line at py with its tick and label left of x_left.
void DrawYTick(Svg& svg, double py, double x_left, double x_right, const std::string& label) {
  svg.Line(x_left, py, x_right, py, kGrid);
  svg.Line(x_left - 5, py, x_left, py, kAxis);
  svg.Text(x_left - 8, py + 4, label, "text-anchor=\"end\" fill=\"#333333\"");
}

// The axis line at x_left and its title, turned up the axis.
void DrawYAxisLine(Svg& svg, double px0, double px1, double x_left, std::string_view title) {
  svg.Line(x_left, px0, x_left, px1, kAxis);
  const double cy = (px0 + px1) / 2;
  svg.Text(x_left - 78, cy, title,
           "text-anchor=\"middle\" font-size=\"14\" fill=\"#222222\" transform=\"rotate(-90 " +
               Svg::Num(x_left - 78) + " " + Svg::Num(cy) + ")\"");
}

}  // namespace

void DrawLogYAxis(Svg& svg, const LogAxis& y, double x_left, double x_right,
                  std::string (*label)(double), std::string_view title) {
  const int first = static_cast<int>(std::lround(std::log10(y.lo)));
  const int last = static_cast<int>(std::lround(std::log10(y.hi)));
  for (int e = first; e <= last; ++e) {
    const double v = std::pow(10.0, e);
    DrawYTick(svg, y.Map(v), x_left, x_right, label(v));
  }
  DrawYAxisLine(svg, y.px0, y.px1, x_left, title);
}

double LinearTickStep(double span, double max_ticks) {
  double step = std::pow(10.0, std::floor(std::log10(span > 0 ? span : 1)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (span / (step * m) <= max_ticks) {
      step *= m;
      break;
    }
  }
  return step;
}

void DrawLinearYAxis(Svg& svg, const LinearAxis& y, double x_left, double x_right,
                     std::string (*label)(double), std::string_view title) {
  const double step = LinearTickStep(y.hi - y.lo, 10);
  for (int i = 0;; ++i) {
    const double v = y.lo + i * step;
    if (v > y.hi + step * 1e-9 || i > 20) break;
    DrawYTick(svg, y.Map(v), x_left, x_right, label(v));
  }
  DrawYAxisLine(svg, y.px0, y.px1, x_left, title);
}

void DrawXGridTick(Svg& svg, double px, double y_bottom, double y_top, const std::string& label) {
  svg.Line(px, y_bottom, px, y_top, kGrid);
  svg.Text(px, y_bottom + 18, label, "text-anchor=\"middle\" fill=\"#333333\"");
}

std::string_view PaletteColour(size_t i) {
  static constexpr std::array<std::string_view, kPaletteSize> kColours = {
      "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#17becf"};
  return kColours[i % kColours.size()];
}

std::string PlainNumber(double v, int significant) {
  static constexpr std::array<const char*, 7> kSuffixes = {"", "k", "M", "G", "T", "P", "E"};
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) return "0";
  double a = std::fabs(v);
  size_t suffix = 0;
  while (a >= 1000 && suffix + 1 < kSuffixes.size()) {
    a /= 1000;
    ++suffix;
  }
  // Decimals that keep `significant` digits: 2.89 -> 2, 0.000123 -> 6 (capped: a number
  // below 1e-20 prints as 0).
  const int magnitude = static_cast<int>(std::floor(std::log10(a)));
  const int decimals = std::clamp(significant - 1 - magnitude, 0, 20);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, a);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "0") return "0";
  return (v < 0 ? "-" : "") + s + kSuffixes[suffix];
}

std::string PlainNumberLabel(double v) { return PlainNumber(v, 6); }

std::string FlopRateLabel(double v) {
  static constexpr std::array<std::pair<double, const char*>, 5> kUnits = {
      {{1e15, "PFLOP/s"}, {1e12, "TFLOP/s"}, {1e9, "GFLOP/s"}, {1e6, "MFLOP/s"}, {1e3, "kFLOP/s"}}};
  for (const auto& [scale, unit] : kUnits) {
    if (v >= scale) return PlainNumber(v / scale, 6) + " " + unit;
  }
  return PlainNumber(v, 6) + " FLOP/s";
}

}  // namespace opscope::report
