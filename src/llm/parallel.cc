// Multi-device deployments of an LLM step (see parallel.h).
#include "llm/parallel.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <span>

#include "llm/context_sum.h"
#include "support/human_units.h"

namespace opscope::llm {

using import::hf::DeviceShard;
using import::hf::Ffn;
using import::hf::Mixer;
using import::hf::ModelSpec;

namespace {

std::unexpected<Error> OptionError(std::string_view option, const std::string& why) {
  return MakeError("option '" + std::string(option) + "': " + why);
}

std::string Str(int64_t v) { return std::to_string(v); }

bool HasMixer(const ModelSpec& s, Mixer m) {
  return std::any_of(s.layers.begin(), s.layers.end(),
                     [&](const import::hf::LayerSpec& l) { return l.mixer == m; });
}
bool HasFfn(const ModelSpec& s, Ffn f) {
  return std::any_of(s.layers.begin(), s.layers.end(),
                     [&](const import::hf::LayerSpec& l) { return l.ffn == f; });
}

// `count` of `what` split `ways` ways: an error naming the option unless it divides.
Result<void> Divides(std::string_view option, int64_t count, std::string_view what,
                     int64_t ways) {
  if (count % ways == 0) return {};
  return OptionError(option, Str(count) + " " + std::string(what) + " are not divisible by " +
                                 Str(ways));
}

// What --tp splits must divide by it (DESIGN: heads, KV heads, MLP columns/rows).
Result<void> CheckTp(const ModelSpec& s, int64_t t, int64_t ep) {
  if (t == 1) return {};
  constexpr std::string_view kOpt = "--tp";
  const bool attention = HasMixer(s, Mixer::kAttention) || HasMixer(s, Mixer::kMla);
  if (attention) {
    if (auto ok = Divides(kOpt, s.attn.heads, "attention heads", t); !ok) return ok;
  }
  if (HasMixer(s, Mixer::kAttention) && s.attn.kv_heads % t != 0 && t % s.attn.kv_heads != 0) {
    return OptionError(kOpt, Str(s.attn.kv_heads) + " key-value heads neither divide nor are "
                             "divided by " + Str(t) + " (each device needs whole heads)");
  }
  if (HasMixer(s, Mixer::kGatedDeltaNet)) {
    if (auto ok = Divides(kOpt, s.gdn.key_heads, "linear-attention key heads", t); !ok) return ok;
    if (auto ok = Divides(kOpt, s.gdn.value_heads, "linear-attention value heads", t); !ok) {
      return ok;
    }
  }
  if (HasMixer(s, Mixer::kMamba2)) {
    if (auto ok = Divides(kOpt, s.mamba.heads, "Mamba2 heads", t); !ok) return ok;
    if (s.mamba.groups % t != 0 && s.mamba.groups != 1) {
      return OptionError(kOpt, Str(s.mamba.groups) + " Mamba2 groups are not divisible by " +
                                   Str(t) + " (and not a single replicated group)");
    }
  }
  if (HasFfn(s, Ffn::kDense)) {
    if (auto ok = Divides(kOpt, s.mlp.intermediate, "MLP intermediate columns", t); !ok) return ok;
  }
  if (HasFfn(s, Ffn::kMoe)) {
    if (auto ok = Divides(kOpt, s.moe.shared_intermediate, "shared-expert columns", t); !ok) {
      return ok;
    }
    if (ep == 1) {
      if (auto ok = Divides(kOpt, s.moe.intermediate, "expert intermediate columns", t); !ok) {
        return ok;
      }
    }
  }
  return {};
}

// Layers per stage: as even as possible, the first L mod P stages one layer more.
std::vector<std::pair<int64_t, int64_t>> SplitLayers(int64_t layers, int64_t stages) {
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t first = 0;
  for (int64_t s = 0; s < stages; ++s) {
    const int64_t count = layers / stages + (s < layers % stages ? 1 : 0);
    out.emplace_back(first, first + count);
    first += count;
  }
  return out;
}

// A group of `size` consecutive ranks on nodes of `per_node`: whole nodes or within one.
Result<void> CheckNesting(std::string_view what, int64_t size, int64_t per_node,
                          std::string_view option) {
  if (size <= per_node ? per_node % size == 0 : size % per_node == 0) return {};
  return OptionError(option, std::string(what) + " of " + Str(size) +
                                 " devices would straddle nodes of " + Str(per_node) +
                                 " (one must divide the other)");
}

}  // namespace

DeviceShard Deployment::Shard(int64_t stage) const {
  DeviceShard d;
  d.tp = tp;
  d.dp_attention = dp_attention;
  d.ep = ep;
  d.expert_tp = expert_tp;
  d.moe_group = stage_devices;
  d.pp = pp;
  d.first_layer = stage_layers[static_cast<size_t>(stage)].first;
  d.end_layer = stage_layers[static_cast<size_t>(stage)].second;
  d.first_stage = stage == 0;
  d.last_stage = stage == pp - 1;
  d.tp_scope = tp_scope;
  d.moe_scope = moe_scope;
  d.pp_scope = pp_scope;
  return d;
}

Result<Deployment> PlanDeployment(const ModelSpec& spec, const Degrees& g,
                                  const device::Device& device) {
  for (const auto& [option, value] :
       {std::pair<std::string_view, int64_t>{"--tp", g.tp}, {"--ep", g.ep}, {"--pp", g.pp},
        {"--dp-attention", g.dp_attention.value_or(1)},
        {"--gpus-per-node", g.gpus_per_node.value_or(1)},
        {"--micro-batches", g.micro_batches.value_or(1)}}) {
    if (value < 1) return OptionError(option, "must be positive, got " + Str(value));
    if (value > 65536) return OptionError(option, "must be at most 65536, got " + Str(value));
  }
  Deployment d;
  d.tp = g.tp;
  d.ep = g.ep;
  d.pp = g.pp;
  const bool moe = HasFfn(spec, Ffn::kMoe);
  if (d.ep > 1) {
    if (!moe) return OptionError("--ep", "the model has no routed experts to spread");
    if (auto ok = Divides("--ep", spec.moe.experts, "routed experts", d.ep); !ok) {
      return std::unexpected(ok.error());
    }
  }
  if (g.dp_attention) {
    d.dp_attention = *g.dp_attention;
  } else if (d.ep > d.tp) {
    if (d.ep % d.tp != 0) {
      return OptionError("--ep", Str(d.ep) + " is not a multiple of --tp " + Str(d.tp) +
                                     " (dp-attention defaults to ep/tp)");
    }
    d.dp_attention = d.ep / d.tp;
  }
  const int64_t attention_devices = d.tp * d.dp_attention;
  const int64_t lo = std::min(attention_devices, d.ep), hi = std::max(attention_devices, d.ep);
  if (hi % lo != 0) {
    return OptionError("--dp-attention", "tp·dp_attention = " + Str(attention_devices) +
                                             " and ep = " + Str(d.ep) +
                                             ": the smaller must divide the larger");
  }
  d.stage_devices = hi;
  d.devices = d.pp * d.stage_devices;
  if (d.ep > 1) {
    d.expert_tp = d.stage_devices / d.ep;
    if (auto ok = Divides("--ep", spec.moe.intermediate, "expert intermediate columns",
                          d.expert_tp);
        !ok) {
      return std::unexpected(Error{ok.error().message + " (each expert is split tp·dp_attention/ep = " +
                                   Str(d.expert_tp) + " ways)"});
    }
  }
  if (auto ok = CheckTp(spec, d.tp, d.ep); !ok) return std::unexpected(ok.error());
  if (d.pp > spec.num_layers()) {
    return OptionError("--pp", Str(d.pp) + " stages for " + Str(spec.num_layers()) + " layers");
  }
  d.stage_layers = SplitLayers(spec.num_layers(), d.pp);
  d.micro_batches = g.micro_batches.value_or(d.pp);

  const std::optional<double>& node = device.devices_per_node;
  if (g.gpus_per_node) {
    d.gpus_per_node = *g.gpus_per_node;
    if (node && static_cast<double>(d.gpus_per_node) > *node) {
      return OptionError("--gpus-per-node",
                         Str(d.gpus_per_node) + " GPUs per node, but a '" + device.name +
                             "' node has " + Str(static_cast<int64_t>(*node)) +
                             " (devices_per_node)");
    }
  } else if (node) {
    d.gpus_per_node = static_cast<int64_t>(*node);
  } else {
    d.gpus_per_node = d.devices;
    if (d.devices > 1) {
      d.assumptions.push_back("device '" + device.name +
                              "' has no devices_per_node: all " + Str(d.devices) +
                              " devices assumed on one interconnect (pass --gpus-per-node)");
    }
  }
  const int64_t per_node = d.gpus_per_node;
  if (auto ok = CheckNesting("a tensor-parallel group", d.tp, per_node, "--gpus-per-node"); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = CheckNesting("a pipeline stage", d.stage_devices, per_node, "--gpus-per-node");
      !ok) {
    return std::unexpected(ok.error());
  }
  auto scope = [&](int64_t size) { return size <= per_node ? "node" : "network"; };
  d.tp_scope = scope(d.tp);
  d.moe_scope = scope(d.stage_devices);
  d.pp_scope = scope(d.devices);

  std::string layout = "deployment: " + Str(d.devices) + " devices = pp " + Str(d.pp) +
                       " × max(tp " + Str(d.tp) + " · dp_attention " + Str(d.dp_attention) +
                       ", ep " + Str(d.ep) + ")";
  if (d.ep > 1 && d.expert_tp > 1) layout += ", each expert split " + Str(d.expert_tp) + " ways";
  layout += "; " + Str(per_node) + " per node";
  if (d.tp > 1) layout += "; tensor-parallel collectives over the " + std::string(d.tp_scope == "node" ? "interconnect" : "network");
  if (d.ep > 1) layout += "; expert all-to-all over the " + std::string(d.moe_scope == "node" ? "interconnect" : "network");
  if (d.pp > 1) layout += "; stage hand-offs over the " + std::string(d.pp_scope == "node" ? "interconnect" : "network");
  d.assumptions.push_back(layout);
  return d;
}

double PipelineStepTime(std::span<const double> stage_time_s, int64_t micro_batch_count) {
  double sum_s = 0, max_s = 0;
  for (double t : stage_time_s) {
    sum_s += t;
    max_s = std::max(max_s, t);
  }
  return sum_s + static_cast<double>(micro_batch_count - 1) * max_s;
}

namespace {

// t(j) = at0 + slope · j over the steps j = 0..L of a stretch of contexts.
struct Line {
  double at0 = 0, slope = 0;
  double At(double j) const { return at0 + slope * j; }
};

// Every stage's per-node costs and times of one decode step.
struct StepSample {
  std::vector<uint64_t> bytes, flops, bytes_link;  // all stages' nodes, stage after stage
  std::vector<roofline::NodeTime> times;
  std::vector<double> stage_time_s;
};

class PipelineDecodeSum {
 public:
  PipelineDecodeSum(std::span<const import::hf::StepGraph> stages, const device::Device& device,
                    int64_t seqs, int64_t micro_batch_count)
      : stages_(stages), device_(device), seqs_(seqs), micro_(micro_batch_count) {}

