// The safetensors reader, checkpoint folders and their comparison with the step graph: every
// dtype's bytes are elements × bits / 8, parameters are Σ elements less quantization metadata
// (packed FP4/INT4 unpacked), a header cut at any byte or bent by a hostile field is an error,
// and each fixture checkpoint maps onto its config's step graph with its stored formats.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "import/hf_config/model_spec.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "import/safetensors/checkpoint.h"
#include "import/safetensors/checkpoint_graph.h"
#include "import/safetensors/safetensors_reader.h"
#include "support/file_io.h"

namespace opscope::import::safetensors {
namespace {

const std::string kDir = std::string(OPSCOPE_SOURCE_DIR) + "/tests/fixtures/safetensors/";

// Bits per element of every safetensors dtype (safetensors' Dtype::bitsize), written out here
// apart from the reader's table.
const std::map<std::string, uint64_t> kBits = {
    {"BOOL", 8}, {"F4", 4},   {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},      {"I8", 8},
    {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8},
    {"I16", 16}, {"U16", 16}, {"F16", 16}, {"BF16", 16}, {"I32", 32}, {"U32", 32},
    {"F32", 32}, {"C64", 64}, {"F64", 64}, {"I64", 64}, {"U64", 64},
};

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A header from JSON text: the 8-byte length, then the text.
std::vector<uint8_t> Header(std::string_view json) {
  std::vector<uint8_t> out;
  out.reserve(8 + json.size());
  const uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(n >> (8 * i)));
  for (char c : json) out.push_back(static_cast<uint8_t>(c));
  return out;
}

std::string TensorJson(std::string_view name, std::string_view dtype, std::string_view shape,
                       uint64_t begin, uint64_t end) {
  return "\"" + std::string(name) + "\":{\"dtype\":\"" + std::string(dtype) + "\",\"shape\":" +
         std::string(shape) + ",\"data_offsets\":[" + std::to_string(begin) + "," +
         std::to_string(end) + "]}";
}

Result<SafetensorsFile> Parse(std::string_view json, uint64_t data_bytes) {
  const std::vector<uint8_t> h = Header(json);
  return ParseSafetensorsHeader(h, h.size() + data_bytes, "t.safetensors");
}

TEST(SafetensorsReader, EveryDtypeIsElementsTimesBitsOverEight) {
  auto f = ReadSafetensorsHeader(kDir + "every_dtype.safetensors");
  ASSERT_TRUE(f.has_value()) << f.error().message;
  ASSERT_EQ(f->metadata.size(), 1u);
  EXPECT_EQ(f->metadata[0], (std::pair<std::string, std::string>{"format", "pt"}));
  std::set<std::string> seen;
  for (const TensorEntry& t : f->tensors) {
    EXPECT_EQ(t.elements, 16u) << t.name;                       // shape [2, 8]
    EXPECT_EQ(t.bytes, 16 * kBits.at(std::string(t.dtype->name)) / 8) << t.name;
    seen.insert(std::string(t.dtype->name));
  }
  EXPECT_EQ(seen.size(), kBits.size());
  EXPECT_EQ(Dtypes().size(), kBits.size());
  EXPECT_EQ(f->TensorBytes(), f->file_bytes - f->DataOffset());
  EXPECT_EQ(f->header_bytes % 8, 0u);  // the writer pads with spaces
}

// Large shapes without their data (the file size is claimed): every dtype.
TEST(SafetensorsReader, LargeTensorsOfEveryDtypeAreExact) {
  for (const auto& [dtype, bits] : kBits) {
    const uint64_t bytes = uint64_t{4096} * 14336 * bits / 8;
    const std::string json = "{" + TensorJson("w", dtype, "[4096,14336]", 0, bytes) + "}";
    auto f = Parse(json, bytes);
    ASSERT_TRUE(f.has_value()) << dtype << ": " << f.error().message;
    EXPECT_EQ(f->tensors[0].bytes, bytes) << dtype;
    EXPECT_FALSE(Parse(json, bytes - 1).has_value()) << dtype;  // the buffer is a byte short
  }
}

TEST(SafetensorsReader, HeaderTruncatedAtEveryOffsetIsAnError) {
  for (const char* name : {"every_dtype.safetensors", "tiny-fp8/model.safetensors"}) {
    const std::vector<uint8_t> bytes = ReadBytes(kDir + name);
    auto whole = ParseSafetensorsHeader(bytes, bytes.size(), name);
    ASSERT_TRUE(whole.has_value()) << whole.error().message;
    for (uint64_t k = 0; k < bytes.size(); k += k < whole->DataOffset() ? 1 : 97) {
      auto r = ParseSafetensorsHeader(std::span(bytes).first(k), k, name);
      ASSERT_FALSE(r.has_value()) << name << " cut at " << k;
      EXPECT_TRUE(r.error().message.starts_with(std::string(name) + ": ")) << r.error().message;
    }
  }
}

TEST(SafetensorsReader, HostileHeadersAreNamedErrors) {
  const std::string w = TensorJson("w", "F32", "[2]", 0, 8);
  const struct {
    std::string json;
    uint64_t data;
    const char* error;
  } cases[] = {
      {"[1]", 0, "header is not a JSON object (it must start with '{')"},
      {"{\"w\":", 0, "header is not valid JSON"},
      {"{" + w + "," + w + "}", 8, "tensor 'w' appears twice"},
      {"{" + TensorJson("", "F32", "[2]", 0, 8) + "}", 8, "a tensor has an empty name"},
      {"{" + TensorJson("w", "F128", "[2]", 0, 8) + "}", 8, "tensor 'w': unknown dtype \"F128\""},
      {"{" + TensorJson("w", "F32", "[-2]", 0, 8) + "}", 8, "'shape' entry 0 is not a non-negative"},
      {"{" + TensorJson("w", "F32", "[2.5]", 0, 8) + "}", 8, "'shape' entry 0 is not"},
      {"{" + TensorJson("w", "F32", "[4294967296,4294967296]", 0, 8) + "}", 8,
       "'shape' entry 1 is not a non-negative integer whose product"},
      {"{" + TensorJson("w", "F32", "2", 0, 8) + "}", 8, "'shape' is missing or not a list"},
      {"{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8,
       "'data_offsets' is not a list [begin, end]"},
      {"{" + TensorJson("w", "F32", "[2]", 8, 0) + "}", 8, "with begin <= end"},
      {"{" + TensorJson("w", "F32", "[2]", 0, 6) + "}", 6,
       "tensor 'w': dtype F32 and shape [2] make 8 bytes, data_offsets span 6"},
      {"{" + TensorJson("w", "F4", "[3]", 0, 2) + "}", 2,
       "tensor 'w': 3 elements of F4 are not a whole number of bytes"},
      {"{" + TensorJson("a", "F32", "[2]", 0, 8) + "," + TensorJson("b", "F32", "[2]", 16, 24) + "}",
       24, "tensor 'b' starts at data offset 16, but tensor 'a' ends at 8 (a gap)"},
      {"{" + TensorJson("a", "F32", "[2]", 0, 8) + "," + TensorJson("b", "F32", "[2]", 4, 12) + "}",
       12, "tensor 'b' starts at data offset 4, but tensor 'a' ends at 8 (they overlap)"},
      {"{" + TensorJson("a", "F32", "[2]", 8, 16) + "}", 16,
       "tensor 'a' starts at data offset 8, but the buffer starts at 0 (a gap)"},
      {"{" + w + "}", 9, "the tensors end at data offset 8, but the file holds 9 bytes"},
      {"{\"__metadata__\":{\"k\":1}," + w + "}", 8, "'__metadata__' entry 'k' is not a string"},
      {"{\"w\":3}", 0, "tensor 'w': not an object"},
  };
  for (const auto& c : cases) {
    auto r = Parse(c.json, c.data);
    ASSERT_FALSE(r.has_value()) << c.json;
    EXPECT_TRUE(r.error().message.starts_with("t.safetensors: ")) << r.error().message;
    EXPECT_NE(r.error().message.find(c.error), std::string::npos) << r.error().message;
  }
  // The length prefix: above safetensors' limit, past the end of the file, or missing.
  std::vector<uint8_t> huge(8, 0xff);
  EXPECT_NE(ParseSafetensorsHeader(huge, 1 << 20, "t").error().message.find("above safetensors' limit"),
            std::string::npos);
  std::vector<uint8_t> past = Header("{}");
  EXPECT_NE(ParseSafetensorsHeader(past, 9, "t").error().message.find("truncated: the header "
                                                                       "length says 2 bytes"),
            std::string::npos);
  EXPECT_NE(ParseSafetensorsHeader({}, 0, "t").error().message.find("shorter than the 8-byte"),
            std::string::npos);
}

// ---- Checkpoints --------------------------------------------------------------------------

TEST(Checkpoint, QuantizationMetadataIsRecognisedByNameAndDtype) {
  const struct {
    const char* name;
    const char* dtype;
    TensorRole role;
    const char* owner;
  } cases[] = {
      {"model.layers.0.mlp.down_proj.weight", "BF16", TensorRole::kParameter, ""},
      {"model.layers.0.mlp.down_proj.weight_scale_inv", "F32", TensorRole::kScale,
       "model.layers.0.mlp.down_proj.weight"},
      {"l.q_proj.weight_scale", "F8_E4M3", TensorRole::kScale, "l.q_proj.weight"},
      {"l.q_proj.weight_scale_2", "F32", TensorRole::kScale, "l.q_proj.weight"},
      {"l.q_proj.weight_global_scale", "F32", TensorRole::kScale, "l.q_proj.weight"},
      {"l.q_proj.input_scale", "F32", TensorRole::kScale, "l.q_proj.weight"},
      {"l.q_proj.weight_zero_point", "I8", TensorRole::kZeroPoint, "l.q_proj.weight"},
      {"l.q_proj.weight_g_idx", "I32", TensorRole::kIndex, "l.q_proj.weight"},
      {"l.q_proj.weight_shape", "I64", TensorRole::kShape, "l.q_proj.weight"},
      {"l.self_attn.k_scale", "F32", TensorRole::kScale, ""},
      {"l.q_proj.scales", "F16", TensorRole::kScale, "l.q_proj.qweight"},
      {"l.q_proj.qzeros", "I32", TensorRole::kZeroPoint, "l.q_proj.qweight"},
      {"l.q_proj.g_idx", "I32", TensorRole::kIndex, "l.q_proj.qweight"},
      {"l.mlp.experts.gate_up_proj_scales", "U8", TensorRole::kScale,
       "l.mlp.experts.gate_up_proj_blocks"},
      // The dtype must fit: an integer "scale" or a float "zero point" is a parameter.
      {"l.q_proj.weight_scale", "I32", TensorRole::kParameter, ""},
      {"l.q_proj.qzeros", "F16", TensorRole::kParameter, ""},
      {"weight_scale", "F32", TensorRole::kParameter, ""},
  };
  for (const auto& c : cases) {
    std::string owner = "unset";
    EXPECT_EQ(ClassifyTensor(c.name, *FindDtype(c.dtype), &owner), c.role) << c.name;
    EXPECT_EQ(owner, c.owner) << c.name;
  }
}

struct Built {
  Checkpoint checkpoint;
  hf::ModelSpec spec;
  hf::StepGraph step;
  CheckpointComparison comparison;
};

Built Load(const std::string& dir, hf::RecipeOptions options = {}) {
  Built b;
  auto c = ReadCheckpoint(kDir + dir);
  EXPECT_TRUE(c.has_value()) << c.error().message;
  if (!c) return b;
  b.checkpoint = std::move(*c);
  auto text = ReadFile(kDir + dir + "/config.json");
  auto spec = hf::ParseHfConfig(*text, "config.json");
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  b.spec = *spec;
  auto recipe = hf::ResolveRecipe(b.spec, options);
  EXPECT_TRUE(recipe.has_value()) << recipe.error().message;
  auto step = hf::BuildStepGraph(b.spec, *recipe);
  EXPECT_TRUE(step.has_value()) << step.error().message;
  b.step = std::move(*step);
  b.comparison = CompareWithGraph(b.checkpoint, b.spec, b.step.graph);
  return b;
}

// Σ over the graph's weights of their bytes at the checkpoint's stored formats.
uint64_t GraphBytesAtStoredFormats(const Built& b) {
  uint64_t sum = 0;
  for (const ir::Tensor& t : b.step.graph.tensors) {
    if (t.role != ir::Role::kWeight) continue;
    std::vector<int64_t> dims;
    for (const expr::Expr& d : t.shape) dims.push_back(d.constant());
    auto it = b.comparison.weight_formats.find(t.name);
    EXPECT_NE(it, b.comparison.weight_formats.end()) << t.name;
    if (it != b.comparison.weight_formats.end()) sum += format::TensorBytes(it->second, dims).value();
  }
  return sum;
}

TEST(Checkpoint, ShardedBf16LlamaMapsOntoItsGraphExactly) {
  const Built b = Load("tiny-llama");
  EXPECT_EQ(b.checkpoint.shards.size(), 2u);
  EXPECT_TRUE(b.checkpoint.warnings.empty());  // total_size matches
  // make_safetensors.py's llama: hidden 32, 2 heads of 16, 1 KV head, FFN 64, vocab 64.
  const uint64_t per_layer = 32 + 32 * 32 + 2 * 16 * 32 + 32 * 32 + 32 + 3 * 64 * 32;
  const uint64_t params = 64 * 32 + 2 * per_layer + 32 + 64 * 32;
  EXPECT_EQ(b.checkpoint.Parameters(), params);
  EXPECT_EQ(b.checkpoint.Bytes(), 2 * params);  // BF16
  uint64_t buffers = 0;
  for (const SafetensorsFile& f : b.checkpoint.shards) buffers += f.file_bytes - f.DataOffset();
  EXPECT_EQ(b.checkpoint.Bytes(), buffers);
  EXPECT_TRUE(b.comparison.warnings.empty()) << b.comparison.warnings[0];
  for (const auto& [name, f] : b.comparison.weight_formats) {
    EXPECT_EQ(f, format::Format::kBf16) << name;
  }
  EXPECT_EQ(GraphBytesAtStoredFormats(b), b.checkpoint.Bytes());
  const GraphWeightSource* qkv = nullptr;
  for (const GraphWeightSource& w : b.comparison.weights) {
    if (w.graph_name == "layers.1.attn.qkv_proj.weight") qkv = &w;
  }
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->tensors, (std::vector<std::string>{"model.layers.1.self_attn.q_proj.weight",
                                                    "model.layers.1.self_attn.k_proj.weight",
                                                    "model.layers.1.self_attn.v_proj.weight"}));
}

