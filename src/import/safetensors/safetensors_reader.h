// Reads the header of a .safetensors file (Hugging Face's tensor format) without its data:
// every tensor's dtype, shape and byte range, each validated, and its exact bytes.
//
// The format (huggingface/safetensors, docs and the reference implementation's validation):
//
//   u64        N, little-endian: the header's length in bytes (at most 100,000,000)
//   N bytes    a UTF-8 JSON object, starting with '{' (trailing spaces allowed as padding):
//                { "__metadata__": { "<key>": "<string>", ... },          (optional)
//                  "<tensor name>": { "dtype": "BF16", "shape": [4096, 11008],
//                                     "data_offsets": [BEGIN, END] }, ... }
//   the rest   the data buffer; a tensor's bytes are [BEGIN, END) of it, row-major
//
// A tensor holds Π shape elements of bits(dtype) each; END − BEGIN must be exactly that many
// bytes (sub-byte dtypes pack, and a total that is not whole bytes is refused). The tensors
// tile the buffer: sorted by BEGIN, the first starts at 0, each starts where the previous one
// ends, and the last ends at the end of the file. Names are unique and non-empty; dims are
// non-negative with a product that fits 63 bits. Errors name the file and the tensor
// ("model.safetensors: tensor 'lm_head.weight': dtype BF16 and shape [151936, 4096] make
// 1244659712 bytes, data_offsets span 1244659710").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "format/format.h"
#include "support/error.h"

namespace opscope::import::safetensors {

inline constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // safetensors' MAX_HEADER_SIZE

// One row per dtype a safetensors header may name (safetensors' Dtype enum, version 0.8).
struct Dtype {
  std::string_view name;
  int bits;                             // per element
  std::optional<format::Format> plain;  // the format row of an unscaled tensor of it, if any
  bool is_float;                        // a float type (a quantization scale can be one)
};
std::span<const Dtype> Dtypes();
const Dtype* FindDtype(std::string_view name);

struct TensorEntry {
  std::string name;
  const Dtype* dtype = nullptr;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // in the data buffer
  uint64_t elements = 0;
  uint64_t bytes = 0;           // end − begin = elements · bits / 8
};

struct SafetensorsFile {
  std::string origin;
  uint64_t header_bytes = 0;   // N
  uint64_t file_bytes = 0;
  std::vector<std::pair<std::string, std::string>> metadata;  // __metadata__, in order
  std::vector<TensorEntry> tensors;                           // in header order

  uint64_t DataOffset() const { return 8 + header_bytes; }
  uint64_t TensorBytes() const;  // Σ tensor bytes = the data buffer's size
  const TensorEntry* Find(std::string_view name) const;
};

// Reads and validates the header of the file at `path` (8 + N bytes), never its data.
Result<SafetensorsFile> ReadSafetensorsHeader(const std::string& path);

// The same over bytes in memory: `bytes` starts the file (at least 8 + N bytes) and
// `file_bytes` is its whole size. Errors start with `origin`.
Result<SafetensorsFile> ParseSafetensorsHeader(std::span<const uint8_t> bytes,
                                               uint64_t file_bytes, const std::string& origin);

}  // namespace opscope::import::safetensors
