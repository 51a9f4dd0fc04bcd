// config.json -> ModelSpec, per model_type. Fields a config omits take the default of the
// transformers configuration class of that model_type (cited per field below, from
// transformers' models/<type>/configuration_<type>.py); sizes, layer, head and expert counts
// have no default worth trusting (a class default describes some other model), so they are
// required. Layer kinds come from layer_types, full_attention_interval, first_k_dense_replace,
// hybrid_override_pattern and the sliding-window fields — never from the model's name.
#include <algorithm>
#include <string>
#include <utility>

#include "import/hf_config/config_json.h"
#include "import/hf_config/model_spec.h"

namespace opscope::import::hf {
namespace {

// Typed reads of one config object with the messages every importer error needs.
class Reader {
 public:
  Reader(ConfigObject object, ModelSpec& spec) : o_(std::move(object)), spec_(spec) {}

  const ConfigObject& object() const { return o_; }

  std::unexpected<Error> Fail(std::string_view key, const std::string& why) const {
    return std::unexpected(o_.FieldError(key, why));
  }

  // A required positive integer: absent or null is an error naming it.
  Result<int64_t> Required(std::string_view key) const {
    auto v = o_.Int(key);
    if (!v) return std::unexpected(v.error());
    if (!*v) {
      return MakeError(o_.origin() + ": missing field '" + o_.Path(key) + "' (required for " +
                       "model_type '" + spec_.model_type + "'; transformers' default describes " +
                       "another model, so opscope does not guess it)");
    }
    if (**v <= 0) return Fail(key, "must be positive, got " + std::to_string(**v));
    return **v;
  }

  // A positive integer with the config class's default when absent or null. `noted` adds an
  // assumption line when the default is taken.
  Result<int64_t> IntOr(std::string_view key, int64_t fallback, bool noted = false) const {
    auto v = o_.Int(key);
    if (!v) return std::unexpected(v.error());
    if (!*v) {
      if (noted) {
        spec_.assumptions.push_back("config has no '" + o_.Path(key) + "': " +
                                    std::to_string(fallback) + " (transformers default for " +
                                    spec_.model_type + ")");
      }
      return fallback;
    }
    if (**v <= 0) return Fail(key, "must be positive, got " + std::to_string(**v));
    return **v;
  }

  // num_hidden_layers: required, and bounded, since it sizes the layer list and the step graph
  // (a hostile config must not allocate or build per claimed layer; Llama 3.1 405B has 126,
  // and 1024 layers already take about a second to cost).
  Result<int64_t> Layers() const {
    auto layers = Required("num_hidden_layers");
    if (layers && *layers > kMaxLayers) {
      return Fail("num_hidden_layers", "must be at most " + std::to_string(kMaxLayers) +
                                           ", got " + std::to_string(*layers));
    }
    return layers;
  }
  static constexpr int64_t kMaxLayers = 1024;

  // A non-negative integer (0 allowed), default when absent or null.
  Result<int64_t> CountOr(std::string_view key, int64_t fallback) const {
    auto v = o_.Int(key);
    if (!v) return std::unexpected(v.error());
    if (!*v) return fallback;
    if (**v < 0) return Fail(key, "must not be negative, got " + std::to_string(**v));
    return **v;
  }

  Result<bool> BoolOr(std::string_view key, bool fallback) const {
    auto v = o_.Bool(key);
    if (!v) return std::unexpected(v.error());
    return v->value_or(fallback);
  }

  Result<std::string> StringOr(std::string_view key, std::string fallback) const {
    auto v = o_.String(key);
    if (!v) return std::unexpected(v.error());
    return v->value_or(std::move(fallback));
  }

  // A sliding window: the class default when absent, none when null (Python's None).
  Result<int64_t> WindowOr(std::string_view key, int64_t fallback) const {
    switch (o_.Find(key)) {
      case ConfigObject::Presence::kAbsent: return fallback;
      case ConfigObject::Presence::kNull: return 0;
      case ConfigObject::Presence::kValue: break;
    }
    auto v = o_.Int(key);
    if (!v) return std::unexpected(v.error());
    if (**v <= 0) return Fail(key, "must be positive or null, got " + std::to_string(**v));
    return **v;
  }

