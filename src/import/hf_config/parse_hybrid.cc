// Readers of the families whose layers are not all attention: GatedDeltaNet hybrids
// (qwen3_next, qwen3_5), Mamba2 (mamba2) and Nemotron-H's pattern of Mamba2 / attention / MLP /
// MoE blocks (nemotron_h). Defaults cite the transformers configuration classes.
#include <algorithm>
#include <string>

#include "import/hf_config/config_reader.h"

namespace opscope::import::hf {

// qwen3_next, qwen3_5(_text), qwen3_5_moe(_text): GatedDeltaNet + gated full attention
// (Qwen3NextConfig, Qwen3_5TextConfig, Qwen3_5MoeTextConfig).
Result<void> ReadQwenHybrid(const Reader& r) {
  ModelSpec& spec = r.spec();
  // kv heads default 2, head_dim 256 in all three classes (the family row).
  OPSCOPE_CHECK(ReadAttentionHeads(r));
  OPSCOPE_TRY(bias, r.BoolOr("attention_bias", false));
  spec.attn.qkv_bias = spec.attn.o_bias = bias;
  spec.attn.qk_norm = true;
  OPSCOPE_TRY(gate, r.BoolOr("attn_output_gate", true));
  spec.attn.output_gate = gate;
  // Qwen3.6's output_gate_type ("swish"; Qwen3.5 omits it and means sigmoid): which
  // activation a gate applies. The gate's weights and the Mul it feeds are the same either way;
  // the elementwise activation is not costed apart.
  OPSCOPE_TRY(gate_type, r.StringOr("output_gate_type", "sigmoid"));
  if (gate_type != "sigmoid" && gate_type != "swish" && gate_type != "silu") {
    return r.Fail("output_gate_type", "\"" + gate_type + "\" (expected sigmoid, swish or silu)");
  }
  if (r.Has("output_gate_type")) {
    r.Note("output_gate_type \"" + gate_type + "\": the gate's activation; its weights and the "
           "gating Mul are the same for every activation");
  }
  OPSCOPE_TRY(sliding, r.BoolOr("use_sliding_window", false));
  if (sliding) return r.Fail("use_sliding_window", "true is not modelled for this family");

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
  OPSCOPE_TRY(types, r.LayerList("layer_types", layers));
  // Default pattern: every full_attention_interval-th layer is full attention.
  OPSCOPE_TRY(interval, r.IntOr("full_attention_interval", 4));
  if (types.empty()) {
    for (int64_t i = 0; i < layers; ++i) {
      types.push_back((i + 1) % interval != 0 ? "linear_attention" : "full_attention");
    }
  }
  OPSCOPE_CHECK(ApplyLayerTypes(r, types, 0, 0));

  // Qwen3_5TextConfig (dense) still carries the MoE placement fields, empty, and the MoE
  // classes a dense width no layer uses: read either way.
  OPSCOPE_CHECK(r.IntList("mlp_only_layers"));
  OPSCOPE_CHECK(r.Int("decoder_sparse_step"));
  OPSCOPE_CHECK(r.Int("intermediate_size"));
  if (r.family().moe != MoePlacement::kNone) {
    OPSCOPE_CHECK(ReadMoeCounts(r, "moe_intermediate_size"));
    OPSCOPE_TRY(act, ReadActivation(r));
    spec.moe.act = ActivationFor(act);
    OPSCOPE_TRY(shared, r.CountOr("shared_expert_intermediate_size", 0));
    spec.moe.shared_intermediate = shared;
    spec.moe.shared_gate = shared > 0;  // Qwen3NextSparseMoeBlock.shared_expert_gate
  }
  OPSCOPE_CHECK(PlaceMoe(r, r.family().moe, 0));
  if (std::any_of(spec.layers.begin(), spec.layers.end(),
                  [](const LayerSpec& l) { return l.ffn == Ffn::kDense; })) {
    OPSCOPE_CHECK(ReadDenseMlp(r, false));
  }
  return ReadMtp(r);
}

namespace {

Result<void> ReadMamba2Mixer(const Reader& r, std::string_view heads_key,
                             std::string_view head_dim_key, std::string_view state_key,
                             bool proj_bias) {
  OPSCOPE_TRY(heads, r.Required(heads_key));
  OPSCOPE_TRY(head_dim, r.Required(head_dim_key));
  OPSCOPE_TRY(state, r.Required(state_key));
  OPSCOPE_TRY(groups, r.IntOr("n_groups", 8));  // Mamba2Config / NemotronHConfig: 8
  OPSCOPE_TRY(kernel, r.IntOr("conv_kernel", 4));
  OPSCOPE_TRY(conv_bias, r.BoolOr("use_conv_bias", true));
  // Mamba2Mixer takes dt straight from in_proj (one per head): time_step_rank sizes nothing.
  r.object().MarkRead("time_step_rank");
  if (heads % groups != 0) {
    return r.Fail("n_groups", std::to_string(groups) + " does not divide the Mamba head count " +
                                  std::to_string(heads));
  }
  r.spec().mamba = Mamba2Spec{heads, head_dim, state, groups, kernel, conv_bias, proj_bias};
  return {};
}

}  // namespace

// mamba2 (Mamba2Config): every layer a Mamba2 mixer, no MLP.
Result<void> ReadMamba2(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(bias, r.BoolOr("use_bias", false));
  OPSCOPE_CHECK(ReadMamba2Mixer(r, "num_heads", "head_dim", "state_size", bias));
  OPSCOPE_TRY(expand, r.IntOr("expand", 2));
  if (spec.mamba.inner() != expand * spec.hidden) {
    return r.Fail("num_heads", "num_heads·head_dim = " + std::to_string(spec.mamba.inner()) +
                                   " differs from expand·hidden_size = " +
                                   std::to_string(expand * spec.hidden));
  }
  // Mamba2Config.intermediate_size is expand·hidden_size: the same inner width, stated twice.
  OPSCOPE_TRY(inter, r.Int("intermediate_size"));
  if (inter && *inter != spec.mamba.inner()) {
    return r.Fail("intermediate_size", std::to_string(*inter) + " differs from num_heads·head_dim = " +
                                           std::to_string(spec.mamba.inner()));
  }
  // hidden_act is the mixer's gate activation (silu).
  OPSCOPE_CHECK(r.StringOr("hidden_act", "silu"));
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kMamba2, 0, Ffn::kNone});
  return {};
}