TEST(Checkpoint, Fp8BlockScalesAreScalesAndGiveTheBlockFormat) {
  const Built b = Load("tiny-fp8");
  // qwen3: hidden 128, q 128 rows (2 heads of 64), k and v 64 rows, FFN 128, one layer.
  const uint64_t weights = 128 * 128 + 2 * 64 * 128 + 128 * 128 + 3 * 128 * 128;  // F8_E4M3
  const uint64_t bf16 = 64 * 128 + 128 + 64 + 64 + 128 + 128 + 64 * 128;  // embed, norms, head
  // weight_scale_inv: one f32 per 128×128 block, one block for each of the 7 linear layers;
  // and the k_scale and v_scale scalars.
  const uint64_t scales = 4 * 7 + 4 + 4;
  EXPECT_EQ(b.checkpoint.Parameters(), weights + bf16);
  EXPECT_EQ(b.checkpoint.MetadataBytes(), scales);
  EXPECT_EQ(b.checkpoint.Bytes(), weights + 2 * bf16 + scales);
  EXPECT_TRUE(b.comparison.warnings.empty()) << b.comparison.warnings[0];
  const auto& f = b.comparison.weight_formats;
  EXPECT_EQ(f.at("layers.0.attn.qkv_proj.weight"), format::Format::kFp8E4m3B128x128);
  EXPECT_EQ(f.at("layers.0.mlp.gate_up_proj.weight"), format::Format::kFp8E4m3B128x128);
  EXPECT_EQ(f.at("layers.0.attn.q_norm.weight"), format::Format::kBf16);
  EXPECT_EQ(f.at("lm_head.weight"), format::Format::kBf16);
  // The fused graph weights tile 128×128 blocks over the fused rows: q, k and v (128 + 64 +
  // 64 rows) hold 3 block scales, the fused [256, 128] two; gate and up hold 2, as the fused
  // [256, 128] does. The k/v scales belong to no weight.
  EXPECT_EQ(b.checkpoint.Bytes() - GraphBytesAtStoredFormats(b), 4 * (3 - 2) + 8);
}

