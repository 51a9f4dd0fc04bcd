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
#include <vector>

#include "import/hf_config/model_spec.h"
#include "import/hf_config/recipe.h"
#include "ir/graph.h"
#include "support/error.h"

namespace opscope::import::hf {

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
};

// Builds the step graph. Errors: a weight whose rows do not fit the recipe's block (naming the
// tensor), or a structural fault (named), which would be a bug in this importer.
Result<StepGraph> BuildStepGraph(const ModelSpec& spec, const Recipe& recipe);

}  // namespace opscope::import::hf
