// Reading an ONNX file without its weights: the file is memory-mapped and walked at the
// protobuf wire level; large initializer payloads are skipped (only their name, dims and
// dtype are parsed), so a 2 GB model costs a few page faults, not a 2 GB copy.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "support/error.h"

#include <onnx/onnx_pb.h>

namespace opscope::import::onnx_reader {

// A read-only memory map of a whole file (empty files map to an empty view).
class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path);
  MappedFile(MappedFile&& o) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  ~MappedFile();
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }

 private:
  MappedFile(void* data, size_t size) : data_(data), size_(size) {}
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Initializers whose serialized size is at most this keep their data (shape constants,
// small tables the shape evaluator reads); larger ones keep name, dims and dtype only.
inline constexpr size_t kKeepInitializerBytes = 4096;

// Parses `bytes` as a ModelProto, dropping large initializer payloads. Errors (not a
// protobuf, truncated, not a model) are prefixed with `origin`.
Result<onnx::ModelProto> ParseModel(std::string_view bytes, std::string_view origin);

}  // namespace opscope::import::onnx_reader