namespace {

// The Nemotron-H block list: hybrid_override_pattern ("M*-E", one character per block), or
// layers_block_type (NemotronHConfig's list: mamba / attention / mlp / moe, or their new names
// linear_attention / full_attention).
Result<std::vector<LayerSpec>> NemotronHBlocks(const Reader& r) {
  OPSCOPE_TRY(pattern, r.StringOr("hybrid_override_pattern", ""));
  OPSCOPE_TRY(listed, r.StringList("layers_block_type"));
  std::vector<std::string> blocks;
  if (listed && !listed->empty()) {
    blocks = *listed;
  } else if (!pattern.empty()) {
    for (char c : pattern) blocks.emplace_back(1, c);
  } else {
    return MakeError(r.object().origin() + ": missing field 'hybrid_override_pattern' (or " +
                     "'layers_block_type'; required for model_type 'nemotron_h')");
  }
  const std::string_view key = listed && !listed->empty() ? "layers_block_type"
                                                          : "hybrid_override_pattern";
  if (static_cast<int64_t>(blocks.size()) > Reader::kMaxLayers) {
    return r.Fail(key, "has " + std::to_string(blocks.size()) + " layers, more than " +
                           std::to_string(Reader::kMaxLayers));
  }
  OPSCOPE_TRY(layers_field, r.Int("num_hidden_layers"));
  if (layers_field && *layers_field != static_cast<int64_t>(blocks.size())) {
    return r.Fail(key, "has " + std::to_string(blocks.size()) + " layers, num_hidden_layers is " +
                           std::to_string(*layers_field));
  }
  std::vector<LayerSpec> out;
  for (size_t i = 0; i < blocks.size(); ++i) {
    const std::string& b = blocks[i];
    LayerSpec l;
    if (b == "M" || b == "mamba" || b == "linear_attention") {
      l.mixer = Mixer::kMamba2;
    } else if (b == "*" || b == "attention" || b == "full_attention") {
      l.mixer = Mixer::kAttention;
    } else if (b == "-" || b == "mlp") {
      l.ffn = Ffn::kDense;
    } else if (b == "E" || b == "moe") {
      l.ffn = Ffn::kMoe;
    } else {
      return r.Fail(key, (key == "hybrid_override_pattern" ? "character " : "item ") +
                             std::to_string(i) + " is '" + b +
                             "' (expected M, *, - or E; mamba, attention, mlp or moe)");
    }
    out.push_back(l);
  }
  return out;
}

}  // namespace

