// GGUF metadata and tensors -> ModelSpec and per-weight ggml formats (see gguf_model.h). Keys
// are read the way llama.cpp's loader (src/llama-model.cpp, load_hparams) reads them; what the
// loader takes from tensor presence (biases, norms, MoE layers) is taken from it here too.
#include "import/gguf/gguf_model.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <optional>
#include <utility>

#include "import/hf_config/recipe.h"
#include "support/checked_math.h"
#include "support/utf8.h"

namespace opscope::import::gguf {

uint64_t GgufModel::TensorBytes() const {
  uint64_t sum = 0;
  for (const GgufFile& f : files) sum = SaturatingAdd(sum, f.TensorBytes());
  return sum;
}

uint64_t GgufModel::TensorCount() const {
  uint64_t n = 0;
  for (const GgufFile& f : files) n += f.tensors.size();
  return n;
}

namespace {

using format::Format;
using hf::Activation;
using hf::Ffn;
using hf::Mixer;

// Sizes and counts above this are not a real model's (hidden sizes are ~2^14, vocabularies
// ~2^18); bounding them keeps a hostile header from sizing a huge graph.
constexpr int64_t kMaxValue = int64_t{1} << 24;
constexpr int64_t kMaxLayers = 1024;  // as the config importer (parse_config.cc)

// Every tensor of every shard by name.
class Tensors {
 public:
  static Result<Tensors> Index(const std::vector<GgufFile>& files) {
    Tensors t;
    for (const GgufFile& f : files) {
      for (const TensorInfo& info : f.tensors) {
        if (auto [it, fresh] = t.by_name_.emplace(info.name, &info); !fresh) {
          return MakeError(f.origin + ": tensor '" + info.name + "' is also in " +
                           t.origin_of_.at(info.name));
        }
        t.origin_of_.emplace(info.name, f.origin);
      }
    }
    return t;
  }
  const TensorInfo* Find(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }
  bool Has(const std::string& name) const { return Find(name) != nullptr; }
  bool HasLayer(int64_t layer, std::string_view rest) const {
    return Has("blk." + std::to_string(layer) + "." + std::string(rest));
  }

 private:
  std::map<std::string, const TensorInfo*, std::less<>> by_name_;
  std::map<std::string, std::string, std::less<>> origin_of_;
};

// Typed reads of `<arch>.*` keys, each error naming the file and the key.
class Keys {
 public:
  Keys(const GgufFile& f, std::string arch) : f_(f), arch_(std::move(arch)) {}

  std::string Name(std::string_view suffix) const { return arch_ + "." + std::string(suffix); }
  const Value* Find(std::string_view suffix) const { return f_.Find(Name(suffix)); }

  std::unexpected<Error> Fail(std::string_view suffix, const std::string& why) const {
    return MakeError(f_.origin + ": metadata '" + Name(suffix) + "': " + why);
  }

  // A scalar integer in [min, kMaxValue]; nullopt when absent.
  Result<std::optional<int64_t>> Int(std::string_view suffix, int64_t min = 1) const {
    const Value* v = Find(suffix);
    if (v == nullptr) return std::nullopt;
    if (v->type == ValueType::kArray) {
      return Fail(suffix, "expected an integer, got an array");
    }
    return Check(suffix, *v, min);
  }

  Result<int64_t> Required(std::string_view suffix, int64_t min = 1) const {
    auto v = Int(suffix, min);
    if (!v) return std::unexpected(v.error());
    if (!*v) {
      return MakeError(f_.origin + ": metadata '" + Name(suffix) + "': missing (required for " +
                       "architecture '" + arch_ + "')");
    }
    return **v;
  }

  // A scalar, or a per-layer array whose entries at `layers` are all equal (llama.cpp's
  // get_key_or_arr); nullopt when absent or when `layers` is empty.
  Result<std::optional<int64_t>> Uniform(std::string_view suffix,
                                         const std::vector<int64_t>& layers,
                                         int64_t num_layers) const {
    const Value* v = Find(suffix);
    if (v == nullptr || v->type != ValueType::kArray) return Int(suffix);
    if (v->count != static_cast<uint64_t>(num_layers)) {  // then all are kept (≤ 1024)
      return Fail(suffix, "has " + std::to_string(v->count) + " entries, block_count is " +
                              std::to_string(num_layers));
    }
    std::optional<int64_t> value;
    for (int64_t i : layers) {
      Value e;
      e.type = v->element;
      e.scalar = v->array[static_cast<size_t>(i)];
      auto x = Check(suffix, e, 1);
      if (!x) return std::unexpected(x.error());
      if (value && *value != *x) {
        return Fail(suffix, "differs between layers (" + std::to_string(*value) + " and " +
                                std::to_string(*x) + "), which opscope's model does not describe");
      }
      value = *x;
    }
    return value;
  }

 private:
  Result<int64_t> Check(std::string_view suffix, const Value& v, int64_t min) const {
    auto x = v.AsInt();
    if (!x) {
      return Fail(suffix, "expected an integer, got " + std::string(ValueTypeName(v.type)));
    }
    if (*x < min || *x > kMaxValue) {
      return Fail(suffix, std::to_string(*x) + " is outside [" + std::to_string(min) + ", " +
                              std::to_string(kMaxValue) + "]");
    }
    return *x;
  }

  const GgufFile& f_;
  std::string arch_;
};

// What the spec builder knows about the file.
struct Context {
  const GgufFile& head;  // the first shard: its metadata
  const Tensors& tensors;
  const Keys& keys;
  std::string arch;
  hf::ModelSpec& spec;
  int64_t blocks;  // block_count: the layers and any nextn blocks (per-layer arrays' length)

  std::unexpected<Error> Fail(const std::string& why) const {
    return MakeError(head.origin + ": " + why);
  }
  // Whether any layer has a tensor named `rest` (biases and norms llama.cpp finds per layer).
  bool AnyLayerHas(std::string_view rest) const {
    for (int64_t i = 0; i < spec.num_layers(); ++i) {
      if (tensors.HasLayer(i, rest)) return true;
    }
    return false;
  }
  std::vector<int64_t> LayersWith(Ffn ffn) const {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < spec.num_layers(); ++i) {
      if (spec.layers[static_cast<size_t>(i)].ffn == ffn) out.push_back(i);
    }
    return out;
  }
  std::vector<int64_t> LayersWith(Mixer mixer) const {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < spec.num_layers(); ++i) {
      if (spec.layers[static_cast<size_t>(i)].mixer == mixer) out.push_back(i);
    }
    return out;
  }
  // The first tensor `rest` of the layers in `layers` (nullptr: none has it).
  const TensorInfo* FirstOf(const std::vector<int64_t>& layers, std::string_view rest) const {
    for (int64_t i : layers) {
      const TensorInfo* t = tensors.Find("blk." + std::to_string(i) + "." + std::string(rest));
      if (t != nullptr) return t;
    }
    return nullptr;
  }
};

