// Running a sweep (see sweep.h): per recipe, device and deployment, build each device's step
// graph (the whole model, or a pipeline stage's shard) and compile its plan; per point, time
// the stages from their plans and derive the serving figures exactly as llm::RunRequest
// (one device) or llm::RunDeployment (several) does.
#include "sweep/sweep.h"

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <system_error>
#include <thread>

#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "llm/parallel.h"
#include "roofline/roofline.h"
#include "support/checked_math.h"
#include "support/huge_pages.h"
#include "sweep/step_plan.h"

namespace opscope::sweep {
namespace {

// A row from a full analysis: the figures as `opscope llm` prints them; the bound from the
// costed step's nodes (a deployment's busiest device).
report::SweepRow RowFromRun(const llm::Run& run, const SweepSpec& spec, int64_t batch,
                            int64_t context) {
  report::SweepRow row;
  row.batch = batch;
  row.context = context;
  row.step_time_s = run.figures.step_time_s;
  row.tokens_per_s = run.figures.tokens_per_s;
  row.tpot_s = run.figures.tpot_s;
  if (!row.tpot_s && spec.phase == llm::Phase::kDecode) row.tpot_s = row.step_time_s;
  row.ttft_s = run.figures.ttft_s;
  double memory_s = 0, compute_s = 0;
  for (const roofline::NodeTime& t : run.step.analysis.nodes) {
    if (t.bound == roofline::Bound::kMemory) memory_s += t.time_s;
    if (t.bound == roofline::Bound::kCompute) compute_s += t.time_s;
  }
  row.compute_bound = compute_s > memory_s;
  row.max_batch = run.figures.max_batch;
  row.fits = run.figures.fits;
  return row;
}

llm::Request MakeRequest(const SweepSpec& spec, int64_t batch, int64_t context) {
  llm::Request request;
  request.phase = spec.phase;
  request.batch = batch;
  request.context = context;
  request.prompt = context;
  request.gen_len = spec.gen_len;
  request.mem_util = spec.mem_util;
  return request;
}

void AddUnique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const std::string& a : from) {
    if (std::find(to.begin(), to.end(), a) == to.end()) to.push_back(a);
  }
}

// One device's step graph of a deployment (a pipeline stage; the whole model on one device)
// compiled into a plan, with what bounds its batch: the largest batch its memory holds at
// each context of the sweep.
struct Stage {
  std::unique_ptr<import::hf::StepGraph> step;  // the plans point into it
  std::vector<std::unique_ptr<StepPlan>> plans;  // one per worker thread (they cache)
  std::vector<uint64_t> max_batch;  // per context of the sweep
};

// What a grid's deployment is on one device and recipe: its stages, or why it cannot run.
struct Deployed {
  llm::Deployment deployment;  // default: one device
  bool multi = false;
  std::vector<Stage> stages;
};

// A deployment's sequences at batch b (llm::RunDeployment's split): micro-batches of
// ceil(b / M) sequences, of which an attention replica runs ceil(micro / D).
struct Split {
  int64_t micro_count = 1, seqs = 1;
};
Split SplitBatch(const llm::Deployment& d, int64_t batch) {
  const int64_t micro = (batch + d.micro_batches - 1) / d.micro_batches;
  return {(batch + micro - 1) / micro, (micro + d.dp_attention - 1) / d.dp_attention};
}

Result<Stage> CompileStage(import::hf::StepGraph step, const SweepSpec& spec,
                           const device::Device& device) {
  Stage stage;
  stage.step = std::make_unique<import::hf::StepGraph>(std::move(step));
  auto plan = StepPlan::Compile(stage.step->graph);
  if (!plan) return std::unexpected(Wrap(spec.origin, plan.error()));
  stage.plans.push_back(std::move(*plan));
  auto figures = llm::ComputeModelFigures(*stage.step);
  if (!figures) return std::unexpected(figures.error());
  // The memory context: the most tokens a sequence holds during the request (llm.h).
  stage.max_batch.resize(spec.contexts.size());
  for (size_t c = 0; c < spec.contexts.size(); ++c) {
    const uint64_t per_seq =
        llm::BytesPerSeq(*stage.step, *figures, spec.contexts[c] + spec.gen_len.value_or(0));
    stage.max_batch[c] = llm::MaxBatch(*figures, per_seq, device.memory_bytes, spec.mem_util);
  }
  return stage;
}