// nemotron_h (NemotronHConfig): one block per pattern entry — Mamba2, attention, MLP (squared
// ReLU), MoE (optionally latent: moe_latent_size).
namespace {

// Nemotron-H's attention blocks: no RoPE, head_dim (older configs: attention_head_dim).
Result<void> ReadNemotronHAttention(const Reader& r) {
  ModelSpec& spec = r.spec();
  // head_dim: NemotronHConfig default 128; older configs call it attention_head_dim.
  OPSCOPE_TRY(legacy_head_dim, r.Int("attention_head_dim"));
  if (legacy_head_dim && !r.Has("head_dim")) {
    OPSCOPE_CHECK(ReadAttentionHeads(r, false));
    spec.attn.head_dim = *legacy_head_dim;
  } else {
    OPSCOPE_CHECK(ReadAttentionHeads(r));
  }
  OPSCOPE_TRY(bias, r.BoolOr("attention_bias", false));
  spec.attn.qkv_bias = spec.attn.o_bias = bias;
  spec.attn.rope = false;  // NemotronHAttention applies no rotary embedding
  OPSCOPE_TRY(window, r.WindowOr("sliding_window", 0));  // NemotronHConfig: None
  for (LayerSpec& l : spec.layers) {
    if (l.mixer == Mixer::kAttention) l.window = window;
  }
  return {};
}

// Nemotron-H's MoE blocks: sigmoid router with a correction bias, shared expert, latent MoE.
Result<void> ReadNemotronHMoe(const Reader& r, Activation act) {
  ModelSpec& spec = r.spec();
  OPSCOPE_CHECK(ReadMoeCounts(r, "moe_intermediate_size"));
  spec.moe.act = act;
  OPSCOPE_TRY(shared, r.CountOr("n_shared_experts", 1));
  if (shared > 0) {
    OPSCOPE_TRY(width, r.Required("shared_expert_intermediate_size"));
    spec.moe.shared_intermediate = width;
  }
  spec.moe.sigmoid_scores = true;         // NemotronHTopkRouter: sigmoid
  spec.moe.score_correction_bias = true;  // with e_score_correction_bias
  // Latent MoE (NemotronHMoE): fc1_latent_proj [latent, hidden] and fc2_latent_proj
  // [hidden, latent] around experts that run in the latent width.
  OPSCOPE_TRY(latent, r.CountOr("moe_latent_size", 0));
  spec.moe.latent = latent;
  // moe_shared_expert_overlap: whether the shared expert runs concurrently with the routed
  // ones (a schedule, no shapes).
  OPSCOPE_CHECK(r.Bool("moe_shared_expert_overlap"));
  spec.moe.expert_bias = false;
  return {};
}

// MTP: one module of the blocks mtp_layers_block_type lists (NemotronHConfig default:
// attention, then MoE), or mtp_hybrid_override_pattern's.
Result<void> ReadNemotronHMtp(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(mtp_listed, r.StringList("mtp_layers_block_type"));
  OPSCOPE_TRY(mtp_pattern, r.StringOr("mtp_hybrid_override_pattern", ""));
  std::vector<std::string> mtp_blocks = mtp_listed.value_or(std::vector<std::string>{});
  if (mtp_blocks.empty()) {
    for (char c : mtp_pattern) mtp_blocks.emplace_back(1, c);
  }
  if (mtp_blocks.empty()) mtp_blocks = {"attention", "moe"};
  for (const std::string& b : mtp_blocks) {
    LayerSpec l;
    if (b == "*" || b == "attention" || b == "full_attention") l.mixer = Mixer::kAttention;
    if (b == "M" || b == "mamba" || b == "linear_attention") l.mixer = Mixer::kMamba2;
    if (b == "-" || b == "mlp") l.ffn = Ffn::kDense;
    if (b == "E" || b == "moe") l.ffn = Ffn::kMoe;
    spec.mtp.blocks.push_back(l);
  }
  return ReadMtp(r);
}

}  // namespace

Result<void> ReadNemotronH(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(blocks, NemotronHBlocks(r));
  spec.layers = std::move(blocks);
  auto has = [&](auto pred) { return std::any_of(spec.layers.begin(), spec.layers.end(), pred); };
  const bool mamba = has([](const LayerSpec& l) { return l.mixer == Mixer::kMamba2; });
  if (has([](const LayerSpec& l) { return l.mixer == Mixer::kAttention; })) {
    OPSCOPE_CHECK(ReadNemotronHAttention(r));
  }
  if (mamba) {
    // NemotronHMamba2Mixer: in_proj / out_proj bias = use_bias (remote code: mamba_proj_bias).
    OPSCOPE_TRY(use_bias, r.BoolOr("use_bias", false));
    OPSCOPE_TRY(proj_bias, r.BoolOr("mamba_proj_bias", false));
    OPSCOPE_CHECK(ReadMamba2Mixer(r, "mamba_num_heads", "mamba_head_dim", "ssm_state_size",
                                  use_bias || proj_bias));
    OPSCOPE_CHECK(r.IntOr("expand", 2));  // the inner width is mamba_num_heads·mamba_head_dim
  }
  OPSCOPE_TRY(mlp_bias, r.BoolOr("mlp_bias", false));
  OPSCOPE_TRY(act, r.StringOr("mlp_hidden_act", "relu2"));
  OPSCOPE_CHECK(r.Int("intermediate_size"));  // read either way: it sizes the "-" blocks only
  if (has([](const LayerSpec& l) { return l.ffn == Ffn::kDense; })) {
    OPSCOPE_TRY(inter, r.Required("intermediate_size"));
    spec.mlp = MlpSpec{inter, ActivationFor(act), mlp_bias};
  }
  if (has([](const LayerSpec& l) { return l.ffn == Ffn::kMoe; })) {
    OPSCOPE_CHECK(ReadNemotronHMoe(r, ActivationFor(act)));
  }
  // mamba_ssm_cache_dtype: NemotronHConfig default "float32".
  OPSCOPE_TRY(ssm, r.StringOr("mamba_ssm_cache_dtype", "float32"));
  if (mamba) {
    OPSCOPE_TRY(f, ParseDtype(r.object(), "mamba_ssm_cache_dtype", ssm));
    spec.ssm_state_dtype = f;
  }
  return ReadNemotronHMtp(r);
}

}  // namespace opscope::import::hf
