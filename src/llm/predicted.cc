// Predicted serving figures (see predicted.h): engine-profile step times per stage, composed
// into the steps the serving dynamics ask for, through ServingFigures.
#include "llm/predicted.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "import/hf_config/step_graph.h"
#include "llm/floor.h"
#include "predict/accuracy.h"
#include "predict/predict.h"
#include "predict/profile.h"
#include "support/human_units.h"

namespace opscope::llm {
namespace {

using predict::EngineProfile;
using predict::KernelClass;
using predict::StepPredictor;

std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

cost::Workload Bindings(int64_t rows, int64_t seqs, int64_t context) {
  return cost::Workload{{{import::hf::kTokensSymbol, rows},
                         {import::hf::kSeqsSymbol, seqs},
                         {import::hf::kContextSymbol, context}}};
}

// The profile --engine names (or the device's default) and why it was chosen.
struct Engine {
  std::shared_ptr<const EngineProfile> profile;
  const predict::DeviceProfile* entry = nullptr;
  std::string why;
  std::string basis;  // entry->BasisFor(the device): "derived" for a family member
};

// The engine id --engine names, or the device's default.
std::string EngineId(const std::optional<std::string>& name, const device::Device& device) {
  return name ? *name : std::string(predict::DefaultEngine(device));
}

// The device's entry of `profile`, or why the profile cannot predict the device: no entry for
// it, or an alternative implementation (ENGINE:NAME) without kernels fitted for it.
Result<const predict::DeviceProfile*> EntryFor(const EngineProfile& profile,
                                               const device::Device& device) {
  auto entry = predict::FindDeviceProfile(profile, device);
  if (!entry) return MakeError("option '--engine': " + entry.error().message);
  if (auto serves = predict::CheckImplementationServes(profile, **entry, device.name); !serves) {
    return MakeError("option '--engine': " + serves.error().message);
  }
  return *entry;
}

Result<Engine> ResolveEngine(const std::optional<std::string>& name, const device::Device& device) {
  Engine e;
  const std::string id = EngineId(name, device);
  if (name) {
    e.why = "--engine";
  } else {
    e.why = id == "roofline" ? "no engine profile for " + device.name + ": kernels at their roofline"
                             : "default for " + device.name;
  }
  auto profile = predict::ResolveEngineProfile(id);
  if (!profile) return MakeError("option '--engine': " + profile.error().message);
  e.profile = std::make_shared<const EngineProfile>(std::move(*profile));
  auto entry = EntryFor(*e.profile, device);
  if (!entry) return std::unexpected(entry.error());
  e.entry = *entry;
  e.basis = e.entry->BasisFor(device.name);
  if (!e.profile->implementation.empty()) e.why += ", " + e.profile->implementation + " kernels";
  return e;
}

// One stage's step at one binding: its prediction.
struct StagePrediction {
  predict::StepPrediction prediction;
};

// A step of one stage graph: whether it is a decode step (CUDA graphs), the binding's
// dimensions.
using StepKey = std::pair<bool, std::vector<std::pair<std::string, int64_t>>>;
// At most this many steps kept per stage graph (each holds its nodes' times): a sweep of many
// distinct points starts over rather than grow without bound.
constexpr size_t kCachedSteps = 1024;

// One stage graph's predictor (compiled once) and the steps it timed, each analyzed and
// predicted once; locked, and shared by every Timer whose deployment has the graph (a
// Timer's copies, the deployments of a StagePredictorCache).
struct StageTiming {
  std::shared_ptr<const StepGraph> graph;        // the predictor's (held: its address is a key)
  std::shared_ptr<const EngineProfile> profile;  // the predictor's
  std::unique_ptr<StepPredictor> predictor;
  std::mutex mutex;
  std::map<StepKey, StagePrediction> steps;
  GraphStepSource source;  // the caller's compiled timing (empty: none)
  std::mutex source_mutex;
};

}  // namespace

// The stage timings of deployments that share stage graphs (see predicted.h), by graph, for
// one engine on one device. Each entry holds its graph: no other graph takes its address.
struct StagePredictorCache::Impl {
  GraphSourceMaker maker;
  std::optional<std::string> engine_name;
  std::string device;
  std::optional<Engine> engine;
  std::map<const StepGraph*, std::shared_ptr<StageTiming>> stages;
};
StagePredictorCache::StagePredictorCache(GraphSourceMaker maker)
    : impl_(std::make_unique<Impl>()) {
  impl_->maker = std::move(maker);
}
StagePredictorCache::~StagePredictorCache() = default;

namespace {

// The predictors of one Serving's stages and the steps they time: from a caller's StageSource
// where it says them, else by the full analysis of each step. Each stage's step at one binding
// is analyzed and predicted once (a ServingPredictor asked for many points times the same
// steps again: the decode steps of neighbouring batches, the floors of one sequence).
class Timer {
 public:
  // `shared`: the stage timings of graphs other deployments have (nullptr: its own).
  static Result<std::unique_ptr<Timer>> Make(const Serving& serving, const Engine& engine,
                                             StagePredictorCache::Impl* shared = nullptr) {
    std::unique_ptr<Timer> t(new Timer(serving, engine));
    for (size_t s = 0; s < serving.stage_count(); ++s) {
      const StepGraph* g = &serving.stage(s);
      if (shared != nullptr) {
        if (auto it = shared->stages.find(g); it != shared->stages.end()) {
          t->stages_.push_back(it->second);
          continue;
        }
      }
      auto p = StepPredictor::Compile(g->graph, serving.device(), *engine.profile);
      if (!p) return MakeError("option '--engine': " + p.error().message);
      auto timing = std::make_shared<StageTiming>();
      timing->graph = serving.shared_stage(s);
      timing->profile = engine.profile;
      timing->predictor = std::move(*p);
      if (shared != nullptr && shared->maker) {
        auto source = shared->maker(*g, serving.device(),
                                    StageNodeTimer(*timing->predictor, *engine.profile));
        if (!source) return std::unexpected(source.error());
        timing->source = std::move(*source);
      }
      if (shared != nullptr) shared->stages.emplace(g, timing);
      t->stages_.push_back(std::move(timing));
    }
    return t;
  }

  const Serving& serving() const { return serving_; }
  predict::StepOptions Options(bool decode) const {
    return predict::EngineStepOptions(engine_.profile->defaults, decode);
  }
  const StepPredictor& predictor(size_t s) const { return *stages_[s]->predictor; }
  size_t stage_count() const { return stages_.size(); }
  void set_source(const StageSource* source) { source_ = source; }

  Result<StagePrediction> Stage(size_t s, const cost::Workload& b, bool decode) const {
    if (source_ != nullptr) {
      auto own = FromSource(s, b, decode);
      if (!own) return std::unexpected(own.error());
      if (*own) return std::move(**own);
    }
    StageTiming& timing = *stages_[s];
    StepKey key{decode, b.bindings};
    {
      std::lock_guard lock(timing.mutex);
      if (auto it = timing.steps.find(key); it != timing.steps.end()) return it->second;
    }
    auto p = TimeStage(s, b, decode);
    if (!p) return p;
    std::lock_guard lock(timing.mutex);
    if (timing.steps.size() >= kCachedSteps) timing.steps.clear();  // a sweep's many points
    return timing.steps.try_emplace(std::move(key), std::move(*p)).first->second;
  }

