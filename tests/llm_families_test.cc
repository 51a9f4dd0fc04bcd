// The model families of families.h on real configs (tests/fixtures/hf/, data/presets/, each
// with its source in SOURCES.md): parameter counts against the published figures (model cards,
// cited per test), KV bytes per token and one step's FLOPs in closed form; the unread-field
// check, --model-type, and the multi-token-prediction count.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "import/hf_config/config_fields.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "llm/llm.h"

namespace opscope::import::hf {
namespace {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/hf/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A preset by name, else a fixture file.
std::string Config(const std::string& name) {
  if (const Preset* p = FindPreset(name)) return std::string(p->json);
  return ReadFixture(name);
}

ModelSpec Spec(const std::string& name, const ParseOptions& options = {}) {
  auto spec = ParseHfConfig(Config(name), name, options);
  EXPECT_TRUE(spec.has_value()) << name << ": " << (spec ? "" : spec.error().message);
  return spec ? *spec : ModelSpec{};
}

struct Built {
  ModelSpec spec;
  StepGraph step;
  llm::ModelFigures figures;
};

Built Build(const std::string& name, RecipeOptions options = {}) {
  Built b;
  b.spec = Spec(name);
  auto recipe = ResolveRecipe(b.spec, options);
  EXPECT_TRUE(recipe.has_value()) << name << ": " << (recipe ? "" : recipe.error().message);
  if (!recipe) return b;
  auto step = BuildStepGraph(b.spec, *recipe);
  EXPECT_TRUE(step.has_value()) << name << ": " << (step ? "" : step.error().message);
  if (!step) return b;
  b.step = std::move(*step);
  auto figures = llm::ComputeModelFigures(b.step);
  EXPECT_TRUE(figures.has_value());
  if (figures) b.figures = *figures;
  return b;
}

double Billions(uint64_t v) { return static_cast<double>(v) / 1e9; }

std::string ParseError(const std::string& json, const ParseOptions& options = {}) {
  auto spec = ParseHfConfig(json, "config.json", options);
  return spec ? std::string("(no error)") : spec.error().message;
}

const char* kLlama = R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 2,
  "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
  "vocab_size": 128256, "torch_dtype": "bfloat16")";

// ---- Unread fields and --model-type --------------------------------------------------------

TEST(HfUnreadFields, AnInventedShapeFieldIsAnErrorNamingIt) {
  EXPECT_EQ(ParseError(std::string(kLlama) + R"(, "num_memory_tokens": 64})"),
            "config.json: field 'num_memory_tokens': not read by the reader for model_type "
            "'llama', and its name says it changes the model's shapes (a size, count, pattern or "
            "switch); opscope does not cost a model it would get wrong");
  // Inside a nested text config the path says where.
  EXPECT_EQ(ParseError(R"({"model_type": "qwen3_5", "text_config": {"hidden_size": 64,
      "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 16,
      "linear_value_head_dim": 16, "intermediate_size": 128, "vocab_size": 1000,
      "expert_latent_rank": 8}})"),
            "config.json: field 'text_config.expert_latent_rank': not read by the reader for "
            "model_type 'qwen3_5', and its name says it changes the model's shapes (a size, "
            "count, pattern or switch); opscope does not cost a model it would get wrong");
}

TEST(HfUnreadFields, OrdinaryFieldsStayQuietAndOthersAreListed) {
  // Token ids, numerics and training-only fields are quiet.
  auto quiet = ParseHfConfig(std::string(kLlama) +
                                 R"(, "bos_token_id": 1, "rope_theta": 5e5, "attention_dropout": 0.0,
                                  "pretraining_tp": 1, "image_token_index": 7})",
                             "config.json");
  ASSERT_TRUE(quiet) << quiet.error().message;
  EXPECT_TRUE(quiet->assumptions.empty());
  // An unknown field whose name sizes nothing is listed, not ignored.
  auto listed = ParseHfConfig(std::string(kLlama) + R"(, "chat_template_style": "plain"})",
                              "config.json");
  ASSERT_TRUE(listed) << listed.error().message;
  ASSERT_EQ(listed->assumptions.size(), 1u);
  EXPECT_EQ(listed->assumptions[0],
            "config field 'chat_template_style' not read (no known effect on shapes)");
  // The name heuristic.
  EXPECT_TRUE(LooksLikeShapeField("moe_latent_size"));
  EXPECT_TRUE(LooksLikeShapeField("use_qk_norm"));
  EXPECT_TRUE(LooksLikeShapeField("hybrid_override_pattern"));
  EXPECT_FALSE(LooksLikeShapeField("chat_template_style"));
}

TEST(HfUnreadFields, AliasesThatDisagreeAreAnError) {
  EXPECT_EQ(ParseError(std::string(kLlama) + R"(, "n_layers": 3})"),
            "config.json: field 'n_layers': 3 disagrees with 'num_hidden_layers' 2 (two names of "
            "one field)");
}

TEST(HfModelTypeOption, ReadsACustomLlamaShapedTypeWithAKnownReader) {
  std::string custom = kLlama;
  custom.replace(custom.find("\"llama\""), 7, "\"acme_lm\"");
  custom += "}";
  EXPECT_EQ(ParseError(custom).substr(0, 60),
            "config.json: field 'model_type': \"acme_lm\" is not supported ");
  auto spec = ParseHfConfig(custom, "config.json", ParseOptions{.model_type = "llama"});
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->num_layers(), 2);
  ASSERT_FALSE(spec->assumptions.empty());
  EXPECT_EQ(spec->assumptions[0], "model_type 'acme_lm' read as 'llama' (--model-type)");
  EXPECT_EQ(ParseError(custom, ParseOptions{.model_type = "acme"}).substr(0, 52),
            "option '--model-type': \"acme\" is not a model_type op");
}

// ---- Multi-token prediction ------------------------------------------------------------------

// DeepSeek-V3 model card: "685B, which includes 671B of the Main Model weights and 14B of the
// Multi-Token Prediction (MTP) Module weights". Its MTP module: one MLA + MoE layer, the
// projection [7168, 14336], three norms, and its own embedding and head copies.
TEST(HfMtp, DeepSeekV3MtpModuleIsCountedApartFromTheTotal) {
  const Built ds = Build("deepseek-v3");
  EXPECT_NEAR(Billions(ds.figures.params_total), 671, 1);
  const uint64_t h = 7168, v = 129280;
  const uint64_t attention = h * 1536 + 1536 + 1536 * 128 * 192  // q_a, q_a_norm, q_b
                             + h * 576 + 512 + 512 * 128 * 256    // kv_a, kv_a_norm, kv_b
                             + 128 * 128 * h;                     // o_proj
  const uint64_t moe = 256 * h + 256                              // router, correction bias
                       + 256 * 3 * h * 2048 + 3 * h * 2048;       // routed + shared experts
  const uint64_t layer = attention + moe + 2 * h;                 // + the two layer norms
  EXPECT_EQ(ds.step.params_mtp, layer + 2 * h * h + 3 * h + 2 * v * h);  // 13,463,426,304
  EXPECT_NEAR(Billions(ds.step.params_mtp), 14, 0.08 * 14);      // the card's "14B"
  EXPECT_EQ(Build("llama-3.1-8b").step.params_mtp, 0u);
}

}  // namespace
}  // namespace opscope::import::hf
