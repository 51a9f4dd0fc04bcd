// The planner (see plan.h): per recipe, the splits deployed and searched for the aggregated
// front, then the disaggregated one, then the front, the best point, the rate sizing, cost,
// energy and hints.
#include "plan/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <tuple>

#include "plan/hints.h"
#include "plan/search.h"
#include "predict/profile.h"
#include "sweep/step_plan.h"
#include "support/human_units.h"

namespace opscope::plan {

const char* ModeName(Mode mode) { return mode == Mode::kAgg ? "agg" : "disagg"; }

namespace {

std::string Str(int64_t v) { return std::to_string(v); }

std::unexpected<Error> OptionError(const std::string& option, const std::string& why) {
  return MakeError("option '" + option + "': " + why);
}

Result<void> CheckRequest(const PlanRequest& r) {
  if (r.gpus < 1 || r.gpus > 65536) return OptionError("--gpus", "must be in 1..65536, got " + Str(r.gpus));
  // Tokens per request past 2^30 are past every model's context and would overflow the
  // search's sums (isl + osl, the page grid's 2 · isl, batch · tokens).
  constexpr int64_t kMaxTokens = int64_t{1} << 30, kMaxBatch = int64_t{1} << 20;
  if (r.isl < 1 || r.isl > kMaxTokens) {
    return OptionError("--isl", "must be in 1.." + Str(kMaxTokens) + ", got " + Str(r.isl));
  }
  if (r.osl < 1 || r.osl > kMaxTokens) {
    return OptionError("--osl", "must be in 1.." + Str(kMaxTokens) + ", got " + Str(r.osl));
  }
  if (r.max_batch < 1 || r.max_batch > kMaxBatch) {
    return OptionError("--max-batch", "must be in 1.." + Str(kMaxBatch) + ", got " + Str(r.max_batch));
  }
  for (const auto& [option, value] :
       {std::pair<const char*, std::optional<double>>{"--ttft-ms", r.targets.ttft_s},
        {"--tpot-ms", r.targets.tpot_s}, {"--rate", r.rate}, {"--price", r.price_usd_per_gpu_hour}}) {
    if (value && !(*value > 0 && std::isfinite(*value))) {
      return OptionError(option, "must be a positive number, got " + std::to_string(*value));
    }
  }
  if (!(r.mem_util > 0 && r.mem_util <= 1)) {
    return OptionError("--mem-util", "must be in (0, 1], got " + std::to_string(r.mem_util));
  }
  if (r.weights.empty()) return OptionError("--weights", "no values");
  if (r.fixed_lengths && r.disagg) {
    return OptionError("--lengths", "fixed lengths are modelled for aggregated serving, not with "
                                    "--disagg");
  }
  return {};
}

// A purchase price spread over this many hours (three years, around the clock) when no
// --price is given: the device's list price per device-hour, power and hosting not included.
constexpr double kAmortizationHours = 3 * 365 * 24;

// The batches (sequences per device) the front is drawn at between two searched ones: 1..6,
// then three per doubling (8, 10, 12, 16, 20, 24, 32, ...), about a quarter apart. The
// extremes of each split — its first batch and the largest meeting the targets, found by
// bisection over every batch — are always searched.
std::vector<int64_t> Ladder(int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t s = 1; s <= std::min<int64_t>(6, hi); ++s) out.push_back(s);
  for (int64_t p = 8; p <= hi; p *= 2) {
    for (int64_t s : {p, p + p / 4, p + p / 2}) {
      if (s <= hi) out.push_back(s);
    }
  }
  return out;
}

// The ladder batch in (lo, hi) nearest the geometric middle; nullopt when there is none.
std::optional<int64_t> LadderMid(int64_t lo, int64_t hi) {
  const double middle = std::sqrt(static_cast<double>(lo) * static_cast<double>(hi));
  std::optional<int64_t> best;
  for (int64_t s : Ladder(hi - 1)) {
    if (s <= lo) continue;
    if (!best || std::abs(static_cast<double>(s) - middle) <
                     std::abs(static_cast<double>(*best) - middle)) {
      best = s;
    }
  }
  return best;
}

// Whether two splits differ in tensor parallelism alone (predicted disaggregation redeploys
// the prefill and decode workers at their own tp, the other degrees shared).
bool SameButTp(const SplitDegrees& a, const SplitDegrees& b) {
  return a.ep == b.ep && a.pp == b.pp && a.dp_attention == b.dp_attention;
}

// Each stage graph's predicted steps from its compiled plan (sweep::StepPlan::PredictStep:
// equal to the engine's prediction of the full analysis), compiled once per graph.
llm::GraphSourceMaker CompiledSteps() {
  return [](const llm::StepGraph& graph, const device::Device& device,
            const llm::StageNodeTimer& timer) -> Result<llm::GraphStepSource> {
    auto compiled = sweep::StepPlan::Compile(graph.graph);
    // A graph the cost rules reject at the plan's sample points has no plan: its steps take
    // the full analysis, which names what it rejects where the search asks.
    if (!compiled) return llm::GraphStepSource();
    std::shared_ptr<sweep::StepPlan> plan = std::move(*compiled);
    return [plan, device, timer](int64_t rows, int64_t seqs, int64_t ctx,
                                 bool decode) -> Result<std::optional<llm::StageStep>> {
      llm::StageStep step;
      auto ok = plan->PredictStep(sweep::Point{rows, seqs, ctx}, device, timer, decode, true, step);
      if (!ok) return std::unexpected(ok.error());
      if (!*ok) return std::nullopt;
      return std::optional<llm::StageStep>(std::move(step));
    };
  };
}

// A split searched for one recipe.
struct SplitState {
  std::unique_ptr<SplitEval> eval;
  int64_t lo = 1;           // the first batch (per device) not dominated by a sibling split
  int64_t feasible = 0;     // the largest batch meeting the targets (0: none)
};

// A prefill worker candidate of one recipe (disaggregated): its split at its best batch.
struct PrefillCandidate {
  SplitEval* eval = nullptr;
  int64_t s = 0;
  double ttft_s = 0;         // its prefill step + the KV transfer
  double kv_transfer_s = 0;
  double requests_per_s = 0;  // one worker
  int64_t devices = 0;
  double cost() const { return static_cast<double>(devices) / requests_per_s; }  // device-s per request
};

class Planner {
 public:
  // `engine`: the engine whose profile predicts the figures; nullopt: the roofline estimate.
  Planner(const PlanRequest& request, const device::Device& device,
          std::optional<std::string> engine, PlanResult& result)
      : r_(request), device_(device), engine_(std::move(engine)), out_(result) {}

