// The plain-data report every renderer reads (text, JSON; CSV, SVG and HTML later). Built
// once from the graph, ledger and roofline; renderers never recompute anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cost/ledger.h"
#include "device/device.h"
#include "ir/graph.h"
#include "roofline/roofline.h"

namespace opscope::report {

struct NodeRow {
  std::string name;
  std::string op;         // the kind
  std::string source_op;  // the importer's original name ("" when it is the kind itself)
  bool costed = false;
  uint64_t bytes_read = 0, bytes_written = 0, bytes_weights = 0, bytes_state = 0, flops = 0;
  uint64_t bytes_link = 0;  // collectives: what the device sends over its link (not in bytes())
  std::optional<double> intensity;  // absent when the node moves no bytes
  std::string mma_class;            // "bf16", ..., "none" for vector ops
  double time_s = 0;
  std::string bound;                // "memory" | "compute" | "none"
  bool flop_model = true;

  uint64_t bytes() const { return bytes_read + bytes_written; }
};

struct ByOpRow {
  std::string op;
  uint64_t count = 0, bytes = 0, flops = 0;
  double time_s = 0;
};

struct NotCosted {
  std::string name, op, reason;
};

// Serving figures of `opscope llm` (DESIGN "The LLM step model"); absent for `analyze`.
struct LlmFigures {
  std::string phase;  // "decode" | "prefill"
  uint64_t params_total = 0, params_active = 0, params_embedding = 0;
  uint64_t weight_bytes = 0;
  uint64_t kv_bytes_per_token = 0;
  uint64_t kv_window_bytes_per_seq = 0;
  uint64_t state_bytes_per_seq = 0;
  double step_time_s = 0;
  double tokens_per_s = 0;
  std::optional<double> ttft_s;  // prefill
  std::optional<double> e2e_s;   // with --gen-len
  std::optional<double> tpot_s;  // with --gen-len
  uint64_t max_batch = 0;
  bool fits = false;
  std::string weights_format, activations_format, kv_format, state_format;  // the recipe
};

// Multi-device deployments (issue: parallelism); absent on one device.
// The JSON block carries the DESIGN's nine fields; the rest feed the text report.
struct ParallelFigures {
  int tp = 1, ep = 1, pp = 1, dp_attention = 1, devices = 1;
  uint64_t weight_bytes_per_device = 0;       // the device holding the most weights
  uint64_t kv_bytes_per_token_per_device = 0;  // full-attention KV of one of its sequences' tokens
  double comm_time_s = 0;                      // the busiest device's collectives in one step
  double tokens_per_s_per_device = 0;
  // Text only.
  int micro_batches = 1, gpus_per_node = 1, expert_tp = 1;
  int busiest_stage = 0;                 // whose step `totals` and `nodes` describe
  uint64_t state_bytes_per_seq_per_device = 0;
  uint64_t seqs_per_device = 0;          // sequences one device holds (all micro-batches)
  double step_floor_s = 0;               // communication overlapped with compute
  double bubble = 0;                     // pipeline idle share of the busiest device
  std::string tp_scope, moe_scope, pp_scope;  // "node" | "network" | "" (no such group)
};

struct ReportModel {
  int schema_version = 1;
  std::string model;
  device::Device device;
  std::vector<std::pair<std::string, int64_t>> workload;  // bound symbols, in binding order
  roofline::Totals totals;
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
  std::optional<LlmFigures> llm;
  std::optional<ParallelFigures> parallel;
  int top_n = 10;  // rows in the text report's top lists
};

ReportModel BuildReport(const ir::Graph& graph, const cost::Ledger& ledger,
                        const roofline::Analysis& analysis, const device::Device& device,
                        int top_n);

}  // namespace opscope::report
