// Serving figures of an LLM step (see llm.h).
#include "llm/llm.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "llm/context_sum.h"
#include "support/checked_math.h"
#include "support/human_units.h"

namespace opscope::llm {

using import::hf::StepGraph;
using import::hf::WeightGroup;

namespace {

// Concrete dims of a weight tensor (the importer writes weights with constant shapes).
std::vector<int64_t> ConstantDims(const ir::Tensor& t) {
  std::vector<int64_t> dims;
  dims.reserve(t.shape.size());
  for (const expr::Expr& e : t.shape) dims.push_back(e.IsConstant() ? e.constant() : 0);
  return dims;
}

std::string WithCommas(uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace

Result<ModelFigures> ComputeModelFigures(const StepGraph& step) {
  ModelFigures m;
  for (const import::hf::WeightEntry& w : step.weights) {
    const ir::Tensor& t = step.graph.tensors[w.tensor];
    const std::vector<int64_t> dims = ConstantDims(t);
    uint64_t elems = 1;
    for (int64_t d : dims) {
      auto r = CheckedMul(elems, static_cast<uint64_t>(d));
      if (!r) return MakeError("weight '" + t.name + "': element count overflows 64 bits");
      elems = *r;
    }
    auto bytes = format::TensorBytes(t.format, dims);
    if (!bytes) {
      return MakeError("weight '" + t.name + "': its rows do not fit format '" +
                       std::string(format::FormatName(t.format)) + "'");
    }
    m.params_total += elems;
    m.weight_bytes += *bytes;
    if (w.group == WeightGroup::kEmbedding) m.params_embedding += elems;
    if (w.group == WeightGroup::kRoutedExpert && w.experts > 0) {
      const auto experts = static_cast<uint64_t>(w.experts);
      const auto unused = experts - static_cast<uint64_t>(w.top_k);
      m.params_active += elems / experts * static_cast<uint64_t>(w.top_k);
      (void)unused;
    } else {
      m.params_active += elems;
    }
  }
  for (const import::hf::CacheEntry& c : step.kv_caches) {
    if (c.window == 0) m.kv_bytes_per_token += c.bytes_per_token;
  }
  for (const import::hf::StateEntry& s : step.states) m.state_bytes_per_seq += s.bytes_per_seq;
  return m;
}

uint64_t KvWindowBytesPerSeq(const StepGraph& step, int64_t context) {
  uint64_t total = 0;
  for (const import::hf::CacheEntry& c : step.kv_caches) {
    if (c.window > 0) {
      total += static_cast<uint64_t>(std::min(context, c.window)) * c.bytes_per_token;
    }
  }
  return total;
}

uint64_t BytesPerSeq(const StepGraph& step, const ModelFigures& m, int64_t context) {
  return m.kv_bytes_per_token * static_cast<uint64_t>(context) +
         KvWindowBytesPerSeq(step, context) + m.state_bytes_per_seq;
}

uint64_t MaxBatch(const ModelFigures& m, uint64_t bytes_per_seq, double memory_bytes,
                  double mem_util) {
  const double budget = memory_bytes * mem_util - static_cast<double>(m.weight_bytes);
  if (budget <= 0 || bytes_per_seq == 0) return 0;
  return static_cast<uint64_t>(std::floor(budget / static_cast<double>(bytes_per_seq)));
}

cost::Workload DecodeBindings(int64_t batch, int64_t context) {
  return cost::Workload{{{import::hf::kTokensSymbol, batch},
                         {import::hf::kSeqsSymbol, batch},
                         {import::hf::kContextSymbol, context}}};
}

cost::Workload PrefillBindings(int64_t batch, int64_t prompt) {
  return cost::Workload{{{import::hf::kTokensSymbol, batch * prompt},
                         {import::hf::kSeqsSymbol, batch},
                         {import::hf::kContextSymbol, 0}}};
}

Result<StepResult> AnalyzeStep(const StepGraph& step, const cost::Workload& workload,
                               const device::Device& device) {
  auto ledger = cost::BuildLedger(step.graph, workload);
  if (!ledger) return std::unexpected(Wrap(step.graph.name, ledger.error()));
  auto analysis = roofline::Estimate(step.graph, *ledger, device);
  if (!analysis) return std::unexpected(Wrap(step.graph.name, analysis.error()));
  return StepResult{std::move(*ledger), std::move(*analysis)};
}

namespace {

// Per-node costs of one decode step at one context.
struct Sample {
  std::vector<uint64_t> bytes, flops;
  std::vector<double> memory_s, compute_s;
  double time_s = 0;
};

class DecodeSum {
 public:
  DecodeSum(const StepGraph& step, const device::Device& device, int64_t batch)
      : step_(step), device_(device), batch_(batch) {}

  Result<Sample> Eval(int64_t context) const {
    auto r = AnalyzeStep(step_, DecodeBindings(batch_, context), device_);
    if (!r) return std::unexpected(r.error());
    Sample s;
    const size_t n = r->ledger.nodes.size();
    s.bytes.resize(n);
    s.flops.resize(n);
    s.memory_s.resize(n);
    s.compute_s.resize(n);
    for (size_t i = 0; i < n; ++i) {
      s.bytes[i] = r->ledger.nodes[i].bytes();
      s.flops[i] = r->ledger.nodes[i].flops;
      s.memory_s[i] = r->analysis.nodes[i].memory_s;
      s.compute_s[i] = r->analysis.nodes[i].compute_s;
    }
    s.time_s = r->analysis.totals.time_s;
    return s;
  }

  double StepTime(const Sample& s) const { return s.time_s; }

  // Σ_{j=0}^{last} of the step time on an affine stretch: each node's memory and compute
  // lines summed at their max.
  double SumStretch(const Sample& sa, const Sample& sa1, int64_t last) const {
    const auto steps = static_cast<double>(last);
    double total = 0;
    for (size_t i = 0; i < sa.bytes.size(); ++i) {
      total += SumOfMax(sa.memory_s[i], sa1.memory_s[i] - sa.memory_s[i], sa.compute_s[i],
                        sa1.compute_s[i] - sa.compute_s[i], steps);
    }
    return total;
  }

  // Every node's bytes and FLOPs at b equal the line through a and a + 1 (exact integers).
  static bool Affine(const Sample& a, const Sample& a1, const Sample& b, int64_t span) {
    using I = __int128;
    for (size_t i = 0; i < a.bytes.size(); ++i) {
      if (I(b.bytes[i]) - I(a.bytes[i]) != I(span) * (I(a1.bytes[i]) - I(a.bytes[i]))) return false;
      if (I(b.flops[i]) - I(a.flops[i]) != I(span) * (I(a1.flops[i]) - I(a.flops[i]))) return false;
    }
    return true;
  }

 private:
  // Σ_{j=0}^{L} (x0 + x1·j) over j in [s, e].
  static double SumLine(double x0, double x1, double s, double e) {
    if (e < s) return 0;
    const double count = e - s + 1;
    return count * x0 + x1 * (s + e) * count / 2;
  }

  // Σ_{j=0}^{L} max(m0 + m1·j, k0 + k1·j): split where the two lines cross.
  static double SumOfMax(double m0, double m1, double k0, double k1, double last) {
    const double d0 = m0 - k0, d1 = m1 - k1;
    if (d1 == 0) return d0 >= 0 ? SumLine(m0, m1, 0, last) : SumLine(k0, k1, 0, last);
    // d(j) = d0 + d1·j changes sign at j* = −d0/d1: for j <= floor(j*) memory leads when d
    // falls (d1 < 0), compute leads when it rises; past j* the other one.
    const double split = std::clamp(std::floor(-d0 / d1), -1.0, last);
    const bool memory_first = d1 < 0;
    const double first = memory_first ? SumLine(m0, m1, 0, split) : SumLine(k0, k1, 0, split);
    const double second =
        memory_first ? SumLine(k0, k1, split + 1, last) : SumLine(m0, m1, split + 1, last);
    return first + second;
  }

  const StepGraph& step_;
  const device::Device& device_;
  int64_t batch_;
};

}  // namespace

Result<double> SumDecodeSteps(const StepGraph& step, const device::Device& device, int64_t batch,
                              int64_t first, int64_t steps) {
  if (steps <= 0) return 0.0;
  return SumOverContexts(DecodeSum(step, device, batch), first, first + steps - 1);
}

Result<Run> RunRequest(const StepGraph& step, const import::hf::Recipe& recipe,
                       const device::Device& device, const Request& request) {
  auto model = ComputeModelFigures(step);
  if (!model) return std::unexpected(model.error());
  const bool prefill = request.phase == Phase::kPrefill;
  const int64_t b = request.batch;
  const cost::Workload workload =
      prefill ? PrefillBindings(b, request.prompt) : DecodeBindings(b, request.context);
  auto analyzed = AnalyzeStep(step, workload, device);
  if (!analyzed) return std::unexpected(analyzed.error());

  Run run;
  report::LlmFigures& f = run.figures;
  f.phase = prefill ? "prefill" : "decode";
  f.params_total = model->params_total;
  f.params_active = model->params_active;
  f.params_embedding = model->params_embedding;
  f.weight_bytes = model->weight_bytes;
  f.kv_bytes_per_token = model->kv_bytes_per_token;
  f.state_bytes_per_seq = model->state_bytes_per_seq;
  f.step_time_s = analyzed->analysis.totals.time_s;
  const double tokens = prefill ? static_cast<double>(b) * static_cast<double>(request.prompt)
                                : static_cast<double>(b);
  f.tokens_per_s = f.step_time_s > 0 ? tokens / f.step_time_s : 0;
  if (prefill) f.ttft_s = f.step_time_s;

  const int64_t prompt = prefill ? request.prompt : request.context;
  if (request.gen_len) {
    const int64_t out = *request.gen_len;
    double ttft = f.step_time_s;
    if (!prefill) {
      auto p = AnalyzeStep(step, PrefillBindings(b, prompt), device);
      if (!p) return std::unexpected(p.error());
      ttft = p->analysis.totals.time_s;
    }
    auto decode = SumDecodeSteps(step, device, b, prompt, out);
    if (!decode) return std::unexpected(decode.error());
    f.ttft_s = ttft;
    f.e2e_s = ttft + *decode;
    f.tpot_s = out > 0 ? *decode / static_cast<double>(out) : 0.0;
    run.assumptions.push_back("request: prefill of " + std::to_string(prompt) +
                              " tokens, then " + std::to_string(out) +
                              " decode steps at contexts " + std::to_string(prompt) + ".." +
                              std::to_string(prompt + out - 1) + "; tpot_s = decode time / " +
                              std::to_string(out));
  }
  const int64_t memory_context = prompt + request.gen_len.value_or(0);
  f.kv_window_bytes_per_seq = KvWindowBytesPerSeq(step, memory_context);
  const uint64_t per_seq = BytesPerSeq(step, *model, memory_context);
  f.max_batch = MaxBatch(*model, per_seq, device.memory_bytes, request.mem_util);
  f.fits = static_cast<uint64_t>(b) <= f.max_batch;
  f.weights_format = recipe.weights_label;
  f.activations_format = recipe.activations_label;
  f.kv_format = std::string(format::FormatName(recipe.kv));
  f.state_format = std::string(format::FormatName(recipe.state));
  run.assumptions.push_back(
      "memory: weights (" + HumanBytes(static_cast<double>(model->weight_bytes)) +
      ") + KV and state of " + WithCommas(static_cast<uint64_t>(memory_context)) +
      " tokens per sequence (" + HumanBytes(static_cast<double>(per_seq)) + ") within " +
      std::to_string(static_cast<int>(std::lround(request.mem_util * 100))) + "% of " +
      HumanBytes(device.memory_bytes));
  run.step = std::move(*analyzed);
  return run;
}

}  // namespace opscope::llm