  Result<void> RunRecipe(const std::shared_ptr<const llm::ModelBuild>& build,
                         const std::optional<std::string>& weights);
  // The front's points, best first marked; the rate sizing.
  void Finish();
  // The HTML page's grid over ISL and OSL (PlanResult::grid).
  Result<PageGrid> Grid();

 private:
  // The serving modes every split is predicted with (--lengths fixed).
  llm::ServingModes Modes() const {
    llm::ServingModes modes;
    modes.fixed_lengths = r_.fixed_lengths;
    modes.speculative = r_.speculative;
    return modes;
  }
  bool Meets(double ttft_s, double tpot_s) const {
    return (!r_.targets.ttft_s || ttft_s <= *r_.targets.ttft_s) &&
           (!r_.targets.tpot_s || tpot_s <= *r_.targets.tpot_s);
  }
  Result<std::optional<SplitState>> Deploy(const std::shared_ptr<const llm::ModelBuild>& build,
                                           const SplitDegrees& g,
                                           const std::vector<SplitState>& done);
  Result<std::vector<SplitState>> DeploySplits(const std::shared_ptr<const llm::ModelBuild>& build);
  Result<void> SearchAgg(std::vector<SplitState>& splits);
  Result<std::optional<int64_t>> PipelineStart(const SplitDegrees& g,
                                               const std::vector<SplitState>& done);
  Result<std::unique_ptr<SplitEval>> MakeEval(const std::shared_ptr<const llm::ModelBuild>& build,
                                              const SplitDegrees& g, const std::string& label);
  // The largest s in [lo, hi] for which ok(s) holds (ok falls from true to false as s grows);
  // 0 when none.
  Result<int64_t> Largest(int64_t lo, int64_t hi, const std::function<Result<bool>(int64_t)>& ok);
  // The same where ok may fall and rise again (a prediction: a batch whose prompts fill a
  // chunk, or complete a wave of fixed-length prompts, can have a lower TTFT than the one
  // before): every ladder batch in [lo, hi] is tried, and only the gap after the largest that
  // holds is bisected.
  Result<int64_t> LargestOnLadder(int64_t lo, int64_t hi,
                                  const std::function<Result<bool>(int64_t)>& ok);
  // The search a split's figures allow: the roofline estimate's static batch only grows with
  // the batch (Largest); a prediction's TTFT and TPOT need not (LargestOnLadder).
  Result<int64_t> LargestMeeting(int64_t lo, int64_t hi,
                                 const std::function<Result<bool>(int64_t)>& ok) {
    return engine_ ? LargestOnLadder(lo, hi, ok) : Largest(lo, hi, ok);
  }
  Result<size_t> AggPoint(SplitEval& e, int64_t s);
  Result<void> ExploreAgg(SplitEval& e, int64_t lo, int64_t hi, size_t lo_id, size_t hi_id);
  Result<void> Disaggregate(std::vector<SplitState>& splits);
  Result<std::optional<size_t>> DisaggPoint(SplitEval& decode, int64_t s,
                                            const std::vector<PrefillCandidate>& prefill);
  Result<void> ExploreDisagg(SplitEval& e, int64_t lo, int64_t hi,
                             const std::vector<PrefillCandidate>& prefill, double min_cost);
  void SizeForRate(const PlanPoint& p);
  PlanPoint MakeDisagg(SplitEval& decode, int64_t s, const BatchFigures& f,
                       const PrefillCandidate& p, int64_t x, int64_t y) const;
  Side MakeSide(const SplitEval& e, int64_t s, const BatchFigures& f, int64_t count,
                int64_t context) const;

  // Predicted disaggregation: x prefill workers `p` and y decode workers at s, as
  // `opscope llm --disagg x:y` predicts it (nullopt: the workers' splits differ in more than tp).
  Result<std::optional<PlanPoint>> PredictDisagg(SplitEval& decode, int64_t s,
                                                 const PrefillCandidate& p, int64_t x, int64_t y);