TEST(Checkpoint, ModelOptNvfp4PacksTwoParametersPerByte) {
  const Built b = Load("tiny-nvfp4", {.weights = "nvfp4"});
  // llama: hidden 64, q/o 64×64, k/v 32×64, gate/up 128×64, down 64×128, one layer.
  const uint64_t linear = 2 * 64 * 64 + 2 * 32 * 64 + 3 * 128 * 64;
  const uint64_t bf16 = 64 * 64 + 64 + 64 + 64 + 64 * 64;
  EXPECT_EQ(b.checkpoint.Parameters(), linear + bf16);
  // Per linear layer: n/16 e4m3 scales + an f32 weight_scale_2 + an f32 input_scale; and the
  // k_scale / v_scale scalars.
  EXPECT_EQ(b.checkpoint.MetadataBytes(), linear / 16 + 7 * (4 + 4) + 8);
  EXPECT_EQ(b.checkpoint.Bytes(), linear / 2 + 2 * bf16 + b.checkpoint.MetadataBytes());
  EXPECT_TRUE(b.comparison.warnings.empty()) << b.comparison.warnings[0];
  EXPECT_EQ(b.comparison.weight_formats.at("layers.0.attn.qkv_proj.weight"), format::Format::kNvfp4);
  EXPECT_EQ(b.comparison.weight_formats.at("layers.0.mlp.down_proj.weight"), format::Format::kNvfp4);
  EXPECT_EQ(b.comparison.weight_formats.at("embed_tokens.weight"), format::Format::kBf16);
}

