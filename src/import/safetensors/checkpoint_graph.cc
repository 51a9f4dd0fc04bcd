// Checkpoint tensors -> step-graph weights, their stored formats, and the warnings of
// checkpoint_graph.h.
#include "import/safetensors/checkpoint_graph.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "support/checked_math.h"

namespace opscope::import::safetensors {
namespace {

using format::Format;
using hf::Ffn;
using hf::Mixer;

// Where a rule applies: any layer, or layers of one mixer / feed-forward kind.
enum class Where : uint8_t { kAny, kAttention, kMla, kGdn, kMamba2, kDense, kMoe };
// The graph name's suffix: the checkpoint's own (.weight / .bias), none, or a fixed one
// (stacked expert tensors carry none in the checkpoint).
enum class Suffix : uint8_t { kKeep, kNone, kWeight, kBias };

struct StemRule {
  std::string_view hf;     // the module path inside a layer, "*" for an expert index
  Where where;
  std::string_view graph;  // the graph's path inside the layer
  Suffix suffix = Suffix::kKeep;
};

// HF module names (transformers' modeling_<type>.py) -> step_graph.cc's names.
constexpr StemRule kLayerRules[] = {
    {"input_layernorm", Where::kAny, "input_norm"},
    {"pre_feedforward_layernorm", Where::kAny, "ffn_norm"},
    {"post_feedforward_layernorm", Where::kAny, "post_ffn_norm"},
    // Attention: q, k and v fuse into one projection.
    {"self_attn.q_proj", Where::kAttention, "attn.qkv_proj"},
    {"self_attn.k_proj", Where::kAttention, "attn.qkv_proj"},
    {"self_attn.v_proj", Where::kAttention, "attn.qkv_proj"},
    {"self_attn.qkv_proj", Where::kAttention, "attn.qkv_proj"},
    {"self_attn.o_proj", Where::kAttention, "attn.o_proj"},
    {"self_attn.q_norm", Where::kAttention, "attn.q_norm"},
    {"self_attn.k_norm", Where::kAttention, "attn.k_norm"},
    {"self_attn.sinks", Where::kAttention, "attn.sinks", Suffix::kNone},
    {"mixer.q_proj", Where::kAttention, "attn.qkv_proj"},  // Nemotron-H
    {"mixer.k_proj", Where::kAttention, "attn.qkv_proj"},
    {"mixer.v_proj", Where::kAttention, "attn.qkv_proj"},
    {"mixer.o_proj", Where::kAttention, "attn.o_proj"},
    // Multi-head latent attention.
    {"self_attn.q_proj", Where::kMla, "attn.q_proj"},
    {"self_attn.q_a_proj", Where::kMla, "attn.q_a_proj"},
    {"self_attn.q_a_layernorm", Where::kMla, "attn.q_a_norm"},
    {"self_attn.q_b_proj", Where::kMla, "attn.q_b_proj"},
    {"self_attn.kv_a_proj_with_mqa", Where::kMla, "attn.kv_a_proj"},
    {"self_attn.kv_a_layernorm", Where::kMla, "attn.kv_a_norm"},
    {"self_attn.kv_b_proj", Where::kMla, "attn.kv_b_proj"},
    {"self_attn.o_proj", Where::kMla, "attn.o_proj"},
    // GatedDeltaNet (Qwen3-Next; Qwen3.5 splits qkv|z and b|a).
    {"linear_attn.in_proj_qkvz", Where::kGdn, "linear_attn.in_proj_qkvz"},
    {"linear_attn.in_proj_qkv", Where::kGdn, "linear_attn.in_proj_qkvz"},
    {"linear_attn.in_proj_z", Where::kGdn, "linear_attn.in_proj_qkvz"},
    {"linear_attn.in_proj_ba", Where::kGdn, "linear_attn.in_proj_ba"},
    {"linear_attn.in_proj_b", Where::kGdn, "linear_attn.in_proj_ba"},
    {"linear_attn.in_proj_a", Where::kGdn, "linear_attn.in_proj_ba"},
    {"linear_attn.conv1d", Where::kGdn, "linear_attn.conv1d"},
    {"linear_attn.A_log", Where::kGdn, "linear_attn.A_log", Suffix::kNone},
    {"linear_attn.dt_bias", Where::kGdn, "linear_attn.dt_bias", Suffix::kNone},
    {"linear_attn.norm", Where::kGdn, "linear_attn.norm"},
    {"linear_attn.out_proj", Where::kGdn, "linear_attn.out_proj"},
    // Mamba2.
    {"mixer.in_proj", Where::kMamba2, "mamba.in_proj"},
    {"mixer.conv1d", Where::kMamba2, "mamba.conv1d"},
    {"mixer.A_log", Where::kMamba2, "mamba.A_log", Suffix::kNone},
    {"mixer.D", Where::kMamba2, "mamba.D", Suffix::kNone},
    {"mixer.dt_bias", Where::kMamba2, "mamba.dt_bias", Suffix::kNone},
    {"mixer.norm", Where::kMamba2, "mamba.norm"},
    {"mixer.out_proj", Where::kMamba2, "mamba.out_proj"},
    // Dense MLP ("gate_up_proj" becomes "up_proj" for a squared-ReLU MLP).
    {"mlp.gate_proj", Where::kDense, "mlp.gate_up_proj"},
    {"mlp.up_proj", Where::kDense, "mlp.gate_up_proj"},
    {"mlp.gate_up_proj", Where::kDense, "mlp.gate_up_proj"},
    {"mlp.down_proj", Where::kDense, "mlp.down_proj"},
    {"mixer.up_proj", Where::kDense, "mlp.gate_up_proj"},
    {"mixer.down_proj", Where::kDense, "mlp.down_proj"},
    // MoE: router, routed experts (per expert or stacked), shared experts.
    {"mlp.gate", Where::kMoe, "moe.router"},
    {"mlp.router", Where::kMoe, "moe.router"},
    {"block_sparse_moe.gate", Where::kMoe, "moe.router"},
    {"mixer.gate", Where::kMoe, "moe.router"},
    {"mlp.gate.e_score_correction_bias", Where::kMoe, "moe.e_score_correction_bias", Suffix::kNone},
    {"mixer.gate.e_score_correction_bias", Where::kMoe, "moe.e_score_correction_bias", Suffix::kNone},
    {"mlp.experts.*.gate_proj", Where::kMoe, "moe.experts.gate_up_proj"},
    {"mlp.experts.*.up_proj", Where::kMoe, "moe.experts.gate_up_proj"},
    {"mlp.experts.*.down_proj", Where::kMoe, "moe.experts.down_proj"},
    {"block_sparse_moe.experts.*.w1", Where::kMoe, "moe.experts.gate_up_proj"},
    {"block_sparse_moe.experts.*.w3", Where::kMoe, "moe.experts.gate_up_proj"},
    {"block_sparse_moe.experts.*.w2", Where::kMoe, "moe.experts.down_proj"},
    {"mixer.experts.*.up_proj", Where::kMoe, "moe.experts.gate_up_proj"},
    {"mixer.experts.*.down_proj", Where::kMoe, "moe.experts.down_proj"},
    {"mlp.experts.gate_up_proj", Where::kMoe, "moe.experts.gate_up_proj", Suffix::kWeight},
    {"mlp.experts.gate_up_proj_blocks", Where::kMoe, "moe.experts.gate_up_proj", Suffix::kWeight},
    {"mlp.experts.gate_up_proj_bias", Where::kMoe, "moe.experts.gate_up_proj", Suffix::kBias},
    {"mlp.experts.down_proj", Where::kMoe, "moe.experts.down_proj", Suffix::kWeight},
    {"mlp.experts.down_proj_blocks", Where::kMoe, "moe.experts.down_proj", Suffix::kWeight},
    {"mlp.experts.down_proj_bias", Where::kMoe, "moe.experts.down_proj", Suffix::kBias},
    {"mlp.shared_expert.gate_proj", Where::kMoe, "moe.shared_expert.gate_up_proj"},
    {"mlp.shared_expert.up_proj", Where::kMoe, "moe.shared_expert.gate_up_proj"},
    {"mlp.shared_expert.down_proj", Where::kMoe, "moe.shared_expert.down_proj"},
    {"mlp.shared_experts.gate_proj", Where::kMoe, "moe.shared_expert.gate_up_proj"},
    {"mlp.shared_experts.up_proj", Where::kMoe, "moe.shared_expert.gate_up_proj"},
    {"mlp.shared_experts.down_proj", Where::kMoe, "moe.shared_expert.down_proj"},
    {"mixer.shared_experts.up_proj", Where::kMoe, "moe.shared_expert.gate_up_proj"},
    {"mixer.shared_experts.down_proj", Where::kMoe, "moe.shared_expert.down_proj"},
    {"mlp.shared_expert_gate", Where::kMoe, "moe.shared_expert_gate"},
};

constexpr std::string_view kPrefixes[] = {"model.language_model.", "language_model.model.",
                                          "language_model.", "model.", "backbone."};

bool Applies(Where w, const hf::LayerSpec& l) {
  switch (w) {
    case Where::kAny: return true;
    case Where::kAttention: return l.mixer == Mixer::kAttention;
    case Where::kMla: return l.mixer == Mixer::kMla;
    case Where::kGdn: return l.mixer == Mixer::kGatedDeltaNet;
    case Where::kMamba2: return l.mixer == Mixer::kMamba2;
    case Where::kDense: return l.ffn == Ffn::kDense;
    case Where::kMoe: return l.ffn == Ffn::kMoe;
  }
  return false;
}

// "mlp.experts.12.down_proj" -> "mlp.experts.*.down_proj".
std::string WildcardExpert(std::string_view stem) {
  std::string out(stem);
  const size_t at = out.find("experts.");
  if (at == std::string::npos) return out;
  const size_t digits = at + 8;
  size_t end = digits;
  while (end < out.size() && out[end] >= '0' && out[end] <= '9') ++end;
  if (end > digits && end < out.size() && out[end] == '.') out.replace(digits, end - digits, "*");
  return out;
}

std::optional<std::string> LayerWeightName(const hf::ModelSpec& spec, int64_t layer,
                                           std::string_view rest) {
  const hf::LayerSpec& l = spec.layers[static_cast<size_t>(layer)];
  // Packed weights (GPTQ/AWQ's .qweight, compressed-tensors' .weight_packed) are the weight.
  std::string_view stem = rest, suffix;
  for (std::string_view s : {".weight", ".bias", ".qweight", ".weight_packed"}) {
    if (rest.ends_with(s)) {
      stem = rest.substr(0, rest.size() - s.size());
      suffix = s == ".bias" ? ".bias" : ".weight";
      break;
    }
  }
  const std::string prefix = "layers." + std::to_string(layer) + ".";
  // Norms whose meaning depends on the model.
  if (stem == "post_attention_layernorm") {
    // Gemma's sandwich and OLMo-2's post-norm layout norm the attention output under this
    // name; llama's pre-norm layout uses it before the MLP.
    const bool post = spec.norm_layout == hf::NormLayout::kSandwich ||
                      spec.norm_layout == hf::NormLayout::kPost;
    return prefix + (post ? "post_attention_norm" : "ffn_norm") + std::string(suffix);
  }
  if (stem == "norm") {  // Nemotron-H / Mamba2: one norm per block, before its mixer or MLP
    return prefix + (l.mixer != Mixer::kNone ? "input_norm" : "ffn_norm") + std::string(suffix);
  }
  const std::string key = WildcardExpert(stem);
  for (const StemRule& r : kLayerRules) {
    if (r.hf != key || !Applies(r.where, l)) continue;
    std::string graph(r.graph);
    const bool gated = r.where == Where::kDense ? spec.mlp.act != hf::Activation::kRelu2
                                                : spec.moe.act != hf::Activation::kRelu2;
    if (!gated && graph != "moe.experts.gate_up_proj" && graph.ends_with("gate_up_proj")) {
      graph.replace(graph.size() - 12, 12, "up_proj");
    }
    switch (r.suffix) {
      case Suffix::kKeep: return prefix + graph + std::string(suffix);
      case Suffix::kNone: return suffix.empty() ? std::optional(prefix + graph) : std::nullopt;
      case Suffix::kWeight: return prefix + graph + ".weight";
      case Suffix::kBias: return prefix + graph + ".bias";
    }
  }
  return std::nullopt;
}

// ---- Stored formats ------------------------------------------------------------------------

struct Parts {
  std::vector<const CheckpointTensor*> params, scales, zeros;
};

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

std::optional<Format> Fp8Format(const Parts& p) {
  // Each parameter with its own f32 scale: per tensor (1), per row, or per 128×128 block.
  std::optional<Format> format;
  for (const CheckpointTensor* w : p.params) {
    const CheckpointTensor* scale = nullptr;
    for (const CheckpointTensor* s : p.scales) {
      if (s->owner == w->name && (s->name.ends_with(".weight_scale") ||
                                  s->name.ends_with(".weight_scale_inv"))) {
        scale = s;
      }
    }
    if (scale == nullptr || w->shape.size() < 2) return std::nullopt;
    const size_t r = w->shape.size();
    const auto rows = static_cast<uint64_t>(w->shape[r - 2]);
    const auto cols = static_cast<uint64_t>(w->shape[r - 1]);
    const uint64_t matrices = w->elements / std::max<uint64_t>(rows * cols, 1);
    // The scale's shape tells blocks ([.., ceil(rows/128), ceil(cols/128)]) from one scale
    // per row ([.., rows] or [.., rows, 1]) from one per tensor ([] or [1]).
    const std::vector<int64_t>& s = scale->shape;
    const size_t sr = s.size();
    const bool blocks = sr >= 2 && static_cast<uint64_t>(s[sr - 2]) == CeilDiv(rows, 128) &&
                        static_cast<uint64_t>(s[sr - 1]) == CeilDiv(cols, 128) &&
                        scale->elements == matrices * CeilDiv(rows, 128) * CeilDiv(cols, 128);
    Format f;
    if (blocks) {
      f = Format::kFp8E4m3B128x128;
    } else if (scale->elements == matrices * rows && sr >= 1) {
      f = Format::kFp8E4m3Rowwise;
    } else if (scale->elements == 1) {
      f = Format::kFp8E4m3;
    } else {
      return std::nullopt;
    }
    if (format && *format != f) return std::nullopt;
    format = f;
  }
  return format;
}

// The format the parts are stored in, or a note saying why there is none.
std::optional<Format> StoredFormat(const Parts& p, std::string& note) {
  if (p.params.empty()) {
    note = "only quantization metadata";
    return std::nullopt;
  }
  const Dtype* d = p.params.front()->dtype;
  for (const CheckpointTensor* t : p.params) {
    if (t->dtype != d) {
      note = "its tensors have different dtypes";
      return std::nullopt;
    }
  }
  uint64_t params = 0, scale_elements = 0;
  for (const CheckpointTensor* t : p.params) params += t->parameters;
  const Dtype* scale_dtype = nullptr;
  for (const CheckpointTensor* s : p.scales) {
    if (s->name.ends_with(".input_scale") || s->name.ends_with(".input_global_scale") ||
        s->name.ends_with(".weight_scale_2") || s->name.ends_with(".weight_global_scale")) {
      continue;  // activation and per-tensor global scales
    }
    scale_elements += s->elements;
    scale_dtype = s->dtype;
  }
  if (p.scales.empty() && p.zeros.empty() && d->plain) return *d->plain;
  std::optional<Format> f;
  const std::string_view dn = d->name;
  if (dn == "F8_E4M3") {
    f = Fp8Format(p);
  } else if ((dn == "U8" || dn == "I8") && scale_dtype != nullptr &&
             scale_dtype->name == "F8_E4M3" && scale_elements * 16 == params) {
    f = Format::kNvfp4;
  } else if (dn == "U8" && scale_dtype != nullptr &&
             (scale_dtype->name == "U8" || scale_dtype->name == "F8_E8M0") &&
             scale_elements * 32 == params) {
    f = Format::kMxfp4;
  } else if (dn == "I32" && scale_dtype != nullptr && scale_dtype->name == "F16" &&
             scale_elements * 128 == params) {
    f = p.zeros.empty() ? Format::kInt4G128 : Format::kInt4G128Zp;
  }
  if (!f) {
    note = "dtype " + std::string(dn) + " with " + std::to_string(p.scales.size()) +
           " scale tensor(s) matches no row of the format table";
  }
  return f;
}

std::string List(const std::vector<std::string>& names, size_t max_named) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max_named; ++i) s += (i ? ", " : "") + names[i];
  if (names.size() > max_named) s += ", and " + std::to_string(names.size() - max_named) + " more";
  return s;
}

