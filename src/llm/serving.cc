// The serving model: builds, the one figures function, the full analysis (see serving.h).
#include "llm/serving.h"

#include <algorithm>
#include <cmath>

#include "import/hf_config/step_graph.h"
#include "llm/floor.h"
#include "support/checked_math.h"
#include "support/human_units.h"

namespace opscope::llm {
namespace {

std::string Str(int64_t v) { return std::to_string(v); }

std::string WithCommas(uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::unexpected<Error> Positive(std::string_view option, int64_t value) {
  return MakeError("option '" + std::string(option) + "': must be positive, got " + Str(value));
}

}  // namespace

Result<void> CheckWorkload(const Workload& w) {
  if (w.batch <= 0) return Positive("--batch", w.batch);
  if (w.context <= 0) return Positive("--context", w.context);
  if (w.prompt && *w.prompt <= 0) return Positive("--prompt", *w.prompt);
  if (w.gen_len && *w.gen_len <= 0) return Positive("--gen-len", *w.gen_len);
  if (!(w.mem_util > 0 && w.mem_util <= 1)) {
    return MakeError("option '--mem-util': must be in (0, 1], got " + std::to_string(w.mem_util));
  }
  if (w.phase == Phase::kPrefill || w.gen_len) {
    // A prefill's token rows n = batch · prompt must be a number (a request prefills its
    // prompt in decode too).
    auto n = CheckedMul(static_cast<uint64_t>(w.batch), static_cast<uint64_t>(w.Prompt()));
    if (!n || *n > static_cast<uint64_t>(INT64_MAX)) {
      return MakeError(std::string("options '--batch' and '") + (w.prompt ? "--prompt" : "--context") +
                       "': " + Str(w.batch) + " x " + Str(w.Prompt()) + " tokens overflow 64 bits");
    }
  }
  return {};
}

Result<std::shared_ptr<const ModelBuild>> BuildModel(Model model, const RecipeOptions& options) {
  auto recipe = import::hf::ResolveRecipe(model.spec, options);
  if (!recipe) return std::unexpected(recipe.error());  // names the option or the file
  auto whole = import::hf::BuildStepGraph(model.spec, *recipe);
  if (!whole) return std::unexpected(Wrap(model.origin, whole.error()));
  whole->graph.name = model.name;
  auto figures = ComputeModelFigures(*whole);
  if (!figures) return std::unexpected(figures.error());
  // Weights in the formats the model's files store: the files' bytes, scales included.
  if (recipe->stored) figures->weight_bytes = StoredWeightBytes(*recipe->stored, *whole);
  auto build = std::make_shared<ModelBuild>();
  build->warnings = model.warnings;
  build->labels = {recipe->weights_label, recipe->activations_label,
                   std::string(format::FormatName(recipe->kv)),
                   std::string(format::FormatName(recipe->state))};
  build->kv_windows = KvWindows(*whole);
  build->figures = *figures;
  if (model.folder) {
    if (auto warning = import::hf::CheckTotalSize(*model.folder, *whole)) {
      build->warnings.push_back(std::move(*warning));
    }
  }
  build->whole = std::make_shared<const StepGraph>(std::move(*whole));
  build->recipe = std::move(*recipe);
  build->model = std::move(model);
  return build;
}

// ---- Serving ------------------------------------------------------------------------------

namespace {

// What a stage's step graph depends on: the device's share (DeviceShard) less the fields the
// builder does not read for it (step_graph.cc): tp_scope only with tp > 1 (its all-reduces and
// gathers), pp_scope only on a stage that sends to the next, and dp_attention, expert_tp,
// moe_group and moe_scope only with ep > 1 (the routed experts' dispatch and combine).
std::string ShareKey(const import::hf::DeviceShard& d) {
  std::string key = Str(d.tp) + " " + Str(d.ep) + " " + Str(d.pp) + " " + Str(d.first_layer) +
                    " " + Str(d.end_layer) + " " + (d.first_stage ? "F" : "-") +
                    (d.last_stage ? "L" : "-");
  if (d.tp > 1) key += " tp " + d.tp_scope;
  if (!d.last_stage) key += " pp " + d.pp_scope;
  if (d.ep > 1) {
    key += " " + Str(d.dp_attention) + " " + Str(d.expert_tp) + " " + Str(d.moe_group) + " " +
           d.moe_scope;
  }
  return key;
}

}  // namespace

Result<std::optional<Serving::Stage>> Serving::MakeStage(const std::shared_ptr<const ModelBuild>& build,
                                                         const Deployment& deployment, int64_t k,
                                                         std::optional<Error>& unfit,
                                                         StageCache* cache) {
  const import::hf::DeviceShard shard = deployment.Shard(k);
  std::string key;
  if (cache != nullptr) {
    if (cache->build_ != build) {
      cache->build_ = build;
      cache->stages_.clear();
    }
    key = ShareKey(shard);
    if (auto it = cache->stages_.find(key); it != cache->stages_.end()) return it->second;
  }
  const Model& m = build->model;
  auto graph = import::hf::BuildStepGraph(m.spec, build->recipe, shard);
  if (!graph) {
    // The whole model built: what fails is a device's share (a split row that no longer
    // fits the recipe's block).
    unfit = graph.error();
    return std::nullopt;
  }
  graph->graph.name = m.origin + " (stage " + Str(k) + ")";
  auto figures = ComputeModelFigures(*graph);
  if (!figures) return std::unexpected(figures.error());
  std::vector<KvWindow> windows = KvWindows(*graph);
  Stage stage{std::make_shared<const StepGraph>(std::move(*graph)), *figures, std::move(windows)};
  if (cache != nullptr) cache->stages_.emplace(key, stage);
  return stage;
}

Result<std::optional<Serving>> Serving::Make(std::shared_ptr<const ModelBuild> build,
                                             Deployment deployment,
                                             const device::Device& device,
                                             std::optional<Error>& unfit, StageCache* cache) {
  Serving s;
  if (deployment.one_device()) {
    s.stages_.push_back({build->whole, build->figures, build->kv_windows});
  } else {
    for (int64_t k = 0; k < deployment.pp; ++k) {
      auto stage = MakeStage(build, deployment, k, unfit, cache);
      if (!stage) return std::unexpected(stage.error());
      if (!*stage) return std::nullopt;
      s.stages_.push_back(std::move(**stage));
    }
  }
  for (const Stage& stage : s.stages_) {
    s.stage_steps_.push_back(stage.step.get());
    ModelFigures& l = s.largest_share_;
    l.weight_bytes = std::max(l.weight_bytes, stage.figures.weight_bytes);
    l.kv_bytes_per_token = std::max(l.kv_bytes_per_token, stage.figures.kv_bytes_per_token);
    l.state_bytes_per_seq = std::max(l.state_bytes_per_seq, stage.figures.state_bytes_per_seq);
  }
  s.build_ = std::move(build);
  s.deployment_ = std::move(deployment);
  s.device_ = device;
  return s;
}

Result<Serving> Serving::Build(std::shared_ptr<const ModelBuild> build, Deployment deployment,
                               const device::Device& device) {
  std::optional<Error> unfit;
  const std::string origin = build->model.origin;
  // The degree whose split the recipe cannot take: tensor parallelism first, then pipeline
  // stages (a stage without the model's first layers), then expert parallelism.
  const char* option = deployment.tp > 1 ? "--tp" : deployment.pp > 1 ? "--pp" : "--ep";
  auto s = Make(std::move(build), std::move(deployment), device, unfit);
  if (!s) return std::unexpected(s.error());
  if (!*s) {
    return MakeError("option '" + std::string(option) +
                     "': a device's share does not fit the recipe (" + origin + ": " +
                     unfit->message + ")");
  }
  return std::move(**s);
}

Result<std::optional<Serving>> Serving::Deploy(std::shared_ptr<const ModelBuild> build,
                                               const Degrees& degrees,
                                               const device::Device& device, std::string& why,
                                               StageCache* cache) {
  Deployment deployment = Deployment::OneDevice(build->model.spec.num_layers());
  if (degrees.MultiDevice()) {
    auto planned = PlanDeployment(build->model.spec, degrees, device);
    if (!planned) {
      why = planned.error().message;
      return std::nullopt;
    }
    deployment = std::move(*planned);
  }
  std::optional<Error> unfit;
  auto s = Make(std::move(build), std::move(deployment), device, unfit, cache);
  if (s && !*s) why = "a device's share does not fit the recipe (" + unfit->message + ")";
  return s;
}

uint64_t Serving::StageBytesPerSeq(size_t s, int64_t memory_context) const {
  return BytesPerSeq(stages_[s].figures, stages_[s].kv_windows, memory_context);
}

Serving::MemoryFit Serving::Fit(int64_t memory_context, double mem_util) const {
  return Fit(memory_context, mem_util, Beside{});
}

Serving::MemoryFit Serving::Fit(int64_t memory_context, double mem_util,
                                const Beside& beside) const {
  uint64_t per_device = UINT64_MAX;
  for (size_t s = 0; s < stages_.size(); ++s) {
    ModelFigures held = stages_[s].figures;
    uint64_t per_seq = StageBytesPerSeq(s, memory_context);
    if (s + 1 == stages_.size()) {
      held.weight_bytes += beside.weight_bytes;
      per_seq += beside.bytes_per_seq;
    }
    per_device = std::min(per_device,
                          MaxBatch(held, per_seq, device_.memory_bytes, mem_util));
  }
  return {per_device * static_cast<uint64_t>(deployment_.dp_attention),
          KvWindowBytesPerSeq(build_->kv_windows, memory_context)};
}

// ---- The figures ---------------------------------------------------------------------------

namespace {

// The per-device figures into `d`: the largest share of any stage's device, the busiest
// stage's time. (Quotients that are exact without dividing — one stage's bubble, one device's
// share — skip the division: a sweep computes these for every point.)
void PerDevice(const Serving& serving, const StageTimes& times, const BatchSplit& split,
               const Figures& f, DeviceFigures& d) {
  const ModelFigures& share = serving.largest_share();
  d.weight_bytes = share.weight_bytes;
  d.kv_bytes_per_token = share.kv_bytes_per_token;
  d.state_bytes_per_seq = share.state_bytes_per_seq;
  double sum_s = 0, max_s = 0;
  int64_t busiest = 0;
  for (size_t s = 0; s < times.step_s.size(); ++s) {
    sum_s += times.step_s[s];
    if (times.step_s[s] > max_s) {
      max_s = times.step_s[s];
      busiest = static_cast<int64_t>(s);
    }
  }
  d.busiest_stage = busiest;
  d.seqs = static_cast<uint64_t>(split.resident);
  d.micro_batches = split.micro_count;
  const auto micro = static_cast<double>(split.micro_count);
  if (times.comm_s.empty()) {
    d.comm_time_s.reset();
  } else {
    d.comm_time_s = times.comm_s[static_cast<size_t>(busiest)] * micro;
  }
  if (times.floor_s.empty()) {
    d.step_floor_s.reset();
  } else {
    d.step_floor_s = PipelineStepTime(times.floor_s, split.micro_count);
  }
  const int64_t devices = serving.deployment().devices;
  d.tokens_per_s = devices == 1 ? f.tokens_per_s : f.tokens_per_s / static_cast<double>(devices);
  // bubble = (Σ t − max t) / step: 0 for one stage.
  d.bubble = f.step_time_s > 0 && sum_s != max_s ? (sum_s - max_s) / f.step_time_s : 0;
}

}  // namespace

void ServingFigures(const Serving& serving, const Workload& w, const StageTimes& times, Figures& f,
                    const Serving::MemoryFit* fit) {
  const BatchSplit split = serving.deployment().Split(w.batch);
  const bool prefill = w.phase == Phase::kPrefill;
  f.phase = w.phase;
  f.model = serving.build().figures;
  f.step_time_s = PipelineStepTime(times.step_s, split.micro_count);
  const double tokens = prefill ? static_cast<double>(w.batch) * static_cast<double>(w.Prompt())
                                : static_cast<double>(w.batch);
  f.tokens_per_s = f.step_time_s > 0 ? tokens / f.step_time_s : 0;
  f.ttft_s.reset();
  f.e2e_s.reset();
  f.tpot_s.reset();
  if (prefill) f.ttft_s = f.step_time_s;
  if (w.gen_len) {
    const double ttft_s =
        prefill ? f.step_time_s : PipelineStepTime(times.prefill_step_s, split.micro_count);
    const double decode_s = times.decode_sum_s.value_or(0);
    f.ttft_s = ttft_s;
    f.e2e_s = ttft_s + decode_s;
    f.tpot_s = *w.gen_len > 0 ? decode_s / static_cast<double>(*w.gen_len) : 0.0;
  }
  const Serving::MemoryFit memory = fit ? *fit : serving.Fit(w.MemoryContext(), w.mem_util);
  f.kv_window_bytes_per_seq = memory.kv_window_bytes_per_seq;
  f.max_batch = memory.max_batch;
  f.fits = static_cast<uint64_t>(w.batch) <= f.max_batch;
  PerDevice(serving, times, split, f, f.per_device);
}

// ---- Warnings -----------------------------------------------------------------------------

std::vector<std::string> WorkloadWarnings(const import::hf::ModelSpec& spec, const Workload& w) {
  std::vector<std::string> out;
  const bool decode = w.phase == Phase::kDecode;
  if (decode && w.prompt && !w.gen_len) {
    out.push_back("option '--prompt': a decode step without --gen-len does not use it (the step is "
                  "at --context " + Str(w.context) + "; --gen-len O times the request from the "
                  "prompt)");
  }
  if (!spec.max_position_embeddings) return out;
  const int64_t limit = *spec.max_position_embeddings;
  const std::string field = "the model's max_position_embeddings (" + Str(limit) + ")";
  // A decode step at context C attends over C + 1 positions; a prompt of P over P; a request's
  // last decode step over P + O.
  const bool step_past = decode && w.context >= limit;
  if (step_past) {
    out.push_back("option '--context': a decode step at context " + Str(w.context) +
                  " attends over " + Str(w.context + 1) + " positions, more than " + field);
  }
  const bool prompt_used = !decode || w.gen_len;
  if (w.Prompt() > limit) {
    // A decode request's prompt defaults to the context, already warned about.
    if (prompt_used && !(step_past && !w.prompt)) {
      out.push_back(std::string("option '") + (w.prompt ? "--prompt" : "--context") +
                    "': a prompt of " + Str(w.Prompt()) + " tokens is more positions than " + field);
    }
  } else if (w.gen_len && w.Prompt() + *w.gen_len > limit) {
    out.push_back("option '--gen-len': the request reaches " + Str(w.Prompt() + *w.gen_len) +
                  " positions (prompt " + Str(w.Prompt()) + " + " + Str(*w.gen_len) +
                  " generated), more than " + field);
  }
  return out;
}

// ---- The full analysis ---------------------------------------------------------------------

namespace {

// What the figures assume beyond the ledger: the deployment's layout, the request, the
// pipeline, the attention replicas, and what memory holds.
std::vector<std::string> Assumptions(const Serving& serving, const Workload& w,
                                     const BatchSplit& split, const Figures& f) {
  const Deployment& d = serving.deployment();
  const device::Device& device = serving.device();
  const int64_t prompt = w.Prompt(), memory_context = w.MemoryContext();
  const auto percent = static_cast<int64_t>(std::lround(w.mem_util * 100));
  std::vector<std::string> out = d.assumptions;
  if (w.gen_len) {
    const int64_t gen = *w.gen_len;
    out.push_back("request: prefill of " + Str(prompt) + " tokens, then " + Str(gen) +
                  " decode steps at contexts " + Str(prompt) + ".." + Str(prompt + gen - 1) +
                  (d.one_device() ? "" : ", each a step of the deployment") +
                  "; tpot_s = decode time / " + Str(gen));
  }
  if (d.one_device()) {
    out.push_back("memory: weights (" + HumanBytes(static_cast<double>(f.model.weight_bytes)) +
                  ") + KV and state of " + WithCommas(static_cast<uint64_t>(memory_context)) +
                  " tokens per sequence (" +
                  HumanBytes(static_cast<double>(serving.StageBytesPerSeq(0, memory_context))) +
                  ") within " + Str(percent) + "% of " + HumanBytes(device.memory_bytes));
    return out;
  }
  if (d.pp > 1) {
    out.push_back("pipeline: " + Str(split.micro_count) + " micro-batches of " +
                  Str(split.micro_seqs) +
                  " sequences; step = Σ stage times + (micro-batches − 1) × the slowest stage; "
                  "layers split as evenly as possible, earlier stages taking the remainder");
  }
  if (d.dp_attention > 1) {
    out.push_back("attention data-parallel: each of " + Str(d.dp_attention) + " replicas runs " +
                  Str(split.seqs) + " of each micro-batch's " + Str(split.micro_seqs) +
                  " sequences (the busiest replica's share)");
  }
  const auto busiest = static_cast<size_t>(f.per_device.busiest_stage);
  out.push_back("memory per device: weights (" +
                HumanBytes(static_cast<double>(serving.stage_figures(busiest).weight_bytes)) +
                " on the busiest device) + KV and state of " + Str(memory_context) +
                " tokens for " + Str(split.resident) + " sequences within " + Str(percent) +
                "% of " + HumanBytes(device.memory_bytes));
  return out;
}

// The whole request's prefill (decode workloads) and Σ of its decode steps into `times`.
Result<void> TimeRequest(const Serving& serving, const Workload& w, const BatchSplit& split,
                         std::vector<double>& prefill_s, StageTimes& times) {
  const int64_t prompt = w.Prompt(), gen = *w.gen_len;
  if (w.phase == Phase::kDecode) {
    for (const StepGraph* g : serving.stages()) {
      auto p = AnalyzeStep(*g, PrefillBindings(split.seqs, prompt), serving.device());
      if (!p) return std::unexpected(p.error());
      prefill_s.push_back(p->analysis.totals.time_s);
    }
    times.prefill_step_s = prefill_s;
  }
  auto decode = RequestDecodeSum(serving, split, prompt, gen);
  if (!decode) return std::unexpected(decode.error());
  times.decode_sum_s = *decode;
  return {};
}

}  // namespace

Result<double> RequestDecodeSum(const Serving& serving, const BatchSplit& split, int64_t prompt,
                                int64_t gen_len) {
  return serving.deployment().one_device()
             ? SumDecodeSteps(serving.stage(0), serving.device(), split.seqs, prompt, gen_len)
             : SumPipelineDecodeSteps(serving.stages(), serving.device(), split.seqs,
                                      split.micro_count, prompt, gen_len);
}

Result<Evaluation> Evaluate(const Serving& serving, const Workload& w) {
  const BatchSplit split = serving.deployment().Split(w.batch);
  const cost::Workload bindings = w.phase == Phase::kPrefill
                                      ? PrefillBindings(split.seqs, w.Prompt())
                                      : DecodeBindings(split.seqs, w.context);
  std::vector<StepResult> steps;
  std::vector<double> step_s, floor_s, comm_s, prefill_s;
  bool kv_floor = false;
  for (const StepGraph* g : serving.stages()) {
    auto r = AnalyzeStep(*g, bindings, serving.device());
    if (!r) return std::unexpected(r.error());
    // The floor reads the KV cache at the best case a real engine stores (floor.h).
    const double saved = BestCaseKvSavedBytes(g->graph, r->ledger);
    LowerMemoryFloor(saved, serving.device(), r->analysis.totals);
    kv_floor = kv_floor || saved > 0;
    step_s.push_back(r->analysis.totals.time_s);
    floor_s.push_back(r->analysis.totals.fused_floor_s);
    comm_s.push_back(r->analysis.totals.comm_s);
    steps.push_back(std::move(*r));
  }
  StageTimes times{step_s, floor_s, comm_s, {}, std::nullopt};
  if (w.gen_len) {
    if (auto ok = TimeRequest(serving, w, split, prefill_s, times); !ok) {
      return std::unexpected(ok.error());
    }
  }
  Evaluation e;
  e.figures = ServingFigures(serving, w, times);
  e.assumptions = Assumptions(serving, w, split, e.figures);
  e.warnings = WorkloadWarnings(serving.build().model.spec, w);
  if (kv_floor) {
    e.assumptions.push_back("fused floor: KV caches at 4.5 bits per element, the smallest a real "
                            "engine stores (NVFP4 in TensorRT-LLM, q4_0 in llama.cpp); the "
                            "estimate keeps the recipe's");
  }
  e.step = std::move(steps[static_cast<size_t>(e.figures.per_device.busiest_stage)]);
  return e;
}

Result<LlmRun> RunLlm(const Request& request) {
  if (auto ok = CheckWorkload(request.workload); !ok) return std::unexpected(ok.error());
  auto model = OpenModel(request.model, request.parse);
  if (!model) return std::unexpected(model.error());
  auto device = device::ResolveDevice(request.device);
  if (!device) return std::unexpected(device.error());
  if (auto alias = device::AliasAssumption(*device)) model->spec.assumptions.push_back(*alias);
  if (request.float32_load) ServeFloat32(*model, *request.float32_load);
  auto build = BuildModel(std::move(*model), request.recipe);
  if (!build) return std::unexpected(build.error());
  auto deployment = PlanDeployment((*build)->model.spec, request.degrees, *device);
  if (!deployment) return std::unexpected(deployment.error());
  auto serving = Serving::Build(std::move(*build), std::move(*deployment), *device);
  if (!serving) return std::unexpected(serving.error());
  auto evaluation = Evaluate(*serving, request.workload);
  if (!evaluation) return std::unexpected(evaluation.error());
  return LlmRun{std::move(*serving), std::move(*evaluation)};
}

}  // namespace opscope::llm