  // Stage s's step at b: the graph's source where it says it, else the full analysis.
  Result<StagePrediction> TimeStage(size_t s, const cost::Workload& b, bool decode) const {
    StageTiming& timing = *stages_[s];
    if (timing.source) {
      const auto [rows, seqs, ctx] = Dims(b);
      std::lock_guard lock(timing.source_mutex);
      auto step = timing.source(rows, seqs, ctx, decode);
      if (!step) return std::unexpected(step.error());
      if (*step) return FromStep(std::move(**step));
    }
    auto step = AnalyzeStep(serving_.stage(s), b, serving_.device());
    if (!step) return std::unexpected(step.error());
    auto p = predictor(s).Predict(step->ledger, step->analysis, Options(decode));
    if (!p) return std::unexpected(p.error());
    return StagePrediction{std::move(*p)};
  }

  // The deployment's step from its stages' times (ServingFigures: the pipeline, micro-batches).
  double DeploymentStep(int64_t batch, std::span<const double> stage_s) const {
    Workload w;
    w.batch = std::max<int64_t>(1, batch);
    StageTimes times;
    times.step_s = stage_s;
    Figures f;
    ServingFigures(serving_, w, times, f, &fit_);
    return f.step_time_s;
  }

  // Every stage at one binding (the device's share of `batch` sequences).
  Result<double> Step(int64_t batch, const cost::Workload& b, bool decode) const {
    std::vector<double> stage_s;
    for (size_t s = 0; s < stage_count(); ++s) {
      auto p = Stage(s, b, decode);
      if (!p) return std::unexpected(p.error());
      stage_s.push_back(p->prediction.step_time_s);
    }
    return DeploymentStep(batch, stage_s);
  }

  // The fused floor (best-case KV) of every stage at one binding, Σ over stages: one sequence
  // crosses each of them.
  Result<double> Floor(const cost::Workload& b) const {
    const StepKey key{false, b.bindings};
    {
      std::lock_guard lock(floors_->mutex);
      if (auto it = floors_->floors.find(key); it != floors_->floors.end()) return it->second;
    }
    double floor_s = 0;
    for (size_t s = 0; s < stage_count(); ++s) {
      auto step = AnalyzeStep(serving_.stage(s), b, serving_.device());
      if (!step) return std::unexpected(step.error());
      LowerMemoryFloor(BestCaseKvSavedBytes(serving_.stage(s).graph, step->ledger),
                       serving_.device(), step->analysis.totals);
      floor_s += step->analysis.totals.fused_floor_s;
    }
    std::lock_guard lock(floors_->mutex);
    if (floors_->floors.size() >= kCachedSteps) floors_->floors.clear();
    floors_->floors.try_emplace(key, floor_s);
    return floor_s;
  }

 private:
  // The deployment's floors (Σ over its stages) per binding, shared by a Timer's copies.
  struct Floors {
    std::mutex mutex;
    std::map<StepKey, double> floors;
  };

  Timer(const Serving& serving, const Engine& engine)
      : serving_(serving), engine_(engine), fit_(serving.Fit(1, 0.9)) {}

  // A binding's token rows, sequences and context.
  static std::tuple<int64_t, int64_t, int64_t> Dims(const cost::Workload& b) {
    int64_t rows = 0, seqs = 0, ctx = 0;
    for (const auto& [name, value] : b.bindings) {
      if (name == import::hf::kTokensSymbol) rows = value;
      if (name == import::hf::kSeqsSymbol) seqs = value;
      if (name == import::hf::kContextSymbol) ctx = value;
    }
    return {rows, seqs, ctx};
  }
  static StagePrediction FromStep(StageStep step) {
    StagePrediction out;
    out.prediction.node_time_s = std::move(step.node_time_s);
    out.prediction.overhead_s = step.overhead_s;
    out.prediction.step_time_s = step.step_time_s;
    out.prediction.kernels_s = step.step_time_s - step.overhead_s;
    out.prediction.kernels = step.kernels;
    return out;
  }

  // Stage s's step at b from the source (nullopt: it does not say).
  Result<std::optional<StagePrediction>> FromSource(size_t s, const cost::Workload& b,
                                                    bool decode) const {
    const auto [rows, seqs, ctx] = Dims(b);
    auto step = (*source_)(s, rows, seqs, ctx, decode);
    if (!step) return std::unexpected(step.error());
    if (!*step) return std::nullopt;
    return FromStep(std::move(**step));
  }

  const Serving& serving_;
  Engine engine_;
  Serving::MemoryFit fit_;
  std::vector<std::shared_ptr<StageTiming>> stages_;
  const StageSource* source_ = nullptr;
  std::shared_ptr<Floors> floors_ = std::make_shared<Floors>();
};

// The first error a clock met (its functions return numbers).
struct ClockError {
  std::optional<Error> error;
  double Take(Result<double> r) {
    if (r) return *r;
    if (!error) error = r.error();
    return 0;
  }
};

// The steps the dynamics ask one worker for, each timed once (cached).
class Clocks {
 public:
  // `draft`: the draft model's timer for --speculative draft:N (nullptr: the MTP modules).
  Clocks(const Timer& timer, int64_t context, const std::optional<Speculative>& spec,
         ClockError& error, const Timer* draft = nullptr)
      : timer_(timer), context_(context), spec_(spec), error_(error), draft_(draft) {}

  StepClock Clock() {
    return {[this](int64_t seqs) { return Decode(std::max<int64_t>(1, seqs)); },
            [this](int64_t seqs, int64_t chunk, int64_t offset) {
              return Mixed(seqs, chunk, offset);
            }};
  }

  // The drafter's share of a decode step of `seqs` sequences (0 without --speculative), timed
  // once per `seqs` (the decode steps and the dynamics' draft_s ask for the same rounds).
  Result<double> DraftRound(int64_t seqs) const {
    if (!spec_) return 0.0;
    if (auto it = draft_rounds_.find(seqs); it != draft_rounds_.end()) return it->second;
    auto round = TimeDraftRound(seqs);
    if (round) draft_rounds_.emplace(seqs, *round);
    return round;
  }

 private:
  double Decode(int64_t seqs) {
    auto [it, fresh] = decode_.try_emplace(seqs, 0.0);
    if (fresh) it->second = error_.Take(TimeDecode(seqs));
    return it->second;
  }
  double Mixed(int64_t seqs, int64_t chunk, int64_t offset) {
    auto [it, fresh] = mixed_.try_emplace(std::tuple{seqs, chunk, offset}, 0.0);
    if (fresh) it->second = error_.Take(TimeMixed(seqs, chunk, offset));
    return it->second;
  }

  int64_t DeviceSeqs(int64_t seqs) const { return timer_.serving().deployment().Split(seqs).seqs; }

  Result<double> TimeDecode(int64_t seqs) const;
  Result<double> TimeDraftRound(int64_t seqs) const;
  Result<double> TimeMixed(int64_t seqs, int64_t chunk, int64_t offset) const;
  Result<double> DraftTime(int64_t seqs, int64_t rows) const;

  // A draft model's round: its first pass over the verified positions, and a one-token pass
  // (every kernel, and those of it that run once per round).
  struct DraftStep {
    double first_s = 0, step_s = 0, once_s = 0;
  };
  Result<DraftStep> DraftModelTime(int64_t seqs) const;

