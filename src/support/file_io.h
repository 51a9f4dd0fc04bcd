// Reading input files and writing reports atomically (no partial report on error).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "support/error.h"

namespace opscope {

// Reads a whole regular file. Errors name the path: missing, a directory, unreadable.
// `max_bytes` refuses absurd inputs before allocating; `padding` reserves that many spare
// bytes of capacity after the contents (parsers that read past the end in SIMD blocks).
Result<std::string> ReadFile(const std::string& path, uint64_t max_bytes = uint64_t{1} << 36,
                             size_t padding = 0);

// Writes `contents` to `path` through a temporary file in the same directory and a rename,
// so a failed run never leaves a partial report. "-" writes to stdout; a device or pipe
// (/dev/null, a FIFO) is written directly; a symbolic link's target is replaced, not the link.
Result<void> WriteFileAtomic(const std::string& path, std::string_view contents);
// The same for contents in pieces, written in order (a large report formatted in parallel).
Result<void> WriteFileAtomic(const std::string& path, std::span<const std::string_view> pieces);

}  // namespace opscope
