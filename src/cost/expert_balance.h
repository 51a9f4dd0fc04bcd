// The busiest device of an expert-parallel MoE layer under uniform routing.
//
// With the router's E_t experts spread over `ep` devices (E_t/ep each) and T tokens routed
// top_k each, an expert is used by at least one token with probability
//   p = 1 − (1 − top_k/E_t)^T
// (exact under uniform top-k routing), so a device's distinct experts average E·p. The devices
// meet after the layer (its all-to-all or all-reduce), so the layer takes as long as the device
// that reads the most experts: E[max over ep devices], not the mean. Counting each device's
// experts as Binomial(E, p) and the devices as independent (the exact counts are weakly
// negatively correlated, a top_k pick excluding repeats, so this slightly overstates the
// spread):
//   E[max of m iid X] = Σ_{j=0}^{E−1} (1 − F(j)^m),   F the Binomial(E, p) CDF.
// At decode batches the gap is large — DeepSeek-V3 at --ep 8 (32 of 256 experts a device,
// top-8), 4 tokens: 3.8 experts per device on average, 6.56 on the busiest (a simulation of the
// exact picks gives 6.58; 1 token: 2.54 against 2.56) — and it closes as T grows (every device
// reads all of its experts).
#pragma once

#include <cstdint>

namespace opscope::cost {

// E[max of m independent Binomial(n, p) draws]; p in [0, 1] (0 at or below 0, n at or above
// 1), m ≥ 1 (0 counts as 1). The sum stops where its terms fall below 1e−13. O(n) at most;
// a decode batch's few experts per device stop it after a few dozen terms.
double ExpectedMaxBinomial(uint64_t n, double p, uint64_t m);

// The distinct experts an expert-parallel device reads: of its `experts` (of the router's
// `experts_total`), for the `rows` (token, expert) rows routed to them — T = rows·E_t/(E·top_k)
// tokens of its group, each expert used with p = 1 − (1 − top_k/E_t)^T. The mean device's
// E·p, or with busiest_of > 1 the busiest of that many devices' (ExpectedMaxBinomial). The cost
// rule's weight bytes and the predictor's grouped-GEMM shape both take it.
double ExpertParallelActive(double rows, uint64_t experts, uint64_t top_k, uint64_t experts_total,
                            uint64_t busiest_of);

}  // namespace opscope::cost