  const PlanRequest& r_;
  const device::Device& device_;
  std::optional<std::string> engine_;
  PlanResult& out_;
  std::vector<PlanPoint> points_;
  Front front_;
  std::optional<std::string> weights_;
  std::string recipe_;
  // Every recipe's deployed splits, kept for the page's grid.
  struct RecipeSplits {
    std::string recipe;
    std::vector<SplitState> splits;
  };
  std::vector<RecipeSplits> searched_;
  llm::Serving::StageCache stage_cache_;  // the current recipe's stage graphs
  // The stage predictors of the current recipe's splits, by graph (with the page's grid,
  // every recipe's).
  std::optional<llm::StagePredictorCache> predictor_cache_{std::in_place, CompiledSteps()};
  // The current recipe's roofline figures by stage graphs and micro-batches (their graphs
  // are held by stage_cache_ or the build while the recipe is searched).
  std::map<std::tuple<std::vector<const void*>, int64_t, bool>, std::shared_ptr<SharedFigures>>
      shared_figures_;
  std::shared_ptr<SharedFigures> SharedFiguresOf(const llm::Serving& serving) {
    std::vector<const void*> graphs;
    for (const llm::StepGraph* g : serving.stages()) graphs.push_back(g);
    const llm::Deployment& d = serving.deployment();
    auto& slot = shared_figures_[{std::move(graphs), d.micro_batches, d.one_device()}];
    if (!slot) slot = std::make_shared<SharedFigures>();
    return slot;
  }
};

Side Planner::MakeSide(const SplitEval& e, int64_t s, const BatchFigures& f, int64_t count,
                       int64_t context) const {
  Side side;
  const llm::Deployment& d = e.serving().deployment();
  side.tp = d.tp;
  side.ep = d.ep;
  side.pp = d.pp;
  side.dp_attention = d.dp_attention;
  side.devices = d.devices;
  side.batch = e.Batch(s);
  side.count = count;
  side.ttft_s = f.ttft_s;
  side.max_batch = e.FitBatch(context);
  return side;
}

Result<int64_t> Planner::Largest(int64_t lo, int64_t hi,
                                 const std::function<Result<bool>(int64_t)>& ok) {
  if (lo > hi) return 0;
  auto top = ok(hi);
  if (!top) return std::unexpected(top.error());
  if (*top) return hi;
  auto bottom = ok(lo);
  if (!bottom) return std::unexpected(bottom.error());
  if (!*bottom) return 0;
  while (hi - lo > 1) {  // ok(lo), !ok(hi)
    const int64_t mid = lo + (hi - lo) / 2;
    auto m = ok(mid);
    if (!m) return std::unexpected(m.error());
    (*m ? lo : hi) = mid;
  }
  return lo;
}

Result<int64_t> Planner::LargestOnLadder(int64_t lo, int64_t hi,
                                         const std::function<Result<bool>(int64_t)>& ok) {
  if (lo > hi) return 0;
  std::vector<int64_t> tried;
  for (int64_t s : Ladder(hi)) {
    if (s >= lo) tried.push_back(s);
  }
  if (tried.empty() || tried.front() != lo) tried.insert(tried.begin(), lo);
  if (tried.back() != hi) tried.push_back(hi);
  int64_t best = 0;
  size_t best_at = 0;
  for (size_t i = 0; i < tried.size(); ++i) {
    auto holds = ok(tried[i]);
    if (!holds) return std::unexpected(holds.error());
    if (*holds) {
      best = tried[i];
      best_at = i;
    }
  }
  if (best == 0 || best == hi) return best;
  return Largest(best, tried[best_at + 1] - 1, ok);
}

// ---- Aggregated ----------------------------------------------------------------------------

// The point of s sequences per device on `e`, replicated to fill N; added to the front.
Result<size_t> Planner::AggPoint(SplitEval& e, int64_t s) {
  auto f = e.At(s, out_.searched);
  if (!f) return std::unexpected(f.error());
  const int64_t context = r_.isl + r_.osl;
  const int64_t replicas = r_.gpus / e.devices();
  PlanPoint p;
  p.mode = Mode::kAgg;
  p.weights = weights_;
  p.recipe = recipe_;
  p.agg = MakeSide(e, s, *f, replicas, context);
  p.agg.tpot_s = f->tpot_s;
  const auto batch = static_cast<double>(p.agg.batch);
  // A replica runs its batch's requests whole: the prefill, then osl decode steps (e2e).
  p.agg.requests_per_s = batch / f->e2e_s;
  p.gpus = replicas * e.devices();
  p.ttft_s = f->ttft_s;
  p.tpot_s = f->tpot_s;
  p.tokens_per_s = static_cast<double>(replicas) * p.agg.requests_per_s * static_cast<double>(r_.osl);
  p.tokens_per_s_per_device = p.tokens_per_s / static_cast<double>(p.gpus);
  p.tokens_per_s_per_user = 1 / f->tpot_s;
  p.memory_headroom = 1 - batch / static_cast<double>(p.agg.max_batch);
  p.meets_targets = Meets(p.ttft_s, p.tpot_s);
  points_.push_back(std::move(p));
  const size_t id = points_.size() - 1;
  // Within a split's feasible range every batch meets the targets when TTFT and TPOT grow
  // with the batch; a prediction that dips (queueing, chunking) is kept off the front.
  if (points_[id].meets_targets) {
    front_.Add(points_[id].tokens_per_s_per_device, points_[id].tokens_per_s_per_user, id);
  }
  return id;
}

// Every batch strictly between lo and hi (both evaluated) that the front does not already beat:
// x grows and y falls with the batch, so (x(hi), y(lo)) bounds the range.
Result<void> Planner::ExploreAgg(SplitEval& e, int64_t lo, int64_t hi, size_t lo_id,
                                 size_t hi_id) {
  const std::optional<int64_t> between = LadderMid(lo, hi);
  if (!between) return {};
  if (front_.Dominates(points_[hi_id].tokens_per_s_per_device,
                       points_[lo_id].tokens_per_s_per_user)) {
    return {};
  }
  const int64_t mid = *between;
  auto mid_id = AggPoint(e, mid);
  if (!mid_id) return std::unexpected(mid_id.error());
  if (auto ok = ExploreAgg(e, lo, mid, lo_id, *mid_id); !ok) return ok;
  return ExploreAgg(e, mid, hi, *mid_id, hi_id);
}

// The first batch (per device) pipeline split g can add beside the splits without stages
// already searched; nullopt when it adds none. The same tp, ep and dp-attention on one stage
// runs s sequences per device in at most the time a pipeline stage sum takes, so where it
// holds them in memory, or where even it misses the targets, the pipeline split has nothing
// to add.
Result<std::optional<int64_t>> Planner::PipelineStart(const SplitDegrees& g,
                                                      const std::vector<SplitState>& done) {
  int64_t lo = 1;
  if (g.pp == 1) return lo;
  for (const SplitState& d : done) {
    const SplitDegrees& h = d.eval->degrees();
    if (h.pp != 1 || h.tp != g.tp || h.ep != g.ep || h.dp_attention != g.dp_attention) continue;
    const int64_t held = d.eval->MaxS(r_.isl + r_.osl);
    // At most max_batch / (dp · micro-batches) sequences per device; micro-batches = pp.
    if (r_.max_batch / (g.dp_attention * g.pp) <= held) return std::nullopt;
    auto next = d.eval->At(held + 1, out_.searched);
    if (!next) return std::unexpected(next.error());
    if (!Meets(next->ttft_s, next->tpot_s)) return std::nullopt;
    lo = held + 1;
  }
  return lo;
}

// Split g deployed and its evaluator: the engine's predictor compiled once for the split
// (every batch predicted on it), or the roofline. nullptr, listed in skipped under `label`,
// when a share cannot be costed (a device's experts fewer than top_k, ...): a split this model
// does not take.
Result<std::unique_ptr<SplitEval>> Planner::MakeEval(
    const std::shared_ptr<const llm::ModelBuild>& build, const SplitDegrees& g,
    const std::string& label) {
  std::string why;
  const llm::Degrees degrees{g.tp, g.ep, g.pp, g.dp_attention};
  // Splits whose devices hold equal shares (dp-attention alone differing, no expert
  // parallelism) share their stage graphs, and with them their compiled predictors and
  // timed steps (predicted) or their figures (roofline).
  auto serving = llm::Serving::Deploy(build, degrees, device_, why, &stage_cache_);
  if (!serving || !*serving) {
    out_.skipped.push_back(label + ": " + (serving ? why : serving.error().message));
    return nullptr;
  }
  auto shared = std::make_shared<const llm::Serving>(std::move(**serving));
  std::shared_ptr<SharedFigures> figures = engine_ ? nullptr : SharedFiguresOf(*shared);
  std::shared_ptr<const llm::ServingPredictor> predictor;
  if (engine_) {
    auto made = llm::ServingPredictor::Make(*shared, degrees, engine_, &*predictor_cache_);
    if (!made) return std::unexpected(made.error());
    predictor = std::make_shared<const llm::ServingPredictor>(std::move(*made));
  }
  return std::make_unique<SplitEval>(std::move(shared), std::move(predictor), g, r_.isl, r_.osl,
                                     r_.max_batch, r_.mem_util, std::move(figures), Modes());
}

// Deploys split g unless PipelineStart finds nothing it adds (nullopt), and searches its
// batches for the largest meeting the targets (LargestMeeting). A split the model does not
// take comes back without an evaluator.
Result<std::optional<SplitState>> Planner::Deploy(
    const std::shared_ptr<const llm::ModelBuild>& build, const SplitDegrees& g,
    const std::vector<SplitState>& done) {
  auto start = PipelineStart(g, done);
  if (!start) return std::unexpected(start.error());
  if (!*start) return std::nullopt;
  const int64_t lo = **start, context = r_.isl + r_.osl;
  const std::string label = "tp " + Str(g.tp) + ", ep " + Str(g.ep) + ", pp " + Str(g.pp) +
                            ", dp-attention " + Str(g.dp_attention) + " (" + recipe_ + ")";
  auto eval = MakeEval(build, g, label);
  if (!eval) return std::unexpected(eval.error());
  if (*eval == nullptr) return std::optional<SplitState>(SplitState{});
  SplitState state;
  state.eval = std::move(*eval);
  state.lo = lo;
  const int64_t hi = state.eval->MaxS(context);
  if (hi < 1) {
    out_.skipped.push_back(label + ": memory holds no sequence of " + Str(context) + " tokens");
    return std::optional<SplitState>(std::move(state));
  }
  SplitEval& e = *state.eval;
  // A share the cost rules reject (a device holding fewer experts than top_k) is listed the
  // same way.
  if (auto first = e.At(lo, out_.searched); !first) {
    out_.skipped.push_back(label + ": " + first.error().message);
    return std::optional<SplitState>(SplitState{});
  }
  const auto meets = [&](int64_t s) -> Result<bool> {
    auto f = e.At(s, out_.searched);
    if (!f) return std::unexpected(f.error());
    return Meets(f->ttft_s, f->tpot_s);
  };
  auto feasible = LargestMeeting(lo, hi, meets);
  if (!feasible) return std::unexpected(feasible.error());
  state.feasible = *feasible;
  if (*feasible == 0 && lo == 1) {
    auto f = e.At(1, out_.searched);
    if (!f) return std::unexpected(f.error());
    out_.skipped.push_back(label + ": misses the targets at batch " + Str(e.Batch(1)) + " (TTFT " +
                           HumanSeconds(f->ttft_s) + ", TPOT " + HumanSeconds(f->tpot_s) + ")");
  }
  return std::optional<SplitState>(std::move(state));
}

// ---- Disaggregated -------------------------------------------------------------------------

// The best point of decode workers at s sequences per device with any prefill candidate:
// x prefill and y decode workers on at most N devices, as many requests/s as the slower pool
// serves. For a given x the best y is next to x·R_p / R_d (below it the decode pool limits
// and tokens/s per device rise with y; above it they fall).
Result<std::optional<size_t>> Planner::DisaggPoint(SplitEval& decode, int64_t s,
                                                   const std::vector<PrefillCandidate>& prefill) {
  auto f = decode.At(s, out_.searched);
  if (!f) return std::unexpected(f.error());
  const auto dd = decode.devices();
  const double rd = static_cast<double>(decode.Batch(s)) / (static_cast<double>(r_.osl) * f->tpot_s);
  double best_x = -1;
  const PrefillCandidate* best_p = nullptr;
  int64_t best_px = 0, best_dy = 0;
  for (const PrefillCandidate& p : prefill) {
    if (engine_ && !SameButTp(p.eval->degrees(), decode.degrees())) continue;
    for (int64_t x = 1; x * p.devices + dd <= r_.gpus; ++x) {
      const int64_t y_max = (r_.gpus - x * p.devices) / dd;
      const double y_even = static_cast<double>(x) * p.requests_per_s / rd;
      for (int64_t y : {static_cast<int64_t>(std::floor(y_even)), static_cast<int64_t>(std::ceil(y_even))}) {
        y = std::clamp<int64_t>(y, 1, y_max);
        ++out_.searched;
        const double rate = std::min(static_cast<double>(x) * p.requests_per_s, static_cast<double>(y) * rd);
        const double per_device = rate * static_cast<double>(r_.osl) /
                                  static_cast<double>(x * p.devices + y * dd);
        if (per_device > best_x) {
          best_x = per_device;
          best_p = &p;
          best_px = x;
          best_dy = y;
        }
      }
    }
  }
  if (best_p == nullptr) return std::nullopt;
  if (engine_) {
    auto predicted = PredictDisagg(decode, s, *best_p, best_px, best_dy);
    if (!predicted) return std::unexpected(predicted.error());
    if (!*predicted || !(*predicted)->meets_targets) return std::nullopt;
    points_.push_back(std::move(**predicted));
  } else {
    points_.push_back(MakeDisagg(decode, s, *f, *best_p, best_px, best_dy));
  }
  const size_t id = points_.size() - 1;
  front_.Add(points_[id].tokens_per_s_per_device, points_[id].tokens_per_s_per_user, id);
  return id;
}

// The predicted point of x prefill workers `p` and y decode workers at s sequences per device:
// `opscope llm --tp <decode's> --disagg x:y --prefill-tp <p's> --decode-tp <decode's> --batch
// y·B --engine E` (llm.predicted: the y·B requests in flight of the whole deployment). Its
// sides keep the search's sizes; TTFT, TPOT and tokens/s are the prediction's.
Result<std::optional<PlanPoint>> Planner::PredictDisagg(SplitEval& decode, int64_t s,
                                                        const PrefillCandidate& p, int64_t x,
                                                        int64_t y) {
  if (!SameButTp(p.eval->degrees(), decode.degrees())) return std::nullopt;
  uint64_t unused = 0;
  auto f = decode.At(s, unused);  // memoized: the search asked for it first
  if (!f) return std::unexpected(f.error());
  llm::ServingModes modes;
  modes.disagg = llm::Disagg{x, y, p.eval->degrees().tp, decode.degrees().tp};
  llm::Workload w;
  w.phase = llm::Phase::kPrefill;
  w.batch = y * decode.Batch(s);
  w.context = r_.isl;
  w.prompt = r_.isl;
  w.gen_len = r_.osl;
  w.mem_util = r_.mem_util;
  ++out_.searched;
  // The workers are the splits already deployed: their predictors' steps, cached there.
  const llm::DisaggWorkers workers{p.eval->predictor().get(), decode.predictor().get()};
  auto predicted = decode.predictor()->PredictRequestFigures(w, modes, &workers);
  if (!predicted) return std::unexpected(predicted.error());
  PlanPoint pt = MakeDisagg(decode, s, *f, p, x, y);
  pt.requests_in_flight = w.batch;
  pt.ttft_s = predicted->ttft_s.value_or(0);
  pt.tpot_s = predicted->tpot_s.value_or(0);
  pt.decode.tpot_s = pt.tpot_s;
  if (predicted->dynamics) pt.kv_transfer_s = predicted->dynamics->figures.kv_transfer_s;
  pt.tokens_per_s = predicted->tokens_per_s;
  // Requests/s of the whole deployment, shared evenly by each pool's workers.
  const double rate = pt.tokens_per_s / static_cast<double>(r_.osl);
  pt.prefill.requests_per_s = rate / static_cast<double>(x);
  pt.decode.requests_per_s = rate / static_cast<double>(y);
  pt.tokens_per_s_per_device = pt.tokens_per_s / static_cast<double>(pt.gpus);
  pt.tokens_per_s_per_user = 1 / pt.tpot_s;
  pt.meets_targets = Meets(pt.ttft_s, pt.tpot_s);
  return std::optional<PlanPoint>(std::move(pt));
}

// The point of x prefill workers `p` and y decode workers at s sequences per device.
PlanPoint Planner::MakeDisagg(SplitEval& decode, int64_t s, const BatchFigures& f,
                              const PrefillCandidate& p, int64_t x, int64_t y) const {
  const int64_t context = r_.isl + r_.osl;
  PlanPoint pt;
  pt.mode = Mode::kDisagg;
  pt.weights = weights_;
  pt.recipe = recipe_;
  uint64_t unused = 0;
  const BatchFigures pf = *p.eval->At(p.s, unused);  // memoized when p was made
  pt.prefill = MakeSide(*p.eval, p.s, pf, x, r_.isl);
  pt.prefill.requests_per_s = p.requests_per_s;
  pt.decode = MakeSide(decode, s, f, y, context);
  pt.decode.tpot_s = f.tpot_s;
  pt.decode.requests_per_s =
      static_cast<double>(decode.Batch(s)) / (static_cast<double>(r_.osl) * f.tpot_s);
  pt.kv_transfer_s = p.kv_transfer_s;
  pt.gpus = x * p.devices + y * decode.devices();
  pt.ttft_s = p.ttft_s;
  pt.tpot_s = f.tpot_s;
  const double rate = std::min(static_cast<double>(x) * p.requests_per_s,
                               static_cast<double>(y) * pt.decode.requests_per_s);
  pt.tokens_per_s = rate * static_cast<double>(r_.osl);
  pt.tokens_per_s_per_device = pt.tokens_per_s / static_cast<double>(pt.gpus);
  pt.tokens_per_s_per_user = 1 / f.tpot_s;
  pt.memory_headroom =
      1 - static_cast<double>(pt.decode.batch) / static_cast<double>(pt.decode.max_batch);
  pt.meets_targets = Meets(pt.ttft_s, pt.tpot_s);
  return pt;
}

// As ExploreAgg, the bound on tokens/s per device of decode batches up to hi being
// osl / (the cheapest prefill device-seconds per request + hi's decode device-seconds).
Result<void> Planner::ExploreDisagg(SplitEval& e, int64_t lo, int64_t hi,
                                    const std::vector<PrefillCandidate>& prefill, double min_cost) {
  const std::optional<int64_t> between = LadderMid(lo, hi);
  if (!between) return {};
  auto flo = e.At(lo, out_.searched);
  if (!flo) return std::unexpected(flo.error());
  auto fhi = e.At(hi, out_.searched);
  if (!fhi) return std::unexpected(fhi.error());
  const double decode_cost = static_cast<double>(e.devices()) * static_cast<double>(r_.osl) *
                             fhi->tpot_s / static_cast<double>(e.Batch(hi));
  const double x_bound = static_cast<double>(r_.osl) / (min_cost + decode_cost);
  if (front_.Dominates(x_bound, 1 / flo->tpot_s)) return {};
  const int64_t mid = *between;
  auto m = DisaggPoint(e, mid, prefill);
  if (!m) return std::unexpected(m.error());
  if (auto ok = ExploreDisagg(e, lo, mid, prefill, min_cost); !ok) return ok;
  return ExploreDisagg(e, mid, hi, prefill, min_cost);
}

Result<void> Planner::Disaggregate(std::vector<SplitState>& splits) {
  auto link = KvLink(device_, r_.gpus);
  if (!link) {
    out_.skipped.push_back("disaggregated (" + recipe_ + "): the KV moves over a link device '" +
                           device_.name + "' has no bandwidth figure for");
    return {};
  }
  // Prefill workers: each split at the largest batch whose prefill and KV transfer meet the
  // TTFT target (device-seconds per request only fall as the batch grows).
  std::vector<PrefillCandidate> prefill;
  for (SplitState& st : splits) {
    SplitEval& e = *st.eval;
    const int64_t hi = e.MaxS(r_.isl);
    auto s = LargestMeeting(1, hi, [&](int64_t v) -> Result<bool> {
      auto f = e.At(v, out_.searched);
      if (!f) return std::unexpected(f.error());
      const double ttft = f->ttft_s + e.KvTransferS(v, link->first, link->second);
      return !r_.targets.ttft_s || ttft <= *r_.targets.ttft_s;
    });
    if (!s) return std::unexpected(s.error());
    if (*s == 0) continue;
    auto f = e.At(*s, out_.searched);
    if (!f) return std::unexpected(f.error());
    PrefillCandidate c;
    c.eval = &e;
    c.s = *s;
    c.kv_transfer_s = e.KvTransferS(*s, link->first, link->second);
    c.ttft_s = f->ttft_s + c.kv_transfer_s;
    c.requests_per_s = static_cast<double>(e.Batch(*s)) / f->ttft_s;
    c.devices = e.devices();
    prefill.push_back(c);
  }
  if (prefill.empty()) return {};
  // Keep the candidates no other beats on both devices per worker and device-s per request.
  std::vector<PrefillCandidate> kept;
  for (const PrefillCandidate& c : prefill) {
    const bool beaten = std::any_of(prefill.begin(), prefill.end(), [&](const PrefillCandidate& o) {
      return &o != &c && o.devices <= c.devices && o.cost() <= c.cost() &&
             (o.devices < c.devices || o.cost() < c.cost() || &o < &c);
    });
    if (!beaten) kept.push_back(c);
  }
  double min_cost = kept.front().cost();
  for (const PrefillCandidate& c : kept) min_cost = std::min(min_cost, c.cost());
  // Decode workers: each split's batches up to the largest meeting the TPOT target; the
  // extremes of every split first, then the ranges between, best splits first.
  std::vector<std::pair<SplitEval*, int64_t>> tops;
  std::vector<double> reach;
  for (SplitState& st : splits) {
    SplitEval& e = *st.eval;
    const int64_t hi = e.MaxS(r_.isl + r_.osl);
    auto top = LargestMeeting(1, hi, [&](int64_t v) -> Result<bool> {
      auto f = e.At(v, out_.searched);
      if (!f) return std::unexpected(f.error());
      return !r_.targets.tpot_s || f->tpot_s <= *r_.targets.tpot_s;
    });
    if (!top) return std::unexpected(top.error());
    if (*top == 0) continue;
    double x = 0;
    for (int64_t s : {int64_t{1}, *top}) {
      auto p = DisaggPoint(e, s, kept);
      if (!p) return std::unexpected(p.error());
      if (*p) x = points_[**p].tokens_per_s_per_device;
    }
    tops.emplace_back(&e, *top);
    reach.push_back(x);
    if (r_.rate) {
      // Sized for the rate, each pool on its own: every prefill candidate with the decode
      // workers' largest batch (the most requests/s per device of either pool).
      auto f = e.At(*top, out_.searched);
      if (!f) return std::unexpected(f.error());
      for (const PrefillCandidate& c : kept) {
        if (!engine_) {
          SizeForRate(MakeDisagg(e, *top, *f, c, 1, 1));
          continue;
        }
        auto predicted = PredictDisagg(e, *top, c, 1, 1);
        if (!predicted) return std::unexpected(predicted.error());
        if (*predicted) SizeForRate(**predicted);
      }
    }
  }
  std::vector<size_t> order(tops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return reach[a] > reach[b]; });
  for (size_t i : order) {
    if (auto ok = ExploreDisagg(*tops[i].first, 1, tops[i].second, kept, min_cost); !ok) return ok;
  }
  return {};
}

