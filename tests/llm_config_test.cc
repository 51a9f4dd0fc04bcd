// HF config import: config quirks, errors, layer kinds from config fields, and parameter
// counts checked against the published exact counts of real checkpoints.
#include <gtest/gtest.h>

#include <string>

#include "import/hf_config/config_json.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "llm/llm.h"

namespace opscope::import::hf {
namespace {

ModelSpec Preset(std::string_view name) {
  const hf::Preset* p = FindPreset(name);
  EXPECT_NE(p, nullptr) << name;
  auto spec = ParseHfConfig(p->json, std::string(p->file));
  EXPECT_TRUE(spec.has_value()) << (spec ? "" : spec.error().message);
  return *spec;
}

llm::ModelFigures Figures(std::string_view name, RecipeOptions options = {}) {
  const ModelSpec spec = Preset(name);
  auto recipe = ResolveRecipe(spec, options);
  EXPECT_TRUE(recipe.has_value()) << (recipe ? "" : recipe.error().message);
  auto step = BuildStepGraph(spec, *recipe);
  EXPECT_TRUE(step.has_value()) << (step ? "" : step.error().message);
  auto figures = llm::ComputeModelFigures(*step);
  EXPECT_TRUE(figures.has_value());
  return *figures;
}

std::string ParseError(const std::string& json) {
  auto spec = ParseHfConfig(json, "config.json");
  return spec ? std::string("(no error)") : spec.error().message;
}

// A UTF-8 byte-order mark before a config's JSON is ignored (RFC 8259 §8.1).
TEST(HfConfig, LeadingByteOrderMarkIsIgnored) {
  const import::hf::Preset* p = import::hf::FindPreset("llama-3.1-8b");
  ASSERT_NE(p, nullptr);
  auto with = ParseHfConfig("\xEF\xBB\xBF" + std::string(p->json), "config.json");
  ASSERT_TRUE(with) << with.error().message;
  auto without = ParseHfConfig(p->json, "config.json");
  ASSERT_TRUE(without);
  EXPECT_EQ(with->num_layers(), without->num_layers());
}

TEST(HfConfigJson, NonFiniteLiteralsOutsideStringsBecomeNull) {
  EXPECT_EQ(SanitizeNonFiniteLiterals(R"({"a": [0.0, Infinity], "b": -Infinity, "c": NaN})"),
            R"({"a": [0.0, null], "b": null, "c": null})");
  // Inside strings they stay, escaped quotes included.
  EXPECT_EQ(SanitizeNonFiniteLiterals(R"({"s": "Infinity \" NaN"})"),
            R"({"s": "Infinity \" NaN"})");
}

TEST(HfConfigJson, DuplicatedKeysTakeTheLastValueLikePython) {
  auto doc = ConfigDocument::Parse(R"({"hidden_size": 1024, "x": 1, "hidden_size": 4096})",
                                   "config.json");
  ASSERT_TRUE(doc.has_value());
  auto v = (*doc)->root().Int("hidden_size");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(**v, 4096);
}

TEST(HfConfigJson, WrongTypesNameTheFileAndField) {
  auto doc = ConfigDocument::Parse(R"({"text_config": {"hidden_size": "big"}})", "config.json");
  ASSERT_TRUE(doc.has_value());
  auto text = (*doc)->root().Object("text_config");
  ASSERT_TRUE(text.has_value() && text->has_value());
  auto v = (**text).Int("hidden_size");
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().message,
            "config.json: field 'text_config.hidden_size': expected an integer, got \"big\"");
}

const char* kLlamaLike = R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 2,
  "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
  "vocab_size": 128256, "torch_dtype": "bfloat16"})";

