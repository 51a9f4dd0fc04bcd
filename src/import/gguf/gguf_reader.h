// Reads the header of a GGUF file (llama.cpp's model format) without its tensor data: the
// metadata key/values and every tensor's name, dims, ggml type and offset, each validated.
//
// The format (GGUF versions 2 and 3, little-endian; ggml's docs/gguf.md):
//
//   header     u32 magic "GGUF" (bytes 47 47 55 46), u32 version (2 or 3),
//              u64 tensor_count, u64 metadata_kv_count
//   metadata   metadata_kv_count × { string key, u32 value_type, value }
//   tensors    tensor_count × { string name, u32 n_dims (≤ 4), u64 dims[n_dims],
//                               u32 ggml_type, u64 offset }
//   padding    zeros up to a multiple of general.alignment (u32 metadata key, default 32)
//   data       each tensor's bytes at data_start + offset (offset a multiple of the alignment)
//
//   string     u64 length, then that many UTF-8 bytes (no terminator)
//   value      by value_type: 0 u8, 1 i8, 2 u16, 3 i16, 4 u32, 5 i32, 6 f32, 7 bool (one
//              byte, 0 or 1), 8 string, 9 array { u32 element type, u64 count, values },
//              10 u64, 11 i64, 12 f64. Arrays of arrays are refused, as llama.cpp does.
//
// dims[0] is ne0, the contiguous row length; a block-quantized type packs ne0 in blocks
// (ne0 must be a multiple of the block), so a tensor's bytes are
// ne1·ne2·ne3 · ne0/block · block bytes, from the format table (format/formats.def).
// Version 1 (32-bit counts) and big-endian files (the version reads byte-swapped) are refused.
//
// Every field is checked before it is used: counts and lengths against the bytes left in the
// file (no allocation a file's claim alone can size), dims non-negative with a product that
// fits 63 bits, known ggml types, ne0 a multiple of the type's block, names unique, non-empty,
// valid UTF-8 and at most 64 bytes (keys 65535), general.alignment a u32 power of two, offsets
// aligned, tensors inside the file and not overlapping. A header past kMaxHeaderBytes is
// refused. Every array element is read and checked, but an array keeps at most
// kMaxArrayElements of them (its `count` is the whole length): the long arrays are tokenizer
// vocabularies, whose values opscope never reads, and a u8 array held as variants would take
// forty times its bytes. Errors name the file and what is wrong ("model.gguf: tensor 3 'blk.0.attn_q.weight':
// ne0 = 100 is not a multiple of q4_K's 256-element block").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "format/format.h"
#include "support/error.h"

namespace opscope::import::gguf {

inline constexpr uint32_t kMagic = 0x46554747;           // "GGUF" read as a little-endian u32
inline constexpr uint64_t kDefaultAlignment = 32;        // GGUF_DEFAULT_ALIGNMENT
inline constexpr uint64_t kMaxHeaderBytes = uint64_t{1} << 29;  // real headers are < 64 MiB
inline constexpr uint64_t kMaxArrayElements = uint64_t{1} << 16;
inline constexpr size_t kMaxKeyBytes = 65535;
inline constexpr size_t kMaxTensorNameBytes = 64;
inline constexpr uint32_t kMaxDims = 4;                  // GGML_MAX_DIMS

enum class ValueType : uint32_t {
  kUint8 = 0, kInt8 = 1, kUint16 = 2, kInt16 = 3, kUint32 = 4, kInt32 = 5, kFloat32 = 6,
  kBool = 7, kString = 8, kArray = 9, kUint64 = 10, kInt64 = 11, kFloat64 = 12,
};
std::string_view ValueTypeName(ValueType t);

// One scalar: unsigned and signed integers keep their signedness, floats widen to double.
using Scalar = std::variant<uint64_t, int64_t, double, bool, std::string>;

struct Value {
  ValueType type = ValueType::kUint8;
  Scalar scalar;                      // everything but arrays
  ValueType element = ValueType::kUint8;  // arrays: the elements' type
  uint64_t count = 0;                 // arrays: the length in the file
  std::vector<Scalar> array;          // arrays: the first min(count, kMaxArrayElements)

  // An integer of any integer type (bools are not integers); nullopt for other types or an
  // unsigned value above INT64_MAX.
  std::optional<int64_t> AsInt() const;
  std::optional<double> AsFloat() const;  // f32/f64 or any integer
  const std::string* AsString() const;
  std::optional<bool> AsBool() const;
};

struct KeyValue {
  std::string key;
  Value value;
};

// One row of ggml's type enum: its id in the file, its name, and the format-table row whose
// block size and block bytes are ggml's for that type (nullopt: an id ggml removed).
struct GgmlType {
  uint32_t id;
  std::string_view name;
  std::optional<format::Format> format;
};
// Every ggml type id a GGUF file may hold (ggml.h's enum ggml_type), ascending.
std::span<const GgmlType> GgmlTypes();
const GgmlType* FindGgmlType(uint32_t id);

struct TensorInfo {
  std::string name;
  std::vector<int64_t> ne;      // ggml order: ne[0] is the contiguous row length
  uint32_t ggml_type = 0;
  format::Format format = format::Format::kF32;
  uint64_t offset = 0;          // from the start of the data section
  uint64_t elements = 0;
  uint64_t bytes = 0;           // exact bytes of its data in the file

  // Row-major shape, outermost first (the reverse of ne), as ir tensors are written.
  std::vector<int64_t> Shape() const { return {ne.rbegin(), ne.rend()}; }
};

struct GgufFile {
  std::string origin;           // the path, for messages
  uint32_t version = 0;
  uint64_t alignment = kDefaultAlignment;
  uint64_t data_offset = 0;     // where the data section starts
  uint64_t file_bytes = 0;
  std::vector<KeyValue> metadata;   // in file order
  std::vector<TensorInfo> tensors;  // in file order

  const Value* Find(std::string_view key) const;
  const TensorInfo* FindTensor(std::string_view name) const;
  uint64_t TensorBytes() const;  // Σ tensor bytes (the data section less its padding)
};

// Reads and validates the header of the file at `path`, never its tensor data.
Result<GgufFile> ReadGgufHeader(const std::string& path);

// The same over bytes in memory: `bytes` is the start of the file (at least its header) and
// `file_bytes` its whole size (tensors must lie within it). Errors start with `origin`.
Result<GgufFile> ParseGgufHeader(std::span<const uint8_t> bytes, uint64_t file_bytes,
                                 const std::string& origin);

}  // namespace opscope::import::gguf
