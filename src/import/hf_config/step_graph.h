// One engine step of an LLM as an ir::Graph (DESIGN "The LLM step model"): embedding, the
// layers the config defines, final norm and the LM head on the last token of each sequence,
// built from DESIGN's op kinds only. The same graph serves decode and prefill; the workload
// binds its symbols: n (token rows in the step), seqs (sequences), ctx (cached tokens per
// sequence). Decode of batch B at context C: n = B, seqs = B, ctx = C. Prefill of P tokens
// for B sequences: n = B·P, seqs = B, ctx = 0.
//
// Identical layers (same kind and the same weight formats) are stamped out with cost twins
// pointing at the first such layer, so the ledger costs each distinct layer once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "import/hf_config/model_spec.h"
#include "import/hf_config/recipe.h"
#include "ir/graph.h"
#include "support/error.h"

namespace opscope::import::hf {

// The nodes of an EAGLE-3 head over the target's hidden states (ModelSpec::eagle3): fc, and
// the norms before it where the head has them. They run once per speculative round, the head's
// other nodes once per draft token.
inline constexpr std::string_view kEagle3FcNode = "fc";
inline constexpr std::string_view kEagle3FcNormNode = "input_norm";
inline constexpr std::string_view kEagle3FcChunkNormNode = "fc_norm";
inline bool IsEagle3OncePerRound(std::string_view node) {
  return node == kEagle3FcNode || node == kEagle3FcNormNode || node == kEagle3FcChunkNormNode;
}

// The workload symbol names the graph uses.
inline constexpr const char* kTokensSymbol = "n";
inline constexpr const char* kSeqsSymbol = "seqs";
inline constexpr const char* kContextSymbol = "ctx";

enum class WeightGroup : uint8_t {
  kEmbedding,     // the input embedding table (shared with the LM head when tied)
  kRoutedExpert,  // [E, ...] routed-expert weights and biases: one token uses top_k of E
  kOther,
};

struct WeightEntry {
  ir::TensorId tensor;
  WeightGroup group = WeightGroup::kOther;
  int64_t experts = 0, top_k = 0;  // kRoutedExpert
};

// A KV cache tensor [seqs, ctx or min(ctx, window), heads, dim] (or MLA's latent cache).
struct CacheEntry {
  ir::TensorId tensor;
  int64_t layer = 0;
  int64_t window = 0;               // 0: full attention
  uint64_t bytes_per_token = 0;     // one sequence, one cached token, without per-tensor scales
};

// A recurrent or conv state tensor [seqs, ...].
struct StateEntry {
  ir::TensorId tensor;
  int64_t layer = 0;
  uint64_t bytes_per_seq = 0;
};

struct StepGraph {
  ir::Graph graph;
  std::vector<WeightEntry> weights;  // every weight tensor once, in graph order
  std::vector<CacheEntry> kv_caches;
  std::vector<StateEntry> states;
  int64_t distinct_layers = 0;  // layers costed once each (the rest are cost twins)
  // Parameters of the multi-token-prediction modules (model_spec.h MtpSpec), which the step
  // does not run and params_total does not count: modules · (their blocks + the projection
  // [hidden, 2·hidden] + three norms [hidden] + their own embedding and LM head where the
  // checkpoint stores them). 0 without MTP modules.
  uint64_t params_mtp = 0;
};

// One device's share of a multi-device deployment (DESIGN "Multi-device deployments"; the
// degrees are checked by llm::PlanDeployment, which fills this in). The builder applies the
// split while it builds, where it knows which dim of each tensor is heads, columns or rows,
// rather than rewriting a finished graph by name patterns; the result is one device's step
// graph with collective nodes (attributes group_size and scope) where data crosses devices:
//  * tp: attention heads, KV heads (each device keeps one when there are fewer than tp), MLA
//    heads (its latent cache and a-projections replicated), GatedDeltaNet / Mamba2 heads, MLP
//    and shared-expert columns/rows, the embedding table and the LM head (vocab-parallel,
//    ceil(vocab/tp) rows) split tp ways; norms and routers replicated. An AllReduce after each
//    row-parallel projection (o_proj / out_proj, the MLP's down, the embedding), an AllGather
//    of the logits.
//  * ep > 1: each device holds experts/ep routed experts, each split expert_tp ways along its
//    intermediate dim; the group's tokens are dp_attention · n (n: the device's own token
//    rows). When the tokens are spread over the group (DispatchesExperts: several attention
//    replicas, or experts on devices beyond the tensor-parallel group), an AllToAll dispatch
//    of the (token, expert) rows before the experts and an AllToAll combine after them over
//    the moe_group devices of the stage. When every device of the group already holds every
//    token (one attention replica over the whole group: --tp 8 --ep 8), each runs its own
//    experts' rows in place and the partial sums meet in the tensor-parallel AllReduce, as
//    TensorRT-LLM, vLLM and SGLang run expert parallelism without attention data parallelism
//    (they dispatch with all-to-all kernels only across attention replicas). ep == 1: experts
//    are split tp ways along their intermediate dim inside each attention replica, like the
//    dense MLP.
//  * pp: this stage's layers [first_layer, end_layer); the first stage embeds, the last runs
//    the LM head; other stages read their input hidden state as a graph input and every stage
//    but the last ends with a SendRecv of its hidden state to the next.
struct DeviceShard {
  int64_t tp = 1;
  int64_t dp_attention = 1;  // attention replicas whose tokens meet in the MoE layers
  int64_t ep = 1;
  int64_t expert_tp = 1;     // ep > 1: ways each expert's intermediate dim is split
  int64_t moe_group = 1;     // ep > 1: devices whose tokens meet in the MoE layers
  int64_t pp = 1;
  int64_t first_layer = 0, end_layer = -1;  // -1: to the last layer
  bool first_stage = true, last_stage = true;
  // "node" (interconnect) or "network", per collective group.
  std::string tp_scope = "node", moe_scope = "node", pp_scope = "node";
};

// Whether the routed experts' rows cross devices by AllToAll: expert parallelism whose group
// is not one tensor-parallel group holding the same tokens (see DeviceShard's ep above).
inline bool DispatchesExperts(int64_t ep, int64_t tp, int64_t dp_attention, int64_t moe_group) {
  return ep > 1 && !(dp_attention == 1 && moe_group == tp);
}
inline bool DispatchesExperts(const DeviceShard& s) {
  return DispatchesExperts(s.ep, s.tp, s.dp_attention, s.moe_group);
}

// Builds the step graph. Errors: a weight whose rows do not fit the recipe's block (naming the
// tensor), or a structural fault (named), which would be a bug in this importer.
Result<StepGraph> BuildStepGraph(const ModelSpec& spec, const Recipe& recipe);
// One device's step graph in a multi-device deployment (see DeviceShard). The degrees must
// divide what they split (llm::PlanDeployment checks them and names the option at fault).
Result<StepGraph> BuildStepGraph(const ModelSpec& spec, const Recipe& recipe,
                                 const DeviceShard& shard);

}  // namespace opscope::import::hf
