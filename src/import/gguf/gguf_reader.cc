// The GGUF header reader (the format is documented in gguf_reader.h): a byte source over a
// file or memory, and a parser that checks every count, length, dim and offset before use.
#include "import/gguf/gguf_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>

#include "support/checked_math.h"
#include "support/utf8.h"

namespace opscope::import::gguf {

std::string_view ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kUint8: return "uint8";
    case ValueType::kInt8: return "int8";
    case ValueType::kUint16: return "uint16";
    case ValueType::kInt16: return "int16";
    case ValueType::kUint32: return "uint32";
    case ValueType::kInt32: return "int32";
    case ValueType::kFloat32: return "float32";
    case ValueType::kBool: return "bool";
    case ValueType::kString: return "string";
    case ValueType::kArray: return "array";
    case ValueType::kUint64: return "uint64";
    case ValueType::kInt64: return "int64";
    case ValueType::kFloat64: return "float64";
  }
  return "unknown";
}

std::optional<int64_t> Value::AsInt() const {
  if (type == ValueType::kArray || type == ValueType::kBool) return std::nullopt;
  if (const auto* u = std::get_if<uint64_t>(&scalar)) {
    if (*u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&scalar)) return *i;
  return std::nullopt;
}

std::optional<double> Value::AsFloat() const {
  if (type == ValueType::kArray) return std::nullopt;
  if (const auto* d = std::get_if<double>(&scalar)) return *d;
  if (auto i = AsInt()) return static_cast<double>(*i);
  return std::nullopt;
}

const std::string* Value::AsString() const {
  return type == ValueType::kString ? std::get_if<std::string>(&scalar) : nullptr;
}

std::optional<bool> Value::AsBool() const {
  if (type != ValueType::kBool) return std::nullopt;
  return std::get<bool>(scalar);
}

namespace {

using format::Format;

// ggml.h's enum ggml_type. Removed ids stay listed so a file holding one gets a precise error.
constexpr GgmlType kGgmlTypes[] = {
    {0, "f32", Format::kF32},          {1, "f16", Format::kF16},
    {2, "q4_0", Format::kQ4_0},        {3, "q4_1", Format::kQ4_1},
    {4, "q4_2", std::nullopt},         {5, "q4_3", std::nullopt},
    {6, "q5_0", Format::kQ5_0},        {7, "q5_1", Format::kQ5_1},
    {8, "q8_0", Format::kQ8_0},        {9, "q8_1", Format::kQ8_1},
    {10, "q2_K", Format::kQ2K},        {11, "q3_K", Format::kQ3K},
    {12, "q4_K", Format::kQ4K},        {13, "q5_K", Format::kQ5K},
    {14, "q6_K", Format::kQ6K},        {15, "q8_K", Format::kQ8K},
    {16, "iq2_xxs", Format::kIq2Xxs},  {17, "iq2_xs", Format::kIq2Xs},
    {18, "iq3_xxs", Format::kIq3Xxs},  {19, "iq1_s", Format::kIq1S},
    {20, "iq4_nl", Format::kIq4Nl},    {21, "iq3_s", Format::kIq3S},
    {22, "iq2_s", Format::kIq2S},      {23, "iq4_xs", Format::kIq4Xs},
    {24, "i8", Format::kInt8},         {25, "i16", Format::kInt16},
    {26, "i32", Format::kInt32},       {27, "i64", Format::kInt64},
    {28, "f64", Format::kF64},         {29, "iq1_m", Format::kIq1M},
    {30, "bf16", Format::kBf16},       {31, "q4_0_4_4", std::nullopt},
    {32, "q4_0_4_8", std::nullopt},    {33, "q4_0_8_8", std::nullopt},
    {34, "tq1_0", Format::kTq1_0},     {35, "tq2_0", Format::kTq2_0},
    {36, "iq4_nl_4_4", std::nullopt},  {37, "iq4_nl_4_8", std::nullopt},
    {38, "iq4_nl_8_8", std::nullopt},  {39, "mxfp4", Format::kMxfp4},
    {40, "nvfp4", Format::kNvfp4Ggml}, {41, "q1_0", Format::kQ1_0},
};

}  // namespace

std::span<const GgmlType> GgmlTypes() { return kGgmlTypes; }

