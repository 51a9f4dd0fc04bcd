// Engine profiles (data/engines/*.json, docs/engines.md): what one serving engine achieves on
// one device, as a few physical parameters per kernel class — efficiencies against the
// device's peaks, fixed per-kernel overheads, tile sizes, collective latencies — plus the
// engine's per-step overheads and defaults. The built-in profiles are embedded at build time;
// `opscope calibrate` fits the `fitted` device entries from measured kernel latencies.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/device.h"
#include "support/error.h"

namespace opscope::predict {

enum class KernelKind : uint8_t { kMma, kMemory, kLink, kNoKernel };

enum class KernelClass : uint8_t {
#define OPSCOPE_KERNEL_CLASS(e, name, kind, what) e,
#include "predict/kernel_classes.def"
#undef OPSCOPE_KERNEL_CLASS
};

struct KernelClassInfo {
  std::string_view name;
  KernelKind kind;
  std::string_view what;
};
inline constexpr KernelClassInfo kKernelClasses[] = {
#define OPSCOPE_KERNEL_CLASS(e, name, kind, what) {name, KernelKind::kind, what},
#include "predict/kernel_classes.def"
#undef OPSCOPE_KERNEL_CLASS
};
inline constexpr int kNumKernelClasses =
    static_cast<int>(sizeof(kKernelClasses) / sizeof(kKernelClasses[0]));
static_assert(kNumKernelClasses == static_cast<int>(KernelClass::kNone) + 1,
              "kernel_classes.def and KernelClass must have the same rows");

inline const KernelClassInfo& Info(KernelClass c) { return kKernelClasses[static_cast<int>(c)]; }
inline std::string_view KernelClassName(KernelClass c) { return Info(c).name; }
std::optional<KernelClass> ParseKernelClass(std::string_view name);

// Collective algorithms. Each moves `factor` times the ring's link bytes (the ledger's
// bytes_link) over the link, for a group of n:
//   ring      1              NCCL ring / tree: 2(n−1)/n·S for an all-reduce of S bytes
//   two_shot  1              reduce-scatter + all-gather over direct peer reads
//   one_shot  n/2            every rank reads all n−1 peers' whole buffers: (n−1)·S
//   nvls      n/(2(n−1))     the switch reduces (NVLink SHARP): S in and S out per rank
enum class Algorithm : uint8_t { kRing, kTwoShot, kOneShot, kNvls };
inline constexpr std::array<std::string_view, 4> kAlgorithmNames = {"ring", "two_shot",
                                                                    "one_shot", "nvls"};
inline std::string_view AlgorithmName(Algorithm a) {
  return kAlgorithmNames[static_cast<int>(a)];
}
std::optional<Algorithm> ParseAlgorithm(std::string_view name);
double AlgorithmTrafficFactor(Algorithm a, int64_t group);

// How well a fitted parameter set predicts measurements it was not fitted on.
struct FitStats {
  uint32_t samples = 0;        // measurements fitted (0: not fitted)
  uint32_t folds = 0;          // k of the k-fold cross-validation
  double median_abs_error = 0; // held-out |predicted / measured − 1|, median
  double p90_abs_error = 0;    // and 90th percentile
};

// One kernel class's parameters for one variant (docs/engines.md "Kernel model"):
//   t = overhead_s + max(t_mem, t_mma, t_waves) + (1 − overlap) · min(t_mem, t_mma)
//   t_mem = bytes / (bandwidth_efficiency · DRAM bytes/s)
//   t_mma = FLOPs / (compute_efficiency · depth_eff · tile_eff · wave_eff^wave_exponent ·
//                    peak[class])
//   t_waves = waves · wave_latency_s, waves = ceil(tiles / compute units)
//   depth_eff = K / (K + k_overhead)   (GEMM classes with a known K; else 1)
// Efficiencies are at most 1 and the overhead is non-negative, so t ≥ the node's roofline.
struct KernelParams {
  KernelClass cls = KernelClass::kMemory;
  std::string variant;                // "bf16", "fp8_block", "fp8_kv", ... (docs/engines.md)
  double overhead_s = 0;
  double bandwidth_efficiency = 1;
  double compute_efficiency = 1;
  double overlap = 1;
  int64_t tile_m = 1, tile_n = 1;     // 1: no tile quantization along that axis
  double wave_exponent = 0;           // 0: no wave quantization
  double wave_latency_s = 0;          // least time of one wave of tiles (CTAs)
  // GEMM classes: the part of a tile's time spent outside its K loop (filling the operand
  // pipeline before the first MMA, writing the output tile and its scales after the last),
  // counted in elements of K: a tile of depth K takes (K + k_overhead) / K of its MMA time
  // (t_mma; the memory stream, fed by many tiles at once, is not stretched). Negligible for K
  // in the thousands; a down projection of K = 256 (a 2048-wide expert over 8 GPUs: two
  // 128-deep k-steps) spends about half its MMA time there at k_overhead = 256.
  double k_overhead = 0;
  // "": the engine's default implementation of the class; else the name of an alternative the
  // engine can be configured to run (KernelSource::implementation), used only when selected
  // (--engine ENGINE:NAME, SelectImplementation).
  std::string implementation;
  FitStats fit;
};

// One collective algorithm on one link:
//   t = latency_s + latency_per_peer_s · (n − 1) + factor · bytes_link /
//       (bandwidth_efficiency · interconnect bytes/s)
struct CollectiveParams {
  KernelClass cls = KernelClass::kAllReduce;
  Algorithm algorithm = Algorithm::kRing;
  double latency_s = 0;
  double latency_per_peer_s = 0;
  double bandwidth_efficiency = 1;
  FitStats fit;
};

// The implementation an engine runs by default for one kernel class and variant on a device,
// where the measurements time several (the calibration set times SGLang's FlashInfer TRT-LLM
// and Triton fused MoE kernels on B200): `opscope calibrate` fits that class and variant to
// this implementation's rows only, since the engine does not run the others' kernels. A rule
// with an `implementation` name describes an alternative the engine can be configured to run
// instead (TensorRT-LLM's moe_config.backend TRTLLM): calibrate fits it to its own rows beside
// the default, as kernels tagged with the name.
struct KernelSource {
  KernelClass cls = KernelClass::kNone;
  std::string variant;
  std::string kernel_source;  // the measurements' implementation label
  // Whose measurements time it: "" for the profile's own engine; another engine's where it
  // runs the same kernel and only its table times it as served (SGLang's block-FP8 DeepGEMM
  // on Blackwell: TensorRT-LLM's rows, docs/engines.md).
  std::string engine;
  std::string implementation;  // "": the default; else the alternative's name
  std::string source;          // why the engine runs it (by default, or when configured so)
};

// An engine's parameters on one device (or a family of devices).
struct DeviceProfile {
  std::string device;                   // a device id, or "*" for every device
  std::vector<std::string> applies_to;  // further device ids this entry serves
  std::string basis;                    // "fitted", "public", "derived"
  std::string source;
  // The engine's default chunk of prompt tokens per step on this device, where it differs
  // from the engine's default (vLLM and SGLang size it by device memory); 0: the engine's.
  int64_t chunked_prefill_tokens = 0;
  std::vector<KernelParams> kernels;
  std::vector<CollectiveParams> collectives;
  // The default implementations and the named alternatives (read by calibration only).
  std::vector<KernelSource> kernel_sources;
  // Devices whose entries name the same family share one die's SM (H100 and H200; B200 and
  // GB200): calibration fits a kernel group too small to cross-validate on one of them
  // together with the family's other devices' samples of that class and variant, each timed
  // on its own device (read by calibration only; "" : none).
  std::string fit_family;
  // NCCL runs NVLS (NVLink SHARP: the switch reduces) for all-reduce on this device: its NCCL
  // rows are fitted with the ring and nvls, the faster chosen per message (calibration), and
  // predictions use the fitted nvls on this entry's own device only — a family member served
  // through applies_to (a PCIe or NVLink-bridge part) takes the ring.
  bool nccl_nvls = false;
  // The alternative whose kernels SelectImplementation put in place of the defaults here; ""
  // when none was selected or this entry has no kernels of the one selected (not serialized).
  std::string implementation;

