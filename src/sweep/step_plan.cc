// Compiling and evaluating the step plan (see step_plan.h).
#include "sweep/step_plan.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <cstring>
#include <string>

namespace opscope::sweep {
namespace {

// Grid and verification points, as (S, T, P): S sequences of T rows after P cached tokens.
struct Stp {
  int64_t s, t, p;
};
constexpr std::array<Stp, 14> kVerify = {{{4, 1, 4},      {16, 1, 4607},  {5, 7, 1000},
                                          {1, 4096, 0},   {64, 1, 131072}, {3, 333, 17},
                                          {2, 1, 0},      {7, 1, 2},       {1, 1, 0},
                                          {128, 1, 32768}, {2, 8192, 0},   {32, 3, 5},
                                          {1000, 1, 1},   {9, 65, 4096}}};

Point ToPoint(const Stp& x) { return Point{x.s * x.t, x.s, x.p}; }

// Whether the node's cost is, by its rule and its shapes, a polynomial of degree ≤ 2 in each
// of S, T, P (see step_plan.h); the fit is still verified.
bool PolynomialByConstruction(const ir::Graph& g, const ir::Node& n) {
  switch (ir::Family(n.op)) {
    case ir::OpFamily::kExperts:  // distinct experts: E·(1−(1−k/E)^T)
    case ir::OpFamily::kGather:   // min(gathered rows, the whole input)
    case ir::OpFamily::kCollective:  // timed on its link: the rule gives its link bytes
      return false;
    case ir::OpFamily::kPagedAttention:  // windows cap pairs; MLA takes the cheaper form
      if (n.IntAttr("window").value_or(0) > 0 || n.FindAttr("kv_lora_rank") != nullptr) return false;
      break;
    default:
      break;
  }
  auto shapes_ok = [&](ir::TensorId id) {
    const ir::Tensor& t = g.tensors[id];
    bool constant = true;
    for (const expr::Expr& e : t.shape) {
      if (e.IsConstant()) continue;
      constant = false;
      if (e.IsSymbol()) continue;
      const std::string s = e.ToString(g.symbols);
      if (s.find('/') != std::string::npos || s.find("min") != std::string::npos ||
          s.find("max") != std::string::npos || s.find("ceil_div") != std::string::npos) {
        return false;
      }
    }
    return constant || format::Info(t.format).block_rows <= 1;  // 2-D blocks: ceil(rows/128)
  };
  return std::all_of(n.inputs.begin(), n.inputs.end(), shapes_ok) &&
         std::all_of(n.outputs.begin(), n.outputs.end(), shapes_ok);
}

bool UsesSymbol(const ir::Graph& g, const ir::Node& n, std::optional<expr::SymbolId> sym) {
  if (!sym) return false;
  std::vector<expr::SymbolId> syms;
  for (ir::TensorId t : n.inputs)
    for (const expr::Expr& e : g.tensors[t].shape) e.CollectSymbols(syms);
  for (ir::TensorId t : n.outputs)
    for (const expr::Expr& e : g.tensors[t].shape) e.CollectSymbols(syms);
  return std::find(syms.begin(), syms.end(), *sym) != syms.end();
}

}  // namespace

Result<std::unique_ptr<StepPlan>> StepPlan::Compile(const ir::Graph& graph) {
  std::unique_ptr<StepPlan> plan(new StepPlan(graph));
  if (auto ok = plan->Build(); !ok) return std::unexpected(ok.error());
  return plan;
}

Result<void> StepPlan::Build() {
  const size_t count = graph_.nodes.size();
  std::vector<int32_t> distinct_of(count, -1);
  const auto ctx = graph_.symbols.Find("ctx");
  order_.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const ir::Node& n = graph_.nodes[i];
    // A cost twin costs what its first twin costs (the ledger copies it when that one is
    // costed; the plan gives up on a point where it is not).
    if (n.cost_twin >= 0 && graph_.nodes[n.cost_twin].repeat == n.repeat &&
        distinct_of[n.cost_twin] >= 0) {
      distinct_of[i] = distinct_of[n.cost_twin];
      order_[i] = static_cast<uint32_t>(distinct_of[i]);
      continue;
    }
    Distinct d;
    d.node = i;
    d.rule = std::make_unique<NodeEvaluator>(graph_, i);
    d.uses_ctx = UsesSymbol(graph_, n, ctx);
    d.collective = ir::Family(n.op) == ir::OpFamily::kCollective;
    // The class is a property of the formats: take it from one evaluation.
    auto c0 = d.rule->Eval(ToPoint({1, 1, 1}));
    if (!c0) return std::unexpected(c0.error());
    d.mma_class = c0->mma_class;
    if (PolynomialByConstruction(graph_, n)) {
      std::array<std::array<std::array<Int128, 3>, 3>, 3> bytes{}, flops{};
      bool ok = true;
      for (int a = 0; a < 3 && ok; ++a)
        for (int b = 0; b < 3 && ok; ++b)
          for (int c = 0; c < 3 && ok; ++c) {
            auto r = d.rule->Eval(ToPoint({1 + a, 1 + b, 1 + c}));
            if (!r) return std::unexpected(r.error());
            ok = r->costed && r->mma_class == d.mma_class;
            bytes[a][b][c] = r->bytes();
            flops[a][b][c] = r->flops;
          }
      if (ok) {
        d.bytes = NewtonForm::Fit(bytes);
        d.flops = NewtonForm::Fit(flops);
        for (const Stp& v : kVerify) {
          auto r = d.rule->Eval(ToPoint(v));
          if (!r || !r->costed) {
            ok = false;
            break;
          }
          const NewtonBasis s(v.s), t(v.t), p(v.p);
          ok = ok && d.bytes.Eval(s, t, p) == Int128(r->bytes()) &&
               d.flops.Eval(s, t, p) == Int128(r->flops) && r->mma_class == d.mma_class;
          if (!ok) break;
        }
      }
      d.closed = ok;
    }
    distinct_of[i] = static_cast<int32_t>(distinct_.size());
    order_[i] = static_cast<uint32_t>(distinct_.size());
    distinct_.push_back(std::move(d));
  }
  for (const auto& [sym, value] : graph_.dims) bindings_.Set(sym, value);
  n_ = graph_.symbols.Find("n");
  seqs_ = graph_.symbols.Find("seqs");
  ctx_ = graph_.symbols.Find("ctx");
  predicted_s_.assign(distinct_.size(), 0);
  predicted_key_.assign(distinct_.size(), {});
  stats_.nodes = count;
  stats_.distinct = distinct_.size();
  for (const Distinct& d : distinct_) (d.closed ? stats_.closed_form : stats_.rule_per_point)++;
  multiplicity_.assign(distinct_.size(), 0);
  for (uint32_t k : order_) multiplicity_[k] += 1;
  time_s_.assign(distinct_.size() * kBlock, 0);
  is_memory_.assign(distinct_.size() * kBlock, 0);
  is_compute_.assign(distinct_.size() * kBlock, 0);
  constant_.assign(distinct_.size(), 0);
  return {};
}

