// The model families of families.h on real configs (tests/fixtures/hf/, data/presets/, each
// with its source in SOURCES.md): parameter counts against the published figures (model cards,
// cited per test), KV bytes per token and one step's FLOPs in closed form; the unread-field
// check, --model-type, and the multi-token-prediction count.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "device/device.h"
#include "hf_family_test_util.h"
#include "import/hf_config/config_fields.h"
#include "import/hf_config/model_spec.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "llm/llm.h"

namespace opscope::import::hf {
namespace {

using testing::Billions;
using Built = testing::BuiltModel;

// A preset by name, else a fixture file.
std::string Config(const std::string& name) {
  if (const Preset* p = FindPreset(name)) return std::string(p->json);
  return testing::ReadHfFixture(name);
}

Built Build(const std::string& name, const RecipeOptions& options = {}) {
  return testing::BuildJson(Config(name), name, options);
}

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

// A draft head keeps its target's model_type; read as that model it would be costed wrong, so
// its architectures field refuses an EAGLE-1/2 or Medusa head — also when nothing else in it
// would — and reads an EAGLE-3 head as one (below).
TEST(HfUnreadFields, ADraftHeadIsRefusedByItsArchitecture) {
  const std::string head = std::string(kLlama) + R"(, "num_hidden_layers": 1, "architectures": )";
  for (const char* arch : {"EagleLlamaForCausalLM", "MedusaModel"}) {
    const std::string message = ParseError(head + "[\"" + arch + "\"]}");
    EXPECT_EQ(message.rfind("config.json: field 'architectures': " + std::string(arch) + " is a",
                            0),
              0u)
        << message;
    EXPECT_NE(message.find("--speculative draft:N --draft-model M"), std::string::npos) << message;
  }
  for (const char* arch : {"LlamaForCausalLMEagle3", "Eagle3LlamaForCausalLM"}) {
    EXPECT_EQ(ParseError(head + "[\"" + arch + "\"]}"), "(no error)") << arch;
  }
  EXPECT_EQ(ParseError(head + R"(["LlamaForCausalLM"]})"), "(no error)");
  EXPECT_EQ(ParseError(std::string(kLlama) + R"(, "architectures": "LlamaForCausalLM"})")
                .rfind("config.json: field 'architectures'", 0),
            0u);
}

// An EAGLE-3 head (the shape of yuhuili/EAGLE3-LLaMA3.1-Instruct-8B: one Llama layer of
// Llama-3.1-8B's sizes, 32,000 draft tokens): fc [3 · 4096 -> 4096] over the target's hidden
// states, q/k/v over 2 · 4096, the LM head over the draft vocabulary, the target's embedding
// as an input — 424,689,664 parameters in all, none of them an embedding table.
TEST(HfEagle3, AHeadIsItsFcItsLayerOverTwiceTheHiddenAndItsDraftVocabulary) {
  const std::string config = R"({"architectures": ["LlamaForCausalLMEagle3"],
      "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
      "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 1,
      "vocab_size": 128256, "draft_vocab_size": 32000, "tie_word_embeddings": false,
      "torch_dtype": "float16")";
  auto spec = ParseHfConfig(config + "}", "config.json");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->eagle3.aux, 3);
  EXPECT_EQ(spec->eagle3.target_hidden, 4096);
  EXPECT_EQ(spec->eagle3.draft_vocab, 32000);
  auto recipe = ResolveRecipe(*spec, {});
  ASSERT_TRUE(recipe);
  auto step = BuildStepGraph(*spec, *recipe);
  ASSERT_TRUE(step) << step.error().message;
  std::map<std::string, std::vector<int64_t>> weights;
  uint64_t params = 0;
  for (const ir::Tensor& t : step->graph.tensors) {
    if (t.role != ir::Role::kWeight) continue;
    uint64_t n = 1;
    for (const expr::Expr& d : t.shape) {
      weights[t.name].push_back(d.constant());
      n *= static_cast<uint64_t>(d.constant());
    }
    params += n;
  }
  EXPECT_EQ(weights["fc.weight"], (std::vector<int64_t>{4096, 3 * 4096}));
  EXPECT_EQ(weights["layers.0.attn.qkv_proj.weight"],
            (std::vector<int64_t>{4096 + 2 * 8 * 128, 2 * 4096}));
  EXPECT_EQ(weights["lm_head.weight"], (std::vector<int64_t>{32000, 4096}));
  EXPECT_EQ(weights.count("embed_tokens.weight"), 0u);
  EXPECT_EQ(weights.count("layers.0.hidden_norm.weight"), 1u);
  const uint64_t h = 4096, kv = 2 * 8 * 128, ffn = 14336;
  EXPECT_EQ(params, 3 * h * h + (h + kv) * 2 * h + h * h + 3 * h * ffn + 32000 * h + 4 * h);
  EXPECT_EQ(step->graph.nodes.front().name, "embed_tokens");  // the target's table, an input

  // eagle_config's aux layers size fc; without aux hidden states fc reads one layer's.
  auto three = ParseHfConfig(config + R"(, "eagle_config": {"eagle_aux_hidden_state_layer_ids":
      [1, 29, 57], "use_aux_hidden_state": true}, "target_hidden_size": 7168})", "config.json");
  ASSERT_TRUE(three) << three.error().message;
  EXPECT_EQ(three->eagle3.aux, 3);
  EXPECT_EQ(three->eagle3.target_hidden, 7168);
  auto one = ParseHfConfig(config + R"(, "eagle_config": {"use_aux_hidden_state": false}})",
                           "config.json");
  ASSERT_TRUE(one) << one.error().message;
  EXPECT_EQ(one->eagle3.aux, 1);
  EXPECT_EQ(ParseError(config + R"(, "eagle_config": {"eagle_aux_hidden_state_layer_ids": []}})"),
            "config.json: field 'eagle_config.eagle_aux_hidden_state_layer_ids': lists 0 layers "
            "(expected 1 to 1024)");
  // use_sliding_window is not read by the engines' Llama drafter: full attention, said.
  auto unwindowed = ParseHfConfig(config + R"(, "use_sliding_window": true})", "config.json");
  ASSERT_TRUE(unwindowed) << unwindowed.error().message;
  EXPECT_EQ(unwindowed->layers[0].window, 0);
  EXPECT_TRUE(std::any_of(unwindowed->assumptions.begin(), unwindowed->assumptions.end(),
                          [](const std::string& a) {
                            return a.rfind("use_sliding_window true is not read", 0) == 0;
                          }));
  EXPECT_EQ(ParseError(config + R"(, "target_hidden_size": -4})"),
            "config.json: field 'target_hidden_size': -4 is not a hidden size");
  // A draft vocabulary larger than the target's, or a head tied to an embedding it lacks.
  EXPECT_EQ(ParseError(config + R"(, "draft_vocab_size": 200000})"),
            "config.json: field 'draft_vocab_size': 200000 is not in [1, vocab_size 128256]");
  EXPECT_EQ(ParseError(std::string(config).replace(config.find("\"tie_word_embeddings\": false"),
                                                   28, "\"tie_word_embeddings\": true") +
                       "}")
                .rfind("config.json: field 'tie_word_embeddings': true, but an EAGLE-3 head", 0),
            0u);
}

// A fixture config of tests/fixtures/hf/ parsed (its path in messages).
Result<ModelSpec> ParseFixture(const std::string& file) {
  const std::string path = std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/hf/" + file;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseHfConfig(text.str(), path);
}

// The parameters of a spec's step graph under its own recipe (0, with a failure, when it
// does not build).
uint64_t GraphParams(const ModelSpec& spec) {
  auto recipe = ResolveRecipe(spec, {});
  if (!recipe) {
    ADD_FAILURE() << recipe.error().message;
    return 0;
  }
  auto step = BuildStepGraph(spec, *recipe);
  if (!step) {
    ADD_FAILURE() << step.error().message;
    return 0;
  }
  uint64_t params = 0;
  for (const ir::Tensor& t : step->graph.tensors) {
    if (t.role != ir::Role::kWeight) continue;
    uint64_t n = 1;
    for (const expr::Expr& d : t.shape) n *= static_cast<uint64_t>(d.constant());
    params += n;
  }
  return params;
}

// Two real EAGLE-3 heads (SpecForge's configs, tests/fixtures/hf/SOURCES.md): parameters in
// closed form — fc aux · H_target · H, q/k/v over 2H, o_proj, the SwiGLU MLP, the draft
// vocabulary's LM head, four norms (input, hidden, FFN, final) — and the Qwen head's
// sliding-window fields (off) read, not refused.
TEST(HfEagle3, SpecForgeHeadsHaveTheirClosedFormParameters) {
  struct Head {
    const char* file;
    uint64_t hidden, q_width, kv_width, ffn;
  };
  for (const Head& c : {Head{"eagle3-qwen3-32b.json", 5120, 64 * 80, 8 * 80, 25600},
                        Head{"eagle3-deepseek-v3.json", 7168, 56 * 128, 8 * 128, 40960}}) {
    auto spec = ParseFixture(c.file);
    ASSERT_TRUE(spec) << spec.error().message;
    EXPECT_EQ(spec->eagle3.aux, 3) << c.file;
    EXPECT_EQ(spec->eagle3.draft_vocab, 32000) << c.file;
    const uint64_t h = c.hidden;
    EXPECT_EQ(GraphParams(*spec), 3 * h * h + (c.q_width + 2 * c.kv_width) * 2 * h + c.q_width * h +
                          3 * h * c.ffn + 32000 * h + 4 * h)
        << c.file;
  }
}