#define OPSCOPE_TRY(var, expr)                                      \
  auto var##_result = (expr);                                       \
  if (!var##_result) return std::unexpected(var##_result.error()); \
  auto var = std::move(*var##_result)

// The HF model_type each architecture corresponds to (for reports and llama.cpp's per-type
// rules elsewhere).
std::string ModelTypeFor(std::string_view arch, bool moe) {
  if (arch == "llama") return moe ? "mixtral" : "llama";
  if (arch == "qwen2moe") return "qwen2_moe";
  if (arch == "qwen3moe") return "qwen3_moe";
  if (arch == "qwen3next") return "qwen3_next";
  if (arch == "qwen35") return "qwen3_5";
  if (arch == "qwen35moe") return "qwen3_5_moe";
  if (arch == "gemma3") return "gemma3_text";
  if (arch == "gemma4") return "gemma4_text";
  if (arch == "deepseek2") return "deepseek_v3";
  if (arch == "glm4moe") return "glm4_moe";
  if (arch == "minimax-m2") return "minimax_m2";
  if (arch == "nemotron_h_moe") return "nemotron_h";
  if (arch == "gpt-oss" || arch == "gptoss") return "gpt_oss";
  if (arch == "ernie4_5-moe") return "ernie4_5_moe";
  if (arch == "llama4") return "llama4_text";
  return std::string(arch);
}

// The GatedDeltaNet hybrids: a layer holding ssm_out is a GatedDeltaNet layer, the others
// gated full attention (llama.cpp's qwen3next / qwen35 / qwen35moe builders).
bool IsQwenHybrid(std::string_view arch) {
  return arch == "qwen3next" || arch == "qwen35" || arch == "qwen35moe";
}

// Nemotron-H: every block is one of a Mamba2 mixer, attention (no RoPE), a squared-ReLU MLP or
// a MoE of squared-ReLU experts (llama.cpp's nemotron_h / nemotron_h_moe).
bool IsNemotronH(std::string_view arch) {
  return arch == "nemotron_h" || arch == "nemotron_h_moe";
}

// Hidden size, layers, vocabulary (token_embd's rows) and tied embeddings. block_count counts
// the nextn (MTP) blocks too (llama.cpp: n_layer = n_layer_all − nextn_predict_layers); the
// model is the blocks before them, which is all llama.cpp's main pass runs.
Result<void> ReadSizes(Context& c) {
  OPSCOPE_TRY(hidden, c.keys.Required("embedding_length"));
  OPSCOPE_TRY(blocks, c.keys.Required("block_count"));
  if (blocks > kMaxLayers) {
    return c.keys.Fail("block_count", std::to_string(blocks) + " is above " +
                                          std::to_string(kMaxLayers) + " layers");
  }
  OPSCOPE_TRY(nextn, c.keys.Int("nextn_predict_layers", 0));
  const int64_t mtp_blocks = nextn.value_or(0);
  if (mtp_blocks >= blocks) {
    return c.keys.Fail("nextn_predict_layers", std::to_string(mtp_blocks) +
                                                   " is not below block_count " +
                                                   std::to_string(blocks));
  }
  const int64_t layers = blocks - mtp_blocks;
  c.blocks = blocks;
  if (mtp_blocks > 0) {
    c.spec.assumptions.push_back(
        "GGUF: blocks " + std::to_string(layers) + ".." + std::to_string(blocks - 1) + " are " +
        std::to_string(mtp_blocks) + " nextn (MTP) block(s), which llama.cpp's forward pass "
        "does not run: not in the step graph, their tensors listed as not costed");
  }
  c.spec.hidden = hidden;
  const TensorInfo* embd = c.tensors.Find("token_embd.weight");
  if (embd == nullptr) return c.Fail("no tensor 'token_embd.weight' (the token embeddings)");
  if (embd->ne.size() != 2 || embd->ne[0] != hidden || embd->ne[1] < 1 ||
      embd->ne[1] > kMaxValue) {
    std::string dims;
    for (int64_t d : embd->ne) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    return c.Fail("tensor 'token_embd.weight' has ne [" + dims + "], expected [" +
                  std::to_string(hidden) + " (embedding_length), vocabulary size]");
  }
  c.spec.vocab = embd->ne[1];
  c.spec.tie_embeddings = !c.tensors.Has("output.weight");
  c.spec.layers.assign(static_cast<size_t>(layers), hf::LayerSpec{});
  return {};
}

// Nemotron-H's blocks by the tensors each holds: a Mamba2 mixer (ssm_out), attention
// (attn_output), a MoE (ffn_gate_inp) or a dense MLP (ffn_down). llama.cpp's loader decides
// the same from the per-layer head_count_kv and feed_forward_length arrays (both 0: Mamba2;
// head_count_kv > 0: attention; feed_forward_length > 0: MoE where the file has experts).
Result<void> ReadNemotronHBlocks(Context& c) {
  for (int64_t i = 0; i < c.spec.num_layers(); ++i) {
    hf::LayerSpec& l = c.spec.layers[static_cast<size_t>(i)];
    if (c.tensors.HasLayer(i, "ssm_out.weight")) {
      l.mixer = Mixer::kMamba2;
    } else if (c.tensors.HasLayer(i, "attn_output.weight")) {
      l.mixer = Mixer::kAttention;
    } else if (c.tensors.HasLayer(i, "ffn_gate_inp.weight")) {
      l.ffn = Ffn::kMoe;
    } else if (c.tensors.HasLayer(i, "ffn_down.weight")) {
      l.ffn = Ffn::kDense;
    } else {
      const std::string b = "'blk." + std::to_string(i) + ".";
      return c.Fail("block " + std::to_string(i) + " has none of " + b + "ssm_out.weight', " + b +
                    "attn_output.weight', " + b + "ffn_gate_inp.weight', " + b +
                    "ffn_down.weight' (a Mamba2, attention, MoE or MLP block)");
    }
  }
  return {};
}

// Per layer: MoE where the router (ffn_gate_inp) exists, dense where ffn_down does; in a
// GatedDeltaNet hybrid, a GatedDeltaNet mixer where ssm_out exists.
Result<void> ReadLayerKinds(Context& c) {
  const Mixer mixer = c.arch == "deepseek2" ? Mixer::kMla : Mixer::kAttention;
  const bool hybrid = IsQwenHybrid(c.arch);
  if (IsNemotronH(c.arch)) return ReadNemotronHBlocks(c);
  for (int64_t i = 0; i < c.spec.num_layers(); ++i) {
    hf::LayerSpec& l = c.spec.layers[static_cast<size_t>(i)];
    l.mixer = hybrid && c.tensors.HasLayer(i, "ssm_out.weight") ? Mixer::kGatedDeltaNet : mixer;
    if (c.tensors.HasLayer(i, "ffn_gate_inp.weight")) {
      l.ffn = Ffn::kMoe;
    } else if (c.tensors.HasLayer(i, "ffn_down.weight")) {
      l.ffn = Ffn::kDense;
    } else {
      return c.Fail("layer " + std::to_string(i) + " has neither 'blk." + std::to_string(i) +
                    ".ffn_down.weight' nor 'blk." + std::to_string(i) +
                    ".ffn_gate_inp.weight' (a dense or MoE feed-forward)");
    }
  }
  return {};
}

// attention.head_count_kv over `layers` (a scalar, or a per-layer array agreeing there;
// llama.cpp: n_head_kv defaults to n_head), dividing the `heads` query heads.
Result<int64_t> KvHeads(const Context& c, const std::vector<int64_t>& layers, int64_t heads) {
  OPSCOPE_TRY(kv, c.keys.Uniform("attention.head_count_kv", layers, c.blocks));
  const int64_t kv_heads = kv.value_or(heads);
  if (kv_heads > heads || heads % kv_heads != 0) {
    return c.keys.Fail("attention.head_count_kv", std::to_string(kv_heads) +
                                                      " does not divide attention.head_count " +
                                                      std::to_string(heads));
  }
  return kv_heads;
}

// Gemma 4 (llama.cpp's gemma4): sliding and full layers of their own head sizes
// (attention.key_length_swa / key_length) and KV head counts (head_count_kv, per layer); a
// layer with no attn_v takes its values from the K projection (attention_k_eq_v); every value
// head is RMS-normed without a weight; q and k are normed per head. Runs after ReadWindows.
Result<void> ReadGemma4Attention(Context& c) {
  hf::AttentionSpec& a = c.spec.attn;
  std::vector<int64_t> sliding, full;
  for (int64_t i = 0; i < c.spec.num_layers(); ++i) {
    (c.spec.layers[static_cast<size_t>(i)].window > 0 ? sliding : full).push_back(i);
  }
  const std::vector<int64_t> all = c.LayersWith(Mixer::kAttention);
  OPSCOPE_TRY(heads, c.keys.Uniform("attention.head_count", all, c.blocks));
  if (!heads) return c.keys.Fail("attention.head_count", "missing (required for architecture '" +
                                                              c.arch + "')");
  a.heads = *heads;
  // The head size and KV heads of each kind of layer; the sliding layers' are the spec's.
  struct Kind {
    const std::vector<int64_t>& layers;
    const char *key, *value;
    int64_t head_dim = 0, kv_heads = 0;
  };
  Kind kinds[] = {{sliding, "attention.key_length_swa", "attention.value_length_swa"},
                  {full, "attention.key_length", "attention.value_length"}};
  for (Kind& k : kinds) {
    if (k.layers.empty()) continue;
    OPSCOPE_TRY(key, c.keys.Required(k.key));
    OPSCOPE_TRY(value, c.keys.Int(k.value));
    if (value && *value != key) {
      return c.keys.Fail(k.value, std::to_string(*value) + " differs from " + k.key + " " +
                                      std::to_string(key) + " (llama.cpp's gemma4 requires "
                                      "them equal)");
    }
    OPSCOPE_TRY(kv, KvHeads(c, k.layers, a.heads));
    k.head_dim = key;
    k.kv_heads = kv;
  }
  const Kind& base = sliding.empty() ? kinds[1] : kinds[0];
  a.head_dim = base.head_dim;
  a.kv_heads = base.kv_heads;
  for (int64_t i : full) {
    hf::LayerSpec& l = c.spec.layers[static_cast<size_t>(i)];
    if (kinds[1].head_dim != a.head_dim) l.head_dim = kinds[1].head_dim;
    if (kinds[1].kv_heads != a.kv_heads) l.kv_heads = kinds[1].kv_heads;
  }
  for (int64_t i : all) {
    hf::LayerSpec& l = c.spec.layers[static_cast<size_t>(i)];
    l.k_eq_v = !l.kv_shared && !c.tensors.HasLayer(i, "attn_v.weight");
  }
  a.qk_norm = c.FirstOf(all, "attn_q_norm.weight") != nullptr;
  a.v_norm = true;
  a.o_bias = c.AnyLayerHas("attn_output.bias");
  return {};
}

Result<void> ReadAttention(Context& c) {
  if (c.arch == "gemma4") return ReadGemma4Attention(c);
  hf::AttentionSpec& a = c.spec.attn;
  const std::vector<int64_t> all = c.LayersWith(Mixer::kAttention);
  OPSCOPE_TRY(heads, c.keys.Uniform("attention.head_count", all, c.blocks));
  if (!heads) return c.keys.Fail("attention.head_count", "missing (required for architecture '" +
                                                              c.arch + "')");
  a.heads = *heads;
  OPSCOPE_TRY(kv, KvHeads(c, all, a.heads));
  a.kv_heads = kv;
  OPSCOPE_TRY(key, c.keys.Int("attention.key_length"));
  if (key) {
    a.head_dim = *key;
  } else if (c.spec.hidden % a.heads == 0) {
    a.head_dim = c.spec.hidden / a.heads;  // llama.cpp: n_embd_head_k = n_embd / n_head
  } else {
    return c.keys.Fail("attention.head_count", std::to_string(a.heads) +
                                                   " does not divide embedding_length " +
                                                   std::to_string(c.spec.hidden) +
                                                   " and there is no attention.key_length");
  }
  OPSCOPE_TRY(value, c.keys.Int("attention.value_length"));
  if (value && *value != a.head_dim) {
    return c.keys.Fail("attention.value_length",
                       std::to_string(*value) + " differs from the key length " +
                           std::to_string(a.head_dim) + ", which opscope's attention does not model");
  }
  a.qkv_bias =
      c.FirstOf(all, "attn_q.bias") != nullptr || c.FirstOf(all, "attn_qkv.bias") != nullptr;
  a.o_bias = c.AnyLayerHas("attn_output.bias");
  a.sinks = c.AnyLayerHas("attn_sinks.weight");
  // q/k norms: over each head (head_dim wide) or, where attn_q_norm spans the whole
  // projection (minimax-m2: {head_dim · head_count}), over the projection before the heads.
  if (const TensorInfo* q_norm = c.FirstOf(all, "attn_q_norm.weight")) {
    a.qk_norm = true;
    a.qk_norm_full = a.heads > 1 && !q_norm->ne.empty() && q_norm->ne[0] == a.heads * a.head_dim;
  }
  // Gated attention (the hybrids' full-attention layers): attn_q yields a query and a gate per
  // head, {hidden, 2 · head_dim · head_count}; the output is multiplied by sigmoid(gate).
  if (IsQwenHybrid(c.arch)) a.output_gate = true;
  if (IsNemotronH(c.arch)) a.rope = false;  // Nemotron-H attention has no positional encoding
  if (c.arch == "llama4") {
    // llama.cpp's llama4: a weightless L2 norm of q and k on the RoPE layers, for every model
    // but the 128-expert one (use_kq_norm = type != 17B_128E: Scout has it, Maverick not).
    OPSCOPE_TRY(experts, c.keys.Int("expert_count", 0));
    a.qk_norm = a.qk_norm_weightless = experts.value_or(0) != 128;
  }
  return {};
}

// The ssm.* keys llama.cpp's recurrent mixers share (their meanings differ per mixer).
struct SsmKeys {
  int64_t group_count, state_size, time_step_rank, inner_size, conv_kernel;
};

Result<SsmKeys> ReadSsmKeys(const Context& c) {
  SsmKeys k{};
  for (auto [suffix, value] : {std::pair{"ssm.group_count", &k.group_count},
                               {"ssm.state_size", &k.state_size},
                               {"ssm.time_step_rank", &k.time_step_rank},
                               {"ssm.inner_size", &k.inner_size},
                               {"ssm.conv_kernel", &k.conv_kernel}}) {
    OPSCOPE_TRY(v, c.keys.Required(suffix));
    *value = v;
  }
  return k;
}

// Mamba2 (nemotron_h, nemotron_h_moe): ssm.time_step_rank heads of ssm.inner_size / heads,
// ssm.state_size, ssm.group_count groups, conv ssm.conv_kernel (the converter writes them from
// mamba_num_heads, mamba_num_heads · mamba_head_dim, ssm_state_size, n_groups, conv_kernel);
// conv and in_proj biases where the file has them. States in f32, as llama.cpp keeps them.
Result<void> ReadMamba2(Context& c) {
  const std::vector<int64_t> mamba = c.LayersWith(Mixer::kMamba2);
  if (mamba.empty()) return {};
  OPSCOPE_TRY(k, ReadSsmKeys(c));
  const int64_t heads = k.time_step_rank, inner = k.inner_size, groups = k.group_count;
  if (inner % heads != 0) {
    return c.keys.Fail("ssm.inner_size", std::to_string(inner) + " is not a multiple of "
                                             "ssm.time_step_rank " + std::to_string(heads));
  }
  if (heads % groups != 0) {
    return c.keys.Fail("ssm.group_count", std::to_string(groups) + " does not divide the " +
                                              std::to_string(heads) +
                                              " heads (ssm.time_step_rank)");
  }
  hf::Mamba2Spec& m = c.spec.mamba;
  m = hf::Mamba2Spec{heads, inner / heads, k.state_size, groups, k.conv_kernel};
  m.conv_bias = c.FirstOf(mamba, "ssm_conv1d.bias") != nullptr;
  m.proj_bias = c.FirstOf(mamba, "ssm_in.bias") != nullptr;
  c.spec.ssm_state_dtype = Format::kF32;
  c.spec.assumptions.push_back("GGUF: Mamba2 states in f32 (llama.cpp keeps recurrent states in "
                               "f32)");
  return {};
}

// GatedDeltaNet (qwen3next, qwen35, qwen35moe): key heads ssm.group_count of ssm.state_size,
// value heads ssm.time_step_rank of ssm.inner_size / ssm.time_step_rank, conv ssm.conv_kernel
// (llama.cpp's loader; the converter writes them from linear_num_key_heads, linear_key_head_dim,
// linear_num_value_heads, linear_value_head_dim · linear_num_value_heads,
// linear_conv_kernel_dim). llama.cpp keeps the recurrent states in f32 (create_memory's
// recurrent_type_r / recurrent_type_s), whatever the cache type of the attention layers.
Result<void> ReadGatedDeltaNet(Context& c) {
  if (c.LayersWith(Mixer::kGatedDeltaNet).empty()) return {};
  OPSCOPE_TRY(k, ReadSsmKeys(c));
  const int64_t key_heads = k.group_count, value_heads = k.time_step_rank, inner = k.inner_size;
  if (value_heads % key_heads != 0) {
    return c.keys.Fail("ssm.time_step_rank", std::to_string(value_heads) +
                                                 " value heads are not a multiple of "
                                                 "ssm.group_count " + std::to_string(key_heads));
  }
  if (inner % value_heads != 0) {
    return c.keys.Fail("ssm.inner_size", std::to_string(inner) + " is not a multiple of "
                                             "ssm.time_step_rank " + std::to_string(value_heads));
  }
  c.spec.gdn = hf::GdnSpec{key_heads, value_heads, k.state_size, inner / value_heads,
                           k.conv_kernel};
  c.spec.ssm_state_dtype = Format::kF32;
  c.spec.assumptions.push_back("GGUF: GatedDeltaNet states in f32 (llama.cpp keeps recurrent "
                               "states in f32)");
  return {};
}

// Multi-head latent attention (deepseek2): ranks and head dims. Newer conversions keep the
// per-head q/k and v lengths in key_length_mla / value_length_mla (key_length then describes
// the absorbed latent), older ones in key_length / value_length.
Result<void> ReadMla(Context& c) {
  OPSCOPE_TRY(heads, c.keys.Required("attention.head_count"));
  c.spec.attn.heads = c.spec.attn.kv_heads = heads;
  hf::MlaSpec& m = c.spec.mla;
  OPSCOPE_TRY(q_lora, c.keys.Int("attention.q_lora_rank", 0));
  m.q_lora_rank = q_lora.value_or(0);  // DeepSeek-V2-Lite: none, q from the hidden state
  OPSCOPE_TRY(kv_lora, c.keys.Required("attention.kv_lora_rank"));
  OPSCOPE_TRY(rope, c.keys.Required("rope.dimension_count"));
  OPSCOPE_TRY(key_mla, c.keys.Int("attention.key_length_mla"));
  OPSCOPE_TRY(value_mla, c.keys.Int("attention.value_length_mla"));
  const std::string key_name = key_mla ? "attention.key_length_mla" : "attention.key_length";
  OPSCOPE_TRY(key, key_mla ? Result<int64_t>(*key_mla) : c.keys.Required("attention.key_length"));
  OPSCOPE_TRY(value, value_mla ? Result<int64_t>(*value_mla)
                               : c.keys.Required("attention.value_length"));
  if (key <= rope) {
    return c.keys.Fail(key_name, std::to_string(key) + " is not above rope.dimension_count " +
                                     std::to_string(rope));
  }
  m.kv_lora_rank = kv_lora;
  m.qk_rope_head_dim = rope;
  m.qk_nope_head_dim = key - rope;
  m.v_head_dim = value;
  c.spec.attn.qkv_bias = c.AnyLayerHas("attn_q_a.bias") || c.AnyLayerHas("attn_kv_a_mqa.bias");
  c.spec.attn.o_bias = c.AnyLayerHas("attn_output.bias");
  return {};
}

// Which layers slide, per llama.cpp's loader for the architecture.
Result<void> ReadWindows(Context& c) {
  int64_t window = 0, period = 0;  // period p: layer i slides unless (i + 1) % p == 0
  if (c.arch == "gemma2") {
    OPSCOPE_TRY(w, c.keys.Int("attention.sliding_window"));
    if (!w) c.spec.assumptions.push_back("GGUF has no gemma2.attention.sliding_window: 4096 "
                                         "(llama.cpp's default for gemma2)");
    window = w.value_or(4096);
    period = 2;
  } else if (c.arch == "gemma3" || c.arch == "gpt-oss" || c.arch == "gptoss") {
    OPSCOPE_TRY(w, c.keys.Int("attention.sliding_window"));
    window = w.value_or(0);
    period = c.arch == "gemma3" ? 6 : 2;
    const Value* pattern = c.keys.Find("attention.sliding_window_pattern");
    if (window > 0 && pattern != nullptr && pattern->type != ValueType::kArray) {
      OPSCOPE_TRY(p, c.keys.Required("attention.sliding_window_pattern"));
      period = p;
    } else if (window > 0 && pattern != nullptr) {
      return c.keys.Fail("attention.sliding_window_pattern",
                         "a per-layer array, which opscope does not read yet");
    } else if (window > 0 && c.arch == "gemma3") {
      c.spec.assumptions.push_back("GGUF gemma3: five of every six layers slide (llama.cpp's "
                                   "pattern for gemma3)");
    }
  } else if (c.arch == "gemma4") {
    // attention.sliding_window_pattern: one bool per block, true where the layer slides
    // (llama.cpp's gemma4 loader requires it, and the window).
    OPSCOPE_TRY(w, c.keys.Required("attention.sliding_window"));
    const Value* pattern = c.keys.Find("attention.sliding_window_pattern");
    if (pattern == nullptr || pattern->type != ValueType::kArray ||
        pattern->element != ValueType::kBool) {
      return c.keys.Fail("attention.sliding_window_pattern",
                         pattern == nullptr ? "missing (required for architecture 'gemma4')"
                                            : "expected an array of bools (true: the layer "
                                              "slides)");
    }
    if (pattern->count != static_cast<uint64_t>(c.blocks)) {
      return c.keys.Fail("attention.sliding_window_pattern",
                         "has " + std::to_string(pattern->count) + " entries, block_count is " +
                             std::to_string(c.blocks));
    }
    for (int64_t i = 0; i < c.spec.num_layers(); ++i) {
      Value e;
      e.type = ValueType::kBool;
      e.scalar = pattern->array[static_cast<size_t>(i)];
      if (e.AsBool().value_or(false)) c.spec.layers[static_cast<size_t>(i)].window = w;
    }
    return {};
  } else if (c.arch == "llama4") {
    // llama.cpp's llama4 loader: every fourth layer (1-based) is a global layer without RoPE
    // (n_no_rope_layer_step, hard-coded 4); the others attend within chunks of 8192 tokens
    // (n_swa set to 8192 whatever attention.sliding_window says, unless it is 0, MobileLLM's
    // full attention with only the last layer NoPE); the chunked layers are those with
    // i % period < period − 1, period attention.sliding_window_pattern (default 4).
    OPSCOPE_TRY(w, c.keys.Int("attention.sliding_window", 0));
    const int64_t layers = c.spec.num_layers();
    if (w && *w == 0) {
      c.spec.layers[static_cast<size_t>(layers - 1)].rope = false;
      return {};
    }
    OPSCOPE_TRY(chunk_period, c.keys.Int("attention.sliding_window_pattern", 2));
    const int64_t every = chunk_period.value_or(4);
    constexpr int64_t kLlama4ChunkTokens = 8192, kLlama4NopeLayerStep = 4;
    for (int64_t i = 0; i < layers; ++i) {
      hf::LayerSpec& l = c.spec.layers[static_cast<size_t>(i)];
      l.rope = (i + 1) % kLlama4NopeLayerStep != 0;
      if (i % every < every - 1) l.chunk = kLlama4ChunkTokens;
    }
    c.spec.assumptions.push_back("GGUF llama4: layers chunked over 8192 tokens with RoPE, every "
                                 "fourth a global layer without RoPE (llama.cpp's fixed Llama-4 "
                                 "pattern)");
    return {};
  } else if (c.arch == "phi3") {
    OPSCOPE_TRY(w, c.keys.Int("attention.sliding_window", 0));
    if (w && *w > 0) {
      c.spec.assumptions.push_back("GGUF phi3.attention.sliding_window " + std::to_string(*w) +
                                   " not applied: llama.cpp runs phi3 with full attention "
                                   "(llama.cpp PR 13676)");
    }
  }
  if (window <= 0 || period <= 0) return {};
  for (int64_t i = 0; i < c.spec.num_layers(); ++i) {
    if ((i + 1) % period != 0) c.spec.layers[static_cast<size_t>(i)].window = window;
  }
  return {};
}

// The width of a feed-forward from a tensor's shape: ffn_down's ne0 (its input length).
std::optional<int64_t> DownWidth(const Context& c, int64_t layer, std::string_view tensor) {
  const TensorInfo* t = c.tensors.Find("blk." + std::to_string(layer) + "." + std::string(tensor));
  if (t == nullptr || t->ne.empty()) return std::nullopt;
  return t->ne[0];
}

// The MLP and expert activation llama.cpp's builder applies: GeGLU for gemma, squared ReLU
// with no gate for Nemotron-H, SwiGLU otherwise.
Activation ActivationOf(const Context& c) {
  if (c.arch.starts_with("gemma")) return Activation::kGeluGated;
  if (IsNemotronH(c.arch)) return Activation::kRelu2;
  return Activation::kSiluGated;
}

// Gemma 4's feed_forward_length may be per layer (the converter writes an array when the
// KV-sharing blocks' MLP is double wide): the first layer's width is the model's, a layer of
// another width keeps its own.
Result<void> ReadGemma4MlpWidths(Context& c, const std::vector<int64_t>& layers) {
  for (int64_t i : layers) {
    OPSCOPE_TRY(width, c.keys.Uniform("feed_forward_length", {i}, c.blocks));
    if (!width) return c.keys.Fail("feed_forward_length", "missing (required for architecture "
                                                          "'gemma4')");
    if (c.spec.mlp.intermediate == 0) c.spec.mlp.intermediate = *width;
    if (*width != c.spec.mlp.intermediate) c.spec.layers[static_cast<size_t>(i)].ffn_width = *width;
  }
  c.spec.mlp.act = ActivationOf(c);
  return {};
}

Result<void> ReadDenseMlp(Context& c) {
  const std::vector<int64_t> dense = c.LayersWith(Ffn::kDense);
  if (dense.empty()) return {};
  if (c.arch == "gemma4") return ReadGemma4MlpWidths(c, dense);
  OPSCOPE_TRY(width, c.keys.Uniform("feed_forward_length", dense, c.blocks));
  if (!width) return c.keys.Fail("feed_forward_length", "missing (required for architecture '" +
                                                              c.arch + "')");
  c.spec.mlp.intermediate = *width;
  c.spec.mlp.bias = c.AnyLayerHas("ffn_down.bias");
  c.spec.mlp.act = ActivationOf(c);
  return {};
}

Result<void> ReadMoe(Context& c) {
  const std::vector<int64_t> moe = c.LayersWith(Ffn::kMoe);
  if (moe.empty()) return {};
  hf::MoeSpec& m = c.spec.moe;
  OPSCOPE_TRY(experts, c.keys.Required("expert_count"));
  // expert_used_count may be per layer (Nemotron-H's files write an array): one value over
  // the MoE layers.
  OPSCOPE_TRY(used, c.keys.Uniform("expert_used_count", moe, c.blocks));
  if (!used) return c.keys.Fail("expert_used_count", "missing (required for architecture '" +
                                                         c.arch + "')");
  const int64_t top_k = *used;
  if (top_k > experts) {
    return c.keys.Fail("expert_used_count", std::to_string(top_k) + " is above expert_count " +
                                                std::to_string(experts));
  }
  m.experts = experts;
  m.top_k = top_k;
  // The llama architecture (Mixtral) has no expert_feed_forward_length: its experts are
  // feed_forward_length wide.
  OPSCOPE_TRY(expert_width, c.keys.Uniform("expert_feed_forward_length", moe, c.blocks));
  if (expert_width) {
    m.intermediate = *expert_width;
  } else {
    OPSCOPE_TRY(width, c.keys.Uniform("feed_forward_length", moe, c.blocks));
    if (!width) return c.keys.Fail("expert_feed_forward_length", "missing, and so is feed_forward_length");
    m.intermediate = *width;
  }
  m.act = ActivationOf(c);
  if (c.arch == "gemma4") {
    // Gemma 4's MoE layer keeps its dense MLP beside the experts (feed_forward_length wide);
    // the router reads a weightless RMSNorm of the residual times ffn_gate_inp.scale, and
    // each expert's output is scaled by ffn_down_exps.scale (llama.cpp's gemma4 builder).
    if (auto ok = ReadGemma4MlpWidths(c, moe); !ok) return ok;
    m.parallel_dense = true;
    m.router_norm = true;
  }
  // Shared experts: their total width is ffn_down_shexp's input length.
  for (int64_t i : moe) {
    if (auto w = DownWidth(c, i, "ffn_down_shexp.weight")) {
      if (*w < 1 || *w > kMaxValue) return c.Fail("tensor 'blk." + std::to_string(i) +
                                                   ".ffn_down_shexp.weight' has ne0 " +
                                                   std::to_string(*w));
      m.shared_intermediate = *w;
      break;
    }
  }
  m.shared_gate = c.AnyLayerHas("ffn_gate_inp_shexp.weight");
  m.router_bias = c.AnyLayerHas("ffn_gate_inp.bias");
  m.expert_bias = c.AnyLayerHas("ffn_down_exps.bias");
  m.score_correction_bias = c.AnyLayerHas("exp_probs_b.bias");
  // expert_gating_func: 1 softmax, 2 sigmoid (llama.cpp: absent means softmax).
  OPSCOPE_TRY(gating, c.keys.Int("expert_gating_func", 0));
  if (gating && *gating != 1 && *gating != 2) {
    return c.keys.Fail("expert_gating_func", std::to_string(*gating) +
                                                 " is neither 1 (softmax) nor 2 (sigmoid)");
  }
  m.sigmoid_scores = gating.value_or(1) == 2 || c.arch == "llama4";  // llama4: hard-coded
  if (IsNemotronH(c.arch)) {
    // llama.cpp's Nemotron-H builder routes by sigmoid whatever the key says (the converter
    // writes none); latent MoE: ffn_latent_down {hidden, latent} before the experts.
    m.sigmoid_scores = true;
    if (const TensorInfo* down = c.FirstOf(moe, "ffn_latent_down.weight")) {
      if (down->ne.size() != 2 || down->ne[1] < 1 || down->ne[1] > kMaxValue) {
        return c.Fail("tensor '" + down->name + "' is not a [hidden, latent] matrix");
      }
      m.latent = down->ne[1];
    }
  }
  return {};
}

// What Gemma 4's small models (E2B, E4B) add, as llama.cpp's gemma4 loader reads it:
// per-layer embeddings (embedding_length_per_layer_input P: per_layer_token_embd
// {layers · P, vocabulary}, per_layer_model_proj, per_layer_proj_norm; per block inp_gate,
// proj, post_norm) and the last attention.shared_kv_layers blocks reading an earlier block's
// KV (their attn_k / attn_v, where the file keeps them, are not run: left out). Their wider
// MLP comes from the per-layer feed_forward_length (ReadDenseMlp).
Result<void> ReadSmallGemma4(Context& c) {
  if (c.arch != "gemma4") return {};
  const int64_t layers = c.spec.num_layers();
  OPSCOPE_TRY(ple, c.keys.Int("embedding_length_per_layer_input", 0));
  if (ple && *ple > 0) {
    const TensorInfo* table = c.tensors.Find("per_layer_token_embd.weight");
    if (table == nullptr || table->ne.size() != 2 || table->ne[0] != layers * *ple ||
        table->ne[1] < 1 || table->ne[1] > kMaxValue) {
      return c.keys.Fail("embedding_length_per_layer_input",
                         std::to_string(*ple) + ", but the file has no "
                         "'per_layer_token_embd.weight' of ne [" + std::to_string(layers * *ple) +
                             " (blocks x " + std::to_string(*ple) + "), vocabulary size]");
    }
    c.spec.per_layer_width = *ple;
    c.spec.per_layer_vocab = table->ne[1];
  }
  OPSCOPE_TRY(shared, c.keys.Int("attention.shared_kv_layers", 0));
  if (shared && *shared >= layers) {
    return c.keys.Fail("attention.shared_kv_layers",
                       std::to_string(*shared) + " is not below block_count " +
                           std::to_string(layers) + " (the shared blocks read an earlier "
                           "block's KV)");
  }
  for (int64_t i = layers - shared.value_or(0); i < layers; ++i) {
    c.spec.layers[static_cast<size_t>(i)].kv_shared = true;
  }
  return {};
}

Result<hf::ModelSpec> BuildSpec(const GgufFile& head, const Tensors& tensors) {
  const Value* arch_value = head.Find("general.architecture");
  if (arch_value == nullptr) return MakeError(head.origin + ": metadata 'general.architecture': missing");
  const std::string* arch = arch_value->AsString();
  if (arch == nullptr) {
    return MakeError(head.origin + ": metadata 'general.architecture': expected a string, got " +
                     std::string(ValueTypeName(arch_value->type)));
  }
  if (std::find(std::begin(kSupportedArchitectures), std::end(kSupportedArchitectures), *arch) ==
      std::end(kSupportedArchitectures)) {
    std::string list;
    for (std::string_view s : kSupportedArchitectures) list += (list.empty() ? "" : ", ") + std::string(s);
    return MakeError(head.origin + ": metadata 'general.architecture': \"" + EscapeBytes(*arch) +
                     "\" is not supported (supported: " + list + ")");
  }
  hf::ModelSpec spec;
  spec.origin = head.origin;
  const Keys keys(head, *arch);
  Context c{head, tensors, keys, *arch, spec, 0};
  for (auto step : {ReadSizes, ReadSmallGemma4, ReadLayerKinds, ReadWindows}) {
    if (auto ok = step(c); !ok) return std::unexpected(ok.error());
  }
  const bool mla = *arch == "deepseek2";
  if (auto ok = mla ? ReadMla(c) : ReadAttention(c); !ok) return std::unexpected(ok.error());
  for (auto step : {ReadGatedDeltaNet, ReadMamba2, ReadDenseMlp, ReadMoe}) {
    if (auto ok = step(c); !ok) return std::unexpected(ok.error());
  }
  if (c.AnyLayerHas("post_ffw_norm.weight")) spec.norm_layout = hf::NormLayout::kSandwich;
  spec.model_type = ModelTypeFor(*arch, spec.moe.experts > 0);
  // GGUF stores weights only: the activations and the KV cache take llama.cpp's default
  // cache type.
  spec.dtype = Format::kF16;
  spec.assumptions.push_back("GGUF: activations and KV cache in f16 (llama.cpp's default cache "
                             "type)");
  return spec;
}


// ---- Weight names --------------------------------------------------------------------------

// Which layers a rule applies to: a name llama.cpp gives two meanings (attn_qkv: phi3's fused
// attention, a GatedDeltaNet layer's in_proj_qkv; ssm_conv1d: GatedDeltaNet or Mamba2;
// attn_norm: the norm of a Nemotron-H block, before its FFN in a block with no mixer) maps by
// the layer's mixer.
enum class Where : uint8_t { kAny, kAttention, kGatedDeltaNet, kMamba2, kNoMixer };

// A GGUF tensor's base name inside a block ("blk.N.<base>.weight") and the step-graph weight(s)
// it holds ('|' separates several). `suffixed`: the graph name keeps ".weight" / ".bias".
struct NameRule {
  std::string_view gguf;
  std::string_view graph;
  bool suffixed = true;
  Where where = Where::kAny;
};

constexpr NameRule kLayerRules[] = {
    {"attn_norm", "ffn_norm", true, Where::kNoMixer},  // Nemotron-H's MLP and MoE blocks
    {"attn_norm", "input_norm"},
    {"ffn_norm", "ffn_norm"},
    {"post_attention_norm", "post_attention_norm"},  // without post_ffw_norm: the FFN norm
    {"post_ffw_norm", "post_ffn_norm"},
    {"attn_q", "attn.q_proj"},
    {"attn_k", "attn.k_proj"},
    {"attn_v", "attn.v_proj"},
    {"attn_qkv", "attn.q_proj|attn.k_proj|attn.v_proj", true, Where::kAttention},  // phi3
    {"attn_q_norm", "attn.q_norm"},
    {"attn_k_norm", "attn.k_norm"},
    {"attn_sinks", "attn.sinks", false},
    {"attn_output", "attn.o_proj"},
    {"attn_q_a", "attn.q_a_proj"},
    {"attn_q_a_norm", "attn.q_a_norm"},
    {"attn_q_b", "attn.q_b_proj"},
    {"attn_kv_a_mqa", "attn.kv_a_proj"},
    {"attn_kv_a_norm", "attn.kv_a_norm"},
    {"attn_kv_b", "attn.kv_b_proj"},
    {"attn_k_b", "attn.kv_b_proj"},  // kv_b split per head for absorbed MLA
    {"attn_v_b", "attn.kv_b_proj"},
    {"ffn_gate", "mlp.gate_up_proj"},
    {"ffn_up", "mlp.gate_up_proj"},  // phi3: gate and up fused in ffn_up
    {"ffn_down", "mlp.down_proj"},
    {"ffn_gate_inp", "moe.router"},
    {"exp_probs_b", "moe.e_score_correction_bias", false},
    {"ffn_gate_exps", "moe.experts.gate_up_proj"},
    {"ffn_up_exps", "moe.experts.gate_up_proj"},
    {"ffn_gate_up_exps", "moe.experts.gate_up_proj"},
    {"ffn_down_exps", "moe.experts.down_proj"},
    {"ffn_gate_shexp", "moe.shared_expert.gate_up_proj"},
    {"ffn_up_shexp", "moe.shared_expert.gate_up_proj"},
    {"ffn_down_shexp", "moe.shared_expert.down_proj"},
    {"ffn_gate_inp_shexp", "moe.shared_expert_gate"},
    // Gemma 4's MoE layer: the norms of its two branches, the router's input scale and the
    // per-expert output scale (".scale" tensors, ParseName).
    {"post_ffw_norm_1", "post_ffn_norm_1"},
    {"pre_ffw_norm_2", "pre_ffn_norm_2"},
    {"post_ffw_norm_2", "post_ffn_norm_2"},
    {"ffn_gate_inp.scale", "moe.router_norm.weight", false},
    {"ffn_down_exps.scale", "moe.router.per_expert_scale", false},
    // Gemma 4 E2B / E4B: each block's per-layer-input branch.
    {"inp_gate", "per_layer_input_gate"},
    {"proj", "per_layer_projection"},
    {"post_norm", "post_per_layer_input_norm"},
    // GatedDeltaNet (qwen3next, qwen35, qwen35moe): in_proj_qkv and in_proj_z (attn_qkv +
    // attn_gate; older qwen3next files fuse them in ssm_in) are the graph's in_proj_qkvz,
    // in_proj_b and in_proj_a (ssm_beta + ssm_alpha; qwen3next's ssm_ba) its in_proj_ba.
    // ssm_a holds −exp(A_log): the same [value_heads] vector.
    {"attn_qkv", "linear_attn.in_proj_qkvz", true, Where::kGatedDeltaNet},
    {"attn_gate", "linear_attn.in_proj_qkvz", true, Where::kGatedDeltaNet},
    {"ssm_in", "linear_attn.in_proj_qkvz", true, Where::kGatedDeltaNet},
    {"ssm_ba", "linear_attn.in_proj_ba", true, Where::kGatedDeltaNet},
    {"ssm_beta", "linear_attn.in_proj_ba", true, Where::kGatedDeltaNet},
    {"ssm_alpha", "linear_attn.in_proj_ba", true, Where::kGatedDeltaNet},
    {"ssm_conv1d", "linear_attn.conv1d", true, Where::kGatedDeltaNet},
    {"ssm_a", "linear_attn.A_log", false, Where::kGatedDeltaNet},
    {"ssm_dt", "linear_attn.dt_bias", false, Where::kGatedDeltaNet},
    {"ssm_norm", "linear_attn.norm", true, Where::kGatedDeltaNet},
    {"ssm_out", "linear_attn.out_proj", true, Where::kGatedDeltaNet},
    // Mamba2 (nemotron_h): ssm_a holds −exp(A_log), ssm_d is D; both without a suffix.
    {"ssm_in", "mamba.in_proj", true, Where::kMamba2},
    {"ssm_conv1d", "mamba.conv1d", true, Where::kMamba2},
    {"ssm_dt", "mamba.dt_bias", false, Where::kMamba2},
    {"ssm_a", "mamba.A_log", false, Where::kMamba2},
    {"ssm_d", "mamba.D", false, Where::kMamba2},
    {"ssm_norm", "mamba.norm", true, Where::kMamba2},
    {"ssm_out", "mamba.out_proj", true, Where::kMamba2},
    // Latent MoE (Nemotron-3): the projections into and out of the experts' width.
    {"ffn_latent_down", "moe.fc1_latent_proj"},
    {"ffn_latent_up", "moe.fc2_latent_proj"},
};

constexpr NameRule kGlobalRules[] = {
    {"token_embd", "embed_tokens"},
    {"output", "lm_head"},
    {"output_norm", "final_norm"},
    // Gemma 4 E2B / E4B per-layer embeddings.
    {"per_layer_token_embd", "embed_tokens_per_layer"},
    {"per_layer_model_proj", "per_layer_model_projection"},
    {"per_layer_proj_norm", "per_layer_projection_norm"},
};

// The step-graph names of one GGUF tensor (empty: none) and the fused attention name its
// q/k/v projection also belongs to.
struct GraphNames {
  std::vector<std::string> names;
  std::string fused;
};

// "blk.12.attn_q.weight" -> layer 12, base "attn_q", suffix "weight"; "blk.3.ssm_a" (a
// tensor llama.cpp names without a suffix) -> layer 3, base "ssm_a", no suffix.
struct ParsedName {
  int64_t layer = -1;
  std::string_view base, suffix;
};

std::optional<ParsedName> ParseName(std::string_view name) {
  ParsedName p;
  if (name.starts_with("blk.")) {
    name.remove_prefix(4);
    const size_t dot = name.find('.');
    if (dot == std::string_view::npos || dot == 0) return std::nullopt;
    int64_t layer = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + dot, layer);
    if (ec != std::errc() || end != name.data() + dot) return std::nullopt;
    p.layer = layer;
    name.remove_prefix(dot + 1);
  }
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) {
    if (p.layer < 0 || name.empty()) return std::nullopt;
    p.base = name;
    return p;
  }
  p.base = name.substr(0, dot);
  p.suffix = name.substr(dot + 1);
  // "blk.N.ffn_gate_inp.scale": a scale tensor of its own, named whole (gemma4).
  if (p.suffix == "scale" && p.layer >= 0) {
    p.base = name;
    p.suffix = {};
    return p;
  }
  if (p.suffix != "weight" && p.suffix != "bias") return std::nullopt;
  return p;
}

