// Running a sweep (see sweep.h): per recipe a llm::ModelBuild, per device and deployment a
// llm::Serving whose stage graphs each get a compiled plan; per point, the stages' plan times
// go into llm::ServingFigures, exactly as `opscope llm` puts its full analysis's.
#include "sweep/sweep.h"

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <system_error>
#include <thread>

#include "llm/predicted.h"
#include "roofline/roofline.h"
#include "support/checked_math.h"
#include "support/huge_pages.h"
#include "sweep/step_plan.h"

namespace opscope::sweep {
namespace {

void AddUnique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const std::string& a : from) {
    if (std::find(to.begin(), to.end(), a) == to.end()) to.push_back(a);
  }
}

// The workload of one point (the sweep's --context is a prefill's prompt) with requests of
// `gen_len` tokens (nullopt: one step).
llm::Workload PointWorkload(const Grid& grid, std::optional<int64_t> gen_len, int64_t batch,
                            int64_t context) {
  llm::Workload w;
  w.phase = grid.phase;
  w.batch = batch;
  w.context = context;
  w.gen_len = gen_len;
  w.mem_util = grid.mem_util;
  return w;
}

uint64_t Axis(const std::vector<int64_t>& values) { return std::max<size_t>(values.size(), 1); }

// The grid's request axis: output lengths (outer) × disaggregation splits × prefill tps ×
// decode tps, or the one single-step, aggregated serving.
std::vector<SweepServing> Servings(const Grid& g) {
  std::vector<std::optional<int64_t>> gen_lens(g.gen_lens.begin(), g.gen_lens.end());
  if (gen_lens.empty()) gen_lens.emplace_back(std::nullopt);
  std::vector<std::optional<llm::Disagg>> splits;
  const std::vector<std::optional<int64_t>> row_tp{std::nullopt};
  auto or_row = [&](const std::vector<int64_t>& tps) {
    return tps.empty() ? row_tp : std::vector<std::optional<int64_t>>(tps.begin(), tps.end());
  };
  for (const std::optional<llm::Disagg>& d : g.disaggs) {
    if (!d) {
      splits.emplace_back(std::nullopt);
      continue;
    }
    for (const std::optional<int64_t>& p : or_row(g.prefill_tps)) {
      for (const std::optional<int64_t>& q : or_row(g.decode_tps)) {
        splits.emplace_back(llm::Disagg{d->prefill_workers, d->decode_workers, p, q});
      }
    }
  }
  if (splits.empty()) splits.emplace_back(std::nullopt);
  std::vector<SweepServing> out;
  for (const std::optional<int64_t>& o : gen_lens) {
    for (const std::optional<llm::Disagg>& d : splits) out.push_back({o, d});
  }
  return out;
}

// How many servings Servings(g) makes (counted, not built: the lists may be long); nullopt
// past 64 bits.
std::optional<uint64_t> ServingCount(const Grid& g) {
  const std::optional<uint64_t> per_split = CheckedMul(Axis(g.prefill_tps), Axis(g.decode_tps));
  if (!per_split) return std::nullopt;
  uint64_t splits = 0;
  for (const std::optional<llm::Disagg>& d : g.disaggs) splits += d ? *per_split : 1;
  return CheckedMul(Axis(g.gen_lens), std::max<uint64_t>(splits, 1));
}

// --disagg with what it needs: an engine (the split is the engine's serving dynamics) and
// whole requests; --prefill-tp/--decode-tp only with it.
Result<void> CheckDisagg(const Grid& g) {
  if (g.disaggs.empty()) {
    if (g.prefill_tps.empty() && g.decode_tps.empty()) return {};
    return MakeError(std::string("option '") +
                     (g.prefill_tps.empty() ? "--decode-tp" : "--prefill-tp") +
                     "': only with --disagg P:D");
  }
  if (!g.engine) {
    return MakeError("option '--disagg': needs --engine E (disaggregated figures are an engine's "
                     "predictions, as opscope llm --disagg gives them)");
  }
  if (g.gen_lens.empty()) {
    return MakeError("option '--disagg': needs --gen-len/--osl (a disaggregated deployment serves "
                     "whole requests)");
  }
  for (const auto& [option, values] :
       {std::pair<const char*, const std::vector<int64_t>*>{"--prefill-tp", &g.prefill_tps},
        {"--decode-tp", &g.decode_tps}}) {
    for (int64_t v : *values) {
      if (auto ok = llm::CheckDegree(option, v); !ok) return ok;
    }
  }
  return {};
}

