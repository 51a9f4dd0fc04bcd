// config.json -> ModelSpec. The model_type picks a row of the family table (families.h): its
// reader, where the language model's fields are, and the defaults of the transformers
// configuration class for the fields a config omits (cited per row). Sizes, layer, head and
// expert counts have no default worth trusting (a class default describes some other model),
// so they are required. Layer kinds come from layer_types, full_attention_interval,
// first_k_dense_replace, hybrid_override_pattern, the sliding-window and chunk fields — never
// from the model's name. Every field the reader does not look up goes through
// CheckUnreadFields (config_fields.h): nothing that changes shapes is ignored silently.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "import/hf_config/config_fields.h"
#include "import/hf_config/config_json.h"
#include "import/hf_config/config_reader.h"
#include "import/hf_config/model_spec.h"
#include "support/spelling.h"

namespace opscope::import::hf {
namespace {

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

// ---- The decoder reader: attention + dense MLP / MoE -------------------------------------

// vocab_size (the class default is noted when taken) and tie_word_embeddings (the text
// config's, else the top level's, else the class default).
Result<void> ReadVocabAndTie(const Reader& r, const ConfigObject& root) {
  ModelSpec& spec = r.spec();
  const Family& f = r.family();
  if (f.vocab > 0) {
    OPSCOPE_TRY(vocab, r.IntOr("vocab_size", f.vocab, true));
    spec.vocab = vocab;
  } else {
    OPSCOPE_TRY(vocab, r.Required("vocab_size"));
    spec.vocab = vocab;
  }
  OPSCOPE_TRY(tie_text, r.Bool("tie_word_embeddings"));
  OPSCOPE_TRY(tie_root, root.Bool("tie_word_embeddings"));
  spec.tie_embeddings = tie_text.value_or(tie_root.value_or(f.tie));
  return {};
}

// The q/k norms (families.h QkNorm).
Result<void> ReadQkNorm(const Reader& r) {
  AttentionSpec& a = r.spec().attn;
  const QkNorm kind = r.family().qk_norm;
  switch (kind) {
    case QkNorm::kNone: return {};
    case QkNorm::kPerHead: {
      // Qwen3 and its kin norm q and k in every attention layer; a config may still say so
      // (Qwen3-Coder-480B's use_qk_norm: true). A false one describes another model.
      OPSCOPE_TRY(use, r.Bool("use_qk_norm"));
      if (use && !*use) {
        return r.Fail("use_qk_norm", "false, but model_type '" + r.spec().model_type +
                                         "' norms q and k in every attention layer");
      }
      a.qk_norm = true;
      return {};
    }
    case QkNorm::kFullWidth: a.qk_norm = a.qk_norm_full = true; return {};
    case QkNorm::kFlag:
    case QkNorm::kFlagFull:
    case QkNorm::kL2Flag: break;
  }
  OPSCOPE_TRY(use, r.BoolOr("use_qk_norm", false));
  a.qk_norm = use;
  a.qk_norm_weightless = use && kind == QkNorm::kL2Flag;  // Llama4TextL2Norm has no weight
  if (kind == QkNorm::kFlagFull) {
    // MiniMaxM2Config.qk_norm_type: "per_layer" (one norm over all heads) or "per_head".
    OPSCOPE_TRY(type, r.StringOr("qk_norm_type", "per_layer"));
    if (type != "per_layer" && type != "per_head") {
      return r.Fail("qk_norm_type", "\"" + type + "\" (expected per_layer or per_head)");
    }
    a.qk_norm_full = use && type == "per_layer";
  }
  return {};
}

}  // namespace

// Biases of q/k/v and o, the q/k norms.
Result<void> ReadAttentionShape(const Reader& r) {
  ModelSpec& spec = r.spec();
  const Family& f = r.family();
  OPSCOPE_CHECK(ReadAttentionHeads(r));
  if (f.qkv_bias_always) {
    // Qwen2Attention: q/k/v projections always carry a bias (Qwen2MoeConfig: qkv_bias, True).
    OPSCOPE_TRY(qkv, r.BoolOr("qkv_bias", true));
    spec.attn.qkv_bias = qkv;
    // The class's attention_bias (MiMo's config sets it) is not what Qwen2Attention reads: q/k/v
    // carry a bias either way and o_proj none.
    OPSCOPE_TRY(unused, r.Bool(f.bias_key));
    if (unused) {
      r.Note("config field '" + std::string(f.bias_key) + "' (" + (*unused ? "true" : "false") +
             ") is not read by model_type '" + spec.model_type + "''s attention: q/k/v " +
             "always carry a bias, o_proj none (Qwen2Attention)");
    }
  } else {
    OPSCOPE_TRY(bias, r.BoolOr(f.bias_key, f.bias));
    spec.attn.qkv_bias = bias;
    spec.attn.o_bias = bias && !f.qkv_bias_only;
    // A stray qkv_bias (Qwen3-Coder-480B's config, a Qwen3MoeConfig, which reads
    // attention_bias): it must say the same as the bias the family reads.
    if (f.bias_key != "qkv_bias") {
      OPSCOPE_TRY(stray, r.Bool("qkv_bias"));
      if (stray && *stray != bias) {
        return r.Fail("qkv_bias", std::string(*stray ? "true" : "false") + " disagrees with '" +
                                      std::string(f.bias_key) + "' (" + (bias ? "true" : "false") +
                                      "), which model_type '" + spec.model_type + "' reads");
      }
    }
  }
  // SeedOssConfig: attention_out_bias, separate from the q/k/v bias.
  OPSCOPE_TRY(out_bias, r.Bool("attention_out_bias"));
  if (out_bias) spec.attn.o_bias = *out_bias;
  if (!f.o_bias_key.empty()) {
    OPSCOPE_TRY(o_bias, r.BoolOr(f.o_bias_key, f.o_bias));
    spec.attn.o_bias = o_bias;
  }
  OPSCOPE_CHECK(ReadQkNorm(r));
  spec.attn.sinks = f.sinks;
  spec.norm_layout = f.norms;
  spec.norm = f.norm;
  return {};
}

namespace {

// The string form of a family's pattern field (Exaone4Config.sliding_window_pattern, "LLLG" in
// EXAONE-4.0-32B): "L" (local, sliding) and "G" (global) repeated from layer 0, the last layer
// always global (the class's docstring). Per layer whether it is full attention; nullopt when the
// field does not hold a string.
Result<std::optional<std::vector<bool>>> StringPattern(const Reader& r, int64_t layers) {
  const Family& f = r.family();
  if (f.pattern_key.empty() || !r.object().IsString(f.pattern_key)) return std::nullopt;
  OPSCOPE_TRY(s, r.String(f.pattern_key));
  if (s->empty() || s->find_first_not_of("LG") != std::string::npos) {
    return r.Fail(f.pattern_key, "\"" + *s + "\" (expected an integer or a string of L and G)");
  }
  std::vector<bool> full;
  for (int64_t i = 0; i < layers; ++i) {
    full.push_back((*s)[static_cast<size_t>(i) % s->size()] == 'G' || i == layers - 1);
  }
  return full;
}

// A family's pattern field (sliding_window_pattern) next to layer_types: the configuration
// class builds layer_types from the pattern only when layer_types is absent (Exaone4Config,
// Gemma3TextConfig), so layer_types decides; a pattern that says otherwise is listed.
Result<void> CheckPatternAgainstTypes(const Reader& r, const std::vector<std::string>& types) {
  const Family& f = r.family();
  if (f.window_placement != WindowPlacement::kPattern || f.pattern_key.empty()) return {};
  const auto layers = static_cast<int64_t>(types.size());
  OPSCOPE_TRY(letters, StringPattern(r, layers));
  std::vector<bool> full;
  std::string shown;
  if (letters) {
    full = *letters;
    OPSCOPE_TRY(s, r.String(f.pattern_key));
    shown = "\"" + *s + "\"";
  } else {
    OPSCOPE_TRY(pattern, r.Int(f.pattern_key));
    if (!pattern || *pattern <= 0) return {};
    for (int64_t i = 0; i < layers; ++i) full.push_back((i + 1) % *pattern == 0);
    shown = std::to_string(*pattern);
  }
  for (size_t i = 0; i < types.size(); ++i) {
    if (full[i] != (types[i] == "full_attention")) {
      r.Note(std::string(f.pattern_key) + " " + shown + " disagrees with layer_types at layer " +
             std::to_string(i) + "; layer_types is used (as the configuration class does)");
      return {};
    }
  }
  return {};
}

// EXAONE-4: with a sliding window configured, the full-attention layers take no RoPE.
Result<void> NopeGlobalLayers(const Reader& r, int64_t window) {
  if (!r.family().global_nope || window <= 0) return {};
  for (LayerSpec& l : r.spec().layers) {
    if (l.mixer == Mixer::kAttention && l.window == 0) l.rope = false;
  }
  return {};
}

// The sliding window and which layers use it (families.h WindowPlacement), unless layer_types
// says it per layer.
Result<void> ReadWindows(const Reader& r) {
  ModelSpec& spec = r.spec();
  const Family& f = r.family();
  const int64_t layers = spec.num_layers();
  OPSCOPE_TRY(types, r.LayerList("layer_types", layers));
  int64_t window = 0;
  switch (f.window_placement) {
    case WindowPlacement::kNone: {
      // The class has no window of its own, but a layer_types that names sliding layers
      // places sliding_window on them (vLLM's LlamaAttention reads both, per layer: the
      // layer of an EAGLE-3 head trained with a window).
      if (!types.empty()) {
        OPSCOPE_TRY(w, r.WindowOr("sliding_window", 0));
        window = w;
      }
      break;
    }
    case WindowPlacement::kAll:
    case WindowPlacement::kPattern: {
      OPSCOPE_TRY(w, r.WindowOr("sliding_window", f.window));
      window = w;
      break;
    }
    case WindowPlacement::kQwen: {
      // Qwen2Config: sliding_window applies only when use_sliding_window, to layers
      // i >= max_window_layers. All three fields are read either way.
      OPSCOPE_TRY(use, r.BoolOr("use_sliding_window", false));
      OPSCOPE_TRY(w, r.WindowOr("sliding_window", f.window));
      OPSCOPE_TRY(max_window, r.CountOr("max_window_layers", 28));
      window = use ? w : 0;
      if (types.empty() && window > 0) {
        for (int64_t i = max_window; i < layers; ++i) spec.layers[i].window = window;
      }
      break;
    }
  }
  OPSCOPE_TRY(chunk, r.CountOr("attention_chunk_size", 0));
  if (!types.empty()) {
    OPSCOPE_CHECK(CheckPatternAgainstTypes(r, types));
    OPSCOPE_CHECK(ApplyLayerTypes(r, types, window, chunk));
    return NopeGlobalLayers(r, window);
  }
  if (f.window_placement == WindowPlacement::kAll && window > 0) {
    for (LayerSpec& l : spec.layers) l.window = window;
  } else if (f.window_placement == WindowPlacement::kPattern) {
    OPSCOPE_TRY(letters, StringPattern(r, layers));
    int64_t every = f.full_every;
    if (!f.pattern_key.empty() && !letters) {
      OPSCOPE_TRY(p, r.IntOr(f.pattern_key, f.full_every, true));
      every = p;
    }
    for (int64_t i = 0; i < layers; ++i) {
      if (letters ? !(*letters)[i] : (i + 1) % every != 0) {
        if (window <= 0) {
          return r.Fail("sliding_window", "is null, but layer " + std::to_string(i) +
                                              " is a sliding-window layer");
        }
        spec.layers[i].window = window;
      }
    }
  }
  // Chunked local attention (Llama-4): the layers that apply RoPE attend within their chunk.
  if (chunk > 0) {
    for (LayerSpec& l : spec.layers) {
      if (l.rope) l.chunk = chunk;
    }
  }
  return NopeGlobalLayers(r, window);
}

// NoPE layers: no_rope_layers (1: RoPE, 0: none, per layer), else every no_rope_layer_interval-th
// layer when the class has such a default (Llama4TextConfig, SmolLM3Config).
Result<void> ReadNope(const Reader& r) {
  ModelSpec& spec = r.spec();
  const int64_t layers = spec.num_layers();
  OPSCOPE_TRY(listed, r.IntList("no_rope_layers"));
  if (listed && !listed->empty()) {
    if (static_cast<int64_t>(listed->size()) != layers) {
      return r.Fail("no_rope_layers", "has " + std::to_string(listed->size()) +
                                          " entries, num_hidden_layers is " + std::to_string(layers));
    }
    for (int64_t i = 0; i < layers; ++i) spec.layers[i].rope = (*listed)[i] != 0;
    OPSCOPE_CHECK(r.CountOr("no_rope_layer_interval", 0));
    return {};
  }
  if (r.family().nope_every == 0) return {};
  OPSCOPE_TRY(every, r.IntOr("no_rope_layer_interval", r.family().nope_every));
  for (int64_t i = 0; i < layers; ++i) spec.layers[i].rope = (i + 1) % every != 0;
  return {};
}

// Routed experts, shared experts and the router of the MoE layers.
Result<void> ReadMoe(const Reader& r) {
  ModelSpec& spec = r.spec();
  const Family& f = r.family();
  OPSCOPE_CHECK(ReadMoeCounts(r, f.expert_width));
  OPSCOPE_TRY(act, ReadActivation(r));
  spec.moe.act = ActivationFor(act);
  // Shared experts: a total width (Qwen's shared_expert_intermediate_size), else a count of
  // routed-expert-wide ones (DeepSeek's n_shared_experts).
  OPSCOPE_TRY(shared_width, r.CountOr("shared_expert_intermediate_size", 0));
  OPSCOPE_TRY(shared_count, r.CountOr("n_shared_experts", f.shared_experts));
  spec.moe.shared_intermediate =
      r.Has("shared_expert_intermediate_size") ? shared_width : shared_count * spec.moe.intermediate;
  spec.moe.shared_gate = f.shared_gate && spec.moe.shared_intermediate > 0;
  spec.moe.router_bias = f.router_bias;
  spec.moe.expert_bias = f.expert_bias;
  OPSCOPE_TRY(scoring, r.StringOr("scoring_func",
                                  f.sigmoid_router || f.sigmoid_scores ? "sigmoid" : "softmax"));
  spec.moe.sigmoid_scores = scoring == "sigmoid";
  // The correction bias: DeepSeek-style sigmoid routers (MiniMax-M2: use_routing_bias) and
  // ERNIE-4.5's moe_statics over softmax scores.
  // Step-3.7-Flash names it use_moe_router_bias (a float32 router_bias per expert, added to
  // the scores for the top-k choice only, as DeepSeek's correction bias).
  OPSCOPE_TRY(step_bias, r.Bool("use_moe_router_bias"));
  OPSCOPE_TRY(routing_bias, r.BoolOr("use_routing_bias", step_bias.value_or(true)));
  spec.moe.score_correction_bias = (f.sigmoid_router && routing_bias) || f.correction_bias;
  return {};
}

}  // namespace

Result<void> ReadMlps(const Reader& r) {
  ModelSpec& spec = r.spec();
  const Family& f = r.family();
  OPSCOPE_CHECK(PlaceMoe(r, f.moe, f.first_dense));
  const bool any_dense = std::any_of(spec.layers.begin(), spec.layers.end(),
                                     [](const LayerSpec& l) { return l.ffn == Ffn::kDense; });
  const bool any_moe = std::any_of(spec.layers.begin(), spec.layers.end(),
                                   [](const LayerSpec& l) { return l.ffn == Ffn::kMoe; });
  OPSCOPE_TRY(mlp_bias_field, r.BoolOr("mlp_bias", f.mlp_bias));
  const bool mlp_bias = f.bias_covers_mlp ? spec.attn.qkv_bias : mlp_bias_field;
  OPSCOPE_CHECK(r.Int(f.dense_width));  // read either way: an all-MoE model's class has one too
  if (any_moe) OPSCOPE_CHECK(ReadMoe(r));
  if (any_dense) {
    OPSCOPE_TRY(inter, r.Required(f.dense_width));
    OPSCOPE_CHECK(ReadDenseMlp(r, mlp_bias));
    spec.mlp.intermediate = inter;
  }
  return {};
}

Result<void> ReadDecoder(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_CHECK(ReadAttentionShape(r));
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kAttention, 0, Ffn::kDense});
  // MiniMax's attn_type_list: 1 softmax attention, 0 lightning (linear) attention.
  OPSCOPE_TRY(attn_types, r.IntList("attn_type_list"));
  if (attn_types) {
    if (static_cast<int64_t>(attn_types->size()) != layers) {
      return r.Fail("attn_type_list", "has " + std::to_string(attn_types->size()) +
                                          " entries, num_hidden_layers is " + std::to_string(layers));
    }
    for (size_t i = 0; i < attn_types->size(); ++i) {
      if ((*attn_types)[i] != 1) {
        return r.Fail("attn_type_list", "item " + std::to_string(i) + " is " +
                                            std::to_string((*attn_types)[i]) +
                                            ": lightning attention (0) is not modelled");
      }
    }
  }
  OPSCOPE_TRY(head_bias, r.BoolOr("lm_head_bias", false));  // PhimoeConfig
  spec.lm_head_bias = head_bias;
  OPSCOPE_CHECK(ReadNope(r));
  OPSCOPE_CHECK(ReadWindows(r));
  OPSCOPE_CHECK(ReadMlps(r));
  // MiniMax-M2: use_mtp, num_mtp_modules, mtp_transformer_layers (layers per module).
  OPSCOPE_TRY(use_mtp, r.BoolOr("use_mtp", true));
  OPSCOPE_TRY(per_module, r.IntOr("mtp_transformer_layers", 1));
  OPSCOPE_CHECK(ReadMtp(r));
  if (!use_mtp) spec.mtp.modules = 0;
  if (spec.mtp.modules > 0 && per_module > 1) {
    spec.mtp.blocks.assign(static_cast<size_t>(per_module), spec.layers.back());
  }
  return {};
}