// EAGLE-3 heads in the speculators format (vllm-project/speculators: the layer's config under
// transformer_layer_config, the head's fields at the top, no top-level model_type), three real
// configs (tests/fixtures/hf/SOURCES.md): the same parameters as a native head of that shape,
// in closed form — fc over aux · target_hidden (target_hidden_size null: the draft's hidden),
// q/k/v over 2H, o_proj, the SwiGLU MLP, the draft vocabulary's LM head, four norms, and with
// norm_before_fc an RMSNorm over fc's aux · H inputs (norm_output adds no weight). The Qwen3-MoE
// head's layer slides over 2048 tokens where its layer_types says so.
TEST(HfEagle3, SpeculatorsHeadsReadAsTheirNativeShape) {
  struct Head {
    const char* file;
    uint64_t hidden, aux, q_width, kv_width, ffn;
    bool norm_before_fc;
    int64_t window;
  };
  for (const Head& c :
       {Head{"speculators-eagle3-llama3.1-8b.json", 4096, 3, 32 * 128, 8 * 128, 14336, false, 0},
        Head{"speculators-eagle3-qwen3-moe.json", 4096, 4, 64 * 128, 4 * 128, 12288, true, 2048},
        Head{"speculators-eagle3-mistral-123b.json", 12288, 3, 96 * 128, 8 * 128, 28672, true,
             0}}) {
    auto spec = ParseFixture(c.file);
    ASSERT_TRUE(spec) << spec.error().message;
    EXPECT_EQ(spec->model_type, "llama") << c.file;
    EXPECT_EQ(spec->eagle3.aux, static_cast<int64_t>(c.aux)) << c.file;
    EXPECT_EQ(spec->eagle3.target_hidden, static_cast<int64_t>(c.hidden)) << c.file;
    EXPECT_EQ(spec->eagle3.draft_vocab, 32000) << c.file;
    EXPECT_EQ(spec->eagle3.norm_before_fc, c.norm_before_fc) << c.file;
    ASSERT_EQ(spec->layers.size(), 1u) << c.file;
    EXPECT_EQ(spec->layers[0].window, c.window) << c.file;
    const uint64_t h = c.hidden;
    EXPECT_EQ(GraphParams(*spec), c.aux * h * h + (c.q_width + 2 * c.kv_width) * 2 * h + c.q_width * h +
                          3 * h * c.ffn + 32000 * h + 4 * h +
                          (c.norm_before_fc ? c.aux * h : 0))
        << c.file;
  }
}

// A speculators head's own switches and errors: fc_norm is one RMSNorm per aux layer before fc
// (aux · target_hidden of weights, beside norm_before_fc's); the algorithm must be eagle3, the
// layer's config must be there and name its model_type; each error names the field.
TEST(HfEagle3, SpeculatorsFormatSwitchesAndErrors) {
  const std::string layer = R"("transformer_layer_config": {"model_type": "llama",
      "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32,
      "num_key_value_heads": 8, "num_hidden_layers": 1, "vocab_size": 128256})";
  const std::string head = R"({"architectures": ["Eagle3Speculator"], "draft_vocab_size": 32000,
      "speculators_config": {"algorithm": "eagle3", "proposal_methods": [{"speculative_tokens": 3}],
      "verifier": {"name_or_path": "meta-llama/Llama-3.1-8B-Instruct"}},
      "speculators_model_type": "eagle3", "torch_dtype": "bfloat16", )";
  auto weights_of = [](const ModelSpec& spec) {
    std::map<std::string, int64_t> out;
    auto recipe = ResolveRecipe(spec, {});
    auto step = BuildStepGraph(spec, *recipe);
    EXPECT_TRUE(step) << step.error().message;
    if (!step) return out;
    for (const ir::Tensor& t : step->graph.tensors) {
      if (t.role != ir::Role::kWeight) continue;
      int64_t n = 1;
      for (const expr::Expr& d : t.shape) n *= d.constant();
      out[t.name] = n;
    }
    return out;
  };
  auto plain = ParseHfConfig(head + layer + "}", "config.json");
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_TRUE(std::any_of(plain->assumptions.begin(), plain->assumptions.end(),
                          [](const std::string& a) {
                            return a.find("trained for meta-llama/Llama-3.1-8B-Instruct") !=
                                   std::string::npos;
                          }));
  auto both = ParseHfConfig(
      head + R"("norm_before_fc": true, "fc_norm": true, "norm_output": true, )" + layer + "}",
      "config.json");
  ASSERT_TRUE(both) << both.error().message;
  const auto w = weights_of(*both);
  EXPECT_EQ(w.at("input_norm.weight"), 3 * 4096);
  EXPECT_EQ(w.at("fc_norm.weight"), 3 * 4096);
  EXPECT_EQ(weights_of(*plain).count("fc_norm.weight"), 0u);

  EXPECT_EQ(ParseError(std::string(head).replace(head.find(R"("eagle3", "torch)"), 8,
                                                 R"("medusa")") + layer + "}"),
            "config.json: field 'speculators_model_type': \"medusa\" is not read: opscope costs "
            "speculators' EAGLE-3 heads (\"eagle3\"), MTP modules (--speculative mtp:N) and "
            "standalone draft models");
  EXPECT_EQ(ParseError(head + R"("dtype": "bfloat16"})"),
            "config.json: field 'transformer_layer_config': missing: a speculators EAGLE-3 head's "
            "draft layer is configured there");
  EXPECT_EQ(ParseError(head + R"("transformer_layer_config": {"hidden_size": 4096}})"),
            "config.json: missing field 'transformer_layer_config.model_type'");
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