// ---- The rate ------------------------------------------------------------------------------

// The devices `p`'s configuration needs for --rate: whole replicas (agg) or whole worker pools
// (disagg), each pool sized for the rate on its own.
void Planner::SizeForRate(const PlanPoint& p) {
  if (!r_.rate || !p.meets_targets) return;
  const double rate = *r_.rate;
  PlanPoint sized = p;
  if (p.mode == Mode::kAgg) {
    sized.agg.count = static_cast<int64_t>(std::ceil(rate / p.agg.requests_per_s));
    sized.gpus = sized.agg.count * p.agg.devices;
    sized.tokens_per_s = rate * static_cast<double>(r_.osl);
  } else {
    sized.prefill.count = static_cast<int64_t>(std::ceil(rate / p.prefill.requests_per_s));
    sized.decode.count = static_cast<int64_t>(std::ceil(rate / p.decode.requests_per_s));
    sized.gpus = sized.prefill.count * p.prefill.devices + sized.decode.count * p.decode.devices;
    sized.tokens_per_s = rate * static_cast<double>(r_.osl);
  }
  sized.tokens_per_s_per_device = sized.tokens_per_s / static_cast<double>(sized.gpus);
  auto& best = out_.rate_sizing;
  if (!best || sized.gpus < best->gpus ||
      (sized.gpus == best->gpus && sized.tokens_per_s_per_user > best->point.tokens_per_s_per_user)) {
    best = RateSizing{sized.gpus, std::move(sized)};
  }
}

