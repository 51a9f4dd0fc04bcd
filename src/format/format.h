// Element formats (dtypes and block-scaled quantized formats) and their exact byte sizes.
// The table itself is formats.def; this header is its typed view.
#pragma once

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string_view>

#include "format/mma_class.h"

namespace opscope::format {

enum class Format : uint8_t {
#define OPSCOPE_FORMAT(e, name, bits, block, brows, block_bits, tensor_bytes, mma, kind) e,
#include "format/formats.def"
#undef OPSCOPE_FORMAT
};

enum class Kind : uint8_t { kFloat, kInt, kWeightOnly };

struct FormatInfo {
  std::string_view name;
  int bits;          // bits per element of payload
  int block;         // elements per scale block along the last dim; 1 = none; -1 = per row
  int block_rows;    // rows per block for 2-D weight blocks (1 otherwise)
  int block_bits;    // scale (+ zero point) bits per block
  int tensor_bytes;  // per-tensor scale bytes
  MmaClass mma;      // class when this format is the activation operand
  Kind kind;
};

inline constexpr FormatInfo kFormats[] = {
#define OPSCOPE_FORMAT(e, n, bits, block, brows, block_bits, tensor_bytes, mma, kind) \
  {n, bits, block, brows, block_bits, tensor_bytes, MmaClass::mma, Kind::kind},
#include "format/formats.def"
#undef OPSCOPE_FORMAT
};
inline constexpr int kNumFormats = static_cast<int>(sizeof(kFormats) / sizeof(kFormats[0]));
static_assert(kNumFormats == static_cast<int>(Format::kNvfp4Ggml) + 1,
              "formats.def and the Format enum must have the same rows");

inline const FormatInfo& Info(Format f) { return kFormats[static_cast<int>(f)]; }
inline std::string_view FormatName(Format f) { return Info(f).name; }
// The exact table name (graph JSON, ONNX): "fp8_e4m3", never "FP8".
std::optional<Format> ParseFormat(std::string_view name);
// A format as people type it in options: case-insensitive, "-" for "_", and the common
// aliases (fp8 / e4m3 / float8_e4m3fn -> fp8_e4m3, bfloat16 -> bf16, half / float16 / fp16 ->
// f16, float / float32 / fp32 -> f32, ...; see kFormatAliases in format.cc). Ambiguous words
// ("fp4": nvfp4 or mxfp4?, "int4": which group?) are not aliases.
std::optional<Format> FindFormat(std::string_view typed);
// The table name nearest to `typed` by edit distance, for "did you mean" hints.
std::optional<std::string_view> NearestFormatName(std::string_view typed);

enum class SizeError : uint8_t {
  kBlockMismatch,  // last dim not a multiple of the format's block
  kOverflow,       // the byte count does not fit 64 bits
  kNegativeDim,
};

// Bytes of a tensor with these concrete dims (rank 0 is one element). Exact integers.
std::expected<uint64_t, SizeError> TensorBytes(Format f, std::span<const int64_t> dims);

// Bytes of a [rows, d] matrix.
std::expected<uint64_t, SizeError> MatrixBytes(Format f, uint64_t rows, uint64_t d);

// Bytes read when gathering `rows` rows of length d out of a larger table: each row with its
// own scales (for 128×128 weight blocks, the scales of the blocks the row crosses).
std::expected<uint64_t, SizeError> GatheredRowsBytes(Format f, uint64_t rows, uint64_t d);

// The fastest class an engine can run a weight of this format at when it quantizes the
// activations to match (the fused floor): int8 for ≤ 8-bit integer and weight-only formats,
// fp8 for fp8 weights, fp4 for fp4 weights, the float class itself for plain floats.
MmaClass WeightFloorClass(Format f);

// True for plain or scaled float formats (everything with a float MMA class).
inline bool IsFloat(Format f) { return Info(f).kind == Kind::kFloat; }

}  // namespace opscope::format