  const Timer& timer_;
  int64_t context_;
  const std::optional<Speculative>& spec_;
  ClockError& error_;
  const Timer* draft_;
  std::map<int64_t, double> decode_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, double> mixed_;
  mutable std::map<int64_t, double> draft_rounds_;  // DraftRound's, by sequences
};

// A decode step of `seqs` sequences at the mean context; speculative: the verify step (N + 1
// rows per sequence) and N draft steps of the MTP module or the draft model.
Result<double> Clocks::TimeDecode(int64_t seqs) const {
  const int64_t s = DeviceSeqs(seqs);
  if (!spec_) return timer_.Step(seqs, DecodeBindings(s, context_), true);
  const int64_t rows = spec_->drafts + 1;
  auto verify = timer_.Step(seqs, Bindings(s * rows, s, context_), true);
  if (!verify) return verify;
  auto draft = DraftRound(seqs);
  if (!draft) return draft;
  return *verify + *draft;
}

// The drafter's round for `seqs` sequences: a first pass over the N + 1 verified positions,
// then N − 1 one-token passes — of the draft model (without, after the first, the kernels that
// run once per round), or of the MTP module at the mean decoder layer's time for those rows.
Result<double> Clocks::TimeDraftRound(int64_t seqs) const {
  const auto drafts = static_cast<double>(spec_->drafts);
  if (draft_ != nullptr) {
    auto draft = DraftModelTime(seqs);
    if (!draft) return std::unexpected(draft.error());
    return draft->first_s + (drafts - 1) * (draft->step_s - draft->once_s);
  }
  const int64_t s = DeviceSeqs(seqs);
  auto first = DraftTime(s, spec_->drafts + 1);
  if (!first) return first;
  auto later = DraftTime(s, 1);
  if (!later) return later;
  return *first + (drafts - 1) * *later;
}

// A draft model's passes for `seqs` sequences on its deployment (the device's share of the
// sequences at the mean context), inside the target's scheduler step (its kernels alone, as the
// MTP module's). The first pass of a round runs over the N + 1 positions the verify step
// scored, as vLLM's proposers run it (the draft catches up on the tokens just verified; SGLang
// extends over the accepted ones, at most as many); each later pass drafts one token. An
// EAGLE-3 head's fc over the target's hidden states (and the norms before it, where the head
// has them) runs in the first pass only (vLLM's and SGLang's EAGLE-3 proposers): `once_s`, its
// share of a one-token pass.
Result<Clocks::DraftStep> Clocks::DraftModelTime(int64_t seqs) const {
  const int64_t s = draft_->serving().deployment().Split(seqs).seqs;
  const int64_t rows = spec_->drafts + 1;
  const bool eagle3 = draft_->serving().build().model.spec.eagle3.aux > 0;
  DraftStep d;
  for (size_t k = 0; k < draft_->stage_count(); ++k) {
    const ir::Graph& g = draft_->serving().stage(k).graph;
    auto first = draft_->Stage(k, Bindings(s * rows, s, context_), true);
    if (!first) return std::unexpected(first.error());
    for (double t : first->prediction.node_time_s) d.first_s += t;
    auto p = draft_->Stage(k, DecodeBindings(s, context_), true);
    if (!p) return std::unexpected(p.error());
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const double t = p->prediction.node_time_s[i];
      d.step_s += t;
      if (eagle3 && import::hf::IsEagle3OncePerRound(g.nodes[i].name)) d.once_s += t;
    }
  }
  return d;
}

// One pass of the MTP module over `rows` positions of each of `s` sequences per device (the
// round's first pass over the N + 1 verified positions, as the engines' MTP proposers run it;
// later passes one), from the target's step at those rows: its blocks at the mean decoder
// layer's time, the LM head (at one position a sequence), and the [hidden, 2·hidden]
// projection at the mean layer's time per parameter.
Result<double> Clocks::DraftTime(int64_t s, int64_t rows) const {
  const Serving& serving = timer_.serving();
  const ModelBuild& build = serving.build();
  const import::hf::ModelSpec& spec = build.model.spec;
  double layers_s = 0, head_s = 0;
  for (size_t k = 0; k < serving.stage_count(); ++k) {
    auto p = timer_.Stage(k, Bindings(s * rows, s, context_), true);
    if (!p) return std::unexpected(p.error());
    const ir::Graph& g = serving.stage(k).graph;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const double t = p->prediction.node_time_s[i];
      if (g.nodes[i].op == ir::OpKind::kLmHead) {
        head_s += t;
      } else if (g.nodes[i].op != ir::OpKind::kEmbedding) {
        layers_s += t;
      }
    }
  }
  const auto layers = static_cast<double>(std::max<int64_t>(1, spec.num_layers()));
  const double layer_s = layers_s / layers;
  const double hidden = static_cast<double>(spec.hidden);
  const double head_params = hidden * static_cast<double>(spec.vocab);
  const double layer_params =
      std::max(1.0, (static_cast<double>(build.figures.params_active) -
                     static_cast<double>(build.figures.params_embedding) -
                     (spec.tie_embeddings ? 0.0 : head_params)) / layers);
  const double blocks = static_cast<double>(std::max<size_t>(1, spec.mtp.blocks.size()));
  return blocks * layer_s + head_s + layer_s * 2 * hidden * hidden / layer_params;
}

// A step of `seqs` decoding sequences and one chunk of a prompt: the nodes outside attention
// at the step's token rows ((D + 1) sequences of m rows, m·(D + 1) ≈ D + chunk), attention as
// the decode of D sequences at the mean context plus the chunk's over the `offset` keys before
// it; the step's fixed costs once.
Result<double> Clocks::TimeMixed(int64_t seqs, int64_t chunk, int64_t offset) const {
  if (seqs == 0) return timer_.Step(1, Bindings(chunk, 1, offset), false);
  const int64_t s = DeviceSeqs(seqs);
  const int64_t m = std::max<int64_t>(1, (s + chunk + s / 2) / (s + 1));
  std::vector<double> stage_s;
  for (size_t k = 0; k < timer_.serving().stage_count(); ++k) {
    auto mixed = timer_.Stage(k, Bindings((s + 1) * m, s + 1, context_), false);
    if (!mixed) return std::unexpected(mixed.error());
    auto decode = timer_.Stage(k, DecodeBindings(s, context_), true);
    if (!decode) return std::unexpected(decode.error());
    auto own = timer_.Stage(k, Bindings(chunk, 1, offset), false);
    if (!own) return std::unexpected(own.error());
    const ir::Graph& g = timer_.serving().stage(k).graph;
    double kernels_s = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      kernels_s += ir::Family(g.nodes[i].op) == ir::OpFamily::kPagedAttention
                       ? decode->prediction.node_time_s[i] + own->prediction.node_time_s[i]
                       : mixed->prediction.node_time_s[i];
    }
    // The mixed step's fixed costs against its own kernel time (an eager step's CPU excess).
    stage_s.push_back(kernels_s + timer_.predictor(k).Overhead(mixed->prediction.kernels,
                                                               kernels_s, timer_.Options(false)));
  }
  return timer_.DeploymentStep(seqs + 1, stage_s);
}


// ---- The prediction ------------------------------------------------------------------------