 private:
  ConfigObject o_;
  ModelSpec& spec_;
};

#define OPSCOPE_TRY(var, expr)                         \
  auto var##_result = (expr);                          \
  if (!var##_result) return std::unexpected(var##_result.error()); \
  auto var = std::move(*var##_result)

Result<format::Format> ParseDtype(const ConfigObject& o, std::string_view key,
                                  std::string_view value) {
  if (value == "bfloat16" || value == "bf16") return format::Format::kBf16;
  if (value == "float16" || value == "half" || value == "fp16") return format::Format::kF16;
  if (value == "float32" || value == "float" || value == "fp32") return format::Format::kF32;
  return std::unexpected(o.FieldError(
      key, "unsupported dtype \"" + std::string(value) + "\" (expected bfloat16, float16 or float32)"));
}

// The model dtype: dtype or torch_dtype, in the text config, then at the top level.
Result<void> ReadDtype(const ConfigObject& text, const ConfigObject& root, ModelSpec& spec) {
  for (const ConfigObject* o : {&text, &root}) {
    for (std::string_view key : {"dtype", "torch_dtype"}) {
      auto v = o->String(key);
      if (!v) return std::unexpected(v.error());
      if (*v) {
        auto f = ParseDtype(*o, key, **v);
        if (!f) return std::unexpected(f.error());
        spec.dtype = *f;
        return {};
      }
    }
  }
  spec.dtype = format::Format::kBf16;
  spec.assumptions.push_back("config has no torch_dtype/dtype: weights and activations in bf16");
  return {};
}

// quantization_config -> the checkpoint's formats (quant_config.h). Unsupported methods are
// recorded, not rejected: --weights may override them.
Result<void> ReadQuantization(const ConfigObject& root, ModelSpec& spec) {
  return ReadQuantizationConfig(root, spec.quant);
}

Activation ActivationFor(std::string_view act) {
  if (act.starts_with("gelu")) return Activation::kGeluGated;
  if (act == "relu2") return Activation::kRelu2;
  return Activation::kSiluGated;
}

Result<void> CheckHeads(const Reader& r, const ModelSpec& spec) {
  const AttentionSpec& a = spec.attn;
  if (a.kv_heads > a.heads || a.heads % a.kv_heads != 0) {
    return r.Fail("num_key_value_heads", std::to_string(a.kv_heads) +
                                             " does not divide num_attention_heads " +
                                             std::to_string(a.heads));
  }
  return {};
}

// Attention sizes shared by the GQA families. `kv_default` 0 means "num_attention_heads".
Result<void> ReadAttention(const Reader& r, ModelSpec& spec, int64_t kv_default,
                           std::optional<int64_t> head_dim_default, bool note_head_dim = true) {
  OPSCOPE_TRY(heads, r.Required("num_attention_heads"));
  spec.attn.heads = heads;
  OPSCOPE_TRY(kv, r.IntOr("num_key_value_heads", kv_default > 0 ? kv_default : heads,
                          kv_default > 0));
  spec.attn.kv_heads = kv;
  // head_dim: the class default, or hidden_size / num_attention_heads where the class has
  // none (LlamaConfig: head_dim = hidden_size // num_attention_heads).
  if (head_dim_default) {
    OPSCOPE_TRY(hd, r.IntOr("head_dim", *head_dim_default, note_head_dim));
    spec.attn.head_dim = hd;
  } else {
    auto hd = r.object().Int("head_dim");
    if (!hd) return std::unexpected(hd.error());
    if (*hd) {
      if (**hd <= 0) return r.Fail("head_dim", "must be positive");
      spec.attn.head_dim = **hd;
    } else {
      if (spec.hidden % heads != 0) {
        return r.Fail("num_attention_heads", std::to_string(heads) +
                                                 " does not divide hidden_size " +
                                                 std::to_string(spec.hidden) +
                                                 " and there is no head_dim");
      }
      spec.attn.head_dim = spec.hidden / heads;
    }
  }
  return CheckHeads(r, spec);
}

Result<void> ReadDenseMlp(const Reader& r, ModelSpec& spec, std::string_view act_key,
                          std::string act_default, bool bias) {
  OPSCOPE_TRY(inter, r.Required("intermediate_size"));
  spec.mlp.intermediate = inter;
  OPSCOPE_TRY(act, r.StringOr(act_key, std::move(act_default)));
  spec.mlp.act = ActivationFor(act);
  spec.mlp.bias = bias;
  return {};
}

Result<void> ReadMoeCounts(const Reader& r, ModelSpec& spec, std::string_view experts_key,
                           std::string_view inter_key) {
  OPSCOPE_TRY(experts, r.Required(experts_key));
  OPSCOPE_TRY(top_k, r.Required("num_experts_per_tok"));
  if (top_k > experts) {
    return r.Fail("num_experts_per_tok", std::to_string(top_k) + " is above the expert count " +
                                              std::to_string(experts) + " ('" +
                                              std::string(experts_key) + "')");
  }
  OPSCOPE_TRY(inter, r.Required(inter_key));
  spec.moe.experts = experts;
  spec.moe.top_k = top_k;
  spec.moe.intermediate = inter;
  return {};
}

// layer_types ("full_attention", "sliding_attention", "linear_attention"), checked against
// the layer count. Returns an empty list when absent.
Result<std::vector<std::string>> ReadLayerTypes(const Reader& r, int64_t layers) {
  auto v = r.object().StringList("layer_types");
  if (!v) return std::unexpected(v.error());
  if (!*v) return std::vector<std::string>{};
  if (static_cast<int64_t>((*v)->size()) != layers) {
    return r.Fail("layer_types", "has " + std::to_string((*v)->size()) +
                                     " entries, num_hidden_layers is " + std::to_string(layers));
  }
  for (size_t i = 0; i < (*v)->size(); ++i) {
    const std::string& t = (**v)[i];
    if (t != "full_attention" && t != "sliding_attention" && t != "linear_attention") {
      return r.Fail("layer_types", "item " + std::to_string(i) + ": unknown layer type \"" + t +
                                       "\" (expected full_attention, sliding_attention or "
                                       "linear_attention)");
    }
  }
  return std::move(**v);
}

// Applies layer_types to the mixers: sliding layers get `window`, linear ones GatedDeltaNet.
Result<void> ApplyLayerTypes(const Reader& r, const std::vector<std::string>& types,
                             int64_t window, ModelSpec& spec) {
  for (size_t i = 0; i < types.size(); ++i) {
    LayerSpec& l = spec.layers[i];
    if (types[i] == "sliding_attention") {
      if (window <= 0) {
        return r.Fail("layer_types", "layer " + std::to_string(i) +
                                         " is sliding_attention but sliding_window is null");
      }
      l.mixer = Mixer::kAttention;
      l.window = window;
    } else if (types[i] == "linear_attention") {
      if (spec.gdn.key_heads == 0) {
        return r.Fail("layer_types", "layer " + std::to_string(i) +
                                         " is linear_attention, which model_type '" +
                                         spec.model_type + "' does not have");
      }
      l.mixer = Mixer::kGatedDeltaNet;
    } else {
      l.mixer = Mixer::kAttention;
      l.window = 0;
    }
  }
  return {};
}

// Qwen's MoE placement (Qwen3MoeDecoderLayer): MoE unless listed in mlp_only_layers or
// (i + 1) is not a multiple of decoder_sparse_step.
Result<void> ApplyQwenSparseStep(const Reader& r, ModelSpec& spec) {
  OPSCOPE_TRY(step, r.IntOr("decoder_sparse_step", 1));
  auto only = r.object().IntList("mlp_only_layers");
  if (!only) return std::unexpected(only.error());
  const std::vector<int64_t> dense = only->value_or(std::vector<int64_t>{});
  bool any_dense = false;
  for (int64_t i = 0; i < spec.num_layers(); ++i) {
    const bool listed = std::find(dense.begin(), dense.end(), i) != dense.end();
    const bool moe = !listed && (i + 1) % step == 0;
    spec.layers[i].ffn = moe ? Ffn::kMoe : Ffn::kDense;
    any_dense = any_dense || !moe;
  }
  if (any_dense) {
    auto ok = ReadDenseMlp(r, spec, "hidden_act", "silu", false);
    if (!ok) return ok;
  }
  return {};
}

// Window of Qwen2-style configs (Qwen2Config): sliding_window applies only when
// use_sliding_window, to layers i >= max_window_layers.
Result<int64_t> QwenWindow(const Reader& r) {
  OPSCOPE_TRY(use, r.BoolOr("use_sliding_window", false));
  if (!use) return 0;
  return r.WindowOr("sliding_window", 4096);
}

// ---- Families --------------------------------------------------------------------------

// llama, mistral, mixtral, qwen2, qwen3, qwen3_moe (LlamaConfig, MistralConfig,
// MixtralConfig, Qwen2Config, Qwen3Config, Qwen3MoeConfig).
Result<void> ReadGqaFamily(const Reader& r, ModelSpec& spec) {
  const std::string& t = spec.model_type;
  // vocab_size defaults: Llama/Mistral/Mixtral 32000; Qwen2/Qwen3/Qwen3-MoE 151936.
  const bool qwen = t.starts_with("qwen");
  OPSCOPE_TRY(vocab, r.IntOr("vocab_size", qwen ? 151936 : 32000, true));
  spec.vocab = vocab;
  OPSCOPE_TRY(tie, r.BoolOr("tie_word_embeddings", false));
  spec.tie_embeddings = tie;
  // num_key_value_heads defaults: Llama None -> heads; Mistral/Mixtral 8; Qwen2/Qwen3 32;
  // Qwen3-MoE 4. head_dim: Qwen3 128; the others hidden_size // num_attention_heads.
  int64_t kv_default = 0;
  if (t == "mistral" || t == "mixtral") kv_default = 8;
  if (t == "qwen2" || t == "qwen3") kv_default = 32;
  if (t == "qwen3_moe") kv_default = 4;
  std::optional<int64_t> head_dim_default;
  if (t == "qwen3") head_dim_default = 128;
  if (auto ok = ReadAttention(r, spec, kv_default, head_dim_default); !ok) return ok;
  if (t == "qwen2") {
    spec.attn.qkv_bias = true;  // Qwen2Attention: q/k/v projections always carry a bias
  } else {
    OPSCOPE_TRY(bias, r.BoolOr("attention_bias", false));
    spec.attn.qkv_bias = spec.attn.o_bias = bias;
  }
  spec.attn.qk_norm = t == "qwen3" || t == "qwen3_moe";

  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kAttention, 0, Ffn::kDense});

  int64_t window = 0;
  if (t == "mistral") {
    OPSCOPE_TRY(w, r.WindowOr("sliding_window", 4096));  // MistralConfig: 4096
    window = w;
  } else if (t == "mixtral") {
    OPSCOPE_TRY(w, r.WindowOr("sliding_window", 0));  // MixtralConfig: None
    window = w;
  }
  if (window > 0) {
    for (LayerSpec& l : spec.layers) l.window = window;
  }
  if (qwen) {
    OPSCOPE_TRY(w, QwenWindow(r));
    OPSCOPE_TRY(types, ReadLayerTypes(r, layers));
    if (!types.empty()) {
      if (auto ok = ApplyLayerTypes(r, types, w, spec); !ok) return ok;
    } else if (w > 0) {
      OPSCOPE_TRY(max_window, r.CountOr("max_window_layers", 28));
      for (int64_t i = max_window; i < layers; ++i) spec.layers[i].window = w;
    }
  }

  if (t == "mixtral") {
    if (auto ok = ReadMoeCounts(r, spec, "num_local_experts", "intermediate_size"); !ok) return ok;
    OPSCOPE_TRY(act, r.StringOr("hidden_act", "silu"));
    spec.moe.act = ActivationFor(act);
    for (LayerSpec& l : spec.layers) l.ffn = Ffn::kMoe;
  } else if (t == "qwen3_moe") {
    if (auto ok = ReadMoeCounts(r, spec, "num_experts", "moe_intermediate_size"); !ok) return ok;
    if (auto ok = ApplyQwenSparseStep(r, spec); !ok) return ok;
  } else {
    OPSCOPE_TRY(mlp_bias, r.BoolOr("mlp_bias", false));
    if (auto ok = ReadDenseMlp(r, spec, "hidden_act", "silu", mlp_bias); !ok) return ok;
  }
  return {};
}

// qwen3_next, qwen3_5(_text), qwen3_5_moe(_text): GatedDeltaNet + gated full attention
// (Qwen3NextConfig, Qwen3_5TextConfig, Qwen3_5MoeTextConfig).
Result<void> ReadQwenHybrid(const Reader& r, ModelSpec& spec, bool moe) {
  OPSCOPE_TRY(vocab, r.IntOr("vocab_size", spec.model_type == "qwen3_next" ? 151936 : 248320,
                             true));
  spec.vocab = vocab;
  // kv heads default 2, head_dim 256 in all three classes.
  if (auto ok = ReadAttention(r, spec, 2, 256); !ok) return ok;
  OPSCOPE_TRY(bias, r.BoolOr("attention_bias", false));
  spec.attn.qkv_bias = spec.attn.o_bias = bias;
  spec.attn.qk_norm = true;
  OPSCOPE_TRY(gate, r.BoolOr("attn_output_gate", true));
  spec.attn.output_gate = gate;

  OPSCOPE_TRY(kh, r.Required("linear_num_key_heads"));
  OPSCOPE_TRY(vh, r.Required("linear_num_value_heads"));
  OPSCOPE_TRY(kd, r.Required("linear_key_head_dim"));
  OPSCOPE_TRY(vd, r.Required("linear_value_head_dim"));
  OPSCOPE_TRY(kernel, r.IntOr("linear_conv_kernel_dim", 4));
  if (vh % kh != 0) {
    return r.Fail("linear_num_value_heads", std::to_string(vh) +
                                                " is not a multiple of linear_num_key_heads " +
                                                std::to_string(kh));
  }
  spec.gdn = GdnSpec{kh, vh, kd, vd, kernel};

  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kAttention, 0, Ffn::kDense});
  OPSCOPE_TRY(types, ReadLayerTypes(r, layers));
  if (types.empty()) {
    // Default pattern: every full_attention_interval-th layer is full attention.
    OPSCOPE_TRY(interval, r.IntOr("full_attention_interval", 4));
    for (int64_t i = 0; i < layers; ++i) {
      types.push_back((i + 1) % interval != 0 ? "linear_attention" : "full_attention");
    }
  }
  if (auto ok = ApplyLayerTypes(r, types, 0, spec); !ok) return ok;

