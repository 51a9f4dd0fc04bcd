// Σ of decode step times over a growing context (see decode_sum.h).
#include "llm/decode_sum.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "llm/deployment.h"
#include "llm/llm.h"

namespace opscope::llm {
namespace {

using import::hf::StepGraph;

// t(j) = at0 + slope · j over the steps j = 0..L of a stretch of contexts.
struct Line {
  double at0 = 0, slope = 0;
  double At(double j) const { return at0 + slope * j; }
};

// Every stage's per-node costs and times of one decode step, stage after stage.
struct Sample {
  std::vector<uint64_t> bytes, flops, bytes_link;
  std::vector<roofline::NodeTime> times;
  std::vector<double> stage_time_s;
};

// Σ_{j=s}^{e} (x0 + x1·j).
double SumLine(double x0, double x1, double s, double e) {
  if (e < s) return 0;
  const double count = e - s + 1;
  return count * x0 + x1 * (s + e) * count / 2;
}

// Σ_{j=0}^{last} max(m0 + m1·j, k0 + k1·j): split where the two lines cross.
double SumOfMax(double m0, double m1, double k0, double k1, double last) {
  const double d0 = m0 - k0, d1 = m1 - k1;
  if (d1 == 0) return d0 >= 0 ? SumLine(m0, m1, 0, last) : SumLine(k0, k1, 0, last);
  // d(j) = d0 + d1·j changes sign at j* = −d0/d1: for j <= floor(j*) memory leads when d
  // falls (d1 < 0), compute leads when it rises; past j* the other one.
  const double split = std::clamp(std::floor(-d0 / d1), -1.0, last);
  const bool memory_first = d1 < 0;
  const double first = memory_first ? SumLine(m0, m1, 0, split) : SumLine(k0, k1, 0, split);
  const double second =
      memory_first ? SumLine(k0, k1, split + 1, last) : SumLine(m0, m1, split + 1, last);
  return first + second;
}

// A node's memory, compute and link lines through its times at a and a + 1.
std::array<Line, 3> Lines(const roofline::NodeTime& t0, const roofline::NodeTime& t1) {
  return {Line{t0.memory_s, t1.memory_s - t0.memory_s},
          Line{t0.compute_s, t1.compute_s - t0.compute_s},
          Line{t0.link_s, t1.link_s - t0.link_s}};
}

class DecodeSum {
 public:
  // `one_device`: the stages are one device's whole step (one stage, one micro-batch).
  DecodeSum(std::span<const StepGraph* const> stages, const device::Device& device, int64_t seqs,
            int64_t micro_batch_count, bool one_device)
      : stages_(stages), device_(device), seqs_(seqs), micro_(micro_batch_count),
        one_device_(one_device) {}

  // Σ over contexts [a, b].
  Result<double> Sum(int64_t a, int64_t b) const {
    if (b - a < 4) {
      double total_s = 0;
      for (int64_t c = a; c <= b; ++c) {
        auto s = Eval(c);
        if (!s) return std::unexpected(s.error());
        total_s += PipelineStepTime(s->stage_time_s, micro_);
      }
      return total_s;
    }
    auto sa = Eval(a);
    if (!sa) return std::unexpected(sa.error());
    auto sa1 = Eval(a + 1);
    if (!sa1) return std::unexpected(sa1.error());
    auto sb = Eval(b);
    if (!sb) return std::unexpected(sb.error());
    if (!Affine(*sa, *sa1, *sb, b - a)) {
      const int64_t mid = a + (b - a) / 2;
      auto left = Sum(a, mid);
      if (!left) return left;
      auto right = Sum(mid + 1, b);
      if (!right) return right;
      return *left + *right;
    }
    return one_device_ ? SumStretchPerNode(*sa, *sa1, b - a) : SumStretchPipeline(*sa, *sa1, b - a);
  }

 private:
  Result<Sample> Eval(int64_t context) const {
    Sample s;
    size_t nodes = 0;
    for (const StepGraph* g : stages_) nodes += g->graph.nodes.size();
    s.bytes.reserve(nodes);
    s.flops.reserve(nodes);
    s.bytes_link.reserve(nodes);
    s.times.reserve(nodes);
    for (const StepGraph* g : stages_) {
      auto r = AnalyzeStep(*g, DecodeBindings(seqs_, context), device_);
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

  // Every node's bytes, FLOPs and link bytes at b lie on the line through a and a + 1 (exact
  // integers); on a deployment, so must its times (the same peak and link all along), which
  // the pipeline's cuts rely on. One device sums each node's memory and compute lines from
  // its bytes and FLOPs alone.
  bool Affine(const Sample& a, const Sample& a1, const Sample& b, int64_t span) const {
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
      if (one_device_) continue;
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

  // One device, Σ_{j=0}^{last}: each node's max of its memory and compute lines in closed form.
  static double SumStretchPerNode(const Sample& a, const Sample& a1, int64_t last) {
    const auto steps = static_cast<double>(last);
    double total = 0;
    for (size_t i = 0; i < a.times.size(); ++i) {
      const roofline::NodeTime &t0 = a.times[i], &t1 = a1.times[i];
      total += SumOfMax(t0.memory_s, t1.memory_s - t0.memory_s, t0.compute_s,
                        t1.compute_s - t0.compute_s, steps);
    }
    return total;
  }

  // A pipeline, Σ_{j=0}^{last}. A node's time is the max of its three lines, so each stage
  // time is affine between the steps where two of a node's lines cross; between those cuts
  // the step is summed by SumSegment.
  double SumStretchPipeline(const Sample& a, const Sample& a1, int64_t last) const {
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
    for (const StepGraph* g : stages_) stage_end.push_back(end += g->graph.nodes.size());

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

  std::span<const StepGraph* const> stages_;
  const device::Device& device_;
  int64_t seqs_, micro_;
  bool one_device_;
};

}  // namespace

Result<double> SumDecodeSteps(const StepGraph& step, const device::Device& device, int64_t batch,
                              int64_t first, int64_t steps) {
  if (steps <= 0) return 0.0;
  const StepGraph* const stages[] = {&step};
  return DecodeSum(stages, device, batch, 1, /*one_device=*/true).Sum(first, first + steps - 1);
}

Result<double> SumPipelineDecodeSteps(std::span<const StepGraph* const> stages,
                                      const device::Device& device, int64_t seqs,
                                      int64_t micro_batch_count, int64_t first, int64_t steps) {
  if (steps <= 0) return 0.0;
  return DecodeSum(stages, device, seqs, micro_batch_count, /*one_device=*/false)
      .Sum(first, first + steps - 1);
}

}  // namespace opscope::llm