// The classes holding at least a tenth of the step's kernel time (at most three, largest
// first), each with the fit error of the parameters that timed it.
std::vector<KernelClassError> DominantClasses(const StepPredictor& predictor,
                                              const predict::StepPrediction& p,
                                              const std::string& basis) {
  std::map<std::pair<std::string, std::string>, KernelClassError> by_class;
  for (size_t i = 0; i < p.node_time_s.size(); ++i) {
    const predict::KernelParams* params = predictor.ParamsOf(i, p.node_class[i]);
    if (params == nullptr || p.node_time_s[i] <= 0) continue;
    const std::string cls(predict::KernelClassName(p.node_class[i]));
    KernelClassError& e = by_class[{cls, params->variant}];
    e.kernel_class = cls;
    e.variant = params->variant;
    e.share += p.node_time_s[i];
    e.basis = basis;
    e.samples = params->fit.samples;
    e.median_abs_error = params->fit.median_abs_error;
    e.p90_abs_error = params->fit.p90_abs_error;
  }
  std::vector<KernelClassError> out;
  for (auto& [key, e] : by_class) {
    e.share = p.kernels_s > 0 ? e.share / p.kernels_s : 0;
    if (e.share >= 0.1) out.push_back(e);
  }
  std::stable_sort(out.begin(), out.end(), [](const KernelClassError& a, const KernelClassError& b) {
    return a.share > b.share;
  });
  if (out.size() > 3) out.resize(3);
  return out;
}

// The held-out end-to-end errors of the engine on the device, else over all its devices.
std::vector<EndToEndErrorFigure> EndToEndFigures(const std::string& engine,
                                                 const std::string& device) {
  std::vector<EndToEndErrorFigure> own, all;
  for (const predict::EndToEndError& e : predict::EndToEndErrors()) {
    if (e.engine != engine) continue;
    if (e.device == device) own.push_back({e.metric, device, e.runs, e.median_abs_error});
    if (e.device == "*") all.push_back({e.metric, "all devices", e.runs, e.median_abs_error});
  }
  return own.empty() ? all : own;
}

void AddNote(std::vector<std::string>& notes, const std::string& note) {
  if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
}

// The static step (the workload `opscope llm` evaluates), predicted: node times of the busiest
// stage, the stages' times through ServingFigures, the dominant classes.
Result<void> PredictStaticStep(const Timer& timer, const Workload& w,
                               std::optional<size_t> node_stage, const Engine& engine,
                               bool floors, Predicted& out) {
  const Serving& serving = timer.serving();
  const BatchSplit split = serving.deployment().Split(w.batch);
  const bool prefill = w.phase == Phase::kPrefill;
  const cost::Workload b = prefill ? PrefillBindings(split.seqs, w.Prompt())
                                   : DecodeBindings(split.seqs, w.context);
  std::vector<double> stage_s;
  for (size_t s = 0; s < serving.stage_count(); ++s) {
    auto p = timer.Stage(s, b, !prefill);
    if (!p) return std::unexpected(p.error());
    stage_s.push_back(p->prediction.step_time_s);
    for (const std::string& n : p->prediction.notes) AddNote(out.notes, n);
    if (s != node_stage) continue;
    out.node_time_s = p->prediction.node_time_s;
    out.kernel_errors = DominantClasses(timer.predictor(s), p->prediction, engine.basis);
  }
  Workload step = w;
  step.gen_len.reset();
  StageTimes times;
  times.step_s = stage_s;
  const Figures f = ServingFigures(serving, step, times);
  out.step_time_s = f.step_time_s;
  out.tokens_per_s = f.tokens_per_s;
  if (prefill) {
    out.ttft_s = f.ttft_s;
    if (!floors) return {};
    auto floor = timer.Floor(b);
    if (!floor) return std::unexpected(floor.error());
    out.ttft_floor_s = *floor;
  }
  return {};
}

}  // namespace

Result<Disagg> ParseDisagg(std::string_view text) {
  const size_t colon = text.find(':');
  std::optional<int64_t> p, d;
  if (colon != std::string_view::npos) {
    p = ParseInt(text.substr(0, colon));
    d = ParseInt(text.substr(colon + 1));
  }
  if (!p || !d || *p < 1 || *d < 1 || *p > 4096 || *d > 4096) {
    return MakeError("option '--disagg': expected P:D, prefill and decode workers (e.g. 1:1), "
                     "got '" + std::string(text) + "'");
  }
  Disagg g;
  g.prefill_workers = *p;
  g.decode_workers = *d;
  return g;
}

Result<Speculative> ParseSpeculative(std::string_view text, double acceptance,
                                     std::optional<std::string> draft_model) {
  std::optional<int64_t> n;
  const bool draft = text.starts_with("draft:");
  if (text.starts_with("mtp:")) n = ParseInt(text.substr(4));
  if (draft) n = ParseInt(text.substr(6));
  if (!n || *n < 1 || *n > 16) {
    return MakeError("option '--speculative': expected mtp:N (the model's MTP modules) or "
                     "draft:N (a --draft-model) with N draft tokens in 1..16, got '" +
                     std::string(text) + "'");
  }
  if (!(acceptance >= 0 && acceptance <= 1)) {
    return MakeError("option '--acceptance': must be in [0, 1], got " + std::to_string(acceptance));
  }
  if (draft && (!draft_model || draft_model->empty())) {
    return MakeError("option '--speculative': draft:N needs the draft model, --draft-model M (a "
                     "preset, config.json or model folder)");
  }
  if (!draft && draft_model) {
    return MakeError("option '--draft-model': only with --speculative draft:N (mtp:N drafts with "
                     "the model's own MTP modules)");
  }
  return Speculative{*n, acceptance, draft ? std::move(draft_model) : std::nullopt};
}

Result<std::optional<Speculative>> ParseSpeculativeOptions(
    const std::optional<std::string>& text, std::optional<double> acceptance,
    const std::optional<std::string>& draft_model) {
  if (text.has_value() != acceptance.has_value()) {
    return MakeError(text ? "option '--speculative': needs --acceptance R"
                          : "option '--acceptance': only with --speculative mtp:N or draft:N");
  }
  if (draft_model && !text) return MakeError("option '--draft-model': only with --speculative draft:N");
  if (!text) return std::nullopt;
  auto speculative = ParseSpeculative(*text, *acceptance, draft_model);
  if (!speculative) return std::unexpected(speculative.error());
  return *speculative;
}

std::string SpeculativeName(const Speculative& s) {
  return (s.draft_model ? "draft:" : "mtp:") + std::to_string(s.drafts);
}

std::string SpeculativeArgs(const Speculative& s) {
  char acceptance[32];
  const auto end = std::to_chars(acceptance, acceptance + sizeof acceptance, s.acceptance).ptr;
  return " --speculative " + SpeculativeName(s) + " --acceptance " + std::string(acceptance, end) +
         (s.draft_model ? " --draft-model " + *s.draft_model : std::string());
}