  if (moe) {
    if (auto ok = ReadMoeCounts(r, spec, "num_experts", "moe_intermediate_size"); !ok) return ok;
    OPSCOPE_TRY(shared, r.CountOr("shared_expert_intermediate_size", 0));
    spec.moe.shared_intermediate = shared;
    spec.moe.shared_gate = shared > 0;  // Qwen3NextSparseMoeBlock.shared_expert_gate
    if (auto ok = ApplyQwenSparseStep(r, spec); !ok) return ok;
  } else {
    if (auto ok = ReadDenseMlp(r, spec, "hidden_act", "silu", false); !ok) return ok;
  }
  return {};
}

// deepseek_v3 and kimi_k2 (DeepseekV3Config; Kimi-K2 ships the same class as remote code).
Result<void> ReadDeepseek(const Reader& r, ModelSpec& spec) {
  OPSCOPE_TRY(vocab, r.IntOr("vocab_size", 129280, true));
  spec.vocab = vocab;
  OPSCOPE_TRY(tie, r.BoolOr("tie_word_embeddings", false));
  spec.tie_embeddings = tie;
  OPSCOPE_TRY(heads, r.Required("num_attention_heads"));
  spec.attn.heads = spec.attn.kv_heads = heads;
  OPSCOPE_TRY(bias, r.BoolOr("attention_bias", false));
  spec.attn.qkv_bias = spec.attn.o_bias = bias;
  // q_lora_rank: null means q_proj straight from the hidden state (DeepSeek-V2-Lite).
  auto q_lora = r.object().Int("q_lora_rank");
  if (!q_lora) return std::unexpected(q_lora.error());
  if (r.object().Find("q_lora_rank") == ConfigObject::Presence::kAbsent) {
    return MakeError(r.object().origin() + ": missing field 'q_lora_rank' (use null for none)");
  }
  spec.mla.q_lora_rank = q_lora->value_or(0);
  OPSCOPE_TRY(kvr, r.Required("kv_lora_rank"));
  OPSCOPE_TRY(nope, r.Required("qk_nope_head_dim"));
  OPSCOPE_TRY(rope, r.Required("qk_rope_head_dim"));
  OPSCOPE_TRY(v, r.Required("v_head_dim"));
  spec.mla.kv_lora_rank = kvr;
  spec.mla.qk_nope_head_dim = nope;
  spec.mla.qk_rope_head_dim = rope;
  spec.mla.v_head_dim = v;

  OPSCOPE_TRY(layers, r.Layers());
  OPSCOPE_TRY(first_dense, r.CountOr("first_k_dense_replace", 3));  // DeepseekV3Config: 3
  OPSCOPE_TRY(freq, r.IntOr("moe_layer_freq", 1));                  // remote code: 1
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kMla, 0, Ffn::kDense});
  bool any_dense = false;
  for (int64_t i = 0; i < layers; ++i) {
    const bool moe = i >= first_dense && i % freq == 0;
    spec.layers[i].ffn = moe ? Ffn::kMoe : Ffn::kDense;
    any_dense = any_dense || !moe;
  }
  if (any_dense) {
    if (auto ok = ReadDenseMlp(r, spec, "hidden_act", "silu", false); !ok) return ok;
  }
  if (auto ok = ReadMoeCounts(r, spec, "n_routed_experts", "moe_intermediate_size"); !ok) return ok;
  OPSCOPE_TRY(shared, r.CountOr("n_shared_experts", 1));  // DeepseekV3Config: 1
  spec.moe.shared_intermediate = shared * spec.moe.intermediate;
  // DeepseekV3TopkRouter: sigmoid scores with e_score_correction_bias (noaux_tc).
  OPSCOPE_TRY(scoring, r.StringOr("scoring_func", "sigmoid"));
  spec.moe.sigmoid_scores = scoring == "sigmoid";
  OPSCOPE_TRY(topk_method, r.StringOr("topk_method", "noaux_tc"));
  spec.moe.score_correction_bias = topk_method == "noaux_tc";
  return {};
}

