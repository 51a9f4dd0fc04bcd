// Splitting a line at a separator, for the few comma lists and CSV rows opscope reads by hand
// (sweep value lists, calibration measurement files): fields as views into the text, empty
// fields kept ("a,,b" is three fields), no quoting.
#pragma once

#include <string_view>
#include <vector>

namespace opscope {

inline std::vector<std::string_view> SplitFields(std::string_view text, char separator) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    fields.push_back(text.substr(start, end == std::string_view::npos ? text.npos : end - start));
    if (end == std::string_view::npos) return fields;
    start = end + 1;
  }
}

// A field without its leading and trailing spaces and tabs.
inline std::string_view TrimBlanks(std::string_view field) {
  while (!field.empty() && (field.front() == ' ' || field.front() == '\t')) field.remove_prefix(1);
  while (!field.empty() && (field.back() == ' ' || field.back() == '\t')) field.remove_suffix(1);
  return field;
}

}  // namespace opscope
