// Opening the model argument (see model.h).
#include "llm/model.h"

#include <filesystem>
#include <memory>
#include <optional>

#include "import/gguf/gguf_model.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "import/safetensors/checkpoint_graph.h"
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

// The step graph `spec` defines at its own dtype (the names and shapes of its weights, which
// neither the recipe nor the quantization changes), for checking it against the files.
Result<import::hf::StepGraph> PlainStepGraph(const import::hf::ModelSpec& spec) {
  import::hf::ModelSpec plain = spec;
  plain.quant = {};
  auto recipe = import::hf::ResolveRecipe(plain, {});
  if (!recipe) return std::unexpected(recipe.error());
  return import::hf::BuildStepGraph(plain, *recipe);
}

// "first error (and N more)".
std::string FirstOf(const std::vector<std::string>& errors) {
  std::string s = errors.front();
  if (errors.size() > 1) s += " (and " + std::to_string(errors.size() - 1) + " more)";
  return s;
}

// Whether a folder holds .safetensors files (a checkpoint, not just its config).
bool HasSafetensors(const std::string& dir) {
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".safetensors") return true;
  }
  return false;
}

// A checkpoint folder's shards (their headers): the format and bytes every step-graph weight
// is stored in, and what the checkpoint and the config disagree on as warnings.
Result<void> ReadShards(const std::string& dir, Model& model) {
  auto checkpoint = import::safetensors::ReadCheckpoint(dir);
  if (!checkpoint) return std::unexpected(checkpoint.error());
  auto step = PlainStepGraph(model.spec);
  if (!step) return std::unexpected(Wrap(model.origin, step.error()));
  import::safetensors::CheckpointComparison c =
      import::safetensors::CompareWithGraph(*checkpoint, model.spec, step->graph,
                                            step->params_mtp);
  auto stored = std::make_shared<import::hf::StoredWeights>();
  stored->source = dir;
  std::vector<std::string> unformatted;
  for (const import::safetensors::GraphWeightSource& w : c.weights) {
    if (w.tensors.empty()) continue;
    if (!w.format) {
      unformatted.push_back(w.graph_name + " (" + w.note + ")");
      continue;
    }
    stored->formats.emplace(w.graph_name, *w.format);
    stored->bytes.emplace(w.graph_name, w.bytes);
  }
  for (std::string& w : checkpoint->warnings) model.warnings.push_back(std::move(w));
  for (std::string& w : c.warnings) model.warnings.push_back(std::move(w));
  if (!unformatted.empty()) {
    model.warnings.push_back(std::to_string(unformatted.size()) +
                             " weight(s) stored in no format opscope models, costed at the "
                             "recipe's instead: " + FirstOf(unformatted));
  }
  for (std::string& a : checkpoint->assumptions) model.spec.assumptions.push_back(std::move(a));
  model.spec.stored = std::move(stored);
  // The shards' own bytes replace the index's total_size, which ReadCheckpoint checked.
  if (model.folder) model.folder->total_size.reset();
  return {};
}