// gpt_oss (GptOssConfig).
Result<void> ReadGptOss(const Reader& r, ModelSpec& spec) {
  OPSCOPE_TRY(vocab, r.IntOr("vocab_size", 201088, true));
  spec.vocab = vocab;
  OPSCOPE_TRY(tie, r.BoolOr("tie_word_embeddings", false));
  spec.tie_embeddings = tie;
  if (auto ok = ReadAttention(r, spec, 8, 64); !ok) return ok;
  OPSCOPE_TRY(bias, r.BoolOr("attention_bias", true));
  spec.attn.qkv_bias = spec.attn.o_bias = bias;
  spec.attn.sinks = true;  // GptOssAttention.sinks
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kAttention, 0, Ffn::kMoe});
  OPSCOPE_TRY(window, r.WindowOr("sliding_window", 128));
  OPSCOPE_TRY(types, ReadLayerTypes(r, layers));
  if (types.empty()) {  // GptOssConfig: sliding on even layers, full on odd ones
    for (int64_t i = 0; i < layers; ++i) {
      types.push_back((i + 1) % 2 != 0 ? "sliding_attention" : "full_attention");
    }
  }
  if (auto ok = ApplyLayerTypes(r, types, window, spec); !ok) return ok;
  if (auto ok = ReadMoeCounts(r, spec, "num_local_experts", "intermediate_size"); !ok) return ok;
  spec.moe.router_bias = true;  // GptOssTopKRouter.bias
  spec.moe.expert_bias = true;  // GptOssExperts.gate_up_proj_bias / down_proj_bias
  return {};
}