// Copies an optional field by its parts: the row is written in place, and a 16-byte copy of
// what was just stored as 8 + 1 bytes stalls on store forwarding (per point, in a sweep).
void CopyOptional(const std::optional<double>& from, std::optional<double>& to) {
  if (from) {
    to = *from;
  } else {
    to.reset();
  }
}

// A row's figures from llm::ServingFigures; tpot_s of a decode step is the step itself.
void FillRow(const llm::Figures& f, int64_t batch, int64_t context, SweepRow& row) {
  row.batch = batch;
  row.context = context;
  row.step_time_s = f.step_time_s;
  row.tokens_per_s = f.tokens_per_s;
  CopyOptional(f.tpot_s, row.tpot_s);
  if (!f.tpot_s && f.phase == llm::Phase::kDecode) row.tpot_s = f.step_time_s;
  CopyOptional(f.ttft_s, row.ttft_s);
  row.max_batch = f.max_batch;
  row.fits = f.fits;
}

// A row from the full analysis; the bound from the costed step's nodes (a deployment's
// busiest device).
SweepRow RowFromEvaluation(const llm::Evaluation& e, int64_t batch, int64_t context) {
  SweepRow row;
  FillRow(e.figures, batch, context, row);
  double memory_s = 0, compute_s = 0;
  for (const roofline::NodeTime& t : e.step.analysis.nodes) {
    if (t.bound == roofline::Bound::kMemory) memory_s += t.time_s;
    if (t.bound == roofline::Bound::kCompute) compute_s += t.time_s;
  }
  row.compute_bound = compute_s > memory_s;
  return row;
}

// Every option in range (as `opscope llm` checks it), naming it.
Result<void> CheckGrid(const Grid& g, size_t devices) {
  for (const auto& [option, values] :
       {std::pair<const char*, const std::vector<int64_t>*>{"--batch", &g.batches},
        {"--context", &g.contexts}}) {
    if (values->empty()) return MakeError("option '" + std::string(option) + "': no values");
  }
  if (devices == 0) return MakeError("option '--device': no values");
  if (g.weights.empty()) return MakeError("option '--weights': no values");
  // The smallest and the largest batch, context and output length stand for every point.
  const auto [batch_min, batch_max] = std::minmax_element(g.batches.begin(), g.batches.end());
  const auto [context_min, context_max] = std::minmax_element(g.contexts.begin(), g.contexts.end());
  std::optional<int64_t> gen_min, gen_max;
  if (!g.gen_lens.empty()) {
    gen_min = *std::min_element(g.gen_lens.begin(), g.gen_lens.end());
    gen_max = *std::max_element(g.gen_lens.begin(), g.gen_lens.end());
  }
  if (auto ok = llm::CheckWorkload(PointWorkload(g, gen_min, *batch_min, *context_min)); !ok) {
    return ok;
  }
  if (auto ok = llm::CheckWorkload(PointWorkload(g, gen_max, *batch_max, *context_max)); !ok) {
    return ok;
  }
  if (auto ok = CheckDisagg(g); !ok) return ok;
  if (g.fixed_lengths) {
    if (!g.engine || g.gen_lens.empty()) {
      return MakeError("option '--lengths': fixed lengths are an engine's prediction of whole "
                       "requests; give --engine E and --gen-len/--osl");
    }
    for (const std::optional<llm::Disagg>& d : g.disaggs) {
      if (d) return MakeError("option '--lengths': fixed lengths are modelled for aggregated "
                              "serving, not with --disagg P:D");
    }
  }
  if (g.speculative) {
    if (!g.engine || g.gen_lens.empty()) {
      return MakeError("option '--speculative': speculative decoding is an engine's prediction "
                       "of whole requests; give --engine E and --gen-len/--osl");
    }
  }
  for (const auto& [option, values] :
       {std::pair<const char*, const std::vector<int64_t>*>{"--tp", &g.tps}, {"--ep", &g.eps},
        {"--pp", &g.pps}, {"--dp-attention", &g.dp_attentions}}) {
    for (int64_t v : *values) {
      if (auto ok = llm::CheckDegree(option, v); !ok) return ok;
    }
  }
  for (const auto& [option, value] :
       {std::pair<const char*, std::optional<int64_t>>{"--gpus-per-node", g.gpus_per_node},
        {"--micro-batches", g.micro_batches}}) {
    if (!value) continue;
    if (auto ok = llm::CheckDegree(option, *value); !ok) return ok;
  }
  std::optional<uint64_t> points = ServingCount(g);
  for (uint64_t axis : {uint64_t{g.batches.size()}, uint64_t{g.contexts.size()}, uint64_t{devices},
                        uint64_t{g.weights.size()}, Axis(g.tps), Axis(g.eps), Axis(g.pps),
                        Axis(g.dp_attentions)}) {
    if (points) points = CheckedMul(*points, axis);
  }
  if (!points || *points > kMaxPoints) {
    return MakeError("options '--batch', '--context', '--device', '--weights', '--tp', '--ep', "
                     "'--pp', '--dp-attention', '--gen-len', '--disagg': " +
                     (points ? std::to_string(*points) : "2^64 or more") + " points is more than " +
                     std::to_string(kMaxPoints) + " per sweep");
  }
  return {};
}