  Result<StepSample> Eval(int64_t context) const {
    StepSample s;
    for (const import::hf::StepGraph& g : stages_) {
      auto r = AnalyzeStep(g, DecodeBindings(seqs_, context), device_);
      if (!r) return std::unexpected(r.error());
      for (size_t i = 0; i < r->ledger.nodes.size(); ++i) {
        const cost::NodeCost& c = r->ledger.nodes[i];
        s.bytes.push_back(c.bytes());
        s.flops.push_back(c.flops);
        s.bytes_link.push_back(c.bytes_link);
        s.times.push_back(r->analysis.nodes[i]);
      }
      s.stage_time_s.push_back(r->analysis.totals.time_s);
    }
    return s;
  }

  double StepTime(const StepSample& s) const { return PipelineStepTime(s.stage_time_s, micro_); }

  static std::array<Line, 3> Lines(const roofline::NodeTime& t0, const roofline::NodeTime& t1) {
    return {Line{t0.memory_s, t1.memory_s - t0.memory_s},
            Line{t0.compute_s, t1.compute_s - t0.compute_s},
            Line{t0.link_s, t1.link_s - t0.link_s}};
  }

  // Every node's bytes, FLOPs and link bytes at b lie on the line through a and a + 1 (exact
  // integers), and so do its times (the same peak and link all along).
  static bool Affine(const StepSample& a, const StepSample& a1, const StepSample& b,
                     int64_t span) {
    using I = __int128;
    auto on_line = [&](uint64_t x0, uint64_t x1, uint64_t xb) {
      return I(xb) - I(x0) == I(span) * (I(x1) - I(x0));
    };
    const auto j = static_cast<double>(span);
    for (size_t i = 0; i < a.bytes.size(); ++i) {
      if (!on_line(a.bytes[i], a1.bytes[i], b.bytes[i]) ||
          !on_line(a.flops[i], a1.flops[i], b.flops[i]) ||
          !on_line(a.bytes_link[i], a1.bytes_link[i], b.bytes_link[i])) {
        return false;
      }
      const std::array<Line, 3> lines = Lines(a.times[i], a1.times[i]);
      const std::array<double, 3> at_b = {b.times[i].memory_s, b.times[i].compute_s,
                                          b.times[i].link_s};
      for (size_t k = 0; k < 3; ++k) {
        if (std::abs(lines[k].At(j) - at_b[k]) > 1e-9 * std::max(std::abs(at_b[k]), 1e-12)) {
          return false;
        }
      }
    }
    return true;
  }