// gemma2, gemma3_text (Gemma2Config, Gemma3TextConfig).
Result<void> ReadGemma(const Reader& r, const ConfigObject& root, ModelSpec& spec, bool gemma3) {
  OPSCOPE_TRY(vocab, r.IntOr("vocab_size", gemma3 ? 262208 : 256000, true));
  spec.vocab = vocab;
  // tie_word_embeddings: True in both classes; Gemma-3 writes it at the top level if at all.
  auto tie_text = r.object().Bool("tie_word_embeddings");
  if (!tie_text) return std::unexpected(tie_text.error());
  auto tie_root = root.Bool("tie_word_embeddings");
  if (!tie_root) return std::unexpected(tie_root.error());
  spec.tie_embeddings = tie_text->value_or(tie_root->value_or(true));
  if (auto ok = ReadAttention(r, spec, 4, 256); !ok) return ok;  // kv 4, head_dim 256
  OPSCOPE_TRY(bias, r.BoolOr("attention_bias", false));
  spec.attn.qkv_bias = spec.attn.o_bias = bias;
  spec.attn.qk_norm = gemma3;  // Gemma3Attention.q_norm / k_norm
  spec.sandwich_norms = true;
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kAttention, 0, Ffn::kDense});
  OPSCOPE_TRY(window, r.WindowOr("sliding_window", 4096));
  OPSCOPE_TRY(types, ReadLayerTypes(r, layers));
  if (types.empty()) {
    // Gemma2: sliding on even layers. Gemma3: every sliding_window_pattern-th layer is full
    // (the class reads the legacy int sliding_window_pattern, default 6).
    int64_t pattern = 2;
    if (gemma3) {
      OPSCOPE_TRY(p, r.IntOr("sliding_window_pattern", 6, true));
      pattern = p;
    }
    for (int64_t i = 0; i < layers; ++i) {
      types.push_back((i + 1) % pattern != 0 ? "sliding_attention" : "full_attention");
    }
  }
  if (auto ok = ApplyLayerTypes(r, types, window, spec); !ok) return ok;
  return ReadDenseMlp(r, spec, "hidden_activation", "gelu_pytorch_tanh", false);
}