// Every split of the recipe the search space holds, deployed (Deploy), in search order.
Result<std::vector<SplitState>> Planner::DeploySplits(
    const std::shared_ptr<const llm::ModelBuild>& build) {
  uint64_t pruned = 0;
  const std::vector<SplitDegrees> degrees =
      EnumerateSplits(*build, device_, r_.gpus, r_.mem_util, out_.skipped, pruned);
  out_.splits += degrees.size() + pruned;
  if (pruned > 0) {
    out_.skipped.push_back(Str(static_cast<int64_t>(pruned)) + " split(s) of " + recipe_ +
                           ": an even share of the weights (" +
                           HumanBytes(static_cast<double>(build->figures.weight_bytes)) +
                           ") passes the memory budget of one device");
  }
  std::vector<SplitState> splits;
  for (const SplitDegrees& g : degrees) {
    auto st = Deploy(build, g, splits);
    if (!st) return std::unexpected(st.error());
    if (!*st) {
      ++out_.splits_pruned;
      continue;
    }
    if ((*st)->eval != nullptr) splits.push_back(std::move(**st));
  }
  return splits;
}

// The aggregated front of the splits: each split's extremes first (the front they make
// prunes the rest), then what lies between, the splits reaching the most tokens/s per device
// first (their front prunes the others' ranges sooner).
Result<void> Planner::SearchAgg(std::vector<SplitState>& splits) {
  std::vector<std::pair<size_t, size_t>> ends(splits.size());
  std::vector<size_t> order;
  for (size_t i = 0; i < splits.size(); ++i) {
    SplitState& st = splits[i];
    if (st.eval == nullptr || st.feasible < st.lo) continue;
    auto a = AggPoint(*st.eval, st.lo);
    if (!a) return std::unexpected(a.error());
    auto b = st.feasible == st.lo ? a : AggPoint(*st.eval, st.feasible);
    if (!b) return std::unexpected(b.error());
    SizeForRate(points_[*b]);
    ends[i] = {*a, *b};
    order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return points_[ends[a].second].tokens_per_s_per_device >
           points_[ends[b].second].tokens_per_s_per_device;
  });
  for (size_t i : order) {
    SplitState& st = splits[i];
    if (auto ok = ExploreAgg(*st.eval, st.lo, st.feasible, ends[i].first, ends[i].second); !ok) {
      return ok;
    }
  }
  return {};
}