// The CLI's --model-type: a custom type reads with a known reader, the report says so; an
// unknown NAME is an error naming the option (exit 2).
TEST(HfModelTypeOption, CommandLine) {
  const std::string dir = ::testing::TempDir();
  const std::string config = dir + "/opscope_model_type.json";
  std::string json = kLlama;
  json.replace(json.find("\"llama\""), 7, "\"my_llama\"");
  std::ofstream(config) << json << "}";
  const std::string out = dir + "/opscope_model_type.out";
  auto run = [&](const std::string& args) {
    const int raw = std::system((std::string(OPSCOPE_BINARY) + " llm " + config + " " + args +
                                 " >" + out + " 2>&1").c_str());
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    return std::pair{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, ss.str()};
  };
  const auto [ok_status, ok_text] = run("--model-type llama");
  EXPECT_EQ(ok_status, 0) << ok_text;
  EXPECT_NE(ok_text.find("model_type 'my_llama' read as 'llama' (--model-type)"),
            std::string::npos) << ok_text;
  const auto [bad_status, bad_text] = run("--model-type bert");
  EXPECT_EQ(bad_status, 2);
  EXPECT_EQ(bad_text.rfind("opscope: error: option '--model-type': \"bert\"", 0), 0u) << bad_text;
  const auto [plain_status, plain_text] = run("");
  EXPECT_EQ(plain_status, 2);
  EXPECT_NE(plain_text.find("--model-type llama"), std::string::npos) << plain_text;
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

// Qwen3-Next's checkpoints store one MTP layer (mtp.*) that Qwen3NextConfig has no field for;
// the engines build one (vLLM: getattr(config, "num_nextn_predict_layers", 1)). The preset,
// which names none, gets one module, the same as a config declaring it, and says it assumed
// it; a config declaring 0 gets none. The module's block is a full-attention MoE layer (the
// model's last), sharing the model's embedding: a block of the model's 48 plus its projection
// [2h, h] and three norms.
TEST(HfMtp, QwenNextCarriesOneUndeclaredMtpLayer) {
  const std::string json = Config("qwen3-next-80b-a3b-thinking");
  ASSERT_EQ(json.find("nextn"), std::string::npos);
  const Built next = Build("qwen3-next-80b-a3b-thinking");
  EXPECT_EQ(next.spec.mtp.modules, 1);
  ASSERT_EQ(next.spec.mtp.blocks.size(), 1u);
  EXPECT_EQ(next.spec.mtp.blocks[0].mixer, Mixer::kAttention);
  EXPECT_EQ(next.spec.mtp.blocks[0].ffn, Ffn::kMoe);
  EXPECT_FALSE(next.spec.mtp.own_embeddings);
  EXPECT_TRUE(std::any_of(next.spec.assumptions.begin(), next.spec.assumptions.end(),
                          [](const std::string& a) { return a.rfind("MTP: 1 module", 0) == 0; }));
  const uint64_t h = 2048;
  EXPECT_GT(next.step.params_mtp, 2 * h * h + 3 * h);
  // One of 48 layers (of which the full-attention ones are the larger): under 1/40 of the total.
  EXPECT_LT(next.step.params_mtp, next.figures.params_total / 40);

  const auto with = [&](const std::string& field) {
    const size_t brace = json.rfind('}');
    return json.substr(0, brace) + ", " + field + "}";
  };
  const Built declared = testing::BuildJson(with(R"("num_nextn_predict_layers": 1)"), "declared");
  EXPECT_EQ(declared.step.params_mtp, next.step.params_mtp);
  EXPECT_TRUE(std::none_of(declared.spec.assumptions.begin(), declared.spec.assumptions.end(),
                           [](const std::string& a) { return a.rfind("MTP:", 0) == 0; }));
  const Built none = testing::BuildJson(with(R"("num_nextn_predict_layers": 0)"), "none");
  EXPECT_EQ(none.spec.mtp.modules, 0);
  EXPECT_EQ(none.step.params_mtp, 0u);
}


// ---- 2026 flagships (presets; sources in data/presets/SOURCES.md) --------------------------

// Published totals and active counts, within a card's rounding (hf_family_test_util.h).
constexpr auto ExpectParams = testing::ExpectPublished;

// DeepSeek-V3.2 (deepseek-ai/DeepSeek-V3.2 card: 685B with the 14B MTP module, as V3):
// DSA on every layer, a 128-wide index key per token beside the 576-wide MLA latent.
TEST(HfFamilies, DeepSeekV32SparseAttention) {
  const Built b = Build("deepseek-v3.2");
  ExpectParams(b, 671, 37);
  EXPECT_NEAR(Billions(b.figures.params_total + b.step.params_mtp), 685, 0.08 * 685);
  EXPECT_EQ(b.figures.kv_bytes_per_token, 61u * (512 + 64 + 128) * 2);  // latent + index key
  for (const LayerSpec& l : b.spec.layers) EXPECT_TRUE(l.sparse);
  EXPECT_EQ(b.spec.indexer.heads, 64);
  EXPECT_EQ(b.spec.indexer.topk, 2048);
}

// GLM-5 (transformers GlmMoeDsa docs: 744B total, 40B active); the preset is zai-org/GLM-5-FP8's
// config.json, with its one MTP layer (num_nextn_predict_layers) and DeepSeek Sparse Attention
// on every layer (index_n_heads 32 of index_head_dim 128, index_topk 2048).
TEST(HfFamilies, Glm5) {
  const Built b = Build("glm-5");
  ExpectParams(b, 744, 40);
  EXPECT_EQ(b.spec.mtp.modules, 1);
  EXPECT_EQ(b.spec.indexer.heads, 32);
  EXPECT_EQ(b.spec.indexer.topk, 2048);
  for (const LayerSpec& l : b.spec.layers) EXPECT_TRUE(l.sparse);
}

// The 2026 presets cost the checkpoint as it ships, not the model's bf16 size: bytes per
// parameter from the formats. MiniMax-M2.5 and GLM-5-FP8 store their layer matrices in block
// FP8 (1 byte, a 4-byte scale per 128×128 block) beside bf16 embeddings, norms and routers:
// between 1.0 and 1.1 bytes per parameter. Kimi-K2.5 stores its routed experts in int4 with a
// bf16 scale per 32 (4.5 bits) and everything else in bf16 (attention, shared experts, the
// first dense layer; about 2 % of the parameters): 0.5625 · 0.98 + 2 · 0.02 ≈ 0.59, so between
// 0.55 and 0.65. DeepSeek-V4 Flash and Pro ship their routed experts in mxfp4 (4.25 bits) and
// the other matrices in block FP8: between 0.5 and 0.65. A copy without its quantization_config
// costs 2 bytes per parameter.
TEST(HfFamilies, PresetsCostTheCheckpointAsShipped) {
  struct Case {
    const char* preset;
    double min_bytes_per_param, max_bytes_per_param;
  };
  for (const Case& c : {Case{"minimax-m2.5", 1.0, 1.1}, Case{"glm-5", 1.0, 1.1},
                        Case{"kimi-k2.5", 0.55, 0.65}, Case{"deepseek-v4-flash", 0.5, 0.65},
                        Case{"deepseek-v4-pro", 0.5, 0.65}}) {
    const Built b = Build(c.preset);
    const double per_param = static_cast<double>(b.figures.weight_bytes) /
                             static_cast<double>(b.figures.params_total);
    EXPECT_GE(per_param, c.min_bytes_per_param) << c.preset;
    EXPECT_LE(per_param, c.max_bytes_per_param) << c.preset;
  }
}

// Kimi-K2.5 (moonshotai/Kimi-K2.5 card: 1T total, 32B activated); the vision tower is listed.
TEST(HfFamilies, KimiK25) {
  const Built b = Build("kimi-k2.5");
  ExpectParams(b, 1000, 32);
  EXPECT_NE(std::find(b.spec.assumptions.begin(), b.spec.assumptions.end(),
                      "the vision tower (vision_config) is not costed and not in params_total"),
            b.spec.assumptions.end());
}

// MiniMax-M2.5 (MiniMaxAI card: 230B total, 10B active); three MTP modules of one layer.
TEST(HfFamilies, MiniMaxM25) {
  const Built b = Build("minimax-m2.5");
  ExpectParams(b, 230, 10);
  EXPECT_TRUE(b.spec.attn.qk_norm_full);  // qk_norm_type "per_layer"
  EXPECT_EQ(b.spec.mtp.modules, 3);
  EXPECT_GT(b.step.params_mtp, 0u);
}

// Qwen3-32B (Qwen card: 32.8B parameters, dense) and Qwen3-235B-A22B (235B total, 22B
// activated: 128 experts, 8 per token), two of the issue's goal models; both presets are the
// bf16 releases' config.json, 2 bytes per parameter.
TEST(HfFamilies, Qwen3GoalPresets) {
  const Built dense = Build("qwen3-32b");
  ExpectParams(dense, 32.8, 32.8);
  const Built moe = Build("qwen3-235b-a22b");
  ExpectParams(moe, 235, 22);
  for (const Built* b : {&dense, &moe}) {
    EXPECT_DOUBLE_EQ(static_cast<double>(b->figures.weight_bytes) /
                         static_cast<double>(b->figures.params_total),
                     2.0)
        << b->spec.origin;
  }
}

// Llama-4 (meta-llama cards: Scout 109B total / 17B active, Maverick 400B / 17B).
TEST(HfFamilies, Llama4ScoutAndMaverick) {
  const Built scout = Build("llama-4-scout-17b-16e-instruct");
  ExpectParams(scout, 109, 17);
  const Built maverick = Build("llama-4-maverick-17b-128e-instruct");
  ExpectParams(maverick, 400, 17);
  // Every 4th layer is a global NoPE layer; the others attend within chunks of 8192.
  for (int64_t i = 0; i < 48; ++i) {
    const LayerSpec& l = scout.spec.layers[i];
    EXPECT_EQ(l.rope, (i + 1) % 4 != 0) << i;
    EXPECT_EQ(l.chunk, l.rope ? 8192 : 0) << i;
  }
  // Maverick interleaves dense (intermediate_size_mlp 16384) and MoE layers.
  EXPECT_EQ(maverick.spec.layers[0].ffn, Ffn::kDense);
  EXPECT_EQ(maverick.spec.layers[1].ffn, Ffn::kMoe);
  EXPECT_EQ(maverick.spec.mlp.intermediate, 16384);
  // KV per token: only the 12 global layers hold every token: 12 · 2 · 8 · 128 · 2 bytes.
  EXPECT_EQ(scout.figures.kv_bytes_per_token, 12u * 2 * 8 * 128 * 2);
}

// Qwen3-VL-235B-A22B (Qwen card: 235B total, 22B activated); the text model is costed.
TEST(HfFamilies, Qwen3Vl) { ExpectParams(Build("qwen3-vl-235b-a22b-thinking"), 235, 22); }

// GLM-4.7 (zai-org card: 355B total, 32B active, as GLM-4.5) and GLM-4.7-Flash (the card's
// "30B-A3B"; a new model_type, glm4_moe_lite, read as one table row: DeepSeek-V2's MLA + MoE).
// Both fixtures are aiconfigurator's trimmed copies (SOURCES.md): attention_bias and use_qk_norm
// take Glm4MoeConfig's defaults, a few million parameters at most.
TEST(HfFamilies, Glm47AndGlm47Flash) {
  ExpectParams(Build("glm-4.7-fp8.json"), 355, 32);
  const Built flash = Build("glm-4.7-flash.json");
  EXPECT_NEAR(Billions(flash.figures.params_total), 30, 0.08 * 30);
  // "A3B" leaves out the embedding and the head (154880 · 2048 each): 3.27 B, where the
  // active count with them is 3.90 B.
  EXPECT_NEAR(Billions(flash.figures.params_active - 2 * flash.figures.params_embedding), 3,
              0.20 * 3);
  // MLA latent cache: 47 layers · (512 + 64) · 2 bytes per token.
  EXPECT_EQ(flash.figures.kv_bytes_per_token, 47u * (512 + 64) * 2);
}

// ---- DeepSeek-V4 ---------------------------------------------------------------------------

// Parameters of the weights whose names start with `prefix` (one layer's sub-block).
uint64_t ParamsUnder(const StepGraph& g, std::string_view prefix) {
  uint64_t total = 0;
  for (const ir::Tensor& t : g.graph.tensors) {
    if (t.role != ir::Role::kWeight || !t.name.starts_with(prefix)) continue;
    uint64_t elements = 1;
    for (const expr::Expr& d : t.shape) elements *= static_cast<uint64_t>(d.constant());
    total += elements;
  }
  return total;
}

// DeepSeek-V4 (DeepSeek's V4 release: V4-Pro 1.6T total / 49B activated, V4-Flash 284B / 13B).
// The compressed KV: per token a CSA layer (ratio 4) stores 1/4 of a 512-wide entry and 1/4 of
// its indexer's 128-wide key, an HCA layer (ratio 128) 1/128 of a 512-wide entry; every layer
// also holds a 128-token window of 512-wide entries.
TEST(HfFamilies, DeepSeekV4FlashAndPro) {
  const Built flash = Build("deepseek-v4-flash");
  ExpectParams(flash, 284, 13);
  const Built pro = Build("deepseek-v4-pro");
  ExpectParams(pro, 1600, 49);
  // Flash: compress_ratios 0, 0, then 4 / 128 alternating: 21 CSA and 20 HCA layers.
  EXPECT_EQ(flash.figures.kv_bytes_per_token, 21u * (512 * 2 / 4 + 128 * 2 / 4) + 20u * (512 * 2 / 128));
  // Pro: 30 CSA, 31 HCA layers. DeepSeek's V4 release: "the 1M token context KV cache ...
  // 9.62 GiB/sequence (in bf16)" (as reported by AINews, 2026-04-25): 9848 B per token ·
  // 2^20 tokens plus the 61 windows of 128 · 512 · 2 B.
  EXPECT_EQ(pro.figures.kv_bytes_per_token, 30u * 320 + 31u * 8);
  const uint64_t million = uint64_t{1} << 20;
  const uint64_t per_seq = llm::BytesPerSeq(pro.step, pro.figures, int64_t(million));
  EXPECT_EQ(per_seq, 9848 * million + 61u * 128 * 512 * 2);
  EXPECT_NEAR(static_cast<double>(per_seq) / double(uint64_t{1} << 30), 9.62, 0.005);
  // Hash-routed layers (num_hash_layers 3) and the MTP module apart from the total.
  EXPECT_EQ(flash.spec.mtp.modules, 1);
  EXPECT_GT(flash.step.params_mtp, 0u);
}

// One Flash CSA layer's attention parameters, from DeepseekV4Attention's shapes (hidden 4096,
// 64 heads of 512, q_lora_rank 1024, o_groups 8, o_lora_rank 1024; indexer 64 heads of 128).
TEST(HfFamilies, DeepSeekV4AttentionParameters) {
  const Built b = Build("deepseek-v4-flash");
  const uint64_t h = 4096, H = 64, d = 512, qr = 1024, g = 8, orank = 1024, hi = 64, di = 128;
  const uint64_t core = h * qr + qr + qr * H * d   // q_a, q_norm, q_b
                        + h * d + d + H              // kv_proj, kv_norm, sinks
                        + g * orank * (H * d / g)    // o_a: per group o_lora_rank × heads·d/g
                        + orank * g * h;             // o_b
  const uint64_t csa = 2 * h * 2 * d + 4 * 2 * d + d;        // compressor kv, gate, bias, norm
  const uint64_t indexer = 2 * h * 2 * di + 4 * 2 * di + di  // its own compressor
                           + qr * hi * di + h * hi;          // q_b, weights_proj
  EXPECT_EQ(ParamsUnder(b.step, "layers.0.attn."), core);  // compress_ratios[0] = 0
  EXPECT_EQ(ParamsUnder(b.step, "layers.2.attn."), core + csa + indexer);
  const uint64_t hca = 2 * h * d + 128 * d + d;
  EXPECT_EQ(ParamsUnder(b.step, "layers.3.attn."), core + hca);
  // Hyper-connections (hc_mult 4): before attention and before the MoE a mix
  // fn [(2 + 4)·4, 4·4096], base (24) and scale (3).
  EXPECT_EQ(ParamsUnder(b.step, "layers.0.attn_hc."), 24 * 4 * h + 24 + 3);
}

// ---- Per-layer heterogeneous blocks (block_configs) -------------------------------------------

// Llama-3.3-Nemotron-Super-49B-v1 (NVIDIA's card: 49B; the config from NeMo's copy, see
// tests/fixtures/hf/SOURCES.md). Of its 80 layers 49 keep attention (8 query heads per KV head:
// 8 KV heads of 128), 31 skip it; every FFN width comes from ffn_mult by DeciLM's rule
// I = ceil256(int(2·ffn_mult·8192/3)). Counted from the config: 49 layers at 5.25 (28672),
// 6 at 2.625 (14336), 10 at 1.3125 (7168), 8 at 1.0 (5632), 6 at 0.5 (2816), 1 at 3.28125
// (17920). NeMo's copy lists 81 blocks; DeciLM builds the first 80.
TEST(HfFamilies, NemotronSuper49bBlockConfigs) {
  const Built b = Build("llama-3.3-nemotron-super-49b-v1.json");
  const uint64_t h = 8192, v = 128256;
  const uint64_t attention = 2 * h * h + 2 * h * 8 * 128 + h;  // q, o, k, v, input norm
  const uint64_t ffn_widths = 49 * 28672 + 6 * 14336 + 10 * 7168 + 8 * 5632 + 6 * 2816 + 17920;
  const uint64_t expected = 2 * v * h + h                      // embedding, head, final norm
                            + 49 * attention + 3 * h * ffn_widths + 80 * h;  // + FFN norms
  EXPECT_EQ(b.figures.params_total, expected);                 // 49,867,145,216
  EXPECT_NEAR(Billions(b.figures.params_total), 49, 0.08 * 49);  // the card's "49B"
  EXPECT_EQ(b.figures.kv_bytes_per_token, 49u * 2 * 8 * 128 * 2);
  EXPECT_EQ(b.spec.layers[62].ffn_width, 2816);  // ffn_mult 0.5: int(2730.67) rounded up
  EXPECT_EQ(b.spec.layers[6].mixer, Mixer::kNone);  // attention no_op
  EXPECT_NE(std::find(b.spec.assumptions.begin(), b.spec.assumptions.end(),
                      "block_configs has 81 entries: the model's 80 layers use the first 80 (as "
                      "DeciLM does), the rest are not costed"),
            b.spec.assumptions.end());
  // Fewer blocks than layers is an error naming the field.
  std::string json = Config("llama-3.3-nemotron-super-49b-v1.json");
  const size_t at = json.find("\"num_hidden_layers\": 80");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, 23, "\"num_hidden_layers\": 90");
  EXPECT_NE(ParseError(json).find("block_configs"), std::string::npos) << ParseError(json);
}

