// DESIGN's LIST syntax for sweep options: comma-separated values and inclusive ranges,
// "1,2,4,8", "512..4607" (step 1), "1024..32768:1024" (step 1024). Values are positive.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/error.h"

namespace opscope::sweep {

// Parses `text`; errors name `option` and quote the offending item. The values keep their
// order; a value listed twice is an error. At most `max_values` values.
Result<std::vector<int64_t>> ParseIntList(std::string_view option, std::string_view text,
                                          size_t max_values = size_t{1} << 24);

// Splits a list of names ("h100-sxm,h200"); empty items are an error naming `option`.
Result<std::vector<std::string>> ParseNameList(std::string_view option, std::string_view text);

}  // namespace opscope::sweep
