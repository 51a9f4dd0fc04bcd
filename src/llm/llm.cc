// One engine step of an LLM: model figures, memory fit, ledger and roofline (see llm.h).
#include "llm/llm.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_set>

#include "support/checked_math.h"

namespace opscope::llm {

using import::hf::WeightGroup;

std::string_view PhaseName(Phase phase) {
  switch (phase) {
    case Phase::kDecode: return "decode";
    case Phase::kPrefill: return "prefill";
  }
  return "decode";
}

namespace {

// Concrete dims of a weight tensor (the importer writes weights with constant shapes).
std::vector<int64_t> ConstantDims(const ir::Tensor& t) {
  std::vector<int64_t> dims;
  dims.reserve(t.shape.size());
  for (const expr::Expr& e : t.shape) dims.push_back(e.IsConstant() ? e.constant() : 0);
  return dims;
}

}  // namespace

Result<ModelFigures> ComputeModelFigures(const StepGraph& step) {
  ModelFigures m;
  // The LM head's weights: the inputs of its node (an untied head; a tied one is the table).
  std::unordered_set<ir::TensorId> head;
  for (const ir::Node& n : step.graph.nodes) {
    if (n.op == ir::OpKind::kLmHead) head.insert(n.inputs.begin(), n.inputs.end());
  }
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
    if (w.group == WeightGroup::kEmbedding || head.contains(w.tensor)) {
      m.table_weight_bytes += *bytes;
    }
    if (w.group == WeightGroup::kEmbedding) m.params_embedding += elems;
    if (w.group == WeightGroup::kRoutedExpert && w.experts > 0) {
      // A token uses top_k of the E experts: elems / E · top_k of the tensor.
      m.params_active += elems / static_cast<uint64_t>(w.experts) * static_cast<uint64_t>(w.top_k);
    } else {
      m.params_active += elems;
    }
  }
  std::map<int64_t, uint64_t> layer_kv;  // full-attention layer -> its caches' bytes per token
  for (const import::hf::CacheEntry& c : step.kv_caches) {
    if (c.window == 0) {
      m.kv_bytes_per_token += c.bytes_per_token;
      layer_kv[c.layer] += c.bytes_per_token;
    }
  }
  for (const auto& [layer, bytes] : layer_kv) {
    m.layer_kv_bytes_per_token = std::max(m.layer_kv_bytes_per_token, bytes);
  }
  for (const import::hf::StateEntry& s : step.states) m.state_bytes_per_seq += s.bytes_per_seq;
  return m;
}

std::vector<KvWindow> KvWindows(const StepGraph& step) {
  std::vector<KvWindow> out;
  for (const import::hf::CacheEntry& c : step.kv_caches) {
    if (c.window == 0) continue;
    auto same = std::find_if(out.begin(), out.end(),
                             [&](const KvWindow& w) { return w.window == c.window; });
    if (same == out.end()) {
      out.push_back({c.window, c.bytes_per_token});
    } else {
      same->bytes_per_token += c.bytes_per_token;
    }
  }
  return out;
}

uint64_t KvWindowBytesPerSeq(const StepGraph& step, int64_t context) {
  return KvWindowBytesPerSeq(KvWindows(step), context);
}

uint64_t BytesPerSeq(const StepGraph& step, const ModelFigures& m, int64_t context) {
  return BytesPerSeq(m, KvWindows(step), context);
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
  if (!analysis) {
    Error e = Wrap(step.graph.name, analysis.error());
    // A checkpoint whose matrices run at a class the device has no tensor cores for (NVFP4 on
    // Hopper, FP8 on Ampere) is served weight-only by the engines (vLLM's Marlin kernels
    // dequantize the weights to bf16 in the GEMM); the recipe says which, so say how.
    // Only when every class missing is narrower than bf16: a wider one (a GGUF file's f32
    // router on a TPU) stays wide whatever the activations.
    bool narrow_missing = false, wide_missing = false;
    for (const cost::NodeCost& c : ledger->nodes) {
      if (!c.costed || c.flops == 0 || c.mma_class == format::MmaClass::kNone ||
          roofline::NodePeak(device, c.mma_class)) {
        continue;
      }
      (format::MmaClassBits(c.mma_class) < 16 ? narrow_missing : wide_missing) = true;
    }
    if (narrow_missing && !wide_missing && device.Peak(format::MmaClass::kBf16)) {
      e.message += "; to run the matrices weight-only (the weights kept in their format and "
                   "dequantized to bf16 in the GEMM, as engines serve such checkpoints on devices "
                   "without those tensor cores), set the activations to bf16 (--activations bf16)";
    }
    return std::unexpected(e);
  }
  return StepResult{std::move(*ledger), std::move(*analysis)};
}

}  // namespace opscope::llm
