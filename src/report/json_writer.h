// A minimal streaming JSON writer: appends to a string, escapes strings, prints integers
// exactly and doubles in the shortest form that round-trips. Deterministic by construction.
// JsonWriter writes compactly; SpacedJsonWriter puts a space after each ',' and ':' (the
// hand-readable `opscope llm --list`).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "device/device.h"
#include "report/append_number.h"

namespace opscope::report {

template <bool kSpaced>
class BasicJsonWriter {
 public:
  explicit BasicJsonWriter(std::string& out) : out_(out) {}

  BasicJsonWriter& BeginObject() { Comma(); out_ += '{'; first_ = true; return *this; }
  BasicJsonWriter& EndObject() { out_ += '}'; first_ = false; return *this; }
  BasicJsonWriter& BeginArray() { Comma(); out_ += '['; first_ = true; return *this; }
  BasicJsonWriter& EndArray() { out_ += ']'; first_ = false; return *this; }

  // A key spelled as a literal in our code: needs no escaping, appended as is (a report
  // writes some fifteen million of them for a million nodes).
  template <size_t N>
  BasicJsonWriter& Key(const char (&k)[N]) {
    Comma();
    out_ += '"';
    out_.append(k, N - 1);
    out_ += kSpaced ? "\": " : "\":";
    first_ = true;
    return *this;
  }

  // Object key from data (symbol names, classes); the next value call writes its value.
  BasicJsonWriter& Key(std::string_view k) {
    Comma();
    String(k);
    out_ += kSpaced ? ": " : ":";
    first_ = true;  // the value that follows takes no comma
    return *this;
  }

  BasicJsonWriter& Value(std::string_view s) { Comma(); String(s); return *this; }
  BasicJsonWriter& Value(const char* s) { return Value(std::string_view(s)); }
  BasicJsonWriter& Value(bool b) { Comma(); out_ += b ? "true" : "false"; return *this; }
  BasicJsonWriter& Value(uint64_t v) { Comma(); AppendNumber(out_, v); return *this; }
  BasicJsonWriter& Value(int64_t v) { Comma(); AppendNumber(out_, v); return *this; }
  BasicJsonWriter& Value(int v) { return Value(static_cast<int64_t>(v)); }
  BasicJsonWriter& Value(double v) {
    Comma();
    if (!std::isfinite(v)) {
      out_ += "null";
    } else if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
      AppendNumber(out_, static_cast<int64_t>(v));  // 80000000000, not 8e+10
    } else {
      AppendNumber(out_, v);
    }
    return *this;
  }
  BasicJsonWriter& Null() { Comma(); out_ += "null"; return *this; }
  // A number, or null when absent.
  BasicJsonWriter& Value(const std::optional<double>& v) { return v ? Value(*v) : Null(); }
  // An array of strings.
  BasicJsonWriter& Strings(std::span<const std::string> values) {
    BeginArray();
    for (const std::string& v : values) Value(v);
    return EndArray();
  }

  // Line breaks and indentation of the caller's layout, with the comma they follow when
  // they come between items (",\n  "); the next item writes no comma of its own.
  BasicJsonWriter& Layout(std::string_view text) {
    out_ += text;
    first_ = true;
    return *this;
  }

 private:
  void Comma() {
    if (!first_) out_ += kSpaced ? ", " : ",";
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

using JsonWriter = BasicJsonWriter<false>;
using SpacedJsonWriter = BasicJsonWriter<true>;

// One device as the JSON report and `opscope devices --format json` print it.
void WriteDeviceJson(JsonWriter& w, const device::Device& d);

}  // namespace opscope::report