// The rows of one (recipe, device, deployment, request serving) over batch × context.
class GridRunner {
 public:
  // `predictor`: with --engine, the deployment's (nullptr: no predictions); `request`: how the
  // requests are served (rep.servings[ids.serving]).
  GridRunner(const SweepSpec& spec, const llm::Serving& serving, const SweepServing& request,
             SweepResult& rep, const llm::ServingPredictor* predictor)
      : spec_(spec), serving_(serving), request_(request), rep_(rep), predictor_(predictor) {
    modes_.disagg = request.disagg;
    modes_.fixed_lengths = spec.fixed_lengths;
    modes_.speculative = spec.speculative;
  }

  // Appends the grid's rows to the result, in order. A large grid (at least kPointsPerWorker
  // points a worker) is split by batch over threads, each with its own plans (a plan caches
  // as it goes) writing its own rows: the rows are the same for any thread count.
  struct Ids {
    uint32_t device = 0, recipe = 0, deployment = 0, serving = 0;
  };
  Result<void> Run(const Ids& ids, const std::function<void(uint64_t)>& tick) {
    const size_t batches = spec_.batches.size(), contexts = spec_.contexts.size();
    // Tiles of the batch × context grid, each costed in blocks of points that vary in one
    // variable (what the plan evaluates fastest): many contexts → a block per batch over up
    // to kBlock contexts; few contexts and many batches (a deployment sweep at one context)
    // → a block per context over up to kBlock batches.
    const bool by_context = contexts >= StepPlan::kBlock || contexts >= batches;
    layout_ = {by_context, by_context ? 1 : StepPlan::kBlock,
               by_context ? StepPlan::kBlock : contexts};
    const size_t tiles = (batches + layout_.tile_b - 1) / layout_.tile_b;
    constexpr size_t kPointsPerWorker = 16384;
    const size_t cores = spec_.threads != 0 ? spec_.threads
                                            : std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    const size_t workers = request_.gen_len ? 1 : std::max<size_t>(1, std::min({cores, tiles,
                               batches * contexts / kPointsPerWorker}));
    // Every worker costs on plans of its own; with --engine, each stage's node timer.
    plans_.resize(serving_.stage_count());
    timers_.clear();
    for (size_t s = 0; predictor_ && s < plans_.size(); ++s) {
      timers_.push_back(predictor_->NodeTimer(s));
    }
    for (size_t s = 0; s < plans_.size(); ++s) {
      while (plans_[s].size() < workers) {
        auto plan = StepPlan::Compile(serving_.stage(s).graph);
        if (!plan) return std::unexpected(Wrap(spec_.model->origin, plan.error()));
        plans_[s].push_back(std::move(*plan));
      }
    }
    // What memory holds at each context (the same for every batch).
    fits_.clear();
    for (int64_t context : spec_.contexts) {
      const int64_t memory_context = Workload(1, context).MemoryContext();
      fits_.push_back(serving_.Fit(memory_context, spec_.mem_util));
    }
    base_ = rep_.rows.size();
    rep_.rows.resize(base_ + batches * contexts);
    if (predictor_) rep_.predicted.resize(rep_.rows.size());
    ids_ = ids;
    std::vector<Worker> work(workers);
    std::vector<std::thread> threads;
    for (size_t w = 1; w < workers; ++w) {
      auto task = [&, w] {
        work[w].status = RunTiles(work[w], w, tiles * w / workers, tiles * (w + 1) / workers, {});
      };
      try {
        threads.emplace_back(task);
      } catch (const std::system_error&) {
        task();  // no thread to be had (a process limit): the same work, here
      }
    }
    // The first worker reports progress for all (its share, scaled).
    work[0].status = RunTiles(work[0], 0, 0, tiles / workers, [&](uint64_t n) { tick(n * workers); });
    for (std::thread& t : threads) t.join();
    for (const Worker& w : work) {
      if (!w.status) return w.status;
      rep_.points_by_plan += w.by_plan;
      rep_.points_by_full_analysis += w.by_full_analysis;
    }
    return {};
  }