  // Σ_{j=0}^{last} of the step time on an affine stretch. A node's time is the max of its three
  // lines, so each stage time is affine between the steps where two of a node's lines cross;
  // between those cuts the step is summed by SumSegment.
  double SumStretch(const StepSample& a, const StepSample& a1, int64_t last) const {
    std::vector<std::array<Line, 3>> lines(a.times.size());
    std::vector<int64_t> cuts;  // a cut k ends a segment at step k
    for (size_t i = 0; i < lines.size(); ++i) {
      lines[i] = Lines(a.times[i], a1.times[i]);
      for (size_t p = 0; p < 3; ++p) {
        for (size_t q = p + 1; q < 3; ++q) {
          const double d0 = lines[i][p].at0 - lines[i][q].at0;
          const double d1 = lines[i][q].slope - lines[i][p].slope;
          if (d1 == 0) continue;
          const double x = d0 / d1;  // where line p meets line q
          if (x >= 0 && x < static_cast<double>(last)) cuts.push_back(static_cast<int64_t>(x));
        }
      }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    cuts.push_back(last);

    // Which stage each node belongs to.
    std::vector<size_t> stage_end;
    size_t end = 0;
    for (const import::hf::StepGraph& g : stages_) stage_end.push_back(end += g.graph.nodes.size());

    // Stage times at step j, each node at the max of its lines.
    auto stage_times = [&](int64_t j, std::vector<double>& out) {
      out.assign(stage_end.size(), 0.0);
      const auto x = static_cast<double>(j);
      size_t s = 0;
      for (size_t i = 0; i < lines.size(); ++i) {
        while (i >= stage_end[s]) ++s;
        out[s] += std::max({lines[i][0].At(x), lines[i][1].At(x), lines[i][2].At(x)});
      }
    };
    double total = 0;
    int64_t start = 0;
    std::vector<double> at_start, at_end;
    for (int64_t cut : cuts) {
      stage_times(start, at_start);
      stage_times(cut, at_end);
      std::vector<Line> stage(stage_end.size());
      for (size_t s = 0; s < stage.size(); ++s) {
        stage[s].at0 = at_start[s];
        stage[s].slope =
            cut > start ? (at_end[s] - at_start[s]) / static_cast<double>(cut - start) : 0.0;
      }
      total += SumSegment(stage, cut - start);
      start = cut + 1;
    }
    return total;
  }

  // Σ_{j=0}^{last} PipelineStepTime(stage lines at j): cut again where the slowest stage changes
  // (its slope only rises along the way); between cuts the step is affine, so the sum is the
  // count of steps times the step at the midpoint.
 private:
  double SumSegment(const std::vector<Line>& stage, int64_t last) const {
    double total = 0;
    std::vector<double> mid_times(stage.size());
    for (int64_t start = 0; start <= last;) {
      const auto x0 = static_cast<double>(start);
      size_t lead = 0;
      for (size_t s = 1; s < stage.size(); ++s) {
        const double v = stage[s].At(x0), best = stage[lead].At(x0);
        if (v > best || (v == best && stage[s].slope > stage[lead].slope)) lead = s;
      }
      int64_t end = last;
      for (size_t s = 0; s < stage.size(); ++s) {
        if (stage[s].slope <= stage[lead].slope) continue;
        const double x = (stage[lead].at0 - stage[s].at0) / (stage[s].slope - stage[lead].slope);
        if (x < static_cast<double>(end)) end = std::max(start, static_cast<int64_t>(x));
      }
      const double mid = (x0 + static_cast<double>(end)) / 2;
      for (size_t s = 0; s < stage.size(); ++s) mid_times[s] = stage[s].At(mid);
      total += static_cast<double>(end - start + 1) * PipelineStepTime(mid_times, micro_);
      start = end + 1;
    }
    return total;
  }

  std::span<const import::hf::StepGraph> stages_;
  const device::Device& device_;
  int64_t seqs_, micro_;
};

}  // namespace

Result<double> SumPipelineDecodeSteps(std::span<const import::hf::StepGraph> stages,
                                      const device::Device& device, int64_t seqs,
                                      int64_t micro_batch_count, int64_t first, int64_t steps) {
  if (steps <= 0) return 0.0;
  return SumOverContexts(PipelineDecodeSum(stages, device, seqs, micro_batch_count), first,
                         first + steps - 1);
}

namespace {

struct StageResult {
  StepResult step;
  ModelFigures figures;
  uint64_t bytes_per_seq = 0;
};

}  // namespace

Result<ParallelRun> RunDeployment(const ModelSpec& spec, const import::hf::Recipe& recipe,
                                  const device::Device& device, const Request& request,
                                  const Deployment& d) {
  auto full = import::hf::BuildStepGraph(spec, recipe);
  if (!full) return std::unexpected(Wrap(spec.origin, full.error()));
  auto model = ComputeModelFigures(*full);
  if (!model) return std::unexpected(model.error());

  const bool prefill = request.phase == Phase::kPrefill;
  const int64_t b = request.batch;
  // Micro-batches split the sequences; an attention replica takes its share of each.
  const int64_t micro = (b + d.micro_batches - 1) / d.micro_batches;
  const int64_t micro_count = (b + micro - 1) / micro;
  const int64_t seqs = (micro + d.dp_attention - 1) / d.dp_attention;
  const int64_t resident = (b + d.dp_attention - 1) / d.dp_attention;  // all micro-batches
  const cost::Workload workload =
      prefill ? PrefillBindings(seqs, request.prompt) : DecodeBindings(seqs, request.context);
  const int64_t prompt = prefill ? request.prompt : request.context;
  // As RunRequest: the most tokens a sequence's cache holds during the request.
  const int64_t memory_context = prompt + request.gen_len.value_or(0);

  std::vector<import::hf::StepGraph> graphs;
  std::vector<StageResult> stages;
  graphs.reserve(static_cast<size_t>(d.pp));
  stages.reserve(static_cast<size_t>(d.pp));
  for (int64_t s = 0; s < d.pp; ++s) {
    auto graph = import::hf::BuildStepGraph(spec, recipe, d.Shard(s));
    if (!graph) {
      // The whole model built: what fails is a device's share (a split row that no longer
      // fits the recipe's block), so the option that split it is at fault.
      return OptionError(d.tp > 1 ? "--tp" : "--ep",
                         "a device's share does not fit the recipe (" + spec.origin + ": " +
                             graph.error().message + ")");
    }
    graph->graph.name = full->graph.name + " (stage " + Str(s) + ")";
    auto step = AnalyzeStep(*graph, workload, device);
    if (!step) return std::unexpected(step.error());
    auto figures = ComputeModelFigures(*graph);
    if (!figures) return std::unexpected(figures.error());
    const uint64_t per_seq = BytesPerSeq(*graph, *figures, memory_context);
    graphs.push_back(std::move(*graph));
    stages.push_back({std::move(*step), *figures, per_seq});
  }

  std::vector<double> stage_time_s, stage_floor_s;
  double sum_t = 0, max_t = 0;
  size_t busiest = 0;
  uint64_t max_batch = UINT64_MAX, max_weights = 0, max_kv = 0, max_state = 0;
  for (size_t s = 0; s < stages.size(); ++s) {
    const roofline::Totals& t = stages[s].step.analysis.totals;
    stage_time_s.push_back(t.time_s);
    stage_floor_s.push_back(t.fused_floor_s);
    sum_t += t.time_s;
    if (t.time_s > max_t) {
      max_t = t.time_s;
      busiest = s;
    }
    max_weights = std::max(max_weights, stages[s].figures.weight_bytes);
    max_kv = std::max(max_kv, stages[s].figures.kv_bytes_per_token);
    max_state = std::max(max_state, stages[s].figures.state_bytes_per_seq);
    const uint64_t fit = MaxBatch(stages[s].figures, stages[s].bytes_per_seq, device.memory_bytes,
                                  request.mem_util);
    max_batch = std::min(max_batch, fit);
  }
  const double step_s = PipelineStepTime(stage_time_s, micro_count);
  const double floor_s = PipelineStepTime(stage_floor_s, micro_count);

  ParallelRun out;
  Run& run = out.run;
  report::LlmFigures& f = run.figures;
  f.phase = prefill ? "prefill" : "decode";
  f.params_total = model->params_total;
  f.params_active = model->params_active;
  f.params_embedding = model->params_embedding;
  f.weight_bytes = model->weight_bytes;
  f.kv_bytes_per_token = model->kv_bytes_per_token;
  f.state_bytes_per_seq = model->state_bytes_per_seq;
  f.kv_window_bytes_per_seq = KvWindowBytesPerSeq(*full, memory_context);
  f.step_time_s = step_s;
  const double tokens = prefill ? static_cast<double>(b) * static_cast<double>(request.prompt)
                                : static_cast<double>(b);
  f.tokens_per_s = step_s > 0 ? tokens / step_s : 0;
  if (prefill) f.ttft_s = step_s;
  if (request.gen_len) {
    // As RunRequest: the prefill of the prompt, then O decode steps over the growing context,
    // each step on the deployment (same micro-batches and per-device sequences).
    const int64_t gen = *request.gen_len;
    double ttft = step_s;
    if (!prefill) {
      std::vector<double> prefill_s;
      for (const import::hf::StepGraph& g : graphs) {
        auto p = AnalyzeStep(g, PrefillBindings(seqs, prompt), device);
        if (!p) return std::unexpected(p.error());
        prefill_s.push_back(p->analysis.totals.time_s);
      }
      ttft = PipelineStepTime(prefill_s, micro_count);
    }
    auto decode = SumPipelineDecodeSteps(graphs, device, seqs, micro_count, prompt, gen);
    if (!decode) return std::unexpected(decode.error());
    f.ttft_s = ttft;
    f.e2e_s = ttft + *decode;
    f.tpot_s = gen > 0 ? *decode / static_cast<double>(gen) : 0.0;
  }
  // Every device of a stage holds the sequences of its attention replica: max_batch replicas.
  f.max_batch = max_batch * static_cast<uint64_t>(d.dp_attention);
  f.fits = static_cast<uint64_t>(b) <= f.max_batch;
  f.weights_format = recipe.weights_label;
  f.activations_format = recipe.activations_label;
  f.kv_format = std::string(format::FormatName(recipe.kv));
  f.state_format = std::string(format::FormatName(recipe.state));

  report::ParallelFigures& p = out.parallel;
  p.tp = static_cast<int>(d.tp);
  p.ep = static_cast<int>(d.ep);
  p.pp = static_cast<int>(d.pp);
  p.dp_attention = static_cast<int>(d.dp_attention);
  p.devices = static_cast<int>(d.devices);
  p.weight_bytes_per_device = max_weights;
  p.kv_bytes_per_token_per_device = max_kv;
  p.state_bytes_per_seq_per_device = max_state;
  p.seqs_per_device = static_cast<uint64_t>(resident);
  const roofline::Totals& bt = stages[busiest].step.analysis.totals;
  p.comm_time_s = bt.comm_s * static_cast<double>(micro_count);
  p.tokens_per_s_per_device = f.tokens_per_s / static_cast<double>(d.devices);
  p.micro_batches = static_cast<int>(micro_count);
  p.gpus_per_node = static_cast<int>(d.gpus_per_node);
  p.expert_tp = static_cast<int>(d.expert_tp);
  p.busiest_stage = static_cast<int>(busiest);
  p.step_floor_s = floor_s;
  p.bubble = step_s > 0 ? (sum_t - max_t) / step_s : 0;
  if (d.ep > 1) p.moe_scope = d.moe_scope;
  if (d.tp > 1) p.tp_scope = d.tp_scope;
  if (d.pp > 1) p.pp_scope = d.pp_scope;

  run.assumptions = d.assumptions;
  if (request.gen_len) {
    const int64_t gen = *request.gen_len;
    run.assumptions.push_back("request: prefill of " + Str(prompt) + " tokens, then " + Str(gen) +
                              " decode steps at contexts " + Str(prompt) + ".." +
                              Str(prompt + gen - 1) + ", each a step of the deployment; "
                              "tpot_s = decode time / " + Str(gen));
  }
  if (d.pp > 1) {
    run.assumptions.push_back(
        "pipeline: " + Str(micro_count) + " micro-batches of " + Str(micro) +
        " sequences; step = Σ stage times + (micro-batches − 1) × the slowest stage; layers "
        "split as evenly as possible, earlier stages taking the remainder");
  }
  if (d.dp_attention > 1) {
    run.assumptions.push_back("attention data-parallel: each of " + Str(d.dp_attention) +
                              " replicas runs " + Str(seqs) + " of each micro-batch's " +
                              Str(micro) + " sequences (the busiest replica's share)");
  }
  run.assumptions.push_back(
      "memory per device: weights (" +
      HumanBytes(static_cast<double>(stages[busiest].figures.weight_bytes)) + " on the busiest " +
      "device) + KV and state of " + Str(memory_context) + " tokens for " + Str(resident) +
      " sequences within " + Str(static_cast<int64_t>(std::lround(request.mem_util * 100))) +
      "% of " + HumanBytes(device.memory_bytes));
  out.busiest_graph = std::move(graphs[busiest].graph);
  run.step = std::move(stages[busiest].step);
  return out;
}

}  // namespace opscope::llm
