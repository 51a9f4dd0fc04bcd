// Numbers as the report writers print them: integers exactly, doubles in the shortest form
// that round-trips (std::to_chars).
#pragma once

#include <charconv>
#include <string>

namespace opscope::report {

template <typename T>
void AppendNumber(std::string& out, T v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

}  // namespace opscope::report
