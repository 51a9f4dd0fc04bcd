// A minimal streaming JSON writer: appends to a string, escapes strings, prints integers
// exactly and doubles in the shortest form that round-trips. Deterministic by construction.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "device/device.h"

namespace opscope::report {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& BeginObject() { Comma(); out_ += '{'; first_ = true; return *this; }
  JsonWriter& EndObject() { out_ += '}'; first_ = false; return *this; }
  JsonWriter& BeginArray() { Comma(); out_ += '['; first_ = true; return *this; }
  JsonWriter& EndArray() { out_ += ']'; first_ = false; return *this; }

  // A key spelled as a literal in our code: needs no escaping, appended as is (a report
  // writes some fifteen million of them for a million nodes).
  template <size_t N>
  JsonWriter& Key(const char (&k)[N]) {
    Comma();
    out_ += '"';
    out_.append(k, N - 1);
    out_ += "\":";
    first_ = true;
    return *this;
  }

  // Object key from data (symbol names, classes); the next value call writes its value.
  JsonWriter& Key(std::string_view k) {
    Comma();
    String(k);
    out_ += ':';
    first_ = true;  // the value that follows takes no comma
    return *this;
  }

  JsonWriter& Value(std::string_view s) { Comma(); String(s); return *this; }
  JsonWriter& Value(const char* s) { return Value(std::string_view(s)); }
  JsonWriter& Value(bool b) { Comma(); out_ += b ? "true" : "false"; return *this; }
  JsonWriter& Value(uint64_t v) { Comma(); AppendNumber(v); return *this; }
  JsonWriter& Value(int64_t v) { Comma(); AppendNumber(v); return *this; }
  JsonWriter& Value(int v) { return Value(static_cast<int64_t>(v)); }
  JsonWriter& Value(double v) {
    Comma();
    if (!std::isfinite(v)) {
      out_ += "null";
    } else if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
      AppendNumber(static_cast<int64_t>(v));  // 80000000000, not 8e+10
    } else {
      char buf[32];
      auto r = std::to_chars(buf, buf + sizeof buf, v);
      out_.append(buf, r.ptr);
    }
    return *this;
  }
  JsonWriter& Null() { Comma(); out_ += "null"; return *this; }

 private:
  template <typename T>
  void AppendNumber(T v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
  }

  void Comma() {
    if (!first_) out_ += ',';
    first_ = false;
  }

  // Appends runs that need no escaping in one call; escapes quotes, backslashes and
  // control characters.
  void String(std::string_view s) {
    out_ += '"';
    size_t run = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x20 && c != '"' && c != '\\') continue;
      out_.append(s.data() + run, i - run);
      run = i + 1;
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default: {
          static constexpr char kHex[] = "0123456789abcdef";
          const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
          out_.append(esc, 6);
        }
      }
    }
    out_.append(s.data() + run, s.size() - run);
    out_ += '"';
  }

  std::string& out_;
  bool first_ = true;
};

// One device as the JSON report and `opscope devices --format json` print it.
void WriteDeviceJson(JsonWriter& w, const device::Device& d);

}  // namespace opscope::report