GraphNames NamesOf(const hf::ModelSpec& spec, std::string_view tensor) {
  GraphNames out;
  const auto parsed = ParseName(tensor);
  if (!parsed) return out;
  const ParsedName& p = *parsed;
  if (p.layer >= spec.num_layers()) return out;
  const auto& rules = p.layer < 0 ? std::span<const NameRule>(kGlobalRules)
                                  : std::span<const NameRule>(kLayerRules);
  const Mixer mixer =
      p.layer < 0 ? Mixer::kNone : spec.layers[static_cast<size_t>(p.layer)].mixer;
  const auto applies = [&](const NameRule& r) {
    return r.gguf == p.base &&
           (r.where == Where::kAny ||
            (r.where == Where::kAttention && mixer != Mixer::kGatedDeltaNet) ||
            (r.where == Where::kGatedDeltaNet && mixer == Mixer::kGatedDeltaNet) ||
            (r.where == Where::kMamba2 && mixer == Mixer::kMamba2) ||
            (r.where == Where::kNoMixer && mixer == Mixer::kNone));
  };
  // A block that reads an earlier block's KV runs no k/v projection or k norm of its own
  // (Gemma 4 files may keep them): not in the step graph.
  if (p.layer >= 0 && spec.layers[static_cast<size_t>(p.layer)].kv_shared &&
      (p.base == "attn_k" || p.base == "attn_v" || p.base == "attn_k_norm")) {
    return out;
  }
  const auto rule = std::find_if(rules.begin(), rules.end(), applies);
  // A suffixed graph name needs the tensor's suffix ("blk.3.attn_q" alone names nothing).
  if (rule == rules.end() || (rule->suffixed && p.suffix.empty())) return out;
  std::string_view graph = rule->graph;
  if (p.base == "post_attention_norm" && spec.norm_layout != hf::NormLayout::kSandwich) graph = "ffn_norm";  // gpt-oss
  // An MLP or shared expert with no gate (squared ReLU, plain GELU): ffn_up is the graph's
  // up_proj, not a fused gate_up_proj (phi3's ffn_up is, with its SwiGLU).
  const auto up_only = [](hf::Activation a) {
    return a == hf::Activation::kRelu2 || a == hf::Activation::kGelu;
  };
  if (p.base == "ffn_up" && up_only(spec.mlp.act)) graph = "mlp.up_proj";
  if (p.base == "ffn_up_shexp" && up_only(spec.moe.act)) graph = "moe.shared_expert.up_proj";
  const std::string prefix = p.layer < 0 ? "" : "layers." + std::to_string(p.layer) + ".";
  const std::string suffix = rule->suffixed ? "." + std::string(p.suffix) : "";
  while (!graph.empty()) {
    const size_t bar = graph.find('|');
    out.names.push_back(prefix + std::string(graph.substr(0, bar)) + suffix);
    graph = bar == std::string_view::npos ? std::string_view{} : graph.substr(bar + 1);
  }
  if (mixer != Mixer::kGatedDeltaNet &&
      (p.base == "attn_q" || p.base == "attn_k" || p.base == "attn_v" || p.base == "attn_qkv")) {
    out.fused = prefix + "attn.qkv_proj" + suffix;
  }
  return out;
}

