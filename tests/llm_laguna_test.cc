// poolside's Laguna (model_type laguna; parse_laguna.cc) on its two released FP8 configs
// (tests/data/configs_2026/Laguna-XS.2-FP8 and Laguna-S-2.1-FP8, verbatim from
// ai-dynamo/aiconfigurator, that folder's README): parameters against the published counts and
// in closed form, KV bytes per token (full layers) and per window (sliding layers, 512 tokens),
// one decode step's FLOPs of a full and a sliding layer's attention in closed form, the output
// gate's shape, and the refusals that name their field.
//
// Published counts: poolside's Hugging Face organisation card (huggingface.co/poolside):
// "Laguna XS.2 (33B-A3B)"; NVIDIA NeMo AutoModel's Laguna page
// (docs.nvidia.com/nemo/automodel/model-coverage/large-language-models/poolside/laguna):
// "118B total, ~8B activated for Laguna S 2.1".
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cost/ledger.h"
#include "device/device.h"
#include "format/format.h"
#include "import/hf_config/model_dir.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "llm/deployment.h"
#include "llm/llm.h"

namespace opscope::import::hf {
namespace {

using format::Format;

const std::string kSurvey = std::string(OPSCOPE_SOURCE_DIR) + "/tests/data/configs_2026/";

struct Loaded {
  ModelSpec spec;
  StepGraph step;
  llm::ModelFigures figures;
};

Loaded Folder(const std::string& name) {
  Loaded run;
  auto folder = ReadModelFolder(kSurvey + name);
  EXPECT_TRUE(folder.has_value()) << name;
  if (!folder) return run;
  auto spec = ParseModelFolder(*folder);
  EXPECT_TRUE(spec.has_value()) << name << ": " << (spec ? "" : spec.error().message);
  if (!spec) return run;
  run.spec = *spec;
  auto recipe = ResolveRecipe(run.spec, {});
  EXPECT_TRUE(recipe.has_value()) << name << ": " << (recipe ? "" : recipe.error().message);
  if (!recipe) return run;
  auto step = BuildStepGraph(run.spec, *recipe);
  EXPECT_TRUE(step.has_value()) << name << ": " << (step ? "" : step.error().message);
  if (!step) return run;
  run.step = std::move(*step);
  auto figures = llm::ComputeModelFigures(run.step);
  EXPECT_TRUE(figures.has_value());
  if (figures) run.figures = *figures;
  return run;
}

std::string ConfigText(const std::string& name) {
  std::ifstream in(kSurvey + name + "/config.json");
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The folder's config.json with one exact piece of text replaced.
std::string Edited(const std::string& name, const std::string& from, const std::string& to) {
  std::string text = ConfigText(name);
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

std::string ParseError(const std::string& json) {
  auto spec = ParseHfConfig(json, "config.json");
  return spec ? std::string("(no error)") : spec.error().message;
}

const ir::Tensor* FindTensor(const StepGraph& step, std::string_view name) {
  for (const ir::Tensor& t : step.graph.tensors) {
    if (t.name == name) return &t;
  }
  ADD_FAILURE() << "no tensor " << name;
  return nullptr;
}

std::vector<int64_t> Dims(const StepGraph& step, std::string_view name) {
  std::vector<int64_t> dims;
  if (const ir::Tensor* t = FindTensor(step, name)) {
    for (const expr::Expr& d : t->shape) dims.push_back(d.constant());
  }
  return dims;
}

double Billions(uint64_t v) { return static_cast<double>(v) / 1e9; }

// A model's shapes, for the closed forms.
struct Shape {
  uint64_t h, vocab, d, kv, experts, top_k, expert_width, shared_width, dense_width;
  uint64_t layers, full_heads, sliding_heads, full_layers;
};
constexpr Shape kXs{2048, 100352, 128, 8, 256, 8, 512, 512, 8192, 40, 48, 64, 10};
constexpr Shape kS{3072, 100352, 128, 8, 256, 10, 1024, 1024, 12288, 48, 48, 72, 12};

// One layer's attention with H query heads: q [H·d, h], k and v [kv·d, h], o [h, H·d], the
// per-head gate g_proj [H, h], q_norm and k_norm [d].
uint64_t Attention(const Shape& s, uint64_t heads) {
  return s.h * heads * s.d + 2 * s.h * s.kv * s.d + heads * s.d * s.h + s.h * heads + 2 * s.d;
}

// Layer 0 is dense (SwiGLU of dense_width); the others route top_k of `experts` SwiGLU experts
// and add one shared expert, through a router [experts, h] with e_score_correction_bias
// [experts]; two RMSNorms of h per layer; untied embedding and LM head, a final norm.
uint64_t Params(const Shape& s, bool active) {
  const uint64_t expert = 3 * s.h * s.expert_width;
  const uint64_t moe = (active ? s.top_k : s.experts) * expert + 3 * s.h * s.shared_width +
                       s.experts * s.h + s.experts;
  const uint64_t attention = s.full_layers * Attention(s, s.full_heads) +
                             (s.layers - s.full_layers) * Attention(s, s.sliding_heads);
  return 2 * s.vocab * s.h + s.h + attention + s.layers * 2 * s.h + 3 * s.h * s.dense_width +
         (s.layers - 1) * moe;
}

// ---- Laguna-XS.2 and Laguna-S-2.1 ------------------------------------------------------------

// Parameters exactly in closed form, and close to the published counts: XS.2 33B total, 3B
// active (33,442,617,088 and 3,017,135,872); S-2.1 118B total, ~8B active (117,561,977,600 and
// 8,449,256,192; 7.83B without the embedding and LM head).
TEST(Laguna, ParamsMatchClosedFormAndPublished) {
  const Loaded xs = Folder("Laguna-XS.2-FP8");
  EXPECT_EQ(xs.figures.params_total, Params(kXs, false));
  EXPECT_EQ(xs.figures.params_active, Params(kXs, true));
  EXPECT_NEAR(Billions(xs.figures.params_total), 33, 0.5);
  EXPECT_NEAR(Billions(xs.figures.params_active), 3, 0.1);
  const Loaded s = Folder("Laguna-S-2.1-FP8");
  EXPECT_EQ(s.figures.params_total, Params(kS, false));
  EXPECT_EQ(s.figures.params_active, Params(kS, true));
  EXPECT_NEAR(Billions(s.figures.params_total), 118, 0.5);
  EXPECT_NEAR(Billions(s.figures.params_active), 8, 0.5);
}

// Per-layer heads: layer 0 (full) has 48 query heads, layer 1 (sliding) 64 (XS.2) or 72 (S-2.1),
// over 8 KV heads; the fused qkv projection is (H + 2·8)·128 rows, o_proj reads H·128.
TEST(Laguna, HeadsPerLayer) {
  const Loaded xs = Folder("Laguna-XS.2-FP8");
  EXPECT_EQ(Dims(xs.step, "layers.0.attn.qkv_proj.weight"), (std::vector<int64_t>{(48 + 16) * 128, 2048}));
  EXPECT_EQ(Dims(xs.step, "layers.1.attn.qkv_proj.weight"), (std::vector<int64_t>{(64 + 16) * 128, 2048}));
  EXPECT_EQ(Dims(xs.step, "layers.1.attn.o_proj.weight"), (std::vector<int64_t>{2048, 64 * 128}));
  EXPECT_EQ(Dims(xs.step, "layers.0.attn.g_proj.weight"), (std::vector<int64_t>{48, 2048}));
  EXPECT_EQ(Dims(xs.step, "layers.1.attn.g_proj.weight"), (std::vector<int64_t>{64, 2048}));
  const Loaded s = Folder("Laguna-S-2.1-FP8");
  EXPECT_EQ(Dims(s.step, "layers.5.attn.g_proj.weight"), (std::vector<int64_t>{72, 3072}));
  EXPECT_EQ(Dims(s.step, "layers.4.attn.o_proj.weight"), (std::vector<int64_t>{3072, 48 * 128}));
  EXPECT_EQ(s.spec.layers[4].window, 0);
  EXPECT_EQ(s.spec.layers[5].window, 512);
}

// The checkpoints' formats: FP8 128×128 blocks for the routed experts (and XS.2's dense layer 0
// and shared experts); the attention (q/k/v/o/g_proj in quantization_config.ignore) and the
// router in bf16; S-2.1 also keeps layer 0's MLP and the shared experts in bf16.
TEST(Laguna, CheckpointFormats) {
  const Loaded xs = Folder("Laguna-XS.2-FP8");
  auto format = [](const Loaded& r, std::string_view name) {
    const ir::Tensor* t = FindTensor(r.step, name);
    return t ? t->format : Format::kF64;
  };
  EXPECT_EQ(format(xs, "layers.1.moe.experts.gate_up_proj.weight"), Format::kFp8E4m3B128x128);
  EXPECT_EQ(format(xs, "layers.0.mlp.gate_up_proj.weight"), Format::kFp8E4m3B128x128);
  EXPECT_EQ(format(xs, "layers.1.moe.shared_expert.down_proj.weight"), Format::kFp8E4m3B128x128);
  EXPECT_EQ(format(xs, "layers.1.attn.qkv_proj.weight"), Format::kBf16);
  EXPECT_EQ(format(xs, "layers.1.attn.g_proj.weight"), Format::kBf16);
  EXPECT_EQ(format(xs, "layers.1.moe.router.weight"), Format::kBf16);
  const Loaded s = Folder("Laguna-S-2.1-FP8");
  EXPECT_EQ(format(s, "layers.1.moe.experts.down_proj.weight"), Format::kFp8E4m3B128x128);
  EXPECT_EQ(format(s, "layers.0.mlp.gate_up_proj.weight"), Format::kBf16);
  EXPECT_EQ(format(s, "layers.1.moe.shared_expert.gate_up_proj.weight"), Format::kBf16);
}

// KV cache in fp8 (kv_cache_scheme: 8-bit float per tensor), 1 byte per element. Every token
// stays in the full layers' caches, K and V of 8·128: XS.2 10 layers, 20,480 bytes; S-2.1 12,
// 24,576. A sliding layer keeps its last 512 tokens: one window of 512 with 30 (36) layers'
// 2,048 bytes per token.
TEST(Laguna, KvBytes) {
  const Loaded xs = Folder("Laguna-XS.2-FP8");
  EXPECT_EQ(xs.figures.kv_bytes_per_token, 10u * 2 * 8 * 128);
  const std::vector<llm::KvWindow> xs_windows = llm::KvWindows(xs.step);
  ASSERT_EQ(xs_windows.size(), 1u);
  EXPECT_EQ(xs_windows[0].window, 512);
  EXPECT_EQ(xs_windows[0].bytes_per_token, 30u * 2 * 8 * 128);
  EXPECT_EQ(llm::KvWindowBytesPerSeq(xs.step, 4096), 512u * 30 * 2 * 8 * 128);  // 31,457,280
  EXPECT_EQ(llm::KvWindowBytesPerSeq(xs.step, 100), 100u * 30 * 2 * 8 * 128);
  const Loaded s = Folder("Laguna-S-2.1-FP8");
  EXPECT_EQ(s.figures.kv_bytes_per_token, 12u * 2 * 8 * 128);
  EXPECT_EQ(llm::KvWindowBytesPerSeq(s.step, 4096), 512u * 36 * 2 * 8 * 128);  // 37,748,736
}

llm::StepResult Decode(const StepGraph& g, int64_t context) {
  static const device::Device h100 = *device::FindBuiltinDevice("h100-sxm");
  auto r = llm::AnalyzeStep(g, llm::DecodeBindings(1, context), h100);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
  return std::move(*r);
}

// The FLOPs of every node whose name starts with `prefix`.
uint64_t FlopsUnder(const StepGraph& g, const llm::StepResult& r, std::string_view prefix) {
  uint64_t total = 0;
  for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
    if (g.graph.nodes[i].name.starts_with(prefix)) total += r.ledger.nodes[i].flops;
  }
  return total;
}

// One decode token at context P = 4096 through one layer's attention (XS.2, h = 2048, d = 128,
// 8 KV heads), H query heads over K keys (full: P + 1; sliding: W = 512):
//   qkv_proj 2·h·(H + 16)·d, q_norm 3·H·d, k_norm 3·8·d, RoPE 3·(H + 8)·d,
//   attention 2·K·H·(d + d), g_proj 2·h·H, gate H·d, o_proj 2·H·d·h.
TEST(Laguna, DecodeAttentionFlops) {
  const Loaded xs = Folder("Laguna-XS.2-FP8");
  const uint64_t p = 4096, h = 2048, d = 128;
  auto closed = [&](uint64_t heads, uint64_t keys) {
    return 2 * h * (heads + 16) * d + 3 * heads * d + 3 * 8 * d + 3 * (heads + 8) * d +
           2 * keys * heads * (d + d) + 2 * h * heads + heads * d + 2 * heads * d * h;
  };
  const llm::StepResult r = Decode(xs.step, static_cast<int64_t>(p));
  EXPECT_EQ(FlopsUnder(xs.step, r, "layers.4.attn."), closed(48, p + 1));  // full
  EXPECT_EQ(FlopsUnder(xs.step, r, "layers.5.attn."), closed(64, 512));    // sliding
  auto node = [&](std::string_view name) {
    for (size_t i = 0; i < xs.step.graph.nodes.size(); ++i) {
      if (xs.step.graph.nodes[i].name == name) return r.ledger.nodes[i].flops;
    }
    ADD_FAILURE() << name;
    return uint64_t{0};
  };
  EXPECT_EQ(node("layers.5.attn.g_proj"), 2 * h * 64);
  EXPECT_EQ(node("layers.5.attn.output_gate"), 64 * d);
}

// "per-element" gating: g_proj [H·d, h], one gate per output element.
TEST(Laguna, PerElementGate) {
  auto spec = ParseHfConfig(Edited("Laguna-S-2.1-FP8", "\"gating\": \"per-head\"",
                                   "\"gating\": \"per-element\""),
                            "config.json");
  EXPECT_FALSE(spec.has_value());  // gating_types still says per_head in every layer
  if (!spec) {
    EXPECT_EQ(spec.error().message,
              "config.json: field 'gating_types': item 0: \"per_head\" disagrees with gating "
              "(\"per-element\")");
  }
  auto xs = ParseHfConfig(Edited("Laguna-XS.2-FP8", "\"gating\": true", "\"gating\": \"per-element\""),
                          "config.json");
  ASSERT_TRUE(xs.has_value()) << xs.error().message;
  EXPECT_EQ(xs->attn.gate_proj, GateProj::kPerElement);
  auto recipe = ResolveRecipe(*xs, {});
  ASSERT_TRUE(recipe.has_value());
  auto step = BuildStepGraph(*xs, *recipe);
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(Dims(*step, "layers.1.attn.g_proj.weight"), (std::vector<int64_t>{64 * 128, 2048}));
}

// Every field of both configs is read: no line about an unread config field; the only
// quantization note beyond the formats is the Hadamard transform merged into the weights.
TEST(Laguna, EveryFieldRead) {
  for (const char* name : {"Laguna-XS.2-FP8", "Laguna-S-2.1-FP8"}) {
    const Loaded run = Folder(name);
    for (const std::string& line : run.spec.assumptions) {
      EXPECT_EQ(line.find("config field"), std::string::npos) << name << ": " << line;
    }
    EXPECT_EQ(run.spec.attn.gate_proj, GateProj::kPerHead) << name;
    EXPECT_TRUE(run.spec.attn.qk_norm) << name;
    EXPECT_TRUE(run.spec.moe.sigmoid_scores && run.spec.moe.score_correction_bias) << name;
  }
}

// Configs one edit away that opscope would get wrong are refused, naming the field.
TEST(Laguna, RefusalsNameTheField) {
  const std::string xs = "Laguna-XS.2-FP8", s = "Laguna-S-2.1-FP8";
  EXPECT_EQ(ParseError(Edited(xs, "\"gating\": true", "\"gating\": false")),
            "config.json: field 'gating': false: transformers' LagunaAttention still builds a "
            "per-element g_proj for it, other ports build no gate; opscope does not guess");
  EXPECT_EQ(ParseError(Edited(xs, "\"gating\": true", "\"gating\": \"per-channel\"")),
            "config.json: field 'gating': \"per-channel\" (expected true, \"per-head\" or "
            "\"per-element\")");
  EXPECT_EQ(ParseError(Edited(xs, "\"num_attention_heads_per_layer\": [\n    48,",
                              "\"num_attention_heads_per_layer\": [\n    44,")),
            "config.json: field 'num_attention_heads_per_layer': item 0 is 44, not a positive "
            "multiple of num_key_value_heads 8");
  EXPECT_EQ(ParseError(Edited(xs, "\"num_attention_heads_per_layer\": [\n    48,",
                              "\"num_attention_heads_per_layer\": [\n")),
            "config.json: field 'num_attention_heads_per_layer': has 39 entries, "
            "num_hidden_layers is 40");
  EXPECT_EQ(ParseError(Edited(xs, "\"mlp_layer_types\": [\n    \"dense\"",
                              "\"mlp_layer_types\": [\n    \"moe\"")),
            "config.json: field 'mlp_layer_types': item 0: \"moe\" (expected dense or sparse)");
  EXPECT_EQ(ParseError(Edited(s, "\"mlp_only_layers\": [\n    0\n  ]", "\"mlp_only_layers\": []")),
            "config.json: field 'mlp_only_layers': places layer 0 in MoE, mlp_layer_types does not");
  EXPECT_EQ(ParseError(Edited(xs, "\"use_bidirectional_attention\": false",
                              "\"use_bidirectional_attention\": true")),
            "config.json: field 'use_bidirectional_attention': true: a bidirectional model is "
            "not a decoder opscope costs");
  EXPECT_EQ(ParseError(Edited(xs, "\"partial_rotary_factor\": 0.5,\n  \"mlp_layer_types\"",
                              "\"partial_rotary_factor\": 1.5,\n  \"mlp_layer_types\"")),
            "config.json: field 'partial_rotary_factor': 1.500000 is not in (0, 1]");
  EXPECT_EQ(ParseError(Edited(xs, "\"layer_types\": [\n    \"full_attention\"",
                              "\"layer_types\": [\n    \"chunked_attention\"")),
            "config.json: field 'layer_types': item 0: \"chunked_attention\" (expected "
            "full_attention or sliding_attention)");
  EXPECT_EQ(ParseError(Edited(xs, "\"shared_expert_intermediate_size\": 512,", "")),
            "config.json: field 'shared_expert_intermediate_size': is absent or 0, but every "
            "Laguna MoE layer has a shared expert (its width is required)");
  // A field the reader does not know, with a shape-like name, stays an error.
  EXPECT_NE(ParseError(Edited(xs, "\"gating\": true", "\"gating\": true, \"num_gate_heads\": 4"))
                .find("field 'num_gate_heads': not read"),
            std::string::npos);
}

// Laguna-XS.2-FP8's transform_config rotates at weight_input / weight_output only (merged into
// the stored weights); an online rotation (location "output") makes the checkpoint's recipe
// unsupported, naming the field.
TEST(Laguna, TransformConfigLocations) {
  const Loaded xs = Folder("Laguna-XS.2-FP8");
  bool noted = false;
  for (const std::string& line : xs.step.graph.assumptions) {
    noted = noted || line.find("transform_config: rotations at weight_input / weight_output") !=
                         std::string::npos;
  }
  EXPECT_TRUE(noted);
  auto spec = ParseHfConfig(Edited("Laguna-XS.2-FP8", "\"location\": \"weight_output\"",
                                   "\"location\": \"output\""),
                            "config.json");
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  auto recipe = ResolveRecipe(*spec, {});
  ASSERT_FALSE(recipe.has_value());
  EXPECT_NE(recipe.error().message.find("transform_config.config_groups.R1.apply[0].location' "
                                        "\"output\" (an online rotation at run time is not modelled)"),
            std::string::npos)
      << recipe.error().message;
}

// Tensor parallelism splits each layer's own head count: S-2.1's 48 and 72 heads divide by 8
// (6 and 9 per device, g_proj [9, 3072] on a sliding layer), 72 does not divide by 16.
TEST(Laguna, TensorParallelSplitsLayerHeads) {
  const Loaded s = Folder("Laguna-S-2.1-FP8");
  const device::Device h200 = *device::FindBuiltinDevice("h200");
  EXPECT_TRUE(llm::PlanDeployment(s.spec, {.tp = 8}, h200).has_value());
  auto sixteen = llm::PlanDeployment(s.spec, {.tp = 16}, h200);
  ASSERT_FALSE(sixteen.has_value());
  EXPECT_EQ(sixteen.error().message,
            "option '--tp': 72 attention heads of layer 1 are not divisible by 16");
  auto recipe = ResolveRecipe(s.spec, {});
  ASSERT_TRUE(recipe.has_value());
  DeviceShard shard;
  shard.tp = 8;
  auto step = BuildStepGraph(s.spec, *recipe, shard);
  ASSERT_TRUE(step.has_value()) << step.error().message;
  EXPECT_EQ(Dims(*step, "layers.1.attn.g_proj.weight"), (std::vector<int64_t>{9, 3072}));
  EXPECT_EQ(Dims(*step, "layers.0.attn.o_proj.weight"), (std::vector<int64_t>{3072, 6 * 128}));
}

}  // namespace
}  // namespace opscope::import::hf
