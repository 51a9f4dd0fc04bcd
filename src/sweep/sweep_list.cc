// Parsing DESIGN's LIST syntax (see sweep_list.h).
#include "sweep/sweep_list.h"

#include <charconv>
#include <optional>
#include <string>
#include <unordered_set>

#include "support/split.h"

namespace opscope::sweep {
namespace {

std::optional<int64_t> ParsePositive(std::string_view s) {
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v <= 0) {
    return std::nullopt;
  }
  return v;
}

// Whether `s` is an integer that int64 cannot hold ("99999999999999999999").
bool OutOfRange(std::string_view s) {
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc::result_out_of_range && r.ptr == s.data() + s.size();
}

}  // namespace

Result<std::vector<int64_t>> ParseIntList(std::string_view option, std::string_view text,
                                          size_t max_values) {
  const std::string opt(option);
  auto bad = [&](std::string_view item, const std::string& why) {
    return MakeError("option '" + opt + "': '" + std::string(item) + "' " + why +
                     " (LIST: 1,2,4,8 or 512..4607 or 1024..32768:1024)");
  };
  std::vector<int64_t> values;
  std::unordered_set<int64_t> seen;
  auto add = [&](int64_t v, std::string_view item) -> Result<void> {
    if (!seen.insert(v).second) return bad(item, "repeats " + std::to_string(v));
    if (values.size() >= max_values) {
      return bad(item, "makes more than " + std::to_string(max_values) + " values");
    }
    values.push_back(v);
    return {};
  };
  for (std::string_view item : SplitFields(text, ',')) {
    const size_t dots = item.find("..");
    if (dots == std::string_view::npos) {
      const auto v = ParsePositive(item);
      if (!v && OutOfRange(item)) return bad(item, "is outside the 64-bit integer range");
      if (!v) return bad(item, "is not a positive integer");
      if (auto ok = add(*v, item); !ok) return std::unexpected(ok.error());
      continue;
    }
    std::string_view last = item.substr(dots + 2);
    int64_t step = 1;
    if (const size_t colon = last.find(':'); colon != std::string_view::npos) {
      const auto s = ParsePositive(last.substr(colon + 1));
      if (!s) return bad(item, "has a step that is not a positive integer");
      step = *s;
      last = last.substr(0, colon);
    }
    const auto lo = ParsePositive(item.substr(0, dots));
    const auto hi = ParsePositive(last);
    if (!lo || !hi) return bad(item, "is not a range of positive integers");
    if (*hi < *lo) return bad(item, "is a range whose end is below its start");
    for (int64_t v = *lo; v <= *hi; v += step) {
      if (auto ok = add(v, item); !ok) return std::unexpected(ok.error());
      if (*hi - v < step) break;  // no overflow past the end
    }
  }
  return values;
}

Result<std::vector<std::string>> ParseNameList(std::string_view option, std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view item : SplitFields(text, ',')) {
    if (item.empty()) {
      return MakeError("option '" + std::string(option) + "': empty item in '" +
                       std::string(text) + "'");
    }
    out.emplace_back(item);
  }
  return out;
}

Result<std::vector<std::optional<llm::Disagg>>> ParseDisaggList(std::string_view text) {
  auto items = ParseNameList("--disagg", text);
  if (!items) return std::unexpected(items.error());
  std::vector<std::optional<llm::Disagg>> out;
  std::unordered_set<std::string> seen;
  for (const std::string& item : *items) {
    if (!seen.insert(item).second) {
      return MakeError("option '--disagg': '" + item + "' is listed twice");
    }
    if (item == "agg") {
      out.emplace_back(std::nullopt);
      continue;
    }
    auto d = llm::ParseDisagg(item);
    if (!d) return std::unexpected(d.error());
    out.emplace_back(*d);
  }
  return out;
}

}  // namespace opscope::sweep