// A tensor name without its model prefix (kPrefixes).
std::string_view WithoutPrefix(std::string_view n) {
  for (std::string_view p : kPrefixes) {
    if (n.starts_with(p)) {
      n.remove_prefix(p.size());
      break;
    }
  }
  return n;
}

// The layer index of "layers.<i>.<rest>", and <rest>; nullopt for any other name.
std::optional<std::pair<int64_t, std::string_view>> LayerOf(std::string_view n) {
  if (!n.starts_with("layers.")) return std::nullopt;
  n.remove_prefix(7);
  const size_t dot = n.find('.');
  int64_t layer = -1;
  if (dot == std::string_view::npos ||
      std::from_chars(n.data(), n.data() + dot, layer).ptr != n.data() + dot || layer < 0) {
    return std::nullopt;
  }
  return std::pair{layer, n.substr(dot + 1)};
}

}  // namespace

bool IsMtpTensor(const hf::ModelSpec& spec, std::string_view tensor) {
  if (spec.mtp.modules <= 0) return false;
  const std::string_view n = WithoutPrefix(tensor);
  if (n.starts_with("mtp.")) return true;
  const auto layer = LayerOf(n);
  return layer && layer->first >= spec.num_layers() &&
         layer->first - spec.num_layers() < spec.mtp.modules;
}