Result<void> Planner::RunRecipe(const std::shared_ptr<const llm::ModelBuild>& build,
                                const std::optional<std::string>& weights) {
  weights_ = weights;
  shared_figures_.clear();
  if (!r_.page_grid) predictor_cache_.emplace(CompiledSteps());
  const llm::RecipeLabels& l = build->labels;
  recipe_ = l.weights + "/" + l.activations + "/" + l.kv;
  auto splits = DeploySplits(build);
  if (!splits) return std::unexpected(splits.error());
  if (auto ok = SearchAgg(*splits); !ok) return ok;
  if (r_.disagg) {
    if (auto ok = Disaggregate(*splits); !ok) return ok;
  }
  // Only the page's grid evaluates the splits again: without it they go now, and the next
  // recipe's take their memory.
  if (r_.page_grid) searched_.push_back({recipe_, std::move(*splits)});
  return {};
}

// The page's grid: ISL and OSL at half, once and twice the request's, each cell every
// deployed split at a ladder of batches (1, 2, 3, 4, 6, 8, 12, ... sequences per device, up to
// what memory holds), evaluated as the search evaluates them. The page filters them by its
// sliders' targets and device count and draws the front of what remains.
Result<PageGrid> Planner::Grid() {
  PageGrid g;
  auto link = KvLink(device_, r_.gpus);
  if (link) {
    g.link_bytes_per_s = link->first;
    g.link_latency_s = link->second;
  }
  std::vector<const SplitEval*> configs;
  for (const RecipeSplits& rs : searched_) {
    for (const SplitState& st : rs.splits) {
      const SplitDegrees& d = st.eval->degrees();
      g.configs.push_back("tp " + Str(d.tp) + " ep " + Str(d.ep) + " pp " + Str(d.pp) + " dp " +
                          Str(d.dp_attention));
      g.config_devices.push_back(st.eval->devices());
      g.config_recipes.push_back(rs.recipe);
      configs.push_back(st.eval.get());
    }
  }
  std::vector<int64_t> ladder;
  for (int64_t s = 1; s <= r_.max_batch; s = s < 4 ? s + 1 : s + s / 2) ladder.push_back(s);
  for (int64_t isl : {std::max<int64_t>(1, r_.isl / 2), r_.isl, r_.isl * 2}) {
    for (int64_t osl : {std::max<int64_t>(1, r_.osl / 2), r_.osl, r_.osl * 2}) {
      GridCell cell;
      cell.isl = isl;
      cell.osl = osl;
      for (size_t k = 0; k < configs.size(); ++k) {
        SplitEval e(configs[k]->shared_serving(), configs[k]->predictor(), configs[k]->degrees(),
                    isl, osl, r_.max_batch, r_.mem_util, nullptr, configs[k]->modes());
        const int64_t hi = e.MaxS(isl + osl);
        for (int64_t s : ladder) {
          if (s > hi) break;
          uint64_t evaluated = 0;
          auto f = e.At(s, evaluated);
          if (!f) return std::unexpected(f.error());
          GridCandidate c;
          c.config = static_cast<uint32_t>(k);
          c.batch = e.Batch(s);
          c.ttft_s = f->ttft_s;
          c.tpot_s = f->tpot_s;
          c.e2e_s = f->e2e_s;
          c.kv_transfer_s = link ? e.KvTransferS(s, link->first, link->second) : 0;
          cell.candidates.push_back(c);
        }
      }
      g.cells.push_back(std::move(cell));
    }
  }
  return g;
}

