// The plain-data report every renderer reads (text, JSON, CSV, SVG, HTML). Built once from
// the graph, ledger and roofline (and an llm run's serving figures); renderers never
// recompute anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cost/ledger.h"
#include "device/device.h"
#include "ir/graph.h"
#include "llm/deployment.h"
#include "llm/figures.h"
#include "llm/predicted.h"
#include "llm/serving.h"
#include "roofline/roofline.h"

namespace opscope::report {

struct NodeRow {
  std::string name;
  std::string op;         // the kind
  std::string source_op;  // the importer's original name ("" when it is the kind itself)
  bool costed = false;
  uint64_t bytes_read = 0, bytes_written = 0, bytes_weights = 0, bytes_state = 0, flops = 0;
  uint64_t bytes_link = 0;  // collectives: what the device sends over its link (not in bytes())
  std::string link;         // collectives: "interconnect" | "network" (their `scope`); "" else
  std::optional<double> intensity;  // absent when the node moves no bytes
  std::string mma_class;            // "bf16", ..., "none" for vector ops
  double time_s = 0;
  std::string bound;                // "memory" | "compute" | "none"
  bool flop_model = true;
  std::optional<double> predicted_time_s;  // llm runs: the engine profile's time of the node

  uint64_t bytes() const { return bytes_read + bytes_written; }
};

struct ByOpRow {
  std::string op;
  uint64_t count = 0, bytes = 0, flops = 0;
  uint64_t bytes_link = 0;  // collectives: link bytes sent (not in bytes)
  double time_s = 0;
};

struct NotCosted {
  std::string name, op, reason;
};

// `opscope llm`: the serving figures (DESIGN "The LLM step model") and the recipe they are for.
struct LlmSection {
  llm::Figures figures;
  llm::RecipeLabels recipe;
  std::optional<llm::Predicted> predicted;  // llm.predicted: an engine's figures
};

// What state traffic is: the KV cache (attention and indexer caches, one entry per cached
// token), recurrent state (recurrences, causal-conv and RNN state, fixed per sequence), and
// state any other op reads or writes. Their sum is totals.bytes_state.
struct StateBytes {
  uint64_t kv_cache = 0, recurrent = 0, other = 0;
};

struct ReportModel {
  int schema_version = 1;
  std::string model;
  device::Device device;
  std::vector<std::pair<std::string, int64_t>> workload;  // bound symbols, in binding order
  // A prefill step's prompt tokens per sequence: shown in place of its ctx=0 (the cache the
  // step starts from is empty; the prompt is what it processes).
  std::optional<int64_t> prompt;
  roofline::Totals totals;
  StateBytes state;
  // What bounds the step: the largest term of the fused floor — "memory", "tensor compute",
  // "vector compute" or "communication" ("none" for an empty step). The one answer the
  // text, JSON (totals.floor_bound) and HTML give.
  std::string floor_bound;
  std::vector<roofline::Ridge> ridges;
  std::vector<NodeRow> nodes;       // graph order
  std::vector<ByOpRow> by_op;       // descending bytes, ties by op name
  std::vector<NotCosted> not_costed;
  std::vector<std::string> no_flop_model;  // op kinds costed with 0 FLOPs for lack of a model
  std::vector<std::string> assumptions;
  // Facts that make the report misleading if missed (an If on an input given no value, too
  // few nodes costed); printed on stderr too. JSON `warnings`, only when there are some.
  std::vector<std::string> warnings;
  // "partial: 1 of 238 nodes costed — totals are not the model's" when fewer than half of
  // the nodes are costed (also in `warnings`); empty otherwise. The text and HTML headline.
  std::string partial;
  std::vector<ir::NotTaken> not_taken;  // If branches not taken (JSON `not_taken`)
  std::optional<LlmSection> llm;              // absent for `analyze`
  std::optional<llm::Deployment> deployment;  // several devices: the split (the parallel block)
  int top_n = 10;  // rows in the text report's top lists
};

// "n=2048, seqs=4, prompt=512": the bound symbols as the text, HTML and chart titles print
// them (a prefill's prompt in place of ctx=0).
std::string WorkloadText(const ReportModel& model);

// The largest term of the fused floor (see ReportModel::floor_bound).
std::string_view FloorBound(const roofline::Totals& totals);

ReportModel BuildReport(const ir::Graph& graph, const cost::Ledger& ledger,
                        const roofline::Analysis& analysis, const device::Device& device,
                        int top_n);

// The report of one `opscope llm` run (one device or a deployment): the busiest stage's step
// (`totals`, `nodes`), the model's name, the serving figures, the deployment's split, and the
// assumptions of the ledger, the roofline and the serving figures, each once.
// With `predicted`: the llm.predicted block, each node's predicted_time_s, and the
// prediction's notes among the assumptions.
ReportModel BuildLlmReport(const llm::Serving& serving, const llm::Evaluation& evaluation,
                           int top_n, const llm::Predicted* predicted = nullptr);

}  // namespace opscope::report
