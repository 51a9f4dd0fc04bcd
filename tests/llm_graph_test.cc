// The LLM step graph through the ledger and roofline: every preset costs, and the numbers
// follow published facts and closed forms (weights read at batch-1 decode, distinct experts,
// recurrent state, causal prefill FLOPs, MLA, sliding windows, llama.cpp file types).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "device/device.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/step_graph.h"
#include "llm/llm.h"

namespace opscope::import::hf {
namespace {

struct Built {
  ModelSpec spec;
  Recipe recipe;
  StepGraph step;
};

Built Build(std::string_view preset, RecipeOptions options = {}) {
  const Preset* p = FindPreset(preset);
  EXPECT_NE(p, nullptr) << preset;
  auto spec = ParseHfConfig(p->json, std::string(p->file));
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  auto recipe = ResolveRecipe(*spec, options);
  EXPECT_TRUE(recipe.has_value()) << recipe.error().message;
  auto step = BuildStepGraph(*spec, *recipe);
  EXPECT_TRUE(step.has_value()) << step.error().message;
  return Built{*spec, *recipe, std::move(*step)};
}

const device::Device& H100() {
  static const device::Device d = *device::FindBuiltinDevice("h100-sxm");
  return d;
}

llm::StepResult Decode(const StepGraph& g, int64_t batch, int64_t context) {
  auto r = llm::AnalyzeStep(g, llm::DecodeBindings(batch, context), H100());
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return std::move(*r);
}

llm::StepResult Prefill(const StepGraph& g, int64_t batch, int64_t prompt) {
  auto r = llm::AnalyzeStep(g, llm::PrefillBindings(batch, prompt), H100());
  EXPECT_TRUE(r.has_value()) << r.error().message;
  return std::move(*r);
}

size_t NodeIndex(const StepGraph& g, std::string_view name) {
  for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
    if (g.graph.nodes[i].name == name) return i;
  }
  ADD_FAILURE() << "no node " << name;
  return 0;
}

TEST(LlmGraph, EveryPresetBuildsValidatesAndCostsEveryNode) {
  for (const Preset& p : BuiltinPresets()) {
    SCOPED_TRACE(std::string(p.name));
    const Built b = Build(p.name);
    EXPECT_TRUE(ir::Validate(b.step.graph).has_value());
    for (const auto& r : {Decode(b.step, 8, 4096), Prefill(b.step, 2, 1024)}) {
      EXPECT_EQ(r.analysis.totals.nodes_costed, r.analysis.totals.nodes);
      for (size_t i = 0; i < r.ledger.nodes.size(); ++i) {
        EXPECT_TRUE(r.ledger.nodes[i].costed)
            << b.step.graph.nodes[i].name << ": " << r.ledger.Reason(i);
      }
      EXPECT_GT(r.analysis.totals.time_s, 0);
    }
  }
}

TEST(LlmGraph, IdenticalLayersAreCostedOnce) {
  const Built ds = Build("deepseek-v3");
  EXPECT_EQ(ds.step.distinct_layers, 2);  // the dense layers and the MoE layers
  const Built llama = Build("llama-3.1-8b");
  EXPECT_EQ(llama.step.distinct_layers, 1);
  // llama.cpp's q4_k_m gives some layers q6_k attention-V / FFN-down: more distinct layers.
  EXPECT_GT(Build("llama-3.1-8b", {.weights = "q4_k_m"}).step.distinct_layers, 1);
}

// At batch-1 decode every weight is read once, except the embedding table (one row) and the
// routed experts (top_k of E): bytes_weights = (active − embedding + one row) · 2 bytes.
TEST(LlmGraph, BatchOneDecodeReadsTheActiveWeights) {
  for (std::string_view name : {"llama-3.1-8b", "mixtral-8x7b", "qwen2.5-7b-instruct"}) {
    SCOPED_TRACE(std::string(name));
    const Built b = Build(name);
    const llm::ModelFigures m = *llm::ComputeModelFigures(b.step);
    const llm::StepResult r = Decode(b.step, 1, 4096);
    const uint64_t row = static_cast<uint64_t>(b.spec.hidden);
    EXPECT_EQ(r.analysis.totals.bytes_weights, (m.params_active - m.params_embedding + row) * 2);
    for (size_t i = 0; i < r.analysis.nodes.size(); ++i) {
      if (r.ledger.nodes[i].mma_class != format::MmaClass::kNone) {
        EXPECT_EQ(r.analysis.nodes[i].bound, roofline::Bound::kMemory)
            << b.step.graph.nodes[i].name;
      }
    }
  }
}

TEST(LlmGraph, DistinctExpertsRiseTowardAllExperts) {
  const Built b = Build("qwen3-30b-a3b");  // 128 experts, top 8
  const size_t gate_up = NodeIndex(b.step, "layers.0.moe.experts.gate_up");
  const ir::Tensor& w = b.step.graph.tensors[b.step.graph.nodes[gate_up].inputs[1]];
  const uint64_t all = *format::TensorBytes(format::Format::kBf16,
                                            std::vector<int64_t>{128, 2 * 768, 2048});
  ASSERT_EQ(w.shape[0].constant(), 128);
  EXPECT_EQ(Decode(b.step, 1, 64).ledger.nodes[gate_up].bytes_weights, all / 128 * 8);
  for (int64_t batch : {4, 32, 256}) {
    const double distinct = 128 * (1 - std::pow(1 - 8.0 / 128, static_cast<double>(batch)));
    EXPECT_EQ(Decode(b.step, batch, 64).ledger.nodes[gate_up].bytes_weights,
              static_cast<uint64_t>(std::llround(static_cast<double>(all) * distinct / 128)));
  }
}

TEST(LlmGraph, SharedExpertsAreReadWholeBesideTopK) {
  const Built b = Build("deepseek-v3");
  const llm::StepResult r = Decode(b.step, 1, 1024);
  // Shared expert: 2048 wide, fp8 128×128 blocks.
  const size_t shared = NodeIndex(b.step, "layers.3.moe.shared_expert.gate_up_proj");
  EXPECT_EQ(r.ledger.nodes[shared].bytes_weights,
            *format::MatrixBytes(format::Format::kFp8E4m3B128x128, 2 * 2048, 7168));
  const size_t routed = NodeIndex(b.step, "layers.3.moe.experts.down");
  EXPECT_EQ(r.ledger.nodes[routed].bytes_weights,
            *format::TensorBytes(format::Format::kFp8E4m3B128x128,
                                 std::vector<int64_t>{256, 7168, 2048}) / 256 * 8);
}

TEST(LlmGraph, GatedDeltaNetStatePerSequence) {
  // value_heads · key_head_dim · value_head_dim · state bytes, plus the conv state
  // (2·key_dim + value_dim channels · (kernel − 1) in the compute dtype).
  const uint64_t next_state = 32u * 128 * 128 * 2;           // bf16: the model dtype
  const uint64_t next_conv = (2u * 16 * 128 + 32 * 128) * 3 * 2;
  const Built next = Build("qwen3-next-80b-a3b-thinking");
  const uint64_t gdn_layers = 48 - 48 / 4;
  EXPECT_EQ(llm::ComputeModelFigures(next.step)->state_bytes_per_seq,
            gdn_layers * (next_state + next_conv));
  const Built q35 = Build("qwen3.5-9b");  // mamba_ssm_dtype float32
  EXPECT_EQ(llm::ComputeModelFigures(q35.step)->state_bytes_per_seq,
            24u * (32u * 128 * 128 * 4 + (2u * 16 * 128 + 32 * 128) * 3 * 2));
  // The recurrence reads and writes its state once per step.
  const size_t rec = NodeIndex(next.step, "layers.0.linear_attn.delta_rule");
  EXPECT_EQ(Decode(next.step, 3, 100).ledger.nodes[rec].bytes_state, 2 * 3 * next_state);
}

TEST(LlmGraph, Mamba2StateAndFlops) {
  const Built b = Build("mamba-codestral-7b-v0.1");
  const size_t ssm = NodeIndex(b.step, "layers.0.mamba.ssm");
  const llm::StepResult r = Decode(b.step, 2, 10);
  EXPECT_EQ(r.ledger.nodes[ssm].flops, 4u * 2 * (128 * 64 * 128));  // 4·n·state elements
  EXPECT_EQ(llm::ComputeModelFigures(b.step)->state_bytes_per_seq,
            64u * (128 * 64 * 128 * 2 + (8192 + 2 * 8 * 128) * 3 * 2));
}

TEST(LlmGraph, CausalPrefillAttentionFlops) {
  const Built b = Build("llama-3.1-8b");
  const size_t attn = NodeIndex(b.step, "layers.0.attn.attention");
  const uint64_t p = 512, seqs = 2;
  const uint64_t pairs = p * (p + 1) / 2;  // T·P + T(T+1)/2 with P = 0 cached
  EXPECT_EQ(Prefill(b.step, 2, 512).ledger.nodes[attn].flops, 2 * pairs * seqs * 32 * (128 + 128));
  // Decode at context C: one query sees C cached keys and itself.
  EXPECT_EQ(Decode(b.step, 4, 1000).ledger.nodes[attn].flops, 2u * 1001 * 4 * 32 * 256);
}

TEST(LlmGraph, SlidingWindowCachesHoldOnlyTheWindow) {
  const Built b = Build("gpt-oss-20b");
  EXPECT_EQ(llm::KvWindowBytesPerSeq(b.step, 4096), 12u * 2 * 128 * 8 * 64 * 2);
  EXPECT_EQ(llm::KvWindowBytesPerSeq(b.step, 100), 12u * 2 * 100 * 8 * 64 * 2);
  const size_t sliding = NodeIndex(b.step, "layers.0.attn.attention");
  const llm::StepResult r = Decode(b.step, 1, 4096);
  // Reads both caches at 128 tokens: 2 · 128 · 8 · 64 · 2 bytes.
  EXPECT_EQ(r.ledger.nodes[sliding].bytes_state, 2u * 128 * 8 * 64 * 2 + 2u * 8 * 64 * 2);
}

TEST(LlmGraph, MlaTakesTheCheaperForm) {
  const Built b = Build("deepseek-v3");
  const size_t attn = NodeIndex(b.step, "layers.0.attn.attention");
  const uint64_t h = 128, kvr = 512, rope = 64, nope = 128, v = 128;
  // Decode, batch 1, context 4096: absorbed = 2·pairs·H·(kvr+rope+kvr) + 2·H·kvr·(nope+v).
  const uint64_t pairs = 4097;
  const uint64_t absorbed = 2 * pairs * h * (kvr + rope + kvr) + 2 * h * kvr * (nope + v);
  EXPECT_EQ(Decode(b.step, 1, 4096).ledger.nodes[attn].flops, absorbed);
  // Prefill of 4096 tokens: the expanded form is cheaper.
  const uint64_t t = 4096, ppairs = t * (t + 1) / 2;
  const uint64_t expanded = 2 * ppairs * h * (nope + rope + v) + 2 * t * kvr * h * (nope + v);
  EXPECT_EQ(Prefill(b.step, 1, 4096).ledger.nodes[attn].flops, expanded);
}

TEST(LlmGraph, LlamaCppFileTypesMapPerTensor) {
  const Built b = Build("llama-3.1-8b", {.weights = "q4_k_m"});
  auto format_of = [&](std::string_view name) {
    for (const ir::Tensor& t : b.step.graph.tensors) {
      if (t.name == name) return t.format;
    }
    ADD_FAILURE() << "no tensor " << name;
    return format::Format::kF32;
  };
  using format::Format;
  EXPECT_EQ(format_of("lm_head.weight"), Format::kQ6K);
  EXPECT_EQ(format_of("embed_tokens.weight"), Format::kQ4K);
  EXPECT_EQ(format_of("layers.0.attn.v_proj.weight"), Format::kQ6K);   // first eighth
  EXPECT_EQ(format_of("layers.4.attn.v_proj.weight"), Format::kQ4K);
  EXPECT_EQ(format_of("layers.6.attn.v_proj.weight"), Format::kQ6K);   // (6 − 4) % 3 == 2
  EXPECT_EQ(format_of("layers.0.mlp.down_proj.weight"), Format::kQ6K);
  EXPECT_EQ(format_of("layers.5.mlp.down_proj.weight"), Format::kQ4K);
  EXPECT_EQ(format_of("layers.0.attn.q_proj.weight"), Format::kQ4K);
  EXPECT_EQ(format_of("layers.0.input_norm.weight"), Format::kF32);
  // Published: Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf is 4.92 GB, of which a few MB are
  // metadata (tokenizer); f32 norms included.
  const double bytes = static_cast<double>(llm::ComputeModelFigures(b.step)->weight_bytes);
  EXPECT_NEAR(bytes, 4.92e9, 0.02e9);

  // gpt-oss: rows of 2880 are not a multiple of 256 -> 32-block fallbacks.
  const Built oss = Build("gpt-oss-20b", {.weights = "q4_k_m"});
  for (const ir::Tensor& t : oss.step.graph.tensors) {
    if (t.name == "layers.1.moe.experts.gate_up_proj.weight") {
      EXPECT_EQ(t.format, Format::kQ5_0);
    }
    if (t.name == "lm_head.weight") {
      EXPECT_EQ(t.format, Format::kQ8_0);
    }
  }
}

// Published GGUF file sizes (decimal GB) of llama.cpp quantizations: TheBloke/Llama-2-7B-GGUF
// Q3_K_M 3.30, Q4_0 3.83, Q4_K_M 4.08, Q5_K_M 4.78, Q6_K 5.53; TheBloke/Mistral-7B-v0.1-GGUF
// Q4_K_M 4.37. The files add under 1 MB of
// metadata (the 32,000-token vocabulary) to the tensors.
TEST(LlmGraph, LlamaCppFileSizesMatchPublishedFiles) {
  struct Case {
    std::string_view preset, ftype;
    double gb;
  };
  for (const Case& c : {Case{"llama-2-7b-hf", "q3_k_m", 3.30}, Case{"llama-2-7b-hf", "q4_0", 3.83},
                        Case{"llama-2-7b-hf", "q4_k_m", 4.08}, Case{"llama-2-7b-hf", "q5_k_m", 4.78},
                        Case{"llama-2-7b-hf", "q6_k", 5.53}, Case{"mistral-7b-v0.1", "q4_k_m", 4.37}}) {
    SCOPED_TRACE(std::string(c.preset) + " " + std::string(c.ftype));
    const Built b = Build(c.preset, {.weights = std::string(c.ftype)});
    const double file = static_cast<double>(llm::ComputeModelFigures(b.step)->weight_bytes) + 0.74e6;
    EXPECT_NEAR(file / 1e9, c.gb, 0.005);
  }
}

// llama.cpp's MXFP4_MOE file type, as ggml-org/gpt-oss-20b-GGUF and -120b-GGUF store gpt-oss
// (llama_tensor_get_type, src/llama-quant.cpp: 3-D tensors MXFP4, the output and every other
// quantized tensor Q8_0; biases, sinks, norms and the router stay F32). Published sizes:
// ggml-org/llama.cpp benches/dgx-spark.md (build 2f68ce7cf, 2025-11-02), llama-bench's size
// column, 11.27 GiB and 59.02 GiB. llama-bench prints llama_model_size, the sum of the
// tensors' bytes (llama_model_loader adds ggml_nbytes per tensor), so no metadata is in it and
// the sizes agree to the column's rounding (0.005 GiB).
TEST(LlmGraph, LlamaCppMxfp4MoeSizesGptOssFiles) {
  struct Case {
    std::string_view preset;
    uint64_t layers, experts;
    double gib;
  };
  for (const Case& c : {Case{"gpt-oss-20b", 24, 32, 11.27}, Case{"gpt-oss-120b", 36, 128, 59.02}}) {
    SCOPED_TRACE(std::string(c.preset));
    const Built b = Build(c.preset, {.weights = "mxfp4_moe"});
    // hidden 2880, 64 query heads and 8 KV heads of 64, expert intermediate 2880, vocab 201088.
    const uint64_t h = 2880, q = 64 * 64, kv = 8 * 64, inter = 2880, vocab = 201088;
    const uint64_t e = c.experts, l = c.layers;
    const uint64_t mxfp4 = l * e * (2 * inter * h + h * inter);          // gate+up, down
    const uint64_t q8_0 = l * (h * q + 2 * h * kv + q * h) + 2 * vocab * h;  // q k v o; embed, output
    const uint64_t f32 = l * (q + 2 * kv + h      // q, k, v, o biases
                              + 64                // attention sinks, one per query head
                              + e * h + e         // router weight and bias
                              + e * (2 * inter + h)  // expert biases
                              + 2 * h)            // two norms
                         + h;                     // final norm
    const uint64_t bytes = llm::ComputeModelFigures(b.step)->weight_bytes;
    EXPECT_EQ(bytes, mxfp4 / 32 * 17 + q8_0 / 32 * 34 + 4 * f32);  // 17 B and 34 B per 32
    EXPECT_NEAR(static_cast<double>(bytes) / (1ull << 30), c.gib, 0.005);
    auto format_of = [&](std::string_view name) {
      for (const ir::Tensor& t : b.step.graph.tensors) {
        if (t.name == name) return t.format;
      }
      ADD_FAILURE() << "no tensor " << name;
      return format::Format::kBf16;
    };
    EXPECT_EQ(format_of("layers.1.moe.experts.gate_up_proj.weight"), format::Format::kMxfp4);
    EXPECT_EQ(format_of("layers.1.moe.experts.down_proj.weight"), format::Format::kMxfp4);
    EXPECT_EQ(format_of("layers.1.attn.q_proj.weight"), format::Format::kQ8_0);
    EXPECT_EQ(format_of("embed_tokens.weight"), format::Format::kQ8_0);
    EXPECT_EQ(format_of("lm_head.weight"), format::Format::kQ8_0);
    EXPECT_EQ(format_of("layers.1.moe.router.weight"), format::Format::kF32);
  }
  // A dense model has no 3-D tensor: every matrix in q8_0, the bytes of --weights q8_0 (whose
  // output tensor is q8_0 too).
  EXPECT_EQ(llm::ComputeModelFigures(Build("llama-3.1-8b", {.weights = "mxfp4_moe"}).step)->weight_bytes,
            llm::ComputeModelFigures(Build("llama-3.1-8b", {.weights = "q8_0"}).step)->weight_bytes);
}

TEST(LlmGraph, RecipeBlocksThatDoNotDivideRowsAreErrorsNamingTheTensor) {
  const Preset* p = FindPreset("gpt-oss-20b");
  const ModelSpec spec = *ParseHfConfig(p->json, std::string(p->file));
  const Recipe fp8_acts = *ResolveRecipe(spec, {.activations = "fp8_e4m3_b128"});
  auto step = BuildStepGraph(spec, fp8_acts);
  ASSERT_FALSE(step.has_value());
  EXPECT_EQ(step.error().message,
            "format fp8_e4m3_b128: tensor 'layers.0.input_norm.out' has rows of 2880 elements, "
            "not a multiple of the format's 128-element block");
  const Recipe int4 = *ResolveRecipe(spec, {.weights = "int4_g128"});
  step = BuildStepGraph(spec, int4);
  ASSERT_FALSE(step.has_value());
  EXPECT_EQ(step.error().message,
            "weight format int4_g128: tensor 'layers.0.attn.qkv_proj.weight' has rows of 2880 "
            "elements, not a multiple of the format's 128-element block");
}

TEST(LlmGraph, CheckpointQuantizationIsTheDefaultRecipe) {
  const Built oss = Build("gpt-oss-120b");
  for (const ir::Tensor& t : oss.step.graph.tensors) {
    if (t.name == "layers.0.moe.experts.down_proj.weight") {
      EXPECT_EQ(t.format, format::Format::kMxfp4);
    }
    if (t.name == "layers.0.attn.qkv_proj.weight") {
      EXPECT_EQ(t.format, format::Format::kBf16);
    }
  }
  // gpt-oss-120b's checkpoint is about 65 GB (MXFP4 experts, bf16 elsewhere).
  EXPECT_NEAR(static_cast<double>(llm::ComputeModelFigures(oss.step)->weight_bytes), 65.0e9,
              1.5e9);
}

TEST(LlmGraph, DecodeSumOverGrowingContextIsExact) {
  // Across the sliding window's edge (128), for a full-attention model, and for MLA at a batch
  // where attention nodes move between memory- and compute-bound as the context grows.
  struct Case {
    std::string_view preset;
    int64_t batch, first, steps;
  };
  for (const Case& c : {Case{"gpt-oss-20b", 3, 100, 200}, Case{"llama-3.1-8b", 3, 100, 200},
                        Case{"deepseek-v3", 2048, 1, 150}}) {  // attention crosses at ~ctx 100
    SCOPED_TRACE(std::string(c.preset));
    const Built b = Build(c.preset);
    double brute = 0;
    for (int64_t ctx = c.first; ctx < c.first + c.steps; ++ctx) {
      brute += Decode(b.step, c.batch, ctx).analysis.totals.time_s;
    }
    auto sum = llm::SumDecodeSteps(b.step, H100(), c.batch, c.first, c.steps);
    ASSERT_TRUE(sum.has_value());
    EXPECT_NEAR(*sum, brute, brute * 1e-9);
  }
}

TEST(LlmGraph, MaxBatchFromMemory) {
  const Built b = Build("llama-3.1-8b");
  const llm::ModelFigures m = *llm::ComputeModelFigures(b.step);
  const uint64_t per_seq = llm::BytesPerSeq(b.step, m, 4096);
  EXPECT_EQ(per_seq, 131072u * 4096);
  const uint64_t expected = static_cast<uint64_t>(
      std::floor((80e9 * 0.9 - static_cast<double>(m.weight_bytes)) / static_cast<double>(per_seq)));
  EXPECT_EQ(llm::MaxBatch(m, per_seq, 80e9, 0.9), expected);
  EXPECT_EQ(expected, 104u);
  // A model larger than the device: nothing fits.
  const Built ds = Build("deepseek-v3");
  const llm::ModelFigures dm = *llm::ComputeModelFigures(ds.step);
  EXPECT_EQ(llm::MaxBatch(dm, llm::BytesPerSeq(ds.step, dm, 4096), 80e9, 0.9), 0u);
}

}  // namespace
}  // namespace opscope::import::hf
