// Names as people type them: case and separators folded, and the nearest known name by edit
// distance for "did you mean" hints. Used by the device, format and preset lookups.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace opscope {

// ASCII lower case.
std::string Lower(std::string_view s);

// Lower case without '-', '_', '.', ' ' and '/': "H100_SXM" and "h100-sxm" fold alike.
std::string FoldName(std::string_view s);

// Levenshtein distance (insertions, deletions, substitutions each cost 1).
size_t EditDistance(std::string_view a, std::string_view b);

// The known name nearest to `typed` (compared in lower case), when it is within a third of
// the typed length (at least 2 edits); ties keep the first in `known`.
std::optional<std::string_view> NearestName(std::string_view typed,
                                            std::span<const std::string_view> known);

// "; did you mean 'h100-sxm'?" for the nearest name, or "" when nothing is near.
std::string DidYouMean(std::string_view typed, std::span<const std::string_view> known);

}  // namespace opscope