 private:
  struct Layout {
    bool by_context = true;
    size_t tile_b = 1, tile_c = 1;  // batches × contexts per tile
  };
  // One thread's state: its tile of stage timings, scratch and counts.
  struct Worker {
    std::vector<std::vector<std::optional<StepTiming>>> tile;  // [stage][cell of the tile]
    std::vector<double> stage_s;  // the stage times of one point
    llm::Workload workload;       // of one point (batch and context vary)
    llm::Figures figures;         // of one point
    llm::StageStep step;          // a predicted stage step (--engine)
    uint64_t by_plan = 0, by_full_analysis = 0;
    Result<void> status;
  };

  // The rows of batch tiles [first, end) with worker w's plans.
  Result<void> RunTiles(Worker& wk, size_t w, size_t first, size_t end,
                        const std::function<void(uint64_t)>& tick) {
    const size_t batches = spec_.batches.size(), contexts = spec_.contexts.size();
    wk.tile.resize(serving_.stage_count());
    for (auto& t : wk.tile) t.resize(layout_.tile_b * layout_.tile_c);
    wk.workload = Workload(0, 0);
    for (size_t tile = first; tile < end; ++tile) {
      const size_t b0 = tile * layout_.tile_b;
      const size_t nb = std::min(layout_.tile_b, batches - b0);
      for (size_t c0 = 0; c0 < contexts; c0 += layout_.tile_c) {
        const size_t nc = std::min(layout_.tile_c, contexts - c0);
        if (auto ok = CostTile(wk, w, b0, nb, c0, nc); !ok) return ok;
        for (size_t i = 0; i < nb; ++i) {
          const int64_t batch = spec_.batches[b0 + i];
          for (size_t j = 0; j < nc; ++j) {
            const int64_t context = spec_.contexts[c0 + j];
            // Filled in place: a row assembled on the stack and copied costs a
            // store-forwarding stall per field, more than the point's arithmetic.
            SweepRow& row = rep_.rows[base_ + (b0 + i) * contexts + c0 + j];
            if (FromPlan(wk, batch, context, c0 + j, i * nc + j, row)) {
              ++wk.by_plan;
            } else {
              auto e = llm::Evaluate(serving_, Workload(batch, context));
              if (!e) return std::unexpected(e.error());
              row = RowFromEvaluation(*e, batch, context);
              ++wk.by_full_analysis;
            }
            row.device = ids_.device;
            row.recipe = ids_.recipe;
            row.deployment = ids_.deployment;
            row.serving = ids_.serving;
            if (predictor_) {
              auto ok = Predict(wk, w, batch, context, c0 + j,
                                rep_.predicted[base_ + (b0 + i) * contexts + c0 + j]);
              if (!ok) return ok;
            }
            if (tick) tick(1);
          }
        }
      }
    }
    return {};
  }

  // The engine's prediction of one point (--engine) with worker w's plans: the point's stage
  // steps timed by the engine inside the plans (StepPlan::PredictStep) — the static step
  // straight into ServingFigures, a whole request (--gen-len) through the predictor's serving
  // dynamics with the plans as its step source — as llm.predicted has them. A point some plan
  // gives up takes the predictor's full analysis.
  Result<void> Predict(Worker& wk, size_t w, int64_t batch, int64_t context, size_t c,
                       PredictedRow& out) {
    if (!request_.gen_len) {
      auto own = PredictStatic(wk, w, batch, context, c, out);
      if (!own) return std::unexpected(own.error());
      if (*own) return {};
    }
    const llm::StageSource source = [&](size_t s, int64_t rows, int64_t seqs, int64_t ctx,
                                        bool decode) -> Result<std::optional<llm::StageStep>> {
      llm::StageStep step;
      auto ok = plans_[s][w]->PredictStep(Point{rows, seqs, ctx}, serving_.device(), timers_[s],
                                          decode, true, step);
      if (!ok) return std::unexpected(ok.error());
      if (!*ok) return std::nullopt;
      return step;
    };
    auto p = predictor_->PredictFigures(Workload(batch, context), modes_, source);
    if (!p) return std::unexpected(p.error());
    out.step_time_s = p->step_time_s;
    out.tokens_per_s = p->tokens_per_s;
    out.tpot_s = p->tpot_s;
    if (!p->tpot_s && spec_.phase == llm::Phase::kDecode) out.tpot_s = p->step_time_s;
    out.ttft_s = p->ttft_s;
    if (request_.disagg && p->dynamics) out.kv_transfer_s = p->dynamics->figures.kv_transfer_s;
    if (p->dynamics && p->dynamics->drafter_memory) {
      out.drafter_max_batch = p->dynamics->drafter_memory->max_batch;
      out.drafter_fits = p->dynamics->drafter_memory->fits;
    }
    return {};
  }

