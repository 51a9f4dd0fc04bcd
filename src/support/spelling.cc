// Case folding, edit distance and nearest-name hints (see spelling.h).
#include "support/spelling.h"

#include <algorithm>
#include <vector>

namespace opscope {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string FoldName(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '-' || c == '_' || c == '.' || c == ' ' || c == '/') continue;
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string_view> NearestName(std::string_view typed,
                                            std::span<const std::string_view> known) {
  const std::string q = Lower(typed);
  const size_t max_distance = std::max<size_t>(2, q.size() / 3);
  std::optional<std::string_view> best;
  size_t best_distance = max_distance + 1;
  for (std::string_view name : known) {
    const size_t d = EditDistance(q, Lower(name));
    if (d < best_distance) {
      best = name;
      best_distance = d;
    }
  }
  return best;
}

std::string DidYouMean(std::string_view typed, std::span<const std::string_view> known) {
  const std::optional<std::string_view> near = NearestName(typed, known);
  return near ? "; did you mean '" + std::string(*near) + "'?" : std::string();
}

}  // namespace opscope