// ---- Latent MoE and layers_block_type -------------------------------------------------------

// Nemotron 3 Ultra (arXiv 2606.15007: 550B total, 55B active), layers_block_type and
// moe_latent_size 2048 (experts run 8192 -> 2048 -> 8192).
TEST(HfFamilies, NemotronUltraLatentMoe) {
  const Built b = Build("nemotron-ultra-rl-050826.json");
  ExpectParams(b, 550, 55);
  EXPECT_EQ(b.spec.moe.latent, 2048);
  EXPECT_EQ(b.spec.mtp.modules, 1);
  ASSERT_EQ(b.spec.mtp.blocks.size(), 2u);  // mtp_layers_block_type: attention, moe
}


// ---- Op semantics: closed forms of one decode step -------------------------------------------

// One decode step on the H100, and a node's cost by name (hf_family_test_util.h).
constexpr auto Decode = testing::DecodeStep;
constexpr auto NodeNamed = testing::CostOf;

// Chunked local attention (Llama-4, attention_chunk_size 8192): at context P the query at
// position P sees its own chunk, (P mod 8192) + 1 keys, and reads P mod 8192 cached rows; a
// NoPE layer sees all P + 1.
TEST(HfOpSemantics, ChunkedAttentionSeesItsChunk) {
  const Built b = Build("llama-4-scout-17b-16e-instruct");
  const int64_t p = 10000, chunk = 8192, heads = 40, d = 128, kv_row = 8 * 128 * 2;
  const llm::StepResult r = Decode(b.step, 1, p);
  const cost::NodeCost& chunked = NodeNamed(b.step, r, "layers.0.attn.attention");
  EXPECT_EQ(chunked.flops, uint64_t{2} * (p % chunk + 1) * heads * (d + d));
  EXPECT_EQ(chunked.bytes_state, uint64_t(p % chunk) * kv_row * 2 + 2 * kv_row);  // read + append
  const cost::NodeCost& global = NodeNamed(b.step, r, "layers.3.attn.attention");
  EXPECT_EQ(global.flops, uint64_t{2} * (p + 1) * heads * (d + d));
}

// DeepSeek Sparse Attention at a context past index_topk: the lightning indexer scores every
// cached key, 2·(P+1)·H_I·(d_I + 1) FLOPs; the MLA attention sees 2048 keys.
TEST(HfOpSemantics, SparseAttentionAndLightningIndexer) {
  const Built b = Build("deepseek-v3.2");
  const int64_t p = 8192;
  const llm::StepResult r = Decode(b.step, 1, p);
  const cost::NodeCost& indexer = NodeNamed(b.step, r, "layers.5.attn.indexer.score");
  EXPECT_EQ(indexer.flops, uint64_t{2} * (p + 1) * 64 * (128 + 1));
  // The index-key cache is read whole and one key appended: (P + 1) · 128 · 2 bytes.
  EXPECT_EQ(indexer.bytes_state, uint64_t(p + 1) * 128 * 2);
  // Absorbed MLA over 2048 selected keys: 2·2048·H·(kvr + rope + kvr) + the absorption
  // GEMMs 2·1·H·kvr·(nope + v).
  const cost::NodeCost& attention = NodeNamed(b.step, r, "layers.5.attn.attention");
  const uint64_t h = 128, kvr = 512, rope = 64, nope = 128, v = 128;
  EXPECT_EQ(attention.flops, 2 * 2048 * h * (kvr + rope + kvr) + 2 * h * kvr * (nope + v));
  // It reads the 2048 selected latent rows, not the whole cache.
  EXPECT_EQ(attention.bytes_state, uint64_t{2048} * (kvr + rope) * 2 + (kvr + rope) * 2);
}

// Latent MoE (Nemotron-3-Super-120B-A12B). The config is reconstructed from the published
// topology that NVIDIA's checkpoints fix (88 blocks: 40 Mamba2, 40 latent-MoE, 8 attention;
// hidden 4096; 512 experts, top 22, width 2688, latent 1024; shared 5376; Mamba2 128 heads of
// 64, state 128, 8 groups; 32 heads, 2 KV heads of 128; vocab 131072): the block order is not
// published here, and parameter counts do not depend on it.
std::string NemotronSuper(bool latent) {
  std::string pattern;
  for (int i = 0; i < 8; ++i) pattern += "MEMEMEMEME*";  // 40 M, 40 E, 8 *
  std::string json = R"({"model_type": "nemotron_h", "hidden_size": 4096,
    "hybrid_override_pattern": ")" + pattern + R"(", "num_hidden_layers": 88,
    "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
    "mamba_num_heads": 128, "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8,
    "conv_kernel": 4, "n_routed_experts": 512, "num_experts_per_tok": 22,
    "moe_intermediate_size": 2688, "moe_shared_expert_intermediate_size": 5376,
    "n_shared_experts": 1, "vocab_size": 131072, "torch_dtype": "bfloat16")";
  if (latent) json += R"(, "moe_latent_size": 1024)";
  return json + "}";
}

TEST(HfOpSemantics, LatentMoeSizesNemotron3Super) {
  auto spec = ParseHfConfig(NemotronSuper(true), "nemotron-3-super.json");
  ASSERT_TRUE(spec) << spec.error().message;
  auto recipe = ResolveRecipe(*spec, {});
  ASSERT_TRUE(recipe);
  auto step = BuildStepGraph(*spec, *recipe);
  ASSERT_TRUE(step) << step.error().message;
  auto f = llm::ComputeModelFigures(*step);
  ASSERT_TRUE(f);
  // NVIDIA's name: 120B total, 12B active.
  EXPECT_NEAR(Billions(f->params_total), 120, 0.08 * 120);
  EXPECT_NEAR(Billions(f->params_active), 12, 0.20 * 12);
  // Ignoring moe_latent_size gave the issue's 458.6 B / 27.0 B: experts at the full width.
  auto wide = ParseHfConfig(NemotronSuper(false), "nemotron-3-super.json");
  ASSERT_TRUE(wide);
  auto wide_step = BuildStepGraph(*wide, *ResolveRecipe(*wide, {}));
  ASSERT_TRUE(wide_step);
  auto g = llm::ComputeModelFigures(*wide_step);
  EXPECT_NEAR(Billions(g->params_total), 458.6, 0.1);
  // Per MoE layer the latent form holds 512 · 2 · 2688 · 1024 expert weights plus the two
  // projections 2 · 4096 · 1024, where the wide form holds 512 · 2 · 2688 · 4096.
  const uint64_t e = 512, i = 2688, h = 4096, l = 1024;
  EXPECT_EQ(g->params_total - f->params_total, 40 * (e * 2 * i * (h - l) - 2 * h * l));
}