std::string Join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The format of tensors that become one graph weight: theirs when they agree; otherwise the
// format of the part with the most bytes, with a warning.
Format GroupFormat(const std::vector<const TensorInfo*>& parts, const std::string& what,
                   std::vector<std::string>& warnings) {
  const TensorInfo* largest = parts.front();
  bool mixed = false;
  for (const TensorInfo* t : parts) {
    mixed = mixed || t->format != parts.front()->format;
    if (t->bytes > largest->bytes) largest = t;
  }
  if (!mixed) return largest->format;
  std::string list;
  uint64_t file = 0, costed = 0;
  bool exact = true;
  for (const TensorInfo* t : parts) {
    list += (list.empty() ? "" : ", ") + t->name + " " +
            std::string(FindGgmlType(t->ggml_type)->name);
    file += t->bytes;
    auto b = format::TensorBytes(largest->format, t->Shape());
    exact = exact && b.has_value();
    costed += b.value_or(0);
  }
  std::string w = what + ": its tensors have different types (" + list + "); costed as " +
                  std::string(format::FormatName(largest->format));
  if (exact) {
    w += ", " + std::to_string(costed) + " bytes for the file's " + std::to_string(file);
  }
  warnings.push_back(std::move(w));
  return largest->format;
}

// The warning listing the tensors no graph weight takes, with their bytes.
std::string UnusedWarning(const std::vector<std::string>& unused, uint64_t bytes) {
  std::string list;
  for (size_t i = 0; i < unused.size() && i < 8; ++i) list += (i ? ", " : "") + unused[i];
  if (unused.size() > 8) list += ", and " + std::to_string(unused.size() - 8) + " more";
  return std::to_string(unused.size()) + " tensor(s) of the file are not in the step graph (" +
         std::to_string(bytes) + " bytes, not costed): " + list;
}