namespace {

Result<void> Dispatch(const Reader& r, const ConfigObject& root) {
  OPSCOPE_CHECK(ReadVocabAndTie(r, root));
  switch (r.family().reader) {
    case ReaderKind::kDecoder: return ReadDecoder(r);
    case ReaderKind::kQwenHybrid: return ReadQwenHybrid(r);
    case ReaderKind::kMla: return ReadMla(r);
    case ReaderKind::kMamba1: return ReadMamba1(r);
    case ReaderKind::kMamba2: return ReadMamba2(r);
    case ReaderKind::kNemotronH: return ReadNemotronH(r);
    case ReaderKind::kNemotronNas: return ReadNemotronNas(r);
    case ReaderKind::kJamba: return ReadJamba(r);
    case ReaderKind::kFalconH1: return ReadFalconH1(r);
    case ReaderKind::kGraniteHybrid: return ReadGraniteHybrid(r);
    case ReaderKind::kKimiLinear: return ReadKimiLinear(r);
    case ReaderKind::kDeepseekV4: return ReadDeepseekV4(r);
    case ReaderKind::kGemma4: return ReadGemma4(r);
    case ReaderKind::kMimoV2Flash: return ReadMimoV2Flash(r);
    case ReaderKind::kMiniMaxM3: return ReadMiniMaxM3(r, root);
    case ReaderKind::kLaguna: return ReadLaguna(r);
  }
  return MakeError("unknown reader");
}

std::string SupportedList() {
  std::string list;
  for (std::string_view s : kSupportedModelTypes) list += (list.empty() ? "" : ", ") + std::string(s);
  return list;
}

// The row of a model_type as people type it: exactly, else in any case ("Llama", "QWEN3_MOE"),
// else with '-', '_' and '.' folded ("qwen3-moe") when that names one row only.
const Family* FindFamilyAsTyped(std::string_view typed) {
  if (const Family* f = FindFamily(typed)) return f;
  const Family* folded = nullptr;
  int folded_rows = 0;
  for (const Family& f : kFamilies) {
    if (Lower(f.model_type) == Lower(typed)) return &f;
    if (FoldName(f.model_type) == FoldName(typed)) {
      folded = &f;
      ++folded_rows;
    }
  }
  return folded_rows == 1 ? folded : nullptr;
}

// The family that reads this config: its model_type's, or --model-type's. A name matched in
// another spelling says which row it read as.
Result<const Family*> PickFamily(const std::string& origin, const std::string& model_type,
                                 const ParseOptions& options, ModelSpec& spec) {
  if (options.model_type) {
    const Family* f = FindFamilyAsTyped(*options.model_type);
    if (f == nullptr) {
      return MakeError("option '--model-type': \"" + *options.model_type +
                       "\" is not a model_type opscope reads" +
                       DidYouMean(*options.model_type, kSupportedModelTypes) +
                       " (supported: " + SupportedList() + ")");
    }
    if (f->model_type != model_type) {
      spec.assumptions.push_back("model_type '" + model_type + "' read as '" +
                                 std::string(f->model_type) + "' (--model-type)");
    }
    return f;
  }
  const Family* f = FindFamilyAsTyped(model_type);
  if (const RefusedFamily* refused = FindRefusedFamily(Lower(model_type)); f == nullptr && refused) {
    return MakeError(origin + ": field 'model_type': \"" + model_type + "\" is not read: " +
                     std::string(refused->why));
  }
  if (f == nullptr) {
    return MakeError(origin + ": field 'model_type': \"" + model_type + "\" is not supported" +
                     DidYouMean(model_type, kSupportedModelTypes) + " (supported: " +
                     SupportedList() + "; a llama-shaped custom type reads with --model-type llama)");
  }
  if (f->model_type != model_type) {
    spec.assumptions.push_back("model_type '" + model_type + "' read as '" +
                               std::string(f->model_type) + "'");
  }
  return f;
}

// The state dtype of linear-attention / SSM layers: mamba_ssm_dtype where the config has it
// (Qwen3.5), else the model dtype (DESIGN: --state-dtype overrides).
Result<void> ReadStateDtype(const ConfigObject& text, ModelSpec& spec) {
  OPSCOPE_TRY(ssm, text.String("mamba_ssm_dtype"));
  if (ssm && !spec.ssm_state_dtype) {
    OPSCOPE_TRY(f, ParseDtype(text, "mamba_ssm_dtype", *ssm));
    spec.ssm_state_dtype = f;
  }
  return {};
}

// max_position_embeddings: the positions the model was trained for (a workload past them is
// warned about). Read as a number: nothing is sized by it, so no integer bound applies. A
// wrapper's copy at the top level is the same field.
Result<void> ReadMaxPositions(const ConfigObject& text, const ConfigObject& root, bool nested,
                              ModelSpec& spec) {
  constexpr std::string_view kField = "max_position_embeddings";
  OPSCOPE_TRY(positions, text.Number(kField));
  if (nested) {
    OPSCOPE_TRY(outer, root.Number(kField));
    if (!positions) positions = outer;
  }
  if (positions && *positions >= 1 && *positions < 9.2e18) {
    spec.max_position_embeddings = static_cast<int64_t>(*positions);
  }
  return {};
}

// A speculative decoder's draft head stored under its target's model_type. EAGLE-3 heads
// (LlamaForCausalLMEagle3, Eagle3LlamaForCausalLM) are read as one (ReadEagle3); EAGLE-1/2
// heads (EagleLlamaForCausalLM: fc over [embedding, hidden] before the layers, the target's LM
// head) and Medusa heads are not, and read as the plain model of that type they would be costed
// wrong without a word, so `architectures` refuses them. Returns whether the head is EAGLE-3.
Result<bool> DraftHeadKind(const ConfigObject& root) {
  OPSCOPE_TRY(architectures, root.StringList("architectures"));
  if (!architectures) return false;
  bool eagle3 = false;
  for (const std::string& a : *architectures) {
    std::string lower(a.size(), ' ');
    std::transform(a.begin(), a.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("eagle3") != std::string::npos) {
      eagle3 = true;
      continue;
    }
    const char* kind = lower.find("eagle") != std::string::npos    ? "an EAGLE"
                       : lower.find("medusa") != std::string::npos ? "a Medusa"
                                                                   : nullptr;
    if (kind == nullptr) continue;
    return std::unexpected(root.FieldError(
        "architectures",
        a + " is " + kind + " draft head (layers over the target model's hidden states, not a "
            "model of its own), which opscope does not cost; speculative decoding takes a "
            "model's MTP modules (--speculative mtp:N), an EAGLE-3 head or a standalone draft "
            "model (--speculative draft:N --draft-model M)"));
  }
  return eagle3;
}

// A draft head saved by vllm-project/speculators: no model_type at the top level (its saver
// drops it), a `speculators_config` (the proposal methods and the verifier), the algorithm in
// `speculators_model_type`, and the draft layer's own config nested in
// `transformer_layer_config` (vLLM's SpeculatorsConfig reads that object as the draft's
// config). Returns the nested layer config when `root` is such a head, nullopt otherwise; only
// EAGLE-3 heads are read (the algorithm vLLM runs from that format for decoder drafts).
Result<std::optional<ConfigObject>> SpeculatorsLayer(const ConfigObject& root) {
  if (root.Find("speculators_config") == ConfigObject::Presence::kAbsent) return std::nullopt;
  OPSCOPE_TRY(algorithm, root.String("speculators_model_type"));
  if (!algorithm) {
    return std::unexpected(root.FieldError(
        "speculators_model_type", "missing: a speculators config names its algorithm there"));
  }
  if (*algorithm != "eagle3") {
    return std::unexpected(root.FieldError(
        "speculators_model_type",
        "\"" + *algorithm + "\" is not read: opscope costs speculators' EAGLE-3 heads "
            "(\"eagle3\"), MTP modules (--speculative mtp:N) and standalone draft models"));
  }
  OPSCOPE_TRY(layer, root.Object("transformer_layer_config"));
  if (!layer) {
    return std::unexpected(root.FieldError(
        "transformer_layer_config", "missing: a speculators EAGLE-3 head's draft layer is "
                                    "configured there"));
  }
  return layer;
}

// The speculators-format switches of an EAGLE-3 head (vLLM's speculators eagle3 updater
// copies them into the draft's config), at the head's top level.
Result<void> ReadSpeculatorsSwitches(const ConfigObject& head, ModelSpec& spec) {
  // norm_before_residual picks which tensor becomes the residual around hidden_norm, and
  // norm_output which one the next draft step reads (the final norm's output or its input):
  // the same kernels either way (vLLM's llama_eagle3.py, PRs #36545 and #42764).
  for (std::string_view key : {"norm_before_residual", "norm_output"}) {
    OPSCOPE_TRY(on, head.Bool(key));
    (void)on;
  }
  // Before fc: norm_before_fc one RMSNorm over the aux · target_hidden features, fc_norm one
  // per aux layer's target_hidden chunk (both where both are set, in that order).
  OPSCOPE_TRY(before_fc, head.Bool("norm_before_fc"));
  spec.eagle3.norm_before_fc = before_fc.value_or(false);
  OPSCOPE_TRY(chunk_norms, head.Bool("fc_norm"));
  spec.eagle3.fc_chunk_norms = chunk_norms.value_or(false);
  OPSCOPE_TRY(config, head.Object("speculators_config"));
  std::string verifier;
  if (config) {
    OPSCOPE_TRY(v, config->Object("verifier"));
    if (v) {
      OPSCOPE_TRY(name, v->String("name_or_path"));
      if (name) verifier = *name;
      v->MarkRead("architectures");
    }
    // The proposal methods (how many tokens, how they are accepted) are the run's choice:
    // --speculative draft:N and --acceptance R.
    for (std::string_view key :
         {"algorithm", "default_proposal_method", "proposal_methods"}) {
      config->MarkRead(key);
    }
  }
  for (std::string_view key : {"speculators_model_type", "speculators_version",
                               "has_no_defaults_at_init", "embed_requires_grad"}) {
    head.MarkRead(key);
  }
  spec.assumptions.push_back(
      "speculators EAGLE-3 head" + (verifier.empty() ? std::string() : " trained for " + verifier) +
      ": the draft layer from transformer_layer_config");
  return {};
}

// An EAGLE-3 head's own fields (vLLM's LlamaForCausalLMEagle3 / SGLang's
// LlamaForCausalLMEagle3): fc reads eagle_config.eagle_aux_hidden_state_layer_ids' layers
// (3 by default; 1 with use_aux_hidden_state false) of target_hidden_size (default
// hidden_size); the LM head has draft_vocab_size rows (default vocab_size). The embedding is
// the target's.
//
// A head in the speculators format (vllm-project/speculators; SpeculatorsConfig below) keeps
// these fields at its top level, `head`, beside the layer's config: the aux layer ids there
// (not under eagle_config), and speculators' own switches, read as vLLM reads them.
Result<void> ReadEagle3(const ConfigObject& text, const ConfigObject& head, bool speculators,
                        ModelSpec& spec) {
  Eagle3Spec& e = spec.eagle3;
  e.aux = 3;
  auto aux_count = [&](const ConfigObject& o) -> Result<void> {
    OPSCOPE_TRY(ids, o.IntList("eagle_aux_hidden_state_layer_ids"));
    if (!ids) return {};
    if (ids->empty() || static_cast<int64_t>(ids->size()) > Reader::kMaxLayers) {
      return std::unexpected(o.FieldError(
          "eagle_aux_hidden_state_layer_ids",
          "lists " + std::to_string(ids->size()) + " layers (expected 1 to " +
              std::to_string(Reader::kMaxLayers) + ")"));
    }
    e.aux = static_cast<int64_t>(ids->size());
    return {};
  };
  if (speculators) {
    OPSCOPE_CHECK(aux_count(head));
    OPSCOPE_CHECK(ReadSpeculatorsSwitches(head, spec));
  } else {
    OPSCOPE_TRY(eagle, text.Object("eagle_config"));
    if (eagle) {
      OPSCOPE_TRY(use_aux, eagle->Bool("use_aux_hidden_state"));
      if (use_aux && !*use_aux) {
        e.aux = 1;
        eagle->MarkRead("eagle_aux_hidden_state_layer_ids");
      } else {
        OPSCOPE_CHECK(aux_count(*eagle));
      }
    }
  }
  OPSCOPE_TRY(target_hidden, head.Int("target_hidden_size"));
  e.target_hidden = target_hidden.value_or(spec.hidden);
  if (e.target_hidden < 1) {
    return std::unexpected(head.FieldError(
        "target_hidden_size", std::to_string(e.target_hidden) + " is not a hidden size"));
  }
  OPSCOPE_TRY(draft_vocab, head.Int("draft_vocab_size"));
  e.draft_vocab = draft_vocab.value_or(spec.vocab);
  if (e.draft_vocab < 1 || e.draft_vocab > spec.vocab) {
    return std::unexpected(head.FieldError(
        "draft_vocab_size", std::to_string(e.draft_vocab) + " is not in [1, vocab_size " +
                                std::to_string(spec.vocab) + "]"));
  }
  if (spec.tie_embeddings) {
    return std::unexpected(text.FieldError(
        "tie_word_embeddings", "true, but an EAGLE-3 head's LM head (draft_vocab_size rows) is "
                               "its own, not the target's embedding"));
  }
  // Heads trained for a Qwen target carry its sliding-window fields (SpecForge's Qwen3
  // configs: use_sliding_window, max_window_layers). The Llama drafter the engines run reads
  // neither: its layer slides only where layer_types says so (with sliding_window; vLLM's
  // LlamaAttention, read above), and attends over the whole context otherwise.
  OPSCOPE_TRY(sliding, text.Bool("use_sliding_window"));
  text.MarkRead("max_window_layers");
  const bool windowed = std::any_of(spec.layers.begin(), spec.layers.end(),
                                    [](const LayerSpec& l) { return l.window > 0; });
  if (sliding && *sliding && !windowed) {
    spec.assumptions.push_back(
        "use_sliding_window true is not read by the engines' EAGLE-3 drafter (a Llama layer; "
        "vLLM slides a draft layer only where layer_types says sliding_attention): the head "
        "attends over the whole context");
  }
  spec.assumptions.push_back(
      "EAGLE-3 draft head: fc [" + std::to_string(e.aux) + " x " +
      std::to_string(e.target_hidden) + " -> " + std::to_string(spec.hidden) +
      "] over the target's hidden states, attention over 2 x hidden in the first layer, LM head "
      "over " + std::to_string(e.draft_vocab) + " draft tokens; the embedding is the target's "
      "(an input here, not a weight)");
  return {};
}

}  // namespace

