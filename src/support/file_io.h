// Reading input files and writing reports atomically (no partial report on error).
#pragma once

#include <cstddef>
#include <cstdint>
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

// A whole regular file, readable in place with `padding` bytes of zeros after its end (parsers
// that read past the end in SIMD blocks): on Linux the file's page-cache pages mapped read-only
// and populated at once — no copy, no zero-filled buffer, no page fault per 4 KiB — elsewhere
// (or where the file cannot be mapped) a buffer read as ReadFile reads it.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  // Bytes readable from data(): size() plus at least the padding asked for.
  size_t capacity() const { return capacity_; }
  std::string_view view() const { return std::string_view(data_, size_); }

 private:
  friend Result<MappedFile> MapFile(const std::string& path, uint64_t max_bytes, size_t padding);
  const char* data_ = "";
  size_t size_ = 0, capacity_ = 0;
  void* mapping_ = nullptr;  // the whole mapping (munmap on destruction), or null
  size_t mapping_bytes_ = 0;
  std::string buffer_;       // the fallback's copy
};

// Maps `path` (errors as ReadFile's: missing, a directory, not a regular file, too large).
Result<MappedFile> MapFile(const std::string& path, uint64_t max_bytes = uint64_t{1} << 36,
                           size_t padding = 0);

// Writes `contents` to `path` through a temporary file in the same directory and a rename,
// so a failed run never leaves a partial report. "-" writes to stdout; a device or pipe
// (/dev/null, a FIFO) is written directly; a symbolic link's target is replaced, not the link.
Result<void> WriteFileAtomic(const std::string& path, std::string_view contents);
// The same for contents in pieces, written in order (a large report formatted in parallel).
Result<void> WriteFileAtomic(const std::string& path, std::span<const std::string_view> pieces);

}  // namespace opscope