const GgmlType* FindGgmlType(uint32_t id) {
  return id < std::size(kGgmlTypes) ? &kGgmlTypes[id] : nullptr;
}

const Value* GgufFile::Find(std::string_view key) const {
  for (const KeyValue& kv : metadata) {
    if (kv.key == key) return &kv.value;
  }
  return nullptr;
}

const TensorInfo* GgufFile::FindTensor(std::string_view name) const {
  for (const TensorInfo& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

uint64_t GgufFile::TensorBytes() const {
  uint64_t sum = 0;
  for (const TensorInfo& t : tensors) sum = SaturatingAdd(sum, t.bytes);
  return sum;
}

namespace {

// Sequential bytes of the file's beginning.
class Source {
 public:
  virtual ~Source() = default;
  // Copies the next n bytes into dst; false when the input ends first.
  virtual bool Read(void* dst, size_t n) = 0;
  // Moves past the next n bytes (the caller has checked they are in the file).
  virtual bool Skip(uint64_t n) = 0;
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  bool Read(void* dst, size_t n) override {
    if (n > bytes_.size() - pos_) return false;
    if (n > 0) std::memcpy(dst, bytes_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  bool Skip(uint64_t n) override {
    if (n > bytes_.size() - pos_) return false;
    pos_ += static_cast<size_t>(n);
    return true;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

class FileSource final : public Source {
 public:
  explicit FileSource(std::FILE* f) : f_(f) {}
  bool Read(void* dst, size_t n) override { return n == 0 || std::fread(dst, 1, n, f_) == n; }
  bool Skip(uint64_t n) override {
    return n <= static_cast<uint64_t>(LONG_MAX) &&
           std::fseek(f_, static_cast<long>(n), SEEK_CUR) == 0;
  }

 private:
  std::FILE* f_;
};

// Size of one array element of a fixed-size type, or of a string's length prefix.
uint64_t MinValueBytes(ValueType t) {
  switch (t) {
    case ValueType::kUint8:
    case ValueType::kInt8:
    case ValueType::kBool: return 1;
    case ValueType::kUint16:
    case ValueType::kInt16: return 2;
    case ValueType::kUint32:
    case ValueType::kInt32:
    case ValueType::kFloat32: return 4;
    case ValueType::kString:
    case ValueType::kUint64:
    case ValueType::kInt64:
    case ValueType::kFloat64: return 8;
    case ValueType::kArray: return 12;  // element type + count
  }
  return 1;
}

// Counts are checked against the bytes left, which a sparse file can claim without holding;
// storage grows with what is actually read past this many entries.
constexpr uint64_t kReserveLimit = 4096;
constexpr uint64_t kStringPiece = uint64_t{1} << 20;

bool KnownValueType(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::kFloat64); }

class Parser {
 public:
  Parser(Source& source, uint64_t file_bytes, const std::string& origin)
      : source_(source), file_bytes_(file_bytes), origin_(origin) {}

  Result<GgufFile> Parse() {
    GgufFile out;
    out.origin = origin_;
    out.file_bytes = file_bytes_;
    if (auto ok = Header(out); !ok) return std::unexpected(ok.error());
    if (auto ok = Metadata(out); !ok) return std::unexpected(ok.error());
    if (auto ok = Alignment(out); !ok) return std::unexpected(ok.error());
    if (auto ok = TensorInfos(out); !ok) return std::unexpected(ok.error());
    if (auto ok = Layout(out); !ok) return std::unexpected(ok.error());
    return out;
  }

 private:
  std::unexpected<Error> Fail(const std::string& what) const {
    return MakeError(origin_ + ": " + what);
  }

  uint64_t Left() const { return file_bytes_ - pos_; }

  // Reads n bytes; `what` names the item for the truncation message.
  Result<void> Take(void* dst, uint64_t n, std::string_view what) {
    if (n > Left()) {
      return Fail("truncated header: " + std::string(what) + " at byte " + std::to_string(pos_) +
                  " needs " + std::to_string(n) + " bytes, the file has " +
                  std::to_string(file_bytes_));
    }
    if (pos_ + n > kMaxHeaderBytes) {
      return Fail("header larger than " + std::to_string(kMaxHeaderBytes >> 20) +
                  " MiB (at " + std::string(what) + "), which no real model has");
    }
    if (!source_.Read(dst, static_cast<size_t>(n))) {
      return Fail("truncated header: " + std::string(what) + " at byte " + std::to_string(pos_) +
                  " could not be read");
    }
    pos_ += n;
    return {};
  }

  // Moves past n bytes, with Take's checks (array elements past kMaxArrayElements).
  Result<void> Pass(uint64_t n, std::string_view what) {
    if (n > Left() || pos_ + n > kMaxHeaderBytes || !source_.Skip(n)) {
      return Fail("truncated header: " + std::string(what) + " at byte " + std::to_string(pos_) +
                  " needs " + std::to_string(n) + " bytes, the file has " +
                  std::to_string(file_bytes_));
    }
    pos_ += n;
    return {};
  }

  template <typename T>
  Result<T> Int(std::string_view what) {
    uint8_t b[sizeof(T)];
    if (auto ok = Take(b, sizeof(T), what); !ok) return std::unexpected(ok.error());
    std::make_unsigned_t<T> v = 0;
    for (size_t i = sizeof(T); i-- > 0;) v = static_cast<decltype(v)>((v << 8) | b[i]);
    return static_cast<T>(v);
  }

  // A string of at most `max_bytes` (its length is checked before anything is allocated).
  Result<std::string> String(uint64_t max_bytes, std::string_view what) {
    auto len = Int<uint64_t>(what);
    if (!len) return std::unexpected(len.error());
    if (*len > max_bytes) {
      return Fail(std::string(what) + ": length " + std::to_string(*len) +
                  " is above the limit of " + std::to_string(max_bytes) + " bytes");
    }
    if (*len > Left()) {
      return Fail("truncated header: " + std::string(what) + " of " + std::to_string(*len) +
                  " bytes at byte " + std::to_string(pos_) + " runs past the end of the file (" +
                  std::to_string(file_bytes_) + " bytes)");
    }
    // Read in pieces: a sparse file can claim more bytes than it holds, so storage grows
    // with what is read, not with the claim.
    std::string s;
    s.reserve(static_cast<size_t>(std::min<uint64_t>(*len, kStringPiece)));
    char piece[4096];
    for (uint64_t left = *len; left > 0;) {
      const uint64_t n = std::min<uint64_t>(left, sizeof piece);
      if (auto ok = Take(piece, n, what); !ok) return std::unexpected(ok.error());
      s.append(piece, static_cast<size_t>(n));
      left -= n;
    }
    return s;
  }

  Result<void> Header(GgufFile& out) {
    if (file_bytes_ < 4) return Fail("not a GGUF file: shorter than the 4-byte magic");
    auto magic = Int<uint32_t>("magic");
    if (!magic) return std::unexpected(magic.error());
    if (*magic != kMagic) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "%08x", std::byteswap(*magic));
      return Fail(std::string("not a GGUF file: it starts with bytes ") + hex +
                  ", not \"GGUF\" (47475546)");
    }
    auto version = Int<uint32_t>("version");
    if (!version) return std::unexpected(version.error());
    const uint32_t v = *version;
    if (v == 1) {
      return Fail("GGUF version 1 is not supported (it has 32-bit counts); convert the model "
                  "again with a current llama.cpp");
    }
    if (std::byteswap(v) == 2 || std::byteswap(v) == 3) {
      return Fail("big-endian GGUF files are not supported");
    }
    if (v != 2 && v != 3) {
      return Fail("unsupported GGUF version " + std::to_string(v) + " (versions 2 and 3 are read)");
    }
    out.version = v;
    auto tensors = Int<uint64_t>("tensor count");
    if (!tensors) return std::unexpected(tensors.error());
    auto keys = Int<uint64_t>("metadata key count");
    if (!keys) return std::unexpected(keys.error());
    // The smallest key/value is 14 bytes (1-byte key, type, 1-byte value); the smallest tensor
    // info 25 (1-byte name, n_dims, type, offset).
    auto need_keys = CheckedMul(*keys, 14);
    auto need_tensors = CheckedMul(*tensors, 25);
    auto need = need_keys && need_tensors ? CheckedAdd(*need_keys, *need_tensors) : std::nullopt;
    const uint64_t room = std::min(Left(), kMaxHeaderBytes - pos_);
    if (!need || *need > room) {
      return Fail("header claims " + std::to_string(*keys) + " metadata keys and " +
                  std::to_string(*tensors) + " tensors, more than the " + std::to_string(room) +
                  " bytes after it can hold");
    }
    key_count_ = *keys;
    tensor_count_ = *tensors;
    return {};
  }

  Result<Scalar> ReadScalar(ValueType t, const std::string& what) {
    switch (t) {
      case ValueType::kUint8: return Widen<uint8_t>(what);
      case ValueType::kInt8: return Widen<int8_t>(what);
      case ValueType::kUint16: return Widen<uint16_t>(what);
      case ValueType::kInt16: return Widen<int16_t>(what);
      case ValueType::kUint32: return Widen<uint32_t>(what);
      case ValueType::kInt32: return Widen<int32_t>(what);
      case ValueType::kUint64: return Widen<uint64_t>(what);
      case ValueType::kInt64: return Widen<int64_t>(what);
      case ValueType::kFloat32: {
        auto bits = Int<uint32_t>(what);
        if (!bits) return std::unexpected(bits.error());
        return static_cast<double>(std::bit_cast<float>(*bits));
      }
      case ValueType::kFloat64: {
        auto bits = Int<uint64_t>(what);
        if (!bits) return std::unexpected(bits.error());
        return std::bit_cast<double>(*bits);
      }
      case ValueType::kBool: {
        auto b = Int<uint8_t>(what);
        if (!b) return std::unexpected(b.error());
        if (*b > 1) return Fail(what + ": bool byte is " + std::to_string(*b) + ", not 0 or 1");
        return *b == 1;
      }
      case ValueType::kString: {
        auto s = String(Left(), what);
        if (!s) return std::unexpected(s.error());
        return Scalar(std::move(*s));
      }
      case ValueType::kArray: break;
    }
    return Fail(what + ": an array inside an array, which GGUF readers do not accept");
  }

  template <typename T>
  Result<Scalar> Widen(const std::string& what) {
    auto v = Int<T>(what);
    if (!v) return std::unexpected(v.error());
    if constexpr (std::is_signed_v<T>) {
      return Scalar(static_cast<int64_t>(*v));
    } else {
      return Scalar(static_cast<uint64_t>(*v));
    }
  }

  Result<ValueType> ReadType(const std::string& what) {
    auto t = Int<uint32_t>(what);
    if (!t) return std::unexpected(t.error());
    if (!KnownValueType(*t)) return Fail(what + ": unknown value type " + std::to_string(*t));
    return static_cast<ValueType>(*t);
  }

  Result<Value> ReadValue(const std::string& what) {
    Value v;
    auto type = ReadType(what + ": value type");
    if (!type) return std::unexpected(type.error());
    v.type = *type;
    if (v.type != ValueType::kArray) {
      auto s = ReadScalar(v.type, what);
      if (!s) return std::unexpected(s.error());
      v.scalar = std::move(*s);
      return v;
    }
    auto element = ReadType(what + ": array element type");
    if (!element) return std::unexpected(element.error());
    if (*element == ValueType::kArray) {
      return Fail(what + ": an array of arrays, which GGUF readers do not accept");
    }
    v.element = *element;
    auto count = Int<uint64_t>(what + ": array length");
    if (!count) return std::unexpected(count.error());
    const auto need = CheckedMul(*count, MinValueBytes(v.element));
    if (!need || *need > Left()) {
      return Fail(what + ": array of " + std::to_string(*count) + " " +
                  std::string(ValueTypeName(v.element)) + " values, more than the " +
                  std::to_string(Left()) + " bytes left in the file hold");
    }
    v.count = *count;
    v.array.reserve(static_cast<size_t>(std::min(*count, kReserveLimit)));
    const std::string element_what = what + ": array element";
    for (uint64_t i = 0; i < *count; ++i) {
      if (i >= kMaxArrayElements) {
        if (auto ok = PassScalar(v.element, element_what); !ok) return std::unexpected(ok.error());
        continue;
      }
      auto s = ReadScalar(v.element, element_what);
      if (!s) return std::unexpected(s.error());
      v.array.push_back(std::move(*s));
    }
    return v;
  }

  // Checks and moves past one array element that is not kept.
  Result<void> PassScalar(ValueType t, const std::string& what) {
    if (t == ValueType::kBool) {
      auto b = ReadScalar(t, what);
      if (!b) return std::unexpected(b.error());
      return {};
    }
    if (t != ValueType::kString) return Pass(MinValueBytes(t), what);
    auto len = Int<uint64_t>(what);
    if (!len) return std::unexpected(len.error());
    return Pass(*len, what);
  }

  Result<void> Metadata(GgufFile& out) {
    std::map<std::string, uint64_t, std::less<>> seen;
    out.metadata.reserve(static_cast<size_t>(std::min<uint64_t>(key_count_, kReserveLimit)));
    for (uint64_t i = 0; i < key_count_; ++i) {
      const std::string item = "metadata key " + std::to_string(i);
      auto key = String(kMaxKeyBytes, item);
      if (!key) return std::unexpected(key.error());
      if (key->empty()) return Fail(item + ": empty key");
      if (!IsValidUtf8(*key)) return Fail(item + ": key '" + EscapeBytes(*key) + "' is not UTF-8");
      const std::string what = item + " '" + *key + "'";
      if (auto [it, fresh] = seen.emplace(*key, i); !fresh) {
        return Fail(what + ": duplicate of metadata key " + std::to_string(it->second));
      }
      auto value = ReadValue(what);
      if (!value) return std::unexpected(value.error());
      out.metadata.push_back({std::move(*key), std::move(*value)});
    }
    return {};
  }

  Result<void> Alignment(GgufFile& out) {
    const Value* a = out.Find("general.alignment");
    if (a == nullptr) return {};
    if (a->type != ValueType::kUint32) {
      return Fail("metadata 'general.alignment': expected a uint32, got " +
                  std::string(ValueTypeName(a->type)));
    }
    const uint64_t v = std::get<uint64_t>(a->scalar);
    if (v == 0 || !std::has_single_bit(v)) {
      return Fail("metadata 'general.alignment': " + std::to_string(v) +
                  " is not a power of two");
    }
    out.alignment = v;
    return {};
  }

  Result<TensorInfo> ReadTensorInfo(uint64_t index) {
    TensorInfo t;
    const std::string item = "tensor " + std::to_string(index);
    auto name = String(kMaxTensorNameBytes, item + ": name");
    if (!name) return std::unexpected(name.error());
    if (name->empty()) return Fail(item + ": empty name");
    if (!IsValidUtf8(*name)) return Fail(item + ": name '" + EscapeBytes(*name) + "' is not UTF-8");
    t.name = std::move(*name);
    const std::string what = item + " '" + t.name + "'";
    if (auto ok = ReadDims(t, what); !ok) return std::unexpected(ok.error());
    auto type = Int<uint32_t>(what + ": ggml type");
    if (!type) return std::unexpected(type.error());
    t.ggml_type = *type;
    const GgmlType* g = FindGgmlType(*type);
    if (g == nullptr) {
      return Fail(what + ": unknown ggml type " + std::to_string(*type) + " (known: 0 to " +
                  std::to_string(std::size(kGgmlTypes) - 1) + ")");
    }
    if (!g->format) {
      return Fail(what + ": ggml type " + std::to_string(*type) + " (" + std::string(g->name) +
                  ") was removed from GGUF by ggml; convert the model again");
    }
    t.format = *g->format;
    auto offset = Int<uint64_t>(what + ": offset");
    if (!offset) return std::unexpected(offset.error());
    t.offset = *offset;
    return Size(std::move(t), what, *g);
  }

  // n_dims and the dims, whose product must fit 63 bits.
  Result<void> ReadDims(TensorInfo& t, const std::string& what) {
    auto n_dims = Int<uint32_t>(what + ": n_dims");
    if (!n_dims) return std::unexpected(n_dims.error());
    if (*n_dims > kMaxDims) {
      return Fail(what + ": " + std::to_string(*n_dims) + " dims, more than ggml's " +
                  std::to_string(kMaxDims));
    }
    uint64_t elements = 1;
    for (uint32_t d = 0; d < *n_dims; ++d) {
      auto ne = Int<uint64_t>(what + ": ne[" + std::to_string(d) + "]");
      if (!ne) return std::unexpected(ne.error());
      auto product = CheckedMul(elements, *ne);
      if (*ne > static_cast<uint64_t>(INT64_MAX) || !product ||
          *product > static_cast<uint64_t>(INT64_MAX)) {
        return Fail(what + ": ne[" + std::to_string(d) + "] = " + std::to_string(*ne) +
                    " overflows the element count");
      }
      elements = *product;
      t.ne.push_back(static_cast<int64_t>(*ne));
    }
    t.elements = elements;
    return {};
  }

  // The tensor's bytes: ne0 whole blocks of its type, times the other dims.
  Result<TensorInfo> Size(TensorInfo t, const std::string& what, const GgmlType& g) {
    const int block = std::max(format::Info(t.format).block, 1);
    const int64_t ne0 = t.ne.empty() ? 1 : t.ne[0];
    if (ne0 % block != 0) {
      return Fail(what + ": ne0 = " + std::to_string(ne0) + " is not a multiple of " +
                  std::string(g.name) + "'s " + std::to_string(block) + "-element block");
    }
    auto bytes = format::TensorBytes(t.format, t.Shape());
    if (!bytes) return Fail(what + ": its byte size overflows 64 bits");
    t.bytes = *bytes;
    return t;
  }

  Result<void> TensorInfos(GgufFile& out) {
    std::map<std::string, uint64_t, std::less<>> seen;
    out.tensors.reserve(static_cast<size_t>(std::min<uint64_t>(tensor_count_, kReserveLimit)));
    for (uint64_t i = 0; i < tensor_count_; ++i) {
      auto t = ReadTensorInfo(i);
      if (!t) return std::unexpected(t.error());
      if (auto [it, fresh] = seen.emplace(t->name, i); !fresh) {
        return Fail("tensor " + std::to_string(i) + " '" + t->name + "': duplicate of tensor " +
                    std::to_string(it->second));
      }
      out.tensors.push_back(std::move(*t));
    }
    return {};
  }

  // The data section and every tensor's place in it.
  Result<void> Layout(GgufFile& out) {
    const uint64_t a = out.alignment;
    const auto padded = CheckedAdd(pos_, a - 1);
    if (!padded) return Fail("the data section's offset overflows");
    out.data_offset = *padded / a * a;
    std::vector<size_t> order(out.tensors.size());
    std::iota(order.begin(), order.end(), size_t{0});
    for (const TensorInfo& t : out.tensors) {
      const std::string what = "tensor '" + t.name + "'";
      if (t.offset % a != 0) {
        return Fail(what + ": offset " + std::to_string(t.offset) +
                    " is not a multiple of the alignment " + std::to_string(a));
      }
      auto begin = CheckedAdd(out.data_offset, t.offset);
      auto end = begin ? CheckedAdd(*begin, t.bytes) : std::nullopt;
      if (!end || *end > file_bytes_) {
        return Fail(what + ": its " + std::to_string(t.bytes) + " bytes at data offset " +
                    std::to_string(t.offset) + " end past the end of the file (" +
                    std::to_string(file_bytes_) + " bytes, data from byte " +
                    std::to_string(out.data_offset) + ")");
      }
    }
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      return out.tensors[x].offset < out.tensors[y].offset;
    });
    for (size_t k = 1; k < order.size(); ++k) {
      const TensorInfo& prev = out.tensors[order[k - 1]];
      const TensorInfo& next = out.tensors[order[k]];
      if (prev.offset + prev.bytes > next.offset) {  // both ends were checked in the file
        return Fail("tensor '" + next.name + "' at data offset " + std::to_string(next.offset) +
                    " overlaps tensor '" + prev.name + "' (" + std::to_string(prev.offset) +
                    " + " + std::to_string(prev.bytes) + " bytes)");
      }
    }
    return {};
  }

  Source& source_;
  uint64_t file_bytes_;
  const std::string& origin_;
  uint64_t pos_ = 0;
  uint64_t key_count_ = 0, tensor_count_ = 0;
};

}  // namespace

Result<GgufFile> ParseGgufHeader(std::span<const uint8_t> bytes, uint64_t file_bytes,
                                 const std::string& origin) {
  MemorySource source(bytes);
  return Parser(source, file_bytes, origin).Parse();
}

Result<GgufFile> ReadGgufHeader(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return MakeError(path + ": cannot open: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return MakeError(path + ": is a directory, not a GGUF file");
  if (!S_ISREG(st.st_mode)) return MakeError(path + ": is not a regular file");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return MakeError(path + ": cannot open: " + std::strerror(errno));
  FileSource source(f.get());
  return Parser(source, static_cast<uint64_t>(st.st_size), path).Parse();
}

}  // namespace opscope::import::gguf