TEST(Checkpoint, GptOssMxfp4ExpertsMapOntoTheGraphExactly) {
  const Built b = Load("tiny-gpt-oss");
  EXPECT_TRUE(b.comparison.warnings.empty()) << b.comparison.warnings[0];
  const auto& f = b.comparison.weight_formats;
  EXPECT_EQ(f.at("layers.0.moe.experts.gate_up_proj.weight"), format::Format::kMxfp4);
  EXPECT_EQ(f.at("layers.1.moe.experts.down_proj.weight"), format::Format::kMxfp4);
  EXPECT_EQ(f.at("layers.1.moe.experts.down_proj.bias"), format::Format::kBf16);
  EXPECT_EQ(f.at("layers.0.attn.sinks"), format::Format::kBf16);
  EXPECT_EQ(f.at("layers.0.ffn_norm.weight"), format::Format::kBf16);  // post_attention_layernorm
  // Experts: 4 × (2·64 + 64) rows of 64 e2m1 values per layer, two to a byte of _blocks.
  const uint64_t expert_params = 2 * 4 * (2 * 64 + 64) * 64;
  uint64_t blocks_params = 0;
  for (const CheckpointTensor& t : b.checkpoint.tensors) {
    if (t.name.ends_with("_blocks")) blocks_params += t.parameters;
  }
  EXPECT_EQ(blocks_params, expert_params);
  EXPECT_EQ(GraphBytesAtStoredFormats(b), b.checkpoint.Bytes());
}