TEST(HfConfigErrors, BadInputNamesFileAndField) {
  std::string bad_kv = kLlamaLike;
  bad_kv.replace(bad_kv.find("\"num_key_value_heads\": 8"), 24, "\"num_key_value_heads\": 5");
  EXPECT_EQ(ParseError(bad_kv),
            "config.json: field 'num_key_value_heads': 5 does not divide num_attention_heads 32");
  EXPECT_EQ(ParseError(R"({"model_type": "llama", "num_hidden_layers": 2})"),
            "config.json: missing field 'hidden_size' (or 'd_model') (required for model_type "
            "'llama'; transformers' default describes another model, so opscope does not guess "
            "it)");
  EXPECT_EQ(ParseError(R"({"model_type": "bert", "hidden_size": 8})").substr(0, 58),
            "config.json: field 'model_type': \"bert\" is not supported (");
  EXPECT_EQ(ParseError("{\"model_type\": \"llama\",").substr(0, 29), "config.json: not valid JSON: ");
  EXPECT_EQ(ParseError(R"({"hidden_size": 8})"), "config.json: missing field 'model_type'");
  EXPECT_EQ(ParseError(R"({"model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 1,
      "num_attention_heads": 4, "num_key_value_heads": 4, "intermediate_size": 128,
      "num_local_experts": 8,
      "num_experts_per_tok": 9})"),
            "config.json: field 'num_experts_per_tok': 9 is above the expert count 8 "
            "('num_local_experts')");
}

TEST(HfConfigDefaults, NoDtypeMeansBf16AndIsAnAssumption) {
  std::string no_dtype = kLlamaLike;
  no_dtype.erase(no_dtype.find(", \"torch_dtype\""));
  no_dtype += "}";
  auto spec = ParseHfConfig(no_dtype, "config.json");
  ASSERT_TRUE(spec.has_value()) << spec.error().message;
  EXPECT_EQ(spec->dtype, format::Format::kBf16);
  ASSERT_FALSE(spec->assumptions.empty());
  EXPECT_NE(spec->assumptions.back().find("bf16"), std::string::npos);
}

TEST(HfConfigDefaults, GemmaThreeTakesTheLibraryVocabularyAndPattern) {
  // The reconstructed Gemma-3 config omits vocab_size and the sliding-window pattern:
  // Gemma3TextConfig gives 262208 and every 6th layer full attention.
  const ModelSpec s = Preset("gemma-3-27b-it");
  EXPECT_EQ(s.vocab, 262208);
  EXPECT_TRUE(s.tie_embeddings);
  ASSERT_EQ(s.num_layers(), 62);
  for (int64_t i = 0; i < 62; ++i) {
    EXPECT_EQ(s.layers[i].window, (i + 1) % 6 == 0 ? 0 : 1024) << "layer " << i;
  }
}

TEST(HfConfigLayers, KindsComeFromConfigFields) {
  const ModelSpec oss = Preset("gpt-oss-20b");  // layer_types: sliding, full, ...
  EXPECT_EQ(oss.layers[0].window, 128);
  EXPECT_EQ(oss.layers[1].window, 0);
  EXPECT_TRUE(oss.attn.sinks);

  const ModelSpec next = Preset("qwen3-next-80b-a3b-thinking");  // full_attention_interval 4
  EXPECT_EQ(next.layers[2].mixer, Mixer::kGatedDeltaNet);
  EXPECT_EQ(next.layers[3].mixer, Mixer::kAttention);
  EXPECT_TRUE(next.attn.output_gate);

  const ModelSpec ds = Preset("deepseek-v3");  // first_k_dense_replace 3
  EXPECT_EQ(ds.layers[2].ffn, Ffn::kDense);
  EXPECT_EQ(ds.layers[3].ffn, Ffn::kMoe);
  EXPECT_EQ(ds.layers[3].mixer, Mixer::kMla);
  EXPECT_EQ(ds.quant.format, format::Format::kFp8E4m3B128x128);

  const ModelSpec nano = Preset("nemotron-3-nano-30b-a3b");  // "MEMEM*E..."
  EXPECT_EQ(nano.layers[0].mixer, Mixer::kMamba2);
  EXPECT_EQ(nano.layers[1].ffn, Ffn::kMoe);
  EXPECT_EQ(nano.layers[5].mixer, Mixer::kAttention);
  EXPECT_FALSE(nano.attn.rope);

  const ModelSpec mistral = Preset("mistral-7b-v0.1");  // sliding_window 4096 on every layer
  EXPECT_EQ(mistral.layers[31].window, 4096);
  const ModelSpec mixtral = Preset("mixtral-8x7b");  // sliding_window null: none
  EXPECT_EQ(mixtral.layers[0].window, 0);
  const ModelSpec qwen = Preset("qwen2.5-7b-instruct");  // use_sliding_window false
  EXPECT_EQ(qwen.layers[27].window, 0);
  EXPECT_TRUE(qwen.attn.qkv_bias);
}

