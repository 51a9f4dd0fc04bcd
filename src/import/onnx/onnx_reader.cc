// Memory-mapped, weight-skipping ModelProto parsing (see onnx_reader.h).
//
// Protobuf wire format: each field is a varint tag (field_number << 3 | wire_type) followed by
// a varint (type 0), 8 bytes (1), a varint length and that many bytes (2) or 4 bytes (5).
// Groups (3, 4) are not used by onnx.proto and are rejected.
#include "import/onnx/onnx_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

namespace opscope::import::onnx_reader {
namespace {

struct Field {
  uint32_t number = 0;
  uint8_t wire = 0;
  size_t begin = 0;    // the tag's first byte
  size_t payload = 0;  // the first byte after the tag (after the length for type 2)
  size_t end = 0;      // one past the field
};

// Walks the fields of one serialized message.
class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : p_(reinterpret_cast<const uint8_t*>(bytes.data())), n_(bytes.size()) {}

  bool Done() const { return pos_ >= n_; }

  // Reads the next field; on malformed input returns false with `error` set.
  bool Next(Field& f, std::string& error) {
    f.begin = pos_;
    uint64_t tag;
    if (!Varint(tag)) return Fail(error, "a field tag is cut off");
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<uint8_t>(tag & 7);
    if (f.number == 0) return Fail(error, "field number 0");
    switch (f.wire) {
      case 0: {
        uint64_t v;
        if (!Varint(v)) return Fail(error, "a varint is cut off");
        f.payload = f.begin;
        break;
      }
      case 1:
        if (n_ - pos_ < 8) return Fail(error, "a 64-bit field runs past the end");
        pos_ += 8;
        break;
      case 5:
        if (n_ - pos_ < 4) return Fail(error, "a 32-bit field runs past the end");
        pos_ += 4;
        break;
      case 2: {
        uint64_t len;
        if (!Varint(len)) return Fail(error, "a length is cut off");
        if (len > n_ - pos_) {
          return Fail(error, "field " + std::to_string(f.number) + " (" + std::to_string(len) +
                                 " bytes) runs past the end of the data");
        }
        f.payload = pos_;
        pos_ += static_cast<size_t>(len);
        break;
      }
      default:
        return Fail(error, "wire type " + std::to_string(f.wire) + " is not valid here");
    }
    f.end = pos_;
    return true;
  }

  size_t offset() const { return pos_; }

 private:
  bool Varint(uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= n_) return false;
      const uint8_t b = p_[pos_++];
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return false;
  }
  bool Fail(std::string& error, const std::string& why) {
    error = why + " at byte " + std::to_string(pos_);
    return false;
  }

  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

// The wire type each ModelProto field must have (onnx.proto); -1 for unknown numbers.
int ModelFieldWire(uint32_t number) {
  switch (number) {
    case 1: case 5: return 0;                                   // ir_version, model_version
    case 2: case 3: case 4: case 6: case 7: case 8: case 14:    // strings, graph, opsets,
    case 20: case 25: return 2;                                 // metadata, training, functions
    default: return -1;
  }
}

void AppendVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// TensorProto fields kept for a weight whose data is skipped: dims=1, data_type=2,
// segment=3, name=8, doc_string=12, external_data=13, data_location=14.
bool KeepTensorField(uint32_t number) {
  return number == 1 || number == 2 || number == 3 || number == 8 || number == 12 ||
         number == 13 || number == 14;
}

Result<std::string> StubTensor(std::string_view tensor) {
  std::string out;
  WireReader r(tensor);
  Field f;
  std::string error;
  while (!r.Done()) {
    if (!r.Next(f, error)) return MakeError("initializer: " + error);
    if (KeepTensorField(f.number)) out.append(tensor.substr(f.begin, f.end - f.begin));
  }
  return out;
}

// Copies a GraphProto's fields, replacing large initializers (field 5) by stubs.
Result<void> AppendGraph(std::string_view graph, std::string& out) {
  WireReader r(graph);
  Field f;
  std::string error;
  while (!r.Done()) {
    if (!r.Next(f, error)) return MakeError("graph: " + error);
    if (f.number == 5 && f.wire == 2 && f.end - f.payload > kKeepInitializerBytes) {
      auto stub = StubTensor(graph.substr(f.payload, f.end - f.payload));
      if (!stub) return std::unexpected(stub.error());
      AppendVarint(out, (5u << 3) | 2u);
      AppendVarint(out, stub->size());
      out += *stub;
    } else {
      out.append(graph.substr(f.begin, f.end - f.begin));
    }
  }
  return {};
}

}  // namespace

Result<MappedFile> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return MakeError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return MakeError(path + ": not a regular file");
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return MakeError(path + ": cannot map: " + std::strerror(err));
    }
  }
  ::close(fd);
  return MappedFile(data, size);
}

MappedFile::MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

Result<onnx::ModelProto> ParseModel(std::string_view bytes, std::string_view origin) {
  const std::string where(origin);
  if (bytes.empty()) return MakeError(where + ": empty file, not an ONNX model");
  std::string rest;        // every ModelProto field but the graph
  std::string graph;       // the graph's fields, weights stubbed
  bool has_graph = false;
  bool has_ir_version = false;
  WireReader r(bytes);
  Field f;
  std::string error;
  while (!r.Done()) {
    if (!r.Next(f, error)) {
      return MakeError(where + ": not an ONNX model (truncated or not protobuf: " + error + ")");
    }
    const int want = ModelFieldWire(f.number);
    if (want < 0 || want != f.wire) {
      return MakeError(where + ": not an ONNX model (protobuf field " + std::to_string(f.number) +
                       " with wire type " + std::to_string(f.wire) + " is not a ModelProto field)");
    }
    if (f.number == 1) has_ir_version = true;
    if (f.number == 7) {
      has_graph = true;
      auto ok = AppendGraph(bytes.substr(f.payload, f.end - f.payload), graph);
      if (!ok) return MakeError(where + ": not an ONNX model (" + ok.error().message + ")");
    } else {
      rest.append(bytes.substr(f.begin, f.end - f.begin));
    }
  }
  if (!has_graph || !has_ir_version) {
    return MakeError(where + ": not an ONNX model (no " +
                     std::string(has_graph ? "ir_version" : "graph") + ")");
  }
  onnx::ModelProto model;
  if (!model.ParseFromString(rest)) {
    return MakeError(where + ": not an ONNX model (its header fields do not parse)");
  }
  if (!model.mutable_graph()->ParseFromString(graph)) {
    return MakeError(where + ": not an ONNX model (its graph does not parse)");
  }
  return model;
}

}  // namespace opscope::import::onnx_reader