  // The static step of a point predicted from the plans (as llm.predicted's step: the stages'
  // predicted steps through ServingFigures); false when some plan gives it up.
  Result<bool> PredictStatic(Worker& wk, size_t w, int64_t batch, int64_t context, size_t c,
                             PredictedRow& out) {
    const bool prefill = spec_.phase == llm::Phase::kPrefill;
    const int64_t seqs = serving_.deployment().Split(batch).seqs;
    const Point p = prefill ? Point{seqs * context, seqs, 0} : Point{seqs, seqs, context};
    wk.stage_s.resize(plans_.size());
    for (size_t s = 0; s < plans_.size(); ++s) {
      auto ok = plans_[s][w]->PredictStep(p, serving_.device(), timers_[s], !prefill, false,
                                          wk.step);
      if (!ok) return std::unexpected(ok.error());
      if (!*ok) return false;
      wk.stage_s[s] = wk.step.step_time_s;
    }
    llm::StageTimes times;
    times.step_s = wk.stage_s;
    wk.workload.batch = batch;
    wk.workload.context = context;
    llm::ServingFigures(serving_, wk.workload, times, wk.figures, &fits_[c]);
    out.step_time_s = wk.figures.step_time_s;
    out.tokens_per_s = wk.figures.tokens_per_s;
    out.tpot_s = prefill ? std::nullopt : std::optional<double>(wk.figures.step_time_s);
    CopyOptional(prefill ? wk.figures.ttft_s : std::nullopt, out.ttft_s);
    return true;
  }

  // Costs the tile batches[b0, b0 + nb) × contexts[c0, c0 + nc) on every stage (worker w's
  // plans) into wk.tile[stage][i · nc + j]: blocks over contexts (one batch each) or over
  // batches (one context each). With --gen-len every point takes the full analysis.
  Result<void> CostTile(Worker& wk, size_t w, size_t b0, size_t nb, size_t c0, size_t nc) {
    if (request_.gen_len) {
      for (auto& t : wk.tile) std::fill(t.begin(), t.end(), std::nullopt);
      return {};
    }
    const bool prefill = spec_.phase == llm::Phase::kPrefill;
    const llm::Deployment& deployment = serving_.deployment();
    // One device's share of a micro-batch; CheckGrid made sure seqs · context fits.
    auto point = [&](size_t i, size_t j) {
      const int64_t batch = spec_.batches[b0 + i], context = spec_.contexts[c0 + j];
      const int64_t seqs = deployment.Split(batch).seqs;
      return prefill ? Point{seqs * context, seqs, 0} : Point{seqs, seqs, context};
    };
    const bool by_context = layout_.by_context;
    const size_t blocks = by_context ? nb : nc, lanes = by_context ? nc : nb;
    std::array<Point, StepPlan::kBlock> points;
    std::array<std::optional<StepTiming>, StepPlan::kBlock> out;
    for (size_t k = 0; k < blocks; ++k) {
      for (size_t l = 0; l < lanes; ++l) points[l] = by_context ? point(k, l) : point(l, k);
      for (size_t s = 0; s < plans_.size(); ++s) {
        auto ok = plans_[s][w]->TimeBlock(std::span<const Point>(points.data(), lanes),
                                          serving_.device(),
                                          std::span<std::optional<StepTiming>>(out.data(), lanes));
        if (!ok) return std::unexpected(Wrap(spec_.model->origin, ok.error()));
        for (size_t l = 0; l < lanes; ++l) {
          wk.tile[s][by_context ? k * nc + l : l * nc + k] = out[l];
        }
      }
    }
    return {};
  }