// One decode step of Flash at context P = 10000: the HCA layer attends to all ceil(P/128)
// compressed entries, the CSA layer to index_topk = 512 of its ceil(P/4), and its indexer
// scores all ceil(P/4) pooled keys: 2·entries·H_I·(d_I + 1).
TEST(HfOpSemantics, DeepSeekV4CompressedAttention) {
  const Built b = Build("deepseek-v4-flash");
  const uint64_t p = 10000, H = 64, d = 512;
  const llm::StepResult r = Decode(b.step, 1, int64_t(p));
  const uint64_t hca_entries = (p + 127) / 128, csa_entries = p / 4;
  EXPECT_EQ(NodeNamed(b.step, r, "layers.3.attn.compressed_attention").flops,
            2 * hca_entries * H * (d + d));
  EXPECT_EQ(NodeNamed(b.step, r, "layers.2.attn.compressed_attention").flops, 2 * 512 * H * (d + d));
  EXPECT_EQ(NodeNamed(b.step, r, "layers.2.attn.compressor.indexer.score").flops,
            2 * csa_entries * 64 * (128 + 1));
  // The window: the 128 cached rows (query included) of one shared K = V head.
  EXPECT_EQ(NodeNamed(b.step, r, "layers.3.attn.window_attention").flops, 2 * 128 * H * (d + d));
  // The grouped o_a projection: 2 · 8 groups · 1024 · (64 · 512 / 8).
  EXPECT_EQ(NodeNamed(b.step, r, "layers.3.attn.o_a_proj").flops, 2u * 8 * 1024 * 4096);
}

// Kimi Delta Attention (kimi_linear). No Kimi-Linear config.json was found to copy, so this
// config is written here in its shape (SOURCES.md): 8 layers, linear_attn_config with 32 KDA
// heads of 128, full attention (MLA) at the 1-based layers 4 and 8. Per KDA layer and sequence
// the recurrent state is 32·128·128 and the conv state 3·4096·(4 − 1) values; one decode token
// updates the state in 4·H·d·d FLOPs (decay, the delta-rule rank-1 update, the read-out).
TEST(HfOpSemantics, KimiDeltaAttentionState) {
  const std::string json = R"({"model_type": "kimi_linear", "hidden_size": 2304,
    "num_hidden_layers": 8, "num_attention_heads": 32, "num_key_value_heads": 32,
    "kv_lora_rank": 512, "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "v_head_dim": 128, "mla_use_nope": true, "num_experts": 256, "num_experts_per_token": 8,
    "num_shared_experts": 1, "moe_intermediate_size": 1024, "intermediate_size": 9216,
    "first_k_dense_replace": 1, "vocab_size": 163840, "torch_dtype": "bfloat16",
    "linear_attn_config": {"num_heads": 32, "head_dim": 128, "short_conv_kernel_size": 4,
      "kda_layers": [1, 2, 3, 5, 6, 7], "full_attn_layers": [4, 8]}})";
  auto spec = ParseHfConfig(json, "kimi-linear.json");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->layers[0].mixer, Mixer::kKda);
  EXPECT_EQ(spec->layers[3].mixer, Mixer::kMla);
  auto step = BuildStepGraph(*spec, *ResolveRecipe(*spec, {}));
  ASSERT_TRUE(step) << step.error().message;
  auto f = llm::ComputeModelFigures(*step);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->state_bytes_per_seq, 6u * (32 * 128 * 128 + 3 * 4096 * 3) * 2);
  EXPECT_EQ(f->kv_bytes_per_token, 2u * (512 + 64) * 2);  // the two MLA layers' latent rows
  const llm::StepResult r = Decode(*step, 1, 4096);
  const cost::NodeCost& rule = NodeNamed(*step, r, "layers.0.kda.delta_rule");
  EXPECT_EQ(rule.flops, uint64_t{4} * 32 * 128 * 128);
  EXPECT_EQ(rule.bytes_state, uint64_t{2} * 32 * 128 * 128 * 2);  // read and written back
}

// Mamba (MambaConfig), in the shape of state-spaces/mamba-130m-hf (hidden 768, 24 layers,
// state 16, expand 2, conv 4, dt rank "auto" = 48, vocab 50280, tied); the config is written
// here. Per layer: in_proj 768·3072, conv1d 1536·4 + 1536, x_proj 1536·(48 + 2·16), dt_proj
// 48·1536 + 1536, A_log 1536·16, D 1536, out_proj 1536·768, norm 768.
TEST(HfFamilies, Mamba1ClosedForm) {
  const std::string json = R"({"model_type": "mamba", "hidden_size": 768,
    "num_hidden_layers": 24, "state_size": 16, "expand": 2, "conv_kernel": 4,
    "time_step_rank": "auto", "vocab_size": 50280, "torch_dtype": "float32"})";
  auto spec = ParseHfConfig(json, "mamba.json");
  ASSERT_TRUE(spec) << spec.error().message;
  auto step = BuildStepGraph(*spec, *ResolveRecipe(*spec, {}));
  ASSERT_TRUE(step) << step.error().message;
  auto f = llm::ComputeModelFigures(*step);
  ASSERT_TRUE(f);
  const uint64_t layer = 768 * 3072 + 1536 * 4 + 1536 + 1536 * 80 + 48 * 1536 + 1536 +
                         1536 * 16 + 1536 + 1536 * 768 + 768;
  EXPECT_EQ(f->params_total, 24 * layer + 50280 * 768 + 768);  // 129,135,360: mamba-130m's
  // State per sequence at fp32: the SSM state 1536·16 and the conv state 1536·3 per layer.
  EXPECT_EQ(f->state_bytes_per_seq, 24u * (1536 * 16 + 1536 * 3) * 4);
  EXPECT_EQ(f->kv_bytes_per_token, 0u);
}

// ---- Families added in wave 3 (fixtures in tests/fixtures/hf/, sources in SOURCES.md) ------

// Ling-plus (inclusionAI/Ling README: "Ling-Plus has 290 billion parameters with 28.8 billion
// activated parameters"), model_type bailing_moe: fused q/k/v without bias (use_qkv_bias),
// o_proj without bias (use_bias false), a bias-free softmax router, 64 experts of 3072, top 4,
// one shared expert as wide as a routed one, every layer MoE (first_k_dense_replace 0).
TEST(HfFamilies, LingPlusBailingMoe) {
  const Built b = Build("ling-plus.json");
  const uint64_t h = 5376, v = 126464, q = 42 * 128, kv = 6 * 128, e = 3072;
  const uint64_t attention = h * q + 2 * h * kv + q * h;          // q, k, v, o
  const uint64_t expert = 3 * h * e;                              // gate, up, down
  const uint64_t layer = attention + 64 * h + 64 * expert + expert + 2 * h;  // + router, shared, norms
  EXPECT_EQ(b.figures.params_total, 88 * layer + 2 * v * h + h);  // 290,602,910,976
  EXPECT_EQ(b.figures.params_active,
            88 * (attention + 64 * h + 4 * expert + expert + 2 * h) + 2 * v * h + h);
  ExpectParams(b, 290, 28.8);
  EXPECT_FALSE(b.spec.attn.qkv_bias);
  EXPECT_FALSE(b.spec.attn.o_bias);
  // KV per token: 88 layers · (K + V) · 6 heads · 128 · 2 bytes.
  EXPECT_EQ(b.figures.kv_bytes_per_token, 88u * 2 * 6 * 128 * 2);
  // One decode step at context P: the attention sees P + 1 keys, 2·(P+1)·42·(128 + 128) FLOPs;
  // the routed experts 2·T·top_k·k·out per projection (T = 1): gate+up 2·4·5376·6144.
  const int64_t p = 4096;
  const llm::StepResult r = Decode(b.step, 1, p);
  EXPECT_EQ(NodeNamed(b.step, r, "layers.7.attn.attention").flops,
            uint64_t{2} * (p + 1) * 42 * (128 + 128));
  EXPECT_EQ(NodeNamed(b.step, r, "layers.7.moe.experts.gate_up").flops, 2u * 4 * 5376 * 6144);
  // use_bias defaults to True in BailingMoeConfig: a config without it has an o_proj bias.
  std::string json = Config("ling-plus.json");
  const size_t at = json.find("\"use_bias\": false,");
  ASSERT_NE(at, std::string::npos);
  json.erase(at, 19);
  auto with_bias = ParseHfConfig(json, "ling-plus.json");
  ASSERT_TRUE(with_bias) << with_bias.error().message;
  EXPECT_TRUE(with_bias->attn.o_bias);
  EXPECT_FALSE(with_bias->attn.qkv_bias);
}

// Step-3.7-Flash (vLLM recipe and StepFun's release: "a 196B sparse language backbone", ~11B
// active). aiconfigurator's copy keeps only the sizing fields (SOURCES.md). Layers 0, 4, ..., 44
// are global, the other 33 slide over 512 tokens; layers 0-2 are dense (11264), the rest 288
// experts of 1280, top 8, plus one shared expert of 1280.
TEST(HfFamilies, Step37Flash) {
  const Built b = Build("step-3.7-flash.json");
  const uint64_t h = 4096, v = 128896, e = 3 * h * 1280;
  const uint64_t attention = h * 64 * 128 + 2 * h * 8 * 128 + 64 * 128 * h;
  const uint64_t dense = attention + 3 * h * 11264 + 2 * h;
  const uint64_t moe = attention + 288 * h + 288 + 288 * e + e + 2 * h;  // router, bias, experts
  EXPECT_EQ(b.figures.params_total, 3 * dense + 42 * moe + 2 * v * h + h);
  ExpectParams(b, 196, 11);
  EXPECT_EQ(b.spec.mtp.modules, 3);
  // Only the 12 global layers hold every token: 12 · (K + V) · 8 heads · 128 · 2 bytes.
  EXPECT_EQ(b.figures.kv_bytes_per_token, 12u * 2 * 8 * 128 * 2);
  ASSERT_EQ(b.spec.layers.size(), 45u);
  EXPECT_EQ(b.spec.layers[1].window, 512);
  EXPECT_EQ(b.spec.layers[4].window, 0);
  // One decode step at P = 4096: the window W = 512 caps the query at W keys, 2·W·64·(128 + 128)
  // FLOPs; a global layer sees P + 1 keys.
  const int64_t p = 4096;
  const llm::StepResult r = Decode(b.step, 1, p);
  EXPECT_EQ(NodeNamed(b.step, r, "layers.1.attn.attention").flops,
            uint64_t{2} * 512 * 64 * (128 + 128));
  EXPECT_EQ(NodeNamed(b.step, r, "layers.4.attn.attention").flops,
            uint64_t{2} * (p + 1) * 64 * (128 + 128));
}

// ---- Llama-shaped families against their cards (fixtures: tests/fixtures/hf/SOURCES.md) -----

