// Engine profiles as data: every built-in profile loads, names only known devices, carries its
// sources and physically possible parameters, covers the devices the issue asks for, and
// round-trips through its JSON writer; malformed profiles are one-line errors naming the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <span>
#include <string>

#include "device/device.h"
#include "predict/profile.h"

namespace opscope::predict {
namespace {

const EngineProfile& Builtin(std::string_view engine) {
  auto p = FindBuiltinProfile(engine);
  EXPECT_TRUE(p.has_value()) << engine;
  return **p;
}

TEST(BuiltinProfiles, EveryEngineTheIssueNamesExists) {
  std::set<std::string> names;
  for (const EngineProfile& p : BuiltinProfiles()) names.insert(p.engine);
  EXPECT_EQ(names, (std::set<std::string>{"roofline", "vllm", "sglang", "trtllm", "llama.cpp"}));
  EXPECT_TRUE(Builtin("roofline").transparent);
}

TEST(BuiltinProfiles, EveryDeviceIdExistsAndEveryEntryHasASource) {
  for (const EngineProfile& p : BuiltinProfiles()) {
    EXPECT_GE(p.defaults.source.size(), 20u) << p.engine;
    EXPECT_GE(p.overheads.source.size(), 20u) << p.engine;
    for (const DeviceProfile& d : p.devices) {
      EXPECT_TRUE(device::FindBuiltinDevice(d.device).has_value()) << p.engine << " " << d.device;
      for (const std::string& id : d.applies_to) {
        EXPECT_TRUE(device::FindBuiltinDevice(id).has_value()) << p.engine << " " << id;
      }
      EXPECT_GE(d.source.size(), 60u) << p.engine << " " << d.device;
      EXPECT_FALSE(d.kernels.empty()) << p.engine << " " << d.device;
    }
    for (const std::string& id : p.default_for) {
      EXPECT_TRUE(device::FindBuiltinDevice(id).has_value()) << p.engine << " " << id;
    }
  }
}

// Efficiencies ≤ 1 and non-negative overheads are what make predictions never beat the
// roofline; the loader enforces them, and the shipped numbers are also physically sensible.
TEST(BuiltinProfiles, ParametersArePhysical) {
  for (const EngineProfile& p : BuiltinProfiles()) {
    for (const DeviceProfile& d : p.devices) {
      for (const KernelParams& k : d.kernels) {
        const std::string where = p.engine + " " + d.device + " " +
                                  std::string(KernelClassName(k.cls)) + " " + k.variant;
        EXPECT_GT(k.bandwidth_efficiency, 0.01) << where;
        EXPECT_LE(k.bandwidth_efficiency, 1.0) << where;
        EXPECT_GT(k.compute_efficiency, 0.0) << where;
        EXPECT_LE(k.compute_efficiency, 1.0) << where;
        EXPECT_GE(k.overhead_s, 0.0) << where;
        EXPECT_LT(k.overhead_s, 1e-3) << where;  // a kernel's fixed cost is microseconds
        EXPECT_GE(k.overlap, 0.0) << where;
        EXPECT_LE(k.overlap, 1.0) << where;
        // The depth term: GEMM classes only, at most 16 k-steps of 128 (the fit's bound).
        const bool gemm = k.cls == KernelClass::kGemm || k.cls == KernelClass::kGroupedGemm;
        EXPECT_GE(k.k_overhead, 0.0) << where;
        EXPECT_LE(k.k_overhead, gemm ? 2048.0 : 0.0) << where;
        if (k.fit.samples > 0) {
          EXPECT_LE(k.fit.median_abs_error, k.fit.p90_abs_error) << where;
        }
      }
      for (const CollectiveParams& c : d.collectives) {
        EXPECT_GT(c.bandwidth_efficiency, 0.0);
        EXPECT_LE(c.bandwidth_efficiency, 1.0);
        EXPECT_LT(c.latency_s, 1e-3) << p.engine << " " << d.device;
      }
    }
  }
}

TEST(BuiltinProfiles, CoverTheDevicesTheIssueAsksFor) {
  const auto serves = [](const EngineProfile& p, std::string_view id) {
    const auto d = device::FindBuiltinDevice(id);
    return d.has_value() && FindDeviceProfile(p, *d).has_value();
  };
  for (std::string_view engine : {"trtllm", "vllm", "sglang"}) {
    for (std::string_view id : {"h100-sxm", "h200", "b200", "b300", "gb200", "gb300", "a100-80g",
                                "l40s", "rtx-pro-6000"}) {
      EXPECT_TRUE(serves(Builtin(engine), id)) << engine << " " << id;
    }
  }
  for (std::string_view engine : {"vllm", "sglang"}) {
    for (std::string_view id : {"mi300x", "mi325x", "mi355x"}) {
      EXPECT_TRUE(serves(Builtin(engine), id)) << engine << " " << id;
    }
  }
  for (std::string_view id : {"m1", "m1-max", "m2-ultra", "m3", "m3-max", "m4", "m4-max",
                              "rtx-3090", "rtx-4090", "rtx-5090", "a100-80g", "h100-sxm", "gb10",
                              "jetson-agx-orin"}) {
    EXPECT_TRUE(serves(Builtin("llama.cpp"), id)) << id;
  }
  // The transparent profile serves every device.
  for (const device::Device& d : device::BuiltinDevices()) {
    EXPECT_TRUE(FindDeviceProfile(Builtin("roofline"), d).has_value()) << d.name;
  }
}

// llama.cpp's profile: a device with rows in the scoreboard inputs has its own entry computed
// from them (basis public), and every device llama.cpp is the default engine for is served.
TEST(BuiltinProfiles, LlamaCppHasAnEntryPerScoreboardDeviceAndServesItsDefaults) {
  const EngineProfile& llama = Builtin("llama.cpp");
  std::ifstream in(OPSCOPE_SOURCE_DIR "/data/engines/inputs/llama.cpp-scoreboard.csv");
  ASSERT_TRUE(in.good());
  std::string line;
  std::getline(in, line);  // header
  std::set<std::string> scoreboard;
  while (std::getline(in, line)) {
    if (!line.empty()) scoreboard.insert(line.substr(0, line.find(',')));
  }
  EXPECT_GE(scoreboard.size(), 20u);
  for (const std::string& id : scoreboard) {
    const auto own = std::find_if(llama.devices.begin(), llama.devices.end(),
                                  [&](const DeviceProfile& d) { return d.device == id; });
    ASSERT_NE(own, llama.devices.end()) << id;
    EXPECT_EQ(own->basis, "public") << id;
  }
  for (const std::string& id : llama.default_for) {
    EXPECT_TRUE(FindDeviceProfile(llama, *device::FindBuiltinDevice(id)).has_value()) << id;
  }
}

// Jetson AGX Orin's llama.cpp entry: decode from its own public figure (Jetson AI Lab: a 4B
// Q4_K_M file of 2.824 GB at 43 tokens/s over 204.8 GB/s, 0.593 of bandwidth), and, that
// source publishing no prompt rate, the prompt's compute efficiency of GB10's same weight type
// (compute_from in data/engines/inputs/llama.cpp.json).
TEST(BuiltinProfiles, LlamaCppJetsonDecodesByItsOwnRowAndPromptsByGb10s) {
  const EngineProfile& llama = Builtin("llama.cpp");
  const auto entry = [&](std::string_view id) {
    return *FindDeviceProfile(llama, *device::FindBuiltinDevice(id));
  };
  const DeviceProfile* jetson = entry("jetson-agx-orin");
  const DeviceProfile* gb10 = entry("gb10");
  ASSERT_EQ(jetson->device, "jetson-agx-orin");  // its own entry, not GB10's family
  const KernelParams* q4 = jetson->Find(KernelClass::kGemm, "w4a16");
  ASSERT_NE(q4, nullptr);
  EXPECT_NEAR(q4->bandwidth_efficiency, 43 * 2.824e9 / 204.8e9, 1e-4);
  EXPECT_EQ(q4->compute_efficiency, gb10->Find(KernelClass::kGemm, "w4a16")->compute_efficiency);
}

TEST(DefaultEngine, FollowsTheIssuesRule) {
  const auto engine_of = [](std::string_view id) {
    return std::string(DefaultEngine(*device::FindBuiltinDevice(id)));
  };
  EXPECT_EQ(engine_of("h100-sxm"), "vllm");
  EXPECT_EQ(engine_of("b200"), "vllm");
  EXPECT_EQ(engine_of("mi300x"), "vllm");
  EXPECT_EQ(engine_of("m4-max"), "llama.cpp");
  EXPECT_EQ(engine_of("rtx-4090"), "llama.cpp");
  EXPECT_EQ(engine_of("rtx-5090"), "llama.cpp");
  EXPECT_EQ(engine_of("jetson-agx-orin"), "llama.cpp");
  EXPECT_EQ(engine_of("gb10"), "llama.cpp");
  EXPECT_EQ(engine_of("tpu-v5e"), "roofline");
  EXPECT_EQ(engine_of("gaudi3"), "roofline");
  // NVIDIA datacenter and professional parts without a kernel table of their own are served by
  // a family entry (derived), not handed to llama.cpp.
  for (const char* id : {"h20", "a10g", "a40", "rtx-a6000", "l4", "h100-pcie", "gb300"}) {
    EXPECT_EQ(engine_of(id), "vllm") << id;
  }
}

// vLLM and SGLang size the chunk of prompt tokens by the GPU's memory; vLLM's A100 is the
// exception by name (2048 at 80 GB). The figures are the engines' server_args rules.
TEST(ChunkedPrefillTokens, FollowsTheEnginesMemoryRules) {
  const auto chunk = [](std::string_view engine, std::string_view id) {
    const device::Device d = *device::FindBuiltinDevice(id);  // a copy: it returns by value
    const EngineProfile& p = Builtin(engine);
    auto entry = FindDeviceProfile(p, d);
    EXPECT_TRUE(entry.has_value()) << engine << " " << id;
    return ChunkedPrefillTokens(p, **entry, d);
  };
  EXPECT_EQ(chunk("sglang", "rtx-4090"), 2048);   // 24 GB < 35 GiB
  EXPECT_EQ(chunk("sglang", "rtx-5090"), 2048);   // 32 GB
  EXPECT_EQ(chunk("sglang", "a10g"), 2048);
  EXPECT_EQ(chunk("sglang", "l40s"), 4096);       // 48 GB < 60 GiB
  EXPECT_EQ(chunk("sglang", "a100-40g"), 4096);
  EXPECT_EQ(chunk("sglang", "a100-80g"), 8192);   // < 90 GiB
  EXPECT_EQ(chunk("sglang", "h20"), 8192);        // 96 GB < 160 GiB
  EXPECT_EQ(chunk("sglang", "h200"), 8192);       // 141 GB
  EXPECT_EQ(chunk("sglang", "b200"), 16384);      // above every tier
  EXPECT_EQ(chunk("sglang", "mi300x"), 16384);
  EXPECT_EQ(chunk("vllm", "rtx-5090"), 2048);     // < 70 GiB
  EXPECT_EQ(chunk("vllm", "l40s"), 2048);
  EXPECT_EQ(chunk("vllm", "a100-80g"), 2048);     // the A100 exception
  EXPECT_EQ(chunk("vllm", "a40"), 2048);
  EXPECT_EQ(chunk("vllm", "h100-sxm"), 8192);
  EXPECT_EQ(chunk("vllm", "rtx-pro-6000"), 8192); // 96 GB
  EXPECT_EQ(chunk("trtllm", "h100-sxm"), 0);      // no chunked prefill by default
}

TEST(FindDeviceProfile, UnknownDeviceNamesTheEngineAndTheWayOut) {
  const auto tpu = *device::FindBuiltinDevice("tpu-v6e");
  auto d = FindDeviceProfile(Builtin("vllm"), tpu);
  ASSERT_FALSE(d.has_value());
  EXPECT_NE(d.error().message.find("engine 'vllm' has no profile for device 'tpu-v6e'"),
            std::string::npos)
      << d.error().message;
  EXPECT_NE(d.error().message.find("--engine roofline"), std::string::npos);
}

TEST(DeviceProfile, VariantsFallBackAlongTheChain) {
  DeviceProfile d;
  KernelParams bf16;
  bf16.cls = KernelClass::kGemm;
  bf16.variant = "bf16";
  d.kernels.push_back(bf16);
  EXPECT_EQ(d.Find(KernelClass::kGemm, "fp8_block")->variant, "bf16");  // fp8_block → fp8 → bf16
  EXPECT_EQ(d.Find(KernelClass::kGemm, "fp16")->variant, "bf16");
  EXPECT_EQ(d.Find(KernelClass::kGroupedGemm, "bf16"), nullptr);
  EXPECT_EQ(FallbackVariant("fp4"), "fp8");
  EXPECT_EQ(FallbackVariant("bf16"), "");
}

TEST(EngineProfileJson, RoundTripsEveryBuiltinProfile) {
  for (const EngineProfile& p : BuiltinProfiles()) {
    const std::string json = EngineProfileJson(p);
    auto again = ParseEngineProfile(json, "round trip");
    ASSERT_TRUE(again.has_value()) << again.error().message;
    EXPECT_EQ(EngineProfileJson(*again), json) << p.engine;
    ASSERT_EQ(again->devices.size(), p.devices.size());
    for (size_t i = 0; i < p.devices.size(); ++i) {
      ASSERT_EQ(again->devices[i].kernels.size(), p.devices[i].kernels.size());
      for (size_t k = 0; k < p.devices[i].kernels.size(); ++k) {
        // Seven significant digits.
        EXPECT_NEAR(again->devices[i].kernels[k].bandwidth_efficiency,
                    p.devices[i].kernels[k].bandwidth_efficiency,
                    1e-6 * p.devices[i].kernels[k].bandwidth_efficiency);
      }
    }
  }
}

// A kernel's fixed cost under CUDA-graph replay is its launch gap, prologue and epilogue: a
// few microseconds, tens for a fused MoE (routing, permutation, two GEMMs, finalize). A fitted
// overhead of 50 us or more means the table held the CPU's issue time of an eager call, which
// served decode steps do not pay (vLLM's eager block-FP8 GEMM and MLA rows fitted 61-307 us and
// predicted DeepSeek-R1 at 61 ms a decode step on 8x B200; docs/accuracy.md).
TEST(BuiltinProfiles, FittedKernelOverheadsAreKernelScale) {
  for (const EngineProfile& p : BuiltinProfiles()) {
    for (const DeviceProfile& d : p.devices) {
      if (d.basis != "fitted") continue;
      for (const KernelParams& k : d.kernels) {
        EXPECT_LT(k.overhead_s, 50e-6) << p.engine << " " << d.device << " "
                                       << KernelClassName(k.cls) << " " << k.variant;
      }
    }
  }
}

// Every shipped alternative's kernels come from a rule that names it on the same entry, and
// selecting it puts exactly those parameters where the default's were found.
TEST(BuiltinProfiles, AlternativeKernelsFollowTheirRulesAndReplaceTheDefault) {
  size_t tagged = 0;
  for (const EngineProfile& p : BuiltinProfiles()) {
    for (const std::string& name : Implementations(p)) {
      auto selected = SelectImplementation(p, name);
      ASSERT_TRUE(selected.has_value()) << selected.error().message;
      for (size_t i = 0; i < p.devices.size(); ++i) {
        const DeviceProfile& d = p.devices[i];
        for (const KernelParams& k : d.kernels) {
          if (k.implementation != name) continue;
          ++tagged;
          const std::string what = p.engine + " " + d.device + " " +
                                   std::string(KernelClassName(k.cls)) + " " + k.variant;
          EXPECT_NE(d.SourceOf(k.cls, k.variant, name), nullptr) << what;
          const KernelParams* now = selected->devices[i].Find(k.cls, k.variant);
          ASSERT_NE(now, nullptr) << what;
          EXPECT_EQ(now->overhead_s, k.overhead_s) << what;
          EXPECT_EQ(now->bandwidth_efficiency, k.bandwidth_efficiency) << what;
          EXPECT_EQ(now->compute_efficiency, k.compute_efficiency) << what;
          EXPECT_EQ(selected->devices[i].implementation, name) << what;
        }
      }
    }
  }
  EXPECT_GE(tagged, 4u);  // trtllm_gen: block-FP8 and NVFP4 MoE on B200 and GB200
}

// A minimal valid profile, for the error cases below to break one field at a time.
std::string Profile(const std::string& kernel_fields, const std::string& extra = "") {
  return R"({"schema_version": 1, "engine": "e", "description": "d", "version": "v",
    "defaults": {"kv_dtype": "auto", "chunked_prefill_tokens": 0, "cuda_graphs": true,
                 "source": "s"},
    "overheads": {"step_s": 0, "sampling_s": 0, "launch_s": 0, "source": "s"},)" +
         extra + R"(
    "devices": [{"device": "h100-sxm", "basis": "public", "source": "s",
                 "kernels": [{"class": "gemm", "variant": "bf16", )" +
         kernel_fields + R"(}]}]})";
}

struct BadCase {
  std::string json;
  std::string message;
};

// Each case is refused with a one-line error containing its message, without a final period.
void ExpectRefused(std::span<const BadCase> cases) {
  for (const BadCase& c : cases) {
    auto p = ParseEngineProfile(c.json, "p.json");
    ASSERT_FALSE(p.has_value()) << c.json;
    EXPECT_NE(p.error().message.find(c.message), std::string::npos)
        << "got: " << p.error().message << "\nwant: " << c.message;
    EXPECT_EQ(p.error().message.find('\n'), std::string::npos) << p.error().message;
    EXPECT_FALSE(p.error().message.ends_with(".")) << p.error().message;
  }
}

TEST(ParseEngineProfile, ValidProfileLoads) {
  auto p = ParseEngineProfile(Profile(R"("overhead_s": 2e-6, "bandwidth_efficiency": 0.8)"), "p.json");
  ASSERT_TRUE(p.has_value()) << p.error().message;
  EXPECT_EQ(p->devices[0].kernels[0].overhead_s, 2e-6);
  EXPECT_EQ(p->devices[0].kernels[0].compute_efficiency, 1.0);  // optional, default 1
  EXPECT_EQ(p->devices[0].kernels[0].k_overhead, 0.0);          // optional: no depth term
  auto deep = ParseEngineProfile(
      Profile(R"("overhead_s": 2e-6, "bandwidth_efficiency": 0.8, "k_overhead": 256)"), "p.json");
  ASSERT_TRUE(deep.has_value()) << deep.error().message;
  EXPECT_EQ(deep->devices[0].kernels[0].k_overhead, 256.0);
  auto negative = ParseEngineProfile(
      Profile(R"("overhead_s": 2e-6, "bandwidth_efficiency": 0.8, "k_overhead": -1)"), "p.json");
  ASSERT_FALSE(negative.has_value());
  EXPECT_NE(negative.error().message.find("field 'k_overhead'"), std::string::npos)
      << negative.error().message;
  // The request path and the prefill graphs are optional: a profile without them keeps the
  // steps' behaviour (no request path, prompt steps with graphs, the recipe's MMA class).
  EXPECT_EQ(p->overheads.request_s, 0.0);
  EXPECT_TRUE(p->defaults.prefill_cuda_graphs);
  EXPECT_FALSE(p->defaults.overlap_scheduling);  // optional, default off
  EXPECT_EQ(p->defaults.mma_16bit, "recipe");
}

// Profile() with its defaults and overheads replaced (the error cases of the new fields).
std::string ProfileWith(const std::string& defaults_extra, const std::string& overheads_extra) {
  std::string s = Profile(R"("overhead_s": 2e-6, "bandwidth_efficiency": 0.8)");
  s.replace(s.find(R"("cuda_graphs": true,)"), 20, R"("cuda_graphs": true, )" + defaults_extra);
  s.replace(s.find(R"("launch_s": 0,)"), 14, R"("launch_s": 0, )" + overheads_extra);
  return s;
}

TEST(ParseEngineProfile, RequestPathAndPrefillFieldsAreCheckedByName) {
  auto ok = ParseEngineProfile(
      ProfileWith(R"("prefill_cuda_graphs": false, "overlap_scheduling": true, "mma_16bit": "fp16",)",
                  R"("request_s": 0.002,)"),
      "p.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->overheads.request_s, 0.002);
  EXPECT_FALSE(ok->defaults.prefill_cuda_graphs);
  EXPECT_TRUE(ok->defaults.overlap_scheduling);
  EXPECT_EQ(ok->defaults.mma_16bit, "fp16");
  // And written back as read.
  auto again = ParseEngineProfile(EngineProfileJson(*ok), "again.json");
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(EngineProfileJson(*again), EngineProfileJson(*ok));
  const BadCase cases[] = {
      {ProfileWith("", R"("request_s": -0.001,)"),
       "p.json: field 'overheads': field 'request_s': expected a number in [0, 10], got -0.001"},
      {ProfileWith("", R"("request_s": "2 ms",)"), "field 'request_s'"},
      {ProfileWith("", R"("request_s": 11,)"), "field 'request_s': expected a number in [0, 10]"},
      {ProfileWith(R"("prefill_cuda_graphs": 1,)", ""), "field 'prefill_cuda_graphs'"},
      {ProfileWith(R"("overlap_scheduling": "yes",)", ""), "field 'overlap_scheduling'"},
      {ProfileWith(R"("mma_16bit": "bf8",)", ""),
       "field 'mma_16bit': expected \"recipe\" or \"fp16\", got 'bf8'"},
      {ProfileWith(R"("mma_16bit": "",)", ""), "field 'mma_16bit'"},
  };
  ExpectRefused(cases);
}

// defaults.float32_dtype: the 16-bit float a float32 checkpoint is loaded in, with exceptions
// by model_type prefix; read, written back as read, and refused by name when it is not bf16 or
// f16 or when exceptions come without it.
TEST(ParseEngineProfile, Float32LoadDtypeIsCheckedByName) {
  auto ok = ParseEngineProfile(
      ProfileWith(R"("float32_dtype": "f16", "float32_dtype_by_model_type": [{"prefix": "gemma", "dtype": "bf16"}],)",
                  ""),
      "p.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->defaults.float32_dtype, "f16");
  ASSERT_EQ(ok->defaults.float32_dtype_by_model_type.size(), 1u);
  EXPECT_EQ(ok->defaults.float32_dtype_by_model_type[0].prefix, "gemma");
  EXPECT_EQ(ok->defaults.float32_dtype_by_model_type[0].dtype, "bf16");
  auto again = ParseEngineProfile(EngineProfileJson(*ok), "again.json");
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(EngineProfileJson(*again), EngineProfileJson(*ok));
  auto absent = ParseEngineProfile(ProfileWith("", ""), "p.json");
  ASSERT_TRUE(absent.has_value());
  EXPECT_EQ(absent->defaults.float32_dtype, "");  // as saved
  const BadCase cases[] = {
      {ProfileWith(R"("float32_dtype": "fp8_e4m3",)", ""),
       "p.json: field 'defaults': field 'float32_dtype': expected \"bf16\" or \"f16\""},
      {ProfileWith(R"("float32_dtype": 16,)", ""), "field 'float32_dtype'"},
      {ProfileWith(R"("float32_dtype": "bf16", "float32_dtype_by_model_type": [{"prefix": "gemma"}],)", ""),
       "float32_dtype_by_model_type[0]: missing required field 'dtype'"},
      {ProfileWith(R"("float32_dtype": "bf16", "float32_dtype_by_model_type": [{"prefix": "gemma", "dtype": "f32"}],)", ""),
       "float32_dtype_by_model_type[0]: field 'dtype': expected \"bf16\" or \"f16\""},
      {ProfileWith(R"("float32_dtype_by_model_type": [{"prefix": "gemma", "dtype": "bf16"}],)", ""),
       "field 'float32_dtype_by_model_type': exceptions to a float32_dtype the defaults do not give"},
  };
  ExpectRefused(cases);
}

// Profile() with a device entry's kernel_sources (the engine's default implementations).
std::string ProfileWithSources(const std::string& sources) {
  std::string s = Profile(R"("overhead_s": 2e-6, "bandwidth_efficiency": 0.8)");
  // After the device's kernels list: "...}]" + sources + "}]}" (device, devices, profile).
  s.replace(s.rfind("}]}]}"), 5, "}], \"kernel_sources\": " + sources + "}]}");
  return s;
}

TEST(ParseEngineProfile, KernelSourcesNameAClassAndVariantOnceAndRoundTrip) {
  auto ok = ParseEngineProfile(
      ProfileWithSources(R"([{"class": "grouped_gemm", "variant": "fp8_block",
                              "kernel_source": "lib_a", "source": "why"},
                             {"class": "gemm", "variant": "fp8_block", "kernel_source": "lib_b",
                              "engine": "trtllm", "source": "why"}])"),
      "p.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  const DeviceProfile& d = ok->devices[0];
  ASSERT_NE(d.SourceOf(KernelClass::kGroupedGemm, "fp8_block"), nullptr);
  EXPECT_EQ(d.SourceOf(KernelClass::kGroupedGemm, "fp8_block")->kernel_source, "lib_a");
  EXPECT_EQ(d.SourceOf(KernelClass::kGroupedGemm, "fp8_block")->engine, "");  // its own
  ASSERT_NE(d.SourceOf(KernelClass::kGemm, "fp8_block"), nullptr);
  EXPECT_EQ(d.SourceOf(KernelClass::kGemm, "fp8_block")->engine, "trtllm");
  EXPECT_EQ(d.SourceOf(KernelClass::kGroupedGemm, "bf16"), nullptr);
  auto again = ParseEngineProfile(EngineProfileJson(*ok), "again.json");
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(EngineProfileJson(*again), EngineProfileJson(*ok));
  const std::string one =
      R"({"class": "grouped_gemm", "variant": "fp8_block", "kernel_source": "a", "source": "s"})";
  const BadCase cases[] = {
      {ProfileWithSources("[" + one + ", " + one + "]"),
       "p.json: device 'h100-sxm': kernel_sources[1]: class 'grouped_gemm' variant 'fp8_block' "
       "appears more than once"},
      {ProfileWithSources(R"([{"class": "all_reduce", "variant": "x", "kernel_source": "a",
                               "source": "s"}])"),
       "kernel_sources[0]: field 'class': 'all_reduce' is not a kernel class"},
      {ProfileWithSources(R"([{"class": "gemm", "variant": "FP8", "kernel_source": "a",
                               "source": "s"}])"),
       "kernel_sources[0]: field 'variant'"},
      {ProfileWithSources(R"([{"class": "gemm", "variant": "bf16", "source": "s"}])"),
       "field 'kernel_source'"},
      {ProfileWithSources(R"([{"class": "gemm", "variant": "bf16", "kernel_source": "a"}])"),
       "field 'source'"},
      {ProfileWithSources(R"({"class": "gemm"})"), "field 'kernel_sources': expected an array"},
  };
  ExpectRefused(cases);
}

TEST(ParseEngineProfile, BadFieldsAreOneLineErrorsNamingTheField) {
  const std::string ok = R"("overhead_s": 2e-6, "bandwidth_efficiency": 0.8)";
  const BadCase cases[] = {
      {Profile(R"("overhead_s": 2e-6, "bandwidth_efficiency": 1.5)"),
       "p.json: device 'h100-sxm': kernels[0]: field 'bandwidth_efficiency': expected a number "
       "in (0, 1], got 1.5"},
      {Profile(R"("overhead_s": -1, "bandwidth_efficiency": 0.5)"),
       "field 'overhead_s': expected a number in [0, 1], got -1"},
      {Profile(ok + R"(, "bandwith_efficiency": 0.5)"), "field 'bandwith_efficiency': unknown field"},
      {Profile(ok + R"(, "overhead_s": 1e-6)"), "field 'overhead_s' appears more than once"},
      {Profile(R"("bandwidth_efficiency": 0.5)"), "missing required field 'overhead_s'"},
      {Profile(ok + R"(, "tile_m": 0)"), "field 'tile_m': expected an integer in 1..4096, got 0"},
      {Profile(ok, R"("fused_ops": ["Addd"],)"), "field 'fused_ops': unknown op kind 'Addd'"},
      {Profile(ok, R"("moe_call": {"parts": ["routing", "gate"], "source": "s"},)"),
       "field 'moe_call': field 'parts': unknown part 'gate'"},
      {Profile(ok, R"("moe_call": {"parts": ["combine", "combine"], "source": "s"},)"),
       "field 'moe_call': parts[1]: 'combine' appears more than once"},
      {Profile(ok, R"("moe_call": {"parts": ["combine"]},)"), "missing required field 'source'"},
      {R"({"schema_version": 1)", "p.json: truncated or malformed JSON"},
      {"", "p.json: empty document"},
      {R"({"schema_version": 2})", "field 'schema_version': expected an integer in 1..1, got 2"},
  };
  ExpectRefused(cases);
}

TEST(ParseEngineProfile, MemoryTiersAreCheckedByName) {
  const auto with_tiers = [](const std::string& tiers) {
    std::string p = Profile(R"("overhead_s": 2e-6, "bandwidth_efficiency": 0.8)");
    const std::string key = R"("chunked_prefill_tokens": 0,)";
    return p.replace(p.find(key), key.size(),
                     key + R"( "chunked_prefill_by_memory": )" + tiers + ",");
  };
  const BadCase cases[] = {
      {with_tiers(R"([{"below_gib": 60, "tokens": 4096}, {"below_gib": 35, "tokens": 2048}])"),
       "chunked_prefill_by_memory[1]: field 'below_gib': must be above the tier before it"},
      {with_tiers(R"([{"below_gib": 0, "tokens": 4096}])"),
       "chunked_prefill_by_memory[0]: field 'below_gib': expected a number in (0, 1e+06]"},
      {with_tiers(R"([{"below_gib": 35}])"), "missing required field 'tokens'"},
      {with_tiers(R"({"below_gib": 35})"), "field 'chunked_prefill_by_memory': expected an array"},
  };
  ExpectRefused(cases);
}

TEST(ParseEngineProfile, DuplicateKernelsAndDevicesAreRefused) {
  const std::string kernel = R"({"class": "gemm", "variant": "bf16", "overhead_s": 0,
                                 "bandwidth_efficiency": 0.5})";
  const std::string head = R"({"schema_version": 1, "engine": "e", "description": "d",
    "version": "v", "defaults": {"kv_dtype": "bf16", "chunked_prefill_tokens": 0,
    "cuda_graphs": true, "source": "s"}, "overheads": {"step_s": 0, "sampling_s": 0,
    "launch_s": 0, "source": "s"}, "devices": [)";
  auto twice = ParseEngineProfile(head + R"({"device": "h200", "basis": "public", "source": "s",
      "kernels": [)" + kernel + "," + kernel + "]}]}",
                                  "p.json");
  ASSERT_FALSE(twice.has_value());
  EXPECT_NE(twice.error().message.find("class 'gemm' variant 'bf16' appears more than once"),
            std::string::npos)
      << twice.error().message;
  auto two_entries = ParseEngineProfile(
      head + R"({"device": "h200", "basis": "public", "source": "s", "kernels": [)" + kernel +
          R"(]}, {"device": "h100-sxm", "applies_to": ["h200"], "basis": "public", "source": "s",
          "kernels": [)" + kernel + "]}]}",
      "p.json");
  ASSERT_FALSE(two_entries.has_value());
  EXPECT_NE(two_entries.error().message.find("device 'h200' has two entries"), std::string::npos)
      << two_entries.error().message;
}

TEST(ResolveEngineProfile, UnknownEngineListsTheKnownOnes) {
  auto p = ResolveEngineProfile("vlm");
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().message.find("unknown engine 'vlm' (known: "), std::string::npos);
  EXPECT_NE(p.error().message.find("vllm"), std::string::npos);
  auto missing = ResolveEngineProfile("/nonexistent/profile.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message.find("/nonexistent/profile.json"), std::string::npos);
}

}  // namespace
}  // namespace opscope::predict
