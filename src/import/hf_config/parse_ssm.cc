// Readers of the state-space families with a mamba_* field set: Mamba (mamba, falcon_mamba),
// Jamba (Mamba + attention by period, MoE by period), Falcon-H1 (attention and Mamba2 side by
// side) and Granite-4.0-H (granitemoehybrid: Mamba2 / attention by layer_types). Defaults cite
// the transformers configuration classes (MambaConfig, FalconMambaConfig, JambaConfig,
// FalconH1Config, GraniteMoeHybridConfig).
#include <algorithm>
#include <optional>
#include <string>

#include "import/hf_config/config_reader.h"

namespace opscope::import::hf {
namespace {

// time_step_rank / mamba_dt_rank: an integer, or "auto" = ceil(hidden_size / 16).
Result<int64_t> DtRank(const Reader& r, std::string_view key) {
  if (r.object().IsString(key)) {
    OPSCOPE_TRY(v, r.String(key));
    if (*v != "auto") return r.Fail(key, "\"" + *v + "\" (expected an integer or \"auto\")");
    return (r.spec().hidden + 15) / 16;
  }
  return r.IntOr(key, (r.spec().hidden + 15) / 16);
}

// The Mamba mixer. `keys` are the family's field names (MambaConfig's state_size, expand,
// conv_kernel, time_step_rank, use_conv_bias, use_bias; JambaConfig's mamba_* ones).
struct Mamba1Keys {
  std::string_view state, expand, conv, dt_rank, conv_bias, proj_bias;
  int64_t state_default;
};

Result<void> ReadMamba1Mixer(const Reader& r, const Mamba1Keys& k, bool bcdt_norms) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(state, r.IntOr(k.state, k.state_default));
  OPSCOPE_TRY(expand, r.IntOr(k.expand, 2));
  OPSCOPE_TRY(conv, r.IntOr(k.conv, 4));
  OPSCOPE_TRY(dt_rank, DtRank(r, k.dt_rank));
  OPSCOPE_TRY(conv_bias, r.BoolOr(k.conv_bias, true));
  OPSCOPE_TRY(proj_bias, r.BoolOr(k.proj_bias, false));
  spec.mamba1 = Mamba1Spec{expand * spec.hidden, state, conv, dt_rank, conv_bias, proj_bias,
                           bcdt_norms};
  return {};
}

// Mamba2 fields under the mamba_ prefix (FalconH1Config, GraniteMoeHybridConfig): the inner
// width is mamba_d_ssm when the class has that field (`d_ssm_default`, Falcon-H1: 1024; null
// means mamba_expand · hidden_size), else mamba_expand · hidden_size; mamba_d_head "auto" =
// inner / mamba_n_heads.
Result<void> ReadPrefixedMamba2(const Reader& r, int64_t heads_default, int64_t state_default,
                                bool gated_norm, std::optional<int64_t> d_ssm_default) {
  ModelSpec& spec = r.spec();
  OPSCOPE_TRY(heads, r.IntOr("mamba_n_heads", heads_default));
  OPSCOPE_TRY(expand, r.IntOr("mamba_expand", 2));
  OPSCOPE_TRY(d_ssm, r.Int("mamba_d_ssm"));
  // FalconH1Config: mamba_d_ssm defaults to 1024 when absent; FalconH1Mixer takes
  // mamba_expand · hidden_size only when it is None.
  if (!d_ssm && d_ssm_default && r.object().Find("mamba_d_ssm") == ConfigObject::Presence::kAbsent) {
    d_ssm = d_ssm_default;
  }
  const int64_t inner = d_ssm ? *d_ssm : expand * spec.hidden;
  int64_t head_dim = inner / heads;
  if (!r.object().IsString("mamba_d_head")) {
    OPSCOPE_TRY(hd, r.IntOr("mamba_d_head", head_dim));
    head_dim = hd;
  } else {
    OPSCOPE_TRY(v, r.String("mamba_d_head"));
    if (*v != "auto") return r.Fail("mamba_d_head", "\"" + *v + "\" (expected an integer or \"auto\")");
  }
  if (heads * head_dim != inner) {
    return r.Fail("mamba_n_heads", std::to_string(heads) + " heads of " + std::to_string(head_dim) +
                                       " do not make the Mamba width " + std::to_string(inner));
  }
  OPSCOPE_TRY(groups, r.IntOr("mamba_n_groups", 1));
  OPSCOPE_TRY(state, r.IntOr("mamba_d_state", state_default));
  OPSCOPE_TRY(conv, r.IntOr("mamba_d_conv", 4));
  OPSCOPE_TRY(conv_bias, r.BoolOr("mamba_conv_bias", true));
  OPSCOPE_TRY(proj_bias, r.BoolOr("mamba_proj_bias", false));
  if (heads % groups != 0) {
    return r.Fail("mamba_n_groups", std::to_string(groups) + " does not divide mamba_n_heads " +
                                        std::to_string(heads));
  }
  spec.mamba = Mamba2Spec{heads, head_dim, state, groups, conv, conv_bias, proj_bias, gated_norm};
  return {};
}

}  // namespace