// phi-4 (model_type phi3; microsoft/phi-4 card: "Architecture: 14B parameters, dense
// decoder-only Transformer model"; the Hub lists 14.7B). Per layer: q and o 5120·5120, k and v
// 5120·(10·128), gate/up/down 3·5120·17920, two RMSNorms; untied embedding and head.
TEST(HfFamilies, Phi4) {
  const Built b = Build("phi-4.json");
  const uint64_t h = 5120, v = 100352, kv = 10 * 128;
  const uint64_t layer = 2 * h * h + 2 * h * kv + 3 * h * 17920 + 2 * h;
  EXPECT_EQ(b.figures.params_total, 40 * layer + 2 * v * h + h);  // 14,659,507,200
  ExpectParams(b, 14, 14);
  // Phi3Config's sliding_window (16384, the trained context) bounds every layer's cache: at
  // 4096 tokens a sequence holds 40 · (K + V) · 10 heads · 128 · 2 bytes per token.
  EXPECT_EQ(b.spec.layers[0].window, 16384);
  EXPECT_EQ(llm::BytesPerSeq(b.step, b.figures, 4096), 4096u * 40 * 2 * kv * 2);
}

// EXAONE-4.0-1.2B (exaone4; the transformers EXAONE 4 docs: "a small-size 1.2B model designed
// for on-device applications"), from a public W4A16 re-save of it whose architecture fields are
// the release's: 30 layers, 32 query / 8 KV heads of 64, per-head q/k RMSNorms, norms after
// attention and MLP (QK-Reorder-Norm), tied embedding. Its compressed-tensors group holds every
// Linear but lm_head at int4 in groups of 128.
TEST(HfFamilies, Exaone4) {
  const Built b = Build("exaone-4.0-1.2b-w4a16.json");
  const uint64_t h = 2048, v = 102400, q = 32 * 64, kv = 8 * 64;
  const uint64_t layer = 2 * h * q + 2 * h * kv + 3 * h * 4096 + 2 * 64 + 2 * h;
  EXPECT_EQ(b.figures.params_total, 30 * layer + v * h + h);  // 1,279,391,488
  ExpectParams(b, 1.2, 1.2);
  // layer_types (30 × full_attention) decides; the null sliding_window_pattern beside it is
  // read, not an unread-field error. With no sliding window every layer keeps RoPE.
  EXPECT_EQ(b.figures.kv_bytes_per_token, 30u * 2 * kv * 2);
  for (const LayerSpec& l : b.spec.layers) EXPECT_TRUE(l.rope && l.window == 0);
}

// EXAONE-4's hybrid form (the 32B's sliding_window 4096, three sliding layers to one global):
// Exaone4Attention rotates q and k only when sliding_window is None or the layer slides, so the
// global layers are NoPE. The release config with its layer_types, cut to 8 layers here.
TEST(HfFamilies, Exaone4HybridGlobalLayersHaveNoRope) {
  std::string json = Config("exaone-4.0-1.2b-w4a16.json");
  const size_t from = json.find("\"layer_types\"");
  const size_t to = json.find("],", from) + 2;
  ASSERT_NE(from, std::string::npos);
  std::string types = "\"layer_types\": [";
  for (int i = 0; i < 8; ++i) {
    types += std::string(i ? ", " : "") + ((i + 1) % 4 ? "\"sliding_attention\"" : "\"full_attention\"");
  }
  json.replace(from, to - from, types + "],");
  for (auto [key, value] : {std::pair{"\"num_hidden_layers\": 30", "\"num_hidden_layers\": 8"},
                            std::pair{"\"sliding_window\": null", "\"sliding_window\": 4096"}}) {
    const size_t at = json.find(key);
    ASSERT_NE(at, std::string::npos) << key;
    json.replace(at, std::string_view(key).size(), value);
  }
  auto spec = ParseHfConfig(json, "exaone4-hybrid.json");
  ASSERT_TRUE(spec) << spec.error().message;
  for (int64_t i = 0; i < 8; ++i) {
    const bool global = (i + 1) % 4 == 0;
    EXPECT_EQ(spec->layers[i].window, global ? 0 : 4096) << i;
    EXPECT_EQ(spec->layers[i].rope, !global) << i;
  }
  // A sliding_window_pattern that contradicts layer_types is listed; layer_types decides.
  const size_t at = json.find("\"sliding_window_pattern\": null");
  json.replace(at, 30, "\"sliding_window_pattern\": 2");
  auto listed = ParseHfConfig(json, "exaone4-hybrid.json");
  ASSERT_TRUE(listed) << listed.error().message;
  EXPECT_NE(std::find(listed->assumptions.begin(), listed->assumptions.end(),
                      "sliding_window_pattern 2 disagrees with layer_types at layer 1; "
                      "layer_types is used (as the configuration class does)"),
            listed->assumptions.end());
}

// ---- Gemma 4 (fixtures from ai-dynamo/aiconfigurator's copies, SOURCES.md) ------------------

// Gemma-4 26B A4B (Gemma 4 model card: "26B A4B: 25.2B total, 3.8B active"). 30 layers of
// hidden 2816: 25 sliding (16 query / 8 KV heads of 256, window 1024) and 5 global (16 query
// heads of 512, attention_k_eq_v: 2 KV heads of 512 whose keys double as values, no v_proj).
// Every layer runs the dense GeGLU MLP (2112) beside 128 routed experts of 704, top 8; the
// router has a scale [hidden] and a per-expert scale [128]; seven norms per layer (input, post
// attention, pre / post FFN, post FFN 1, pre / post FFN 2), per-head q and k norms.
TEST(HfFamilies, Gemma4MoeA4b) {
  const Built b = Build("gemma-4-26b-a4b.json");
  const uint64_t h = 2816, v = 262144, e = 128, expert = 3 * h * 704;
  const uint64_t sliding = 2 * h * 16 * 256 + 2 * h * 8 * 256 + 2 * 256;  // q, o, k, v, norms
  const uint64_t global = 2 * h * 16 * 512 + h * 2 * 512 + 2 * 512;       // q, o, k, norms
  const uint64_t ffn = 3 * h * 2112 + e * h + h + e + 7 * h;  // MLP, router, scales, norms
  EXPECT_EQ(ParamsUnder(b.step, "layers.0."), sliding + ffn + e * expert);
  EXPECT_EQ(ParamsUnder(b.step, "layers.5."), global + ffn + e * expert);
  EXPECT_EQ(b.figures.params_total, 25 * sliding + 5 * global + 30 * (ffn + e * expert) + v * h + h);
  EXPECT_EQ(b.figures.params_active, 25 * sliding + 5 * global + 30 * (ffn + 8 * expert) + v * h + h);
  ExpectParams(b, 25.2, 3.8);
  EXPECT_NEAR(Billions(b.figures.params_active), 3.8, 0.05);  // the card's active count, closely
  // Only the 5 global layers hold every token: K and V (both cached, as Gemma4TextAttention
  // does) of 2 heads of 512 at 2 bytes. A sliding layer keeps 1024 tokens of 8 heads of 256.
  EXPECT_EQ(b.figures.kv_bytes_per_token, 5u * 2 * 2 * 512 * 2);
  EXPECT_EQ(llm::BytesPerSeq(b.step, b.figures, 4096),
            4096u * 5 * 2 * 2 * 512 * 2 + 1024u * 25 * 2 * 8 * 256 * 2);
  // One decode step at P = 4096: a global layer sees P + 1 keys of 512, a sliding one W = 1024
  // keys of 256; the experts run 2 · top_k · hidden · 2·704 FLOPs in gate_up.
  const int64_t p = 4096;
  const llm::StepResult r = Decode(b.step, 1, p);
  EXPECT_EQ(NodeNamed(b.step, r, "layers.5.attn.attention").flops,
            uint64_t{2} * (p + 1) * 16 * (512 + 512));
  EXPECT_EQ(NodeNamed(b.step, r, "layers.0.attn.attention").flops,
            uint64_t{2} * 1024 * 16 * (256 + 256));
  EXPECT_EQ(NodeNamed(b.step, r, "layers.0.moe.experts.gate_up").flops, 2u * 8 * h * 2 * 704);
  // No tower is listed for "audio_config": null.
  EXPECT_EQ(std::find(b.spec.assumptions.begin(), b.spec.assumptions.end(),
                      "the audio tower (audio_config) is not costed and not in params_total"),
            b.spec.assumptions.end());
}

// Gemma-4 31B (card: "31B: 30.7B", dense) as NVIDIA's NVFP4 checkpoint (ModelOpt): 50 sliding
// layers (32 query / 16 KV heads of 256) and 10 global (32 query heads of 512, 4 K = V heads of
// 512), GeGLU 21504. The quantization keeps attention, embedding and lm_head in bf16 (its
// ignore list) and stores every MLP matrix as NVFP4: 4 bits per weight plus one e4m3 scale per
// 16; the KV cache is fp8 (kv_cache_scheme).
TEST(HfFamilies, Gemma4Dense31bNvfp4) {
  const Built b = Build("gemma-4-31b-it-nvfp4.json");
  const uint64_t h = 5376, v = 262144;
  const uint64_t sliding = 2 * h * 32 * 256 + 2 * h * 16 * 256 + 2 * 256;
  const uint64_t global = 2 * h * 32 * 512 + h * 4 * 512 + 2 * 512;
  const uint64_t mlp = 3 * h * 21504;
  const uint64_t total = 50 * sliding + 10 * global + 60 * (mlp + 4 * h) + v * h + h;
  EXPECT_EQ(b.figures.params_total, total);  // 30,697,345,280
  ExpectParams(b, 30.7, 30.7);
  EXPECT_NEAR(Billions(b.figures.params_total), 30.7, 0.05);
  // + one fp32 per-tensor scale per NVFP4 matrix as the step graph holds them (gate and up
  // fused: two per layer).
  EXPECT_EQ(b.figures.weight_bytes,
            60 * mlp / 2 + 60 * mlp / 16 + (total - 60 * mlp) * 2 + 60 * 2 * 4);
  EXPECT_EQ(b.figures.kv_bytes_per_token, 10u * 2 * 4 * 512 * 1);
}