Result<void> ReadMamba2Mixer(const Reader& r, ModelSpec& spec, std::string_view heads_key,
                             std::string_view head_dim_key, std::string_view state_key,
                             std::string_view bias_key) {
  OPSCOPE_TRY(heads, r.Required(heads_key));
  OPSCOPE_TRY(head_dim, r.Required(head_dim_key));
  OPSCOPE_TRY(state, r.Required(state_key));
  OPSCOPE_TRY(groups, r.IntOr("n_groups", 8));  // Mamba2Config / NemotronHConfig: 8
  OPSCOPE_TRY(kernel, r.IntOr("conv_kernel", 4));
  OPSCOPE_TRY(conv_bias, r.BoolOr("use_conv_bias", true));
  OPSCOPE_TRY(proj_bias, r.BoolOr(bias_key, false));
  if (heads % groups != 0) {
    return r.Fail("n_groups", std::to_string(groups) + " does not divide the Mamba head count " +
                                  std::to_string(heads));
  }
  spec.mamba = Mamba2Spec{heads, head_dim, state, groups, kernel, conv_bias, proj_bias};
  return {};
}

// mamba2 (Mamba2Config): every layer a Mamba2 mixer, no MLP.
Result<void> ReadMamba2(const Reader& r, ModelSpec& spec) {
  OPSCOPE_TRY(vocab, r.IntOr("vocab_size", 32768, true));
  spec.vocab = vocab;
  OPSCOPE_TRY(tie, r.BoolOr("tie_word_embeddings", false));
  spec.tie_embeddings = tie;
  if (auto ok = ReadMamba2Mixer(r, spec, "num_heads", "head_dim", "state_size", "use_bias"); !ok) {
    return ok;
  }
  OPSCOPE_TRY(expand, r.IntOr("expand", 2));
  if (spec.mamba.inner() != expand * spec.hidden) {
    return r.Fail("num_heads", "num_heads·head_dim = " + std::to_string(spec.mamba.inner()) +
                                   " differs from expand·hidden_size = " +
                                   std::to_string(expand * spec.hidden));
  }
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kMamba2, 0, Ffn::kNone});
  return {};
}

