// Checkpoint folders: the index, the shards' headers, and what each tensor is (checkpoint.h).
#include "import/safetensors/checkpoint.h"

#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "support/checked_math.h"
#include "support/file_io.h"

namespace opscope::import::safetensors {

std::string_view TensorRoleName(TensorRole r) {
  switch (r) {
    case TensorRole::kParameter: return "parameter";
    case TensorRole::kScale: return "scale";
    case TensorRole::kZeroPoint: return "zero point";
    case TensorRole::kIndex: return "index";
    case TensorRole::kShape: return "shape";
  }
  return "parameter";
}

namespace {

enum class DtypeKind : uint8_t { kFloatOrByte, kInteger };

// Quantization metadata by name suffix: its role, the suffix that replaces it to name the
// tensor it belongs to ("" : none, an attention scale), and the dtypes it may have (scales are
// floats or e8m0 bytes; zero points, indices and shapes integers).
struct MetadataSuffix {
  std::string_view suffix;
  TensorRole role;
  std::string_view owner_suffix;
  DtypeKind dtypes;
};

constexpr MetadataSuffix kMetadataSuffixes[] = {
    // FP8 and FP4 checkpoints (DeepSeek FP8 blocks, ModelOpt, compressed-tensors).
    {".weight_scale_inv", TensorRole::kScale, ".weight", DtypeKind::kFloatOrByte},
    {".weight_scale_2", TensorRole::kScale, ".weight", DtypeKind::kFloatOrByte},
    {".weight_global_scale", TensorRole::kScale, ".weight", DtypeKind::kFloatOrByte},
    {".weight_scale", TensorRole::kScale, ".weight", DtypeKind::kFloatOrByte},
    {".input_global_scale", TensorRole::kScale, ".weight", DtypeKind::kFloatOrByte},
    {".input_scale", TensorRole::kScale, ".weight", DtypeKind::kFloatOrByte},
    {".output_scale", TensorRole::kScale, ".weight", DtypeKind::kFloatOrByte},
    {".weight_zero_point", TensorRole::kZeroPoint, ".weight", DtypeKind::kInteger},
    {".input_zero_point", TensorRole::kZeroPoint, ".weight", DtypeKind::kInteger},
    {".weight_g_idx", TensorRole::kIndex, ".weight", DtypeKind::kInteger},
    {".weight_shape", TensorRole::kShape, ".weight", DtypeKind::kInteger},
    // Attention KV-cache and query scales: they belong to no weight.
    {".k_scale", TensorRole::kScale, "", DtypeKind::kFloatOrByte},
    {".v_scale", TensorRole::kScale, "", DtypeKind::kFloatOrByte},
    {".q_scale", TensorRole::kScale, "", DtypeKind::kFloatOrByte},
    {".prob_scale", TensorRole::kScale, "", DtypeKind::kFloatOrByte},
    // GPTQ / AWQ.
    {".scales", TensorRole::kScale, ".qweight", DtypeKind::kFloatOrByte},
    {".qzeros", TensorRole::kZeroPoint, ".qweight", DtypeKind::kInteger},
    {".g_idx", TensorRole::kIndex, ".qweight", DtypeKind::kInteger},
    // gpt-oss MXFP4: e8m0 scales (U8) beside the packed `_blocks`.
    {"_scales", TensorRole::kScale, "_blocks", DtypeKind::kFloatOrByte},
};

bool DtypeFits(const Dtype& d, DtypeKind kind) {
  const bool is_byte = d.name == "U8" || d.name == "F8_E8M0";
  if (kind == DtypeKind::kFloatOrByte) return d.is_float || is_byte;
  return !d.is_float;
}

// Logical parameters of a parameter tensor: packed FP4 and INT4 weights hold several per
// stored element.
uint64_t Parameters(const CheckpointTensor& t, const std::map<std::string, const CheckpointTensor*>& by_name,
                    bool& int4_assumed) {
  const std::string_view name = t.name;
  const std::string_view dtype = t.dtype->name;
  auto companion = [&](std::string_view suffix, std::string_view replacement) -> const CheckpointTensor* {
    if (!name.ends_with(suffix)) return nullptr;
    const std::string other = std::string(name.substr(0, name.size() - suffix.size())) +
                              std::string(replacement);
    auto it = by_name.find(other);
    return it == by_name.end() ? nullptr : it->second;
  };
  if (dtype == "U8" && companion("_blocks", "_scales") != nullptr) {
    return SaturatingAdd(t.elements, t.elements);  // MXFP4: two e2m1 per byte
  }
  if (dtype == "U8" || dtype == "I8") {
    for (std::string_view suffix : {".weight", ".weight_packed"}) {
      const CheckpointTensor* scale = companion(suffix, ".weight_scale");
      if (scale != nullptr && scale->dtype->name == "F8_E4M3") {
        return SaturatingAdd(t.elements, t.elements);  // NVFP4: two e2m1 per byte
      }
    }
  }
  if (dtype == "I32" && (name.ends_with(".qweight") || name.ends_with(".weight_packed"))) {
    int4_assumed = true;
    return CheckedMul(t.elements, 8).value_or(UINT64_MAX);  // eight 4-bit values per int32
  }
  return t.elements;
}

// Each tensor's role, owner and parameters.
void Classify(Checkpoint& c) {
  std::map<std::string, const CheckpointTensor*> by_name;
  for (const CheckpointTensor& t : c.tensors) by_name.emplace(t.name, &t);
  bool int4_assumed = false;
  for (CheckpointTensor& t : c.tensors) {
    t.role = ClassifyTensor(t.name, *t.dtype, &t.owner);
    // compressed-tensors names its packed weight `.weight_packed`.
    if (t.owner.ends_with(".weight") && !by_name.contains(t.owner) &&
        by_name.contains(t.owner + "_packed")) {
      t.owner += "_packed";
    }
    t.parameters = t.role == TensorRole::kParameter ? Parameters(t, by_name, int4_assumed) : 0;
  }
  if (int4_assumed) {
    c.assumptions.push_back("INT32-packed weights (.qweight, .weight_packed) hold eight 4-bit "
                            "parameters per element");
  }
}

// Builds the table; `index` (tensor -> shard file name) filters and checks it when given.
Result<Checkpoint> Assemble(std::string origin, std::vector<SafetensorsFile> shards,
                            const std::map<std::string, std::string>* index,
                            const std::vector<std::string>& shard_names) {
  Checkpoint c;
  c.origin = std::move(origin);
  c.shards = std::move(shards);
  std::map<std::string, size_t> seen;
  std::set<std::string> included;
  std::vector<std::string> unindexed;
  for (size_t s = 0; s < c.shards.size(); ++s) {
    for (const TensorEntry& e : c.shards[s].tensors) {
      if (auto [it, fresh] = seen.emplace(e.name, s); !fresh) {
        return MakeError(c.shards[s].origin + ": tensor '" + e.name + "' is also in " +
                         c.shards[it->second].origin);
      }
      if (index != nullptr) {
        auto it = index->find(e.name);
        if (it == index->end() || it->second != shard_names[s]) {
          unindexed.push_back(e.name);
          continue;
        }
      }
      included.insert(e.name);
      CheckpointTensor t;
      t.name = e.name;
      t.shard = s;
      t.dtype = e.dtype;
      t.shape = e.shape;
      t.elements = e.elements;
      t.bytes = e.bytes;
      c.tensors.push_back(std::move(t));
    }
  }
  if (index != nullptr) {
    for (const auto& [name, file] : *index) {
      if (!included.contains(name)) {
        return MakeError(c.origin + ": model.safetensors.index.json puts tensor '" + name +
                         "' in " + file + ", which does not hold it");
      }
    }
  }
  if (!unindexed.empty()) {
    c.warnings.push_back(std::to_string(unindexed.size()) + " tensor(s) in the shards are not in "
                         "model.safetensors.index.json and are not loaded: " + unindexed.front() +
                         (unindexed.size() > 1 ? ", ..." : ""));
  }
  Classify(c);
  return c;
}

// model.safetensors.index.json -> tensor -> shard file name, and total_size if given.
struct Index {
  std::map<std::string, std::string> weight_map;
  std::optional<uint64_t> total_size;
};

bool PlainFileName(std::string_view s) {
  return !s.empty() && s != "." && s != ".." && s.find_first_of("/\\") == std::string_view::npos &&
         s.find('\0') == std::string_view::npos;
}

Result<Index> ParseIndex(const std::string& path) {
  auto text = ReadFile(path, kMaxHeaderBytes);
  if (!text) return std::unexpected(text.error());
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*text).get(root) != simdjson::SUCCESS) {
    return MakeError(path + ": not valid JSON");
  }
  Index out;
  simdjson::dom::object map;
  if (root["weight_map"].get_object().get(map) != simdjson::SUCCESS) {
    return MakeError(path + ": no object 'weight_map'");
  }
  for (auto [tensor, file] : map) {
    std::string_view f;
    if (file.get_string().get(f) != simdjson::SUCCESS || !PlainFileName(f)) {
      return MakeError(path + ": weight_map entry '" + std::string(tensor) +
                       "': expected a file name in the same folder");
    }
    if (!out.weight_map.emplace(std::string(tensor), std::string(f)).second) {
      return MakeError(path + ": weight_map lists tensor '" + std::string(tensor) + "' twice");
    }
  }
  uint64_t total = 0;
  if (root.at_pointer("/metadata/total_size").get_uint64().get(total) == simdjson::SUCCESS) {
    out.total_size = total;
  }
  return out;
}

