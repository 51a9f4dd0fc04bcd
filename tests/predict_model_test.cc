// The kernel model and step predictions: closed forms of the formula, tile and wave
// quantization and collective traffic; properties over every shipped parameter set (more
// bytes or FLOPs never take less time); and, on real LLM step graphs for every engine and
// device the profiles serve, predictions never below the roofline (collectives: never below
// the cheapest algorithm's floor), the transparent profile equal to the roofline, and
// fallbacks said in notes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cost/ledger.h"
#include "device/device.h"
#include "import/hf_config/presets.h"
#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "predict/kernel_model.h"
#include "predict/predict.h"
#include "predict/profile.h"
#include "roofline/roofline.h"

namespace opscope::predict {
namespace {

const device::Device& Device(std::string_view id) {
  static std::vector<device::Device> cache;
  for (const auto& d : cache) {
    if (d.name == id) return d;
  }
  cache.reserve(64);
  cache.push_back(*device::FindBuiltinDevice(id));
  return cache.back();
}

KernelParams Params(KernelClass cls, double overhead_s, double bw, double compute,
                    double overlap) {
  KernelParams p;
  p.cls = cls;
  p.variant = "bf16";
  p.overhead_s = overhead_s;
  p.bandwidth_efficiency = bw;
  p.compute_efficiency = compute;
  p.overlap = overlap;
  return p;
}

KernelInput Gemm(double m, double n, double k) {
  KernelInput in;
  in.cls = KernelClass::kGemm;
  in.variant = "bf16";
  in.mma_class = format::MmaClass::kBf16;
  in.flops = 2 * m * n * k;                // 2·M·N·K
  in.bytes = 2 * (m * k + n * k + m * n);  // bf16 x, w, y once each
  in.shape.m = m;
  in.shape.n = n;
  in.shape.k = k;
  return in;
}

TEST(KernelTime, ClosedFormWithoutTiles) {
  const DeviceRates r = RatesOf(Device("h100-sxm"));
  const KernelParams p = Params(KernelClass::kGemm, 3e-6, 0.8, 0.6, 0.25);
  const KernelInput in = Gemm(4096, 4096, 4096);
  const double memory_s = in.bytes / (0.8 * 3.35e12);
  const double compute_s = in.flops / (0.6 * 989.4e12);
  // overhead + longer + (1 − overlap) · shorter
  EXPECT_DOUBLE_EQ(KernelTime(in, p, r), 3e-6 + compute_s + 0.75 * memory_s);
  // Efficiency 1, no overhead, full overlap: exactly the roofline.
  const KernelParams ideal = Params(KernelClass::kGemm, 0, 1, 1, 1);
  EXPECT_DOUBLE_EQ(KernelTime(in, ideal, r), std::max(in.bytes / 3.35e12, in.flops / 989.4e12));
}

// The depth term: a tile of depth K spends (K + k_overhead) / K of its MMA time; memory time
// (the operands streamed) is not stretched, nor is a GEMM whose K is unknown.
TEST(KernelTime, DepthOverheadStretchesTheMmaTimeOnly) {
  const DeviceRates r = RatesOf(Device("h100-sxm"));
  KernelParams p = Params(KernelClass::kGemm, 0, 0.8, 0.6, 1);
  p.k_overhead = 256;
  EXPECT_DOUBLE_EQ(DepthEfficiency(256, 256), 0.5);
  EXPECT_DOUBLE_EQ(DepthEfficiency(0, 256), 1.0);
  EXPECT_DOUBLE_EQ(DepthEfficiency(4096, 0), 1.0);
  // Compute-bound (M = N = 8192): two 128-deep k-steps and as much again outside the loop.
  const KernelInput small_k = Gemm(8192, 8192, 256);
  EXPECT_DOUBLE_EQ(KernelTime(small_k, p, r), small_k.flops / (0.6 * 0.5 * 989.4e12));
  const KernelInput deep = Gemm(8192, 8192, 8192);
  EXPECT_DOUBLE_EQ(KernelTime(deep, p, r), deep.flops / (0.6 * (8192.0 / 8448.0) * 989.4e12));
  // Memory-bound (one row): the weights' stream alone, whatever the depth.
  const KernelInput row = Gemm(1, 8192, 256);
  EXPECT_DOUBLE_EQ(KernelTime(row, p, r), row.bytes / (0.8 * 3.35e12));
  KernelInput unknown = small_k;
  unknown.shape.k = 0;
  EXPECT_DOUBLE_EQ(KernelTime(unknown, p, r), unknown.flops / (0.6 * 989.4e12));
}

TEST(TileAndWave, GemmTilesAndWavesInClosedForm) {
  // m = 100 picks the 128-row tile (smallest power of two ≥ m, at most tile_m); n = 100
  // pads to two 64-column tiles.
  const TileWave a = TileAndWave(Gemm(100, 100, 64), 128, 64, 132);
  EXPECT_DOUBLE_EQ(a.tile_eff, 100.0 * 100.0 / (128.0 * 128.0));
  EXPECT_DOUBLE_EQ(a.waves, 1);  // 2 tiles on 132 SMs
  EXPECT_DOUBLE_EQ(a.wave_eff, 2.0 / 132.0);
  // m = 8 uses the 16-row MMA atom, not the 128-row tile.
  EXPECT_DOUBLE_EQ(TileAndWave(Gemm(8, 128, 64), 128, 128, 132).tile_eff, 8.0 / 16.0);
  // 133 tiles of 128×128 on 132 SMs: two waves, the second nearly empty.
  const TileWave w = TileAndWave(Gemm(128, 133 * 128, 64), 128, 128, 132);
  EXPECT_DOUBLE_EQ(w.waves, 2);
  EXPECT_DOUBLE_EQ(w.wave_eff, 133.0 / 264.0);
  // Tile 1: no quantization at all.
  EXPECT_DOUBLE_EQ(TileAndWave(Gemm(100, 100, 64), 1, 1, 0).tile_eff, 1.0);
}

TEST(TileAndWave, CausalPrefillTilesInClosedForm) {
  KernelInput in;
  in.cls = KernelClass::kAttentionPrefill;
  in.shape.m = 256;  // 256 new tokens, nothing cached
  in.shape.keys = 0;
  in.shape.groups = 8;
  // 128×128 tiles: useful pairs T(T+1)/2; padded Br·Br·nq(nq+1)/2 with nq = 2.
  const TileWave t = TileAndWave(in, 128, 128, 0);
  EXPECT_DOUBLE_EQ(t.tile_eff, (256.0 * 257 / 2) / (128.0 * 128 * 3));
  // MLA: only the attention's share of the FLOPs is padded.
  in.shape.tiled_fraction = 0.5;
  EXPECT_DOUBLE_EQ(TileAndWave(in, 128, 128, 0).tile_eff,
                   1.0 / (0.5 / ((256.0 * 257 / 2) / (128.0 * 128 * 3)) + 0.5));
}

TEST(CollectiveTime, AlgorithmsMoveTheirTraffic) {
  // Per rank: ring and two-shot 2(n−1)/n·S (the ledger's bytes_link), one-shot (n−1)·S,
  // NVLS S in and S out.
  EXPECT_DOUBLE_EQ(AlgorithmTrafficFactor(Algorithm::kRing, 8), 1.0);
  EXPECT_DOUBLE_EQ(AlgorithmTrafficFactor(Algorithm::kOneShot, 8), 4.0);
  EXPECT_DOUBLE_EQ(AlgorithmTrafficFactor(Algorithm::kNvls, 8), 8.0 / 14.0);
  const DeviceRates r = RatesOf(Device("h100-sxm"));
  KernelInput in;
  in.cls = KernelClass::kAllReduce;
  in.group = 8;
  in.bytes_link = 2.0 * 7 / 8 * 1e6;  // a 1 MB all-reduce over 8 ranks
  CollectiveParams one_shot{KernelClass::kAllReduce, Algorithm::kOneShot, 4e-6, 1e-7, 0.5, {}};
  EXPECT_DOUBLE_EQ(CollectiveTime(in, one_shot, r), 4e-6 + 7 * 1e-7 + 7 * 1e6 / (0.5 * 450e9));
  // The floor: NVLS traffic, S per rank, at full link bandwidth.
  EXPECT_DOUBLE_EQ(CollectiveFloorTime(in, r), 1e6 / 450e9);
  in.group = 1;
  EXPECT_EQ(CollectiveTime(in, one_shot, r), 0.0);
}

// Every shipped parameter set: more bytes or more FLOPs never predict less time.
TEST(KernelTime, MonotoneInBytesAndFlopsForEveryShippedParameterSet) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> log_size(3, 12);
  for (const EngineProfile& p : BuiltinProfiles()) {
    for (const DeviceProfile& d : p.devices) {
      const DeviceRates r = RatesOf(Device(d.device));
      for (const KernelParams& k : d.kernels) {
        for (int trial = 0; trial < 20; ++trial) {
          KernelInput in = Gemm(std::pow(10, log_size(rng) / 3), 4096, 4096);
          in.cls = k.cls;
          in.bytes = std::pow(10, log_size(rng));
          in.flops = std::pow(10, log_size(rng));
          const double t = KernelTime(in, k, r);
          KernelInput more_bytes = in, more_flops = in;
          more_bytes.bytes *= 1.5;
          more_flops.flops *= 1.5;
          EXPECT_GE(KernelTime(more_bytes, k, r), t) << p.engine << " " << d.device;
          EXPECT_GE(KernelTime(more_flops, k, r), t) << p.engine << " " << d.device;
          const double roofline = std::max(in.bytes / r.dram_bytes_per_s,
                                           in.flops / r.peak_flops_per_s[4]);  // bf16
          EXPECT_GE(t, roofline) << p.engine << " " << d.device;
        }
      }
    }
  }
}

TEST(GemmVariant, FromActivationAndWeightFormats) {
  using format::Format;
  EXPECT_EQ(GemmVariant(Format::kBf16, Format::kBf16), "bf16");
  EXPECT_EQ(GemmVariant(Format::kF16, Format::kF16), "fp16");
  EXPECT_EQ(GemmVariant(Format::kFp8E4m3, Format::kFp8E4m3), "fp8");
  EXPECT_EQ(GemmVariant(Format::kFp8E4m3B128, Format::kFp8E4m3B128x128), "fp8_block");
  EXPECT_EQ(GemmVariant(Format::kNvfp4, Format::kNvfp4), "fp4");
  EXPECT_EQ(GemmVariant(Format::kBf16, Format::kMxfp4), "w4a16");
  EXPECT_EQ(GemmVariant(Format::kMxfp8, Format::kMxfp4), "w4a8");
  EXPECT_EQ(GemmVariant(Format::kBf16, Format::kInt4G128), "w4a16");
  EXPECT_EQ(GemmVariant(Format::kF16, Format::kQ4K), "w4a16");
  EXPECT_EQ(GemmVariant(Format::kF32, Format::kQ8_0), "w8a16");
  EXPECT_EQ(GemmVariant(Format::kFp8E4m3, Format::kBf16), "bf16");  // a wider weight widens
  EXPECT_EQ(AttentionVariant(Format::kFp8E4m3), "fp8_kv");
  EXPECT_EQ(AttentionVariant(Format::kBf16), "bf16");
}

// ---- Step graphs ----------------------------------------------------------------------------

struct Step {
  import::hf::StepGraph step;
  cost::Ledger ledger;
};

import::hf::StepGraph Graph(std::string_view preset, const import::hf::DeviceShard& shard = {},
                            const import::hf::RecipeOptions& options = {}) {
  const import::hf::Preset* p = import::hf::FindPreset(preset);
  EXPECT_NE(p, nullptr) << preset;
  auto spec = import::hf::ParseHfConfig(p->json, std::string(p->file));
  EXPECT_TRUE(spec.has_value()) << spec.error().message;
  auto recipe = import::hf::ResolveRecipe(*spec, options);
  EXPECT_TRUE(recipe.has_value()) << recipe.error().message;
  auto step = import::hf::BuildStepGraph(*spec, *recipe, shard);
  EXPECT_TRUE(step.has_value()) << step.error().message;
  return std::move(*step);
}

cost::Workload Decode(int64_t batch, int64_t ctx) {
  return {{{"n", batch}, {"seqs", batch}, {"ctx", ctx}}};
}
cost::Workload Prefill(int64_t batch, int64_t prompt) {
  return {{{"n", batch * prompt}, {"seqs", batch}, {"ctx", 0}}};
}

const std::vector<std::pair<std::string, import::hf::StepGraph>>& Graphs() {
  static const auto graphs = [] {
    std::vector<std::pair<std::string, import::hf::StepGraph>> g;
    g.emplace_back("llama-3.1-8b", Graph("llama-3.1-8b"));
    g.emplace_back("qwen3-30b-a3b", Graph("qwen3-30b-a3b"));
    g.emplace_back("deepseek-v3", Graph("deepseek-v3"));
    import::hf::DeviceShard tp2;
    tp2.tp = 2;
    g.emplace_back("llama-3.1-8b tp2", Graph("llama-3.1-8b", tp2));
    return g;
  }();
  return graphs;
}

// Every served device of every profile, on every graph, decode and prefill.
TEST(PredictStep, NeverBelowTheRooflineOnRealStepGraphs) {
  size_t checked = 0;
  for (const EngineProfile& p : BuiltinProfiles()) {
    if (p.transparent) continue;
    for (const DeviceProfile& entry : p.devices) {
      std::vector<std::string> ids = entry.applies_to;
      ids.push_back(entry.device);
      for (const std::string& id : ids) {
        const device::Device& dev = Device(id);
        for (const auto& [name, g] : Graphs()) {
          for (const cost::Workload& w : {Decode(8, 2048), Prefill(1, 512)}) {
            auto ledger = cost::BuildLedger(g.graph, w);
            ASSERT_TRUE(ledger.has_value()) << ledger.error().message;
            auto roof = roofline::Estimate(g.graph, *ledger, dev);
            if (!roof) continue;  // a class the device has no peak for (fp8 on A100)
            auto pred = PredictStep(g.graph, *ledger, *roof, dev, p);
            ASSERT_TRUE(pred.has_value()) << pred.error().message;
            const std::string where = p.engine + " on " + id + ": " + name;
            double sum = 0;
            for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
              const double t = pred->node_time_s[i];
              ASSERT_TRUE(std::isfinite(t)) << where << " " << g.graph.nodes[i].name;
              sum += t;
              if (ledger->nodes[i].collective) {
                EXPECT_GT(t, 0) << where << " " << g.graph.nodes[i].name;
              } else {
                EXPECT_GE(t, roof->nodes[i].time_s * (1 - 1e-12))
                    << where << " " << g.graph.nodes[i].name;
              }
            }
            EXPECT_NEAR(pred->kernels_s, sum, 1e-12 * sum) << where;
            EXPECT_DOUBLE_EQ(pred->step_time_s, pred->kernels_s + pred->overhead_s) << where;
            EXPECT_GE(pred->overhead_s, 0) << where;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 300u);
}

// NCCL's NVLS parameters (DeviceProfile::nccl_nvls) are used on the device they were fitted on
// only: H100 NVL and H100 PCIe, served by the H100 SXM entry through applies_to, have no NVLink
// switch, and their all-reduces take the other algorithms — the same times as a profile with no
// nvls at all — while on H100 SXM NVLS is in the minimum (here made cheap, so it wins).
TEST(PredictStep, NvlsOnlyOnTheDeviceItWasFittedOn) {
  const EngineProfile shipped = **FindBuiltinProfile("trtllm");
  EngineProfile cheap = shipped, none = shipped;
  for (EngineProfile* p : {&cheap, &none}) {
    for (DeviceProfile& d : p->devices) {
      if (d.device != "h100-sxm") continue;
      std::erase_if(d.collectives,
                    [](const CollectiveParams& c) { return c.algorithm == Algorithm::kNvls; });
      if (p == &none) continue;
      CollectiveParams nvls;
      nvls.cls = KernelClass::kAllReduce;
      nvls.algorithm = Algorithm::kNvls;
      nvls.latency_s = 1e-6;
      nvls.bandwidth_efficiency = 1.0;
      d.collectives.push_back(nvls);
    }
  }
  const auto& [name, g] = Graphs()[3];  // llama-3.1-8b at tp 2
  ASSERT_EQ(name, "llama-3.1-8b tp2");
  for (const char* id : {"h100-sxm", "h100-nvl", "h100-pcie"}) {
    const device::Device& dev = Device(id);
    auto ledger = cost::BuildLedger(g.graph, Prefill(1, 4096));
    ASSERT_TRUE(ledger.has_value());
    auto roof = roofline::Estimate(g.graph, *ledger, dev);
    ASSERT_TRUE(roof.has_value());
    auto with = PredictStep(g.graph, *ledger, *roof, dev, cheap);
    auto without = PredictStep(g.graph, *ledger, *roof, dev, none);
    ASSERT_TRUE(with && without) << id;
    size_t collectives = 0;
    for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
      if (with->node_class[i] != KernelClass::kAllReduce) continue;
      ++collectives;
      if (std::string(id) == "h100-sxm") {
        EXPECT_LT(with->node_time_s[i], without->node_time_s[i]) << id << " " << g.graph.nodes[i].name;
      } else {
        EXPECT_DOUBLE_EQ(with->node_time_s[i], without->node_time_s[i]) << id;
      }
    }
    EXPECT_GT(collectives, 0u) << id;
  }
}

// A longer context or a larger batch never predicts a shorter decode step (more KV bytes,
// more rows), for every fitted engine on its devices.
TEST(PredictStep, DecodeStepGrowsWithContextAndBatch) {
  for (std::string_view engine : {"trtllm", "vllm", "sglang", "llama.cpp"}) {
    const EngineProfile& p = **FindBuiltinProfile(engine);
    for (const DeviceProfile& entry : p.devices) {
      const device::Device& dev = Device(entry.device);
      for (const auto& [name, g] : Graphs()) {
        double last = 0;
        for (int64_t ctx : {128, 1024, 8192, 32768}) {
          auto ledger = cost::BuildLedger(g.graph, Decode(4, ctx));
          auto roof = roofline::Estimate(g.graph, *ledger, dev);
          if (!roof) break;
          const double t = PredictStep(g.graph, *ledger, *roof, dev, p)->step_time_s;
          EXPECT_GE(t, last) << engine << " " << entry.device << " " << name << " ctx " << ctx;
          last = t;
        }
        last = 0;
        for (int64_t batch : {1, 2, 8, 32, 128}) {
          auto ledger = cost::BuildLedger(g.graph, Decode(batch, 2048));
          auto roof = roofline::Estimate(g.graph, *ledger, dev);
          if (!roof) break;
          const double t = PredictStep(g.graph, *ledger, *roof, dev, p)->step_time_s;
          EXPECT_GE(t, last) << engine << " " << entry.device << " " << name << " batch "
                             << batch;
          last = t;
        }
      }
    }
  }
}

TEST(PredictStep, TransparentProfileIsTheRoofline) {
  const EngineProfile& roofline = **FindBuiltinProfile("roofline");
  for (const auto& [name, g] : Graphs()) {
    auto ledger = cost::BuildLedger(g.graph, Decode(4, 1024));
    ASSERT_TRUE(ledger.has_value());
    auto roof = roofline::Estimate(g.graph, *ledger, Device("b200"));
    ASSERT_TRUE(roof.has_value());
    auto pred = PredictStep(g.graph, *ledger, *roof, Device("b200"), roofline);
    ASSERT_TRUE(pred.has_value());
    for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
      EXPECT_EQ(pred->node_time_s[i], roof->nodes[i].time_s) << name;
    }
    EXPECT_EQ(pred->overhead_s, 0);
    EXPECT_NEAR(pred->step_time_s, roof->totals.time_s, 1e-12 * roof->totals.time_s) << name;
    EXPECT_TRUE(pred->notes.empty());
  }
}

TEST(PredictStep, DecodeAttentionIsClassedByQueryRowsAfterACache) {
  const auto& g = Graphs()[0].second;  // llama-3.1-8b
  const EngineProfile& vllm = **FindBuiltinProfile("vllm");
  auto count = [&](const cost::Workload& w, KernelClass cls) {
    auto ledger = cost::BuildLedger(g.graph, w);
    auto roof = roofline::Estimate(g.graph, *ledger, Device("h100-sxm"));
    auto pred = PredictStep(g.graph, *ledger, *roof, Device("h100-sxm"), vllm);
    size_t n = 0;
    for (KernelClass c : pred->node_class) n += c == cls;
    return n;
  };
  EXPECT_EQ(count(Decode(4, 1024), KernelClass::kAttentionDecode), 32u);  // 32 layers
  EXPECT_EQ(count(Prefill(1, 8), KernelClass::kAttentionPrefill), 32u);   // nothing cached
}

TEST(PredictStep, MissingVariantsAndClassesAreSaidInNotes) {
  // A profile with only a bf16 GEMM: DeepSeek-V3's fp8 weights under bf16 activations
  // (--activations bf16; the checkpoint's own dynamic scheme runs fp8 activations; w8a16)
  // borrow it, MLA decode falls back to attention and then the memory
  // class, which this entry lacks too: the roofline, said.
  EngineProfile p;
  p.engine = "tiny";
  DeviceProfile d;
  d.device = "h100-sxm";
  d.basis = "public";
  d.source = "test";
  d.kernels.push_back(Params(KernelClass::kGemm, 1e-6, 0.8, 0.7, 1));
  p.devices.push_back(d);
  import::hf::StepGraph g =
      Graph("deepseek-v3", {}, {.activations = "bf16"});  // fp8 block-scaled weights, MLA
  auto ledger = cost::BuildLedger(g.graph, Decode(1, 512));
  auto roof = roofline::Estimate(g.graph, *ledger, Device("h100-sxm"));
  ASSERT_TRUE(roof.has_value());
  auto pred = PredictStep(g.graph, *ledger, *roof, Device("h100-sxm"), p);
  ASSERT_TRUE(pred.has_value()) << pred.error().message;
  std::string all;
  for (const std::string& n : pred->notes) all += n + "\n";
  EXPECT_NE(all.find("engine 'tiny' on 'h100-sxm': no gemm parameters for variant 'w8a16', "
                     "predicted with gemm 'bf16'"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("no mla_decode parameters at all: predicted at the roofline"),
            std::string::npos)
      << all;
}

TEST(PredictStep, CostTwinsShareTheirTime) {
  const auto& g = Graphs()[1].second;  // qwen3-30b-a3b: 48 identical layers
  const EngineProfile& sglang = **FindBuiltinProfile("sglang");
  auto ledger = cost::BuildLedger(g.graph, Decode(16, 4096));
  auto roof = roofline::Estimate(g.graph, *ledger, Device("h200"));
  auto pred = PredictStep(g.graph, *ledger, *roof, Device("h200"), sglang);
  ASSERT_TRUE(pred.has_value());
  size_t twins = 0;
  for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
    const int32_t t = g.graph.nodes[i].cost_twin;
    if (t < 0) continue;
    ++twins;
    EXPECT_EQ(pred->node_time_s[i], pred->node_time_s[t]) << g.graph.nodes[i].name;
  }
  EXPECT_GT(twins, 100u);
}

// MLA's q_a and kv_a projections (ir::kGemmGroupAttr) run as one GEMM in the engines: the pair
// launches one kernel, and the call's time is shared by output width (the two members' inputs
// differ only in which one's activation bytes are scaled, under 1 % at decode). Without the
// group attribute every Linear launches its own kernel.
TEST(PredictStep, MlaDownProjectionsRunAsOneGemm) {
  const import::hf::StepGraph& g = Graphs()[2].second;  // deepseek-v3: 61 MLA layers, q LoRA
  ASSERT_EQ(Graphs()[2].first, "deepseek-v3");
  const EngineProfile& sglang = **FindBuiltinProfile("sglang");
  const device::Device& dev = Device("h200");
  auto ledger = cost::BuildLedger(g.graph, Decode(16, 4096));
  auto roof = roofline::Estimate(g.graph, *ledger, dev);
  auto grouped = PredictStep(g.graph, *ledger, *roof, dev, sglang);
  ir::Graph plain = g.graph;
  size_t members = 0;
  for (ir::Node& n : plain.nodes) {
    const auto before = n.attrs.size();
    std::erase_if(n.attrs, [](const auto& a) { return a.first == ir::kGemmGroupAttr; });
    members += before - n.attrs.size();
  }
  ASSERT_EQ(members, 2u * 61);
  auto apart = PredictStep(plain, *ledger, *roof, dev, sglang);
  ASSERT_TRUE(grouped.has_value() && apart.has_value());
  EXPECT_EQ(apart->kernels - grouped->kernels, 61u);  // one launch per layer's pair
  size_t pairs = 0;
  for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
    const std::string& name = g.graph.nodes[i].name;
    if (!name.ends_with("attn.q_a_proj")) continue;
    const std::string kv = name.substr(0, name.size() - 8) + "kv_a_proj";  // 8: "q_a_proj"
    const auto it = std::find_if(g.graph.nodes.begin(), g.graph.nodes.end(),
                                 [&](const ir::Node& n) { return n.name == kv; });
    ASSERT_NE(it, g.graph.nodes.end()) << kv;
    const size_t j = static_cast<size_t>(it - g.graph.nodes.begin());
    const double q_width = 1536, kv_width = 512 + 64;  // q_lora_rank; kv_lora_rank + rope
    EXPECT_NEAR(grouped->node_time_s[i] / grouped->node_time_s[j], q_width / kv_width,
                0.01 * q_width / kv_width)
        << name;
    ++pairs;
  }
  EXPECT_EQ(pairs, 61u);
}

TEST(PredictStep, StepOverheadsFollowTheOptions) {
  const auto& g = Graphs()[0].second;
  const EngineProfile& vllm = **FindBuiltinProfile("vllm");
  auto ledger = cost::BuildLedger(g.graph, Decode(1, 128));
  auto roof = roofline::Estimate(g.graph, *ledger, Device("h100-sxm"));
  auto graphs = PredictStep(g.graph, *ledger, *roof, Device("h100-sxm"), vllm);
  auto eager = PredictStep(g.graph, *ledger, *roof, Device("h100-sxm"), vllm,
                           {.cuda_graphs = false, .samples = false});
  ASSERT_TRUE(graphs.has_value() && eager.has_value());
  const StepOverheads& o = vllm.overheads;
  EXPECT_DOUBLE_EQ(graphs->overhead_s, o.step_s + o.sampling_s);
  // Without graphs the CPU issues each kernel in launch_s ahead of the device: the step takes
  // the slower of the two, the overhead holds the CPU's excess.
  const double issue_s = o.launch_s * static_cast<double>(eager->kernels);
  EXPECT_DOUBLE_EQ(eager->overhead_s, o.step_s + std::max(0.0, issue_s - eager->kernels_s));
  EXPECT_GT(eager->kernels, 32u * 5);  // several kernels per layer
}

// An eager step is max(device, CPU) + the fixed costs: at a launch cost far above any kernel's
// time the CPU sets the step (kernels · launch_s), at a negligible one the device does.
// A long prompt's MLA is a causal attention of head 192 / value 128 (the MHA form engines serve
// a fresh prompt in), compute-bound at 8k tokens: FlashAttention-3 runs head-128 forward at
// about 75 % of H100's BF16 peak (Shah et al., 2024), TensorRT-LLM's context MLA in the
// calibration set at about 60 % of H200's. So no fitted profile may put it far from its
// roofline: 2.5x (40 % of peak) is a generous bound. SGLang's Hopper, L40S and RTX PRO 6000 rows
// time the absorbed form (head 576 / value 512, 3.4x the FLOPs), and fitted to them this was 4.4x
// and more.
TEST(PredictStep, LongPromptMlaRunsNearTheTensorCorePeak) {
  const import::hf::StepGraph& g = Graphs()[2].second;
  ASSERT_EQ(Graphs()[2].first, "deepseek-v3");
  auto ledger = cost::BuildLedger(g.graph, Prefill(1, 8192));
  ASSERT_TRUE(ledger.has_value()) << ledger.error().message;
  size_t checked = 0;
  for (std::string_view engine : {"trtllm", "vllm", "sglang"}) {
    const EngineProfile& p = **FindBuiltinProfile(engine);
    for (std::string_view id : {"h100-sxm", "h200", "b200", "gb200", "l40s", "rtx-pro-6000"}) {
      const device::Device& dev = Device(id);
      auto roof = roofline::Estimate(g.graph, *ledger, dev);
      ASSERT_TRUE(roof.has_value());
      auto pred = PredictStep(g.graph, *ledger, *roof, dev, p);
      ASSERT_TRUE(pred.has_value()) << pred.error().message;
      double predicted_s = 0, roofline_s = 0;
      for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
        if (g.graph.nodes[i].op != ir::OpKind::kPagedAttention) continue;
        predicted_s += pred->node_time_s[i];
        roofline_s += roof->nodes[i].time_s;
      }
      ASSERT_GT(roofline_s, 0) << engine << " on " << id;
      EXPECT_LT(predicted_s / roofline_s, 2.5) << engine << " on " << id;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 18u);
}

TEST(PredictStep, EagerStepIsTheSlowerOfDeviceAndCpu) {
  const auto& g = Graphs()[0].second;
  EngineProfile slow_cpu = **FindBuiltinProfile("sglang");
  slow_cpu.overheads.launch_s = 1e-3;  // 1 ms per kernel: above every kernel of a decode step
  EngineProfile fast_cpu = slow_cpu;
  fast_cpu.overheads.launch_s = 1e-12;
  auto ledger = cost::BuildLedger(g.graph, Decode(1, 128));
  auto roof = roofline::Estimate(g.graph, *ledger, Device("h100-sxm"));
  const StepOptions eager{.cuda_graphs = false, .samples = false};
  auto cpu_bound = PredictStep(g.graph, *ledger, *roof, Device("h100-sxm"), slow_cpu, eager);
  auto device_bound = PredictStep(g.graph, *ledger, *roof, Device("h100-sxm"), fast_cpu, eager);
  ASSERT_TRUE(cpu_bound.has_value() && device_bound.has_value());
  const double step_s = slow_cpu.overheads.step_s;
  EXPECT_DOUBLE_EQ(cpu_bound->step_time_s,
                   step_s + 1e-3 * static_cast<double>(cpu_bound->kernels));
  EXPECT_DOUBLE_EQ(device_bound->step_time_s, device_bound->kernels_s + step_s);
  // The kernels themselves do not change with the CPU.
  EXPECT_DOUBLE_EQ(cpu_bound->kernels_s, device_bound->kernels_s);
}

// defaults.mma_16bit "fp16" times 16-bit float matmuls at the fp16 peak: on a GeForce part
// (fp16 with FP16 accumulate = 2 × bf16) a compute-bound GEMM step is faster, on a part whose
// fp16 and bf16 peaks are equal nothing changes.
TEST(PredictStep, Fp16MmaClassUsesTheFp16Peak) {
  const auto& g = Graphs()[0].second;
  EngineProfile recipe = **FindBuiltinProfile("llama.cpp");
  recipe.defaults.mma_16bit = "recipe";
  EngineProfile fp16 = recipe;
  fp16.defaults.mma_16bit = "fp16";
  auto ledger = cost::BuildLedger(g.graph, Prefill(1, 512));  // compute-bound GEMMs
  for (const char* id : {"rtx-3090", "a100-80g"}) {
    auto roof = roofline::Estimate(g.graph, *ledger, Device(id));
    auto a = PredictStep(g.graph, *ledger, *roof, Device(id), recipe);
    auto b = PredictStep(g.graph, *ledger, *roof, Device(id), fp16);
    ASSERT_TRUE(a.has_value() && b.has_value()) << id;
    if (std::string(id) == "rtx-3090") {
      EXPECT_LT(b->kernels_s, a->kernels_s) << id;
    } else {
      EXPECT_DOUBLE_EQ(b->kernels_s, a->kernels_s) << id;
    }
  }
}

// An engine's fused MoE call, as its kernel table times it, runs some of the layer's parts
// beside the two grouped GEMMs (EngineProfile::moe_call); the grouped_gemm parameters fitted to
// whole calls hold their time, so those parts are predicted at their roofline (not twice),
// while the call still launches them (the kernel count, which an eager step's CPU pays, stays).
TEST(PredictStep, PartsOfTheFusedMoeCallAreNotTimedTwice) {
  import::hf::DeviceShard ep;
  ep.tp = 8;
  ep.ep = 8;
  ep.moe_group = 8;  // one tensor-parallel group holding every token: no dispatch, a gather
  const import::hf::StepGraph g = Graph("deepseek-v3", ep);
  const std::set<std::string> routing = {"scores", "topk"};
  size_t tagged = 0;
  for (const ir::Node& n : g.graph.nodes) {
    const auto part = n.StringAttr(ir::kMoePartAttr);
    const size_t at = n.name.find(".moe.");
    const std::string last = at == std::string::npos ? n.name : n.name.substr(at + 5);
    if (part) ++tagged;
    std::optional<std::string_view> want;
    if (routing.count(last) != 0) want = "routing";
    if (last == "experts.gather") want = "permute";
    if (last == "experts.act") want = "activation";
    if (last == "experts.combine") want = "combine";
    if (want) {
      EXPECT_EQ(part, want) << n.name;
    }
    if (n.op == ir::OpKind::kRouter || n.op == ir::OpKind::kExpertGateUp ||
        n.op == ir::OpKind::kExpertDown || n.name.find("shared_expert") != std::string::npos) {
      EXPECT_FALSE(part.has_value()) << n.name;
    }
  }
  EXPECT_EQ(tagged, 58u * 5);  // DeepSeek-V3's 58 MoE layers: scores, topk, gather, act, combine

  const device::Device& dev = Device("h200");
  auto ledger = cost::BuildLedger(g.graph, Decode(8, 2048));
  ASSERT_TRUE(ledger.has_value()) << ledger.error().message;
  auto roof = roofline::Estimate(g.graph, *ledger, dev);
  ASSERT_TRUE(roof.has_value());
  const EngineProfile& trtllm = **FindBuiltinProfile("trtllm");
  ASSERT_EQ(trtllm.moe_call.parts.size(), 4u);
  EngineProfile separate = trtllm;
  separate.moe_call.parts.clear();
  auto inside = PredictStep(g.graph, *ledger, *roof, dev, trtllm);
  auto apart = PredictStep(g.graph, *ledger, *roof, dev, separate);
  ASSERT_TRUE(inside.has_value() && apart.has_value());
  double saved_s = 0;
  for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
    if (g.graph.nodes[i].StringAttr(ir::kMoePartAttr)) {
      EXPECT_DOUBLE_EQ(inside->node_time_s[i], roof->nodes[i].time_s) << g.graph.nodes[i].name;
      EXPECT_GT(apart->node_time_s[i], roof->nodes[i].time_s) << g.graph.nodes[i].name;
      saved_s += apart->node_time_s[i] - inside->node_time_s[i];
    } else {
      EXPECT_DOUBLE_EQ(inside->node_time_s[i], apart->node_time_s[i]) << g.graph.nodes[i].name;
    }
  }
  EXPECT_EQ(inside->kernels, apart->kernels);
  EXPECT_NEAR(apart->kernels_s - inside->kernels_s, saved_s, 1e-12);
  // Said in the prediction's notes, once.
  const auto says_so = [](const std::vector<std::string>& notes) {
    return std::count_if(notes.begin(), notes.end(), [](const std::string& n) {
      return n.find("fused MoE call's routing, permute, activation and combine") !=
             std::string::npos;
    });
  };
  EXPECT_EQ(says_so(inside->notes), 1);
  EXPECT_EQ(says_so(apart->notes), 0);
  // Each part keeps at least the memory class's fixed overhead when timed apart.
  auto entry = FindDeviceProfile(trtllm, dev);
  ASSERT_TRUE(entry.has_value());
  const KernelParams* memory = (*entry)->Find(KernelClass::kMemory, "default");
  ASSERT_NE(memory, nullptr);
  EXPECT_GE(saved_s, static_cast<double>(tagged) * memory->overhead_s * 0.99);

  // Where the device's grouped_gemm parameters are not fitted to whole calls (a public or
  // estimated entry), the parts keep kernels of their own.
  EngineProfile unfitted = trtllm;
  for (DeviceProfile& d : unfitted.devices) {
    for (KernelParams& k : d.kernels) k.fit = {};
  }
  auto estimated = PredictStep(g.graph, *ledger, *roof, dev, unfitted);
  ASSERT_TRUE(estimated.has_value());
  for (size_t i = 0; i < g.graph.nodes.size(); ++i) {
    if (g.graph.nodes[i].StringAttr(ir::kMoePartAttr)) {
      EXPECT_DOUBLE_EQ(estimated->node_time_s[i], apart->node_time_s[i]);
    }
  }
}

}  // namespace
}  // namespace opscope::predict