Result<std::optional<StepPlan::RuleNumbers>> StepPlan::RuleCost(Distinct& d, const Point& p) {
  const bool memo = !d.uses_ctx && p.n >= 0 && p.n < (int64_t{1} << 32) && p.seqs >= 0 &&
                    p.seqs < (int64_t{1} << 32);
  const uint64_t key = (static_cast<uint64_t>(p.n) << 32) | static_cast<uint64_t>(p.seqs);
  if (memo) {
    if (key == d.last_key) return d.last_value;
    if (auto it = d.memo.find(key); it != d.memo.end()) {
      d.last_key = key;
      d.last_value = it->second;
      return it->second;
    }
  }
  auto r = d.rule->Eval(p);
  if (!r) return std::unexpected(r.error());
  if (!r->costed || r->mma_class != d.mma_class) return std::nullopt;
  const RuleNumbers v{r->bytes(), r->flops, r->bytes_link, r->note};
  if (memo && d.memo.size() < 65536) d.memo.emplace(key, v);
  return v;
}

Result<std::optional<cost::NodeCost>> StepPlan::EntryAt(Distinct& d, const Point& p) {
  cost::NodeCost c;
  c.costed = true;
  c.mma_class = d.mma_class;
  c.collective = d.collective;
  if (d.closed) {
    const NewtonBasis s(p.seqs), t(p.n / p.seqs), x(p.ctx);
    const Int128 bytes = d.bytes.Eval(s, t, x), flops = d.flops.Eval(s, t, x);
    constexpr Int128 kMax = Int128(INT64_MAX);
    if (bytes >= 0 && bytes <= kMax && flops >= 0 && flops <= kMax) {
      c.bytes_read = static_cast<uint64_t>(bytes);
      c.flops = static_cast<uint64_t>(flops);
      return c;
    }
  }
  auto rule = RuleCost(d, p);
  if (!rule) return std::unexpected(rule.error());
  if (!*rule || (*rule)->bytes > uint64_t{INT64_MAX} || (*rule)->flops > uint64_t{INT64_MAX}) {
    return std::nullopt;
  }
  c.bytes_read = (*rule)->bytes;
  c.flops = (*rule)->flops;
  c.bytes_link = (*rule)->link;
  c.note = (*rule)->note;
  return c;
}