  // The row of a point from the stages' plans (wk.tile[s][cell]) through llm::ServingFigures;
  // false when some stage's plan gave it up. The bound is the busiest stage's.
  bool FromPlan(Worker& wk, int64_t batch, int64_t context, size_t c, size_t cell,
                SweepRow& row) const {
    const size_t stages = wk.tile.size();
    wk.stage_s.resize(stages);
    for (size_t s = 0; s < stages; ++s) {
      const std::optional<StepTiming>& t = wk.tile[s][cell];
      if (!t) return false;
      wk.stage_s[s] = t->time_s;
    }
    llm::StageTimes times;
    times.step_s = wk.stage_s;
    wk.workload.batch = batch;
    wk.workload.context = context;
    llm::ServingFigures(serving_, wk.workload, times, wk.figures, &fits_[c]);
    FillRow(wk.figures, batch, context, row);
    const auto busiest = static_cast<size_t>(wk.figures.per_device.busiest_stage);
    row.compute_bound = wk.tile[busiest][cell]->compute_bound;
    return true;
  }

  // A point's workload under this runner's serving.
  llm::Workload Workload(int64_t batch, int64_t context) const {
    return PointWorkload(spec_, request_.gen_len, batch, context);
  }

  const SweepSpec& spec_;
  const llm::Serving& serving_;
  const SweepServing& request_;
  llm::ServingModes modes_;  // the predictor's: --disagg, --lengths, --speculative
  SweepResult& rep_;
  const llm::ServingPredictor* predictor_;
  std::vector<std::vector<std::unique_ptr<StepPlan>>> plans_;  // [stage][worker]
  std::vector<llm::Serving::MemoryFit> fits_;                  // per context of the grid
  std::vector<llm::StageNodeTimer> timers_;                    // per stage, with --engine
  Layout layout_;
  Ids ids_;
  size_t base_ = 0;  // the grid's first row in the result
};

std::string DegreesLabel(const llm::Degrees& g) {
  return "tp " + std::to_string(g.tp) + ", ep " + std::to_string(g.ep) + ", pp " +
         std::to_string(g.pp) +
         (g.dp_attention ? ", dp-attention " + std::to_string(*g.dp_attention) : "");
}

// Why the prefill or decode workers of a disaggregated serving cannot be deployed at their tp
// (as `opscope llm --disagg` redeploys them: the deployment's degrees at that tp), naming the
// option; empty when both can. Nothing is built for a tp equal to the deployment's own.
Result<std::string> DisaggCannotRun(const std::shared_ptr<const llm::ModelBuild>& build,
                                    const llm::Degrees& degrees, const device::Device& device,
                                    const llm::Disagg& split) {
  for (const auto& [option, tp] : {std::pair{"--prefill-tp", split.prefill_tp},
                                   std::pair{"--decode-tp", split.decode_tp}}) {
    if (!tp || *tp == degrees.tp) continue;
    llm::Degrees workers = degrees;
    workers.tp = *tp;
    std::string why;
    auto s = llm::Serving::Deploy(build, workers, device, why);
    if (!s) return std::unexpected(s.error());
    if (!*s) return "option '" + std::string(option) + "': " + why;
  }
  return std::string();
}

std::string DisaggLabel(const llm::Disagg& d) {
  std::string s = "disagg " + std::to_string(d.prefill_workers) + ":" +
                  std::to_string(d.decode_workers);
  if (d.prefill_tp) s += ", prefill-tp " + std::to_string(*d.prefill_tp);
  if (d.decode_tp) s += ", decode-tp " + std::to_string(*d.decode_tp);
  return s;
}

// The sweep of one grid whose options CheckGrid has passed.
class Sweeper {
 public:
  Sweeper(const SweepSpec& spec, const Progress& progress) : spec_(spec), progress_(progress) {}