// The same checkpoint against a spec that differs: each difference is a warning naming it.
TEST(Checkpoint, UnexpectedAndMissingTensorsAreNamedWarnings) {
  Built b = Load("tiny-llama");
  hf::ModelSpec spec = b.spec;
  spec.layers.push_back(spec.layers.back());  // a third layer the checkpoint lacks
  spec.tie_embeddings = true;                 // no lm_head in the model
  auto recipe = hf::ResolveRecipe(spec, {});
  auto step = hf::BuildStepGraph(spec, *recipe);
  ASSERT_TRUE(step.has_value());
  Checkpoint c = b.checkpoint;
  c.tensors.push_back(c.tensors.front());
  c.tensors.back().name = "model.vision_tower.patch_embed.weight";
  const CheckpointComparison r = CompareWithGraph(c, spec, step->graph);
  EXPECT_EQ(r.unexpected, (std::vector<std::string>{"lm_head.weight",
                                                    "model.vision_tower.patch_embed.weight"}));
  EXPECT_EQ(r.missing.size(), 6u);  // layer 2's two norms, qkv_proj, o_proj, gate_up, down
  EXPECT_EQ(r.missing.front(), "layers.2.input_norm.weight");
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_EQ(r.warnings[0], "2 checkpoint tensor(s) the model does not expect: lm_head.weight, "
                           "model.vision_tower.patch_embed.weight");
  EXPECT_TRUE(r.warnings[1].starts_with("6 weight(s) of the model missing from the checkpoint: "
                                        "layers.2.input_norm.weight, "))
      << r.warnings[1];
  // A wider FFN: the element counts differ, named with the tensors.
  spec = b.spec;
  spec.mlp.intermediate = 128;
  auto wide = hf::BuildStepGraph(spec, *hf::ResolveRecipe(spec, {}));
  const CheckpointComparison w = CompareWithGraph(b.checkpoint, spec, wide->graph);
  ASSERT_FALSE(w.warnings.empty());
  EXPECT_EQ(w.warnings[0], "weight 'layers.0.mlp.gate_up_proj.weight' has 8192 elements in the "
                           "model, 4096 in the checkpoint (model.layers.0.mlp.gate_proj.weight, "
                           "model.layers.0.mlp.up_proj.weight)");
}

