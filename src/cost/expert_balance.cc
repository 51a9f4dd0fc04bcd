// E[max of m iid Binomial(n, p)] (see expert_balance.h).
#include "cost/expert_balance.h"

#include <algorithm>
#include <cmath>

namespace opscope::cost {
namespace {

// Terms below this add nothing a byte count can show.
constexpr double kNegligible = 1e-13;

// Σ_{j=0}^{n−1} g(F(j)) for X ~ Binomial(n, q), q ≤ 1/2, walking the CDF up from j = 0 by
// pmf(j+1) = pmf(j)·(n−j)/(j+1)·q/(1−q) from pmf(0) = (1−q)^n. Where (1−q)^n would underflow
// (n·ln(1−q) < −700: hundreds of experts at q near 1/2) the walk keeps ln pmf until the pmf
// is representable. `done` says when every later term is negligible.
template <typename Term, typename Done>
double SumOverCdf(uint64_t n, double q, Term term, Done done) {
  constexpr double kLogTiny = -700;  // e^−700 ≈ 1e−304, above the smallest normal double
  const double log_ratio = std::log(q) - std::log1p(-q), ratio = std::exp(log_ratio);
  double log_pmf = static_cast<double>(n) * std::log1p(-q);
  double pmf = log_pmf < kLogTiny ? 0 : std::exp(log_pmf);
  double cdf = 0, sum = 0;
  for (uint64_t j = 0; j < n; ++j) {
    cdf = std::min(1.0, cdf + pmf);
    const double t = term(cdf);
    sum += t;
    if (done(cdf, t)) break;
    const double step = static_cast<double>(n - j) / static_cast<double>(j + 1);
    if (pmf > 0) {
      pmf *= step * ratio;
    } else {
      log_pmf += std::log(step) + log_ratio;
      if (log_pmf >= kLogTiny) pmf = std::exp(log_pmf);
    }
  }
  return sum;
}

}  // namespace

double ExpectedMaxBinomial(uint64_t n, double p, uint64_t m) {
  if (n == 0 || !(p > 0)) return 0;
  if (p >= 1) return static_cast<double>(n);
  const double md = static_cast<double>(std::max<uint64_t>(m, 1));
  if (p <= 0.5) {
    // Σ_j P(max > j) = Σ_j (1 − F(j)^m); past the upper tail the terms are ≈ m·(1 − F(j)).
    return SumOverCdf(
        n, p, [&](double cdf) { return 1 - std::pow(cdf, md); },
        [&](double cdf, double t) { return cdf > 0.5 && t < kNegligible; });  // past the median
  }
  // Most experts used: max X = n − min U with U = n − X ~ Binomial(n, 1 − p), and
  // E[min U] = Σ_j P(min > j) = Σ_j (1 − G(j))^m, G the CDF of U.
  const double min_unused = SumOverCdf(
      n, 1 - p, [&](double cdf) { return std::pow(1 - cdf, md); },
      [&](double, double t) { return t < kNegligible; });
  return static_cast<double>(n) - min_unused;
}

double ExpertParallelActive(double rows, uint64_t experts, uint64_t top_k, uint64_t experts_total,
                            uint64_t busiest_of) {
  if (!(rows > 0) || experts == 0 || top_k == 0 || experts_total == 0) return 0;
  const double tokens = rows * static_cast<double>(experts_total) /
                        (static_cast<double>(experts) * static_cast<double>(top_k));
  const double used = 1 - std::pow(1 - static_cast<double>(top_k) /
                                           static_cast<double>(experts_total), tokens);
  if (busiest_of <= 1) return static_cast<double>(experts) * used;
  return ExpectedMaxBinomial(experts, used, busiest_of);
}

}  // namespace opscope::cost