  Result<SweepResult> Run() {
    rep_.model = spec_.model->name;
    rep_.phase = spec_.phase;
    for (const device::Device& d : spec_.devices) rep_.devices.push_back(d.name);
    rep_.servings = Servings(spec_);
    rep_.disagg = !spec_.disaggs.empty();
    rep_.speculative = spec_.speculative;
    const uint64_t grid = Axis(spec_.tps) * Axis(spec_.eps) * Axis(spec_.pps) *
                          Axis(spec_.dp_attentions) * rep_.servings.size();
    per_grid_ = static_cast<uint64_t>(spec_.batches.size()) * spec_.contexts.size();
    per_deployment_ = per_grid_ * rep_.servings.size();
    per_device_ = grid * per_grid_;
    total_ = static_cast<uint64_t>(spec_.weights.size()) * spec_.devices.size() * per_device_;
    // With --engine, a device the engine cannot predict (no entry for it, ENGINE:NAME's
    // kernels not fitted there) is skipped and listed once, as a deployment it cannot take is.
    unpredictable_.assign(spec_.devices.size(), false);
    if (spec_.engine) {
      for (size_t d = 0; d < spec_.devices.size(); ++d) {
        auto why = llm::EngineCannotPredict(spec_.engine, spec_.devices[d]);
        if (!why) return std::unexpected(why.error());
        if (!*why) continue;
        unpredictable_[d] = true;
        rep_.skipped.push_back(spec_.devices[d].name + ": " + **why);
      }
    }
    // 65,536 rows are ~6 MB: a few huge pages, not 1,400 faults. (Skipped deployments leave
    // part of it untouched.)
    ReserveHugePages(rep_.rows, total_);
    for (const std::optional<std::string>& weights : spec_.weights) {
      if (auto ok = RunRecipe(weights); !ok) return std::unexpected(ok.error());
    }
    if (rep_.rows.empty() && !rep_.skipped.empty()) {
      return MakeError("no deployment of the grid can run: " + rep_.skipped.front());
    }
    if (progress_) progress_(total_, total_);
    return std::move(rep_);
  }

 private:
  void Tick(uint64_t n) {
    done_ += n;
    if (progress_ && done_ - reported_ >= 4096) {
      reported_ = done_;
      progress_(std::min(done_, total_), total_);
    }
  }

  Result<void> RunRecipe(const std::optional<std::string>& weights) {
    auto build = llm::BuildModel(*spec_.model, llm::RecipeOptions{weights, spec_.activations,
                                                                  spec_.kv_dtype,
                                                                  spec_.state_dtype});
    if (!build) return std::unexpected(build.error());
    const llm::RecipeLabels& labels = (*build)->labels;
    const auto recipe = static_cast<uint32_t>(rep_.recipes.size());
    rep_.recipes.push_back(labels.weights + "/" + labels.activations + "/" + labels.kv);
    AddUnique(rep_.assumptions, (*build)->whole->graph.assumptions);
    const std::vector<int64_t> one{1};
    // dp-attention: llm's default (nullopt) unless the axis is given.
    std::vector<std::optional<int64_t>> dps(spec_.dp_attentions.begin(), spec_.dp_attentions.end());
    if (dps.empty()) dps.emplace_back(std::nullopt);
    for (size_t d = 0; d < spec_.devices.size(); ++d) {
      if (unpredictable_[d]) {
        Tick(per_device_);
        continue;
      }
      bool first_of_device = true;
      for (int64_t tp : spec_.tps.empty() ? one : spec_.tps) {
        for (int64_t ep : spec_.eps.empty() ? one : spec_.eps) {
          for (int64_t pp : spec_.pps.empty() ? one : spec_.pps) {
            for (const std::optional<int64_t>& dp : dps) {
              const llm::Degrees degrees{tp, ep, pp, dp, spec_.gpus_per_node,
                                         spec_.micro_batches};
              auto ok = RunDeployment(*build, degrees, d, recipe, first_of_device);
              if (!ok) return ok;
            }
          }
        }
      }
    }
    return {};
  }

  // The rows of one deployment on device d under each serving (a disaggregated one whose
  // workers cannot be deployed is skipped), or its entry in `skipped`. The first deployment
  // that runs on each device also runs the full analysis of its first point: its ledger's and
  // roofline's assumptions go in the result.
  Result<void> RunDeployment(const std::shared_ptr<const llm::ModelBuild>& build,
                             const llm::Degrees& degrees, size_t d, uint32_t recipe,
                             bool& first_of_device) {
    const device::Device& device = spec_.devices[d];
    std::string why;
    auto serving = llm::Serving::Deploy(build, degrees, device, why);
    if (!serving) return std::unexpected(serving.error());
    if (!*serving) {
      rep_.skipped.push_back(DegreesLabel(degrees) + " on " + device.name + ", " +
                             rep_.recipes[recipe] + ": " + why);
      done_ += per_deployment_;
      return {};
    }
    const llm::Deployment& plan = (*serving)->deployment();
    AddUnique(rep_.assumptions, plan.assumptions);
    const SweepDeployment label{plan.tp, plan.ep, plan.pp, plan.dp_attention, plan.devices};
    auto found = std::find(rep_.deployments.begin(), rep_.deployments.end(), label);
    const auto deployment = static_cast<uint32_t>(found - rep_.deployments.begin());
    if (found == rep_.deployments.end()) rep_.deployments.push_back(label);
    if (first_of_device) {
      first_of_device = false;
      auto e = llm::Evaluate(**serving, PointWorkload(spec_, rep_.servings.front().gen_len,
                                                      spec_.batches.front(),
                                                      spec_.contexts.front()));
      if (!e) return std::unexpected(e.error());
      AddUnique(rep_.assumptions, e->step.ledger.assumptions);
      AddUnique(rep_.assumptions, e->step.analysis.notes);
    }
    std::optional<llm::ServingPredictor> predictor;
    if (spec_.engine) {
      auto p = llm::ServingPredictor::Make(**serving, degrees, spec_.engine);
      if (!p) return std::unexpected(p.error());
      predictor.emplace(std::move(*p));
      rep_.engine = predictor->engine();
    }
    return RunServings(build, degrees, **serving, predictor ? &*predictor : nullptr,
                       {static_cast<uint32_t>(d), recipe, deployment, 0});
  }