// mamba, falcon_mamba (MambaConfig, FalconMambaConfig): every layer a norm and a Mamba mixer.
Result<void> ReadMamba1(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_CHECK(ReadMamba1Mixer(
      r, {"state_size", "expand", "conv_kernel", "time_step_rank", "use_conv_bias", "use_bias", 16},
      false));
  // MambaConfig.intermediate_size is expand · hidden_size, the same inner width stated twice.
  OPSCOPE_TRY(inter, r.Int("intermediate_size"));
  if (inter && *inter != spec.mamba1.inner) {
    return r.Fail("intermediate_size", std::to_string(*inter) + " differs from expand·hidden_size " +
                                           std::to_string(spec.mamba1.inner));
  }
  OPSCOPE_CHECK(r.StringOr("hidden_act", "silu"));  // the mixer's gate activation
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kMamba1, 0, Ffn::kNone});
  return {};
}

// jamba (JambaConfig): attention where i % attn_layer_period == attn_layer_offset, else Mamba
// (with RMSNorms on dt, B and C); MoE where i % expert_layer_period == expert_layer_offset,
// else a dense MLP; attention has no positional encoding (JambaAttention).
Result<void> ReadJamba(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_CHECK(ReadAttentionShape(r));
  spec.attn.rope = false;
  OPSCOPE_CHECK(ReadMamba1Mixer(r, {"mamba_d_state", "mamba_expand", "mamba_d_conv",
                                    "mamba_dt_rank", "mamba_conv_bias", "mamba_proj_bias", 16},
                                true));
  OPSCOPE_TRY(layers, r.Layers());
  OPSCOPE_TRY(attn_period, r.IntOr("attn_layer_period", 8));
  OPSCOPE_TRY(attn_offset, r.CountOr("attn_layer_offset", 4));
  OPSCOPE_TRY(expert_period, r.IntOr("expert_layer_period", 2));
  OPSCOPE_TRY(expert_offset, r.CountOr("expert_layer_offset", 1));
  OPSCOPE_TRY(window, r.WindowOr("sliding_window", 0));
  spec.layers.resize(static_cast<size_t>(layers));
  for (int64_t i = 0; i < layers; ++i) {
    LayerSpec& l = spec.layers[i];
    l.mixer = i % attn_period == attn_offset ? Mixer::kAttention : Mixer::kMamba1;
    if (l.mixer == Mixer::kAttention) l.window = window;
    l.ffn = i % expert_period == expert_offset ? Ffn::kMoe : Ffn::kDense;
  }
  OPSCOPE_CHECK(ReadDenseMlp(r, false));
  OPSCOPE_CHECK(ReadMoeCounts(r, "intermediate_size"));
  OPSCOPE_TRY(act, ReadActivation(r));
  spec.moe.act = ActivationFor(act);
  return {};
}