Result<ModelSpec> ParseHfConfig(std::string_view json_text, const std::string& origin,
                                const ParseOptions& options) {
  auto doc = ConfigDocument::Parse(json_text, origin);
  if (!doc) return std::unexpected(doc.error());
  const ConfigObject root = (*doc)->root();
  ModelSpec spec;
  spec.origin = origin;

  // A speculators head configures its layer in a nested object, with no model_type above it.
  OPSCOPE_TRY(speculators_layer, SpeculatorsLayer(root));
  const bool speculators = speculators_layer.has_value();
  OPSCOPE_TRY(type, (speculators ? *speculators_layer : root).String("model_type"));
  if (!type) {
    return MakeError(origin + ": missing field '" +
                     (speculators ? speculators_layer->Path("model_type") : "model_type") + "'");
  }
  spec.model_type = *type;
  OPSCOPE_TRY(eagle3_head, DraftHeadKind(root));
  const bool eagle3 = eagle3_head || speculators;
  OPSCOPE_TRY(family, PickFamily(origin, *type, options, spec));
  if (!options.model_type) spec.model_type = family->model_type;  // "Llama" reads as "llama"

  // Multimodal wrappers keep the language model under text_config (or llm_config, ...).
  ConfigObject text = speculators ? *speculators_layer : root;
  bool in_nested = speculators;
  if (speculators) {
    if (!family->text_config.empty()) {
      return std::unexpected(root.FieldError(
          "transformer_layer_config", "model_type '" + *type + "' is a multimodal wrapper, "
                                      "not a draft layer"));
    }
  } else if (!family->text_config.empty()) {
    OPSCOPE_TRY(nested, root.Object(family->text_config));
    if (nested) {
      text = *nested;
      in_nested = true;
    } else if (!family->nested_optional) {
      return MakeError(origin + ": missing field '" + std::string(family->text_config) +
                       "' (required for model_type '" + *type + "')");
    }
    OPSCOPE_TRY(inner, text.String("model_type"));
    if (inner && nested) spec.model_type = *inner;
  } else {
    // A family read at the top level: a nested language model would go unread.
    for (std::string_view key : {"text_config", "llm_config", "language_config"}) {
      OPSCOPE_TRY(nested, root.Object(key));
      if (nested) {
        return std::unexpected(root.FieldError(
            key, "a nested language model, which model_type '" + *type +
                     "' does not have (its fields are read at the top level)"));
      }
    }
  }

  Reader r(text, spec, *family);
  OPSCOPE_TRY(hidden, r.Required("hidden_size"));
  spec.hidden = hidden;
  OPSCOPE_CHECK(ReadDtype(text, root, spec));
  OPSCOPE_CHECK(ReadQuantization(root, spec));
  OPSCOPE_CHECK(Dispatch(r, root));
  OPSCOPE_CHECK(ReadStateDtype(text, spec));
  OPSCOPE_CHECK(ReadMaxPositions(text, root, in_nested, spec));
  if (spec.layers.empty()) return MakeError(origin + ": the model has no layers");
  if (eagle3) OPSCOPE_CHECK(ReadEagle3(text, speculators ? root : text, speculators, spec));

  // Nothing the reader did not look up passes silently (config_fields.h).
  OPSCOPE_CHECK(CheckUnreadFields(text, *type, spec.assumptions));
  if (in_nested) OPSCOPE_CHECK(CheckUnreadFields(root, *type, spec.assumptions));
  return spec;
}

}  // namespace opscope::import::hf