// The MTP modules the config declares are neither graph weights nor unexpected: tiny-llama's
// second layer read as the MTP block of a one-layer model (DeepSeek's layout numbers the
// modules after the model's layers; Qwen's keeps them under mtp.*). Their parameters must be
// the model's params_mtp — the block, the projection [2h, h] and three norms — else a warning
// says how many each side holds; a config declaring none leaves them unexpected.
TEST(Checkpoint, MtpModuleTensorsAreTheConfigsModules) {
  const Built b = Load("tiny-llama");
  hf::ModelSpec spec = b.spec;
  spec.layers.pop_back();
  spec.mtp.modules = 1;
  spec.mtp.blocks = {spec.layers.back()};
  auto step = hf::BuildStepGraph(spec, *hf::ResolveRecipe(spec, {}));
  ASSERT_TRUE(step.has_value());
  const uint64_t h = 32, per_layer = 32 + 32 * 32 + 2 * 16 * 32 + 32 * 32 + 32 + 3 * 64 * 32;
  ASSERT_EQ(step->params_mtp, per_layer + 2 * h * h + 3 * h);

  // The block alone: 9 tensors of layer 1, the projection and norms missing.
  const CheckpointComparison block = CompareWithGraph(b.checkpoint, spec, step->graph,
                                                      step->params_mtp);
  EXPECT_TRUE(block.unexpected.empty());
  EXPECT_EQ(block.mtp.size(), 9u);
  EXPECT_EQ(block.mtp_parameters, per_layer);
  ASSERT_EQ(block.warnings.size(), 1u);
  EXPECT_EQ(block.warnings[0], "the checkpoint's 9 MTP tensor(s) (model.layers.1.input_layernorm."
                               "weight, model.layers.1.self_attn.q_proj.weight, and 7 more) hold " +
                                   std::to_string(per_layer) + " parameters, the config's 1 MTP "
                                   "module(s) " + std::to_string(step->params_mtp));

  // With DeepSeek's enorm, hnorm, eh_proj and shared_head.norm: exact, no warning.
  Checkpoint c = b.checkpoint;
  for (const auto& [name, params] : std::vector<std::pair<std::string, uint64_t>>{
           {"model.layers.1.enorm.weight", h}, {"model.layers.1.hnorm.weight", h},
           {"model.layers.1.eh_proj.weight", 2 * h * h},
           {"model.layers.1.shared_head.norm.weight", h}}) {
    c.tensors.push_back(c.tensors.front());
    c.tensors.back().name = name;
    c.tensors.back().parameters = params;
  }
  const CheckpointComparison exact = CompareWithGraph(c, spec, step->graph, step->params_mtp);
  EXPECT_TRUE(exact.warnings.empty()) << exact.warnings[0];
  EXPECT_EQ(exact.mtp.size(), 13u);

  // Qwen's names: mtp.fc, mtp.pre_fc_norm_*, mtp.norm, mtp.layers.0.*.
  for (const char* name :
       {"mtp.fc.weight", "mtp.pre_fc_norm_embedding.weight", "mtp.norm.weight",
        "mtp.layers.0.self_attn.q_proj.weight", "model.layers.1.mlp.up_proj.weight"}) {
    EXPECT_TRUE(IsMtpTensor(spec, name)) << name;
  }
  for (const char* name : {"model.layers.0.mlp.up_proj.weight", "model.layers.2.mlp.up_proj.weight",
                           "lm_head.weight", "model.vision_tower.mtp.weight"}) {
    EXPECT_FALSE(IsMtpTensor(spec, name)) << name;
  }

  // No module declared: the same tensors are unexpected, named in the warning.
  spec.mtp = {};
  auto plain = hf::BuildStepGraph(spec, *hf::ResolveRecipe(spec, {}));
  const CheckpointComparison none = CompareWithGraph(c, spec, plain->graph, plain->params_mtp);
  EXPECT_TRUE(none.mtp.empty());
  EXPECT_EQ(none.unexpected.size(), 13u);
  EXPECT_FALSE(IsMtpTensor(spec, "mtp.fc.weight"));
}