// falcon_h1 (FalconH1Config): every layer runs attention and Mamba2 on the same normed input
// and sums them, then an MLP. The multipliers scale activations and size nothing.
Result<void> ReadFalconH1(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_CHECK(ReadAttentionShape(r));
  OPSCOPE_TRY(rms_norm, r.BoolOr("mamba_rms_norm", false));
  OPSCOPE_CHECK(ReadPrefixedMamba2(r, 128, 256, rms_norm, 1024));
  OPSCOPE_TRY(projectors_bias, r.BoolOr("projectors_bias", false));
  if (projectors_bias) return r.Fail("projectors_bias", "true is not modelled");
  OPSCOPE_CHECK(r.Bool("mamba_norm_before_gate"));
  // TII's original configuration fields, kept in the released config.json files
  // (attn_layer_indices null, mamba_use_mlp true): attention and an MLP in every layer, which
  // is what FalconH1DecoderLayer builds (FalconH1Config has neither field). Another value
  // would describe a model transformers does not build.
  if (r.object().HasValue("attn_layer_indices")) {
    return r.Fail("attn_layer_indices", "a list of attention layers is not modelled (Falcon-H1 "
                                        "runs attention in every layer; expected null)");
  }
  r.object().MarkRead("attn_layer_indices");
  OPSCOPE_TRY(use_mlp, r.BoolOr("mamba_use_mlp", true));
  if (!use_mlp) {
    return r.Fail("mamba_use_mlp", "false is not modelled (Falcon-H1 runs an MLP in every layer)");
  }
  OPSCOPE_TRY(layers, r.Layers());
  spec.layers.assign(static_cast<size_t>(layers), LayerSpec{Mixer::kAttention, 0, Ffn::kDense});
  for (LayerSpec& l : spec.layers) l.parallel = Mixer::kMamba2;
  OPSCOPE_TRY(mlp_bias, r.BoolOr("mlp_bias", false));
  return ReadDenseMlp(r, mlp_bias);
}

// granitemoehybrid (GraniteMoeHybridConfig): layer_types "mamba" (Mamba2) or "attention";
// every layer a shared MLP (shared_intermediate_size) plus, with num_local_experts > 0, routed
// experts of intermediate_size.
Result<void> ReadGraniteHybrid(const Reader& r) {
  ModelSpec& spec = r.spec();
  OPSCOPE_CHECK(ReadAttentionShape(r));
  OPSCOPE_TRY(position, r.StringOr("position_embedding_type", "nope"));
  spec.attn.rope = position == "rope";
  OPSCOPE_CHECK(ReadPrefixedMamba2(r, 128, 256, true, std::nullopt));
  OPSCOPE_TRY(layers, r.Layers());
  OPSCOPE_TRY(types, r.LayerList("layer_types", layers));
  spec.layers.resize(static_cast<size_t>(layers));
  for (int64_t i = 0; i < layers; ++i) {
    const std::string t = types.empty() ? "mamba" : types[i];
    if (t != "mamba" && t != "attention") {
      return r.Fail("layer_types", "item " + std::to_string(i) + ": \"" + t +
                                       "\" (expected mamba or attention)");
    }
    spec.layers[i].mixer = t == "mamba" ? Mixer::kMamba2 : Mixer::kAttention;
  }
  // GraniteMoeHybridConfig.num_local_experts defaults to 8 (the dense releases say 0); absent,
  // the expert count then has to be there (ReadMoeCounts), so nothing is guessed.
  OPSCOPE_TRY(experts, r.CountOr("num_local_experts", 8));
  OPSCOPE_TRY(shared, r.Required("shared_intermediate_size"));
  OPSCOPE_TRY(act, ReadActivation(r));
  if (experts == 0) {
    // No routed experts: the shared MLP is the layer's dense MLP; the expert fields size
    // nothing.
    spec.mlp = MlpSpec{shared, ActivationFor(act), false};
    for (LayerSpec& l : spec.layers) l.ffn = Ffn::kDense;
    OPSCOPE_CHECK(r.Int("num_experts_per_tok"));
    OPSCOPE_CHECK(r.Int("intermediate_size"));
    return {};
  }
  OPSCOPE_CHECK(ReadMoeCounts(r, "intermediate_size"));
  spec.moe.act = ActivationFor(act);
  spec.moe.shared_intermediate = shared;
  for (LayerSpec& l : spec.layers) l.ffn = Ffn::kMoe;
  return {};
}

}  // namespace opscope::import::hf
