// Multi-device deployments of an LLM step (see deployment.h).
#include "llm/deployment.h"

#include <algorithm>
#include <span>

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
  // Per-layer head counts (Laguna, MiMo-V2-Flash's sliding layers, DeciLM) split the same way.
  for (size_t i = 0; i < s.layers.size(); ++i) {
    const import::hf::LayerSpec& l = s.layers[i];
    if (l.heads == 0 || l.mixer != Mixer::kAttention) continue;
    if (auto ok = Divides(kOpt, l.heads, "attention heads of layer " + Str(static_cast<int64_t>(i)), t);
        !ok) {
      return ok;
    }
    if (l.kv_heads > 0 && l.kv_heads % t != 0 && t % l.kv_heads != 0) {
      return OptionError(kOpt, Str(l.kv_heads) + " key-value heads of layer " +
                                   Str(static_cast<int64_t>(i)) + " neither divide nor are "
                                   "divided by " + Str(t) + " (each device needs whole heads)");
    }
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

Result<void> CheckDegree(std::string_view option, int64_t value) {
  if (value < 1) return OptionError(option, "must be positive, got " + Str(value));
  if (value > 65536) return OptionError(option, "must be at most 65536, got " + Str(value));
  return {};
}

Result<void> CheckDegrees(const Degrees& g) {
  for (const auto& [option, value] :
       {std::pair<std::string_view, int64_t>{"--tp", g.tp}, {"--ep", g.ep}, {"--pp", g.pp},
        {"--dp-attention", g.dp_attention.value_or(1)},
        {"--gpus-per-node", g.gpus_per_node.value_or(1)},
        {"--micro-batches", g.micro_batches.value_or(1)}}) {
    if (auto ok = CheckDegree(option, value); !ok) return ok;
  }
  return {};
}

Deployment Deployment::OneDevice(int64_t layers) {
  Deployment d;
  d.stage_layers = {{0, layers}};
  return d;
}

BatchSplit Deployment::Split(int64_t batch) const {
  // One micro-batch on one replica (every one-device deployment): the batch whole, without
  // the divisions (a sweep splits every point).
  if (micro_batches == 1 && dp_attention == 1) return {batch, 1, batch, batch};
  BatchSplit s;
  s.micro_seqs = (batch + micro_batches - 1) / micro_batches;
  s.micro_count = (batch + s.micro_seqs - 1) / s.micro_seqs;
  s.seqs = (s.micro_seqs + dp_attention - 1) / dp_attention;
  s.resident = (batch + dp_attention - 1) / dp_attention;
  return s;
}

namespace {

// The degrees against the model: what each splits must divide by it; fills the degrees,
// devices, stages and micro-batches of `d`.
Result<void> PlanDegrees(const ModelSpec& spec, const Degrees& g, Deployment& d) {
  d.tp = g.tp;
  d.ep = g.ep;
  d.pp = g.pp;
  if (d.ep > 1) {
    if (!HasFfn(spec, Ffn::kMoe)) return OptionError("--ep", "the model has no routed experts to spread");
    if (auto ok = Divides("--ep", spec.moe.experts, "routed experts", d.ep); !ok) return ok;
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
  if (auto ok = CheckTp(spec, d.tp, d.ep); !ok) return ok;
  if (d.pp > spec.num_layers()) {
    return OptionError("--pp", Str(d.pp) + " stages for " + Str(spec.num_layers()) + " layers");
  }
  d.stage_layers = SplitLayers(spec.num_layers(), d.pp);
  d.micro_batches = g.micro_batches.value_or(d.pp);
  return {};
}

// The devices per node (given, or the device's) and the groups that must nest in them.
Result<void> PlanNodes(const Degrees& g, const device::Device& device, Deployment& d) {
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
    return ok;
  }
  return CheckNesting("a pipeline stage", d.stage_devices, per_node, "--gpus-per-node");
}

std::string_view LinkName(const std::string& scope) {
  return scope == "node" ? "interconnect" : "network";
}

// "deployment: 16 devices = pp 2 × max(tp 8 · dp_attention 1, ep 1); 8 per node; ..."
std::string LayoutAssumption(const Deployment& d) {
  std::string layout = "deployment: " + Str(d.devices) + " devices = pp " + Str(d.pp) +
                       " × max(tp " + Str(d.tp) + " · dp_attention " + Str(d.dp_attention) +
                       ", ep " + Str(d.ep) + ")";
  if (d.ep > 1 && d.expert_tp > 1) layout += ", each expert split " + Str(d.expert_tp) + " ways";
  layout += "; " + Str(d.gpus_per_node) + " per node";
  if (d.tp > 1) layout += "; tensor-parallel collectives over the " + std::string(LinkName(d.tp_scope));
  if (d.dispatches_experts()) {
    layout += "; expert all-to-all over the " + std::string(LinkName(d.moe_scope));
  } else if (d.ep > 1) {
    layout += "; experts' partial sums in the tensor-parallel all-reduce";
  }
  if (d.pp > 1) layout += "; stage hand-offs over the " + std::string(LinkName(d.pp_scope));
  return layout;
}

}  // namespace

Result<Deployment> PlanDeployment(const ModelSpec& spec, const Degrees& g,
                                  const device::Device& device) {
  if (auto ok = CheckDegrees(g); !ok) return std::unexpected(ok.error());
  Deployment d;
  if (auto ok = PlanDegrees(spec, g, d); !ok) return std::unexpected(ok.error());
  if (auto ok = PlanNodes(g, device, d); !ok) return std::unexpected(ok.error());
  // One device: no pipeline to fill, no links, nothing to lay out.
  if (d.devices == 1) return Deployment::OneDevice(spec.num_layers());
  auto scope = [&](int64_t size) { return size <= d.gpus_per_node ? "node" : "network"; };
  d.tp_scope = scope(d.tp);
  d.moe_scope = scope(d.stage_devices);
  d.pp_scope = scope(d.devices);
  d.assumptions.push_back(LayoutAssumption(d));
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

}  // namespace opscope::llm