Result<bool> StepPlan::PredictStep(const Point& p, const device::Device& device,
                                   const llm::StageNodeTimer& timer, bool decode,
                                   bool node_times, llm::StageStep& out) {
  if (!(p.seqs > 0 && p.n >= 0 && p.n % p.seqs == 0)) return false;
  if (n_) bindings_.Set(*n_, p.n);
  if (seqs_) bindings_.Set(*seqs_, p.seqs);
  if (ctx_) bindings_.Set(*ctx_, p.ctx);
  for (size_t k = 0; k < distinct_.size(); ++k) {
    Distinct& d = distinct_[k];
    const PredictedKey key{timer.identity(), &device, p.n, p.seqs};
    if (!d.uses_ctx && predicted_key_[k] == key) continue;  // costed and timed at (n, seqs)
    predicted_key_[k] = {};
    auto entry = EntryAt(d, p);
    if (!entry) return std::unexpected(entry.error());
    if (!*entry) return false;
    const cost::NodeCost& c = **entry;
    // The roofline's time of the node, as roofline::Estimate computes it (TimeBlock's).
    const std::optional<double> peak_flops_per_s = roofline::NodePeak(device, d.mma_class);
    if (c.flops > 0 && d.mma_class != format::MmaClass::kNone && !peak_flops_per_s) {
      return false;  // the full analysis names node and class
    }
    std::optional<double> link_s;
    if (d.collective) {
      auto t = roofline::CollectiveTime(graph_.nodes[d.node], c.bytes_link, device);
      if (!t) return std::unexpected(t.error());
      link_s = *t;
    }
    const roofline::NodeTime roof =
        link_s ? roofline::TimeNode(static_cast<double>(c.bytes()), static_cast<double>(c.flops),
                                    peak_flops_per_s, device.dram_bytes_per_s, *link_s)
               : roofline::TimeNode(static_cast<double>(c.bytes()), static_cast<double>(c.flops),
                                    peak_flops_per_s, device.dram_bytes_per_s);
    predicted_s_[k] = timer.NodeTime(d.node, c, bindings_, roof);
    if (!d.uses_ctx) predicted_key_[k] = key;
  }
  // As the predictor sums them: graph order, a cost twin at its (earlier) twin's time.
  if (node_times) out.node_time_s.resize(order_.size());
  double kernels_s = 0;
  uint64_t kernels = 0;
  for (size_t i = 0; i < order_.size(); ++i) {
    const int32_t twin = graph_.nodes[i].cost_twin;
    const double t = twin >= 0 && static_cast<size_t>(twin) < i
                         ? predicted_s_[order_[static_cast<size_t>(twin)]]
                         : predicted_s_[order_[i]];
    if (node_times) out.node_time_s[i] = t;
    if (t > 0 && timer.LaunchesKernel(i)) ++kernels;
    kernels_s += t;
  }
  out.kernels = kernels;
  out.overhead_s = timer.Overhead(kernels, kernels_s, decode);
  out.step_time_s = kernels_s + out.overhead_s;
  return true;
}

Result<std::optional<StepTiming>> StepPlan::Time(const Point& p, const device::Device& device) {
  std::optional<StepTiming> out;
  if (auto ok = TimeBlock(std::span<const Point>(&p, 1), device,
                          std::span<std::optional<StepTiming>>(&out, 1));
      !ok) {
    return std::unexpected(ok.error());
  }
  return out;
}