// Gemma-4 E2B (transformers' convert_gemma4_weights.py variant: 35 layers of 1536, 8 heads of
// 256 with 1 KV head on the sliding layers, 512 on every fifth (full) layer, MLP 6144; the last
// 20 layers share KV and their MLP is double wide; per-layer embeddings of 256 from a 262,144-row
// table), in closed form: per layer q / o (and k / v with their q/k norms only where the layer
// owns its KV), four norms, the MLP, the per-layer input gate [1536 -> 256], projection
// [256 -> 1536] and norm; the tied embedding, the per-layer table [262144, 35 · 256], the
// projection [1536 -> 35 · 256] and its 256-wide norm, the final norm. The KV cache holds the
// 15 owning layers only (3 full, 12 sliding), and the per-layer table is an embedding.
TEST(HfFamilies, Gemma4E2bPerLayerEmbeddingsAndSharedKv) {
  std::string layer_types;
  for (int i = 0; i < 35; ++i) {
    layer_types += std::string(i ? ", " : "") +
                   ((i + 1) % 5 == 0 ? "\"full_attention\"" : "\"sliding_attention\"");
  }
  const std::string config = R"({"model_type": "gemma4_text", "hidden_size": 1536,
      "intermediate_size": 6144, "num_hidden_layers": 35, "num_attention_heads": 8,
      "num_key_value_heads": 1, "num_global_key_value_heads": null, "head_dim": 256,
      "global_head_dim": 512, "num_kv_shared_layers": 20, "hidden_size_per_layer_input": 256,
      "vocab_size_per_layer_input": 262144, "use_double_wide_mlp": true,
      "attention_k_eq_v": false, "enable_moe_block": false, "tie_word_embeddings": true,
      "sliding_window": 512, "vocab_size": 262144, "hidden_activation": "gelu_pytorch_tanh",
      "dtype": "bfloat16", "layer_types": [)" + layer_types + "]}";
  const Built b = testing::BuildJson(config, "gemma-4-e2b");
  const uint64_t h = 1536, v = 262144, p = 256, layers = 35;
  uint64_t total = v * h + v * layers * p + h * layers * p + p + h;
  uint64_t kv_per_token = 0;
  for (uint64_t i = 0; i < layers; ++i) {
    const bool full = (i + 1) % 5 == 0, shared = i >= 15;
    const uint64_t d = full ? 512 : 256;
    total += 2 * h * 8 * d + 4 * h + 3 * h * (shared ? 12288 : 6144) + 2 * h * p + h;
    total += d;  // q_norm
    if (!shared) {
      total += 2 * h * 1 * d + d;  // k_proj, v_proj, k_norm
      if (full) kv_per_token += 2 * 1 * d * 2;
    }
  }
  EXPECT_EQ(b.figures.params_total, total);
  EXPECT_EQ(b.figures.params_embedding, v * h + v * layers * p);
  EXPECT_EQ(b.figures.kv_bytes_per_token, kv_per_token);  // the 3 full layers that own KV
  EXPECT_EQ(kv_per_token, 3u * 2 * 512 * 2);
}

// A config without layer_types is refused, and so is one whose sliding layers have no window.
TEST(HfFamilies, Gemma4RefusesWhatItDoesNotModel) {
  const std::string json = Config("gemma-4-26b-a4b.json");
  auto with = [&](std::string_view from, std::string_view to) {
    std::string j = json;
    const size_t at = j.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? j : j.replace(at, from.size(), to);
  };
  EXPECT_EQ(ParseError(with("\"num_kv_shared_layers\": 0", "\"num_kv_shared_layers\": 30")),
            "config.json: field 'text_config.num_kv_shared_layers': 30 is not below "
            "num_hidden_layers 30 (the shared layers read an earlier layer's KV)");
  // No default window: sliding layers need sliding_window.
  EXPECT_EQ(ParseError(with("\"sliding_window\": 1024,", "")),
            "config.json: field 'text_config.layer_types': layer 0 is sliding_attention but "
            "sliding_window is null");
  EXPECT_EQ(ParseError(with("\"layer_types\"", "\"layer_kinds\"")),
            "config.json: field 'text_config.layer_types': is required for a Gemma-4 config (it "
            "says which layers are global, and the global layers have their own head size)");
}

// ---- MiMo-V2-Flash (fixture from xiaowanCN/aiconfigurator's copy, SOURCES.md) -------------

// MiMo-V2-Flash (MiMo-V2-Flash Technical Report, arXiv 2601.02780, and the XiaomiMiMo/
// MiMo-V2-Flash card: "309B total parameters and 15B active parameters"). 48 layers of hidden
// 4096, 9 full-attention (64 query / 4 KV heads; q and k of 192, v of 128) and 39 sliding
// (window 128, 64 query / 8 KV heads, same widths, one sink logit per head); o_proj reads
// 64·128. Layer 0 runs a dense SwiGLU MLP of 16384, the other 47 route 8 of 256 experts of 2048
// (sigmoid router with its correction bias, no shared expert). Untied embedding and head.
TEST(HfFamilies, MimoV2Flash) {
  const Built b = Build("mimo-v2-flash.json");
  const uint64_t h = 4096, v = 152576, expert = 3 * h * 2048;
  const uint64_t full = h * 64 * 192 + h * 4 * 192 + h * 4 * 128 + 64 * 128 * h;
  const uint64_t sliding = h * 64 * 192 + h * 8 * 192 + h * 8 * 128 + 64 * 128 * h + 64;
  const uint64_t router = 256 * h + 256;  // weight and e_score_correction_bias
  EXPECT_EQ(ParamsUnder(b.step, "layers.0."), full + 3 * h * 16384 + 2 * h);
  EXPECT_EQ(ParamsUnder(b.step, "layers.1."), sliding + router + 256 * expert + 2 * h);
  const uint64_t shared = 9 * full + 39 * sliding + 3 * h * 16384 + 48 * 2 * h + 2 * v * h + h;
  EXPECT_EQ(b.figures.params_total, shared + 47 * (router + 256 * expert));  // 308,778,780,864
  EXPECT_EQ(b.figures.params_active, shared + 47 * (router + 8 * expert));   // 15,445,936,320
  ExpectParams(b, 309, 15);
  EXPECT_NEAR(Billions(b.figures.params_total), 309, 0.5);  // the card's total, closely
  // Only the 9 full layers hold every token: K of 4·192 and V of 4·128 at 2 bytes. A sliding
  // layer keeps 128 tokens of 8 heads (K 192, V 128).
  EXPECT_EQ(b.figures.kv_bytes_per_token, 9u * (4 * 192 + 4 * 128) * 2);  // 23,040
  EXPECT_EQ(llm::BytesPerSeq(b.step, b.figures, 4096),
            4096u * 9 * (4 * 192 + 4 * 128) * 2 + 128u * 39 * (8 * 192 + 8 * 128) * 2);
  // One decode step at P = 4096: QKᵀ at d = 192, PV at d_v = 128, over P + 1 keys in a full
  // layer and W = 128 keys in a sliding one.
  const int64_t p = 4096;
  const llm::StepResult r = Decode(b.step, 1, p);
  EXPECT_EQ(NodeNamed(b.step, r, "layers.0.attn.attention").flops,
            uint64_t{2} * (p + 1) * 64 * (192 + 128));
  EXPECT_EQ(NodeNamed(b.step, r, "layers.1.attn.attention").flops,
            uint64_t{2} * 128 * 64 * (192 + 128));
  EXPECT_EQ(NodeNamed(b.step, r, "layers.1.attn.o_proj").flops, uint64_t{2} * 64 * 128 * h);
  // Every field is read: the only line about a config field is attention_chunk_size's, which
  // the modelling code does not use.
  for (const std::string& line : b.spec.assumptions) {
    EXPECT_EQ(line.find("config field"), std::string::npos) << line;
  }
  EXPECT_NE(std::find(b.spec.assumptions.begin(), b.spec.assumptions.end(),
                      "attention_chunk_size 128 is not used by MiMo-V2-Flash's modelling code "
                      "(its sliding layers use sliding_window); not costed as chunked attention"),
            b.spec.assumptions.end());
  EXPECT_EQ(FindRefusedFamily("mimo_v2_flash"), nullptr);
}

// A MiMo-V2-Flash config whose per-layer lists are wrong is refused naming the field.
TEST(HfFamilies, MimoV2FlashBadLayerLists) {
  const std::string json = Config("mimo-v2-flash.json");
  auto with = [&](std::string_view from, std::string_view to) {
    std::string j = json;
    const size_t at = j.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? j : j.replace(at, from.size(), to);
  };
  EXPECT_EQ(ParseError(with("\"hybrid_layer_pattern\": [\n    0, 1,", "\"hybrid_layer_pattern\": [\n    0, 2,")),
            "config.json: field 'hybrid_layer_pattern': item 1 is 2 (expected 0: full attention, "
            "or 1: sliding window)");
  EXPECT_EQ(ParseError(with("\"moe_layer_freq\": [\n    0, 1,", "\"moe_layer_freq\": [\n    0,")),
            "config.json: field 'moe_layer_freq': has 47 entries, num_hidden_layers is 48");
  EXPECT_EQ(ParseError(with("\"swa_num_key_value_heads\": 8", "\"swa_num_key_value_heads\": 7")),
            "config.json: field 'swa_num_key_value_heads': 7 does not divide "
            "swa_num_attention_heads 64");
}

// Model types known to be refused say why (families.h kRefusedFamilies), naming the field.
// ---- MiniMax-M3 (fixture from xiaowanCN/aiconfigurator's copy, SOURCES.md) ----------------

