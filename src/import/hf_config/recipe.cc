// Recipe resolution and the per-tensor weight formats (see recipe.h).
#include "import/hf_config/recipe.h"

#include <algorithm>

namespace opscope::import::hf {

using format::Format;

std::optional<GgufFileType> ParseGgufFileType(std::string_view name) {
  for (size_t i = 0; i < std::size(kGgufFileTypeNames); ++i) {
    if (kGgufFileTypeNames[i] == name) return static_cast<GgufFileType>(i);
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

Result<Format> ParseOptionFormat(std::string_view option, const std::string& value) {
  auto f = format::ParseFormat(value);
  if (!f) {
    std::string names;
    for (int i = 0; i < format::kNumFormats; ++i) {
      if (i > 0) names += ", ";
      names += format::kFormats[i].name;
    }
    return MakeError("option '" + std::string(option) + "': unknown format '" + value +
                     "' (known: " + names + ")");
  }
  return *f;
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
  }
  return Format::kQ4_0;
}

// llama.cpp's use_more_bits(i_layer, n_layers).
bool UseMoreBits(int64_t i, int64_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

}  // namespace

Result<Recipe> ResolveRecipe(const ModelSpec& spec, const RecipeOptions& options) {
  Recipe r;
  r.dtype = spec.dtype;
  r.compute = r.gemm_input = r.kv = r.conv_state = spec.dtype;
  r.state = spec.ssm_state_dtype.value_or(spec.dtype);
  const std::string dtype_name(format::FormatName(spec.dtype));

  if (options.weights) {
    const std::string& w = *options.weights;
    if (auto ft = ParseGgufFileType(w)) {
      r.gguf = *ft;
      r.weights_label = w + " (llama.cpp file type)";
    } else {
      auto f = ParseOptionFormat("--weights", w);
      if (!f) {
        std::string types;
        for (std::string_view s : kGgufFileTypeNames) {
          types += ' ';
          types += s;
        }
        return MakeError(f.error().message + "; or a llama.cpp file type:" + types);
      }
      const format::FormatInfo& info = format::Info(*f);
      if (info.kind == format::Kind::kInt && *f != Format::kInt8) {
        return MakeError("option '--weights': '" + w + "' is not a weight format");
      }
      if (IsPlainFloat(*f)) {
        r.dtype = r.matrix = *f;  // the whole checkpoint in this dtype
        r.weights_label = w;
      } else {
        r.scope = CheckpointQuant::Scope::kLinear;
        r.matrix = *f;
        r.weights_label = w + " (layer matrices) + " + dtype_name;
      }
    }
  } else if (!spec.quant.unsupported.empty()) {
    return MakeError(spec.origin + ": quantization_config: " + spec.quant.unsupported +
                     "; choose the weight format with --weights");
  } else if (spec.quant.scope != CheckpointQuant::Scope::kNone) {
    r.scope = spec.quant.scope;
    r.matrix = spec.quant.format;
    const std::string what = spec.quant.scope == CheckpointQuant::Scope::kRoutedExperts
                                 ? " (routed experts, from config) + "
                                 : " (layer matrices, from config) + ";
    r.weights_label = std::string(format::FormatName(r.matrix)) + what + dtype_name;
  } else {
    r.weights_label = dtype_name;
  }

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

Result<Format> WeightFormats::Choose(const WeightSite& site, std::string_view tensor_name) const {
  Format f = recipe_.dtype;
  if (recipe_.gguf) {
    f = Gguf(site);
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
  switch (site.role) {
    case WeightRole::kEmbedding:
    case WeightRole::kLmHead:
    case WeightRole::kRouter:
    case WeightRole::kConv:
    case WeightRole::kNorm:
    case WeightRole::kVector:
      return recipe_.dtype;
    case WeightRole::kScoreBias:
      return Format::kF32;
    case WeightRole::kExpertGate:
    case WeightRole::kExpertUp:
    case WeightRole::kExpertDown:
      if (recipe_.scope != CheckpointQuant::Scope::kNone) f = recipe_.matrix;
      break;
    case WeightRole::kAttnQ:
    case WeightRole::kAttnK:
    case WeightRole::kAttnV:
    case WeightRole::kAttnQkv:
    case WeightRole::kAttnKvB:
    case WeightRole::kAttnOut:
    case WeightRole::kFfnGate:
    case WeightRole::kFfnUp:
    case WeightRole::kFfnDown:
    case WeightRole::kOtherMatrix:
      if (recipe_.scope == CheckpointQuant::Scope::kLinear) f = recipe_.matrix;
      break;
  }
  if (site.row % RowBlock(f) != 0) {
    return MakeError("weight format " + std::string(format::FormatName(f)) + ": tensor '" +
                     std::string(tensor_name) + "' has rows of " + std::to_string(site.row) +
                     " elements, not a multiple of the format's " +
                     std::to_string(RowBlock(f)) + "-element block");
  }
  return f;
}

}  // namespace opscope::import::hf