namespace {

// The link a disaggregated request's KV crosses: the interconnect when every worker's devices
// fit in one node, else the network; its bytes/s and latency.
Result<std::pair<double, double>> TransferLink(const device::Device& d, int64_t devices) {
  const bool one_node = d.devices_per_node && static_cast<double>(devices) <= *d.devices_per_node;
  const std::optional<double>& bw = one_node ? d.interconnect_bytes_per_s : d.network_bytes_per_s;
  const std::optional<double>& lat = one_node ? d.interconnect_latency_s : d.network_latency_s;
  if (!bw) {
    return MakeError("option '--disagg': the KV moves over the " +
                     std::string(one_node ? "interconnect" : "network") + ", which device '" +
                     d.name + "' has no " +
                     (one_node ? "interconnect_bytes_per_s" : "network_bytes_per_s") +
                     " figure for");
  }
  return std::pair{*bw, lat.value_or(0.0)};
}

// A deployment of the model with tensor-parallel degree `tp` (the other degrees as given).
Result<Serving> Redeploy(const Serving& serving, Degrees degrees, int64_t tp,
                         const char* option) {
  degrees.tp = tp;
  std::string why;
  auto s = Serving::Deploy(serving.shared_build(), degrees, serving.device(), why);
  if (!s) return std::unexpected(s.error());
  if (!*s) return MakeError("option '" + std::string(option) + "': " + why);
  return std::move(**s);
}

struct RequestShape {
  ServingLoad load;
  int64_t context = 0;  // the mean decode context I + (O − 1)/2
  std::optional<Speculative> spec;
  const Timer* draft = nullptr;  // --speculative draft:N: the draft model's timer
};

// The draft model of --speculative draft:N, deployed beside the target's decoding devices: their
// tensor-parallel degree `tp` (the decode workers' under --disagg) and the target's attention
// replicas (vLLM, SGLang and TensorRT-LLM run a draft model at the target's tensor parallelism
// by default), no experts spread, no stages.
struct DraftModel {
  std::shared_ptr<const ModelBuild> build;
  std::unique_ptr<Serving> serving;
  std::unique_ptr<Timer> timer;
};

}  // namespace

std::optional<Float32Load> Float32LoadOf(const predict::EngineProfile& profile) {
  const predict::EngineDefaults& d = profile.defaults;
  // The names are bf16 or f16, checked when the profile loaded.
  const auto parse = [](const std::string& name) {
    return format::ParseFormat(name).value_or(format::Format::kBf16);
  };
  if (d.float32_dtype.empty()) return std::nullopt;
  Float32Load load{profile.engine, parse(d.float32_dtype), {}};
  for (const predict::Float32Exception& e : d.float32_dtype_by_model_type) {
    load.by_model_type_prefix.emplace_back(e.prefix, parse(e.dtype));
  }
  return load;
}

std::optional<Float32Load> EngineFloat32Load(const std::optional<std::string>& engine,
                                             const device::Device& device) {
  auto profile = predict::ResolveEngineProfile(EngineId(engine, device));
  return profile ? Float32LoadOf(*profile) : std::nullopt;
}

Result<Model> OpenDraftModel(const std::string& name, const Model& target) {
  const auto fail = [&](const std::string& why) {
    return MakeError("option '--draft-model': " + why);
  };
  auto model = OpenModel(name);
  if (!model) return fail(model.error().message);
  // A draft proposes the target's tokens: one tokenizer, the tables padded alike to within
  // llama.cpp's tolerance (common/speculative.cpp, SPEC_VOCAB_MAX_SIZE_DIFFERENCE = 128: a
  // family's sizes pad differently, Qwen2.5-0.5B's 151,936 rows beside Qwen2.5-32B's 152,064).
  constexpr int64_t kMaxVocabDifference = 128;
  const int64_t vocab = model->spec.vocab, target_vocab = target.spec.vocab;
  if (std::abs(vocab - target_vocab) > kMaxVocabDifference) {
    return fail(model->name + "'s vocabulary (" + std::to_string(vocab) + " tokens) is not " +
                target.name + "'s (" + std::to_string(target_vocab) +
                "): a draft model proposes the target's tokens");
  }
  // A draft saved in float32 (speculators' converted heads) runs in the target's 16-bit dtype:
  // vLLM builds the draft's model config with the target's dtype.
  ServeFloat32As(*model,
                 target.spec.dtype == format::Format::kF16 ? format::Format::kF16
                                                           : format::Format::kBf16,
                 "a draft model: the engines load a draft in the target's 16-bit dtype");
  // An EAGLE-3 head reads the target's hidden states: it is trained for one hidden size.
  const import::hf::Eagle3Spec& eagle3 = model->spec.eagle3;
  if (eagle3.aux > 0 && eagle3.target_hidden != target.spec.hidden) {
    return fail(model->name + " is an EAGLE-3 head over hidden states of " +
                std::to_string(eagle3.target_hidden) + ", and " + target.name + "'s are " +
                std::to_string(target.spec.hidden) + ": a head drafts for the model it was "
                "trained on");
  }
  return model;
}

