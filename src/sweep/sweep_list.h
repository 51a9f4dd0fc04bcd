// DESIGN's LIST syntax for sweep options: comma-separated values and inclusive ranges,
// "1,2,4,8", "512..4607" (step 1), "1024..32768:1024" (step 1024). Values are positive. And
// the --disagg list: "agg,1:1,1:3" (splits as `opscope llm --disagg P:D` takes them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llm/predicted.h"
#include "support/error.h"

namespace opscope::sweep {

// Parses `text`; errors name `option` and quote the offending item. The values keep their
// order; a value listed twice is an error. At most `max_values` values.
Result<std::vector<int64_t>> ParseIntList(std::string_view option, std::string_view text,
                                          size_t max_values = size_t{1} << 24);

// Splits a list of names ("h100-sxm,h200"); empty items are an error naming `option`.
Result<std::vector<std::string>> ParseNameList(std::string_view option, std::string_view text);

// "agg,1:1,2:6": each item "agg" (nullopt: aggregated) or P:D (llm::ParseDisagg); errors name
// --disagg and quote the item; an item listed twice is an error.
Result<std::vector<std::optional<llm::Disagg>>> ParseDisaggList(std::string_view text);

}  // namespace opscope::sweep
