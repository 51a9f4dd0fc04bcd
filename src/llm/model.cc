// Opening the model argument (see model.h).
#include "llm/model.h"

#include <filesystem>
#include <optional>

#include "import/hf_config/presets.h"
#include "support/file_io.h"

namespace opscope::llm {
namespace {

// An opener claims an argument it knows (returning the model or why it cannot open it) or
// passes (nullopt) to the next.
using Opener = std::optional<Result<Model>> (*)(std::string_view arg,
                                               const import::hf::ParseOptions& parse);

Result<Model> Parse(std::string_view text, std::string origin, std::string name,
                    const import::hf::ParseOptions& parse) {
  auto spec = import::hf::ParseHfConfig(text, origin, parse);
  if (!spec) return std::unexpected(spec.error());
  return Model{std::move(name), std::move(origin), std::move(*spec)};
}

// A built-in preset, by its exact name.
std::optional<Result<Model>> OpenPreset(std::string_view arg,
                                        const import::hf::ParseOptions& parse) {
  const import::hf::Preset* p = import::hf::FindPreset(arg);
  if (p == nullptr) return std::nullopt;
  return Parse(p->json, "preset '" + std::string(p->name) + "'", std::string(p->name), parse);
}

// An existing file: an HF config.json.
std::optional<Result<Model>> OpenConfigFile(std::string_view arg,
                                            const import::hf::ParseOptions& parse) {
  const std::string path(arg);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  auto text = ReadFile(path);
  if (!text) return std::unexpected(text.error());
  return Parse(*text, path, path, parse);
}

// A GGUF path that does not exist: say what to pass instead.
std::optional<Result<Model>> RefuseGguf(std::string_view arg, const import::hf::ParseOptions&) {
  if (!arg.ends_with(".gguf")) return std::nullopt;
  return MakeError(std::string(arg) +
                   ": GGUF files are not read yet; pass the model's config.json and "
                   "--weights with its llama.cpp file type (e.g. q4_k_m)");
}

constexpr Opener kOpeners[] = {OpenPreset, OpenConfigFile, RefuseGguf};

}  // namespace

Result<Model> OpenModel(std::string_view arg, const import::hf::ParseOptions& parse) {
  for (Opener open : kOpeners) {
    if (auto model = open(arg, parse)) return std::move(*model);
  }
  return MakeError("model '" + std::string(arg) +
                   "': neither a built-in preset (see 'opscope llm --list') nor an existing "
                   "config.json file");
}

Result<std::vector<PresetInfo>> ListPresets() {
  std::vector<PresetInfo> out;
  for (const import::hf::Preset& p : import::hf::BuiltinPresets()) {
    auto spec = import::hf::ParseHfConfig(p.json, std::string(p.file));
    if (!spec) return std::unexpected(spec.error());
    out.push_back({std::string(p.name), spec->model_type, spec->num_layers(), p.reconstructed});
  }
  return out;
}

}  // namespace opscope::llm
