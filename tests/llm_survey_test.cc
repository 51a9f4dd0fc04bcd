// Model coverage on real 2026 configs (issue 13): every model folder of tests/data/configs_2026/
// (config.json and, where the checkpoint publishes one, hf_quant_config.json, verbatim from the
// public repositories its README names) either runs fully costed, sized by its own formats, or
// is refused with a message naming what is missing; and the reader fixes the survey needed,
// each against the model card's figures or the closed form of its formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cost/ledger.h"
#include "format/format.h"
#include "import/hf_config/config_fields.h"
#include "import/hf_config/model_dir.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "llm/llm.h"

namespace opscope::import::hf {
namespace {

namespace fs = std::filesystem;
using format::Format;

const std::string kSurvey = std::string(OPSCOPE_SOURCE_DIR) + "/tests/data/configs_2026/";

struct Costed {
  ModelSpec spec;
  StepGraph step;
  llm::ModelFigures figures;
  size_t not_costed = 0;
};

// A folder through the library as `opscope llm DIR` runs it: the folder's files, the
// checkpoint's own recipe, one decode step (batch 1, context 4096) costed.
Result<Costed> TryFolder(const std::string& dir) {
  auto folder = ReadModelFolder(dir);
  if (!folder) return std::unexpected(folder.error());
  auto spec = ParseModelFolder(*folder);
  if (!spec) return std::unexpected(spec.error());
  auto recipe = ResolveRecipe(*spec, {});
  if (!recipe) return std::unexpected(recipe.error());
  auto step = BuildStepGraph(*spec, *recipe);
  if (!step) return std::unexpected(step.error());
  auto figures = llm::ComputeModelFigures(*step);
  if (!figures) return std::unexpected(figures.error());
  auto ledger = cost::BuildLedger(step->graph, llm::DecodeBindings(1, 4096));
  if (!ledger) return std::unexpected(ledger.error());
  return Costed{std::move(*spec), std::move(*step), *figures, ledger->not_costed.size()};
}

Costed Folder(const std::string& name) {
  auto run = TryFolder(kSurvey + name);
  EXPECT_TRUE(run.has_value()) << name << ": " << (run ? "" : run.error().message);
  return run ? std::move(*run) : Costed{};
}

std::string FolderError(const std::string& name) {
  auto run = TryFolder(kSurvey + name);
  return run ? std::string("(no error)") : run.error().message;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A folder's config.json with one exact piece of text replaced (a config the survey's would be
// one edit away from).
std::string EditedConfig(const std::string& name, const std::string& from, const std::string& to) {
  std::string text = ReadFile(kSurvey + name + "/config.json");
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

Format FormatOf(const StepGraph& step, std::string_view name) {
  const ir::Tensor* t = FindTensor(step, name);
  return t ? t->format : Format::kF64;
}

bool HasAssumption(const Costed& run, std::string_view part) {
  for (const std::string& a : run.step.graph.assumptions) {
    if (a.find(part) != std::string::npos) return true;
  }
  return false;
}

double Billions(uint64_t v) { return static_cast<double>(v) / 1e9; }

// ---- The corpus -----------------------------------------------------------------------------

// Every folder runs fully costed (no node without a cost) and, where the checkpoint declares a
// quantization, is not sized as bf16 (2 bytes per parameter: a quantized checkpoint's bulk is
// at most 1 byte (FP8) or about 0.56 (NVFP4, MXFP4) per parameter, so 1.5 separates them), or is
// refused with an error naming the field or model_type; at least 95 % run.
TEST(Configs2026, EachFolderRunsFullyCostedOrIsRefusedByName) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(kSurvey)) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  ASSERT_GE(names.size(), 50u) << kSurvey;
  size_t costed = 0;
  for (const std::string& name : names) {
    auto run = TryFolder(kSurvey + name);
    if (!run) {
      const std::string& why = run.error().message;
      std::cout << "  refused  " << name << ": " << why << "\n";
      EXPECT_NE(why.find("field '"), std::string::npos) << name << ": " << why;
      continue;
    }
    const double bytes_per_param = static_cast<double>(run->figures.weight_bytes) /
                                   static_cast<double>(run->figures.params_total);
    std::cout << "  costed   " << name << ": " << Billions(run->figures.params_total) << " B / "
              << Billions(run->figures.params_active) << " B active, " << bytes_per_param
              << " bytes per parameter\n";
    EXPECT_EQ(run->not_costed, 0u) << name;
    if (run->spec.quant.scope != CheckpointQuant::Scope::kNone) {
      EXPECT_LT(bytes_per_param, 1.5) << name << " declares " << run->spec.quant.method
                                      << " but is sized as bf16";
    }
    if (run->not_costed == 0) ++costed;
  }
  const double share = static_cast<double>(costed) / static_cast<double>(names.size());
  std::cout << "  " << costed << " of " << names.size() << " fully costed\n";
  EXPECT_GE(share, 0.95);
}

// ---- GLM-5 (glm_moe_dsa) --------------------------------------------------------------------

// zai-org/GLM-5 model card: 744B parameters, 40B active. qk_head_dim (256) is
// qk_nope_head_dim 192 + qk_rope_head_dim 64, read and checked.
TEST(SurveyFixes, GlmQkHeadDimIsTheNopeAndRopeSum) {
  const Costed run = Folder("GLM-5.1");
  EXPECT_NEAR(Billions(run.figures.params_total), 744, 0.5);
  // Active without the embedding and the (untied) LM head, 154880 × 6144 each: the card's 40B.
  const uint64_t table = 154880ull * 6144;
  EXPECT_NEAR(Billions(run.figures.params_active - 2 * table), 40, 0.5);
  EXPECT_NE(ParseError(EditedConfig("GLM-5.1", "\"qk_head_dim\": 256", "\"qk_head_dim\": 255"))
                .find("field 'qk_head_dim': 255 is not qk_nope_head_dim 192 + qk_rope_head_dim 64"),
            std::string::npos);
  // GLM-5.2: the MTP iteration reuses the indexer's selection (listed; MTP is not in the step).
  const Costed v52 = Folder("GLM-5.2");
  EXPECT_TRUE(HasAssumption(v52, "index_share_for_mtp_iteration"));
  EXPECT_LT(v52.figures.params_total, run.figures.params_total);  // "shared" layers: no indexer
}

// ---- Fields with no effect on shapes --------------------------------------------------------

// A null field is Python's None, an absent one (MiniMax-M2's "sliding_window": null); a value
// of a shape-like field the reader does not read stays an error.
TEST(SurveyFixes, NullUnreadFieldIsAbsent) {
  const std::string llama = R"({"model_type": "llama", "hidden_size": 4096,
    "num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 8,
    "intermediate_size": 14336, "vocab_size": 128256, "num_memory_heads": )";
  EXPECT_EQ(ParseError(llama + "null}"), "(no error)");
  EXPECT_NE(ParseError(llama + "4}").find("field 'num_memory_heads': not read"),
            std::string::npos);
  // MiniMax-M2.5 (model card: 229B total, 10B active): the NVFP4 folder runs, its experts and
  // MLPs in NVFP4, attention and routers excluded.
  const Costed run = Folder("MiniMax-M2.5-NVFP4");
  EXPECT_NEAR(Billions(run.figures.params_total), 229, 0.5);
  EXPECT_NEAR(Billions(run.figures.params_active - 2 * 200064ull * 3072), 10, 0.5);
  EXPECT_EQ(FormatOf(run.step, "layers.0.moe.experts.gate_up_proj.weight"), Format::kNvfp4);
  EXPECT_EQ(FormatOf(run.step, "layers.0.attn.qkv_proj.weight"), Format::kBf16);
}

// Kimi-K2.5's top-level vision settings (use_unified_vision_chunk, video_placeholder) belong to
// the vision tower, which is not costed. Model card (moonshotai/Kimi-K2.5): 1T total, 32B active.
TEST(SurveyFixes, KimiVisionSettingsAreQuiet) {
  for (const char* name : {"Kimi-K2.5-NVFP4", "Kimi-K2.6-NVFP4", "Kimi-K2.7-Code-NVFP4"}) {
    const Costed run = Folder(name);
    EXPECT_NEAR(Billions(run.figures.params_total) / 1000, 1.0, 0.05) << name;
    EXPECT_NEAR(Billions(run.figures.params_active), 32, 1.5) << name;
    EXPECT_EQ(FormatOf(run.step, "layers.5.moe.experts.gate_up_proj.weight"), Format::kNvfp4)
        << name;
    EXPECT_TRUE(HasAssumption(run, "vision tower")) << name;
  }
}

// ---- Readers --------------------------------------------------------------------------------

// MiniMax-M2.5 writes fp8's fmt as the torch dtype's name, float8_e4m3fn: e4m3, 128×128 blocks.
TEST(SurveyFixes, Fp8FmtTorchName) {
  const Costed run = Folder("MiniMax-M2.5");
  EXPECT_EQ(FormatOf(run.step, "layers.0.moe.experts.gate_up_proj.weight"),
            Format::kFp8E4m3B128x128);
  EXPECT_EQ(FormatOf(run.step, "layers.0.moe.router.weight"), Format::kBf16);  // "gate"
  EXPECT_NEAR(Billions(run.figures.params_total), 229, 0.5);
}

// Step-3.7-Flash's use_moe_router_bias: a float32 bias per expert for the top-k choice (the
// correction bias); false removes it.
TEST(SurveyFixes, StepRouterBias) {
  const Costed run = Folder("Step-3.7-Flash");
  EXPECT_TRUE(run.spec.moe.score_correction_bias);
  auto off = ParseHfConfig(EditedConfig("Step-3.7-Flash", "\"use_moe_router_bias\": true",
                                        "\"use_moe_router_bias\": false"),
                           "config.json");
  ASSERT_TRUE(off.has_value()) << off.error().message;
  EXPECT_FALSE(off->moe.score_correction_bias);
}

// Llama 4's router (transformers' Llama4TextMoe): the top-k of the router logits, then the
// sigmoid of the scores, with no correction bias; the HF reader read them as softmax before.
// The 16-expert Scout and the 128-expert Maverick route alike.
TEST(SurveyFixes, Llama4RoutesBySigmoidWithoutCorrectionBias) {
  for (const char* name : {"Llama-4-Scout-17B-16E-Instruct", "Llama-4-Maverick-17B-128E-Instruct"}) {
    const Costed run = Folder(name);
    EXPECT_TRUE(run.spec.moe.sigmoid_scores) << name;
    EXPECT_FALSE(run.spec.moe.score_correction_bias) << name;
    for (const ir::Tensor& t : run.step.graph.tensors) {
      EXPECT_EQ(t.name.find("e_score_correction_bias"), std::string::npos) << name << ": " << t.name;
    }
  }
}

// Qwen3-Coder-480B-A35B-Instruct (model card: 480B total, 35B activated) says qkv_bias false
// and use_qk_norm true, which its Qwen3MoeConfig does not read; they must agree with the family.
TEST(SurveyFixes, QwenCoderStrayFlagsAgree) {
  const Costed run = Folder("Qwen3-Coder-480B-A35B-Instruct");
  EXPECT_NEAR(Billions(run.figures.params_total), 480, 0.5);
  EXPECT_NEAR(Billions(run.figures.params_active), 35, 0.5);
  const std::string name = "Qwen3-Coder-480B-A35B-Instruct";
  EXPECT_NE(ParseError(EditedConfig(name, "\"qkv_bias\": false", "\"qkv_bias\": true"))
                .find("field 'qkv_bias': true disagrees with 'attention_bias' (false)"),
            std::string::npos);
  EXPECT_NE(ParseError(EditedConfig(name, "\"use_qk_norm\": true", "\"use_qk_norm\": false"))
                .find("field 'use_qk_norm': false, but model_type 'qwen3_moe' norms q and k"),
            std::string::npos);
}

// MiMo-7B's attention_bias is not what its Qwen2-style attention reads: q/k/v biased, o_proj not.
TEST(SurveyFixes, MimoAttentionBiasNoted) {
  const Costed run = Folder("MiMo-7B-Base");
  EXPECT_TRUE(run.spec.attn.qkv_bias);
  EXPECT_FALSE(run.spec.attn.o_bias);
  EXPECT_TRUE(HasAssumption(run, "'attention_bias' (true) is not read"));
}

// transformers' DeepseekV4Config states qk_nope_head_dim = head_dim - qk_rope_head_dim.
TEST(SurveyFixes, DeepseekV4NopeDimChecked) {
  const std::string name = "DeepSeek-V4-Flash-NVFP4-FP8";
  EXPECT_EQ(FolderError(name), "(no error)");
  EXPECT_NE(ParseError(EditedConfig(name, "\"qk_nope_head_dim\": 448", "\"qk_nope_head_dim\": 440"))
                .find("field 'qk_nope_head_dim': 440 + qk_rope_head_dim 64 is not head_dim 512"),
            std::string::npos);
}

// poolside's Laguna (a query-head count per layer, a softplus gate from g_proj): both releases
// run fully costed (tests/llm_laguna_test.cc has their closed forms); model card counts:
// Laguna XS.2 33B-A3B (huggingface.co/poolside), Laguna S 2.1 118B total, ~8B activated (NVIDIA
// NeMo AutoModel's Laguna page).
TEST(SurveyFixes, LagunaRunsFullyCosted) {
  for (const char* name : {"Laguna-XS.2-FP8", "Laguna-S-2.1-FP8"}) {
    EXPECT_EQ(FolderError(name), "(no error)") << name;
    auto run = TryFolder(kSurvey + name);
    ASSERT_TRUE(run.has_value()) << name;
    EXPECT_EQ(run->not_costed, 0u) << name;
  }
  EXPECT_NEAR(Billions(Folder("Laguna-XS.2-FP8").figures.params_total), 33, 0.5);
  EXPECT_NEAR(Billions(Folder("Laguna-S-2.1-FP8").figures.params_total), 118, 0.5);
  EXPECT_EQ(FindRefusedFamily("laguna"), nullptr);
}

// ---- Quantized checkpoints sized by their formats -------------------------------------------

uint64_t Nvfp4(uint64_t n) { return n / 2 + n / 16 + 4; }  // e2m1 + e4m3 per 16 + f32 per tensor
uint64_t Mxfp4(uint64_t n) { return n / 2 + n / 32; }      // e2m1 + e8m0 per 32
// e4m3 + an f32 scale per 128×128 block of each of e matrices [r, d].
uint64_t Fp8Blocks(uint64_t e, uint64_t r, uint64_t d) { return e * r * d + 4 * e * (r / 128) * (d / 128); }

// DeepSeek-V4's checkpoints name modules their own way (attn.wq_a ... ffn.experts.N.w1): NVIDIA's
// MIXED_PRECISION map ("layers.N.ffn.experts": NVFP4; "*.attn.*", "*.ffn.shared_experts.*",
// "head" excluded) puts the routed experts, and only they, in NVFP4. V4-Flash: 43 layers of 256
// experts, [2·2048, 4096] and [4096, 2048] each.
TEST(SurveyFixes, DeepseekV4NvfpFourExperts) {
  const Costed run = Folder("DeepSeek-V4-Flash-NVFP4");
  EXPECT_EQ(FormatOf(run.step, "layers.3.moe.experts.gate_up_proj.weight"), Format::kNvfp4);
  EXPECT_EQ(FormatOf(run.step, "layers.3.moe.experts.down_proj.weight"), Format::kNvfp4);
  EXPECT_EQ(FormatOf(run.step, "layers.3.attn.q_a_proj.weight"), Format::kBf16);
  EXPECT_EQ(FormatOf(run.step, "layers.3.moe.shared_expert.gate_up_proj.weight"), Format::kBf16);
  const uint64_t per_tensor = 256ull * 4096 * 2048 * 2;  // gate_up elements (down: half)
  const uint64_t experts = 43 * (per_tensor + per_tensor / 2);
  const uint64_t expert_bytes = 43 * (Nvfp4(per_tensor) + Nvfp4(per_tensor / 2));
  // The rest in bf16, but each learned router's e_score_correction_bias [256] in f32 (the
  // 43 - 3 layers that do not route by hash): 2 more bytes per element.
  const uint64_t f32_extra = 2 * 256 * (43 - 3);
  EXPECT_EQ(run.figures.weight_bytes,
            2 * (run.figures.params_total - experts) + expert_bytes + f32_extra);
  // RedHatAI's copy (compressed-tensors: the transformers port's names) agrees on the experts.
  const Costed redhat = Folder("DeepSeek-V4-Flash-NVFP4-FP8");
  EXPECT_EQ(FormatOf(redhat.step, "layers.3.moe.experts.gate_up_proj.weight"), Format::kNvfp4);
  EXPECT_EQ(FormatOf(redhat.step, "layers.3.attn.q_b_proj.weight"), Format::kFp8E4m3B128x128);
}

// expert_dtype "fp4" beside an fp8 quantization_config (deepseek-ai/DeepSeek-V4-Flash): the
// routed experts in MXFP4, the other layer matrices in 128×128-block FP8.
TEST(SurveyFixes, DeepseekV4ExpertDtypeFp4) {
  const Costed run = Folder("DeepSeek-V4-Flash");
  EXPECT_EQ(FormatOf(run.step, "layers.3.moe.experts.gate_up_proj.weight"), Format::kMxfp4);
  EXPECT_EQ(FormatOf(run.step, "layers.3.attn.q_b_proj.weight"), Format::kFp8E4m3B128x128);
  const uint64_t per_tensor = 256ull * 4096 * 2048 * 2;
  const Costed fp8 = Folder("DeepSeek-V4-Flash-FP8");  // sgl-project's copy: no expert_dtype
  const uint64_t fp8_experts = 43 * (Fp8Blocks(256, 4096, 4096) + Fp8Blocks(256, 4096, 2048));
  const uint64_t fp4_experts = 43 * (Mxfp4(per_tensor) + Mxfp4(per_tensor / 2));
  EXPECT_EQ(fp8.figures.weight_bytes - run.figures.weight_bytes, fp8_experts - fp4_experts);
}

// Gemma-4's routed experts are `experts` beside the dense `mlp` (transformers'
// Gemma4TextDecoderLayer): NVIDIA's exclusions ("...mlp*", "...router*", "...self_attn*") leave
// them, and only them, in NVFP4. 26B-A4B: 30 layers of 128 experts, [2·704, 2816], [2816, 704].
TEST(SurveyFixes, Gemma4ExpertsAreNotTheMlp) {
  const Costed run = Folder("Gemma-4-26B-A4B-NVFP4");
  EXPECT_EQ(FormatOf(run.step, "layers.5.moe.experts.gate_up_proj.weight"), Format::kNvfp4);
  EXPECT_EQ(FormatOf(run.step, "layers.5.mlp.gate_up_proj.weight"), Format::kBf16);
  EXPECT_EQ(FormatOf(run.step, "layers.5.moe.router.weight"), Format::kBf16);
  const uint64_t gate_up = 128ull * 2 * 704 * 2816, down = 128ull * 2816 * 704;
  const uint64_t experts = 30 * (gate_up + down);
  EXPECT_EQ(run.figures.weight_bytes,
            2 * (run.figures.params_total - experts) + 30 * (Nvfp4(gate_up) + Nvfp4(down)));
}

// Qwen3.6-27B (qwen3_5, dense; model card: 27B): output_gate_type "swish" is the gate's
// activation (read, listed); NVIDIA's MIXED_PRECISION map puts the attention and GatedDeltaNet
// projections in FP8, the MLP and the LM head in W4A16 NVFP4, the rest (in_proj_b / _a) in bf16.
TEST(SurveyFixes, Qwen36OutputGateTypeAndMixedPrecision) {
  const Costed run = Folder("Qwen3.6-27B-NVFP4");
  EXPECT_NEAR(Billions(run.figures.params_total), 27, 0.5);
  EXPECT_TRUE(HasAssumption(run, "output_gate_type \"swish\""));
  EXPECT_EQ(FormatOf(run.step, "layers.0.linear_attn.in_proj_qkvz.weight"), Format::kFp8E4m3);
  EXPECT_EQ(FormatOf(run.step, "layers.0.linear_attn.in_proj_ba.weight"), Format::kBf16);
  EXPECT_EQ(FormatOf(run.step, "layers.3.attn.qkv_proj.weight"), Format::kFp8E4m3);
  EXPECT_EQ(FormatOf(run.step, "layers.3.mlp.gate_up_proj.weight"), Format::kNvfp4);
  EXPECT_EQ(FormatOf(run.step, "lm_head.weight"), Format::kNvfp4);
  EXPECT_NE(ParseError(EditedConfig("Qwen3.6-27B-NVFP4", "\"output_gate_type\": \"swish\"",
                                    "\"output_gate_type\": \"tanh\""))
                .find("field 'text_config.output_gate_type': \"tanh\" (expected sigmoid, swish or silu)"),
            std::string::npos);
  // Qwen3.6-35B-A3B (qwen3_5_moe; model card: 35B total, 3B active): the routed experts
  // ("mlp.experts"), the shared expert and the LM head in NVFP4, the attention in FP8.
  const Costed moe = Folder("Qwen3.6-35B-A3B-NVFP4");
  EXPECT_NEAR(Billions(moe.figures.params_total), 35, 0.5);
  EXPECT_NEAR(Billions(moe.figures.params_active), 3, 0.5);  // Qwen counts the embeddings in
  EXPECT_EQ(FormatOf(moe.step, "layers.0.moe.experts.gate_up_proj.weight"), Format::kNvfp4);
  EXPECT_EQ(FormatOf(moe.step, "layers.0.moe.shared_expert.gate_up_proj.weight"), Format::kNvfp4);
  EXPECT_EQ(FormatOf(moe.step, "layers.3.attn.qkv_proj.weight"), Format::kFp8E4m3);
  EXPECT_EQ(FormatOf(moe.step, "layers.0.moe.router.weight"), Format::kBf16);
}

}  // namespace
}  // namespace opscope::import::hf
