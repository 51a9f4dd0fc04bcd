// Typed config reads with aliases and class defaults, and the pieces every family reader
// shares: heads, MLP and MoE sizes, MoE placement, MTP modules (see config_reader.h).
#include "import/hf_config/config_reader.h"

#include <algorithm>

#include "import/hf_config/config_fields.h"

namespace opscope::import::hf {

std::vector<std::string_view> Reader::Names(std::string_view key) {
  std::vector<std::string_view> names{key};
  for (const FieldAlias& a : kFieldAliases) {
    if (a.field == key) names.push_back(a.alias);
  }
  return names;
}

Result<std::optional<std::pair<ConfigObject, std::string>>> Reader::Locate(
    std::string_view name) const {
  const size_t dot = name.find('.');
  if (dot == std::string_view::npos) {
    return std::optional<std::pair<ConfigObject, std::string>>{{o_, std::string(name)}};
  }
  auto nested = o_.Object(name.substr(0, dot));
  if (!nested) return std::unexpected(nested.error());
  if (!*nested) return std::optional<std::pair<ConfigObject, std::string>>{};
  return std::optional<std::pair<ConfigObject, std::string>>{
      {**nested, std::string(name.substr(dot + 1))}};
}

Result<std::optional<int64_t>> Reader::Int(std::string_view key, std::string* found) const {
  std::optional<int64_t> value;
  std::string holder;
  for (std::string_view name : Names(key)) {
    OPSCOPE_TRY(where, Locate(name));
    if (!where) continue;
    OPSCOPE_TRY(v, where->first.Int(where->second));
    if (!v) continue;
    if (value && *value != *v) {
      return std::unexpected(where->first.FieldError(
          where->second, std::to_string(*v) + " disagrees with '" + holder + "' " +
                             std::to_string(*value) + " (two names of one field)"));
    }
    if (!value) {
      value = v;
      holder = where->first.Path(where->second);
    }
  }
  if (found != nullptr) *found = value ? holder : o_.Path(key);
  return value;
}

bool Reader::Has(std::string_view key) const {
  for (std::string_view name : Names(key)) {
    auto where = Locate(name);
    if (where && *where && (*where)->first.HasValue((*where)->second)) return true;
  }
  return false;
}

Result<int64_t> Reader::Required(std::string_view key, std::string* found) const {
  std::string name;
  OPSCOPE_TRY(v, Int(key, &name));
  if (found != nullptr) *found = name;
  if (!v) {
    std::string also;
    for (std::string_view alias : Names(key)) {
      if (alias != key) also += std::string(also.empty() ? " (or '" : "', '") + std::string(alias);
    }
    if (!also.empty()) also += "')";
    return MakeError(o_.origin() + ": missing field '" + o_.Path(key) + "'" + also +
                     " (required for model_type '" + spec_.model_type +
                     "'; transformers' default describes another model, so opscope does not "
                     "guess it)");
  }
  if (*v <= 0) {
    return MakeError(o_.origin() + ": field '" + name + "': must be positive, got " +
                     std::to_string(*v));
  }
  return *v;
}

Result<int64_t> Reader::IntOr(std::string_view key, int64_t fallback, bool noted) const {
  std::string name;
  OPSCOPE_TRY(v, Int(key, &name));
  if (!v) {
    if (noted) {
      Note("config has no '" + o_.Path(key) + "': " + std::to_string(fallback) +
           " (transformers default for " + spec_.model_type + ")");
    }
    return fallback;
  }
  if (*v <= 0) {
    return MakeError(o_.origin() + ": field '" + name + "': must be positive, got " +
                     std::to_string(*v));
  }
  return *v;
}

Result<int64_t> Reader::CountOr(std::string_view key, int64_t fallback) const {
  std::string name;
  OPSCOPE_TRY(v, Int(key, &name));
  if (!v) return fallback;
  if (*v < 0) {
    return MakeError(o_.origin() + ": field '" + name + "': must not be negative, got " +
                     std::to_string(*v));
  }
  return *v;
}

Result<bool> Reader::BoolOr(std::string_view key, bool fallback) const {
  OPSCOPE_TRY(v, o_.Bool(key));
  return v.value_or(fallback);
}

Result<std::string> Reader::StringOr(std::string_view key, std::string fallback) const {
  OPSCOPE_TRY(v, o_.String(key));
  return v.value_or(std::move(fallback));
}

Result<int64_t> Reader::WindowOr(std::string_view key, int64_t fallback) const {
  bool any_null = false;
  for (std::string_view name : Names(key)) {
    if (o_.Find(name) == ConfigObject::Presence::kNull) any_null = true;
  }
  std::string name;
  OPSCOPE_TRY(v, Int(key, &name));
  if (!v) return any_null ? 0 : fallback;
  if (*v <= 0) {
    return MakeError(o_.origin() + ": field '" + name + "': must be positive or null, got " +
                     std::to_string(*v));
  }
  return *v;
}

Result<int64_t> Reader::Layers() const {
  OPSCOPE_TRY(layers, Required("num_hidden_layers"));
  if (layers > kMaxLayers) {
    return Fail("num_hidden_layers", "must be at most " + std::to_string(kMaxLayers) + ", got " +
                                         std::to_string(layers));
  }
  return layers;
}

Result<std::vector<std::string>> Reader::LayerList(std::string_view key, int64_t layers) const {
  OPSCOPE_TRY(v, o_.StringList(key));
  if (!v) return std::vector<std::string>{};
  if (static_cast<int64_t>(v->size()) != layers) {
    return Fail(key, "has " + std::to_string(v->size()) + " entries, num_hidden_layers is " +
                         std::to_string(layers));
  }
  return std::move(*v);
}

Result<format::Format> ParseDtype(const ConfigObject& o, std::string_view key,
                                  std::string_view value) {
  if (value == "bfloat16" || value == "bf16") return format::Format::kBf16;
  if (value == "float16" || value == "half" || value == "fp16") return format::Format::kF16;
  if (value == "float32" || value == "float" || value == "fp32") return format::Format::kF32;
  return std::unexpected(o.FieldError(
      key, "unsupported dtype \"" + std::string(value) + "\" (expected bfloat16, float16 or float32)"));
}

Activation ActivationFor(std::string_view act) {
  if (act.starts_with("gelu")) return Activation::kGeluGated;
  if (act == "relu2") return Activation::kRelu2;
  return Activation::kSiluGated;
}

Result<std::string> ReadActivation(const Reader& r) {
  const Family& f = r.family();
  // Gemma's classes read hidden_activation; their configs often also carry the legacy
  // hidden_act, which the class ignores when hidden_activation is set.
  OPSCOPE_TRY(legacy, r.String("hidden_act"));
  if (f.act_key == "hidden_act") return legacy.value_or(std::string(f.act));
  OPSCOPE_TRY(act, r.String(f.act_key));
  return act.value_or(legacy.value_or(std::string(f.act)));
}

Result<void> ReadAttentionHeads(const Reader& r, bool note_head_dim) {
  ModelSpec& spec = r.spec();
  const Family& f = r.family();
  OPSCOPE_TRY(heads, r.Required("num_attention_heads"));
  spec.attn.heads = heads;
  OPSCOPE_TRY(kv, r.IntOr("num_key_value_heads", f.kv_heads > 0 ? f.kv_heads : heads,
                          f.kv_heads > 0));
  spec.attn.kv_heads = kv;
  // head_dim: the class default, or hidden_size / num_attention_heads where the class has
  // none (LlamaConfig: head_dim = hidden_size // num_attention_heads).
  if (f.head_dim > 0) {
    OPSCOPE_TRY(hd, r.IntOr("head_dim", f.head_dim, note_head_dim));
    spec.attn.head_dim = hd;
  } else {
    OPSCOPE_TRY(hd, r.Int("head_dim"));
    if (hd) {
      if (*hd <= 0) return r.Fail("head_dim", "must be positive");
      spec.attn.head_dim = *hd;
    } else {
      if (spec.hidden % heads != 0) {
        return r.Fail("num_attention_heads", std::to_string(heads) + " does not divide hidden_size " +
                                                 std::to_string(spec.hidden) +
                                                 " and there is no head_dim");
      }
      spec.attn.head_dim = spec.hidden / heads;
    }
  }
  const AttentionSpec& a = spec.attn;
  if (a.kv_heads > a.heads || a.heads % a.kv_heads != 0) {
    return r.Fail("num_key_value_heads", std::to_string(a.kv_heads) +
                                             " does not divide num_attention_heads " +
                                             std::to_string(a.heads));
  }
  return {};
}

Result<void> ReadDenseMlp(const Reader& r, bool bias) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(inter, r.Required("intermediate_size"));
  spec.mlp.intermediate = inter;
  OPSCOPE_TRY(act, ReadActivation(r));
  spec.mlp.act = r.family().plain_mlp ? Activation::kGelu : ActivationFor(act);
  spec.mlp.bias = bias;
  return {};
}