std::optional<std::string> GraphWeightName(const hf::ModelSpec& spec, std::string_view tensor) {
  const std::string_view n = WithoutPrefix(tensor);
  if (n == "embed_tokens.weight" || n == "embeddings.weight") return "embed_tokens.weight";
  if (n == "norm.weight" || n == "norm_f.weight") return "final_norm.weight";
  if (n == "lm_head.weight") return "lm_head.weight";
  const auto layer = LayerOf(n);
  if (!layer || layer->first >= spec.num_layers()) return std::nullopt;
  return LayerWeightName(spec, layer->first, layer->second);
}

namespace {

// One entry per graph weight, in graph order, with its element count.
std::vector<GraphWeightSource> GraphWeights(const ir::Graph& graph,
                                            std::map<std::string, size_t>& index) {
  std::vector<GraphWeightSource> out;
  for (const ir::Tensor& t : graph.tensors) {
    if (t.role != ir::Role::kWeight) continue;
    GraphWeightSource w;
    w.graph_name = t.name;
    w.graph_elements = 1;
    for (const expr::Expr& d : t.shape) {
      const uint64_t v = d.IsConstant() && d.constant() >= 0 ? static_cast<uint64_t>(d.constant()) : 0;
      w.graph_elements = CheckedMul(w.graph_elements, v).value_or(UINT64_MAX);
    }
    index.emplace(t.name, out.size());
    out.push_back(std::move(w));
  }
  return out;
}

// The warnings: element mismatches, then unexpected tensors, then missing weights, then the
// MTP modules' parameters against the model's.
void Summarize(CheckpointComparison& out, const hf::ModelSpec& spec, uint64_t params_mtp) {
  for (const GraphWeightSource& w : out.weights) {
    if (!w.tensors.empty() && w.parameters != w.graph_elements) {
      out.warnings.push_back("weight '" + w.graph_name + "' has " +
                             std::to_string(w.graph_elements) + " elements in the model, " +
                             std::to_string(w.parameters) + " in the checkpoint (" +
                             List(w.tensors, 4) + ")");
    }
  }
  if (!out.unexpected.empty()) {
    out.warnings.push_back(std::to_string(out.unexpected.size()) + " checkpoint tensor(s) the "
                           "model does not expect: " + List(out.unexpected, 8));
  }
  if (!out.missing.empty()) {
    out.warnings.push_back(std::to_string(out.missing.size()) + " weight(s) of the model missing "
                           "from the checkpoint: " + List(out.missing, 8));
  }
  // A checkpoint may leave the MTP modules out (none found: nothing to check).
  if (!out.mtp.empty() && out.mtp_parameters != params_mtp) {
    out.warnings.push_back("the checkpoint's " + std::to_string(out.mtp.size()) +
                           " MTP tensor(s) (" + List(out.mtp, 2) + ") hold " +
                           std::to_string(out.mtp_parameters) +
                           " parameters, the config's " + std::to_string(spec.mtp.modules) +
                           " MTP module(s) " + std::to_string(params_mtp));
  }
}

}  // namespace