// The rows of one (recipe, device, deployment) over batch × context.
class GridRunner {
 public:
  GridRunner(const SweepSpec& spec, const import::hf::Recipe& recipe,
             const import::hf::StepGraph& whole, const device::Device& device,
             Deployed& deployed, report::SweepReport& rep)
      : spec_(spec), recipe_(recipe), whole_(whole), device_(device), deployed_(deployed),
        rep_(rep) {}

  // Appends the grid's rows to the report, in order. A large grid (at least kPointsPerWorker
  // points a worker) is split by batch over threads, each with its own plans (a plan caches
  // as it goes) writing its own rows: the rows are the same for any thread count.
  Result<void> Run(uint32_t device_index, uint32_t recipe_index, uint32_t deployment_index,
                   const std::function<void(uint64_t)>& tick) {
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
    const size_t workers = spec_.gen_len ? 1 : std::max<size_t>(1, std::min({cores, tiles,
                               batches * contexts / kPointsPerWorker}));
    // Every worker after the first costs on plans of its own.
    for (Stage& stage : deployed_.stages) {
      while (stage.plans.size() < workers) {
        auto plan = StepPlan::Compile(stage.step->graph);
        if (!plan) return std::unexpected(Wrap(spec_.origin, plan.error()));
        stage.plans.push_back(std::move(*plan));
      }
    }
    base_ = rep_.rows.size();
    rep_.rows.resize(base_ + batches * contexts);
    ids_ = {device_index, recipe_index, deployment_index};
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
  struct Ids {
    uint32_t device = 0, recipe = 0, deployment = 0;
  };
  // One thread's state: its tile of stage timings, scratch and counts.
  struct Worker {
    std::vector<std::vector<std::optional<StepTiming>>> tile;  // [stage][cell of the tile]
    std::vector<double> stage_s;  // the stage times of one point
    uint64_t by_plan = 0, by_full_analysis = 0;
    Result<void> status;
  };

  // The rows of batch tiles [first, end) with worker w's plans.
  Result<void> RunTiles(Worker& wk, size_t w, size_t first, size_t end,
                        const std::function<void(uint64_t)>& tick) {
    const size_t batches = spec_.batches.size(), contexts = spec_.contexts.size();
    wk.tile.resize(deployed_.stages.size());
    for (auto& t : wk.tile) t.resize(layout_.tile_b * layout_.tile_c);
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
            report::SweepRow& row = rep_.rows[base_ + (b0 + i) * contexts + c0 + j];
            if (FromPlan(wk, batch, context, c0 + j, i * nc + j, row)) {
              ++wk.by_plan;
            } else {
              auto full = FullRow(batch, context);
              if (!full) return std::unexpected(full.error());
              row = *full;
              ++wk.by_full_analysis;
            }
            row.device = ids_.device;
            row.recipe = ids_.recipe;
            row.deployment = ids_.deployment;
            if (tick) tick(1);
          }
        }
      }
    }
    return {};
  }

  // Costs the tile batches[b0, b0 + nb) × contexts[c0, c0 + nc) on every stage (worker w's
  // plans) into wk.tile[stage][i · nc + j]: blocks over contexts (one batch each) or over
  // batches (one context each). With --gen-len every point takes the full analysis.
  Result<void> CostTile(Worker& wk, size_t w, size_t b0, size_t nb, size_t c0, size_t nc) {
    if (spec_.gen_len) {
      for (auto& t : wk.tile) std::fill(t.begin(), t.end(), std::nullopt);
      return {};
    }
    const bool prefill = spec_.phase == llm::Phase::kPrefill;
    auto point = [&](size_t i, size_t j) -> Result<Point> {
      const int64_t batch = spec_.batches[b0 + i], context = spec_.contexts[c0 + j];
      const int64_t seqs = deployed_.multi ? SplitBatch(deployed_.deployment, batch).seqs : batch;
      if (!prefill) return Point{seqs, seqs, context};
      auto n = CheckedMul(static_cast<uint64_t>(seqs), static_cast<uint64_t>(context));
      if (!n || *n > static_cast<uint64_t>(INT64_MAX)) {
        return MakeError("options '--batch' and '--context': " + std::to_string(batch) + " x " +
                         std::to_string(context) + " tokens overflow 64 bits");
      }
      return Point{static_cast<int64_t>(*n), seqs, 0};
    };
    const bool by_context = layout_.by_context;
    const size_t blocks = by_context ? nb : nc, lanes = by_context ? nc : nb;
    std::array<Point, StepPlan::kBlock> points;
    std::array<std::optional<StepTiming>, StepPlan::kBlock> out;
    for (size_t k = 0; k < blocks; ++k) {
      for (size_t l = 0; l < lanes; ++l) {
        auto p = by_context ? point(k, l) : point(l, k);
        if (!p) return std::unexpected(p.error());
        points[l] = *p;
      }
      for (size_t s = 0; s < deployed_.stages.size(); ++s) {
        auto ok = deployed_.stages[s].plans[w]->TimeBlock(
            std::span<const Point>(points.data(), lanes), device_,
            std::span<std::optional<StepTiming>>(out.data(), lanes));
        if (!ok) return std::unexpected(Wrap(spec_.origin, ok.error()));
        for (size_t l = 0; l < lanes; ++l) {
          wk.tile[s][by_context ? k * nc + l : l * nc + k] = out[l];
        }
      }
    }
    return {};
  }

  // The row of a point from the stages' plans (wk.tile[s][cell]), as llm::RunRequest (one
  // device) or llm::RunDeployment computes it; false when some stage's plan gave it up.
  bool FromPlan(Worker& wk, int64_t batch, int64_t context, size_t c, size_t cell,
                report::SweepRow& row) const {
    const size_t stages = deployed_.stages.size();
    // A deployment's step is llm::PipelineStepTime of its stages (one device: the step
    // itself); the bound is the slowest stage's, as the busiest device's report shows it.
    wk.stage_s.resize(stages);
    double max_s = 0;
    bool compute_bound = false;
    uint64_t max_batch = UINT64_MAX;
    for (size_t s = 0; s < stages; ++s) {
      const std::optional<StepTiming>& t = wk.tile[s][cell];
      if (!t) return false;
      wk.stage_s[s] = t->time_s;
      if (s == 0 || t->time_s > max_s) {
        max_s = t->time_s;
        compute_bound = t->compute_bound;
      }
      max_batch = std::min(max_batch, deployed_.stages[s].max_batch[c]);
    }
    const double step_s =
        deployed_.multi
            ? llm::PipelineStepTime(wk.stage_s, SplitBatch(deployed_.deployment, batch).micro_count)
            : wk.stage_s[0];
    const bool prefill = spec_.phase == llm::Phase::kPrefill;
    row.batch = batch;
    row.context = context;
    row.step_time_s = step_s;
    const double tokens = prefill ? static_cast<double>(batch) * static_cast<double>(context)
                                  : static_cast<double>(batch);
    row.tokens_per_s = step_s > 0 ? tokens / step_s : 0;
    if (prefill) {
      row.ttft_s = step_s;
    } else {
      row.tpot_s = step_s;
    }
    row.compute_bound = compute_bound;
    // Every device of a stage holds its attention replica's sequences.
    row.max_batch = max_batch * static_cast<uint64_t>(deployed_.deployment.dp_attention);
    row.fits = static_cast<uint64_t>(batch) <= row.max_batch;
    return true;
  }

  Result<report::SweepRow> FullRow(int64_t batch, int64_t context) const {
    const llm::Request request = MakeRequest(spec_, batch, context);
    if (!deployed_.multi) {
      auto run = llm::RunRequest(whole_, recipe_, device_, request);
      if (!run) return std::unexpected(run.error());
      return RowFromRun(*run, spec_, batch, context);
    }
    auto run = llm::RunDeployment(*spec_.model, recipe_, device_, request, deployed_.deployment);
    if (!run) return std::unexpected(run.error());
    return RowFromRun(run->run, spec_, batch, context);
  }

  const SweepSpec& spec_;
  const import::hf::Recipe& recipe_;
  const import::hf::StepGraph& whole_;
  const device::Device& device_;
  Deployed& deployed_;
  report::SweepReport& rep_;
  Layout layout_;
  Ids ids_;
  size_t base_ = 0;  // the grid's first row in the report
};

