// Model folders: config.json, hf_quant_config.json and the safetensors index (see model_dir.h).
#include "import/hf_config/model_dir.h"

#include <simdjson.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "import/hf_config/quant_config.h"
#include "support/file_io.h"
#include "support/human_units.h"
#include "support/utf8.h"

namespace opscope::import::hf {
namespace {

namespace fs = std::filesystem;

bool IsFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// metadata.total_size of a model.safetensors.index.json; nullopt when the index has none.
Result<std::optional<uint64_t>> ReadTotalSize(const std::string& path) {
  auto text = ReadFile(path, uint64_t{1} << 30, simdjson::SIMDJSON_PADDING);
  if (!text) return std::unexpected(text.error());
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const std::string_view body = SkipUtf8Bom(*text);
  if (parser.parse(body.data(), body.size(), false).get(root) != simdjson::SUCCESS) {
    return MakeError(path + ": not valid JSON (a safetensors index holds "
                     "{\"metadata\": {\"total_size\": BYTES}, \"weight_map\": {...}})");
  }
  simdjson::dom::element size;
  if (root.at_key("metadata").at_key("total_size").get(size) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  uint64_t u = 0;
  double d = 0;
  if (size.get_uint64().get(u) == simdjson::SUCCESS) return u;
  // Some writers store it as a float ("total_size": 16060522496.0).
  if (size.get_double().get(d) == simdjson::SUCCESS && d >= 0 && d < 1.8e19 &&
      d == std::floor(d)) {
    return static_cast<uint64_t>(d);
  }
  return MakeError(path + ": field 'metadata.total_size': expected a non-negative integer "
                   "(bytes), got " + std::string(simdjson::minify(size)).substr(0, 40));
}

// The optional files beside config.json.
Result<void> ReadSiblings(const fs::path& dir, ModelFolder& f) {
  const fs::path quant = dir / "hf_quant_config.json";
  if (IsFile(quant)) {
    auto text = ReadFile(quant.string());
    if (!text) return std::unexpected(text.error());
    f.hf_quant_path = quant.string();
    f.hf_quant_text = std::move(*text);
    const fs::path cfg = dir / "quant_cfg.json";
    if (IsFile(cfg)) {
      auto t = ReadFile(cfg.string());
      if (!t) return std::unexpected(t.error());
      f.quant_cfg_text = std::move(*t);
    }
  }
  const fs::path index = dir / "model.safetensors.index.json";
  if (IsFile(index)) {
    auto total = ReadTotalSize(index.string());
    if (!total) return std::unexpected(total.error());
    f.index_path = index.string();
    f.total_size = *total;
  }
  return {};
}

}  // namespace

Result<ModelFolder> ReadModelFolder(const std::string& dir) {
  ModelFolder f;
  f.dir = dir;
  const fs::path path(dir);
  f.name = path.filename().string();
  if (f.name.empty()) f.name = path.parent_path().filename().string();  // "dir/"
  const fs::path config = path / "config.json";
  if (!IsFile(config)) {
    return MakeError(dir + ": no config.json in this folder (opscope llm DIR reads a Hugging "
                     "Face model folder: config.json, and hf_quant_config.json and "
                     "model.safetensors.index.json when present)");
  }
  f.config_path = config.string();
  auto text = ReadFile(f.config_path);
  if (!text) return std::unexpected(text.error());
  f.config_text = std::move(*text);
  if (auto ok = ReadSiblings(path, f); !ok) return std::unexpected(ok.error());
  return f;
}

Result<ModelFolder> ReadConfigFile(const std::string& path) {
  ModelFolder f;
  const fs::path p(path);
  f.dir = p.parent_path().string();
  f.name = path;
  f.config_path = path;
  auto text = ReadFile(path);
  if (!text) return std::unexpected(text.error());
  f.config_text = std::move(*text);
  if (p.filename() == "config.json") {
    if (auto ok = ReadSiblings(p.parent_path().empty() ? fs::path(".") : p.parent_path(), f); !ok) {
      return std::unexpected(ok.error());
    }
  }
  return f;
}

Result<ModelSpec> ParseModelFolder(const ModelFolder& folder, const ParseOptions& parse) {
  auto spec = ParseHfConfig(folder.config_text, folder.config_path, parse);
  if (!spec) return std::unexpected(spec.error());
  if (!folder.hf_quant_text) return spec;
  std::optional<std::string_view> quant_cfg;
  if (folder.quant_cfg_text) quant_cfg = *folder.quant_cfg_text;
  auto quant = ReadHfQuantConfig(*folder.hf_quant_text, *folder.hf_quant_path, quant_cfg);
  if (!quant) return std::unexpected(quant.error());
  if (!spec->quant.method.empty()) {
    spec->assumptions.push_back(*folder.hf_quant_path + " replaces config.json's quantization_config (" +
                                spec->quant.method + ")");
  }
  spec->quant = std::move(*quant);
  return spec;
}

StoredWeightBytes CountStoredWeightBytes(const StepGraph& step) {
  StoredWeightBytes b;
  std::vector<int64_t> dims;
  for (const WeightEntry& w : step.weights) {
    const ir::Tensor& t = step.graph.tensors[w.tensor];
    dims.clear();
    uint64_t elements = 1;
    for (const expr::Expr& e : t.shape) {
      dims.push_back(e.IsConstant() ? e.constant() : 0);
      elements *= static_cast<uint64_t>(dims.back());
    }
    auto bytes = format::TensorBytes(t.format, dims);
    if (!bytes) continue;
    const uint64_t payload = (elements * static_cast<uint64_t>(format::Info(t.format).bits) + 7) / 8;
    b.total += *bytes;
    b.scales += *bytes >= payload ? *bytes - payload : 0;
  }
  return b;
}

std::optional<std::string> CheckTotalSize(const ModelFolder& folder, const StepGraph& step) {
  if (!folder.total_size) return std::nullopt;
  const StoredWeightBytes ours = CountStoredWeightBytes(step);
  const uint64_t theirs = *folder.total_size;
  const uint64_t gap = theirs > ours.total ? theirs - ours.total : ours.total - theirs;
  if (gap <= ours.scales) return std::nullopt;
  const double share = ours.total > 0 ? 100.0 * static_cast<double>(gap) / static_cast<double>(ours.total) : 100.0;
  const double scale_share =
      ours.total > 0 ? 100.0 * static_cast<double>(ours.scales) / static_cast<double>(ours.total) : 0.0;
  char pct[64];
  std::snprintf(pct, sizeof pct, "%.2f%% apart; scales are %.2f%%", share, scale_share);
  return *folder.index_path + ": metadata.total_size is " + std::to_string(theirs) + " bytes (" +
         HumanBytes(static_cast<double>(theirs)) + ") but the weights opscope counts come to " +
         std::to_string(ours.total) + " bytes (" + HumanBytes(static_cast<double>(ours.total)) +
         "), " + pct + " of them: the checkpoint " +
         (theirs > ours.total ? "stores tensors the step does not cost (multi-token-prediction "
                                "layers, a vision tower) or "
                              : "") +
         "stores some weights in other formats than the recipe";
}

}  // namespace opscope::import::hf