CheckpointComparison CompareWithGraph(const Checkpoint& checkpoint, const hf::ModelSpec& spec,
                                      const ir::Graph& graph, uint64_t params_mtp) {
  CheckpointComparison out;
  std::map<std::string, size_t> index;  // graph weight -> out.weights
  out.weights = GraphWeights(graph, index);
  std::map<std::string, Parts> parts;
  for (const CheckpointTensor& t : checkpoint.tensors) {
    const bool metadata = t.role != TensorRole::kParameter;
    if (metadata && t.owner.empty()) continue;  // attention KV / query scales: no weight
    const std::string_view tensor = metadata ? std::string_view(t.owner) : t.name;
    if (IsMtpTensor(spec, tensor)) {
      out.mtp.push_back(t.name);
      if (!metadata) out.mtp_parameters = SaturatingAdd(out.mtp_parameters, t.parameters);
      continue;
    }
    const auto name = GraphWeightName(spec, tensor);
    auto it = name ? index.find(*name) : index.end();
    if (it == index.end()) {
      out.unexpected.push_back(t.name);
      continue;
    }
    GraphWeightSource& w = out.weights[it->second];
    w.tensors.push_back(t.name);
    w.bytes = SaturatingAdd(w.bytes, t.bytes);
    w.parameters = SaturatingAdd(w.parameters, t.parameters);
    Parts& p = parts[w.graph_name];
    (t.role == TensorRole::kParameter ? p.params
     : t.role == TensorRole::kScale   ? p.scales
                                      : p.zeros)
        .push_back(&t);
  }
  for (GraphWeightSource& w : out.weights) {
    if (w.tensors.empty()) {
      out.missing.push_back(w.graph_name);
      continue;
    }
    w.format = StoredFormat(parts[w.graph_name], w.note);
    if (w.format) out.weight_formats.emplace(w.graph_name, *w.format);
  }
  Summarize(out, spec, params_mtp);
  return out;
}

}  // namespace opscope::import::safetensors
