// `opscope sweep llm MODEL --batch LIST --context LIST [--device LIST] [--weights LIST] ...`:
// `opscope llm` over a grid, one row per point (DESIGN "Command line"), as CSV (default),
// JSON, or the serving charts (SVG, HTML). A progress bar goes to stderr when the sweep runs
// past a second and stderr is a terminal.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/llm_model.h"
#include "device/device.h"
#include "import/hf_config/model_spec.h"
#include "report/sweep_report.h"
#include "support/file_io.h"
#include "sweep/sweep.h"
#include "sweep/sweep_list.h"

namespace opscope::cli {
namespace {

struct SweepOptions {
  std::string model;
  std::string batch, context;
  std::string device = kDefaultDevice;
  std::optional<std::string> weights;
  std::string phase = "decode";
  std::optional<std::string> activations, kv_dtype, state_dtype;
  std::optional<int64_t> gen_len;
  double mem_util = 0.9;
  std::optional<std::string> tp, ep, pp;
  std::optional<int64_t> dp_attention, gpus_per_node, micro_batches;
  std::string format = "csv";
  std::string output = "-";
};

// Draws "[#####.....]  45%  29,491 / 65,536 points" on stderr once the sweep has run a second.
class ProgressBar {
 public:
  ProgressBar() : start_(std::chrono::steady_clock::now()), tty_(::isatty(STDERR_FILENO) != 0) {}
  ~ProgressBar() {
    if (drawn_) std::fputs("\r\x1b[K", stderr);
  }
  void Update(uint64_t done, uint64_t total) {
    if (!tty_ || total == 0) return;
    const auto elapsed = std::chrono::steady_clock::now() - start_;
    if (elapsed < std::chrono::seconds(1)) return;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(static_cast<double>(done) / static_cast<double>(total) * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\ropscope sweep [%s] %3d%%  %llu / %llu points", bar.c_str(),
                 static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total)),
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total));
    std::fflush(stderr);
    drawn_ = true;
  }

 private:
  std::chrono::steady_clock::time_point start_;
  bool tty_;
  bool drawn_ = false;
};

Result<int> RunSweepLlm(const SweepOptions& o) {
  auto batches = sweep::ParseIntList("--batch", o.batch);
  if (!batches) return std::unexpected(batches.error());
  auto contexts = sweep::ParseIntList("--context", o.context);
  if (!contexts) return std::unexpected(contexts.error());
  auto device_names = sweep::ParseNameList("--device", o.device);
  if (!device_names) return std::unexpected(device_names.error());
  if (!(o.mem_util > 0 && o.mem_util <= 1)) {
    return MakeError("option '--mem-util': must be in (0, 1], got " + std::to_string(o.mem_util));
  }
  if (o.gen_len && *o.gen_len <= 0) {
    return MakeError("option '--gen-len': must be positive, got " + std::to_string(*o.gen_len));
  }
  constexpr uint64_t kMaxPoints = uint64_t{1} << 26;
  sweep::SweepSpec spec;
  for (const auto& [option, text, out] :
       {std::tuple{"--tp", &o.tp, &spec.tps}, std::tuple{"--ep", &o.ep, &spec.eps},
        std::tuple{"--pp", &o.pp, &spec.pps}}) {
    if (!*text) continue;
    auto values = sweep::ParseIntList(option, **text);
    if (!values) return std::unexpected(values.error());
    for (int64_t v : *values) {
      if (v < 1 || v > 65536) {
        return MakeError("option '" + std::string(option) + "': degrees must be in 1..65536, got " +
                         std::to_string(v));
      }
    }
    *out = std::move(*values);
  }
  spec.dp_attention = o.dp_attention;
  spec.gpus_per_node = o.gpus_per_node;
  spec.micro_batches = o.micro_batches;
  if (o.weights) {
    auto names = sweep::ParseNameList("--weights", *o.weights);
    if (!names) return std::unexpected(names.error());
    for (std::string& n : *names) spec.weights.emplace_back(std::move(n));
  } else {
    spec.weights.emplace_back(std::nullopt);
  }
  const uint64_t points = static_cast<uint64_t>(batches->size()) * contexts->size() *
                          device_names->size() * spec.weights.size() *
                          std::max<size_t>(spec.tps.size(), 1) * std::max<size_t>(spec.eps.size(), 1) *
                          std::max<size_t>(spec.pps.size(), 1);
  if (points > kMaxPoints) {
    return MakeError("options '--batch', '--context', '--device', '--weights', '--tp', '--ep', "
                     "'--pp': " +
                     std::to_string(points) + " points is more than " +
                     std::to_string(kMaxPoints) + " per sweep");
  }
  for (const std::string& name : *device_names) {
    auto d = device::ResolveDevice(name);
    if (!d) return std::unexpected(d.error());
    spec.devices.push_back(std::move(*d));
  }
  auto source = LoadLlmModel(o.model);
  if (!source) return std::unexpected(source.error());
  auto model = ParseLlmModel(*source);
  if (!model) return std::unexpected(model.error());

  spec.model_name = source->name;
  spec.origin = source->origin;
  spec.model = &*model;
  spec.phase = o.phase == "prefill" ? llm::Phase::kPrefill : llm::Phase::kDecode;
  spec.batches = std::move(*batches);
  spec.contexts = std::move(*contexts);
  spec.activations = o.activations;
  spec.kv_dtype = o.kv_dtype;
  spec.state_dtype = o.state_dtype;
  spec.mem_util = o.mem_util;
  spec.gen_len = o.gen_len;

  std::optional<report::SweepReport> rep;
  {
    ProgressBar bar;
    auto r = sweep::RunSweep(spec, [&bar](uint64_t done, uint64_t total) { bar.Update(done, total); });
    if (!r) return std::unexpected(r.error());
    rep = std::move(*r);
  }
  if (!rep->skipped.empty()) {
    // Not an error (a grid over degrees meets invalid ones by design), but never silent.
    std::fprintf(stderr, "opscope: note: %zu deployment(s) of the grid skipped; the first: %s\n",
                 rep->skipped.size(), rep->skipped.front().c_str());
  }
  if (o.format == "csv") {
    // Formatted in pieces on several threads, written in order without joining them.
    const std::vector<std::string> parts = report::RenderSweepCsvParts(*rep);
    const std::vector<std::string_view> pieces(parts.begin(), parts.end());
    if (auto ok = WriteFileAtomic(o.output, pieces); !ok) return std::unexpected(ok.error());
    return 0;
  }
  std::string text;
  if (o.format == "json") {
    text = report::RenderSweepJson(*rep);
  } else if (o.format == "svg") {
    text = report::RenderSweepSvg(*rep);
  } else {
    text = report::RenderSweepHtml(*rep);
  }
  if (auto ok = WriteFileAtomic(o.output, text); !ok) return std::unexpected(ok.error());
  return 0;
}

}  // namespace