  // The implementation the engine runs for `cls` / `variant` on this entry's devices, when
  // the profile names one (`name` "": the default; else the alternative so named); nullptr
  // otherwise.
  const KernelSource* SourceOf(KernelClass cls, std::string_view variant,
                               std::string_view name = "") const;
  // The default parameters of `cls` for `variant`, else for the first variant of its fallback
  // chain the entry has (FallbackVariant); nullptr when none. Alternatives' kernels are not
  // found until selected.
  const KernelParams* Find(KernelClass cls, std::string_view variant) const;
  bool Serves(std::string_view device_id) const;
  // The basis of this entry's parameters for `device_id`: its own basis for the device it
  // names (or every device, "*"), "derived" for a family member it serves through applies_to
  // (their parameters were fitted or found for another device).
  std::string_view BasisFor(std::string_view device_id) const;
};

// One tier of an engine's chunk size by device memory: devices with less than below_gib GiB
// (SGLang's and vLLM's server_args compare the GPU's memory in MiB with such thresholds).
struct MemoryTier {
  double below_gib = 0;
  int64_t tokens = 0;
};

// An exception to an engine's float32 load dtype: model types starting with `prefix` load in
// `dtype` (SGLang: "gemma" in bf16, the others in fp16).
struct Float32Exception {
  std::string prefix;
  std::string dtype;
};

// What a serving engine does by default (each with its source).
struct EngineDefaults {
  std::string kv_dtype = "auto";        // a format name, or "auto": the model's dtype
  int64_t chunked_prefill_tokens = 0;   // 0: no chunked prefill by default
  // Chunk sizes by device memory, ascending below_gib: the first tier the device is under
  // applies; a device above them all takes chunked_prefill_tokens. A device entry's own
  // chunked_prefill_tokens (an engine's rule by name, vLLM's A100) still wins.
  std::vector<MemoryTier> chunked_prefill_by_memory;
  bool cuda_graphs = true;              // decode steps replay CUDA graphs
  // Steps with prompt tokens (prefill, and decode mixed with a prompt chunk) replay CUDA
  // graphs; false: they run eagerly, every kernel issued by the CPU (launch_s each).
  bool prefill_cuda_graphs = true;
  // The scheduler forms step n+1 while the device runs step n (SGLang's overlap scheduler,
  // TensorRT-LLM's overlap scheduler, vLLM's async scheduling): a request that arrives during
  // a step misses the step already formed and starts one step later than it would otherwise.
  bool overlap_scheduling = false;
  // A step with prompt tokens carries no decoding sequences: the scheduler runs waiting prompts
  // before the running batch's next decode step (SGLang without --enable-mixed-chunk); false:
  // decodes and prompt chunks share a step (vLLM, TensorRT-LLM). Read by the fixed-length
  // dynamics (llm::FixedLengths), where it keeps a benchmark's requests in whole waves.
  bool prefill_first = false;
  // The MMA class the engine runs 16-bit float matmuls in: "recipe" (the recipe's activation
  // type, bf16 or fp16) or "fp16" (llama.cpp: cuBLAS FP16 compute, FP16 accumulate, twice the
  // BF16 / FP32-accumulate rate on GeForce parts).
  std::string mma_16bit = "recipe";
  // The format the engine loads a checkpoint saved in float32 in by default (vLLM's and
  // SGLang's dtype "auto", llama.cpp's converter): "bf16" or "f16"; "" keeps float32
  // (TensorRT-LLM's PyTorch flow, the roofline profile). llm::ServeFloat32 applies it.
  std::string float32_dtype;
  std::vector<Float32Exception> float32_dtype_by_model_type;  // first matching prefix wins
  std::string source;
};

// Fixed costs outside the kernels: per engine step, and per request.
//   a step without CUDA graphs:  t = step_s + sampling_s + max(Σ kernel times, kernels · launch_s)
//     (the CPU issues the kernels asynchronously: the slower of the two sides sets the step)
//   a step replaying a graph:    t = step_s + sampling_s + Σ kernel times
//   a request's TTFT adds request_s once (its path outside the engine's steps).
struct StepOverheads {
  double step_s = 0;      // scheduler, input preparation, graph launch, output processing
  double sampling_s = 0;  // sampling the next tokens (per step that samples)
  double launch_s = 0;    // CPU time to issue one kernel of a step without CUDA graphs
  // Per request, before its first token reaches the client: HTTP / OpenAI API handling,
  // tokenization, hand-off to the scheduler and its workers, first-token detokenize and stream.
  double request_s = 0;
  std::string source;
};

// The parts of a mixture-of-experts layer the engine's fused MoE call runs besides its two
// grouped GEMMs (ir::kMoeParts: "routing", "permute", "activation", "combine"), as its kernel
// tables time that call. The grouped_gemm parameters fitted to those tables already hold
// their time, so a node of a listed part is predicted at its roofline (still a kernel the call
// launches) where the device's grouped_gemm parameters were fitted (FitStats::samples > 0);
// elsewhere (public, estimated entries) each part keeps its own kernel parameters.
struct MoeCall {
  std::vector<std::string> parts;
  std::string source;
};

struct EngineProfile {
  int64_t schema_version = 1;
  std::string engine;         // the id users type after --engine
  std::string description;
  std::string version;        // engine versions the figures describe
  // A transparent profile predicts every node at its roofline time, with no overheads.
  bool transparent = false;
  EngineDefaults defaults;
  StepOverheads overheads;
  std::vector<std::string> fused_ops;  // op kinds the engine fuses into a neighbour kernel
  MoeCall moe_call;
  // Devices this engine is the default for when the user names none (DefaultEngine).
  std::vector<std::string> default_for;
  std::vector<DeviceProfile> devices;
  // The alternative implementation selected (--engine ENGINE:NAME), "" for the defaults (not
  // serialized).
  std::string implementation;
};

// The variant a missing variant falls back to ("fp8_block" → "fp8" → "bf16"); "" at the end
// of a chain. One table (profile.cc).
std::string_view FallbackVariant(std::string_view variant);

// Parses and validates one profile; `origin` names the file in errors. Unknown fields,
// duplicate fields, out-of-range numbers (efficiencies outside (0, 1], negative overheads)
// and unknown classes are errors naming the field.
Result<EngineProfile> ParseEngineProfile(std::string_view json_text, std::string_view origin);
Result<EngineProfile> LoadEngineProfileFile(const std::string& path);

// Every built-in profile (data/engines/*.json, embedded), in a fixed order.
const std::vector<EngineProfile>& BuiltinProfiles();
// A built-in profile by id; the error lists the known ids.
Result<const EngineProfile*> FindBuiltinProfile(std::string_view engine);
// --engine: a path ending in .json loads the file, anything else is a built-in id; either may
// be followed by ":NAME", an alternative implementation the profile offers (SelectImplementation).
Result<EngineProfile> ResolveEngineProfile(std::string_view name_or_path);

// The names of the alternative implementations the profile's entries hold fitted kernels of,
// sorted, each once.
std::vector<std::string> Implementations(const EngineProfile& profile);
// The profile with the alternative `name`'s kernels in place of the defaults of their class
// and variant, on every entry that has them (DeviceProfile::implementation set there); every
// other alternative's kernels dropped. An error when no entry has kernels of `name`.
Result<EngineProfile> SelectImplementation(EngineProfile profile, std::string_view name);
// Whether `entry` (the profile's entry for `device`) holds the selected alternative's kernels;
// an error naming the devices that do otherwise (the defaults in its place would be another
// engine configuration than the one asked for). Nothing to check when none is selected.
Result<void> CheckImplementationServes(const EngineProfile& profile, const DeviceProfile& entry,
                                       std::string_view device);

// The chunk of prompt tokens per step the engine uses on `device` (served by `entry`) by
// default (0: no chunked prefill): the entry's own, else the memory tier the device is under,
// else the engine's default.
int64_t ChunkedPrefillTokens(const EngineProfile& profile, const DeviceProfile& entry,
                             const device::Device& device);

// The entry of `profile` for `device`: the entry naming the id, else one that lists it in
// applies_to, else the "*" entry; an error naming the engine and the device otherwise.
Result<const DeviceProfile*> FindDeviceProfile(const EngineProfile& profile,
                                               const device::Device& device);

// The engine a device gets when the user names none: the built-in profile whose default_for
// lists it (llama.cpp for Apple, GeForce, Jetson and GB10 parts), else vllm where it has an
// entry for the device (NVIDIA and AMD datacenter GPUs), else llama.cpp where it has one,
// else roofline (TPUs, Gaudi).
std::string_view DefaultEngine(const device::Device& device);

// The profile as JSON (the layout ParseEngineProfile reads), deterministic: numbers with
// seven significant digits, fields in schema order.
std::string EngineProfileJson(const EngineProfile& profile);

}  // namespace opscope::predict
