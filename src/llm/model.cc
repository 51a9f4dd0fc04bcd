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

Result<Model> OpenPresetRow(const import::hf::Preset& p, const import::hf::ParseOptions& parse) {
  return Parse(p.json, "preset '" + std::string(p.name) + "'", std::string(p.name), parse);
}

// A built-in preset, by its exact name (before any path: "llama-3.1-8b" is the preset even
// where a folder of that name exists).
std::optional<Result<Model>> OpenPresetExact(std::string_view arg,
                                             const import::hf::ParseOptions& parse) {
  const import::hf::Preset* p = import::hf::FindPreset(arg);
  if (p == nullptr || p->name != arg) return std::nullopt;
  return OpenPresetRow(*p, parse);
}

Result<Model> OpenFolder(Result<import::hf::ModelFolder> folder, std::string name,
                         const import::hf::ParseOptions& parse) {
  if (!folder) return std::unexpected(folder.error());
  auto spec = import::hf::ParseModelFolder(*folder, parse);
  if (!spec) return std::unexpected(spec.error());
  std::string origin = folder->config_path;
  return Model{std::move(name), std::move(origin), std::move(*spec), std::move(*folder)};
}

// An existing folder: a Hugging Face snapshot (model_dir.h).
std::optional<Result<Model>> OpenModelFolder(std::string_view arg,
                                             const import::hf::ParseOptions& parse) {
  const std::string path(arg);
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) return std::nullopt;
  auto folder = import::hf::ReadModelFolder(path);
  std::string name = folder ? folder->name : path;
  return OpenFolder(std::move(folder), std::move(name), parse);
}

// An existing file: an HF config.json (and, when it is named config.json, the folder's other
// files beside it).
std::optional<Result<Model>> OpenConfigFile(std::string_view arg,
                                            const import::hf::ParseOptions& parse) {
  const std::string path(arg);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  return OpenFolder(import::hf::ReadConfigFile(path), path, parse);
}

// A preset as people type it: any case, with or without the organisation
// ("meta-llama/Llama-3.1-8B").
std::optional<Result<Model>> OpenPresetAsTyped(std::string_view arg,
                                               const import::hf::ParseOptions& parse) {
  const import::hf::Preset* p = import::hf::FindPreset(arg);
  if (p == nullptr) return std::nullopt;
  return OpenPresetRow(*p, parse);
}

// A GGUF path that does not exist: say what to pass instead.
std::optional<Result<Model>> RefuseGguf(std::string_view arg, const import::hf::ParseOptions&) {
  if (!arg.ends_with(".gguf")) return std::nullopt;
  return MakeError(std::string(arg) +
                   ": GGUF files are not read yet; pass the model's config.json and "
                   "--weights with its llama.cpp file type (e.g. q4_k_m)");
}

constexpr Opener kOpeners[] = {OpenPresetExact, OpenModelFolder, OpenConfigFile, OpenPresetAsTyped,
                               RefuseGguf};

}  // namespace

Result<Model> OpenModel(std::string_view arg, const import::hf::ParseOptions& parse) {
  for (Opener open : kOpeners) {
    if (auto model = open(arg, parse)) return std::move(*model);
  }
  return MakeError("model '" + std::string(arg) +
                   "': neither a built-in preset (see 'opscope llm --list') nor an existing "
                   "config.json file or model folder" + import::hf::PresetHint(arg));
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