// The grid's deployment `degrees` on `device`: one device (the whole model) or a plan per
// pipeline stage. nullopt, with `why`, when the model or device cannot take the degrees.
Result<std::optional<Deployed>> Deploy(const SweepSpec& spec, const import::hf::Recipe& recipe,
                                       const import::hf::StepGraph& whole,
                                       const device::Device& device, const llm::Degrees& degrees,
                                       std::string& why) {
  Deployed deployed;
  deployed.multi = degrees.MultiDevice();
  if (!deployed.multi) {
    auto stage = CompileStage(whole, spec, device);
    if (!stage) return std::unexpected(stage.error());
    deployed.stages.push_back(std::move(*stage));
    return deployed;
  }
  auto planned = llm::PlanDeployment(*spec.model, degrees, device);
  if (!planned) {
    why = planned.error().message;
    return std::nullopt;
  }
  deployed.deployment = std::move(*planned);
  for (int64_t s = 0; s < deployed.deployment.pp; ++s) {
    auto graph = import::hf::BuildStepGraph(*spec.model, recipe, deployed.deployment.Shard(s));
    if (!graph) {
      why = "a device's share does not fit the recipe (" + graph.error().message + ")";
      return std::nullopt;
    }
    auto stage = CompileStage(std::move(*graph), spec, device);
    if (!stage) return std::unexpected(stage.error());
    deployed.stages.push_back(std::move(*stage));
  }
  return deployed;
}