void BuildGroups(const std::vector<GgufFile>& files, GgufModel& out) {
  std::map<std::string, size_t> by_key;  // joined graph names -> group
  std::map<std::string, std::vector<const TensorInfo*>> parts_of_group, parts_of_fused;
  uint64_t unused_bytes = 0;
  for (const GgufFile& f : files) {
    for (const TensorInfo& t : f.tensors) {
      GraphNames names = NamesOf(out.spec, t.name);
      if (names.names.empty()) {
        out.unused_tensors.push_back(t.name);
        unused_bytes = SaturatingAdd(unused_bytes, t.bytes);
        continue;
      }
      const std::string key = Join(names.names);
      auto [it, fresh] = by_key.emplace(key, out.groups.size());
      if (fresh) {
        WeightGroup& g = out.groups.emplace_back();
        g.graph_names = names.names;
        g.fused_name = names.fused;
      }
      WeightGroup& g = out.groups[it->second];
      g.tensors.push_back(t.name);
      g.elements = SaturatingAdd(g.elements, t.elements);
      g.bytes = SaturatingAdd(g.bytes, t.bytes);
      parts_of_group[key].push_back(&t);
      if (!names.fused.empty()) parts_of_fused[names.fused].push_back(&t);
    }
  }
  for (WeightGroup& g : out.groups) {
    const std::string key = Join(g.graph_names);
    g.format = GroupFormat(parts_of_group[key], key, out.warnings);
    for (const std::string& n : g.graph_names) out.weight_formats[n] = g.format;
  }
  // The fused attention names (a graph built with one qkv_proj): only their format here;
  // CheckGgufGraph warns when a graph uses a fused name over tensors of different types.
  for (const auto& [fused, parts] : parts_of_fused) {
    std::vector<std::string> ignored;
    out.weight_formats.emplace(fused, GroupFormat(parts, fused, ignored));
  }
  if (!out.unused_tensors.empty()) {
    out.warnings.push_back(UnusedWarning(out.unused_tensors, unused_bytes));
  }
}