// GPTQ-style INT4 (in memory, no data): qweight eight 4-bit values per int32, f16 scales per
// 128 rows of the input, 4-bit zero points: int4_g128_zp.
TEST(Checkpoint, Int4GroupsFromQweightScalesAndZeros) {
  const char* config = R"({"model_type": "llama", "hidden_size": 128, "num_hidden_layers": 1,
      "num_attention_heads": 2, "num_key_value_heads": 1, "intermediate_size": 256,
      "vocab_size": 64, "torch_dtype": "float16"})";
  auto spec = hf::ParseHfConfig(config, "config.json");
  ASSERT_TRUE(spec.has_value());
  std::string json = "{";
  uint64_t at = 0;
  auto add = [&](const std::string& name, const char* dtype, std::vector<uint64_t> shape) {
    uint64_t n = 1;
    std::string s = "[";
    for (uint64_t d : shape) n *= d, s += (s.size() > 1 ? "," : "") + std::to_string(d);
    const uint64_t bytes = n * kBits.at(dtype) / 8;
    json += (at > 0 || json.size() > 1 ? "," : "") + TensorJson(name, dtype, s + "]", at, at + bytes);
    at += bytes;
  };
  auto int4 = [&](const std::string& p, uint64_t out, uint64_t in) {
    add(p + ".qweight", "I32", {in / 8, out});
    add(p + ".scales", "F16", {in / 128, out});
    add(p + ".qzeros", "I32", {in / 128, out / 8});
    add(p + ".g_idx", "I32", {in});
  };
  const std::string l = "model.layers.0.";
  add("model.embed_tokens.weight", "F16", {64, 128});
  add(l + "input_layernorm.weight", "F16", {128});
  int4(l + "self_attn.q_proj", 128, 128);
  int4(l + "self_attn.k_proj", 64, 128);
  int4(l + "self_attn.v_proj", 64, 128);
  int4(l + "self_attn.o_proj", 128, 128);
  add(l + "post_attention_layernorm.weight", "F16", {128});
  int4(l + "mlp.gate_proj", 256, 128);
  int4(l + "mlp.up_proj", 256, 128);
  int4(l + "mlp.down_proj", 128, 256);
  add("model.norm.weight", "F16", {128});
  add("lm_head.weight", "F16", {64, 128});
  json += "}";
  const std::vector<uint8_t> h = Header(json);
  auto file = ParseSafetensorsHeader(h, h.size() + at, "model.safetensors");
  ASSERT_TRUE(file.has_value()) << file.error().message;
  std::vector<SafetensorsFile> shards;
  shards.push_back(std::move(*file));
  auto c = BuildCheckpoint("gptq", std::move(shards));
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(c->assumptions.size(), 1u);  // eight 4-bit values per int32
  const uint64_t linear = 2 * 128 * 128 + 2 * 64 * 128 + 3 * 256 * 128;
  EXPECT_EQ(c->Parameters(), linear + 64 * 128 + 128 + 128 + 128 + 64 * 128);
  auto recipe = hf::ResolveRecipe(*spec, {.weights = "int4_g128_zp"});
  auto step = hf::BuildStepGraph(*spec, *recipe);
  ASSERT_TRUE(step.has_value());
  const CheckpointComparison r = CompareWithGraph(*c, *spec, step->graph);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  for (const char* w : {"layers.0.attn.qkv_proj.weight", "layers.0.attn.o_proj.weight",
                        "layers.0.mlp.gate_up_proj.weight", "layers.0.mlp.down_proj.weight"}) {
    EXPECT_EQ(r.weight_formats.at(w), format::Format::kInt4G128Zp) << w;
  }
  EXPECT_EQ(r.weight_formats.at("embed_tokens.weight"), format::Format::kF16);
}