namespace {

Result<DraftModel> MakeDraftModel(const std::string& name, const Serving& target, int64_t tp,
                                  const Engine& engine) {
  const auto fail = [&](const std::string& why) {
    return MakeError("option '--draft-model': " + why);
  };
  auto model = OpenDraftModel(name, target.build().model);
  if (!model) return std::unexpected(model.error());
  DraftModel d;
  auto build = BuildModel(std::move(*model), RecipeOptions{});
  if (!build) return fail(build.error().message);
  d.build = std::move(*build);
  const Deployment& t = target.deployment();
  Degrees degrees;
  degrees.tp = tp;
  if (t.dp_attention > 1) degrees.dp_attention = t.dp_attention;
  std::string why;
  auto serving = Serving::Deploy(d.build, degrees, target.device(), why);
  if (!serving) return fail(serving.error().message);
  if (!*serving) {
    return fail(d.build->model.name + " cannot run at the target's tp " + std::to_string(tp) +
                ": " + why);
  }
  d.serving = std::make_unique<Serving>(std::move(**serving));
  auto timer = Timer::Make(*d.serving, engine);
  if (!timer) return std::unexpected(timer.error());
  d.timer = std::move(*timer);
  return d;
}

// The draft models a predictor has deployed, by (name, tp): a sweep's or a planner's points of
// one deployment draft with one deployment of the draft, made at its first use (a draft's
// Timer is safe to share between threads, as the target's is).
struct DraftCache {
  std::mutex mutex;
  std::map<std::pair<std::string, int64_t>, std::shared_ptr<const DraftModel>> models;
};

// The draft model `name` at `tp` beside `target`: from `cache` when it has it (nullptr: made).
Result<std::shared_ptr<const DraftModel>> DraftFor(DraftCache* cache, const std::string& name,
                                                   const Serving& target, int64_t tp,
                                                   const Engine& engine) {
  const auto make = [&]() -> Result<std::shared_ptr<const DraftModel>> {
    auto made = MakeDraftModel(name, target, tp, engine);
    if (!made) return std::unexpected(made.error());
    return std::make_shared<const DraftModel>(std::move(*made));
  };
  if (cache == nullptr) return make();
  std::lock_guard lock(cache->mutex);
  const auto key = std::pair(name, tp);
  if (auto it = cache->models.find(key); it != cache->models.end()) return it->second;
  auto made = make();
  if (made) cache->models.emplace(key, *made);
  return made;
}

// ---- The drafter's memory ------------------------------------------------------------------

// The MTP modules on a device of the target's last stage. vLLM, SGLang and TensorRT-LLM load
// them there and share the target's embedding table and LM head (a checkpoint's own copies are
// not loaded twice). Per module: each block at the mean decoder layer's weight bytes on a device
// (DraftTime's mean layer), the projection [hidden, 2·hidden] whole on every device in the
// model's dtype (an unquantized, replicated nn.Linear in vLLM's and SGLang's DeepSeek MTP), and
// per cached token one full-attention layer's KV per block (the largest layer's on a device:
// every MTP block in these checkpoints attends over the whole context).
Result<DrafterMemory> MtpMemory(const Serving& s, int64_t memory_context) {
  const import::hf::ModelSpec& spec = s.build().model.spec;
  uint64_t layer_bytes = 0;  // one device per stage: Σ over stages = every layer's share
  for (size_t k = 0; k < s.stage_count(); ++k) {
    const ModelFigures& f = s.stage_figures(k);
    layer_bytes += f.weight_bytes - f.table_weight_bytes;
  }
  const auto layers = static_cast<uint64_t>(std::max<int64_t>(1, spec.num_layers()));
  const std::array<int64_t, 2> projection{spec.hidden, 2 * spec.hidden};
  auto projection_bytes = format::TensorBytes(spec.dtype, projection);
  if (!projection_bytes) {
    return MakeError("option '--speculative': the MTP projection [" + std::to_string(spec.hidden) +
                     ", " + std::to_string(2 * spec.hidden) + "] does not fit the model's dtype");
  }
  const auto modules = static_cast<uint64_t>(spec.mtp.modules);
  const auto blocks = static_cast<uint64_t>(std::max<size_t>(1, spec.mtp.blocks.size()));
  DrafterMemory m;
  m.weight_bytes = modules * (blocks * (layer_bytes / layers) + *projection_bytes);
  m.bytes_per_seq = modules * blocks * s.stage_figures(s.stage_count() - 1).layer_kv_bytes_per_token *
                    static_cast<uint64_t>(memory_context);
  return m;
}

// The drafter's memory and the fit with it on the `decoding` deployment (the target's, or a
// decode worker's under --disagg). `draft`: the draft model's deployment (draft:N); nullptr:
// the MTP modules (mtp:N).
Result<DrafterMemory> DrafterFit(const Serving& decoding, const Serving* draft,
                                 int64_t memory_context, double mem_util) {
  DrafterMemory m;
  if (draft != nullptr) {
    m.weight_bytes = draft->largest_share().weight_bytes;
    m.bytes_per_seq = draft->StageBytesPerSeq(0, memory_context);
  } else {
    auto mtp = MtpMemory(decoding, memory_context);
    if (!mtp) return std::unexpected(mtp.error());
    m = *mtp;
  }
  m.max_batch =
      decoding.Fit(memory_context, mem_util, {m.weight_bytes, m.bytes_per_seq}).max_batch;
  return m;
}

// Aggregated: one worker, the request's steps composed and timed on it.
Result<PredictedDynamics> Aggregate(const Timer& timer, const RequestShape& r, int64_t chunk,
                                    bool fixed_lengths) {
  ClockError error;
  Clocks clocks(timer, r.context, r.spec, error, r.draft);
  PredictedDynamics d;
  d.mode = "aggregated";
  d.chunk_tokens = chunk;
  if (fixed_lengths) {
    d.lengths = LengthsName(true);
    d.figures = FixedLengths(r.load, chunk, clocks.Clock());
  } else {
    d.figures = Aggregated(r.load, Compose(r.load, chunk), clocks.Clock());
  }
  if (error.error) return std::unexpected(*error.error);
  auto draft = clocks.DraftRound(r.load.concurrency);
  if (!draft) return std::unexpected(draft.error());
  d.draft_s = *draft;
  return d;
}

// Disaggregated on the workers' timers: the prefill pool's KV over the link, each pool's
// steps from its own timer.
Result<PredictedDynamics> DisaggregateOn(const Timer& prefill, const Timer& decode,
                                         const Disagg& g, const RequestShape& r, int64_t chunk) {
  const Serving& p = prefill.serving();
  const int64_t devices = g.prefill_workers * p.deployment().devices +
                          g.decode_workers * decode.serving().deployment().devices;
  auto link = TransferLink(p.device(), devices);
  if (!link) return std::unexpected(link.error());
  // Each prefill device sends what it holds of the sequence, all at once.
  uint64_t bytes = 0;
  for (size_t s = 0; s < p.stage_count(); ++s) {
    bytes = std::max(bytes, p.StageBytesPerSeq(s, r.load.prompt));
  }
  const double transfer_s = static_cast<double>(bytes) / link->first + link->second;
  ClockError error;
  Clocks prefill_clocks(prefill, r.context, std::nullopt, error);
  Clocks decode_clocks(decode, r.context, r.spec, error, r.draft);
  PredictedDynamics d;
  d.mode = "disaggregated";
  d.chunk_tokens = chunk;
  d.prefill_workers = g.prefill_workers;
  d.decode_workers = g.decode_workers;
  d.figures = Disaggregated(r.load, chunk, g.prefill_workers, g.decode_workers, transfer_s,
                            prefill_clocks.Clock(), decode_clocks.Clock());
  if (error.error) return std::unexpected(*error.error);
  auto draft = decode_clocks.DraftRound(WorkerShare(r.load.concurrency, g.decode_workers));
  if (!draft) return std::unexpected(draft.error());
  d.draft_s = *draft;
  return d;
}

// The request path outside the engine's steps (EngineProfile overheads.request_s): once in
// TTFT and the request's latency; the closed loop's throughput C·O / e2e follows (the path is
// taken as think time that holds no place in a step).
void AddRequestPath(const ServingLoad& load, double request_s, DynamicsFigures& f) {
  f.request_s = request_s;
  f.ttft_s += request_s;
  f.e2e_s += request_s;
  f.tokens_per_s = static_cast<double>(load.concurrency) * static_cast<double>(load.gen_len) /
                   f.e2e_s;
}

// The disaggregated workers of a caller that has none: each deployment at its own tp and its
// timer (a timer refers to its deployment: both kept here).
struct Workers {
  std::unique_ptr<Serving> prefill, decode;
  std::unique_ptr<Timer> prefill_timer, decode_timer;
};
Result<Workers> RedeployWorkers(const Serving& serving, const Engine& engine,
                                const Degrees& degrees, const Disagg& g) {
  Workers w;
  for (const auto& [tp, option, deployed, timer] :
       {std::tuple{g.prefill_tp.value_or(degrees.tp), "--prefill-tp", &w.prefill, &w.prefill_timer},
        std::tuple{g.decode_tp.value_or(degrees.tp), "--decode-tp", &w.decode, &w.decode_timer}}) {
    auto made = Redeploy(serving, degrees, tp, option);
    if (!made) return std::unexpected(made.error());
    *deployed = std::make_unique<Serving>(std::move(*made));
    auto t = Timer::Make(**deployed, engine);
    if (!t) return std::unexpected(t.error());
    *timer = std::move(*t);
  }
  return w;
}

// The whole request (--gen-len): its dynamics and floors.
// `workers`: the disaggregated workers' timers when the caller has them (else redeployed).
// `drafts`: the predictor's deployed draft models (nullptr: a draft model is made here).
Result<void> PredictRequest(const Timer& timer, const Workload& w, const Engine& engine,
                            const ServingModes& o, const Degrees& degrees, bool floors,
                            Predicted& out, DraftCache* drafts,
                            std::pair<const Timer*, const Timer*> workers = {nullptr, nullptr}) {
  const Serving& serving = timer.serving();
  RequestShape r;
  r.load.concurrency = w.batch;
  r.load.prompt = w.prompt.value_or(w.context);
  r.load.gen_len = *w.gen_len;
  r.load.overlapped = engine.profile->defaults.overlap_scheduling;
  r.load.prefill_first = engine.profile->defaults.prefill_first;
  r.context = r.load.prompt + (r.load.gen_len - 1) / 2;
  r.spec = o.speculative;
  std::shared_ptr<const DraftModel> draft;
  if (o.speculative) {
    if (o.speculative->draft_model) {
      // The draft runs beside the decoding devices: the decode workers' tp under --disagg.
      const int64_t tp = o.disagg ? o.disagg->decode_tp.value_or(degrees.tp)
                                  : serving.deployment().tp;
      auto made = DraftFor(drafts, *o.speculative->draft_model, serving, tp, engine);
      if (!made) return std::unexpected(made.error());
      draft = std::move(*made);
      r.draft = draft->timer.get();
      const Deployment& dd = draft->serving->deployment();
      const bool eagle3 = draft->build->model.spec.eagle3.aux > 0;
      out.notes.push_back(
          "speculative: " + std::string(eagle3 ? "EAGLE-3 head " : "draft model ") +
          draft->build->model.name + " (tp " + std::to_string(dd.tp) + "), " +
          std::to_string(o.speculative->drafts) +
          " draft tokens a step: a first pass over the N + 1 verified positions, then one "
          "token a pass, at its kernels' time" +
          (eagle3 ? " (its fc over the target's hidden states in the first pass only)" : "") +
          "; its weights and KV cache sit beside the target's on each decoding device (the "
          "predicted memory fit)");
    } else if (serving.build().model.spec.mtp.modules == 0) {
      return MakeError("option '--speculative': " + serving.build().model.name +
                       " has no multi-token-prediction modules (num_nextn_predict_layers); "
                       "draft:N --draft-model M drafts with a separate model");
    }
    r.load.tokens_per_step = ExpectedTokensPerStep(o.speculative->drafts, o.speculative->acceptance);
  }
  const int64_t chunk =
      predict::ChunkedPrefillTokens(*engine.profile, *engine.entry, serving.device());
  // Disaggregated: the caller's workers, else redeployed once here (for the dynamics and the
  // drafter's fit).
  Workers redeployed;
  if (o.disagg && workers.first == nullptr) {
    auto made = RedeployWorkers(serving, engine, degrees, *o.disagg);
    if (!made) return std::unexpected(made.error());
    redeployed = std::move(*made);
    workers = {redeployed.prefill_timer.get(), redeployed.decode_timer.get()};
  }
  auto d = o.disagg ? DisaggregateOn(*workers.first, *workers.second, *o.disagg, r, chunk)
                    : Aggregate(timer, r, chunk, o.fixed_lengths);
  if (!d) return std::unexpected(d.error());
  if (!engine.profile->transparent) {
    AddRequestPath(r.load, engine.profile->overheads.request_s, d->figures);
  }
  d->concurrency = r.load.concurrency;
  d->prompt = r.load.prompt;
  d->gen_len = r.load.gen_len;
  d->tokens_per_step = r.load.tokens_per_step;
  if (o.speculative) {
    d->speculative = SpeculativeName(*o.speculative) +
                     (draft ? " " + draft->build->model.name : std::string());
    auto memory = DrafterFit(o.disagg ? workers.second->serving() : serving,
                             draft ? draft->serving.get() : nullptr, w.MemoryContext(),
                             w.mem_util);
    if (!memory) return std::unexpected(memory.error());
    // Under --disagg each decode worker holds its share of the requests in flight.
    const int64_t held =
        WorkerShare(r.load.concurrency, o.disagg ? o.disagg->decode_workers : 1);
    memory->fits = static_cast<uint64_t>(held) <= memory->max_batch;
    d->drafter_memory = *memory;
    if (!draft) {
      out.notes.push_back("speculative: the MTP module beside the target's last layers on each "
                          "decoding device, sharing its embedding table and LM head: its block "
                          "at the mean decoder layer's weights, one full-attention layer's KV");
    }
  }
  out.ttft_s = d->figures.ttft_s;
  out.tpot_s = d->figures.tpot_s;
  out.e2e_s = d->figures.e2e_s;
  out.tokens_per_s = d->figures.tokens_per_s;
  out.dynamics = std::move(*d);
  if (!floors) return {};
  // Floors: one sequence's prompt, and one decode step after it yielding at most N + 1 tokens.
  auto ttft_floor = timer.Floor(PrefillBindings(1, r.load.prompt));
  if (!ttft_floor) return std::unexpected(ttft_floor.error());
  auto tpot_floor = timer.Floor(DecodeBindings(1, r.load.prompt));
  if (!tpot_floor) return std::unexpected(tpot_floor.error());
  out.ttft_floor_s = *ttft_floor;
  out.tpot_floor_s = *tpot_floor / static_cast<double>(o.speculative ? o.speculative->drafts + 1 : 1);
  return {};
}

}  // namespace

