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
#include "llm/predicted.h"
#include "report/formats.h"
#include "sweep/sweep.h"
#include "sweep/sweep_list.h"

namespace opscope::cli {
namespace {

// The options as typed: LISTs and name lists are parsed before the sweep runs.
struct SweepOptions {
  std::string model;
  std::optional<std::string> model_type;
  std::string batch, context;
  std::string device = kDefaultDevice;
  std::optional<std::string> weights;
  std::string phase = "decode";
  std::optional<std::string> tp, ep, pp, dp_attention;
  std::optional<std::string> gen_len, disagg, prefill_tp, decode_tp, lengths, speculative,
      draft_model;
  std::optional<double> acceptance;
  std::string format = "csv";
  std::string output = "-";
  sweep::Grid grid;  // the options every point shares
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

// The LISTs of the command line into the request's axes.
Result<sweep::SweepRequest> ParseAxes(const SweepOptions& o) {
  sweep::SweepRequest r;
  static_cast<sweep::Grid&>(r) = o.grid;
  r.model = o.model;
  r.parse.model_type = o.model_type;
  r.phase = o.phase == "prefill" ? llm::Phase::kPrefill : llm::Phase::kDecode;
  auto batches = sweep::ParseIntList("--batch", o.batch);
  if (!batches) return std::unexpected(batches.error());
  r.batches = std::move(*batches);
  auto contexts = sweep::ParseIntList("--context", o.context);
  if (!contexts) return std::unexpected(contexts.error());
  r.contexts = std::move(*contexts);
  auto devices = sweep::ParseNameList("--device", o.device);
  if (!devices) return std::unexpected(devices.error());
  r.devices = std::move(*devices);
  for (const auto& [option, text, out] :
       {std::tuple{"--tp", &o.tp, &r.tps}, std::tuple{"--ep", &o.ep, &r.eps},
        std::tuple{"--pp", &o.pp, &r.pps},
        std::tuple{"--dp-attention", &o.dp_attention, &r.dp_attentions},
        std::tuple{"--gen-len", &o.gen_len, &r.gen_lens},
        std::tuple{"--prefill-tp", &o.prefill_tp, &r.prefill_tps},
        std::tuple{"--decode-tp", &o.decode_tp, &r.decode_tps}}) {
    if (!*text) continue;
    auto values = sweep::ParseIntList(option, **text);
    if (!values) return std::unexpected(values.error());
    *out = std::move(*values);
  }
  if (o.disagg) {
    auto splits = sweep::ParseDisaggList(*o.disagg);
    if (!splits) return std::unexpected(splits.error());
    r.disaggs = std::move(*splits);
  }
  if (o.lengths) {
    auto fixed = llm::ParseFixedLengths(*o.lengths);
    if (!fixed) return std::unexpected(fixed.error());
    r.fixed_lengths = *fixed;
  }
  auto speculative =
      llm::ParseSpeculativeOptions(o.speculative, o.acceptance, o.draft_model);
  if (!speculative) return std::unexpected(speculative.error());
  r.speculative = *speculative;
  if (o.weights) {
    auto names = sweep::ParseNameList("--weights", *o.weights);
    if (!names) return std::unexpected(names.error());
    for (std::string& n : *names) r.weights.emplace_back(std::move(n));
  } else {
    r.weights.emplace_back(std::nullopt);
  }
  return r;
}

Result<int> RunSweepLlm(const SweepOptions& o) {
  auto request = ParseAxes(o);
  if (!request) return std::unexpected(request.error());
  std::optional<sweep::SweepResult> result;
  {
    ProgressBar bar;
    auto r = sweep::RunSweep(*request,
                             [&bar](uint64_t done, uint64_t total) { bar.Update(done, total); });
    if (!r) return std::unexpected(r.error());
    result = std::move(*r);
  }
  if (!result->skipped.empty()) {
    // Not an error (a grid over degrees meets invalid ones by design), but never silent.
    std::fprintf(stderr, "opscope: note: %zu deployment(s) of the grid skipped; the first: %s\n",
                 result->skipped.size(), result->skipped.front().c_str());
  }
  if (auto ok = Emit(report::SweepFormats(), *result, o.format, o.output); !ok) {
    return std::unexpected(ok.error());
  }
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
      "take are skipped, counted on stderr and listed in JSON/HTML. --disagg P:D[,P:D...] (and\n"
      "'agg') predicts each point as opscope llm --disagg P:D does (with --engine and --osl).");
  app->add_option("MODEL", o->model, "Preset name (opscope llm --list) or path to a config.json")
      ->required();
  app->add_option("--model-type", o->model_type,
                  "Read the config as this known model_type (a custom type of that shape)");
  app->add_option("--batch,--concurrency", o->batch,
                  "Sequences per step (of one replica; opscope plan's batch, the requests in "
                  "flight): LIST")
      ->required();
  app->add_option("--context,--isl", o->context,
                  "Cached tokens per sequence (prefill, or with --gen-len: the prompt, opscope "
                  "plan's --isl): LIST")
      ->required();
  app->add_option("--device", o->device, "Device ids or device .json files, comma-separated")
      ->capture_default_str();
  app->add_option("--weights", o->weights,
                  "Weight formats or llama.cpp file types, comma-separated (default: the config's)");
  app->add_option("--phase", o->phase, "decode or prefill")
      ->check(CLI::IsMember({"decode", "prefill"}))
      ->capture_default_str();
  app->add_option("--activations", o->grid.activations, "Activation format");
  app->add_option("--kv-dtype", o->grid.kv_dtype, "KV cache format");
  app->add_option("--state-dtype", o->grid.state_dtype, "Recurrent state format");
  app->add_option("--engine", o->grid.engine,
                  "Also predict every point with this serving engine's profile (vllm, sglang, "
                  "trtllm, llama.cpp, roofline, or a profile .json; ENGINE:NAME for an "
                  "alternative kernel implementation; docs/engines.md)");
  app->add_option("--gen-len,--osl", o->gen_len,
                  "Time whole requests: prefill, then this many decode steps: LIST (full analysis "
                  "per point)");
  app->add_option("--disagg", o->disagg,
                  "With --engine and --gen-len: predict disaggregated serving, P:D prefill and "
                  "decode workers, comma-separated ('agg': aggregated)");
  app->add_option("--prefill-tp", o->prefill_tp,
                  "With --disagg: a prefill worker's tensor-parallel degree: LIST (default: --tp)");
  app->add_option("--decode-tp", o->decode_tp,
                  "With --disagg: a decode worker's tensor-parallel degree: LIST (default: --tp)");
  app->add_option("--lengths", o->lengths,
                  "With --engine and --gen-len: 'varied' (default) or 'fixed' (every request "
                  "exactly its prompt and output length, as a fixed-length benchmark sends them; "
                  "opscope llm --lengths)");
  AddSpeculativeOptions(*app, o->speculative, o->acceptance, o->draft_model,
                        "With --engine and --gen-len, predict every point with");
  app->add_option("--mem-util", o->grid.mem_util, "Fraction of device memory for weights + KV + state")
      ->capture_default_str();
  app->add_option("--tp", o->tp, "Tensor-parallel degrees: LIST (default 1)");
  app->add_option("--ep", o->ep, "Expert-parallel degrees: LIST (default 1)");
  app->add_option("--pp", o->pp, "Pipeline stages: LIST (default 1)");
  app->add_option("--dp-attention", o->dp_attention,
                  "Attention data-parallel replicas: LIST (default: ep/tp when ep > tp)");
  app->add_option("--gpus-per-node", o->grid.gpus_per_node,
                  "Devices per node (default: the device's devices_per_node)");
  app->add_option("--micro-batches", o->grid.micro_batches, "Pipeline micro-batches (default: pp)");
  app->add_option("--format", o->format, "Output format")
      ->check(CLI::IsMember(report::FormatNames(report::SweepFormats())))
      ->capture_default_str();
  app->add_option("-o,--output", o->output, "Write to FILE (default: stdout)");
  return {sweep, [o, app]() -> Result<int> {
            if (!app->parsed()) return MakeError("sweep: expected 'llm' (opscope sweep llm MODEL ...)");
            return RunSweepLlm(*o);
          }};
}

}  // namespace opscope::cli