// Index files that disagree with their shards, or point outside the folder.
TEST(Checkpoint, BadIndexesAreNamedErrors) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("opscope_st_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path shard = kDir + "tiny-llama/model-00001-of-00002.safetensors";
  fs::copy_file(shard, dir / "a.safetensors", fs::copy_options::overwrite_existing);
  auto index = [&](const std::string& weight_map) {
    std::ofstream(dir / "model.safetensors.index.json") << "{\"weight_map\": {" << weight_map << "}}";
    auto c = ReadCheckpoint(dir.string());
    EXPECT_FALSE(c.has_value()) << weight_map;
    return c ? std::string() : c.error().message;
  };
  EXPECT_NE(index("\"x\": \"../a.safetensors\"").find("weight_map entry 'x': expected a file name "
                                                      "in the same folder"),
            std::string::npos);
  EXPECT_NE(index("\"x\": \"b.safetensors\"").find("b.safetensors: cannot open"), std::string::npos);
  EXPECT_NE(index("\"x\": \"a.safetensors\"").find("model.safetensors.index.json puts tensor 'x' "
                                                   "in a.safetensors, which does not hold it"),
            std::string::npos);
  fs::remove_all(dir);
  auto missing = ReadCheckpoint(kDir + "no-such-folder");
  ASSERT_FALSE(missing.has_value());
  fs::create_directories(dir);
  auto empty = ReadCheckpoint(dir.string());
  ASSERT_FALSE(empty.has_value());
  EXPECT_NE(empty.error().message.find("no model.safetensors.index.json or model.safetensors"),
            std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace opscope::import::safetensors