Result<DrafterMemory> MtpDrafterMemory(const Serving& serving, int64_t memory_context,
                                       double mem_util) {
  auto m = MtpMemory(serving, memory_context);
  if (!m) return std::unexpected(m.error());
  m->max_batch =
      serving.Fit(memory_context, mem_util, {m->weight_bytes, m->bytes_per_seq}).max_batch;
  return m;
}

struct ServingPredictor::State {
  Engine engine;
  std::unique_ptr<Timer> timer;
  Degrees degrees;
  mutable DraftCache drafts;  // --speculative draft:N's deployments, made once per predictor
};

ServingPredictor::ServingPredictor(std::unique_ptr<State> state) : state_(std::move(state)) {}
ServingPredictor::ServingPredictor(ServingPredictor&&) noexcept = default;
ServingPredictor& ServingPredictor::operator=(ServingPredictor&&) noexcept = default;
ServingPredictor::~ServingPredictor() = default;

Result<ServingPredictor> ServingPredictor::Make(const Serving& serving, const Degrees& degrees,
                                                const std::optional<std::string>& engine,
                                                StagePredictorCache* shared) {
  StagePredictorCache::Impl* cache = shared != nullptr ? shared->impl_.get() : nullptr;
  if (cache != nullptr && (!cache->engine || cache->engine_name != engine ||
                           cache->device != serving.device().name)) {
    // Another engine or device: its stage timings do not apply.
    auto e = ResolveEngine(engine, serving.device());
    if (!e) return std::unexpected(e.error());
    cache->engine_name = engine;
    cache->device = serving.device().name;
    cache->engine = std::move(*e);
    cache->stages.clear();
  }
  auto state = std::make_unique<State>();
  if (cache != nullptr) {
    state->engine = *cache->engine;
  } else {
    auto e = ResolveEngine(engine, serving.device());
    if (!e) return std::unexpected(e.error());
    state->engine = std::move(*e);
  }
  state->degrees = degrees;
  auto timer = Timer::Make(serving, state->engine, cache);
  if (!timer) return std::unexpected(timer.error());
  state->timer = std::move(*timer);
  return ServingPredictor(std::move(state));
}

Result<std::optional<std::string>> EngineCannotPredict(const std::optional<std::string>& engine,
                                                       const device::Device& device) {
  auto profile = predict::ResolveEngineProfile(EngineId(engine, device));
  if (!profile) return MakeError("option '--engine': " + profile.error().message);
  auto entry = EntryFor(*profile, device);
  if (!entry) return std::optional<std::string>(entry.error().message);
  return std::optional<std::string>();
}

const std::string& ServingPredictor::engine() const { return state_->engine.profile->engine; }

namespace {

// Disaggregation and speculative decoding are modes of a whole request: without --gen-len
// there is only the static step, which they would leave unchanged, so asking for them is an
// error rather than an option silently ignored.
Result<void> ModesNeedARequest(const Workload& workload, const ServingModes& modes) {
  if (workload.gen_len || (!modes.disagg && !modes.speculative && !modes.fixed_lengths)) return {};
  return MakeError(std::string("option '") +
                   (modes.disagg ? "--disagg" : modes.speculative ? "--speculative" : "--lengths") +
                   "': predicts a whole request; give its output length with --gen-len O "
                   "(alias --osl) and its prompt with --prompt I");
}

}  // namespace

