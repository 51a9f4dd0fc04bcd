// A checkpoint saved in float32, as serving engines load it (llm::ServeFloat32): vLLM serves it
// in bf16, SGLang in fp16 (Gemma in bf16), llama.cpp's converter writes bf16, and TensorRT-LLM's
// PyTorch flow and the roofline keep float32 (each engine's profile, defaults.float32_dtype).
// The weights a device holds are then the parameters at the served format's bytes, exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "format/format.h"
#include "llm/model.h"
#include "llm/predicted.h"
#include "llm/serving.h"
#include "sweep/sweep.h"

namespace opscope::llm {
namespace {

namespace fs = std::filesystem;

// A small float32 config of `model_type` in a file of its own.
class Float32Config {
 public:
  explicit Float32Config(const std::string& model_type) {
    path_ = fs::temp_directory_path() /
            ("opscope_fp32_" + model_type + "_" + std::to_string(::getpid()) + ".json");
    std::ofstream(path_) << R"({"model_type": ")" << model_type
                         << R"(", "hidden_size": 512, "num_hidden_layers": 2,
        "num_attention_heads": 8, "num_key_value_heads": 8, "head_dim": 64,
        "intermediate_size": 1024, "vocab_size": 1000, "torch_dtype": "float32"})";
  }
  ~Float32Config() { fs::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

Request OneRequest(const std::string& model) {
  Request r;
  r.model = model;
  r.device = "h100-sxm";
  r.workload.batch = 1;
  r.workload.context = 64;
  r.workload.prompt = 64;
  r.workload.gen_len = 8;
  return r;
}

struct Served {
  format::Format dtype;
  uint64_t weight_bytes = 0, params = 0;
  bool noted = false;  // the cast is in the assumptions
};

Served Predict(const std::string& model, const std::string& engine) {
  PredictOptions options;
  options.engine = engine;
  auto run = RunLlmPredicted(OneRequest(model), options);
  EXPECT_TRUE(run.has_value()) << engine << ": " << (run ? "" : run.error().message);
  if (!run) return {};
  const ModelBuild& b = run->run.serving.build();
  const auto& notes = b.whole->graph.assumptions;
  return {b.model.spec.dtype, b.figures.weight_bytes, b.figures.params_total,
          std::any_of(notes.begin(), notes.end(), [](const std::string& a) {
            return a.starts_with("model saved in float32, served in ");
          })};
}

TEST(Float32Load, EachEngineServesAFloat32CheckpointInItsDtype) {
  const Float32Config llama("llama");
  struct Case {
    const char* engine;
    format::Format dtype;
    uint64_t bytes_per_param;
  };
  for (const Case& c : {Case{"vllm", format::Format::kBf16, 2},
                        Case{"sglang", format::Format::kF16, 2},
                        Case{"llama.cpp", format::Format::kBf16, 2},
                        Case{"trtllm", format::Format::kF32, 4},
                        Case{"roofline", format::Format::kF32, 4}}) {
    const Served s = Predict(llama.path(), c.engine);
    EXPECT_EQ(s.dtype, c.dtype) << c.engine;
    EXPECT_GT(s.params, 0u);
    EXPECT_EQ(s.weight_bytes, s.params * c.bytes_per_param) << c.engine;
    EXPECT_EQ(s.noted, c.bytes_per_param == 2) << c.engine;
  }
}

// SGLang's exception: a model_type starting with "gemma" loads in bf16, not fp16.
TEST(Float32Load, SglangServesGemmaInBf16) {
  const Float32Config gemma("gemma3_text");
  EXPECT_EQ(Predict(gemma.path(), "sglang").dtype, format::Format::kBf16);
  EXPECT_EQ(Predict(gemma.path(), "vllm").dtype, format::Format::kBf16);
}

// A checkpoint in 16 bits is loaded as saved: nothing cast, nothing noted.
TEST(Float32Load, A16BitCheckpointIsLoadedAsSaved) {
  const Served s = Predict("llama-3.1-8b", "vllm");
  EXPECT_EQ(s.dtype, format::Format::kBf16);
  EXPECT_FALSE(s.noted);
  EXPECT_EQ(s.weight_bytes, s.params * 2);
}

// The files' float32 weights load as the served format: their stored format becomes it and
// their bytes are the served format's (StoredWeightBytes), while a weight stored in another
// format keeps its format and bytes.
TEST(Float32Load, StoredFloat32WeightsLoadInTheServedFormat) {
  const Float32Config llama("llama");
  auto model = OpenModel(llama.path());
  ASSERT_TRUE(model.has_value()) << model.error().message;
  auto stored = std::make_shared<import::hf::StoredWeights>();
  stored->source = "model.safetensors";
  stored->formats = {{"layers.0.attn.o_proj.weight", format::Format::kF32},
                     {"layers.1.attn.o_proj.weight", format::Format::kBf16}};
  stored->bytes = {{"layers.0.attn.o_proj.weight", 512ull * 512 * 4},
                   {"layers.1.attn.o_proj.weight", 512ull * 512 * 2 + 6}};
  model->spec.stored = stored;
  Float32Load load;
  load.engine = "vllm";
  ASSERT_TRUE(ServeFloat32(*model, load));
  const import::hf::StoredWeights& now = *model->spec.stored;
  EXPECT_EQ(now.formats.at("layers.0.attn.o_proj.weight"), format::Format::kBf16);
  EXPECT_FALSE(now.bytes.contains("layers.0.attn.o_proj.weight"));
  EXPECT_EQ(now.formats.at("layers.1.attn.o_proj.weight"), format::Format::kBf16);
  EXPECT_EQ(now.bytes.at("layers.1.attn.o_proj.weight"), 512ull * 512 * 2 + 6);
  EXPECT_EQ(stored->formats.at("layers.0.attn.o_proj.weight"), format::Format::kF32);  // a copy
  EXPECT_NE(model->spec.assumptions.back().find("1 float32 weights of the files loaded as bf16"),
            std::string::npos)
      << model->spec.assumptions.back();
  EXPECT_FALSE(ServeFloat32(*model, load));  // once: the model is no longer float32
}

// A sweep with --engine builds the model as the engine loads it, as `opscope llm` does.
TEST(Float32Load, SweepWithAnEngineServesTheEnginesDtype) {
  const Float32Config llama("llama");
  sweep::SweepRequest r;
  r.model = llama.path();
  r.devices = {"h100-sxm"};
  r.weights = {std::nullopt};
  r.batches = {1};
  r.contexts = {64};
  r.gen_lens = {8};
  r.engine = "sglang";
  auto result = sweep::RunSweep(r);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->recipes.size(), 1u);
  EXPECT_TRUE(result->recipes[0].starts_with("f16/f16/")) << result->recipes[0];
  r.engine = std::nullopt;  // the roofline sweep: as saved
  auto roofline = sweep::RunSweep(r);
  ASSERT_TRUE(roofline.has_value()) << roofline.error().message;
  EXPECT_TRUE(roofline->recipes[0].starts_with("f32/f32/")) << roofline->recipes[0];
}

}  // namespace
}  // namespace opscope::llm
