// Recipe resolution and the per-tensor weight formats (see recipe.h).
#include "import/hf_config/recipe.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "support/spelling.h"

namespace opscope::import::hf {

using format::Format;

std::optional<GgufFileType> ParseGgufFileType(std::string_view name) {
  std::string lower = Lower(name);  // "Q4_K_M", as llama.cpp's file names spell it
  std::replace(lower.begin(), lower.end(), '-', '_');
  for (size_t i = 0; i < std::size(kGgufFileTypeNames); ++i) {
    if (kGgufFileTypeNames[i] == lower) return static_cast<GgufFileType>(i);
  }
  return std::nullopt;
}

std::string_view GgufFileTypeName(GgufFileType t) {
  return kGgufFileTypeNames[static_cast<size_t>(t)];
}

namespace {

bool IsPlainFloat(Format f) {
  return f == Format::kF32 || f == Format::kF16 || f == Format::kBf16 || f == Format::kF64;
}

// Formats that quantize activations on the fly (the MMA input), as --activations takes them.
bool IsQuantizedActivation(Format f) {
  switch (f) {
    case Format::kFp8E4m3:
    case Format::kFp8E5m2:
    case Format::kFp8E4m3Rowwise:
    case Format::kFp8E4m3B128:
    case Format::kInt8:
    case Format::kInt8Rowwise:
    case Format::kNvfp4:
    case Format::kMxfp4:
    case Format::kMxfp8:
      return true;
    default:
      return false;
  }
}

// Elements per block along a row (1 for plain and per-row/per-tensor formats).
int64_t RowBlock(Format f) {
  const int b = format::Info(f).block;
  return b > 1 ? b : 1;
}

// A format as typed (case-insensitive, with aliases: format::FindFormat).
Result<Format> ParseOptionFormat(std::string_view option, const std::string& value,
                                 bool with_file_types = false) {
  auto f = format::FindFormat(value);
  if (!f) {
    std::vector<std::string_view> known;
    std::string names;
    for (int i = 0; i < format::kNumFormats; ++i) {
      if (i > 0) names += ", ";
      names += format::kFormats[i].name;
      known.push_back(format::kFormats[i].name);
    }
    if (with_file_types) known.insert(known.end(), std::begin(kGgufFileTypeNames), std::end(kGgufFileTypeNames));
    return MakeError("option '" + std::string(option) + "': unknown format '" + value + "'" +
                     DidYouMean(value, known) + " (known: " + names + ")");
  }
  return *f;
}

std::string_view ScopeWords(CheckpointQuant::Scope scope) {
  switch (scope) {
    case CheckpointQuant::Scope::kNone: return "per module";
    case CheckpointQuant::Scope::kLinear: return "layer matrices";
    case CheckpointQuant::Scope::kAllLinear: return "Linear modules";
    case CheckpointQuant::Scope::kRoutedExperts: return "routed experts";
  }
  return "";
}

// The checkpoint's quantization as the default weights: the label and where each choice
// came from (assumptions).
void UseCheckpoint(const ModelSpec& spec, Recipe& r, const std::string& dtype_name) {
  const CheckpointQuant& q = spec.quant;
  r.checkpoint = q;
  const bool config = q.source == spec.origin;
  const std::string from = config ? "config" : q.source.substr(q.source.rfind('/') + 1);
  r.weights_label = std::string(format::FormatName(q.format)) + " (" +
                    std::string(ScopeWords(q.scope)) + ", from " + from + ") + " + dtype_name;
  const std::string file = config ? "quantization_config" : q.source;
  std::string what = q.scheme ? std::string(format::FormatName(q.scheme->weights)) + " for the " +
                                    std::string(ScopeWords(q.scope))
                              : "per module";
  r.assumptions.push_back("recipe: weights " + what + " from " + file + " (" + q.method +
                          "); other weights in " + dtype_name);
  for (const std::string& note : q.notes) r.assumptions.push_back("recipe: " + note);
}

// llama.cpp's ftype -> default tensor type (llama_ftype_get_default_type).
Format DefaultGgufType(GgufFileType t) {
  switch (t) {
    case GgufFileType::kQ4_0: return Format::kQ4_0;
    case GgufFileType::kQ4_1: return Format::kQ4_1;
    case GgufFileType::kQ5_0: return Format::kQ5_0;
    case GgufFileType::kQ5_1: return Format::kQ5_1;
    case GgufFileType::kQ8_0: return Format::kQ8_0;
    case GgufFileType::kQ2K: return Format::kQ2K;
    case GgufFileType::kQ3KM: return Format::kQ3K;
    case GgufFileType::kQ4KM: return Format::kQ4K;
    case GgufFileType::kQ5KM: return Format::kQ5K;
    case GgufFileType::kQ6K: return Format::kQ6K;
    case GgufFileType::kMxfp4Moe: return Format::kMxfp4;
  }
  return Format::kQ4_0;
}

// LLAMA_FTYPE_MOSTLY_MXFP4_MOE (llama_tensor_get_type, src/llama-quant.cpp): the output tensor
// gets Q8_0; every other quantized tensor gets MXFP4 when it is 3-D (ne[2] > 1: the routed
// experts [E, out, k]) and Q8_0 otherwise (attention, dense and shared-expert matrices, the
// token embedding). The tensors llama.cpp never quantizes stay f32.
Format Mxfp4Moe(WeightRole role) {
  switch (role) {
    case WeightRole::kRouter:
    case WeightRole::kConv:
    case WeightRole::kNorm:
    case WeightRole::kVector:
    case WeightRole::kScoreBias: return Format::kF32;
    case WeightRole::kExpertGate:
    case WeightRole::kExpertUp:
    case WeightRole::kExpertDown: return Format::kMxfp4;
    case WeightRole::kEmbedding:
    case WeightRole::kLmHead:
    case WeightRole::kAttnQ:
    case WeightRole::kAttnK:
    case WeightRole::kAttnV:
    case WeightRole::kAttnQkv:
    case WeightRole::kAttnKvB:
    case WeightRole::kAttnOut:
    case WeightRole::kFfnGate:
    case WeightRole::kFfnUp:
    case WeightRole::kFfnDown:
    case WeightRole::kOtherMatrix: return Format::kQ8_0;
  }
  return Format::kQ8_0;
}

// llama.cpp's use_more_bits(i_layer, n_layers).
bool UseMoreBits(int64_t i, int64_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

}  // namespace

namespace {

// --weights: a llama.cpp file type, a plain float (the whole checkpoint), or a quantized
// format for the layer matrices.
Result<void> ResolveWeightsOption(const std::string& w, const std::string& dtype_name, Recipe& r) {
  if (auto ft = ParseGgufFileType(w)) {
    r.gguf = *ft;
    r.weights_label = std::string(GgufFileTypeName(*ft)) + " (llama.cpp file type)";
    return {};
  }
  auto f = ParseOptionFormat("--weights", w, true);
  if (!f) {
    std::string types;
    for (std::string_view s : kGgufFileTypeNames) {
      types += ' ';
      types += s;
    }
    return MakeError(f.error().message + "; or a llama.cpp file type:" + types);
  }
  const format::FormatInfo& info = format::Info(*f);
  if (info.kind == format::Kind::kInt && *f != Format::kInt8 && *f != Format::kInt8Rowwise) {
    return MakeError("option '--weights': '" + w + "' is not a weight format");
  }
  const std::string name(format::FormatName(*f));
  if (IsPlainFloat(*f)) {
    r.dtype = r.matrix = *f;  // the whole checkpoint in this dtype
    r.weights_label = name;
  } else {
    r.scope = CheckpointQuant::Scope::kLinear;
    r.matrix = *f;
    r.weights_label = name + " (layer matrices) + " + dtype_name;
  }
  return {};
}

// The stored formats as the weights (the checkpoint's quantization, when it has one, still
// gives the activations and KV cache, and the formats of weights the files do not hold).
// Label: the formats by the bytes they hold, largest first: "q4_k + q6_k + f32 (stored in
// model.gguf)".
void UseStored(const ModelSpec& spec, Recipe& r) {
  const StoredWeights& stored = *spec.stored;
  r.stored = spec.stored;
  std::map<Format, uint64_t> bytes_of;
  for (const auto& [name, f] : stored.formats) {
    auto b = stored.bytes.find(name);
    bytes_of[f] += b != stored.bytes.end() ? b->second : 0;
  }
  std::vector<std::pair<uint64_t, Format>> by_bytes;
  for (const auto& [f, b] : bytes_of) by_bytes.emplace_back(b, f);
  std::stable_sort(by_bytes.begin(), by_bytes.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string formats;
  for (const auto& [b, f] : by_bytes) {
    formats += (formats.empty() ? "" : " + ") + std::string(format::FormatName(f));
  }
  const std::string file = stored.source.substr(stored.source.find_last_of('/', stored.source.size() - 2) + 1);
  r.weights_label = formats + " (stored in " + file + ")";
  r.assumptions.push_back("recipe: each weight in the format " + stored.source +
                          " stores it (" + std::to_string(stored.formats.size()) + " weights)");
}

// The weights: --weights, else the formats the model's files store, else the checkpoint's
// quantization, else the dtype; then the checkpoint's matrix-input and KV formats unless
// options replace them.
Result<void> ResolveWeights(const ModelSpec& spec, const RecipeOptions& options, Recipe& r) {
  const std::string dtype_name(format::FormatName(spec.dtype));
  const CheckpointQuant& q = spec.quant;
  if (options.weights) {
    if (auto ok = ResolveWeightsOption(*options.weights, dtype_name, r); !ok) return ok;
    if (!q.method.empty()) {
      r.assumptions.push_back("recipe: --weights " + *options.weights +
                              " replaces the checkpoint's " + q.method + " from " + q.source);
    }
    if (spec.stored) {
      r.assumptions.push_back("recipe: --weights " + *options.weights +
                              " replaces the formats stored in " + spec.stored->source);
    }
  } else if (!q.unsupported.empty() && !spec.stored) {
    return MakeError(q.source + ": " + (q.source == spec.origin ? "quantization_config: " : "") +
                     q.unsupported + "; choose the weight format with --weights");
  } else if ((q.scheme || q.rules) && q.unsupported.empty()) {
    UseCheckpoint(spec, r, dtype_name);
  } else {
    r.weights_label = dtype_name;
    for (const std::string& note : q.notes) r.assumptions.push_back("recipe: " + note);
  }
  if (!options.weights && spec.stored) UseStored(spec, r);
  if (r.checkpoint && r.checkpoint->activations && !options.activations) {
    r.gemm_input = *r.checkpoint->activations;
  }
  if (q.kv && !options.kv) r.kv = *q.kv;
  if (q.kv && options.kv) {
    r.assumptions.push_back("recipe: --kv-dtype " + *options.kv +
                            " replaces the checkpoint's KV cache format " +
                            std::string(format::FormatName(*q.kv)));
  }
  return {};
}

}  // namespace

Result<Recipe> ResolveRecipe(const ModelSpec& spec, const RecipeOptions& options) {
  Recipe r;
  r.dtype = spec.dtype;
  r.compute = r.gemm_input = r.kv = r.conv_state = spec.dtype;
  r.state = spec.ssm_state_dtype.value_or(spec.dtype);
  if (auto ok = ResolveWeights(spec, options, r); !ok) return std::unexpected(ok.error());
  r.separate_qkv = r.gguf.has_value() || (spec.stored && spec.stored->separate_qkv);

  if (options.activations) {
    auto f = ParseOptionFormat("--activations", *options.activations);
    if (!f) return std::unexpected(f.error());
    if (IsPlainFloat(*f)) {
      r.compute = r.gemm_input = r.conv_state = *f;
    } else if (IsQuantizedActivation(*f)) {
      r.gemm_input = *f;
    } else {
      return MakeError("option '--activations': '" + *options.activations +
                       "' is not an activation format (use a float, fp8, int8, nvfp4, mxfp4 or "
                       "mxfp8 format)");
    }
  }
  r.activations_label = std::string(format::FormatName(r.gemm_input));
  if (r.gemm_input != r.compute) {
    r.activations_label += " (matrix inputs) + " + std::string(format::FormatName(r.compute));
  }
  if (options.kv) {
    auto f = ParseOptionFormat("--kv-dtype", *options.kv);
    if (!f) return std::unexpected(f.error());
    if (format::Info(*f).kind == format::Kind::kInt && *f != Format::kInt8) {
      return MakeError("option '--kv-dtype': '" + *options.kv + "' is not a KV cache format");
    }
    r.kv = *f;
  }
  if (options.state) {
    auto f = ParseOptionFormat("--state-dtype", *options.state);
    if (!f) return std::unexpected(f.error());
    if (!IsPlainFloat(*f)) {
      return MakeError("option '--state-dtype': '" + *options.state +
                       "' is not a plain float format (f32, f16, bf16), which the recurrent "
                       "state is kept in");
    }
    r.state = *f;
  }
  return r;
}

WeightFormats::WeightFormats(const ModelSpec& spec, const Recipe& recipe)
    : spec_(spec), recipe_(recipe) {
  const int64_t layers = spec.num_layers();
  attn_v_index_.assign(static_cast<size_t>(layers), 0);
  ffn_down_index_.assign(static_cast<size_t>(layers), 0);
  const bool moe_model = spec.moe.experts > 1;
  int64_t ffn_downs = 0;
  for (int64_t i = 0; i < layers; ++i) {
    const LayerSpec& l = spec.layers[i];
    attn_v_index_[i] = attn_v_count_;
    if (l.mixer == Mixer::kAttention || l.mixer == Mixer::kMla) ++attn_v_count_;
    // llama.cpp: MoE models read the layer from the tensor name; dense ones count
    // ffn_down tensors in order.
    ffn_down_index_[i] = moe_model ? i : ffn_downs;
    if (l.ffn != Ffn::kNone) ++ffn_downs;
  }
}

Format WeightFormats::Gguf(const WeightSite& site) const {
  const GgufFileType ft = *recipe_.gguf;
  Format t = DefaultGgufType(ft);
  const int64_t n_expert = spec_.moe.experts;
  const int64_t gqa = spec_.attn.kv_heads > 0 ? spec_.attn.heads / spec_.attn.kv_heads : 1;
  const int64_t n_layer = spec_.num_layers();
  // llama.cpp's LLM_TYPE_70B: the 80-layer GQA llama (and qwen2) models.
  const bool is_70b = n_layer == 80 && spec_.attn.kv_heads != spec_.attn.heads &&
                      (spec_.model_type == "llama" || spec_.model_type == "mistral" ||
                       spec_.model_type == "qwen2");
  const auto layer = static_cast<size_t>(std::max<int64_t>(site.layer, 0));
  if (ft == GgufFileType::kMxfp4Moe) return Mxfp4Moe(site.role);
  switch (site.role) {
    case WeightRole::kRouter:
    case WeightRole::kConv:
    case WeightRole::kNorm:
    case WeightRole::kVector:
    case WeightRole::kScoreBias:
      return Format::kF32;  // never quantized; convert_hf_to_gguf writes them in f32
    case WeightRole::kLmHead:
      if (site.row % RowBlock(t) != 0) return Format::kQ8_0;
      return t == Format::kQ8_0 ? t : Format::kQ6K;
    case WeightRole::kEmbedding:
      if (spec_.tie_embeddings) {  // shared with the output: quantized like it
        if (site.row % RowBlock(t) != 0) return Format::kQ8_0;
        return t == Format::kQ8_0 ? t : Format::kQ6K;
      }
      break;
    case WeightRole::kAttnV:
    case WeightRole::kAttnQkv:
    case WeightRole::kAttnKvB: {
      const int64_t i = attn_v_index_[layer], n = attn_v_count_;
      if (ft == GgufFileType::kQ2K) {
        t = gqa >= 4 ? Format::kQ4K : Format::kQ3K;
      } else if (ft == GgufFileType::kQ3KM) {
        t = i < 2 ? Format::kQ5K : Format::kQ4K;
      } else if ((ft == GgufFileType::kQ4KM || ft == GgufFileType::kQ5KM) && UseMoreBits(i, n)) {
        t = Format::kQ6K;
      }
      if (is_70b && (t == Format::kQ3K || t == Format::kQ4K)) t = Format::kQ5K;
      if (n_expert == 8) t = Format::kQ8_0;
      break;
    }
    case WeightRole::kAttnK:
      if (n_expert == 8) t = Format::kQ8_0;
      break;
    case WeightRole::kFfnDown:
    case WeightRole::kExpertDown: {
      const int64_t i = ffn_down_index_[layer];
      if (ft == GgufFileType::kQ2K) {
        t = Format::kQ3K;
      } else if (ft == GgufFileType::kQ3KM) {
        t = i < n_layer / 16 ? Format::kQ5K : Format::kQ4K;
      } else if ((ft == GgufFileType::kQ4KM || ft == GgufFileType::kQ5KM) &&
                 UseMoreBits(i, n_layer)) {
        t = Format::kQ6K;
      }
      break;
    }
    case WeightRole::kAttnOut:
      if (n_expert == 8) {
        if (ft == GgufFileType::kQ2K || ft == GgufFileType::kQ3KM || ft == GgufFileType::kQ4KM) {
          t = Format::kQ5K;
        }
      } else if (ft == GgufFileType::kQ2K) {
        t = Format::kQ3K;
      } else if (ft == GgufFileType::kQ3KM) {
        t = Format::kQ4K;
      }
      break;
    case WeightRole::kAttnQ:
    case WeightRole::kFfnGate:
    case WeightRole::kFfnUp:
    case WeightRole::kExpertGate:
    case WeightRole::kExpertUp:
    case WeightRole::kOtherMatrix:
      break;
  }
  return t;
}

namespace {

// How a weight's role takes part in quantization: the one grouping of WeightRole that both the
// checkpoint's rules and --weights apply.
enum class QuantClass : uint8_t {
  kModelDtype,   // embeddings, convolutions, norms, vectors: always the model dtype
  kF32,          // e_score_correction_bias
  kLmHead,       // quantized only by formats that take every Linear module
  kRouter,       // routers and shared-expert gates: only where a rule names them
  kExperts,      // routed experts
  kLayerMatrix,  // the layers' projections
};

QuantClass ClassOf(WeightRole role) {
  switch (role) {
    case WeightRole::kEmbedding:
    case WeightRole::kConv:
    case WeightRole::kNorm:
    case WeightRole::kVector: return QuantClass::kModelDtype;
    case WeightRole::kScoreBias: return QuantClass::kF32;
    case WeightRole::kLmHead: return QuantClass::kLmHead;
    case WeightRole::kRouter: return QuantClass::kRouter;
    case WeightRole::kExpertGate:
    case WeightRole::kExpertUp:
    case WeightRole::kExpertDown: return QuantClass::kExperts;
    case WeightRole::kAttnQ:
    case WeightRole::kAttnK:
    case WeightRole::kAttnV:
    case WeightRole::kAttnQkv:
    case WeightRole::kAttnKvB:
    case WeightRole::kAttnOut:
    case WeightRole::kFfnGate:
    case WeightRole::kFfnUp:
    case WeightRole::kFfnDown:
    case WeightRole::kOtherMatrix: return QuantClass::kLayerMatrix;
  }
  return QuantClass::kModelDtype;
}

}  // namespace

// The checkpoint's format for a weight: Linear modules by their module names, the rest in
// the model dtype (e_score_correction_bias in f32).
Format WeightFormats::FromCheckpoint(const WeightSite& site, std::string_view tensor_name) const {
  const CheckpointQuant& q = *recipe_.checkpoint;
  bool in_scope = false;
  switch (ClassOf(site.role)) {
    case QuantClass::kModelDtype: return recipe_.dtype;
    case QuantClass::kF32: return Format::kF32;
    case QuantClass::kLmHead: in_scope = q.scope == CheckpointQuant::Scope::kAllLinear; break;
    // Routers and shared-expert gates: only where a rule names them (engines build them
    // unquantized: vLLM's gate layers take no quant_config).
    case QuantClass::kRouter: break;
    case QuantClass::kExperts: in_scope = q.scope != CheckpointQuant::Scope::kNone; break;
    case QuantClass::kLayerMatrix:
      in_scope = q.scope == CheckpointQuant::Scope::kLinear ||
                 q.scope == CheckpointQuant::Scope::kAllLinear;
      break;
  }
  const std::vector<std::string> names =
      HfModuleNames(tensor_name, q.module_prefix, spec_.model_type);
  const QuantScheme* s = q.SchemeFor(names, in_scope);
  return s ? s->weights : recipe_.dtype;
}

// A format chosen on the command line (--weights) or a GGUF file's: the layers' projections
// (and the routed experts unless the scope excludes them) in the matrix format.
Format WeightFormats::Assigned(const WeightSite& site, std::string_view tensor_name) const {
  if (recipe_.stored) {
    auto it = recipe_.stored->formats.find(tensor_name);
    if (it != recipe_.stored->formats.end()) return it->second;
  }
  if (recipe_.gguf) return Gguf(site);
  if (recipe_.checkpoint) return FromCheckpoint(site, tensor_name);
  switch (ClassOf(site.role)) {
    case QuantClass::kModelDtype:
    case QuantClass::kLmHead:
    case QuantClass::kRouter: return recipe_.dtype;
    case QuantClass::kF32: return Format::kF32;
    case QuantClass::kExperts:
      return recipe_.scope != CheckpointQuant::Scope::kNone ? recipe_.matrix : recipe_.dtype;
    case QuantClass::kLayerMatrix:
      return recipe_.scope == CheckpointQuant::Scope::kLinear ? recipe_.matrix : recipe_.dtype;
  }
  return recipe_.dtype;
}

Result<Format> WeightFormats::Choose(const WeightSite& site, std::string_view tensor_name) const {
  Format f = Assigned(site, tensor_name);
  if (recipe_.gguf) {
    if (site.row % RowBlock(f) != 0) {
      // llama.cpp's tensor_type_fallback: 256-block types fall back to 32-block ones.
      Format fallback = f;
      switch (f) {
        case Format::kQ2K:
        case Format::kQ3K: fallback = Format::kQ4_0; break;
        case Format::kQ4K: fallback = Format::kQ5_0; break;
        case Format::kQ5K: fallback = Format::kQ5_1; break;
        case Format::kQ6K: fallback = Format::kQ8_0; break;
        default:
          return MakeError("--weights " + std::string(GgufFileTypeName(*recipe_.gguf)) +
                           ": tensor '" + std::string(tensor_name) + "' has rows of " +
                           std::to_string(site.row) + " elements, not a multiple of the " +
                           std::string(format::FormatName(f)) + " block (" +
                           std::to_string(RowBlock(f)) + "), and llama.cpp defines no fallback");
      }
      f = site.row % RowBlock(fallback) == 0 ? fallback : Format::kF16;
    }
    return f;
  }
  if (site.row % RowBlock(f) != 0) {
    return MakeError("weight format " + std::string(format::FormatName(f)) + ": tensor '" +
                     std::string(tensor_name) + "' has rows of " + std::to_string(site.row) +
                     " elements, not a multiple of the format's " +
                     std::to_string(RowBlock(f)) + "-element block");
  }
  return f;
}

namespace {

// Step-graph module (after "layers.N.") -> the Hugging Face modules it stands for. One row
// per step-graph module; the names of every family (Llama/Qwen self_attn + mlp, Mixtral's
// block_sparse_moe w1/w2/w3, DeepSeek's shared_experts and kv_a_proj_with_mqa, TensorRT-LLM's
// fused_a, Qwen's shared_expert, gpt-oss's fused experts, Nemotron-H / Mamba's mixer).
struct ModuleNames {
  std::string_view step;
  std::initializer_list<std::string_view> hf;
};
const ModuleNames kModuleNames[] = {
    {"attn.qkv_proj", {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                       "self_attn.qkv_proj", "mixer.q_proj", "mixer.k_proj", "mixer.v_proj"}},
    {"attn.q_proj", {"self_attn.q_proj", "mixer.q_proj"}},
    {"attn.k_proj", {"self_attn.k_proj", "mixer.k_proj"}},
    {"attn.v_proj", {"self_attn.v_proj", "mixer.v_proj"}},
    {"attn.o_proj", {"self_attn.o_proj", "mixer.o_proj"}},
    {"attn.q_a_proj", {"self_attn.q_a_proj", "self_attn.fused_a"}},
    {"attn.q_b_proj", {"self_attn.q_b_proj"}},
    {"attn.kv_a_proj", {"self_attn.kv_a_proj_with_mqa", "self_attn.fused_a"}},
    {"attn.kv_b_proj", {"self_attn.kv_b_proj"}},
    {"mlp.gate_up_proj", {"mlp.gate_proj", "mlp.up_proj", "mlp.gate_up_proj"}},
    {"mlp.up_proj", {"mlp.up_proj", "mixer.up_proj"}},
    {"mlp.down_proj", {"mlp.down_proj", "mixer.down_proj"}},
    {"moe.router", {"mlp.gate", "mlp.router", "block_sparse_moe.gate", "mixer.gate"}},
    {"moe.experts.gate_up_proj",
     {"mlp.experts.0.gate_proj", "mlp.experts.0.up_proj", "mlp.experts.gate_up_proj",
      "block_sparse_moe.experts.0.w1", "block_sparse_moe.experts.0.w3",
      "mixer.experts.0.up_proj"}},
    {"moe.experts.down_proj",
     {"mlp.experts.0.down_proj", "mlp.experts.down_proj", "block_sparse_moe.experts.0.w2",
      "mixer.experts.0.down_proj"}},
    {"moe.shared_expert.gate_up_proj",
     {"mlp.shared_expert.gate_proj", "mlp.shared_expert.up_proj", "mlp.shared_experts.gate_proj",
      "mlp.shared_experts.up_proj", "mlp.shared_experts.gate_up_proj"}},
    {"moe.shared_expert.up_proj", {"mixer.shared_experts.up_proj", "mlp.shared_experts.up_proj"}},
    {"moe.shared_expert.down_proj",
     {"mlp.shared_expert.down_proj", "mlp.shared_experts.down_proj",
      "mixer.shared_experts.down_proj"}},
    {"moe.shared_expert_gate", {"mlp.shared_expert_gate"}},
    {"linear_attn.in_proj_qkvz",
     {"linear_attn.in_proj_qkvz", "linear_attn.in_proj_qkv", "linear_attn.in_proj_z"}},
    {"linear_attn.in_proj_ba",
     {"linear_attn.in_proj_ba", "linear_attn.in_proj_b", "linear_attn.in_proj_a"}},
    {"mamba.in_proj", {"mixer.in_proj"}},
    {"mamba.out_proj", {"mixer.out_proj"}},
};

// Families whose checkpoints name some modules their own way; a row here replaces the row of
// kModuleNames for that family (the generic names would match the family's other modules:
// Gemma-4's dense MLP is "mlp", its routed experts are not under it).
struct FamilyModuleNames {
  std::initializer_list<std::string_view> model_types;
  std::initializer_list<ModuleNames> rows;
};
const FamilyModuleNames kFamilyModuleNames[] = {
    // transformers' Gemma4TextDecoderLayer: `router` (its Linear `proj`) and `experts`
    // (gate_up_proj, down_proj) beside the dense `mlp`.
    {{"gemma4", "gemma4_text"},
     {{"moe.router", {"router.proj", "router"}},
      {"moe.experts.gate_up_proj", {"experts.gate_up_proj", "experts.0.gate_up_proj"}},
      {"moe.experts.down_proj", {"experts.down_proj", "experts.0.down_proj"}}}},
    // DeepSeek-V4's own checkpoint (its inference/model.py: attn.wq_a, wq_b, wkv, wo_a, wo_b,
    // the compressor's wkv and wgate, the indexer's wq_b and weights_proj; ffn.gate,
    // ffn.experts.N.w1/w2/w3, ffn.shared_experts.w1/w2/w3), and the transformers port's
    // (RedHatAI's copy: attn.fused_wqa_wkv for q_a and kv together, ffn.*.gate/up/down_proj).
    {{"deepseek_v4", "deepseek_ref"},
     {{"attn.q_a_proj", {"attn.wq_a", "attn.fused_wqa_wkv"}},
      {"attn.q_b_proj", {"attn.wq_b"}},
      {"attn.kv_proj", {"attn.wkv", "attn.fused_wqa_wkv"}},
      {"attn.o_a_proj", {"attn.wo_a"}},
      {"attn.o_b_proj", {"attn.wo_b"}},
      {"attn.compressor.kv_proj", {"attn.compressor.wkv"}},
      {"attn.compressor.gate_proj", {"attn.compressor.wgate"}},
      {"attn.compressor.indexer.kv_proj", {"attn.indexer.compressor.wkv"}},
      {"attn.compressor.indexer.gate_proj", {"attn.indexer.compressor.wgate"}},
      {"attn.compressor.indexer.q_b_proj", {"attn.indexer.wq_b"}},
      {"attn.compressor.indexer.weights_proj", {"attn.indexer.weights_proj"}},
      {"moe.router", {"ffn.gate"}},
      {"moe.experts.gate_up_proj",
       {"ffn.experts.0.w1", "ffn.experts.0.w3", "ffn.experts.0.gate_proj",
        "ffn.experts.0.up_proj"}},
      {"moe.experts.down_proj", {"ffn.experts.0.w2", "ffn.experts.0.down_proj"}},
      {"moe.shared_expert.gate_up_proj",
       {"ffn.shared_experts.w1", "ffn.shared_experts.w3", "ffn.shared_experts.gate_proj",
        "ffn.shared_experts.up_proj"}},
      {"moe.shared_expert.down_proj",
       {"ffn.shared_experts.w2", "ffn.shared_experts.down_proj"}}}},
};

// The family's own row for a step module, else the generic one; nullptr when neither names it.
const ModuleNames* FindModuleNames(std::string_view step, std::string_view model_type) {
  for (const FamilyModuleNames& family : kFamilyModuleNames) {
    if (std::find(family.model_types.begin(), family.model_types.end(), model_type) ==
        family.model_types.end()) {
      continue;
    }
    for (const ModuleNames& row : family.rows) {
      if (row.step == step) return &row;
    }
  }
  for (const ModuleNames& row : kModuleNames) {
    if (row.step == step) return &row;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> HfModuleNames(std::string_view tensor_name, std::string_view prefix,
                                       std::string_view model_type) {
  std::string_view module = tensor_name;
  for (std::string_view suffix : {".weight", ".bias"}) {
    if (module.ends_with(suffix)) module.remove_suffix(suffix.size());
  }
  const std::string p(prefix);
  std::vector<std::string> names;
  if (!module.starts_with("layers.")) {
    if (module == "lm_head") return {"lm_head"};
    if (module == "embed_tokens") return {p + "embed_tokens", p + "embeddings"};
    return {p + std::string(module)};
  }
  const size_t dot = module.find('.', 7);
  if (dot == std::string_view::npos) return {p + std::string(module)};
  const std::string layer = p + std::string(module.substr(0, dot + 1));  // "model.layers.3."
  const std::string_view rest = module.substr(dot + 1);
  if (const ModuleNames* row = FindModuleNames(rest, model_type)) {
    for (std::string_view hf : row->hf) names.push_back(layer + std::string(hf));
    return names;
  }
  names.push_back(layer + std::string(rest));
  if (rest.starts_with("attn.")) names.push_back(layer + "self_attn." + std::string(rest.substr(5)));
  return names;
}

namespace {

// The block a row of `f` must be whole blocks of (1: none; 2-D weight blocks pad too).
int64_t PadBlock(Format f) { return RowBlock(f); }

}  // namespace

void PadShardToBlocks(ModelSpec& local, const ModelSpec& full, const Recipe& recipe) {
  if (recipe.gguf) return;  // llama.cpp falls back to smaller blocks instead (Choose)
  const WeightFormats formats(local, recipe);
  const int64_t act_block = PadBlock(recipe.gemm_input);
  struct Width {
    int64_t* local;
    int64_t full;
    WeightRole role;
    const char* module;  // the down projection reading the width
    const char* what;
  };
  const Width widths[] = {
      {&local.mlp.intermediate, full.mlp.intermediate, WeightRole::kFfnDown, "mlp.down_proj",
       "MLP intermediate"},
      {&local.moe.intermediate, full.moe.intermediate, WeightRole::kExpertDown,
       "moe.experts.down_proj", "expert intermediate"},
      {&local.moe.shared_intermediate, full.moe.shared_intermediate, WeightRole::kFfnDown,
       "moe.shared_expert.down_proj", "shared-expert intermediate"},
  };
  for (const Width& w : widths) {
    if (*w.local == 0 || *w.local == w.full) continue;  // not split
    int64_t block = act_block;
    Format widest = recipe.gemm_input;
    for (int64_t i = 0; i < local.num_layers(); ++i) {
      const std::string name = "layers." + std::to_string(i) + "." + w.module + ".weight";
      const Format f = formats.Assigned({w.role, i, *w.local}, name);
      const int64_t b = PadBlock(f);
      if (std::lcm(block, b) != block) widest = f;
      block = std::lcm(block, b);
    }
    if (*w.local % block == 0) continue;
    const int64_t padded = (*w.local + block - 1) / block * block;
    local.assumptions.push_back(
        "each device's " + std::string(w.what) + " of " + std::to_string(*w.local) + " (" +
        std::to_string(w.full) + " split " + std::to_string(w.full / *w.local) +
        " ways) is padded to " + std::to_string(padded) + ", whole " + std::to_string(block) +
        "-element " + std::string(format::FormatName(widest)) +
        " blocks, as engines pad such shards; the padding's bytes and FLOPs are counted");
    *w.local = padded;
  }
}

}  // namespace opscope::import::hf
