// A minimal RFC 4180 CSV writer: appends to a string; fields with a comma, quote, CR or LF are
// quoted with quotes doubled; records end in LF (what awk, cut and grep expect; RFC 4180
// readers take it too). Integers print exactly and doubles in the
// shortest form that round-trips (as the JSON writer does); an absent value is an empty field.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "report/append_number.h"

namespace opscope::report {

class CsvWriter {
 public:
  explicit CsvWriter(std::string& out) : out_(out) {}

  CsvWriter& Field(std::string_view s) {
    Separator();
    if (s.find_first_of(",\"\r\n") == std::string_view::npos) {
      out_.append(s);
      return *this;
    }
    out_ += '"';
    for (char c : s) {
      if (c == '"') out_ += '"';
      out_ += c;
    }
    out_ += '"';
    return *this;
  }
  CsvWriter& Field(const char* s) { return Field(std::string_view(s)); }
  CsvWriter& Field(bool b) { return Field(std::string_view(b ? "true" : "false")); }
  CsvWriter& Field(uint64_t v) { Separator(); AppendNumber(out_, v); return *this; }
  CsvWriter& Field(int64_t v) { Separator(); AppendNumber(out_, v); return *this; }
  CsvWriter& Field(double v) {
    Separator();
    if (std::isfinite(v)) AppendNumber(out_, v);
    return *this;
  }
  CsvWriter& Empty() { Separator(); return *this; }
  void EndRecord() {
    out_ += '\n';
    first_ = true;
  }

 private:
  void Separator() {
    if (!first_) out_ += ',';
    first_ = false;
  }

  std::string& out_;
  bool first_ = true;
};

}  // namespace opscope::report