namespace {

// total[i] += time[k][i] for every k of `order`, in order: each lane is the same sequence of
// IEEE additions as a scalar loop (no reassociation), vectorized across the block's points in
// chunks of 32 lanes held in eight 4-wide accumulators (enough independent chains to hide the
// add latency); an AVX2 clone where the CPU has it.
using Double4 = double __attribute__((vector_size(32)));
__attribute__((target_clones("avx2", "default"))) void SumInGraphOrder(
    const uint32_t* order, size_t count, const double* time, size_t lanes, double* total) {
  constexpr size_t kBlock = StepPlan::kBlock, kChunk = 32, kVectors = kChunk / 4;
  static_assert(kBlock % kChunk == 0);
  for (size_t c = 0; c < lanes; c += kChunk) {  // the chunks holding the block's points
    Double4 acc[kVectors] = {};
    for (size_t j = 0; j < count; ++j) {
      const double* t = time + static_cast<size_t>(order[j]) * kBlock + c;
      for (size_t v = 0; v < kVectors; ++v) {
        Double4 x;
        std::memcpy(&x, t + 4 * v, sizeof x);
        acc[v] += x;
      }
    }
    std::memcpy(total + c, acc, sizeof acc);
  }
}

// roofline::TimeNode for one node at each point (with no link time), as roofline::Estimate
// calls it; inlined here so the loop vectorizes. Bounds as 0/1 lanes for the sums below.
__attribute__((target_clones("avx2", "default"))) void NodeTimes(
    const int64_t* bytes, const int64_t* flops, size_t count, double dram_bytes_per_s,
    std::optional<double> peak_flops_per_s, double* time, double* is_memory,
    double* is_compute) {
  for (size_t i = 0; i < count; ++i) {
    const roofline::NodeTime t =
        roofline::TimeNode(static_cast<double>(bytes[i]), static_cast<double>(flops[i]),
                           peak_flops_per_s, dram_bytes_per_s);
    time[i] = t.time_s;
    is_compute[i] = t.bound == roofline::Bound::kCompute ? 1.0 : 0.0;
    is_memory[i] = t.bound == roofline::Bound::kMemory ? 1.0 : 0.0;
  }
}

// A closed form with all variables but one fixed: q(x) = e0 + e1·C(x−1, 1) + e2·C(x−1, 2).
struct Folded {
  Int128 e[3] = {0, 0, 0};
};

// Which workload variable a block of points varies in, when all points share the other two
// (seqs S, rows per sequence T, cached tokens P) — what lets TimeBlock fold a node's closed
// form once per block.
enum class Vary { kNone, kS, kT, kP };

// The block's varying variable x at each point as C(x−1, 1) and C(x−1, 2): in int64 (v1s,
// v2s) where every |x| < 2^31, so the products stay below 2^62; else in Int128 too
// (varying_wide). max1, max2: the largest |C(x−1, 1)|, |C(x−1, 2)| of the block.
struct BlockAxis {
  Vary vary = Vary::kNone;
  std::array<int64_t, StepPlan::kBlock> v1s{}, v2s{};
  std::array<NewtonBasis, StepPlan::kBlock> varying_wide;
  bool wide = false;
  Int128 max1 = 0, max2 = 0;
};

BlockAxis FindBlockAxis(std::span<const Point> points,
                        const std::array<bool, StepPlan::kBlock>& well_formed) {
  const size_t count = points.size();
  BlockAxis axis;
  Vary& vary = axis.vary;
  if (count > 1 && well_formed[0]) {
    bool same_s = true, same_t = true, same_p = true;
    const int64_t t0 = points[0].n / points[0].seqs;
    for (size_t i = 1; i < count; ++i) {
      same_s = same_s && well_formed[i] && points[i].seqs == points[0].seqs;
      same_t = same_t && well_formed[i] && points[i].n / std::max<int64_t>(points[i].seqs, 1) == t0;
      same_p = same_p && points[i].ctx == points[0].ctx;
    }
    if (same_s && same_t) vary = Vary::kP;
    else if (same_s && same_p) vary = Vary::kT;
    else if (same_t && same_p) vary = Vary::kS;
  }
  if (vary == Vary::kNone) return axis;
  auto x_of = [&](const Point& p) {
    return vary == Vary::kP ? p.ctx : vary == Vary::kT ? p.n / p.seqs : p.seqs;
  };
  constexpr int64_t kNarrow = int64_t{1} << 31;
  for (size_t i = 0; i < count; ++i) {
    const int64_t x = x_of(points[i]);
    axis.wide = axis.wide || x <= -kNarrow || x >= kNarrow;
  }
  int64_t max1_64 = 0, max2_64 = 0;
  for (size_t i = 0; i < count; ++i) {
    if (axis.wide) {
      const NewtonBasis& b = axis.varying_wide[i] = NewtonBasis(x_of(points[i]));
      axis.max1 = std::max(axis.max1, b.v[1] < 0 ? -b.v[1] : b.v[1]);
      axis.max2 = std::max(axis.max2, b.v[2] < 0 ? -b.v[2] : b.v[2]);
      axis.v1s[i] = static_cast<int64_t>(b.v[1]);
      axis.v2s[i] = static_cast<int64_t>(b.v[2]);
    } else {
      const int64_t d = x_of(points[i]) - 1;
      axis.v1s[i] = d;
      axis.v2s[i] = d * (d - 1) / 2;  // |d| ≤ 2^31: no overflow; d(d−1) is even
      max1_64 = std::max(max1_64, d < 0 ? -d : d);
      max2_64 = std::max(max2_64, axis.v2s[i] < 0 ? -axis.v2s[i] : axis.v2s[i]);
    }
  }
  if (!axis.wide) {
    axis.max1 = max1_64;
    axis.max2 = max2_64;
  }
  return axis;
}

}  // namespace