Result<Predicted> ServingPredictor::Predict(const Workload& workload, const ServingModes& modes,
                                            std::optional<size_t> node_stage) const {
  if (auto ok = ModesNeedARequest(workload, modes); !ok) return std::unexpected(ok.error());
  const Engine& engine = state_->engine;
  const Timer& timer = *state_->timer;
  Predicted out;
  out.engine = engine.profile->engine;
  out.why = engine.why;
  out.basis = engine.profile->transparent ? "transparent" : engine.basis;
  out.version = engine.profile->version;
  if (auto ok = PredictStaticStep(timer, workload, node_stage, engine, true, out); !ok) {
    return std::unexpected(ok.error());
  }
  if (workload.gen_len) {
    if (auto ok = PredictRequest(timer, workload, engine, modes, state_->degrees, true, out,
                                 &state_->drafts);
        !ok) {
      return std::unexpected(ok.error());
    }
  }
  out.end_to_end_errors = EndToEndFigures(out.engine, timer.serving().device().name);
  return out;
}

Result<Predicted> ServingPredictor::PredictRequestFigures(const Workload& workload,
                                                          const ServingModes& modes,
                                                          const DisaggWorkers* workers) const {
  if (!workload.gen_len) return MakeError("option '--gen-len': a whole request needs it");
  Predicted out;
  out.engine = state_->engine.profile->engine;
  std::pair<const Timer*, const Timer*> timers{nullptr, nullptr};
  if (workers != nullptr && modes.disagg) {
    if (workers->prefill->engine() != engine() || workers->decode->engine() != engine()) {
      return MakeError("option '--engine': the disaggregated workers were predicted by another "
                       "engine");
    }
    timers = {workers->prefill->state_->timer.get(), workers->decode->state_->timer.get()};
  }
  if (auto ok = PredictRequest(*state_->timer, workload, state_->engine, modes, state_->degrees,
                               false, out, &state_->drafts, timers);
      !ok) {
    return std::unexpected(ok.error());
  }
  return out;
}


Result<Predicted> ServingPredictor::PredictFigures(const Workload& workload,
                                                   const ServingModes& modes,
                                                   const StageSource& source) const {
  if (auto ok = ModesNeedARequest(workload, modes); !ok) return std::unexpected(ok.error());
  const Engine& engine = state_->engine;
  Timer timer = *state_->timer;  // shares the predictors; this call's source only
  timer.set_source(&source);
  Predicted out;
  out.engine = engine.profile->engine;
  if (auto ok = PredictStaticStep(timer, workload, std::nullopt, engine, false, out); !ok) {
    return std::unexpected(ok.error());
  }
  if (workload.gen_len) {
    if (auto ok = PredictRequest(timer, workload, engine, modes, state_->degrees, false, out,
                                 &state_->drafts);
        !ok) {
      return std::unexpected(ok.error());
    }
  }
  return out;
}

Result<DrafterMemory> ServingPredictor::DrafterFit(int64_t memory_context, double mem_util,
                                                   const ServingModes& modes) const {
  const Serving& serving = state_->timer->serving();
  if (!modes.speculative || !modes.speculative->draft_model) {
    return llm::DrafterFit(serving, nullptr, memory_context, mem_util);
  }
  auto draft = DraftFor(&state_->drafts, *modes.speculative->draft_model, serving,
                        serving.deployment().tp, state_->engine);
  if (!draft) return std::unexpected(draft.error());
  return llm::DrafterFit(serving, (*draft)->serving.get(), memory_context, mem_util);
}

StageNodeTimer ServingPredictor::NodeTimer(size_t stage) const {
  return StageNodeTimer(state_->timer->predictor(stage), *state_->engine.profile);
}

double StageNodeTimer::NodeTime(size_t node, const cost::NodeCost& cost, const expr::Bindings& b,
                                const roofline::NodeTime& roof) const {
  const predict::KernelInput in = predictor_->Describe(node, cost, b);
  if (in.bytes == 0 && in.flops == 0 && in.bytes_link == 0) return 0;
  return predictor_->TimeOf(node, in, roof);
}

bool StageNodeTimer::LaunchesKernel(size_t node) const { return !predictor_->Fused(node); }

double StageNodeTimer::Overhead(uint64_t kernels, double kernels_s, bool decode) const {
  return predictor_->Overhead(kernels, kernels_s,
                              predict::EngineStepOptions(profile_->defaults, decode));
}

Result<Predicted> PredictServing(const Serving& serving, const Workload& workload,
                                 const Evaluation& evaluation, const PredictOptions& options,
                                 const Degrees& degrees) {
  auto predictor = ServingPredictor::Make(serving, degrees, options.engine);
  if (!predictor) return std::unexpected(predictor.error());
  return predictor->Predict(workload, options,
                            static_cast<size_t>(evaluation.figures.per_device.busiest_stage));
}

Result<PredictedRun> RunLlmPredicted(const Request& request, const PredictOptions& options) {
  // The model as the predicting engine loads it. An engine or device that cannot be resolved
  // is reported below, after the model's own errors (RunLlm, then PredictServing).
  Request served = request;
  if (auto device = device::ResolveDevice(request.device)) {
    served.float32_load = EngineFloat32Load(options.engine, *device);
  }
  auto run = RunLlm(served);
  if (!run) return std::unexpected(run.error());
  auto predicted =
      PredictServing(run->serving, request.workload, run->evaluation, options, request.degrees);
  if (!predicted) return std::unexpected(predicted.error());
  return PredictedRun{std::move(*run), std::move(*predicted)};
}

Result<bool> ParseFixedLengths(std::string_view text) {
  if (text == LengthsName(true) || text == LengthsName(false)) return text == LengthsName(true);
  return MakeError("option '--lengths': expected 'varied' (the default: lengths differ from "
                   "request to request) or 'fixed' (every request exactly the prompt and output "
                   "length given), got '" + std::string(text) + "'");
}

Result<PredictOptions> ParsePredictOptions(const PredictTexts& texts) {
  PredictOptions options;
  options.engine = texts.engine;
  if (texts.disagg) {
    auto disagg = ParseDisagg(*texts.disagg);
    if (!disagg) return std::unexpected(disagg.error());
    disagg->prefill_tp = texts.prefill_tp;
    disagg->decode_tp = texts.decode_tp;
    options.disagg = *disagg;
  } else if (texts.prefill_tp || texts.decode_tp) {
    return MakeError(std::string("option '") + (texts.prefill_tp ? "--prefill-tp" : "--decode-tp") +
                     "': only with --disagg P:D");
  }
  auto speculative =
      ParseSpeculativeOptions(texts.speculative, texts.acceptance, texts.draft_model);
  if (!speculative) return std::unexpected(speculative.error());
  options.speculative = *speculative;
  if (texts.lengths) {
    auto fixed = ParseFixedLengths(*texts.lengths);
    if (!fixed) return std::unexpected(fixed.error());
    options.fixed_lengths = *fixed;
    if (options.fixed_lengths && options.disagg) {
      return MakeError("option '--lengths': fixed lengths are modelled for aggregated serving, "
                       "not with --disagg");
    }
  }
  return options;
}

}  // namespace opscope::llm
