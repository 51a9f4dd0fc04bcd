// Exact byte sizes from the format table, and the MMA class names.
#include "format/format.h"

#include "support/checked_math.h"
#include "support/spelling.h"

namespace opscope::format {

std::string_view MmaClassName(MmaClass c) {
  switch (c) {
    case MmaClass::kNone: return "none";
    case MmaClass::kFp64: return "fp64";
    case MmaClass::kFp32: return "fp32";
    case MmaClass::kTf32: return "tf32";
    case MmaClass::kBf16: return "bf16";
    case MmaClass::kFp16: return "fp16";
    case MmaClass::kFp8: return "fp8";
    case MmaClass::kInt8: return "int8";
    case MmaClass::kFp4: return "fp4";
  }
  return "none";
}

std::optional<MmaClass> ParseMmaClass(std::string_view name) {
  for (int i = 0; i < kNumMmaClasses; ++i) {
    const auto c = static_cast<MmaClass>(i);
    if (MmaClassName(c) == name) return c;
  }
  return std::nullopt;
}

int MmaClassBits(MmaClass c) {
  switch (c) {
    case MmaClass::kNone: return 0;
    case MmaClass::kFp64: return 64;
    case MmaClass::kFp32: return 32;
    case MmaClass::kTf32: return 19;
    case MmaClass::kBf16: return 16;
    case MmaClass::kFp16: return 16;
    case MmaClass::kFp8: return 8;
    case MmaClass::kInt8: return 8;
    case MmaClass::kFp4: return 4;
  }
  return 0;
}

std::optional<Format> ParseFormat(std::string_view name) {
  for (int i = 0; i < kNumFormats; ++i) {
    if (kFormats[i].name == name) return static_cast<Format>(i);
  }
  return std::nullopt;
}

namespace {

// Names people type for a format that are not its table name (after lower-casing and '-' ->
// '_'). One row per alias.
struct FormatAlias {
  std::string_view alias;
  Format format;
};
constexpr FormatAlias kFormatAliases[] = {
    {"fp8", Format::kFp8E4m3},          {"e4m3", Format::kFp8E4m3},
    {"float8_e4m3fn", Format::kFp8E4m3}, {"float8_e4m3", Format::kFp8E4m3},
    {"fp8e4m3", Format::kFp8E4m3},      {"e5m2", Format::kFp8E5m2},
    {"float8_e5m2", Format::kFp8E5m2},  {"fp8e5m2", Format::kFp8E5m2},
    {"bfloat16", Format::kBf16},        {"float16", Format::kF16},
    {"half", Format::kF16},             {"fp16", Format::kF16},
    {"float32", Format::kF32},          {"float", Format::kF32},
    {"fp32", Format::kF32},             {"float64", Format::kF64},
    {"double", Format::kF64},           {"fp64", Format::kF64},
    {"mx_fp4", Format::kMxfp4},         {"nv_fp4", Format::kNvfp4},
    {"mx_fp8", Format::kMxfp8},         {"mxfp8_e4m3", Format::kMxfp8},
};

std::string Normalize(std::string_view typed) {
  std::string out = Lower(typed);
  for (char& c : out) {
    if (c == '-') c = '_';
  }
  return out;
}

// bytes = ceil((elems·bits + blocks·block_bits) / 8) + tensor_bytes, all checked. The bit
// count is 128-bit so that only a byte count above 64 bits is an overflow.
std::expected<uint64_t, SizeError> Assemble(const FormatInfo& info, uint64_t elems,
                                            uint64_t blocks) {
  using U128 = unsigned __int128;
  const U128 bits = U128(elems) * static_cast<uint64_t>(info.bits) +
                    U128(blocks) * static_cast<uint64_t>(info.block_bits);
  const U128 bytes = bits / 8 + (bits % 8 != 0 ? 1 : 0) + static_cast<uint64_t>(info.tensor_bytes);
  if (bytes > UINT64_MAX) return std::unexpected(SizeError::kOverflow);
  return static_cast<uint64_t>(bytes);
}

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

// Scale blocks of `matrices` matrices of [rows, d].
std::expected<uint64_t, SizeError> Blocks(const FormatInfo& info, uint64_t matrices,
                                          uint64_t rows, uint64_t d) {
  if (info.block == 1) return 0;
  auto all_rows = CheckedMul(matrices, rows);
  if (!all_rows) return std::unexpected(SizeError::kOverflow);
  if (info.block == -1) return *all_rows;
  const auto block = static_cast<uint64_t>(info.block);
  if (info.block_rows > 1) {
    auto per_matrix =
        CheckedMul(CeilDiv(rows, static_cast<uint64_t>(info.block_rows)), CeilDiv(d, block));
    if (!per_matrix) return std::unexpected(SizeError::kOverflow);
    auto blocks = CheckedMul(matrices, *per_matrix);
    if (!blocks) return std::unexpected(SizeError::kOverflow);
    return *blocks;
  }
  if (d % block != 0) return std::unexpected(SizeError::kBlockMismatch);
  auto blocks = CheckedMul(*all_rows, d / block);
  if (!blocks) return std::unexpected(SizeError::kOverflow);
  return *blocks;
}

std::expected<uint64_t, SizeError> MatricesBytes(Format f, uint64_t matrices, uint64_t rows,
                                                 uint64_t d) {
  const FormatInfo& info = Info(f);
  auto blocks = Blocks(info, matrices, rows, d);
  if (!blocks) return std::unexpected(blocks.error());
  auto all_rows = CheckedMul(matrices, rows);
  if (!all_rows) return std::unexpected(SizeError::kOverflow);
  auto elems = CheckedMul(*all_rows, d);
  if (!elems) return std::unexpected(SizeError::kOverflow);
  return Assemble(info, *elems, *blocks);
}

}  // namespace

std::expected<uint64_t, SizeError> MatrixBytes(Format f, uint64_t rows, uint64_t d) {
  return MatricesBytes(f, 1, rows, d);
}

std::expected<uint64_t, SizeError> TensorBytes(Format f, std::span<const int64_t> dims) {
  for (int64_t v : dims) {
    if (v < 0) return std::unexpected(SizeError::kNegativeDim);
  }
  const size_t rank = dims.size();
  const uint64_t d = rank == 0 ? 1 : static_cast<uint64_t>(dims[rank - 1]);
  // 2-D weight blocks tile each matrix of the last two dims; other formats only see rows.
  const size_t batch_dims = Info(f).block_rows > 1 ? (rank >= 2 ? rank - 2 : 0)
                                                   : (rank >= 1 ? rank - 1 : 0);
  uint64_t matrices = 1;
  for (size_t i = 0; i < batch_dims; ++i) {
    auto m = CheckedMul(matrices, static_cast<uint64_t>(dims[i]));
    if (!m) return std::unexpected(SizeError::kOverflow);
    matrices = *m;
  }
  const uint64_t rows = Info(f).block_rows > 1 && rank >= 2
                            ? static_cast<uint64_t>(dims[rank - 2])
                            : 1;
  return MatricesBytes(f, matrices, rows, d);
}

std::expected<uint64_t, SizeError> GatheredRowsBytes(Format f, uint64_t rows, uint64_t d) {
  const FormatInfo& info = Info(f);
  if (info.block_rows <= 1) return MatrixBytes(f, rows, d);
  // Each gathered row carries the scale of every 2-D block it crosses.
  auto elems = CheckedMul(rows, d);
  auto blocks = CheckedMul(rows, CeilDiv(d, static_cast<uint64_t>(info.block)));
  if (!elems || !blocks) return std::unexpected(SizeError::kOverflow);
  return Assemble(info, *elems, *blocks);
}

std::optional<Format> FindFormat(std::string_view typed) {
  const std::string name = Normalize(typed);
  if (auto f = ParseFormat(name)) return f;
  for (const FormatAlias& a : kFormatAliases) {
    if (a.alias == name) return a.format;
  }
  return std::nullopt;
}

std::optional<std::string_view> NearestFormatName(std::string_view typed) {
  std::string_view names[kNumFormats];
  for (int i = 0; i < kNumFormats; ++i) names[i] = kFormats[i].name;
  return NearestName(typed, names);
}

MmaClass WeightFloorClass(Format f) {
  const FormatInfo& info = Info(f);
  switch (info.kind) {
    case Kind::kFloat:
      return info.mma;
    case Kind::kWeightOnly:
      return MmaClass::kInt8;  // engines quantize activations to 8 bits for these (llama.cpp)
    case Kind::kInt:
      return info.bits <= 8 ? MmaClass::kInt8 : MmaClass::kNone;
  }
  return MmaClass::kNone;
}

}  // namespace opscope::format