// "<prefix>-00001-of-00003.gguf" -> "<prefix>" (llama.cpp's llama_split_path).
std::optional<std::string> SplitPrefix(const std::string& path, int64_t count) {
  char tail[32];
  std::snprintf(tail, sizeof tail, "-%05d-of-%05d.gguf", 1, static_cast<int>(count));
  if (!path.ends_with(tail)) return std::nullopt;
  return path.substr(0, path.size() - std::string_view(tail).size());
}

Result<int64_t> SplitKey(const GgufFile& f, std::string_view key, int64_t min, int64_t max) {
  const Value* v = f.Find(key);
  if (v == nullptr) return MakeError(f.origin + ": metadata '" + std::string(key) + "': missing");
  auto x = v->AsInt();
  if (!x || *x < min || *x > max) {
    return MakeError(f.origin + ": metadata '" + std::string(key) + "': expected an integer in [" +
                     std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return *x;
}

}  // namespace

Result<GgufModel> BuildGgufModel(std::vector<GgufFile> files) {
  if (files.empty()) return MakeError("no GGUF file");
  GgufModel out;
  auto tensors = Tensors::Index(files);
  if (!tensors) return std::unexpected(tensors.error());
  auto spec = BuildSpec(files.front(), *tensors);
  if (!spec) return std::unexpected(spec.error());
  out.spec = std::move(*spec);
  BuildGroups(files, out);
  out.files = std::move(files);
  return out;
}

namespace {

// Shards 2..count of a split model whose first shard is `path`.
Result<void> ReadOtherShards(const std::string& path, int64_t count,
                             std::vector<GgufFile>& files) {
  const auto prefix = SplitPrefix(path, count);
  if (!prefix) {
    return MakeError(path + ": is the first of " + std::to_string(count) + " shards, but its "
                     "name does not end in -00001-of-" + std::to_string(count) + ".gguf, so "
                     "the others cannot be found");
  }
  for (int64_t k = 1; k < count; ++k) {
    char tail[32];
    std::snprintf(tail, sizeof tail, "-%05d-of-%05d.gguf", static_cast<int>(k + 1),
                  static_cast<int>(count));
    auto shard = ReadGgufHeader(*prefix + tail);
    if (!shard) return std::unexpected(shard.error());
    auto no = SplitKey(*shard, "split.no", k, k);
    if (!no) return std::unexpected(no.error());
    files.push_back(std::move(*shard));
  }
  return {};
}

}  // namespace

Result<GgufModel> LoadGgufModel(const std::string& path) {
  auto first = ReadGgufHeader(path);
  if (!first) return std::unexpected(first.error());
  int64_t count = 1;
  if (first->Find("split.count") != nullptr) {
    auto n = SplitKey(*first, "split.count", 1, 9999);
    if (!n) return std::unexpected(n.error());
    auto no = SplitKey(*first, "split.no", 0, *n - 1);
    if (!no) return std::unexpected(no.error());
    if (*no != 0) {
      return MakeError(path + ": is shard " + std::to_string(*no + 1) + " of " +
                       std::to_string(*n) + " of a split model; give the first shard");
    }
    count = *n;
  }
  std::vector<GgufFile> files;
  files.push_back(std::move(*first));
  if (count > 1) {
    if (auto ok = ReadOtherShards(path, count, files); !ok) return std::unexpected(ok.error());
  }
  return BuildGgufModel(std::move(files));
}

namespace {

// The graph's weights and their element counts; a weight with no format is an error.
std::map<std::string, uint64_t> GraphWeights(const GgufModel& model, const ir::Graph& graph,
                                             GraphCheck& check) {
  std::map<std::string, uint64_t> weights;
  for (const ir::Tensor& t : graph.tensors) {
    if (t.role != ir::Role::kWeight) continue;
    uint64_t n = 1;
    bool constant = true;
    for (const expr::Expr& d : t.shape) {
      constant = constant && d.IsConstant() && d.constant() >= 0;
      if (constant) n = CheckedMul(n, static_cast<uint64_t>(d.constant())).value_or(UINT64_MAX);
    }
    if (!constant) check.errors.push_back("weight '" + t.name + "' has a symbolic shape");
    weights[t.name] = n;
    if (!model.weight_formats.contains(t.name)) {
      check.errors.push_back("weight '" + t.name + "' has no tensor in the file");
    }
  }
  return weights;
}

}  // namespace

GraphCheck CheckGgufGraph(const GgufModel& model, const ir::Graph& graph) {
  GraphCheck check;
  const std::map<std::string, uint64_t> weights = GraphWeights(model, graph, check);
  std::map<std::string, uint64_t> fused_elements;
  std::map<std::string, std::vector<std::string>> fused_tensors;
  for (const WeightGroup& g : model.groups) {
    size_t present = 0;
    uint64_t graph_elements = 0;
    for (const std::string& n : g.graph_names) {
      if (auto it = weights.find(n); it != weights.end()) {
        ++present;
        graph_elements = SaturatingAdd(graph_elements, it->second);
      }
    }
    if (present == 0 && !g.fused_name.empty() && weights.contains(g.fused_name)) {
      fused_elements[g.fused_name] = SaturatingAdd(fused_elements[g.fused_name], g.elements);
      for (const std::string& t : g.tensors) fused_tensors[g.fused_name].push_back(t);
    } else if (present != g.graph_names.size()) {
      check.errors.push_back("tensor(s) " + Join(g.tensors) + ": the step graph has no weight " +
                             Join(g.graph_names));
    } else if (graph_elements != g.elements) {
      check.errors.push_back("weight " + Join(g.graph_names) + " holds " +
                             std::to_string(graph_elements) + " elements, tensor(s) " +
                             Join(g.tensors) + " " + std::to_string(g.elements));
    }
  }
  if (fused_elements.empty()) return check;
  std::map<std::string_view, const TensorInfo*> by_name;
  for (const GgufFile& f : model.files) {
    for (const TensorInfo& t : f.tensors) by_name.emplace(t.name, &t);
  }
  for (const auto& [fused, elements] : fused_elements) {
    if (weights.at(fused) != elements) {
      check.errors.push_back("weight " + fused + " holds " + std::to_string(weights.at(fused)) +
                             " elements, tensor(s) " + Join(fused_tensors[fused]) + " " +
                             std::to_string(elements));
    }
    std::vector<const TensorInfo*> parts;
    for (const std::string& name : fused_tensors[fused]) parts.push_back(by_name.at(name));
    GroupFormat(parts, fused, check.warnings);
  }
  return check;
}

std::shared_ptr<const hf::StoredWeights> StoredWeightsOf(const GgufModel& model,
                                                         const std::string& source) {
  auto stored = std::make_shared<hf::StoredWeights>();
  stored->source = source;
  stored->formats.insert(model.weight_formats.begin(), model.weight_formats.end());
  // A group of one graph weight: its tensors' bytes (a fused gate_up of two types included).
  for (const WeightGroup& g : model.groups) {
    if (g.graph_names.size() == 1) stored->bytes.emplace(g.graph_names[0], g.bytes);
  }
  stored->separate_qkv = true;
  return stored;
}

Result<hf::StepGraph> BuildCheckedStepGraph(GgufModel& model, const std::string& path) {
  model.spec.stored = StoredWeightsOf(model, path);
  auto recipe = hf::ResolveRecipe(model.spec, {});
  if (!recipe) return std::unexpected(recipe.error());
  auto step = hf::BuildStepGraph(model.spec, *recipe);
  if (!step) return std::unexpected(Wrap(path, step.error()));
  GraphCheck check = CheckGgufGraph(model, step->graph);
  if (!check.errors.empty()) {
    std::string more;
    if (check.errors.size() > 1) more = " (and " + std::to_string(check.errors.size() - 1) + " more)";
    return MakeError(path + ": " + check.errors.front() + more);
  }
  for (std::string& w : check.warnings) model.warnings.push_back(std::move(w));
  return step;
}

Result<ir::Graph> ImportGgufGraph(const std::string& path) {
  auto model = LoadGgufModel(path);
  if (!model) return std::unexpected(model.error());
  auto step = BuildCheckedStepGraph(*model, path);
  if (!step) return std::unexpected(step.error());
  ir::Graph graph = std::move(step->graph);
  for (std::string& w : model->warnings) graph.warnings.push_back(std::move(w));
  return graph;
}

}  // namespace opscope::import::gguf