std::string DegreesLabel(const llm::Degrees& g) {
  return "tp " + std::to_string(g.tp) + ", ep " + std::to_string(g.ep) + ", pp " +
         std::to_string(g.pp);
}

}  // namespace

Result<report::SweepReport> RunSweep(const SweepSpec& spec, const Progress& progress) {
  report::SweepReport rep;
  rep.model = spec.model_name;
  rep.phase = spec.phase == llm::Phase::kPrefill ? "prefill" : "decode";
  for (const device::Device& d : spec.devices) rep.devices.push_back(d.name);
  const std::vector<int64_t> one{1};
  const std::vector<int64_t>& tps = spec.tps.empty() ? one : spec.tps;
  const std::vector<int64_t>& eps = spec.eps.empty() ? one : spec.eps;
  const std::vector<int64_t>& pps = spec.pps.empty() ? one : spec.pps;
  const uint64_t grid = static_cast<uint64_t>(tps.size()) * eps.size() * pps.size();
  const uint64_t per_deployment = static_cast<uint64_t>(spec.batches.size()) * spec.contexts.size();
  const uint64_t total = static_cast<uint64_t>(spec.weights.size()) * spec.devices.size() * grid *
                         per_deployment;
  // 65,536 rows are ~6 MB: a few huge pages, not 1,400 faults. (Skipped deployments leave
  // part of it untouched.)
  ReserveHugePages(rep.rows, total);
  uint64_t done = 0, reported = 0;
  auto tick = [&](uint64_t n) {
    done += n;
    if (progress && done - reported >= 4096) {
      reported = done;
      progress(std::min(done, total), total);
    }
  };

  for (size_t w = 0; w < spec.weights.size(); ++w) {
    import::hf::RecipeOptions options{spec.weights[w], spec.activations, spec.kv_dtype,
                                      spec.state_dtype};
    auto recipe = import::hf::ResolveRecipe(*spec.model, options);
    if (!recipe) return std::unexpected(recipe.error());
    auto whole = import::hf::BuildStepGraph(*spec.model, *recipe);
    if (!whole) return std::unexpected(Wrap(spec.origin, whole.error()));
    whole->graph.name = spec.model_name;
    const auto recipe_index = static_cast<uint32_t>(rep.recipes.size());
    rep.recipes.push_back(recipe->weights_label + "/" + recipe->activations_label + "/" +
                          std::string(format::FormatName(recipe->kv)));
    AddUnique(rep.assumptions, whole->graph.assumptions);

    for (size_t d = 0; d < spec.devices.size(); ++d) {
      const device::Device& device = spec.devices[d];
      bool first_of_device = true;
      for (int64_t tp : tps) {
        for (int64_t ep : eps) {
          for (int64_t pp : pps) {
            llm::Degrees degrees{tp, ep, pp, spec.dp_attention, spec.gpus_per_node,
                                 spec.micro_batches};
            std::string why;
            auto deployed = Deploy(spec, *recipe, *whole, device, degrees, why);
            if (!deployed) return std::unexpected(deployed.error());
            if (!*deployed) {
              rep.skipped.push_back(DegreesLabel(degrees) + " on " + device.name + ", " +
                                    rep.recipes[recipe_index] + ": " + why);
              done += per_deployment;
              continue;
            }
            AddUnique(rep.assumptions, (*deployed)->deployment.assumptions);
            const llm::Deployment& plan = (*deployed)->deployment;
            const report::SweepDeployment label{plan.tp, plan.ep, plan.pp, plan.dp_attention,
                                                plan.devices};
            auto found = std::find(rep.deployments.begin(), rep.deployments.end(), label);
            const auto deployment_index = static_cast<uint32_t>(found - rep.deployments.begin());
            if (found == rep.deployments.end()) rep.deployments.push_back(label);
            // The first point of each device runs the full analysis too: its assumptions go
            // in the report.
            if (first_of_device) {
              first_of_device = false;
              const llm::Request request =
                  MakeRequest(spec, spec.batches.front(), spec.contexts.front());
              if (!(*deployed)->multi) {
                auto run = llm::RunRequest(*whole, *recipe, device, request);
                if (!run) return std::unexpected(run.error());
                AddUnique(rep.assumptions, run->step.ledger.assumptions);
                AddUnique(rep.assumptions, run->step.analysis.notes);
              } else {
                auto run = llm::RunDeployment(*spec.model, *recipe, device, request, plan);
                if (!run) return std::unexpected(run.error());
                AddUnique(rep.assumptions, run->run.step.ledger.assumptions);
                AddUnique(rep.assumptions, run->run.step.analysis.notes);
              }
            }
            GridRunner runner(spec, *recipe, *whole, device, **deployed, rep);
            if (auto ok = runner.Run(static_cast<uint32_t>(d), recipe_index, deployment_index, tick);
                !ok) {
              return std::unexpected(ok.error());
            }
          }
        }
      }
    }
  }
  if (rep.rows.empty() && !rep.skipped.empty()) {
    return MakeError("no deployment of the grid can run: " + rep.skipped.front());
  }
  if (progress) progress(total, total);
  return rep;
}

}  // namespace opscope::sweep