bool IsDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

}  // namespace

TensorRole ClassifyTensor(std::string_view name, const Dtype& dtype, std::string* owner) {
  for (const MetadataSuffix& m : kMetadataSuffixes) {
    if (!name.ends_with(m.suffix) || name.size() == m.suffix.size()) continue;
    if (!DtypeFits(dtype, m.dtypes)) continue;
    if (owner != nullptr) {
      *owner = m.owner_suffix.empty()
                   ? std::string()
                   : std::string(name.substr(0, name.size() - m.suffix.size())) +
                         std::string(m.owner_suffix);
    }
    return m.role;
  }
  if (owner != nullptr) owner->clear();
  return TensorRole::kParameter;
}

uint64_t Checkpoint::Bytes() const {
  uint64_t sum = 0;
  for (const CheckpointTensor& t : tensors) sum = SaturatingAdd(sum, t.bytes);
  return sum;
}

uint64_t Checkpoint::Parameters() const {
  uint64_t sum = 0;
  for (const CheckpointTensor& t : tensors) sum = SaturatingAdd(sum, t.parameters);
  return sum;
}

uint64_t Checkpoint::MetadataBytes() const {
  uint64_t sum = 0;
  for (const CheckpointTensor& t : tensors) {
    if (t.role != TensorRole::kParameter) sum = SaturatingAdd(sum, t.bytes);
  }
  return sum;
}