Result<void> ReadMoeCounts(const Reader& r, std::string_view inter_key) {
  ModelSpec& spec = r.spec();
  std::string experts_name;
  OPSCOPE_TRY(experts, r.Required("num_local_experts", &experts_name));
  OPSCOPE_TRY(top_k, r.Required("num_experts_per_tok"));
  if (top_k > experts) {
    const size_t dot = experts_name.rfind('.');
    return r.Fail("num_experts_per_tok",
                  std::to_string(top_k) + " is above the expert count " + std::to_string(experts) +
                      " ('" + (dot == std::string::npos ? experts_name : experts_name.substr(dot + 1)) +
                      "')");
  }
  OPSCOPE_TRY(inter, r.Required(inter_key));
  spec.moe.experts = experts;
  spec.moe.top_k = top_k;
  spec.moe.intermediate = inter;
  return {};
}

Result<void> ReadMtp(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(declared, r.Int("num_nextn_predict_layers"));
  OPSCOPE_TRY(modules, r.CountOr("num_nextn_predict_layers", r.family().mtp_modules));
  spec.mtp.modules = modules;
  if (!declared && modules > 0) {
    r.Note("MTP: " + std::to_string(modules) + " module(s) that " +
           std::string(r.family().model_type) + " checkpoints store and the config does not "
           "declare (no num_nextn_predict_layers): used by --speculative mtp:N only");
  }
  if (modules > 0 && spec.mtp.blocks.empty() && !spec.layers.empty()) {
    spec.mtp.blocks = {spec.layers.back()};
  }
  OPSCOPE_TRY(own, r.BoolOr("mtp_use_dedicated_embeddings", r.family().mtp_stores_embeddings));
  spec.mtp.own_embeddings = own;
  return {};
}

