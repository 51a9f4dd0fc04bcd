// Decimal SI formatting with three significant figures.
#include "support/human_units.h"

#include <cmath>
#include <cstdio>

namespace opscope {
namespace {

// Scales `value` by powers of 1000 and prints three significant figures with `unit`.
std::string Scaled(double value, const char* unit) {
  static constexpr const char* kPrefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  if (!std::isfinite(value)) return std::string("n/a ") + unit;
  double v = value;
  int i = 0;
  while (std::fabs(v) >= 999.5 && i < 6) {
    v /= 1000.0;
    ++i;
  }
  char buf[64];
  if (i == 0 && v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f %s", v, unit);
  } else {
    const double a = std::fabs(v);
    const int decimals = a >= 99.95 ? 0 : (a >= 9.995 ? 1 : 2);
    std::snprintf(buf, sizeof buf, "%.*f %s%s", decimals, v, kPrefixes[i], unit);
  }
  return buf;
}

}  // namespace

std::string HumanBytes(double bytes) { return Scaled(bytes, "B"); }
std::string HumanFlops(double flops) { return Scaled(flops, "FLOP"); }
std::string HumanCount(double count) {
  std::string s = Scaled(count, "");
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string HumanRate(double per_s, const char* unit) {
  return Scaled(per_s, (std::string(unit) + "/s").c_str());
}

std::string HumanSeconds(double seconds) {
  char buf[64];
  const double a = std::fabs(seconds);
  if (!std::isfinite(seconds)) return "n/a";
  if (a == 0) return "0 s";
  const char* unit = "s";
  double v = seconds;
  if (a < 1e-6) {
    v = seconds * 1e9;
    unit = "ns";
  } else if (a < 1e-3) {
    v = seconds * 1e6;
    unit = "us";
  } else if (a < 1.0) {
    v = seconds * 1e3;
    unit = "ms";
  }
  const double av = std::fabs(v);
  const int decimals = av >= 99.95 ? 0 : (av >= 9.995 ? 1 : 2);
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, unit);
  return buf;
}

}  // namespace opscope
