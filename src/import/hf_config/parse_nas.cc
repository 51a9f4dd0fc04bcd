// The reader of DeciLM's per-layer heterogeneous blocks (model_type nemotron-nas:
// Llama-3.1/3.3-Nemotron-Super/Ultra). Each entry of block_configs says what its layer keeps:
//  attention: n_heads_in_group (key-value heads = num_attention_heads / n_heads_in_group),
//    no_op (no attention and no input norm), replace_with_linear (one hidden -> hidden
//    matrix), window_length (a sliding window);
//  ffn: ffn_mult (width = int(2·ffn_mult·hidden/3) rounded up to a multiple of 256, DeciLM's
//    _ffn_mult_to_intermediate_size), no_op, replace_with_linear.
#include <cmath>
#include <string>

#include "import/hf_config/config_fields.h"
#include "import/hf_config/config_reader.h"

namespace opscope::import::hf {
namespace {

// DeciLM: intermediate = int(2·ffn_mult·n_embd/3), rounded up to a multiple of 256.
int64_t FfnMultToIntermediate(double ffn_mult, int64_t hidden) {
  const auto width = static_cast<int64_t>(2.0 * ffn_mult * static_cast<double>(hidden) / 3.0);
  return (width + 255) / 256 * 256;
}

Result<void> ReadBlockAttention(const Reader& r, const ConfigObject& a, LayerSpec& l) {
  OPSCOPE_TRY(no_op, a.Bool("no_op"));
  OPSCOPE_TRY(linear, a.Bool("replace_with_linear"));
  OPSCOPE_TRY(group, a.Int("n_heads_in_group"));
  OPSCOPE_TRY(window, a.Int("window_length"));
  // Sink-attention and sparsity switches of DeciLM's search space: absent, null or false in
  // the released blocks; a sink-token count would change the attention.
  OPSCOPE_TRY(sinks, a.Int("num_sink_tokens"));
  if (sinks && *sinks > 0) {
    return std::unexpected(a.FieldError("num_sink_tokens", "sink attention is not modelled"));
  }
  for (std::string_view key : {"sparsify", "use_prefill_window_in_sink_attention", "unshifted_sink"}) {
    a.MarkRead(key);
  }
  if (no_op.value_or(false)) {
    l.mixer = Mixer::kNone;
  } else if (linear.value_or(false)) {
    l.mixer = Mixer::kLinear;
  } else {
    if (!group || *group <= 0 || r.spec().attn.heads % *group != 0) {
      return std::unexpected(a.FieldError(
          "n_heads_in_group", "must divide num_attention_heads " +
                                  std::to_string(r.spec().attn.heads)));
    }
    l.mixer = Mixer::kAttention;
    l.kv_heads = r.spec().attn.heads / *group;
    l.window = window.value_or(0);
  }
  return CheckUnreadFields(a, r.spec().model_type, r.spec().assumptions);
}

Result<void> ReadBlockFfn(const Reader& r, const ConfigObject& f, LayerSpec& l) {
  OPSCOPE_TRY(no_op, f.Bool("no_op"));
  OPSCOPE_TRY(linear, f.Bool("replace_with_linear"));
  OPSCOPE_TRY(mult, f.Number("ffn_mult"));
  f.MarkRead("sparsify");
  if (no_op.value_or(false)) {
    l.ffn = Ffn::kNone;
  } else if (linear.value_or(false)) {
    l.ffn = Ffn::kLinear;
  } else {
    if (!mult || !(*mult > 0) || !std::isfinite(*mult) || *mult > 64) {
      return std::unexpected(f.FieldError("ffn_mult", "must be a positive number (at most 64)"));
    }
    l.ffn = Ffn::kDense;
    l.ffn_width = FfnMultToIntermediate(*mult, r.spec().hidden);
  }
  return CheckUnreadFields(f, r.spec().model_type, r.spec().assumptions);
}

}  // namespace

// nemotron-nas (DeciLMConfig, remote code): Llama-shaped layers whose attention and MLP are
// given per layer by block_configs.
Result<void> ReadNemotronNas(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_CHECK(ReadAttentionShape(r));
  OPSCOPE_TRY(layers, r.Layers());
  OPSCOPE_TRY(blocks, r.object().ObjectList("block_configs"));
  if (!blocks) {
    return MakeError(r.object().origin() + ": missing field 'block_configs' (required for " +
                     "model_type '" + spec.model_type + "')");
  }
  const auto entries = static_cast<int64_t>(blocks->size());
  if (entries < layers) {
    return r.Fail("block_configs", "has " + std::to_string(entries) +
                                       " entries, num_hidden_layers is " + std::to_string(layers));
  }
  if (entries > layers) {
    // DeciLM builds num_hidden_layers layers from block_configs[0 .. L-1]; the rest are unused.
    spec.assumptions.push_back("block_configs has " + std::to_string(entries) +
                               " entries: the model's " + std::to_string(layers) +
                               " layers use the first " + std::to_string(layers) +
                               " (as DeciLM does), the rest are not costed");
  }
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{});
  int64_t first_kv = 0;
  for (int64_t i = 0; i < layers; ++i) {
    const ConfigObject& block = (*blocks)[i];
    OPSCOPE_TRY(attention, block.Object("attention"));
    OPSCOPE_TRY(ffn, block.Object("ffn"));
    if (!attention || !ffn) {
      return std::unexpected(block.FieldError(attention ? "ffn" : "attention", "missing"));
    }
    LayerSpec& l = spec.layers[i];
    OPSCOPE_CHECK(ReadBlockAttention(r, *attention, l));
    OPSCOPE_CHECK(ReadBlockFfn(r, *ffn, l));
    OPSCOPE_CHECK(CheckUnreadFields(block, spec.model_type, spec.assumptions));
    if (first_kv == 0 && l.kv_heads > 0) first_kv = l.kv_heads;
  }
  // The model-wide key-value head count (what tensor parallelism checks): the first
  // attention layer's; every layer carries its own.
  if (first_kv > 0) spec.attn.kv_heads = first_kv;
  OPSCOPE_TRY(act, ReadActivation(r));
  OPSCOPE_TRY(mlp_bias, r.BoolOr("mlp_bias", false));
  spec.mlp = MlpSpec{0, ActivationFor(act), mlp_bias};
  // DeciLMConfig carries the Llama fields its blocks override.
  OPSCOPE_CHECK(r.Int("intermediate_size"));
  return {};
}

}  // namespace opscope::import::hf