const CheckpointTensor* Checkpoint::Find(std::string_view name) const {
  for (const CheckpointTensor& t : tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Result<Checkpoint> BuildCheckpoint(std::string origin, std::vector<SafetensorsFile> shards) {
  return Assemble(std::move(origin), std::move(shards), nullptr, {});
}

Result<Checkpoint> ReadCheckpoint(const std::string& path) {
  if (!IsDirectory(path)) {
    auto file = ReadSafetensorsHeader(path);
    if (!file) return std::unexpected(file.error());
    std::vector<SafetensorsFile> shards;
    shards.push_back(std::move(*file));
    return BuildCheckpoint(path, std::move(shards));
  }
  const std::string dir = path.ends_with('/') ? path : path + "/";
  const std::string index_path = dir + "model.safetensors.index.json";
  if (!Exists(index_path)) {
    if (!Exists(dir + "model.safetensors")) {
      return MakeError(path + ": no model.safetensors.index.json or model.safetensors in the folder");
    }
    return ReadCheckpoint(dir + "model.safetensors");
  }
  auto index = ParseIndex(index_path);
  if (!index) return std::unexpected(index.error());
  std::set<std::string> names;
  for (const auto& [tensor, file] : index->weight_map) names.insert(file);
  const std::vector<std::string> shard_names(names.begin(), names.end());
  std::vector<SafetensorsFile> shards;
  for (const std::string& name : shard_names) {
    auto shard = ReadSafetensorsHeader(dir + name);
    if (!shard) return std::unexpected(shard.error());
    shards.push_back(std::move(*shard));
  }
  auto c = Assemble(path, std::move(shards), &index->weight_map, shard_names);
  if (c && index->total_size && *index->total_size != c->Bytes()) {
    c->warnings.push_back("model.safetensors.index.json: metadata total_size " +
                          std::to_string(*index->total_size) + " differs from the tensors' " +
                          std::to_string(c->Bytes()) + " bytes");
  }
  return c;
}

}  // namespace opscope::import::safetensors