// MiniMax-M3 (MiniMaxAI/MiniMax-M3 card: "~428B parameters and ~23B activated parameters",
// 128 experts, 4 active, 60 layers). Hidden 6144; GQA of 64 query / 4 KV heads of 128 with
// per-head q/k norms; layers 0-2 full attention with a dense SwiGLU of 12288, layers 3-59
// MiniMax Sparse Attention (an index query of 4 heads of 128 and one 128-wide index key per
// token from the hidden state, each with a per-head norm) and MoE: 128 experts of 3072 (top 4)
// beside a shared expert of 3072, sigmoid router with its correction bias. Untied embedding
// and head of 200064. One MTP module (num_nextn_predict_layers) of a sparse MoE layer.
TEST(HfFamilies, MiniMaxM3) {
  const Built b = Build("minimax-m3.json");
  const uint64_t h = 6144, v = 200064, expert = 3 * h * 3072;
  const uint64_t attention = h * 64 * 128 + 2 * h * 4 * 128 + 64 * 128 * h + 2 * 128;
  const uint64_t indexer = h * 4 * 128 + h * 128 + 2 * 128;  // q, k projections and norms
  const uint64_t router = 128 * h + 128;                      // weight, e_score_correction_bias
  const uint64_t dense = 3 * h * 12288, shared = expert;
  EXPECT_EQ(ParamsUnder(b.step, "layers.0."), attention + dense + 2 * h);
  EXPECT_EQ(ParamsUnder(b.step, "layers.3."),
            attention + indexer + router + 128 * expert + shared + 2 * h);
  const uint64_t always = 2 * v * h + h + 60 * (attention + 2 * h) + 3 * dense +
                          57 * (indexer + router + shared);
  EXPECT_EQ(b.figures.params_total, always + 57 * 128 * expert);  // 426,174,572,928
  EXPECT_EQ(b.figures.params_active, always + 57 * 4 * expert);   // 25,962,473,856
  ExpectParams(b, 428, 23);
  // The card's ~23B leaves out the embedding and the head (200064 · 6144 each): 23.50 B.
  EXPECT_NEAR(Billions(b.figures.params_active - 2 * b.figures.params_embedding), 23, 0.03 * 23);
  // The MTP module: eh_proj, enorm, hnorm, final norm and a sparse MoE layer.
  EXPECT_EQ(b.spec.mtp.modules, 1);
  EXPECT_EQ(b.step.params_mtp, 2 * h * h + 3 * h + attention + indexer + router + 128 * expert +
                                   shared + 2 * h);
  // Per token: K and V of 4 heads of 128 in every layer, and the 128-wide index key in the 57
  // sparse layers, at 2 bytes.
  EXPECT_EQ(b.figures.kv_bytes_per_token, 60u * 2 * 4 * 128 * 2 + 57u * 128 * 2);  // 137,472
  for (int64_t i = 0; i < 60; ++i) EXPECT_EQ(b.spec.layers[i].sparse, i >= 3) << i;
  EXPECT_EQ(b.spec.indexer.heads, 4);
  EXPECT_EQ(b.spec.indexer.topk, 16);
  EXPECT_EQ(b.spec.indexer.block, 128);
  // Every field is read; the one line about the MTP counts says which is costed.
  for (const std::string& line : b.spec.assumptions) {
    EXPECT_EQ(line.find("config field"), std::string::npos) << line;
  }
  EXPECT_NE(std::find(b.spec.assumptions.begin(), b.spec.assumptions.end(),
                      "num_mtp_modules 7 differs from num_nextn_predict_layers 1: the engines "
                      "build num_nextn_predict_layers MTP modules, so 1 is in params_mtp"),
            b.spec.assumptions.end());
  EXPECT_EQ(FindRefusedFamily("minimax_m3"), nullptr);
  EXPECT_EQ(FindRefusedFamily("minimax_m3_vl"), nullptr);
}

// One decode step of MiniMax-M3 at context P. A sparse layer's indexer scores all P + 1 index
// keys with 4 heads of 128: 2·(P+1)·4·128 FLOPs, reading the whole index-key cache. Its
// attention sees min(P + 1, 16 · 128) keys: at P = 1024 (9 blocks, fewer than 16) every key,
// at P = 8192 (65 blocks) the 2048 of the 16 chosen blocks, reading 2048 cached rows of K and V.
// A full layer (layer 0) sees all P + 1 at either context.
TEST(HfOpSemantics, MiniMaxSparseAttentionSelectsBlocks) {
  const Built b = Build("minimax-m3.json");
  const uint64_t heads = 64, d = 128, kv_row = 4 * 128 * 2;  // K (or V) bytes of one token
  for (const int64_t p : {int64_t{1024}, int64_t{8192}}) {
    const llm::StepResult r = Decode(b.step, 1, p);
    const uint64_t keys = std::min<uint64_t>(p + 1, 16 * 128);
    const uint64_t rows = std::min<uint64_t>(p, 16 * 128);
    const cost::NodeCost& indexer = NodeNamed(b.step, r, "layers.3.attn.indexer.score");
    EXPECT_EQ(indexer.flops, uint64_t{2} * (p + 1) * 4 * 128) << p;
    EXPECT_EQ(indexer.bytes_state, uint64_t(p + 1) * 128 * 2) << p;  // read whole + one appended
    const cost::NodeCost& sparse = NodeNamed(b.step, r, "layers.3.attn.attention");
    EXPECT_EQ(sparse.flops, 2 * keys * heads * (d + d)) << p;
    EXPECT_EQ(sparse.bytes_state, 2 * rows * kv_row + 2 * kv_row) << p;  // K, V rows + append
    const cost::NodeCost& full = NodeNamed(b.step, r, "layers.0.attn.attention");
    EXPECT_EQ(full.flops, uint64_t{2} * (p + 1) * heads * (d + d)) << p;
    EXPECT_EQ(full.bytes_state, 2 * uint64_t(p) * kv_row + 2 * kv_row) << p;
  }
}

// The release's layout (minimax_m3_vl): the same fields under a text_config without a
// model_type, beside the vision tower and the multimodal projector, which are not costed.
std::string MiniMaxM3Vl(std::string_view extra = "") {
  std::string text = Config("minimax-m3.json");
  for (std::string_view field : {"\"model_type\": \"minimax_m3\",\n",
                                 "\"first_k_dense_replace\": 3,\n",
                                 "\"moe_intermediate_size\": 3072,\n"}) {
    const size_t at = text.find(field);
    EXPECT_NE(at, std::string::npos) << field;
    if (at != std::string::npos) text.erase(at, field.size());
  }
  return R"({"architectures": ["MiniMaxM3SparseForConditionalGeneration"],
    "model_type": "minimax_m3_vl", "text_config": )" + text + R"(,
    "vision_config": {"hidden_size": 1280, "num_hidden_layers": 32, "patch_size": 14},
    "img_token_compression_config": {"spatial_merge_size": 2, "temporal_patch_size": 2},
    "image_token_index": 200025, "video_token_index": 200026, "num_reward_heads": 0,
    "projector_hidden_act": "gelu", "projector_hidden_size": 6144,
    "multimodal_projector_bias": true, "vision_feature_layer": -1, "torch_dtype": "bfloat16")" +
         std::string(extra) + "}";
}

TEST(HfFamilies, MiniMaxM3VlNestsTheTextModel) {
  const Built text = Build("minimax-m3.json");
  auto spec = ParseHfConfig(MiniMaxM3Vl(), "config.json");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->model_type, "minimax_m3_vl");
  auto step = BuildStepGraph(*spec, *ResolveRecipe(*spec, {}));
  ASSERT_TRUE(step) << step.error().message;
  auto f = llm::ComputeModelFigures(*step);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->params_total, text.figures.params_total);  // the vision tower is not in it
  EXPECT_EQ(f->kv_bytes_per_token, text.figures.kv_bytes_per_token);
  const auto has = [&](std::string_view line) {
    return std::find(spec->assumptions.begin(), spec->assumptions.end(), line) !=
           spec->assumptions.end();
  };
  EXPECT_TRUE(has("the vision tower (vision_config) is not costed and not in params_total"));
  EXPECT_TRUE(has("the multimodal projector and patch-merge MLP (projector_hidden_size, "
                  "img_token_compression_config) are not costed and not in params_total"));
  for (const std::string& line : spec->assumptions) {
    EXPECT_EQ(line.find("config field"), std::string::npos) << line;
  }
  EXPECT_EQ(ParseError(MiniMaxM3Vl(R"(, "num_reward_heads": 1)")),
            "config.json: field 'num_reward_heads': 1: reward heads are not modelled");
}

// What MiniMax-M3's reader does not model is refused naming the field.
TEST(HfFamilies, MiniMaxM3RefusesWhatItDoesNotModel) {
  const std::string json = Config("minimax-m3.json");
  auto with = [&](std::string_view from, std::string_view to) {
    std::string j = json;
    const size_t at = j.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? j : j.replace(at, from.size(), to);
  };
  EXPECT_EQ(ParseError(with("\"sparse_num_index_heads\": 4", "\"sparse_num_index_heads\": 8")),
            "config.json: field 'sparse_attention_config.sparse_num_index_heads': 8 differs from "
            "num_key_value_heads 4 (MiniMax Sparse Attention has one index head per KV head)");
  EXPECT_EQ(ParseError(with("\"sparse_score_type\": \"max\"", "\"sparse_score_type\": \"mean\"")),
            "config.json: field 'sparse_attention_config.sparse_score_type': \"mean\" is not "
            "modelled (expected max)");
  EXPECT_EQ(ParseError(with("\"sparse_disable_index_value\": [\n      0,\n      0,\n      0,\n      1",
                            "\"sparse_disable_index_value\": [\n      0,\n      0,\n      0,\n      0")),
            "config.json: field 'sparse_attention_config.sparse_disable_index_value': layer 3 is "
            "sparse but its index value projection is not disabled (1); an index value is not "
            "modelled");
  EXPECT_EQ(ParseError(with("\"first_k_dense_replace\": 3", "\"first_k_dense_replace\": 2")),
            "config.json: field 'first_k_dense_replace': 2 disagrees with moe_layer_freq");
  EXPECT_EQ(ParseError(with("\"moe_intermediate_size\": 3072", "\"moe_intermediate_size\": 1536")),
            "config.json: field 'moe_intermediate_size': 1536 disagrees with intermediate_size "
            "3072 (the routed experts' width)");
  // A field of sparse_attention_config that sizes something and is not read.
  EXPECT_EQ(ParseError(with("\"sparse_score_type\"", "\"sparse_value_dim\": 64, \"sparse_score_type\"")),
            "config.json: field 'sparse_attention_config.sparse_value_dim': not read by the "
            "reader for model_type 'minimax_m3', and its name says it changes the model's shapes "
            "(a size, count, pattern or switch); opscope does not cost a model it would get wrong");
}

TEST(HfFamilies, RefusedTypesSayWhy) {
  for (const RefusedFamily& f : kRefusedFamilies) {
    const std::string json = R"({"model_type": ")" + std::string(f.model_type) + R"("})";
    EXPECT_EQ(ParseError(json), "config.json: field 'model_type': \"" + std::string(f.model_type) +
                                    "\" is not read: " + std::string(f.why));
    EXPECT_EQ(FindFamily(f.model_type), nullptr) << f.model_type;
  }
}

}  // namespace
}  // namespace opscope::import::hf
