// Compiling and evaluating the step plan (see step_plan.h).
#include "sweep/step_plan.h"

#include <algorithm>
#include <array>
#include <cassert>
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
  stats_.nodes = count;
  stats_.distinct = distinct_.size();
  for (const Distinct& d : distinct_) (d.closed ? stats_.closed_form : stats_.rule_per_point)++;
  time_.assign(distinct_.size() * kBlock, 0);
  is_memory_.assign(distinct_.size() * kBlock, 0);
  is_compute_.assign(distinct_.size() * kBlock, 0);
  return {};
}

Result<std::optional<std::pair<uint64_t, uint64_t>>> StepPlan::RuleCost(Distinct& d,
                                                                       const Point& p) {
  using Pair = std::pair<uint64_t, uint64_t>;
  const bool memo = !d.uses_ctx && p.n >= 0 && p.n < (int64_t{1} << 32) && p.seqs >= 0 &&
                    p.seqs < (int64_t{1} << 32);
  const uint64_t key = (static_cast<uint64_t>(p.n) << 32) | static_cast<uint64_t>(p.seqs);
  if (memo) {
    if (auto it = d.memo.find(key); it != d.memo.end()) return it->second;
  }
  auto r = d.rule->Eval(p);
  if (!r) return std::unexpected(r.error());
  if (!r->costed || r->mma_class != d.mma_class) return std::nullopt;
  const Pair v{r->bytes(), r->flops};
  if (memo && d.memo.size() < 65536) d.memo.emplace(key, v);
  return v;
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

// A closed form with all variables but one fixed: q(x) = e0 + e1·C(x−1, 1) + e2·C(x−1, 2).
struct Folded {
  Int128 e[3] = {0, 0, 0};
};

}  // namespace

Result<void> StepPlan::TimeBlock(std::span<const Point> points, const device::Device& device,
                                 std::span<std::optional<StepTiming>> out) {
  const size_t count = points.size();
  assert(count <= kBlock && out.size() == count && "one block at a time");
  const size_t nd = distinct_.size();
  std::array<bool, kBlock> valid;
  for (size_t i = 0; i < count; ++i) {
    const Point& p = points[i];
    valid[i] = p.seqs > 0 && p.n >= 0 && p.n % p.seqs == 0;
  }
  // The varying variable when every point shares seqs and one of (rows per sequence, ctx).
  enum class Vary { kNone, kT, kP } vary = Vary::kNone;
  if (count > 1 && valid[0]) {
    bool same_s = true, same_t = true, same_p = true;
    const int64_t t0 = points[0].n / points[0].seqs;
    for (size_t i = 1; i < count; ++i) {
      same_s = same_s && valid[i] && points[i].seqs == points[0].seqs;
      same_t = same_t && valid[i] && points[i].n / std::max<int64_t>(points[i].seqs, 1) == t0;
      same_p = same_p && points[i].ctx == points[0].ctx;
    }
    if (same_s && same_t) vary = Vary::kP;
    else if (same_s && same_p) vary = Vary::kT;
  }
  std::array<NewtonBasis, kBlock> varying{NewtonBasis(1)};
  if (vary != Vary::kNone) {
    for (size_t i = 0; i < count; ++i) {
      varying[i] = NewtonBasis(vary == Vary::kP ? points[i].ctx : points[i].n / points[i].seqs);
    }
  }

  const double bw = device.dram_bytes_per_s;
  const auto vector_peak = device.Peak(format::MmaClass::kFp32);
  for (size_t k = 0; k < nd; ++k) {
    Distinct& d = distinct_[k];
    double* time = &time_[k * kBlock];
    double* is_memory = &is_memory_[k * kBlock];
    double* is_compute = &is_compute_[k * kBlock];
    const auto peak = d.mma_class != format::MmaClass::kNone ? device.Peak(d.mma_class)
                                                              : std::optional<double>();
    Folded fb, ff;
    if (d.closed && vary != Vary::kNone) {
      const Point& p0 = points[0];
      const NewtonBasis s(p0.seqs), t(p0.n / p0.seqs), c(p0.ctx);
      d.bytes.Fold(s, t, c, vary == Vary::kP ? 2 : 1, fb.e);
      d.flops.Fold(s, t, c, vary == Vary::kP ? 2 : 1, ff.e);
    }
    for (size_t i = 0; i < count; ++i) {
      time[i] = is_memory[i] = is_compute[i] = 0;
      if (!valid[i]) continue;
      const Point& p = points[i];
      Int128 bytes = -1, flops = -1;
      if (d.closed) {
        if (vary != Vary::kNone) {
          const NewtonBasis& v = varying[i];
          bytes = fb.e[0] + fb.e[1] * v.v[1] + fb.e[2] * v.v[2];
          flops = ff.e[0] + ff.e[1] * v.v[1] + ff.e[2] * v.v[2];
        } else {
          const NewtonBasis s(p.seqs), t(p.n / p.seqs), c(p.ctx);
          bytes = d.bytes.Eval(s, t, c);
          flops = d.flops.Eval(s, t, c);
        }
      }
      constexpr Int128 kMax = Int128(UINT64_MAX);
      uint64_t b, f;
      if (bytes >= 0 && bytes <= kMax && flops >= 0 && flops <= kMax) {
        b = static_cast<uint64_t>(bytes);
        f = static_cast<uint64_t>(flops);
      } else {
        // No closed form, or a value out of 64 bits: the rule decides (and reports overflow
        // as the full analysis would).
        auto cost = RuleCost(d, p);
        if (!cost) return std::unexpected(cost.error());
        if (!*cost) {
          valid[i] = false;
          continue;
        }
        b = (*cost)->first;
        f = (*cost)->second;
      }
      // roofline::Estimate, node by node.
      const double memory_s = static_cast<double>(b) / bw;
      double compute_s = 0;
      if (d.mma_class != format::MmaClass::kNone && f > 0) {
        if (!peak) {
          valid[i] = false;  // the full analysis names the node and the class
          continue;
        }
        compute_s = static_cast<double>(f) / *peak;
      } else if (f > 0 && vector_peak) {
        compute_s = static_cast<double>(f) / *vector_peak;
      }
      time[i] = std::max(memory_s, compute_s);
      if (time[i] > 0) (compute_s > memory_s ? is_compute[i] : is_memory[i]) = 1;
    }
  }
  // The step time: node times summed in graph order, as roofline::Estimate sums them, so the
  // result is the same double. Vectorized across the points of the block (each lane is the
  // same sequence of IEEE additions); x·1 = x and x·0 = 0 select the bound sums exactly.
  std::array<double, kBlock> total{}, memory{}, compute{};
  for (uint32_t k : order_) {
    const double* time = &time_[k * kBlock];
    const double* is_memory = &is_memory_[k * kBlock];
    const double* is_compute = &is_compute_[k * kBlock];
    for (size_t i = 0; i < kBlock; ++i) {
      total[i] += time[i];
      memory[i] += time[i] * is_memory[i];
      compute[i] += time[i] * is_compute[i];
    }
  }
  for (size_t i = 0; i < count; ++i) {
    out[i] = valid[i] ? std::optional<StepTiming>(StepTiming{total[i], memory[i], compute[i]})
                      : std::nullopt;
  }
  return {};
}

}  // namespace opscope::sweep
