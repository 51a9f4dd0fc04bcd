// The embedded end-to-end error table (see accuracy.h).
#include "predict/accuracy.h"

#include <charconv>
#include <string_view>
#include <utility>

namespace opscope::predict {

// data/engines/e2e_errors.csv, embedded at configure time (accuracy_data.cc).
extern const std::string_view kEndToEndErrorsCsv;

namespace {

std::vector<std::string_view> Split(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ',') {
      out.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

double Number(std::string_view s) {
  double v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// Rows of engine,device,metric,runs,median_abs_error,p90_abs_error after the header; the file
// is written by scripts/e2e-accuracy.py and checked by a test, so a malformed row is a bug.
std::vector<EndToEndError> Parse(std::string_view text) {
  std::vector<EndToEndError> rows;
  bool header = true;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || std::exchange(header, false)) continue;
    const std::vector<std::string_view> f = Split(line);
    if (f.size() != 6) continue;
    rows.push_back({std::string(f[0]), std::string(f[1]), std::string(f[2]),
                    static_cast<uint32_t>(Number(f[3])), Number(f[4]), Number(f[5])});
  }
  return rows;
}

}  // namespace

const std::vector<EndToEndError>& EndToEndErrors() {
  static const std::vector<EndToEndError> rows = Parse(kEndToEndErrorsCsv);
  return rows;
}

}  // namespace opscope::predict
