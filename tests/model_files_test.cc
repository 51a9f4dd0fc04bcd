// Model files through `opscope llm` (issue 16): a .gguf file and a checkpoint folder of
// .safetensors shards open as models whose weights are in the formats the files store, so the
// serving figures' weight bytes are the files' tensor bytes (scales included) and the
// parameter counts their tensors' elements (scales excluded); what the step graph does not
// use is a warning naming it; `opscope analyze model.gguf` analyses the step graph.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "import/gguf/gguf_model.h"
#include "import/import.h"
#include "import/safetensors/checkpoint.h"
#include "llm/model.h"
#include "llm/serving.h"
#include "testing/run_binary.h"

namespace opscope {
namespace {

using testing::RunOpscope;

const std::string kGguf = std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/gguf/";
const std::string kSafetensors = std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/safetensors/";

llm::LlmRun RunModel(const std::string& model, const std::string& device = "h100-sxm",
                llm::RecipeOptions recipe = {}) {
  llm::Request r;
  r.model = model;
  r.device = device;
  r.recipe = recipe;
  auto run = llm::RunLlm(r);
  if (!run) ADD_FAILURE() << model << ": " << run.error().message;
  return std::move(*run);
}

bool Mentions(const std::vector<std::string>& lines, std::string_view text) {
  for (const std::string& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

// ---- GGUF ------------------------------------------------------------------------------------

// What the file says, apart from the step graph: Σ bytes and Σ elements of the tensors some
// graph weight takes (every tensor but the ones the model lists as unused).
struct FileSums {
  uint64_t bytes = 0, elements = 0;
};
FileSums UsedTensors(const std::string& path) {
  auto model = import::gguf::LoadGgufModel(path);
  EXPECT_TRUE(model.has_value()) << path;
  FileSums s;
  if (!model) return s;
  const std::set<std::string> unused(model->unused_tensors.begin(), model->unused_tensors.end());
  for (const import::gguf::GgufFile& f : model->files) {
    for (const import::gguf::TensorInfo& t : f.tensors) {
      if (unused.contains(t.name)) continue;
      s.bytes += t.bytes;
      s.elements += t.elements;
    }
  }
  return s;
}

TEST(GgufModelFile, WeightBytesAndParametersAreTheFilesTensors) {
  for (const char* file : {"tiny-llama.gguf", "tiny-split-00001-of-00002.gguf", "tiny-qwen3moe.gguf",
                           "tiny-gpt-oss.gguf", "tiny-deepseek2.gguf", "tiny-phi3.gguf",
                           "tiny-gemma3.gguf"}) {
    SCOPED_TRACE(file);
    const FileSums sums = UsedTensors(kGguf + file);
    const llm::LlmRun run = RunModel(kGguf + file);
    const llm::ModelFigures& m = run.evaluation.figures.model;
    EXPECT_EQ(m.weight_bytes, sums.bytes);
    EXPECT_EQ(m.params_total, sums.elements);  // GGUF stores no scale tensors
    EXPECT_NE(run.serving.build().labels.weights.find("(stored in "), std::string::npos);
  }
}

// llama.cpp's layout: q, k and v are three matrices, each at its own type (tiny-llama's v is
// q8_0 in layer 0, q5_0 in layer 1; q and k q4_0).
TEST(GgufModelFile, AttentionRunsAsLlamaCppLaysItOut) {
  const llm::LlmRun run = RunModel(kGguf + "tiny-llama.gguf");
  const ir::Graph& g = run.serving.build().whole->graph;
  std::map<std::string, format::Format> formats;
  for (const ir::Tensor& t : g.tensors) formats[t.name] = t.format;
  EXPECT_FALSE(formats.contains("layers.0.attn.qkv_proj.weight"));
  EXPECT_EQ(formats.at("layers.0.attn.q_proj.weight"), format::Format::kQ4_0);
  EXPECT_EQ(formats.at("layers.0.attn.v_proj.weight"), format::Format::kQ8_0);
  EXPECT_EQ(formats.at("layers.1.attn.v_proj.weight"), format::Format::kQ5_0);
  EXPECT_EQ(formats.at("lm_head.weight"), format::Format::kF16);
  // The two layers differ in v's type, so neither is the other's cost twin.
  EXPECT_EQ(run.serving.build().whole->distinct_layers, 2);
  // rope_freqs has no step-graph weight: a warning with its bytes (8 f32).
  EXPECT_TRUE(Mentions(run.serving.build().warnings, "(32 bytes, not costed): rope_freqs.weight"));
}

// --weights replaces the file's types (and says so); the layout stays llama.cpp's.
TEST(GgufModelFile, WeightsOptionReplacesTheStoredTypes) {
  const llm::LlmRun run = RunModel(kGguf + "tiny-llama.gguf", "h100-sxm", {.weights = "f16"});
  const ir::Graph& g = run.serving.build().whole->graph;
  for (const ir::Tensor& t : g.tensors) {
    if (t.role != ir::Role::kWeight) continue;
    EXPECT_EQ(t.format, format::Format::kF16) << t.name;
  }
  EXPECT_TRUE(Mentions(g.assumptions, "--weights f16 replaces the formats stored in"));
  // 86,336 parameters (the file's used tensors' elements) at 2 bytes each.
  EXPECT_EQ(run.evaluation.figures.model.weight_bytes, 2 * UsedTensors(kGguf + "tiny-llama.gguf").elements);
}

TEST(GgufModelFile, GraphTheFileDisagreesWithIsAnError) {
  auto model = llm::OpenModel(kGguf + "tiny-mismatch.gguf");
  ASSERT_FALSE(model.has_value());
  EXPECT_NE(model.error().message.find(
                "tiny-mismatch.gguf: weight layers.0.mlp.gate_up_proj.weight holds 32768 elements, "
                "tensor(s) blk.0.ffn_gate.weight, blk.0.ffn_up.weight 16384 (and 3 more)"),
            std::string::npos)
      << model.error().message;
  auto typed = llm::OpenModel(kGguf + "tiny-llama.gguf", {.model_type = "llama"});
  ASSERT_FALSE(typed.has_value());
  EXPECT_NE(typed.error().message.find("option '--model-type'"), std::string::npos);
  auto missing = llm::OpenModel(kGguf + "no-such-file.gguf");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("no-such-file.gguf"), std::string::npos);
}

// `opscope analyze model.gguf`: the step graph with its symbols left to --dim.
TEST(GgufModelFile, AnalyzeImportsTheStepGraph) {
  auto graph = import::ImportModel(kGguf + "tiny-llama.gguf", {});
  ASSERT_TRUE(graph.has_value()) << graph.error().message;
  EXPECT_TRUE(Mentions(graph->warnings, "rope_freqs.weight"));
  const llm::LlmRun run = RunModel(kGguf + "tiny-llama.gguf");
  EXPECT_EQ(graph->nodes.size(), run.serving.build().whole->graph.nodes.size());
}

// ---- safetensors -----------------------------------------------------------------------------

// The checkpoint's own sums: its bytes less what belongs to no weight (attention KV scales),
// its parameters (scales excluded).
struct CheckpointSums {
  uint64_t weight_bytes = 0, parameters = 0;
};
CheckpointSums Sums(const std::string& dir) {
  auto c = import::safetensors::ReadCheckpoint(dir);
  EXPECT_TRUE(c.has_value()) << dir;
  CheckpointSums s;
  if (!c) return s;
  s.weight_bytes = c->Bytes();
  s.parameters = c->Parameters();
  for (const import::safetensors::CheckpointTensor& t : c->tensors) {
    if (t.role != import::safetensors::TensorRole::kParameter && t.owner.empty()) {
      s.weight_bytes -= t.bytes;  // k_scale / v_scale: the KV cache's, no weight's
    }
  }
  return s;
}

TEST(CheckpointFolder, WeightBytesAreTheShardsBytesScalesIncluded) {
  struct Case {
    const char* dir;
    const char* device;
    const char* label;
  };
  for (const Case& c : {Case{"tiny-llama", "h100-sxm", "bf16 (stored in tiny-llama)"},
                        Case{"tiny-fp8", "h100-sxm", "fp8_e4m3_b128x128 + bf16 (stored in tiny-fp8)"},
                        Case{"tiny-nvfp4", "b200", "nvfp4 + bf16 (stored in tiny-nvfp4)"},
                        Case{"tiny-gpt-oss", "h100-sxm", "bf16 + mxfp4 (stored in tiny-gpt-oss)"}}) {
    SCOPED_TRACE(c.dir);
    const CheckpointSums sums = Sums(kSafetensors + c.dir);
    const llm::LlmRun run = RunModel(kSafetensors + c.dir, c.device);
    const llm::ModelFigures& m = run.evaluation.figures.model;
    EXPECT_EQ(m.weight_bytes, sums.weight_bytes);
    EXPECT_EQ(m.params_total, sums.parameters);
    EXPECT_EQ(run.serving.build().labels.weights, c.label);
    EXPECT_TRUE(run.serving.build().warnings.empty()) << run.serving.build().warnings[0];
  }
}

// tiny-fp8's fused qkv_proj: q (128 rows), k and v (64 each) carry three 128×128 block scales;
// the fused [256, 128] weight at fp8_e4m3_b128x128 would count two. The model's weight bytes
// are the shards' (one more f32 scale per layer than the format gives).
TEST(CheckpointFolder, FusedWeightsKeepTheirPartsScales) {
  const llm::LlmRun run = RunModel(kSafetensors + "tiny-fp8");
  const import::hf::StoredWeights& stored = *run.serving.build().model.spec.stored;
  EXPECT_EQ(stored.formats.at("layers.0.attn.qkv_proj.weight"),
            format::Format::kFp8E4m3B128x128);
  // 256·128 e4m3 bytes + three f32 block scales.
  EXPECT_EQ(stored.bytes.at("layers.0.attn.qkv_proj.weight"), 256u * 128 + 3 * 4);
}

// A model folder whose config the shards disagree with: each difference is a warning naming
// it, in the report's warnings (here: the config of tiny-llama with a third layer).
TEST(CheckpointFolder, TensorsTheConfigDoesNotExpectAreWarnings) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("opscope_mf_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(kSafetensors + "tiny-llama")) {
    fs::copy(e.path(), dir / e.path().filename(), fs::copy_options::overwrite_existing);
  }
  auto config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
  config["num_hidden_layers"] = 3;
  std::ofstream(dir / "config.json") << config.dump();
  const llm::LlmRun run = RunModel(dir.string());
  const std::vector<std::string>& w = run.serving.build().warnings;
  EXPECT_TRUE(Mentions(w, "6 weight(s) of the model missing from the checkpoint: "
                          "layers.2.input_norm.weight, "));
  // The missing layer's weights take the recipe's format (bf16): 2 bytes a parameter more.
  const CheckpointSums sums = Sums(dir.string());
  const uint64_t layer = 32 + 32 * 32 + 2 * 16 * 32 + 32 * 32 + 32 + 3 * 64 * 32;
  EXPECT_EQ(run.evaluation.figures.model.weight_bytes, sums.weight_bytes + 2 * layer);
  // The command line prints them after the report and in JSON.
  const auto out = RunOpscope({"llm", dir.string(), "--format", "json"});
  EXPECT_EQ(out.status, 0) << out.err;
  const auto json = nlohmann::json::parse(out.out);
  ASSERT_TRUE(json.contains("warnings"));
  EXPECT_NE(out.err.find("opscope: warning: 6 weight(s) of the model missing"), std::string::npos);
  fs::remove_all(dir);
}

// A folder with only config.json and the index (no shards) keeps the config's recipe.
TEST(CheckpointFolder, FolderWithoutShardsUsesTheConfig) {
  auto model = llm::OpenModel(std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/hf/llama-3.1-8b");
  ASSERT_TRUE(model.has_value()) << model.error().message;
  EXPECT_EQ(model->spec.stored, nullptr);
}

// ---- The command line ------------------------------------------------------------------------

TEST(ModelFilesCli, LlmAnalyzeAndSweepTakeGgufFiles) {
  const std::string file = "tests/fixtures/gguf/tiny-llama.gguf";
  const auto llm = RunOpscope({"llm", file, "--format", "json"});
  ASSERT_EQ(llm.status, 0) << llm.err;
  const auto report = nlohmann::json::parse(llm.out);
  EXPECT_EQ(report["llm"]["weight_bytes"], UsedTensors(kGguf + "tiny-llama.gguf").bytes);
  // The file's unused tensor, and (a 30-node toy step) the launch-overhead warning.
  EXPECT_EQ(report["warnings"].size(), 2u);
  EXPECT_NE(llm.err.find("opscope: warning: 1 tensor(s) of the file are not in the step graph"),
            std::string::npos);
  EXPECT_NE(llm.err.find("launch overhead not modelled"), std::string::npos);
  const auto analyze = RunOpscope({"analyze", file, "--dim", "n=1", "--dim", "seqs=1", "--dim",
                                   "ctx=16", "--format", "json"});
  ASSERT_EQ(analyze.status, 0) << analyze.err;
  const auto a = nlohmann::json::parse(analyze.out);
  EXPECT_EQ(a["totals"]["nodes"], a["totals"]["nodes_costed"]);
  const auto sweep = RunOpscope({"sweep", "llm", file, "--batch", "1,2", "--context", "16"});
  EXPECT_EQ(sweep.status, 0) << sweep.err;
  const auto bad = RunOpscope({"llm", "tests/fixtures/gguf/tiny-mismatch.gguf"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(bad.err.starts_with("opscope: error: tests/fixtures/gguf/tiny-mismatch.gguf: weight "))
      << bad.err;
  const auto input = RunOpscope({"analyze", file, "--input", "x=1"});
  EXPECT_EQ(input.status, 2);
  EXPECT_NE(input.err.find("is a GGUF model, whose inputs have no values"), std::string::npos);
}

// Bad model files: one line naming the file (the shard for a folder), exit status 2.
TEST(ModelFilesCli, BadFilesAreErrorsNamingTheFile) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("opscope-bad-models-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto first_bytes = [](const std::string& from, const std::filesystem::path& to, size_t n) {
    std::ifstream in(from, std::ios::binary);
    std::string bytes(n, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(n));
    std::ofstream(to, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(n));
  };
  // A GGUF header cut after 100 bytes: its counts promise more than the file holds.
  const std::string gguf = (dir / "cut.gguf").string();
  first_bytes(kGguf + "tiny-llama.gguf", gguf, 100);
  for (const char* command : {"llm", "analyze"}) {
    const auto out = RunOpscope({command, gguf});
    EXPECT_EQ(out.status, 2) << command;
    EXPECT_TRUE(out.err.starts_with("opscope: error: " + gguf + ": ")) << out.err;
    EXPECT_EQ(out.err.find('\n'), out.err.size() - 1) << out.err;  // one line
  }
  // A checkpoint folder whose shard stops inside its 8-byte header length.
  const std::filesystem::path folder = dir / "checkpoint";
  std::filesystem::copy(kSafetensors + "tiny-fp8", folder);
  const std::string shard = (folder / "model.safetensors").string();
  first_bytes(kSafetensors + "tiny-fp8/model.safetensors", shard, 5);
  const auto out = RunOpscope({"llm", folder.string()});
  EXPECT_EQ(out.status, 2);
  EXPECT_TRUE(out.err.starts_with("opscope: error: " + shard + ": ")) << out.err;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace opscope
