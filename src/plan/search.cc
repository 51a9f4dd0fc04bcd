// The splits a plan searches and one split's batches evaluated through the serving model
// (see search.h).
#include "plan/search.h"

#include <algorithm>

#include "llm/deployment.h"
#include "support/human_units.h"

namespace opscope::plan {
namespace {

std::string Label(const SplitDegrees& g) {
  return "tp " + std::to_string(g.tp) + ", ep " + std::to_string(g.ep) + ", pp " +
         std::to_string(g.pp) + ", dp-attention " + std::to_string(g.dp_attention);
}

bool HasExperts(const llm::ModelBuild& build) { return build.model.spec.moe.experts > 0; }

}  // namespace

std::vector<SplitDegrees> EnumerateSplits(const llm::ModelBuild& build,
                                          const device::Device& device, int64_t gpus,
                                          double mem_util, std::vector<std::string>& skipped,
                                          uint64_t& pruned) {
  const int64_t per_node = device.devices_per_node ? static_cast<int64_t>(*device.devices_per_node)
                                                   : gpus;
  const double budget_bytes = device.memory_bytes * mem_util;
  const auto weight_bytes = static_cast<double>(build.figures.weight_bytes);
  std::vector<SplitDegrees> out;
  for (int64_t pp = 1; pp <= gpus; pp *= 2) {
    for (int64_t tp = 1; tp <= std::min(gpus, per_node); tp *= 2) {
      for (int64_t dp = 1; tp * dp * pp <= gpus; dp *= 2) {
        for (const bool spread : {false, true}) {
          if (spread && (!HasExperts(build) || tp * dp == 1)) continue;
          const SplitDegrees g{tp, spread ? tp * dp : 1, pp, dp};
          const int64_t devices = pp * tp * dp;
          // Every device holds at least its even share of the weights: a split whose share
          // alone passes the memory budget cannot run (checked before building anything).
          if (weight_bytes / static_cast<double>(devices) > budget_bytes) {
            ++pruned;
            continue;
          }
          llm::Degrees degrees{g.tp, g.ep, g.pp, g.dp_attention};
          auto planned = llm::PlanDeployment(build.model.spec, degrees, device);
          if (!planned) {
            skipped.push_back(Label(g) + ": " + planned.error().message);
            continue;
          }
          if (pp > build.model.spec.num_layers()) continue;
          out.push_back(g);
        }
      }
    }
  }
  return out;
}

SplitEval::SplitEval(std::shared_ptr<const llm::Serving> serving,
                     std::shared_ptr<const llm::ServingPredictor> predictor, SplitDegrees degrees,
                     int64_t isl, int64_t osl, int64_t max_batch, double mem_util,
                     std::shared_ptr<SharedFigures> shared, llm::ServingModes modes)
    : serving_(std::move(serving)), predictor_(std::move(predictor)), degrees_(degrees),
      isl_(isl), osl_(osl), max_batch_(max_batch), mem_util_(mem_util),
      shared_(predictor_ ? nullptr : std::move(shared)), modes_(std::move(modes)) {
  const llm::Deployment& d = serving_->deployment();
  per_s_ = d.dp_attention * d.micro_batches;
}

uint64_t SplitEval::FitBatch(int64_t context) const {
  if (!modes_.speculative) return serving_->Fit(context, mem_util_).max_batch;
  // The drafter beside the target: the MTP modules, or the draft model the predictor deploys
  // at this split's tp. A drafter that cannot be sized or deployed here (an MTP projection
  // the dtype cannot hold, a draft the tp cannot split) holds nothing: no batch fits, and the
  // split's predictions name the reason.
  auto m = predictor_ ? predictor_->DrafterFit(context, mem_util_, modes_)
                      : llm::MtpDrafterMemory(*serving_, context, mem_util_);
  return m ? m->max_batch : 0;
}

int64_t SplitEval::MaxS(int64_t context) const {
  // Fit's max_batch counts the deployment's sequences: dp_attention replicas, each device
  // holding micro_batches · s of them.
  const uint64_t fit = FitBatch(context);
  const int64_t by_memory = static_cast<int64_t>(std::min<uint64_t>(fit, INT64_MAX)) / per_s_;
  return std::min(by_memory, max_batch_ / per_s_);
}

Result<BatchFigures> SplitEval::At(int64_t s, uint64_t& evaluated) {
  if (auto it = memo_.find(s); it != memo_.end()) return it->second;
  llm::Workload w;
  w.phase = llm::Phase::kPrefill;
  w.batch = Batch(s);
  w.context = isl_;
  w.prompt = isl_;
  w.gen_len = osl_;
  w.mem_util = mem_util_;
  BatchFigures b;
  if (predictor_) {
    // llm.predicted of `opscope llm ... --engine E` (--lengths fixed: modes_): B requests in
    // flight.
    auto p = predictor_->PredictRequestFigures(w, modes_);
    if (!p) return std::unexpected(p.error());
    b = {p->ttft_s.value_or(0), p->tpot_s.value_or(0), p->e2e_s.value_or(0)};
  } else if (auto it = shared_ ? shared_->find(s) : SharedFigures::iterator{};
             shared_ && it != shared_->end()) {
    b = it->second;
  } else {
    auto f = RooflineFigures(*serving_, w);
    if (!f) return std::unexpected(f.error());
    b = *f;
    if (shared_) shared_->emplace(s, b);
  }
  ++evaluated;
  memo_.emplace(s, b);
  return b;
}

Result<BatchFigures> RooflineFigures(const llm::Serving& serving, const llm::Workload& w) {
  const llm::BatchSplit split = serving.deployment().Split(w.batch);
  const cost::Workload prefill = llm::PrefillBindings(split.seqs, w.Prompt());
  std::vector<double> step_s;
  for (const llm::StepGraph* g : serving.stages()) {
    auto r = llm::AnalyzeStep(*g, prefill, serving.device());
    if (!r) return std::unexpected(r.error());
    step_s.push_back(r->analysis.totals.time_s);
  }
  // As llm::Evaluate times the request: its decode steps from the prompt on.
  const int64_t prompt = w.Prompt(), gen = *w.gen_len;
  auto decode = llm::RequestDecodeSum(serving, split, prompt, gen);
  if (!decode) return std::unexpected(decode.error());
  llm::StageTimes times;
  times.step_s = step_s;
  times.decode_sum_s = *decode;
  llm::Figures f;
  llm::ServingFigures(serving, w, times, f);
  return BatchFigures{f.ttft_s.value_or(0), f.tpot_s.value_or(0), f.e2e_s.value_or(0)};
}

double SplitEval::KvTransferS(int64_t s, double link_bytes_per_s, double link_latency_s) const {
  // Each device of a stage holds s · micro_batches of the batch's sequences; the stages send
  // in parallel, the slowest paces it.
  uint64_t per_seq = 0;
  for (size_t k = 0; k < serving_->stage_count(); ++k) {
    per_seq = std::max(per_seq, serving_->StageBytesPerSeq(k, isl_));
  }
  const double seqs = static_cast<double>(s * serving_->deployment().micro_batches);
  return seqs * static_cast<double>(per_seq) / link_bytes_per_s + link_latency_s;
}

std::optional<std::pair<double, double>> KvLink(const device::Device& d, int64_t devices) {
  const bool one_node = d.devices_per_node && static_cast<double>(devices) <= *d.devices_per_node;
  const std::optional<double>& bw = one_node ? d.interconnect_bytes_per_s : d.network_bytes_per_s;
  const std::optional<double>& latency = one_node ? d.interconnect_latency_s : d.network_latency_s;
  if (!bw) return std::nullopt;
  return std::pair{*bw, latency.value_or(0.0)};
}

}  // namespace opscope::plan
