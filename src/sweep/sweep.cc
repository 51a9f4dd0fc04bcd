// Running a sweep (see sweep.h): per recipe, build the step graph and compile its plan; per
// point, time the step from the plan and derive the serving figures exactly as
// llm::RunRequest does.
#include "sweep/sweep.h"

#include <algorithm>
#include <array>

#include "import/hf_config/recipe.h"
#include "import/hf_config/step_graph.h"
#include "support/checked_math.h"
#include "sweep/step_plan.h"

namespace opscope::sweep {
namespace {

// The row of a point costed by the full analysis (llm::RunRequest).
Result<report::SweepRow> FullRow(const import::hf::StepGraph& step, const import::hf::Recipe& recipe,
                                 const device::Device& device, const SweepSpec& spec,
                                 int64_t batch, int64_t context,
                                 std::vector<std::string>* assumptions) {
  llm::Request request;
  request.phase = spec.phase;
  request.batch = batch;
  request.context = context;
  request.prompt = context;
  request.gen_len = spec.gen_len;
  request.mem_util = spec.mem_util;
  auto run = llm::RunRequest(step, recipe, device, request);
  if (!run) return std::unexpected(run.error());
  report::SweepRow row;
  row.batch = batch;
  row.context = context;
  row.step_time_s = run->figures.step_time_s;
  row.tokens_per_s = run->figures.tokens_per_s;
  row.tpot_s = run->figures.tpot_s;
  if (!row.tpot_s && spec.phase == llm::Phase::kDecode) row.tpot_s = row.step_time_s;
  row.ttft_s = run->figures.ttft_s;
  double memory_s = 0, compute_s = 0;
  for (const roofline::NodeTime& t : run->step.analysis.nodes) {
    if (t.bound == roofline::Bound::kMemory) memory_s += t.time_s;
    if (t.bound == roofline::Bound::kCompute) compute_s += t.time_s;
  }
  row.compute_bound = compute_s > memory_s;
  row.max_batch = run->figures.max_batch;
  row.fits = run->figures.fits;
  if (assumptions != nullptr) {
    for (const std::string& a : run->step.ledger.assumptions) assumptions->push_back(a);
    for (const std::string& a : run->step.analysis.notes) assumptions->push_back(a);
  }
  return row;
}

void AddUnique(std::vector<std::string>& to, const std::vector<std::string>& from) {
  for (const std::string& a : from) {
    if (std::find(to.begin(), to.end(), a) == to.end()) to.push_back(a);
  }
}

}  // namespace

Result<report::SweepReport> RunSweep(const SweepSpec& spec, const Progress& progress) {
  report::SweepReport rep;
  rep.model = spec.model_name;
  rep.phase = spec.phase == llm::Phase::kPrefill ? "prefill" : "decode";
  for (const device::Device& d : spec.devices) rep.devices.push_back(d.name);
  const bool prefill = spec.phase == llm::Phase::kPrefill;
  const uint64_t total = static_cast<uint64_t>(spec.weights.size()) * spec.devices.size() *
                         spec.batches.size() * spec.contexts.size();
  rep.rows.reserve(total);
  uint64_t done = 0;

  for (size_t w = 0; w < spec.weights.size(); ++w) {
    import::hf::RecipeOptions options{spec.weights[w], spec.activations, spec.kv_dtype,
                                      spec.state_dtype};
    auto recipe = import::hf::ResolveRecipe(*spec.model, options);
    if (!recipe) return std::unexpected(recipe.error());
    auto step = import::hf::BuildStepGraph(*spec.model, *recipe);
    if (!step) return std::unexpected(Wrap(spec.origin, step.error()));
    step->graph.name = spec.model_name;
    auto figures = llm::ComputeModelFigures(*step);
    if (!figures) return std::unexpected(figures.error());
    auto plan = StepPlan::Compile(step->graph);
    if (!plan) return std::unexpected(Wrap(spec.origin, plan.error()));
    const auto recipe_index = static_cast<uint32_t>(rep.recipes.size());
    rep.recipes.push_back(recipe->weights_label + "/" + recipe->activations_label + "/" +
                          std::string(format::FormatName(recipe->kv)));
    AddUnique(rep.assumptions, step->graph.assumptions);
    // Bytes one sequence holds at each context (the memory fit), computed once.
    std::vector<uint64_t> per_seq(spec.contexts.size());
    for (size_t c = 0; c < spec.contexts.size(); ++c) {
      per_seq[c] = llm::BytesPerSeq(*step, *figures, spec.contexts[c] + spec.gen_len.value_or(0));
    }

    for (size_t d = 0; d < spec.devices.size(); ++d) {
      const device::Device& device = spec.devices[d];
      // The first point runs the full analysis too: its assumptions go in the report.
      std::vector<std::string> assumptions;
      auto first = FullRow(*step, *recipe, device, spec, spec.batches.front(),
                           spec.contexts.front(), &assumptions);
      if (!first) return std::unexpected(first.error());
      AddUnique(rep.assumptions, assumptions);
      for (int64_t batch : spec.batches) {
        // The contexts of one batch in blocks: the points share seqs and vary in one
        // variable, which the plan evaluates fastest.
        for (size_t c0 = 0; c0 < spec.contexts.size(); c0 += StepPlan::kBlock) {
          const size_t count = std::min(StepPlan::kBlock, spec.contexts.size() - c0);
          std::array<Point, StepPlan::kBlock> points;
          std::array<std::optional<StepTiming>, StepPlan::kBlock> timings;
          if (!spec.gen_len) {
            for (size_t i = 0; i < count; ++i) {
              const int64_t context = spec.contexts[c0 + i];
              points[i] = Point{batch, batch, context};
              if (prefill) {
                auto n = CheckedMul(static_cast<uint64_t>(batch), static_cast<uint64_t>(context));
                if (!n || *n > static_cast<uint64_t>(INT64_MAX)) {
                  return MakeError("options '--batch' and '--context': " + std::to_string(batch) +
                                   " x " + std::to_string(context) + " tokens overflow 64 bits");
                }
                points[i] = Point{static_cast<int64_t>(*n), batch, 0};
              }
            }
            auto ok = (*plan)->TimeBlock(std::span<const Point>(points.data(), count), device,
                                         std::span<std::optional<StepTiming>>(timings.data(), count));
            if (!ok) return std::unexpected(Wrap(spec.origin, ok.error()));
          }
          for (size_t i = 0; i < count; ++i) {
            const size_t c = c0 + i;
            const int64_t context = spec.contexts[c];
            report::SweepRow row;
            if (const auto& timing = timings[i]) {
              row.batch = batch;
              row.context = context;
              row.step_time_s = timing->time_s;
              const double tokens = prefill ? static_cast<double>(batch) * static_cast<double>(context)
                                            : static_cast<double>(batch);
              row.tokens_per_s = row.step_time_s > 0 ? tokens / row.step_time_s : 0;
              if (prefill) {
                row.ttft_s = row.step_time_s;
              } else {
                row.tpot_s = row.step_time_s;
              }
              row.compute_bound = timing->compute_bound;
              row.max_batch = llm::MaxBatch(*figures, per_seq[c], device.memory_bytes, spec.mem_util);
              row.fits = static_cast<uint64_t>(batch) <= row.max_batch;
              ++rep.points_by_plan;
            } else {
              auto full = FullRow(*step, *recipe, device, spec, batch, context, nullptr);
              if (!full) return std::unexpected(full.error());
              row = *full;
              ++rep.points_by_full_analysis;
            }
            row.device = static_cast<uint32_t>(d);
            row.recipe = recipe_index;
            rep.rows.push_back(row);
            if (progress && (++done & 4095) == 0) progress(done, total);
          }
        }
      }
    }
  }
  if (progress) progress(total, total);
  return rep;
}

}  // namespace opscope::sweep