Command AddSweepCommand(CLI::App& root) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sweep = root.add_subcommand(
      "sweep", "Run a command over a grid of workloads, devices and recipes (one row per point)");
  sweep->require_subcommand(1);
  CLI::App* app = sweep->add_subcommand(
      "llm", "`opscope llm` over batch × context × device × weights: step time, tokens/s, time "
             "per output token, bound and memory fit per point");
  app->footer(
      "LIST: comma-separated values and inclusive ranges: 1,2,4,8  512..4607  1024..32768:1024.\n"
      "--device and --weights take comma-separated names. Prefill sweeps read --context as the\n"
      "prompt length. Points come from a step plan compiled once per recipe whose numbers equal\n"
      "the full analysis; --gen-len runs the full analysis per point. --tp/--ep/--pp sweep the\n"
      "deployment's degrees (as opscope llm takes them); combinations the model or device cannot\n"
      "take are skipped, counted on stderr and listed in JSON/HTML.");
  app->add_option("MODEL", o->model, "Preset name (opscope llm --list) or path to a config.json")
      ->required();
  app->add_option("--batch", o->batch, "Sequences per step: LIST")->required();
  app->add_option("--context", o->context, "Cached tokens per sequence (prefill: prompt tokens): LIST")
      ->required();
  app->add_option("--device", o->device, "Device ids or device .json files, comma-separated")
      ->capture_default_str();
  app->add_option("--weights", o->weights,
                  "Weight formats or llama.cpp file types, comma-separated (default: the config's)");
  app->add_option("--phase", o->phase, "decode or prefill")
      ->check(CLI::IsMember({"decode", "prefill"}))
      ->capture_default_str();
  app->add_option("--activations", o->activations, "Activation format");
  app->add_option("--kv-dtype", o->kv_dtype, "KV cache format");
  app->add_option("--state-dtype", o->state_dtype, "Recurrent state format");
  app->add_option("--gen-len", o->gen_len,
                  "Time whole requests: prefill, then this many decode steps (full analysis per point)");
  app->add_option("--mem-util", o->mem_util, "Fraction of device memory for weights + KV + state")
      ->capture_default_str();
  app->add_option("--tp", o->tp, "Tensor-parallel degrees: LIST (default 1)");
  app->add_option("--ep", o->ep, "Expert-parallel degrees: LIST (default 1)");
  app->add_option("--pp", o->pp, "Pipeline stages: LIST (default 1)");
  app->add_option("--dp-attention", o->dp_attention,
                  "Attention data-parallel replicas (default: ep/tp when ep > tp)");
  app->add_option("--gpus-per-node", o->gpus_per_node,
                  "Devices per node (default: the device's devices_per_node)");
  app->add_option("--micro-batches", o->micro_batches, "Pipeline micro-batches (default: pp)");
  app->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember({"csv", "json", "svg", "html"}))
      ->capture_default_str();
  app->add_option("-o,--output", o->output, "Write to FILE (default: stdout)");
  return {sweep, [o, app]() -> Result<int> {
            if (!app->parsed()) return MakeError("sweep: expected 'llm' (opscope sweep llm MODEL ...)");
            return RunSweepLlm(*o);
          }};
}

}  // namespace opscope::cli