Result<void> ApplyLayerTypes(const Reader& r, const std::vector<std::string>& types,
                             int64_t window, int64_t chunk) {
  ModelSpec& spec = r.spec();
  for (size_t i = 0; i < types.size(); ++i) {
    LayerSpec& l = spec.layers[i];
    const std::string& t = types[i];
    const std::string where = "item " + std::to_string(i) + ": ";
    if (t == "full_attention" || t == "attention") {
      l.mixer = Mixer::kAttention;
      l.window = 0;
    } else if (t == "sliding_attention") {
      if (window <= 0) {
        return r.Fail("layer_types", "layer " + std::to_string(i) +
                                         " is sliding_attention but sliding_window is null");
      }
      l.mixer = Mixer::kAttention;
      l.window = window;
    } else if (t == "chunked_attention") {
      if (chunk <= 0) {
        return r.Fail("layer_types", where + "chunked_attention without attention_chunk_size");
      }
      l.mixer = Mixer::kAttention;
      l.chunk = chunk;
    } else if (t == "linear_attention") {
      if (spec.gdn.key_heads > 0) {
        l.mixer = Mixer::kGatedDeltaNet;
      } else if (spec.kda.heads > 0) {
        l.mixer = Mixer::kKda;
      } else {
        return r.Fail("layer_types", "layer " + std::to_string(i) +
                                         " is linear_attention, which model_type '" +
                                         spec.model_type + "' does not have");
      }
    } else {
      return r.Fail("layer_types", where + "unknown layer type \"" + t +
                                       "\" (expected full_attention, sliding_attention, "
                                       "chunked_attention or linear_attention)");
    }
  }
  return {};
}

namespace {

// Qwen's MoE placement (Qwen3MoeDecoderLayer): MoE unless listed in mlp_only_layers or
// (i + 1) is not a multiple of decoder_sparse_step.
Result<void> PlaceQwenSparseStep(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(step, r.IntOr("decoder_sparse_step", 1));
  OPSCOPE_TRY(only, r.IntList("mlp_only_layers"));
  const std::vector<int64_t> dense = only.value_or(std::vector<int64_t>{});
  for (int64_t i = 0; i < spec.num_layers(); ++i) {
    const bool listed = std::find(dense.begin(), dense.end(), i) != dense.end();
    spec.layers[i].ffn = !listed && (i + 1) % step == 0 ? Ffn::kMoe : Ffn::kDense;
  }
  return {};
}

// ERNIE-4.5 (Ernie4_5_MoeDecoderLayer): MoE where (i + 1) % moe_layer_interval == 0 and
// moe_layer_start_index <= i <= moe_layer_end_index (-1: the last layer).
Result<void> PlaceErnie(const Reader& r) {
  ModelSpec& spec = r.spec();
  const int64_t layers = spec.num_layers();
  OPSCOPE_TRY(start, r.CountOr("moe_layer_start_index", 1));
  OPSCOPE_TRY(end_field, r.Int("moe_layer_end_index"));
  OPSCOPE_TRY(interval, r.IntOr("moe_layer_interval", 1));
  const int64_t end = end_field && *end_field >= 0 ? *end_field : layers - 1;
  for (int64_t i = 0; i < layers; ++i) {
    const bool moe = (i + 1) % interval == 0 && i >= start && i <= end;
    spec.layers[i].ffn = moe ? Ffn::kMoe : Ffn::kDense;
  }
  return {};
}

}  // namespace

