// A small SVG 1.1 builder shared by the chart renderers (roofline, sweep curves): escaped text,
// fixed-precision coordinates (deterministic output), log-scaled axes with decade ticks, and a
// colour palette. Self-contained: no fonts, images or styles from outside the document.
#pragma once

#include <string>
#include <string_view>

namespace opscope::report {

// A log10 mapping of [lo, hi] onto pixels [px0, px1] (px1 < px0 for a y axis).
struct LogAxis {
  double lo = 1, hi = 10;
  double px0 = 0, px1 = 1;
  double Map(double v) const;
};

// A linear mapping, for axes that may start at zero.
struct LinearAxis {
  double lo = 0, hi = 1;
  double px0 = 0, px1 = 1;
  double Map(double v) const;
};

class Svg {
 public:
  // `standalone` adds the XML declaration (a file of its own); inline SVG in HTML omits it.
  Svg(int width, int height, bool standalone);

  void Raw(std::string_view s) { out_.append(s); }
  void Line(double x1, double y1, double x2, double y2, std::string_view attrs);
  void Text(double x, double y, std::string_view text, std::string_view attrs);
  // A circle with a tooltip (<title>) and extra attributes (class, data-*).
  void Circle(double cx, double cy, double r, std::string_view attrs, std::string_view title);
  void Rect(double x, double y, double w, double h, std::string_view attrs);
  std::string Finish();

  static std::string Escape(std::string_view s);  // & < > " '
  static std::string Num(double v);               // one decimal, "-0.0" never printed

 private:
  std::string out_;
};

// Decade ticks and grid lines of a log axis; `label` formats a tick value.
void DrawLogXAxis(Svg& svg, const LogAxis& x, double y_bottom, double y_top,
                  std::string (*label)(double), std::string_view title);
void DrawLogYAxis(Svg& svg, const LogAxis& y, double x_left, double x_right,
                  std::string (*label)(double), std::string_view title);
void DrawLinearYAxis(Svg& svg, const LinearAxis& y, double x_left, double x_right,
                     std::string (*label)(double), std::string_view title);
// The step of a linear axis over `span`: 1, 2 or 5 times a power of ten, at most `max_ticks`
// steps.
double LinearTickStep(double span, double max_ticks);
// A vertical grid line at px with its label under y_bottom (no tick mark).
void DrawXGridTick(Svg& svg, double px, double y_bottom, double y_top, const std::string& label);

// Rounds a positive range outwards to whole decades.
void DecadeRange(double& lo, double& hi);

// Colour i of a fixed qualitative palette (cycles); kOtherColour for everything else.
std::string_view PaletteColour(size_t i);
inline constexpr size_t kPaletteSize = 10;
inline constexpr std::string_view kOtherColour = "#9a9a9a";

// A number for people, never in exponent notation: at most `significant` significant digits,
// trailing zeros dropped, thousands as k, M, G, T, P, E: "0.000123", "2.89k", "1.5M", "0".
std::string PlainNumber(double v, int significant = 3);

// Tick labels (up to six significant digits, as printf's %g, but never an exponent): "0.01",
// "1", "100", "10k", "12.5k"; and rates: "1 TFLOP/s", "100 GFLOP/s".
std::string PlainNumberLabel(double v);
std::string FlopRateLabel(double v);

}  // namespace opscope::report
