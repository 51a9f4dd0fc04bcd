// The compiled plan of one LLM step graph for sweeps (issue 5): the step is costed once into
// a compact plan — identical layers appear once (the importer's cost twins) with their graph
// positions, and each distinct node's bytes and FLOPs are closed forms in the workload
// (seqs, rows per sequence, ctx) — so a point costs O(distinct nodes) plus one addition per
// node for the step time.
//
// Exactness: a point's numbers EQUAL the full analysis (BuildLedger + roofline::Estimate):
//  * a closed form is used only for a node whose rule and shapes produce a polynomial of
//    degree ≤ 2 per variable (no min/max/division in its shapes, no 2-D block format on a
//    workload-sized tensor, not routed experts, gathers, sliding-window or MLA attention);
//    it is fitted exactly (NewtonForm) and must also reproduce the rule at a dozen far-apart
//    verification points, else the node is not given one;
//  * every other node — routed experts with their E·(1−(1−k/E)^T) distinct experts, MLA's
//    cheaper-of-two-forms, sliding windows' min(ctx, W), gathers, collectives (timed on their
//    link by roofline::CollectiveTime) — runs its own cost rule at the point
//    (NodeEvaluator), memoized per (n, seqs) when it does not depend on ctx;
//  * a node whose numbers do not change across a block of points (in a decode sweep over
//    contexts, every node but attention) is costed once for the block;
//  * node times use the roofline's formula and the step time sums them in graph order, so
//    even the floating-point sum is the same, bit for bit.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "device/device.h"
#include "format/mma_class.h"
#include "ir/graph.h"
#include "llm/predicted.h"
#include "roofline/roofline.h"
#include "support/error.h"
#include "sweep/newton_form.h"
#include "sweep/node_eval.h"

namespace opscope::sweep {

// What one point costs: the step time, and whether compute-bound nodes hold more of it than
// memory-bound ones (Σ of node times by bound, in graph order, compared).
struct StepTiming {
  double time_s = 0;
  bool compute_bound = false;
};

struct PlanStats {
  size_t nodes = 0;           // graph nodes
  size_t distinct = 0;        // distinct nodes costed per point
  size_t closed_form = 0;     // of those, with a closed form
  size_t rule_per_point = 0;  // of those, evaluated by their rule (memoized or not)
};

class StepPlan {
 public:
  // Compiles `graph` (an LLM step graph with symbols n, seqs, ctx), which must outlive the
  // plan. Errors: a node the ledger rejects at the sample points.
  static Result<std::unique_ptr<StepPlan>> Compile(const ir::Graph& graph);

  // The step's timing at `p` on `device`, equal to roofline::Estimate of the full ledger;
  // nullopt when some node is not costed at `p` (the caller runs the full analysis, which
  // reports it). Errors: as the full analysis (bad input at the point; a class the device
  // has no peak for).
  Result<std::optional<StepTiming>> Time(const Point& p, const device::Device& device);

  // The same for up to kBlock points at once (faster when they share seqs and either the rows
  // per sequence or ctx, as a sweep's inner loop does). out[i] as Time(points[i]).
  static constexpr size_t kBlock = 64;
  Result<void> TimeBlock(std::span<const Point> points, const device::Device& device,
                         std::span<std::optional<StepTiming>> out);

  // An engine's predicted step at `p` (`timer`: the stage's, from llm::ServingPredictor), equal
  // to its prediction of the full analysis (predict::StepPredictor::Predict): each distinct
  // node's ledger entry as Time takes it (closed form or rule), its roofline time, then the
  // engine's time of it (StageNodeTimer::NodeTime); node times in graph order, a cost twin at
  // its twin's time; the fixed costs once. Fills out.step_time_s and out.overhead_s, and
  // out.node_time_s with every node's time when `node_times`. False where Time gives the
  // point up.
  Result<bool> PredictStep(const Point& p, const device::Device& device,
                           const llm::StageNodeTimer& timer, bool decode, bool node_times,
                           llm::StageStep& out);

  const PlanStats& stats() const { return stats_; }

 private:
  struct RuleNumbers {
    uint64_t bytes = 0, flops = 0, link = 0;  // bytes moved, FLOPs, link bytes (collectives)
    cost::Note note = cost::Note::kNone;       // MLA: the form the rule chose
  };
  struct Distinct {
    size_t node;  // the representative graph node
    bool closed = false;
    NewtonForm bytes, flops;
    format::MmaClass mma_class = format::MmaClass::kNone;
    bool uses_ctx = true;
    std::unique_ptr<NodeEvaluator> rule;
    bool collective = false;  // timed on its link too (never a closed form)
    std::unordered_map<uint64_t, RuleNumbers> memo;  // (n, seqs) -> the rule's numbers
    uint64_t last_key = UINT64_MAX;  // the last memo hit (a sweep's inner loop repeats it)
    RuleNumbers last_value;
    // The closed forms folded for the last block: (axis, seqs, the other fixed variable).
    std::array<int64_t, 3> fold_key{-1, -1, -1};
    Int128 fold_bytes[3] = {0, 0, 0}, fold_flops[3] = {0, 0, 0};
  };

  explicit StepPlan(const ir::Graph& graph) : graph_(graph), bindings_(graph.symbols) {}
  Result<void> Build();
  // Bytes and FLOPs of distinct node d at p by its rule (memoized when it ignores ctx);
  // nullopt when not costed there.
  Result<std::optional<RuleNumbers>> RuleCost(Distinct& d, const Point& p);
  // Distinct node d's ledger entry at p (closed form or rule); nullopt when not costed there
  // or past 2^63, as TimeBlock gives it up.
  Result<std::optional<cost::NodeCost>> EntryAt(Distinct& d, const Point& p);

  const ir::Graph& graph_;
  std::vector<Distinct> distinct_;
  std::vector<uint32_t> order_;  // graph order: the distinct entry of every node
  std::vector<double> multiplicity_;  // nodes per distinct entry
  PlanStats stats_;
  // Scratch per block, node-major: [distinct][kBlock].
  // A block-constant node's is_memory_/is_compute_ hold lane 0 only; its time_s_ every lane.
  std::vector<double> time_s_, is_memory_, is_compute_;
  std::vector<uint8_t> constant_;  // per distinct entry: constant over the current block
  // PredictStep's: the graph's dims and the point; each distinct entry's engine time.
  expr::Bindings bindings_;
  std::optional<expr::SymbolId> n_, seqs_, ctx_;
  std::vector<double> predicted_s_;
  // Per distinct entry: the (timer, device, n, seqs) its predicted_s_ holds when it ignores
  // ctx (a decode sweep over contexts then times only attention per point).
  struct PredictedKey {
    const void* timer = nullptr;
    const device::Device* device = nullptr;
    int64_t n = -1, seqs = -1;
    bool operator==(const PredictedKey&) const = default;
  };
  std::vector<PredictedKey> predicted_key_;
};

}  // namespace opscope::sweep