Result<Model> OpenFolder(Result<import::hf::ModelFolder> folder, std::string name,
                         const import::hf::ParseOptions& parse) {
  if (!folder) return std::unexpected(folder.error());
  auto spec = import::hf::ParseModelFolder(*folder, parse);
  if (!spec) return std::unexpected(spec.error());
  std::string origin = folder->config_path;
  // A folder's config.json with the checkpoint's shards beside it: read their headers too.
  const std::string dir = folder->dir.empty() ? "." : folder->dir;
  const bool shards = std::filesystem::path(folder->config_path).filename() == "config.json" &&
                      HasSafetensors(dir);
  Model model{std::move(name), std::move(origin), std::move(*spec), std::move(*folder)};
  if (shards) {
    if (auto ok = ReadShards(dir, model); !ok) return std::unexpected(ok.error());
  }
  return model;
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

// A GGUF file (llama.cpp): the spec from its metadata, each weight in its tensor's ggml type,
// the step graph in llama.cpp's layout checked against the file's tensors.
std::optional<Result<Model>> OpenGgufFile(std::string_view arg,
                                          const import::hf::ParseOptions& parse) {
  if (!arg.ends_with(".gguf")) return std::nullopt;
  const std::string path(arg);
  if (parse.model_type) {
    return MakeError("option '--model-type': reads config.json files; " + path +
                     " names its architecture in general.architecture");
  }
  auto gguf = import::gguf::LoadGgufModel(path);
  if (!gguf) return std::unexpected(gguf.error());
  auto step = import::gguf::BuildCheckedStepGraph(*gguf, path);
  if (!step) return std::unexpected(step.error());
  Model model{path, path, std::move(gguf->spec)};
  model.warnings = std::move(gguf->warnings);
  return model;
}

constexpr Opener kOpeners[] = {OpenPresetExact, OpenGgufFile, OpenModelFolder, OpenConfigFile,
                               OpenPresetAsTyped};

}  // namespace

Result<Model> OpenModel(std::string_view arg, const import::hf::ParseOptions& parse) {
  for (Opener open : kOpeners) {
    if (auto model = open(arg, parse)) return std::move(*model);
  }
  return MakeError("model '" + std::string(arg) +
                   "': neither a built-in preset (see 'opscope llm --list') nor an existing "
                   "config.json file or model folder" + import::hf::PresetHint(arg));
}

uint64_t StoredWeightBytes(const import::hf::StoredWeights& stored,
                           const import::hf::StepGraph& step) {
  uint64_t total = 0;
  std::vector<int64_t> dims;
  for (const import::hf::WeightEntry& w : step.weights) {
    const ir::Tensor& t = step.graph.tensors[w.tensor];
    auto format = stored.formats.find(t.name);
    auto bytes = stored.bytes.find(t.name);
    if (format != stored.formats.end() && format->second == t.format &&
        bytes != stored.bytes.end()) {
      total += bytes->second;
      continue;
    }
    dims.clear();
    for (const expr::Expr& d : t.shape) dims.push_back(d.IsConstant() ? d.constant() : 0);
    total += format::TensorBytes(t.format, dims).value_or(0);
  }
  return total;
}

bool ServeFloat32As(Model& model, format::Format served, std::string_view why) {
  import::hf::ModelSpec& spec = model.spec;
  if (spec.dtype != format::Format::kF32 || served == format::Format::kF32) return false;
  spec.dtype = served;
  int64_t cast = 0;
  if (spec.stored) {
    // The stored float32 weights load as `served`: their bytes are the served format's (a
    // plain float tensor has no scales), which StoredWeightBytes computes once the stored
    // bytes no longer name them.
    auto stored = std::make_shared<import::hf::StoredWeights>(*spec.stored);
    for (auto& [name, f] : stored->formats) {
      if (f != format::Format::kF32) continue;
      f = served;
      stored->bytes.erase(name);
      ++cast;
    }
    spec.stored = std::move(stored);
  }
  const std::string served_name(format::FormatName(served));
  spec.assumptions.push_back(
      "model saved in float32, served in " + served_name + " (" + std::string(why) + ")" +
      (cast > 0 ? "; " + std::to_string(cast) + " float32 weights of the files loaded as " +
                      served_name
                : std::string()));
  return true;
}

format::Format Float32Load::For(std::string_view model_type) const {
  for (const auto& [prefix, f] : by_model_type_prefix) {
    if (model_type.starts_with(prefix)) return f;
  }
  return dtype;
}

bool ServeFloat32(Model& model, const Float32Load& load) {
  const format::Format served = load.For(model.spec.model_type);
  return ServeFloat32As(model, served,
                        load.engine + " loads a float32 checkpoint of model_type '" +
                            model.spec.model_type + "' in " +
                            std::string(format::FormatName(served)) +
                            " by default");
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