  // The rows of one deployed `serving` (ids: its device, recipe and deployment) under each of
  // the grid's servings; a disaggregated one whose workers cannot be deployed is skipped.
  Result<void> RunServings(const std::shared_ptr<const llm::ModelBuild>& build,
                           const llm::Degrees& degrees, const llm::Serving& serving,
                           const llm::ServingPredictor* predictor, GridRunner::Ids ids) {
    const device::Device& device = spec_.devices[ids.device];
    for (size_t k = 0; k < rep_.servings.size(); ++k) {
      const SweepServing& request = rep_.servings[k];
      if (request.disagg) {
        auto why_not = DisaggCannotRun(build, degrees, device, *request.disagg);
        if (!why_not) return std::unexpected(why_not.error());
        if (!why_not->empty()) {
          rep_.skipped.push_back(DegreesLabel(degrees) + ", " + DisaggLabel(*request.disagg) +
                                 " on " + device.name + ", " + rep_.recipes[ids.recipe] + ": " +
                                 *why_not);
          done_ += per_grid_;
          continue;
        }
      }
      ids.serving = static_cast<uint32_t>(k);
      GridRunner runner(spec_, serving, request, rep_, predictor);
      if (auto ok = runner.Run(ids, [this](uint64_t n) { Tick(n); }); !ok) return ok;
    }
    return {};
  }

  const SweepSpec& spec_;
  const Progress& progress_;
  SweepResult rep_;
  uint64_t per_grid_ = 0;        // points of one batch × context grid
  uint64_t per_deployment_ = 0;  // of one deployment: a grid per serving
  uint64_t per_device_ = 0;      // of one device and recipe: every deployment's
  std::vector<bool> unpredictable_;  // per device: --engine cannot predict it (listed)
  uint64_t total_ = 0, done_ = 0, reported_ = 0;
};

}  // namespace

Result<SweepResult> RunSweep(const SweepSpec& spec, const Progress& progress) {
  if (auto ok = CheckGrid(spec, spec.devices.size()); !ok) return std::unexpected(ok.error());
  return Sweeper(spec, progress).Run();
}

Result<SweepResult> RunSweep(const SweepRequest& request, const Progress& progress) {
  if (auto ok = CheckGrid(request, request.devices.size()); !ok) {
    return std::unexpected(ok.error());
  }
  SweepSpec spec;
  static_cast<Grid&>(spec) = request;
  for (const std::string& name : request.devices) {
    auto d = device::ResolveDevice(name);
    if (!d) return std::unexpected(d.error());
    spec.devices.push_back(std::move(*d));
  }
  auto model = llm::OpenModel(request.model, request.parse);
  if (!model) return std::unexpected(model.error());
  for (const device::Device& d : spec.devices) {
    if (auto alias = device::AliasAssumption(d)) model->spec.assumptions.push_back(*alias);
  }
  // With --engine, the model as the engine loads it (a float32 checkpoint in its 16-bit
  // dtype); the rule is the engine's, the same on every device of the grid.
  if (request.engine && !spec.devices.empty()) {
    if (auto load = llm::EngineFloat32Load(request.engine, spec.devices.front())) {
      llm::ServeFloat32(*model, *load);
    }
  }
  spec.model = &*model;
  return Sweeper(spec, progress).Run();
}

}  // namespace opscope::sweep
