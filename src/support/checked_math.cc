// Strict integer parsing for command-line values and dims.
#include "support/checked_math.h"

#include <charconv>

namespace opscope {

std::optional<int64_t> ParseNonNegativeInt(const char* begin, const char* end) {
  if (begin == end || *begin < '0' || *begin > '9') return std::nullopt;
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

}  // namespace opscope