// Published exact parameter counts (the checkpoints' safetensors metadata / model cards).
TEST(HfConfigParams, DenseModelsMatchPublishedCounts) {
  EXPECT_EQ(Figures("llama-3.1-8b").params_total, 8030261248u);
  EXPECT_EQ(Figures("llama-3.1-70b").params_total, 70553706496u);
  EXPECT_EQ(Figures("llama-2-7b-hf").params_total, 6738415616u);
  EXPECT_EQ(Figures("mistral-7b-v0.1").params_total, 7241732096u);
  EXPECT_EQ(Figures("qwen2.5-7b-instruct").params_total, 7615616512u);
  EXPECT_EQ(Figures("gemma-2-9b-it").params_total, 9241705984u);   // tied embeddings
  EXPECT_EQ(Figures("mamba-codestral-7b-v0.1").params_total, 7285403648u);
}

TEST(HfConfigParams, MixtralTotalAndActive) {
  const llm::ModelFigures m = Figures("mixtral-8x7b");
  EXPECT_EQ(m.params_total, 46702792704u);
  EXPECT_EQ(m.params_active, 12879925248u);  // 2 of 8 experts, embeddings counted
  EXPECT_EQ(m.params_embedding, 32000u * 4096u);
}

// Published totals and active counts given to two or three significant decimals (model cards):
// gpt-oss-120b 116.83B total, 5.13B active; gpt-oss-20b 20.91B, 3.61B (the cards count active
// parameters without the input embedding); DeepSeek-V3 671B, 37B active; Kimi-K2 1T, 32B
// active; Nemotron-3-Nano-30B-A3B 31.6B, 3.6B active with embeddings; Qwen3-30B-A3B 30.5B,
// 3.3B active.
double Billions(uint64_t v, double unit = 1e9) { return static_cast<double>(v) / unit; }

TEST(HfConfigParams, MoeModelsMatchPublishedFigures) {
  const llm::ModelFigures oss120 = Figures("gpt-oss-120b");
  EXPECT_NEAR(Billions(oss120.params_total), 116.83, 0.005);
  EXPECT_NEAR(Billions(oss120.params_active - oss120.params_embedding), 5.13, 0.005);
  const llm::ModelFigures oss20 = Figures("gpt-oss-20b");
  EXPECT_NEAR(Billions(oss20.params_total), 20.91, 0.01);
  EXPECT_NEAR(Billions(oss20.params_active - oss20.params_embedding), 3.61, 0.005);
  const llm::ModelFigures ds = Figures("deepseek-v3");
  EXPECT_NEAR(Billions(ds.params_total), 671, 0.5);
  EXPECT_NEAR(Billions(ds.params_active), 37, 1);
  const llm::ModelFigures kimi = Figures("kimi-k2-instruct");
  EXPECT_NEAR(Billions(kimi.params_total, 1e12), 1.0, 0.05);
  EXPECT_NEAR(Billions(kimi.params_active), 32, 1);
  const llm::ModelFigures nano = Figures("nemotron-3-nano-30b-a3b");
  EXPECT_NEAR(Billions(nano.params_total), 31.6, 0.05);
  EXPECT_NEAR(Billions(nano.params_active), 3.6, 0.05);
  const llm::ModelFigures qwen = Figures("qwen3-30b-a3b");
  EXPECT_NEAR(Billions(qwen.params_total), 30.5, 0.05);
  EXPECT_NEAR(Billions(qwen.params_active), 3.3, 0.06);
}

TEST(HfConfigParams, KvBytesPerToken) {
  EXPECT_EQ(Figures("llama-3.1-8b").kv_bytes_per_token, 131072u);  // 32·2·8·128·2
  EXPECT_EQ(Figures("llama-3.1-8b", {.kv = "fp8_e4m3"}).kv_bytes_per_token, 65536u);
  EXPECT_EQ(Figures("deepseek-v3").kv_bytes_per_token, 61u * (512 + 64) * 2);  // 70,272
}

}  // namespace
}  // namespace opscope::import::hf