Result<void> PlaceMoe(const Reader& r, MoePlacement rule, int64_t first_dense_default) {
  ModelSpec& spec = r.spec();
  const int64_t layers = spec.num_layers();
  switch (rule) {
    case MoePlacement::kNone:
      for (LayerSpec& l : spec.layers) l.ffn = Ffn::kDense;
      break;
    case MoePlacement::kAll:
      for (LayerSpec& l : spec.layers) l.ffn = Ffn::kMoe;
      break;
    case MoePlacement::kQwenStep: return PlaceQwenSparseStep(r);
    case MoePlacement::kErnie: return PlaceErnie(r);
    case MoePlacement::kFirstDense: {
      // DeepseekV3DecoderLayer: MoE where i >= first_k_dense_replace and i % moe_layer_freq == 0.
      OPSCOPE_TRY(first, r.CountOr("first_k_dense_replace", first_dense_default));
      OPSCOPE_TRY(freq, r.IntOr("moe_layer_freq", 1));
      for (int64_t i = 0; i < layers; ++i) {
        spec.layers[i].ffn = i >= first && i % freq == 0 ? Ffn::kMoe : Ffn::kDense;
      }
      break;
    }
    case MoePlacement::kLayerFlags: {
      // MiMo-V2-Flash (MiMoV2DecoderLayer): moe_layer_freq is a list, 1 for an MoE layer.
      OPSCOPE_TRY(flags, r.IntList("moe_layer_freq"));
      if (!flags) return r.Fail("moe_layer_freq", "is required (one 0 / 1 per layer)");
      if (static_cast<int64_t>(flags->size()) != layers) {
        return r.Fail("moe_layer_freq", "has " + std::to_string(flags->size()) +
                                            " entries, num_hidden_layers is " + std::to_string(layers));
      }
      for (int64_t i = 0; i < layers; ++i) {
        const int64_t f = (*flags)[static_cast<size_t>(i)];
        if (f != 0 && f != 1) {
          return r.Fail("moe_layer_freq", "item " + std::to_string(i) + " is " + std::to_string(f) +
                                              " (expected 0: dense MLP, or 1: MoE)");
        }
        spec.layers[i].ffn = f == 1 ? Ffn::kMoe : Ffn::kDense;
      }
      break;
    }
    case MoePlacement::kMlpTypes: {
      // LagunaConfig: mlp_layer_types, "dense" (an MLP of intermediate_size) or "sparse" (MoE)
      // per layer; absent, ["dense"] + ["sparse"] · (layers - 1) (first_dense_default dense).
      OPSCOPE_TRY(types, r.LayerList("mlp_layer_types", layers));
      for (int64_t i = 0; i < layers; ++i) {
        if (types.empty()) {
          spec.layers[i].ffn = i < first_dense_default ? Ffn::kDense : Ffn::kMoe;
          continue;
        }
        const std::string& t = types[static_cast<size_t>(i)];
        if (t != "dense" && t != "sparse") {
          return r.Fail("mlp_layer_types", "item " + std::to_string(i) + ": \"" + t +
                                               "\" (expected dense or sparse)");
        }
        spec.layers[i].ffn = t == "sparse" ? Ffn::kMoe : Ffn::kDense;
      }
      break;
    }
    case MoePlacement::kInterleave: {
      // Llama4TextConfig: moe_layers = every interleave_moe_layer_step-th layer (1-based),
      // unless the config lists moe_layers itself.
      OPSCOPE_TRY(step, r.IntOr("interleave_moe_layer_step", 1));
      OPSCOPE_TRY(listed, r.IntList("moe_layers"));
      for (int64_t i = 0; i < layers; ++i) {
        const bool moe = listed ? std::find(listed->begin(), listed->end(), i) != listed->end()
                                : (i + 1) % step == 0;
        spec.layers[i].ffn = moe ? Ffn::kMoe : Ffn::kDense;
      }
      break;
    }
  }
  return {};
}

}  // namespace opscope::import::hf