// nemotron_h (NemotronHConfig): one block per pattern character — M Mamba2, * attention,
// - MLP (squared ReLU), E MoE.
Result<void> ReadNemotronH(const Reader& r, ModelSpec& spec) {
  OPSCOPE_TRY(vocab, r.IntOr("vocab_size", 131072, true));
  spec.vocab = vocab;
  OPSCOPE_TRY(tie, r.BoolOr("tie_word_embeddings", false));
  spec.tie_embeddings = tie;
  OPSCOPE_TRY(pattern, r.StringOr("hybrid_override_pattern", ""));
  if (pattern.empty()) {
    return MakeError(r.object().origin() + ": missing field 'hybrid_override_pattern' " +
                     "(required for model_type 'nemotron_h')");
  }
  if (static_cast<int64_t>(pattern.size()) > Reader::kMaxLayers) {
    return r.Fail("hybrid_override_pattern", "has " + std::to_string(pattern.size()) +
                                                 " layers, more than " +
                                                 std::to_string(Reader::kMaxLayers));
  }
  auto layers_field = r.object().Int("num_hidden_layers");
  if (!layers_field) return std::unexpected(layers_field.error());
  if (*layers_field && **layers_field != static_cast<int64_t>(pattern.size())) {
    return r.Fail("hybrid_override_pattern",
                  "has " + std::to_string(pattern.size()) + " layers, num_hidden_layers is " +
                      std::to_string(**layers_field));
  }
  bool attention = false, mlp = false, moe = false, mamba = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    LayerSpec l;
    switch (pattern[i]) {
      case 'M': l.mixer = Mixer::kMamba2; mamba = true; break;
      case '*': l.mixer = Mixer::kAttention; attention = true; break;
      case '-': l.ffn = Ffn::kDense; mlp = true; break;
      case 'E': l.ffn = Ffn::kMoe; moe = true; break;
      default:
        return r.Fail("hybrid_override_pattern",
                      "character " + std::to_string(i) + " is '" + std::string(1, pattern[i]) +
                          "' (expected M, *, - or E)");
    }
    spec.layers.push_back(l);
  }
  if (attention) {
    // head_dim: NemotronHConfig default 128; older configs call it attention_head_dim.
    OPSCOPE_TRY(head_dim_default, r.IntOr("attention_head_dim", 128));
    const bool legacy = r.object().HasValue("attention_head_dim");
    if (auto ok = ReadAttention(r, spec, 8, head_dim_default, !legacy); !ok) return ok;
    OPSCOPE_TRY(bias, r.BoolOr("attention_bias", false));
    spec.attn.qkv_bias = spec.attn.o_bias = bias;
    spec.attn.rope = false;  // NemotronHAttention applies no rotary embedding
  }
  if (mamba) {
    if (auto ok = ReadMamba2Mixer(r, spec, "mamba_num_heads", "mamba_head_dim", "ssm_state_size",
                                  "mamba_proj_bias");
        !ok) {
      return ok;
    }
  }
  OPSCOPE_TRY(mlp_bias, r.BoolOr("mlp_bias", false));
  if (mlp) {
    OPSCOPE_TRY(inter, r.Required("intermediate_size"));
    spec.mlp = MlpSpec{inter, Activation::kRelu2, mlp_bias};
  }
  if (moe) {
    if (auto ok = ReadMoeCounts(r, spec, "n_routed_experts", "moe_intermediate_size"); !ok) {
      return ok;
    }
    spec.moe.act = Activation::kRelu2;
    OPSCOPE_TRY(shared, r.CountOr("n_shared_experts", 1));
    if (shared > 0) {
      OPSCOPE_TRY(width, r.Required("moe_shared_expert_intermediate_size"));
      spec.moe.shared_intermediate = width;
    }
    spec.moe.sigmoid_scores = true;         // NemotronHTopkRouter: sigmoid
    spec.moe.score_correction_bias = true;  // with e_score_correction_bias
  }
  // mamba_ssm_cache_dtype: NemotronHConfig default "float32".
  OPSCOPE_TRY(ssm, r.StringOr("mamba_ssm_cache_dtype", "float32"));
  if (mamba) {
    auto f = ParseDtype(r.object(), "mamba_ssm_cache_dtype", ssm);
    if (!f) return std::unexpected(f.error());
    spec.ssm_state_dtype = *f;
  }
  return {};
}

}  // namespace