void Planner::Finish() {
  for (const Front::Entry& e : front_.entries()) out_.front.push_back(points_[e.id]);
  if (!out_.front.empty()) out_.best = out_.front.size() - 1;  // the most tokens/s per device
}

// Cost and energy of a point from the device's price and power.
void CostAndEnergy(const PlanResult& r, PlanPoint& p) {
  const double gpus = static_cast<double>(p.gpus);
  if (r.usd_per_gpu_hour && p.tokens_per_s > 0) {
    p.usd_per_mtoken = *r.usd_per_gpu_hour * gpus / 3600 / p.tokens_per_s * 1e6;
  }
  if (r.power_w && p.tokens_per_s > 0) p.tokens_per_joule = p.tokens_per_s / (gpus * *r.power_w);
}

void PriceAndPower(const PlanRequest& request, const device::Device& d, PlanResult& r) {
  if (request.price_usd_per_gpu_hour) {
    r.usd_per_gpu_hour = request.price_usd_per_gpu_hour;
    char price[32];
    std::snprintf(price, sizeof price, "%g", *request.price_usd_per_gpu_hour);
    r.price_basis = std::string("--price ") + price + " USD per device-hour";
  } else if (d.price_usd) {
    r.usd_per_gpu_hour = *d.price_usd / kAmortizationHours;
    r.price_basis = "list price " + std::to_string(static_cast<int64_t>(*d.price_usd)) +
                    " USD amortized over 3 years around the clock (power and hosting not "
                    "included): " + d.price_source;
  } else {
    r.price_basis = "no price: device '" + d.name + "' has no list price (pass --price)";
  }
  if (d.power_w) {
    r.power_w = d.power_w;
    r.power_basis = "board power " + std::to_string(static_cast<int64_t>(*d.power_w)) +
                    " W per device at full load (an upper bound: tokens per joule are a lower "
                    "bound), from the device database";
  } else {
    r.power_basis = "no power figure: device '" + d.name + "' has no power_w";
  }
}

}  // namespace

