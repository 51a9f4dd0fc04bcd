// Σ over a range of contexts of a decode step time that is piecewise affine in the context,
// without timing every step (the shared skeleton of llm::SumDecodeSteps on one device and
// llm::SumPipelineDecodeSteps on a deployment).
//
// Every node's bytes and FLOPs (and link bytes) are piecewise affine in the context: the
// range is bisected until the samples at a, a + 1 and b lie on one line (Summer::Affine, exact
// integer checks), and each such stretch is summed in closed form (Summer::SumStretch).
// Ranges of fewer than five steps are summed step by step.
#pragma once

#include <cstdint>

#include "support/error.h"

namespace opscope::llm {

// Summer provides:
//   Result<Sample> Eval(int64_t context) const;          the step's samples at a context
//   double StepTime(const Sample&) const;                 its step time
//   static bool Affine(const Sample& a, const Sample& a1, const Sample& b, int64_t span);
//   double SumStretch(const Sample& a, const Sample& a1, int64_t last) const;
//                                                         Σ_{j=0}^{last} on an affine stretch
template <typename Summer>
Result<double> SumOverContexts(const Summer& summer, int64_t a, int64_t b) {
  if (b - a < 4) {
    double total_s = 0;
    for (int64_t c = a; c <= b; ++c) {
      auto s = summer.Eval(c);
      if (!s) return std::unexpected(s.error());
      total_s += summer.StepTime(*s);
    }
    return total_s;
  }
  auto sa = summer.Eval(a);
  if (!sa) return std::unexpected(sa.error());
  auto sa1 = summer.Eval(a + 1);
  if (!sa1) return std::unexpected(sa1.error());
  auto sb = summer.Eval(b);
  if (!sb) return std::unexpected(sb.error());
  if (!Summer::Affine(*sa, *sa1, *sb, b - a)) {
    const int64_t mid = a + (b - a) / 2;
    auto left = SumOverContexts(summer, a, mid);
    if (!left) return left;
    auto right = SumOverContexts(summer, mid + 1, b);
    if (!right) return right;
    return *left + *right;
  }
  return summer.SumStretch(*sa, *sa1, b - a);
}

}  // namespace opscope::llm