Result<ModelSpec> ParseHfConfig(std::string_view json_text, const std::string& origin) {
  auto doc = ConfigDocument::Parse(json_text, origin);
  if (!doc) return std::unexpected(doc.error());
  const ConfigObject root = (*doc)->root();
  ModelSpec spec;
  spec.origin = origin;

  auto type = root.String("model_type");
  if (!type) return std::unexpected(type.error());
  if (!*type) return MakeError(origin + ": missing field 'model_type'");
  const std::string outer_type = **type;
  // Multimodal wrappers keep the language model under text_config.
  ConfigObject text = root;
  auto text_config = root.Object("text_config");
  if (!text_config) return std::unexpected(text_config.error());
  const bool nested = outer_type == "qwen3_5" || outer_type == "qwen3_5_moe" ||
                      outer_type == "gemma3";
  if (nested) {
    if (!*text_config) {
      return MakeError(origin + ": missing field 'text_config' (required for model_type '" +
                       outer_type + "')");
    }
    text = **text_config;
  }
  spec.model_type = outer_type;
  if (nested) {
    auto inner = text.String("model_type");
    if (!inner) return std::unexpected(inner.error());
    if (*inner) spec.model_type = **inner;
  }
  const std::string& t = spec.model_type;
  const bool known = std::find(std::begin(kSupportedModelTypes), std::end(kSupportedModelTypes),
                               outer_type) != std::end(kSupportedModelTypes);
  if (!known) {
    std::string list;
    for (std::string_view s : kSupportedModelTypes) list += (list.empty() ? "" : ", ") + std::string(s);
    return MakeError(origin + ": field 'model_type': \"" + outer_type +
                     "\" is not supported (supported: " + list + ")");
  }

  Reader r(text, spec);
  OPSCOPE_TRY(hidden, r.Required("hidden_size"));
  spec.hidden = hidden;
  if (auto ok = ReadDtype(text, root, spec); !ok) return std::unexpected(ok.error());
  if (auto ok = ReadQuantization(root, spec); !ok) return std::unexpected(ok.error());

  Result<void> ok;
  if (outer_type == "llama" || outer_type == "mistral" || outer_type == "mixtral" ||
      outer_type == "qwen2" || outer_type == "qwen3" || outer_type == "qwen3_moe") {
    ok = ReadGqaFamily(r, spec);
  } else if (outer_type == "qwen3_next" || outer_type == "qwen3_5" ||
             outer_type == "qwen3_5_moe") {
    ok = ReadQwenHybrid(r, spec, outer_type != "qwen3_5");
  } else if (outer_type == "deepseek_v3" || outer_type == "kimi_k2") {
    ok = ReadDeepseek(r, spec);
  } else if (outer_type == "gpt_oss") {
    ok = ReadGptOss(r, spec);
  } else if (outer_type == "gemma2" || outer_type == "gemma3" || outer_type == "gemma3_text") {
    ok = ReadGemma(r, root, spec, outer_type != "gemma2");
  } else if (outer_type == "mamba2") {
    ok = ReadMamba2(r, spec);
  } else if (outer_type == "nemotron_h") {
    ok = ReadNemotronH(r, spec);
  }
  if (!ok) return std::unexpected(ok.error());
  (void)t;

  // The state dtype of linear-attention / SSM layers: mamba_ssm_dtype where the config has
  // it (Qwen3.5), else the model dtype (DESIGN: --state-dtype overrides).
  if (!spec.ssm_state_dtype) {
    auto ssm = text.String("mamba_ssm_dtype");
    if (!ssm) return std::unexpected(ssm.error());
    if (*ssm) {
      auto f = ParseDtype(text, "mamba_ssm_dtype", **ssm);
      if (!f) return std::unexpected(f.error());
      spec.ssm_state_dtype = *f;
    }
  }
  // Qwen3.5 keeps tie_word_embeddings at the top level.
  if (nested && !text.HasValue("tie_word_embeddings") && t != "gemma3_text") {
    auto tie = root.Bool("tie_word_embeddings");
    if (!tie) return std::unexpected(tie.error());
    if (*tie) spec.tie_embeddings = **tie;
  }
  if (spec.layers.empty()) return MakeError(origin + ": the model has no layers");
  return spec;
}

}  // namespace opscope::import::hf
