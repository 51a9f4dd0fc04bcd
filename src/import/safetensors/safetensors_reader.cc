// The safetensors header reader (the format is documented in safetensors_reader.h).
#include "import/safetensors/safetensors_reader.h"

#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <numeric>

#include "support/checked_math.h"

namespace opscope::import::safetensors {
namespace {

using format::Format;

constexpr Dtype kDtypes[] = {
    {"BOOL", 8, Format::kBool, false},     {"F4", 4, std::nullopt, true},
    {"F6_E2M3", 6, std::nullopt, true},    {"F6_E3M2", 6, std::nullopt, true},
    {"U8", 8, Format::kUint8, false},      {"I8", 8, Format::kInt8, false},
    {"F8_E5M2", 8, std::nullopt, true},    {"F8_E4M3", 8, std::nullopt, true},
    {"F8_E8M0", 8, std::nullopt, true},    {"F8_E4M3FNUZ", 8, std::nullopt, true},
    {"F8_E5M2FNUZ", 8, std::nullopt, true}, {"I16", 16, Format::kInt16, false},
    {"U16", 16, std::nullopt, false},      {"F16", 16, Format::kF16, true},
    {"BF16", 16, Format::kBf16, true},     {"I32", 32, Format::kInt32, false},
    {"U32", 32, std::nullopt, false},      {"F32", 32, Format::kF32, true},
    {"C64", 64, std::nullopt, true},       {"F64", 64, Format::kF64, true},
    {"I64", 64, Format::kInt64, false},    {"U64", 64, std::nullopt, false},
};

std::string Lower(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  while (!s.empty() && (s.back() == '.' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

class HeaderParser {
 public:
  HeaderParser(const std::string& origin, SafetensorsFile& out) : origin_(origin), out_(out) {}

  std::unexpected<Error> Fail(const std::string& why) const {
    return MakeError(origin_ + ": " + why);
  }

  Result<void> Parse(std::string_view json) {
    const size_t first = json.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || json[first] != '{') {
      return Fail("header is not a JSON object (it must start with '{')");
    }
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (auto code = parser.parse(json.data(), json.size()).get(root); code != simdjson::SUCCESS) {
      return Fail("header is not valid JSON: " + Lower(simdjson::error_message(code)));
    }
    simdjson::dom::object object;
    if (root.get_object().get(object) != simdjson::SUCCESS) {
      return Fail("header is not a JSON object");
    }
    std::map<std::string, size_t, std::less<>> seen;
    bool metadata_seen = false;
    for (auto [key, value] : object) {
      if (key == "__metadata__") {
        if (metadata_seen) return Fail("'__metadata__' appears twice");
        metadata_seen = true;
        if (auto ok = Metadata(value); !ok) return ok;
        continue;
      }
      if (key.empty()) return Fail("a tensor has an empty name");
      if (auto [it, fresh] = seen.emplace(std::string(key), out_.tensors.size()); !fresh) {
        return Fail("tensor '" + std::string(key) + "' appears twice");
      }
      auto t = Tensor(std::string(key), value);
      if (!t) return std::unexpected(t.error());
      out_.tensors.push_back(std::move(*t));
    }
    return {};
  }

  Result<void> Metadata(simdjson::dom::element value) {
    simdjson::dom::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) {
      return Fail("'__metadata__' is not an object of strings");
    }
    for (auto [key, v] : object) {
      std::string_view s;
      if (v.get_string().get(s) != simdjson::SUCCESS) {
        return Fail("'__metadata__' entry '" + std::string(key) + "' is not a string");
      }
      out_.metadata.emplace_back(std::string(key), std::string(s));
    }
    return {};
  }

  Result<TensorEntry> Tensor(std::string name, simdjson::dom::element value) {
    TensorEntry t;
    t.name = std::move(name);
    const std::string what = "tensor '" + t.name + "'";
    simdjson::dom::object object;
    if (value.get_object().get(object) != simdjson::SUCCESS) return Fail(what + ": not an object");
    std::string_view dtype;
    if (object["dtype"].get_string().get(dtype) != simdjson::SUCCESS) {
      return Fail(what + ": 'dtype' is missing or not a string");
    }
    t.dtype = FindDtype(dtype);
    if (t.dtype == nullptr) {
      return Fail(what + ": unknown dtype \"" + std::string(dtype.substr(0, 32)) + "\"");
    }
    if (auto ok = Shape(object, what, t); !ok) return std::unexpected(ok.error());
    if (auto ok = Offsets(object, what, t); !ok) return std::unexpected(ok.error());
    // bytes = elements · bits / 8, whole bytes only.
    const uint64_t elements = t.elements;
    const unsigned __int128 bits =
        static_cast<unsigned __int128>(elements) * static_cast<uint64_t>(t.dtype->bits);
    if (bits % 8 != 0) {
      return Fail(what + ": " + std::to_string(elements) + " elements of " +
                  std::string(t.dtype->name) + " are not a whole number of bytes");
    }
    t.bytes = static_cast<uint64_t>(bits / 8);
    if (t.bytes != t.end - t.begin) {
      return Fail(what + ": dtype " + std::string(t.dtype->name) + " and shape " +
                  ShapeText(t.shape) + " make " + std::to_string(t.bytes) +
                  " bytes, data_offsets span " + std::to_string(t.end - t.begin));
    }
    return t;
  }

  // "shape": non-negative integers whose product fits 63 bits.
  Result<void> Shape(simdjson::dom::object object, const std::string& what, TensorEntry& t) {
    simdjson::dom::array shape;
    if (object["shape"].get_array().get(shape) != simdjson::SUCCESS) {
      return Fail(what + ": 'shape' is missing or not a list");
    }
    uint64_t elements = 1;
    for (simdjson::dom::element d : shape) {
      uint64_t v = 0;
      auto product = d.get_uint64().get(v) == simdjson::SUCCESS ? CheckedMul(elements, v)
                                                                 : std::nullopt;
      if (!product || v > static_cast<uint64_t>(INT64_MAX) ||
          *product > static_cast<uint64_t>(INT64_MAX)) {
        return Fail(what + ": 'shape' entry " + std::to_string(t.shape.size()) +
                    " is not a non-negative integer whose product with the others fits 63 bits");
      }
      elements = *product;
      t.shape.push_back(static_cast<int64_t>(v));
    }
    t.elements = elements;
    return {};
  }

  // "data_offsets": [begin, end] with begin <= end.
  Result<void> Offsets(simdjson::dom::object object, const std::string& what, TensorEntry& t) {
    simdjson::dom::array offsets;
    uint64_t bounds[2] = {0, 0};
    size_t n = 0;
    if (object["data_offsets"].get_array().get(offsets) == simdjson::SUCCESS) {
      for (simdjson::dom::element o : offsets) {
        if (n < 2 && o.get_uint64().get(bounds[n]) != simdjson::SUCCESS) n = 3;
        ++n;
      }
    }
    if (n != 2 || bounds[1] < bounds[0]) {
      return Fail(what + ": 'data_offsets' is not a list [begin, end] of integers with "
                         "begin <= end");
    }
    t.begin = bounds[0];
    t.end = bounds[1];
    return {};
  }

  // The tensors tile the data buffer, with no gap and no overlap.
  Result<void> Tiling() {
    const uint64_t buffer = out_.file_bytes - out_.DataOffset();
    std::vector<size_t> order(out_.tensors.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const TensorEntry &x = out_.tensors[a], &y = out_.tensors[b];
      return x.begin != y.begin ? x.begin < y.begin : a < b;  // header order among equals
    });
    uint64_t at = 0;
    const TensorEntry* prev = nullptr;
    for (size_t i : order) {
      const TensorEntry& t = out_.tensors[i];
      if (t.begin != at) {
        const std::string after = prev ? "tensor '" + prev->name + "' ends" : "the buffer starts";
        return Fail("tensor '" + t.name + "' starts at data offset " + std::to_string(t.begin) +
                    ", but " + after + " at " + std::to_string(at) +
                    (t.begin > at ? " (a gap)" : " (they overlap)"));
      }
      at = t.end;
      prev = &t;
    }
    if (at != buffer) {
      return Fail("the tensors end at data offset " + std::to_string(at) + ", but the file holds " +
                  std::to_string(buffer) + " bytes of data after its " +
                  std::to_string(out_.header_bytes) + "-byte header");
    }
    return {};
  }

 private:
  const std::string& origin_;
  SafetensorsFile& out_;
};

// The header length (first 8 bytes), checked against the limit and the file's size.
Result<uint64_t> HeaderLength(std::span<const uint8_t> first8, uint64_t file_bytes,
                              const std::string& origin) {
  if (file_bytes < 8 || first8.size() < 8) {
    return MakeError(origin + ": not a safetensors file: shorter than the 8-byte header length");
  }
  uint64_t n = 0;
  for (size_t i = 8; i-- > 0;) n = (n << 8) | first8[i];
  if (n > kMaxHeaderBytes) {
    return MakeError(origin + ": header length " + std::to_string(n) + " is above safetensors' " +
                     "limit of " + std::to_string(kMaxHeaderBytes) + " bytes");
  }
  if (n > file_bytes - 8) {
    return MakeError(origin + ": truncated: the header length says " + std::to_string(n) +
                     " bytes, the file has " + std::to_string(file_bytes - 8) + " after it");
  }
  return n;
}

}  // namespace

std::span<const Dtype> Dtypes() { return kDtypes; }

const Dtype* FindDtype(std::string_view name) {
  for (const Dtype& d : kDtypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

uint64_t SafetensorsFile::TensorBytes() const {
  uint64_t sum = 0;
  for (const TensorEntry& t : tensors) sum = SaturatingAdd(sum, t.bytes);
  return sum;
}

const TensorEntry* SafetensorsFile::Find(std::string_view name) const {
  for (const TensorEntry& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Result<SafetensorsFile> ParseSafetensorsHeader(std::span<const uint8_t> bytes,
                                               uint64_t file_bytes, const std::string& origin) {
  auto n = HeaderLength(bytes.first(std::min<size_t>(bytes.size(), 8)), file_bytes, origin);
  if (!n) return std::unexpected(n.error());
  if (bytes.size() - 8 < *n) {
    return MakeError(origin + ": truncated: the header length says " + std::to_string(*n) +
                     " bytes, " + std::to_string(bytes.size() - 8) + " were read");
  }
  SafetensorsFile out;
  out.origin = origin;
  out.header_bytes = *n;
  out.file_bytes = file_bytes;
  HeaderParser parser(origin, out);
  const std::string_view json(reinterpret_cast<const char*>(bytes.data() + 8),
                              static_cast<size_t>(*n));
  if (auto ok = parser.Parse(json); !ok) return std::unexpected(ok.error());
  if (auto ok = parser.Tiling(); !ok) return std::unexpected(ok.error());
  return out;
}

Result<SafetensorsFile> ReadSafetensorsHeader(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return MakeError(path + ": cannot open: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) return MakeError(path + ": is a directory, not a safetensors file");
  if (!S_ISREG(st.st_mode)) return MakeError(path + ": is not a regular file");
  const auto file_bytes = static_cast<uint64_t>(st.st_size);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return MakeError(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> head(8);
  const size_t got = std::fread(head.data(), 1, 8, f.get());
  auto n = HeaderLength(std::span(head).first(got), file_bytes, path);
  if (!n) return std::unexpected(n.error());
  head.resize(8 + static_cast<size_t>(*n));
  if (std::fread(head.data() + 8, 1, static_cast<size_t>(*n), f.get()) != *n) {
    return MakeError(path + ": read error in the header");
  }
  return ParseSafetensorsHeader(head, file_bytes, path);
}

}  // namespace opscope::import::safetensors