Result<PlanResult> RunPlan(const PlanRequest& request) {
  if (auto ok = CheckRequest(request); !ok) return std::unexpected(ok.error());
  auto model = llm::OpenModel(request.model, request.parse);
  if (!model) return std::unexpected(model.error());
  auto device = device::ResolveDevice(request.device);
  if (!device) return std::unexpected(device.error());
  PlanResult out;
  out.model = model->name;
  out.device = device->name;
  out.gpus = request.gpus;
  out.isl = request.isl;
  out.osl = request.osl;
  out.fixed_lengths = request.fixed_lengths;
  out.speculative = request.speculative;
  if (request.speculative && request.speculative->draft_model) {
    // The draft's vocabulary (and an EAGLE-3 head's hidden size) checked once, here: a draft
    // a split's tp cannot take only leaves that split without a batch.
    auto draft = llm::OpenDraftModel(*request.speculative->draft_model, *model);
    if (!draft) return std::unexpected(draft.error());
  } else if (request.speculative && model->spec.mtp.modules == 0) {
    return OptionError("--speculative", model->name + " has no multi-token-prediction modules "
                                        "(num_nextn_predict_layers)");
  }
  out.targets = request.targets;
  out.rate = request.rate;
  // The predicting engine: --engine, else the device's default; "roofline" predicts nothing.
  const std::string engine = request.engine.value_or(std::string(predict::DefaultEngine(*device)));
  std::optional<std::string> predicting;
  std::string implementation;  // an alternative the engine is configured for (ENGINE:NAME)
  if (engine != "roofline") {
    auto profile = predict::ResolveEngineProfile(engine);
    if (!profile) return OptionError("--engine", profile.error().message);
    auto entry = predict::FindDeviceProfile(*profile, *device);
    if (!entry) return OptionError("--engine", entry.error().message);
    if (auto serves = predict::CheckImplementationServes(*profile, **entry, device->name); !serves) {
      return OptionError("--engine", serves.error().message);
    }
    out.engine = profile->engine;
    implementation = profile->implementation;
    predicting = engine;
    // The model as the engine loads it (a float32 checkpoint in its 16-bit dtype).
    if (auto load = llm::Float32LoadOf(*profile)) llm::ServeFloat32(*model, *load);
  } else {
    out.engine = "roofline";
    // The roofline estimate is a static batch's (llm::Evaluate): it has no serving loop for
    // requests to move through in groups or to draft tokens in.
    const auto no_loop = [&](const char* option, const std::string& what, const char* or_else) {
      return OptionError(option, what + " a prediction of the serving loop, which the roofline "
                                 "estimate does not model" +
                                 (request.engine ? std::string(" (--engine roofline)")
                                                 : " (no engine profile for " + device->name + ")") +
                                 "; give --engine with a profile for the device" + or_else);
    };
    if (request.speculative) return no_loop("--speculative", "speculative decoding is", "");
    if (request.fixed_lengths) {
      return no_loop("--lengths", "fixed lengths are", ", or leave --lengths out");
    }
  }
  out.engine_why = request.engine ? "--engine" : "default for " + device->name;
  out.estimate = predicting ? "predicted" : "roofline";
  out.hint_engine = KnownHintEngine(out.engine) ? out.engine : "vllm";
  if (auto alias = device::AliasAssumption(*device)) out.assumptions.push_back(*alias);
  PriceAndPower(request, *device, out);
  Planner planner(request, *device, predicting, out);
  for (const std::optional<std::string>& weights : request.weights) {
    auto build = llm::BuildModel(*model, llm::RecipeOptions{weights, request.activations,
                                                            request.kv_dtype, std::nullopt});
    if (!build) return std::unexpected(build.error());
    for (const std::string& a : (*build)->whole->graph.assumptions) {
      if (std::find(out.assumptions.begin(), out.assumptions.end(), a) == out.assumptions.end()) {
        out.assumptions.push_back(a);
      }
    }
    if (auto ok = planner.RunRecipe(*build, weights); !ok) return std::unexpected(ok.error());
  }
  planner.Finish();
  if (request.page_grid) {
    auto grid = planner.Grid();
    if (!grid) return std::unexpected(grid.error());
    out.grid = std::move(*grid);
  }
  for (PlanPoint& p : out.front) CostAndEnergy(out, p);
  if (out.rate_sizing) CostAndEnergy(out, out.rate_sizing->point);
  const std::string model_arg = request.model;
  for (PlanPoint* p : [&] {
         std::vector<PlanPoint*> all;
         for (PlanPoint& q : out.front) all.push_back(&q);
         if (out.rate_sizing) all.push_back(&out.rate_sizing->point);
         return all;
       }()) {
    p->hint = LaunchHint(out.hint_engine, *p, model_arg, request.isl + request.osl);
    // The prediction assumes the engine configured for an alternative implementation: the
    // launch must configure it too (its setting is in the profile's rule, docs/engines.md).
    if (!p->hint.empty() && !implementation.empty()) {
      p->hint += "  (configured for its '" + implementation + "' kernels: docs/engines.md)";
    }
    p->reproduce = ReproduceCommand(
        *p, model_arg, request.device, request.isl, request.osl,
        request.engine.value_or(out.engine),
        std::string(request.fixed_lengths ? " --lengths fixed" : "") +
            (request.speculative ? llm::SpeculativeArgs(*request.speculative) : std::string()));
    if (request.speculative && !p->hint.empty()) {
      const int64_t drafts = request.speculative->drafts;
      const std::optional<std::string>& draft = request.speculative->draft_model;
      p->hint += "  (with the engine's " +
                 (draft ? "speculative decoding drafting with " + *draft
                        : std::string("MTP speculative decoding")) +
                 ", " + Str(drafts) + (drafts == 1 ? " draft token" : " draft tokens") +
                 " a step)";
    }
  }
  out.assumptions.push_back(
      "request: " + Str(request.isl) + " prompt tokens, " + Str(request.osl) +
      " output tokens; a replica runs its batch whole (its prefill, then " + Str(request.osl) +
      " decode steps over the growing context: TTFT, TPOT and e2e as 'opscope llm --phase prefill "
      "--prompt " + Str(request.isl) + " --gen-len " + Str(request.osl) + "' gives them); "
      "tokens/s = batch x " + Str(request.osl) + " / e2e per replica");
  out.assumptions.push_back(
      "search: tp, ep, pp and dp-attention powers of two, tensor parallelism within a node, "
      "experts spread over a whole stage or not at all, at most " + Str(request.max_batch) +
      " sequences a replica (--max-batch), batches whole per device");
  if (request.speculative) {
    out.assumptions.push_back(
        "speculative:" + llm::SpeculativeArgs(*request.speculative) + ": every point predicted "
        "with " +
        (request.speculative->draft_model
             ? "the draft model drafting, deployed at each split's tp"
             : std::string("the model's MTP modules drafting")) +
        " ('opscope llm --speculative'), its weights and KV beside the target in each "
        "worker's memory fit");
  }
  if (request.fixed_lengths) {
    out.assumptions.push_back(
        "lengths: fixed (--lengths fixed): every request exactly " + Str(request.isl) + " prompt "
        "and " + Str(request.osl) + " output tokens, as a fixed-length benchmark sends them; "
        "requests that start together share prefill steps and finish together "
        "('opscope llm --lengths fixed')");
  }
  if (request.disagg) {
    out.assumptions.push_back(
        "disaggregated: prefill workers run batches of prompts back to back (TTFT = their prefill "
        "+ the batch's KV over the link; no queueing), decode workers hold their batch for " +
        Str(request.osl) + " steps; requests/s = the slower pool's");
  }
  if (predicting) {
    out.assumptions.push_back(
        "estimate: predicted by the " + out.engine + " profile (" + out.engine_why +
        "): a point's batch is its requests in flight under continuous batching, TTFT/TPOT/e2e "
        "as llm.predicted of its 'opscope llm ... --engine' run" +
        (request.disagg ? std::string("; disaggregated points are its --disagg x:y predictions, "
                                      "prefill and decode workers differing in tp only")
                        : std::string()));
  } else {
    out.assumptions.push_back(
        "estimate: roofline (" + (request.engine ? std::string("--engine roofline")
                                                 : "no engine profile for " + device->name) +
        "): kernels at their roofline, no engine overheads");
  }
  return out;
}

}  // namespace opscope::plan