Result<void> StepPlan::TimeBlock(std::span<const Point> points, const device::Device& device,
                                 std::span<std::optional<StepTiming>> out) {
  const size_t count = points.size();
  assert(count <= kBlock && out.size() == count && "one block at a time");
  const size_t nd = distinct_.size();
  // valid: the point is well formed (seqs divides n) and every node so far is costed there.
  std::array<bool, kBlock> valid, well_formed;
  for (size_t i = 0; i < count; ++i) {
    const Point& p = points[i];
    well_formed[i] = valid[i] = p.seqs > 0 && p.n >= 0 && p.n % p.seqs == 0;
  }
  const BlockAxis block = FindBlockAxis(points, well_formed);
  const Vary vary = block.vary;
  const auto& v1s = block.v1s;
  const auto& v2s = block.v2s;
  const auto& varying_wide = block.varying_wide;
  const bool wide = block.wide;
  const Int128 max1 = block.max1, max2 = block.max2;

  const double dram_bytes_per_s = device.dram_bytes_per_s;
  std::array<int64_t, kBlock> bytes_of, flops_of;
  std::array<uint64_t, kBlock> link_of{};
  for (size_t k = 0; k < nd; ++k) {
    Distinct& d = distinct_[k];
    // The peak the roofline divides this node's FLOPs by (0 FLOPs give 0 either way).
    const std::optional<double> peak_flops_per_s = roofline::NodePeak(device, d.mma_class);
    const bool peak_missing = d.mma_class != format::MmaClass::kNone && !peak_flops_per_s;
    Folded fb, ff;
    bool fast = false;  // the folded forms evaluate in int64 without overflow on this block
    std::array<int64_t, 6> e64{};
    if (d.closed && vary != Vary::kNone && count > 0) {
      // The fold depends on the two fixed variables only: a sweep's consecutive blocks
      // repeat it, so the last one is kept.
      const Point& p0 = points[0];
      const int axis = vary == Vary::kS ? 0 : vary == Vary::kT ? 1 : 2;
      // (axis, the two fixed variables)
      const int64_t s0 = p0.seqs, t0 = p0.n / p0.seqs, c0 = p0.ctx;
      const std::array<int64_t, 3> key = axis == 0   ? std::array<int64_t, 3>{0, t0, c0}
                                         : axis == 1 ? std::array<int64_t, 3>{1, s0, c0}
                                                     : std::array<int64_t, 3>{2, s0, t0};
      if (key != d.fold_key) {
        const NewtonBasis s(s0), t(t0), c(c0);
        d.bytes.Fold(s, t, c, axis, d.fold_bytes);
        d.flops.Fold(s, t, c, axis, d.fold_flops);
        d.fold_key = key;
      }
      std::copy(d.fold_bytes, d.fold_bytes + 3, fb.e);
      std::copy(d.fold_flops, d.fold_flops + 3, ff.e);
      // Bound |e0| + |e1|·max|v1| + |e2|·max|v2| below 2^62 once for the block.
      constexpr Int128 kLimit = Int128(1) << 62;
      auto abs = [](Int128 x) { return x < 0 ? -x : x; };
      auto bounded = [&](const Folded& f) {
        if (abs(f.e[0]) >= kLimit || abs(f.e[1]) >= kLimit || abs(f.e[2]) >= kLimit) return false;
        if (max1 >= kLimit || max2 >= kLimit) return false;
        return abs(f.e[0]) + abs(f.e[1]) * max1 + abs(f.e[2]) * max2 < kLimit;
      };
      fast = bounded(fb) && bounded(ff);
      for (int j = 0; j < 3; ++j) {
        e64[j] = static_cast<int64_t>(fb.e[j]);
        e64[3 + j] = static_cast<int64_t>(ff.e[j]);
      }
    }
    // A node whose cost does not change across the block (the varying variable is absent
    // from its closed form, or it is a ctx-free rule node in a block that varies ctx only)
    // is costed at the first point and its time copied to every lane: in a decode sweep over
    // contexts that is every node but attention.
    const bool constant =
        vary != Vary::kNone &&
        (d.closed ? fast && e64[1] == 0 && e64[2] == 0 && e64[4] == 0 && e64[5] == 0
                  : vary == Vary::kP && !d.uses_ctx);
    const size_t lanes = constant ? std::min<size_t>(count, 1) : count;
    if (fast) {
      for (size_t i = 0; i < lanes; ++i) {
        bytes_of[i] = e64[0] + e64[1] * v1s[i] + e64[2] * v2s[i];
        flops_of[i] = e64[3] + e64[4] * v1s[i] + e64[5] * v2s[i];
      }
    }
    // Integers first (exact), then the roofline arithmetic in a loop the compiler vectorizes.
    // costed[i]: this node is costed at point i.
    std::array<bool, kBlock> costed;
    for (size_t i = 0; i < lanes; ++i) {
      costed[i] = well_formed[i];
      if (fast && costed[i] && bytes_of[i] >= 0 && flops_of[i] >= 0) continue;
      bytes_of[i] = flops_of[i] = 0;
      if (!costed[i]) continue;
      Int128 bytes = -1, flops = -1;
      if (d.closed) {
        if (vary != Vary::kNone) {
          const Int128 v1 = wide ? varying_wide[i].v[1] : v1s[i];
          const Int128 v2 = wide ? varying_wide[i].v[2] : v2s[i];
          bytes = fb.e[0] + fb.e[1] * v1 + fb.e[2] * v2;
          flops = ff.e[0] + ff.e[1] * v1 + ff.e[2] * v2;
        } else {
          const Point& p = points[i];
          const NewtonBasis s(p.seqs), t(p.n / p.seqs), c(p.ctx);
          bytes = d.bytes.Eval(s, t, c);
          flops = d.flops.Eval(s, t, c);
        }
      }
      // int64 keeps the double conversion identical to the roofline's (from uint64) for
      // every count below 2^63; larger ones, and nodes without a closed form, go to the rule.
      constexpr Int128 kMax = Int128(INT64_MAX);
      if (bytes >= 0 && bytes <= kMax && flops >= 0 && flops <= kMax) {
        bytes_of[i] = static_cast<int64_t>(bytes);
        flops_of[i] = static_cast<int64_t>(flops);
        continue;
      }
      auto cost = RuleCost(d, points[i]);
      if (!cost) return std::unexpected(cost.error());
      if (!*cost || (*cost)->bytes > uint64_t{INT64_MAX} || (*cost)->flops > uint64_t{INT64_MAX}) {
        costed[i] = false;  // not costed here, or past 2^63: the full analysis takes the point
        continue;
      }
      bytes_of[i] = static_cast<int64_t>((*cost)->bytes);
      flops_of[i] = static_cast<int64_t>((*cost)->flops);
      link_of[i] = (*cost)->link;
    }
    if (peak_missing) {
      for (size_t i = 0; i < lanes; ++i) {
        if (flops_of[i] > 0) costed[i] = false;  // the full analysis names node and class
      }
    }
    if (constant) {
      if (!costed[0]) valid.fill(false);
    } else {
      for (size_t i = 0; i < count; ++i) valid[i] = valid[i] && costed[i];
    }
    double* const time = &time_s_[k * kBlock];
    double* const is_memory = &is_memory_[k * kBlock];
    double* const is_compute = &is_compute_[k * kBlock];
    if (d.collective) {
      // As roofline::Estimate times a collective: its link time, then the node time.
      const ir::Node& node = graph_.nodes[d.node];
      for (size_t i = 0; i < lanes; ++i) {
        if (!costed[i]) {
          time[i] = is_memory[i] = is_compute[i] = 0;
          continue;
        }
        auto link_s = roofline::CollectiveTime(node, link_of[i], device);
        if (!link_s) return std::unexpected(link_s.error());
        const roofline::NodeTime t =
            roofline::TimeNode(static_cast<double>(bytes_of[i]), static_cast<double>(flops_of[i]),
                               peak_flops_per_s, dram_bytes_per_s, *link_s);
        time[i] = t.time_s;
        is_compute[i] = t.bound == roofline::Bound::kCompute ? 1.0 : 0.0;
        is_memory[i] = t.bound == roofline::Bound::kMemory ? 1.0 : 0.0;
      }
    } else {
      NodeTimes(bytes_of.data(), flops_of.data(), lanes, dram_bytes_per_s, peak_flops_per_s, time,
                is_memory, is_compute);
    }
    constant_[k] = constant;
    if (constant && count > 1) std::fill(time + 1, time + count, time[0]);
  }
  // The step time: node times summed in graph order, as roofline::Estimate sums them, so the
  // result is the same double.
  std::array<double, kBlock> total_s{};
  SumInGraphOrder(order_.data(), order_.size(), time_s_.data(), count, total_s.data());
  // The bound: Σ over distinct nodes × multiplicity (the block-constant nodes' share once)
  // differs from the graph-order sums by rounding only (relative 1e-12 at most here); only a
  // near tie takes the exact sums.
  double memory_constant_s = 0, compute_constant_s = 0;
  for (size_t k = 0; k < nd; ++k) {
    if (!constant_[k]) continue;
    const double node_s = time_s_[k * kBlock] * multiplicity_[k];
    memory_constant_s += node_s * is_memory_[k * kBlock];
    compute_constant_s += node_s * is_compute_[k * kBlock];
  }
  std::array<double, kBlock> memory_s, compute_s;
  memory_s.fill(memory_constant_s);
  compute_s.fill(compute_constant_s);
  for (size_t k = 0; k < nd; ++k) {
    if (constant_[k]) continue;
    const double m = multiplicity_[k];
    const double* time = &time_s_[k * kBlock];
    const double* is_memory = &is_memory_[k * kBlock];
    const double* is_compute = &is_compute_[k * kBlock];
    for (size_t i = 0; i < count; ++i) {
      const double node_s = time[i] * m;
      memory_s[i] += node_s * is_memory[i];
      compute_s[i] += node_s * is_compute[i];
    }
  }
  for (size_t i = 0; i < count; ++i) {
    if (!valid[i]) {
      out[i] = std::nullopt;
      continue;
    }
    if (std::abs(compute_s[i] - memory_s[i]) <= 1e-9 * (compute_s[i] + memory_s[i])) {
      memory_s[i] = compute_s[i] = 0;
      for (uint32_t k : order_) {
        const size_t lane = constant_[k] ? 0 : i;
        memory_s[i] += time_s_[k * kBlock + i] * is_memory_[k * kBlock + lane];
        compute_s[i] += time_s_[k * kBlock + i] * is_compute_[k * kBlock + lane];
      }
    }
    out[i] = StepTiming{total_s[i], compute_s[i] > memory_s[i]};
  }
  return {};
}

}  // namespace opscope::sweep
