// Serving dynamics (docs/llm.md "Serving dynamics"): the TTFT, TPOT, request latency and
// throughput of C requests in flight at steady state (a closed loop: each finished request is
// replaced at once), each of I prompt and O output tokens, from the step times of the engine's
// workers. Functions of step times only — whatever times steps (the full analysis with an
// engine profile, a compiled plan, a planner's model) calls them for any number of points.
//
//   aggregated (continuous batching, chunked prefill): one worker runs every request; a step
//     carries every decoding sequence's next token and at most one budget of prompt tokens.
//     TPOT includes the other requests' prompt chunks interleaved with decode; TTFT the running
//     step, the queue for the prefill budget, and the prompt's own chunks beside the others'
//     decode.
//   disaggregated (P prefill workers, D decode workers): prompts run on prefill workers
//     (prefill-only steps), their KV moves to a decode worker over the link, decode steps
//     carry no prompt tokens.
//   speculative decoding: a decode step yields `tokens_per_step` tokens on average
//     (ExpectedTokensPerStep); the caller's decode step is the verify step plus the drafts.
//
// Steps are counted first (Compose: no times), then timed: every formula is in docs/llm.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace opscope::llm {

// The requests of the closed loop.
struct ServingLoad {
  int64_t concurrency = 1;     // C requests in flight
  int64_t prompt = 1;          // I prompt tokens each
  int64_t gen_len = 1;         // O output tokens each (the first comes from the prefill)
  double tokens_per_step = 1;  // tokens a decode step yields per sequence (speculative: > 1)
  // The engine forms step n+1 while step n runs (overlap / async scheduling): in aggregated
  // serving, where the others' next decode step is always formed, an arriving request waits
  // for the running step and that one (a = 3/2 instead of 1/2).
  bool overlapped = false;
  // Prompt steps carry no decodes: waiting prompts run before the next decode step (SGLang's
  // scheduler; EngineDefaults::prefill_first). Read by FixedLengths only.
  bool prefill_first = false;
};

// The token budget of a step: a chunked-prefill engine's max batched tokens (decode tokens
// count in it, prompt tokens fill the rest); without chunked prefill a prompt runs whole, and
// prompts share a step up to kUnchunkedStepTokens.
inline constexpr int64_t kUnchunkedStepTokens = 8192;  // TensorRT-LLM max_num_tokens default
int64_t StepTokenBudget(int64_t chunk_tokens, int64_t prompt);

// The expected tokens a speculative step yields per sequence with N draft tokens each accepted
// with probability `acceptance` (until the first rejection), plus the verified bonus token:
//   Σ_{i=0}^{N} acceptance^i   (1 with no drafts or acceptance 0; N + 1 at acceptance 1).
double ExpectedTokensPerStep(int64_t drafts, double acceptance);

// ---- Aggregated serving ---------------------------------------------------------------------

// How one request's life splits into steps at steady state, counted in steps (no times).
struct Composition {
  double decode_steps = 0;     // Z = (O − 1) / tokens_per_step
  int64_t prefill_budget = 1;  // K_p = max(1, K − (C − 1)): prompt tokens one step takes
  int64_t prefill_chunks = 1;  // n_p = ceil(I / K_p): steps of the prompt's own chunks
  double prefill_demand = 0;   // S = I / K_p: steps of prefill budget one prompt uses
  double arrival_steps = 0;    // a = 1/2 when other requests run (the running step), 3/2 when
                               // the engine has formed the next step too (overlapped), else 0
  double queue_steps = 0;      // W_q: waiting for the prefill budget (mean-value analysis)
  double lifetime_steps = 0;   // L = a + W_q + n_p + Z
  double decode_seqs = 1;      // D = 1 + (C − 1)·Z/L: sequences of a decoding request's step
  double others_decoding = 0;  // D_p = (C − 1)·Z/L: decoding beside a prompt's own chunks
  double chunk_share = 0;      // q: share of a decoding request's steps carrying a prompt chunk
  int64_t chunk_tokens = 0;    // k: prompt tokens such a step carries
  int64_t chunk_offset = 0;    // their mean position in the prompt, K_p·(n_p − 1)/2
};
// Errors are the caller's to prevent: every field of `load` positive, chunk_tokens >= 0.
Composition Compose(const ServingLoad& load, int64_t chunk_tokens);

// The mean wait for the server of N = `customers` requests that each need `demand` of one
// server and then spend `think` elsewhere, in the unit of `demand` and `think` (exact
// mean-value analysis of a closed loop with one queue; Reiser and Lavenberg 1980):
//   R(n) = demand · (1 + Q(n − 1)),  X(n) = n / (R(n) + think),  Q(n) = X(n) · R(n);
//   the wait is R(N) − demand (0 for one customer).
double ClosedLoopWait(int64_t customers, double demand, double think);

// The step times a worker's engine takes, in seconds, from the caller's timing source. Each is
// asked at whole sequence counts; the dynamics interpolate between them.
struct StepClock {
  // A decode step of `seqs` sequences at the request's mean context I + (O − 1)/2 (speculative:
  // the verify step and its drafts).
  std::function<double(int64_t seqs)> decode;
  // A step of `seqs` decoding sequences (0: none) and `chunk` prompt tokens of one request at
  // positions offset..offset + chunk − 1.
  std::function<double(int64_t seqs, int64_t chunk, int64_t offset)> mixed;
};

struct DynamicsFigures {
  double ttft_s = 0;          // arrival to the first token
  double tpot_s = 0;          // (e2e − TTFT) / (O − 1); the mean decode step if O = 1
  double e2e_s = 0;           // TTFT + (O − 1) · TPOT
  double tokens_per_s = 0;    // C · O / e2e (Little's law)
  double step_s = 0;          // the mean step a decoding request sees
  double queue_s = 0;         // TTFT spent waiting (the running step and the queue)
  double prefill_s = 0;       // TTFT spent on the prompt's own chunks
  double kv_transfer_s = 0;   // disaggregated: TTFT spent moving the KV
  double request_s = 0;       // TTFT on the request path outside the steps (the caller's)
  double interference_s = 0;  // TPOT added by other requests' prompt chunks
  double decode_seqs = 1;     // sequences in a decode step (per decode worker)
  double group_size = 0;      // fixed lengths: requests whose prompts arrive together (mean)
};

// Aggregated serving (see the top):
//   t_d = decode(D)  (linear between whole counts),  t_m = mixed(D, k, offset)
//   step = (1 − q)·t_d + q·t_m;   TPOT = step / tokens_per_step
//   TTFT = (a + W_q)·step + Σ_j mixed(D_p, chunk_j, j·K_p)
// A prompt of more than 8 chunks times its first and last full chunks and interpolates the
// rest linearly in the offset.
DynamicsFigures Aggregated(const ServingLoad& load, const Composition& c, const StepClock& clock);

// Aggregated serving of fixed lengths (--lengths fixed): every request has exactly I prompt
// and O output tokens, as a benchmark's fixed-length random dataset gives (vLLM's `vllm bench
// serve` random dataset by default, `--random-range-ratio 1` in SGLang's). Such a closed loop
// does not spread out: the C requests start together, the prompts one step's budget takes
// finish together, decode in lockstep, finish together, and their replacements arrive
// together — the loop runs in groups, each group's prompts sharing prefill steps, which the
// steady state above (requests spread over the loop) does not describe. Simulated step by
// step on the same steps: a step carries every decoding sequence and, in arrival order, the
// waiting prompts' tokens up to the budget K (decodes count in it; without chunked prefill,
// whole prompts only); under prefill_first a step with waiting prompts carries only them, the
// decodes waiting (so every wave's prompts run before any of its decodes and the waves stay
// whole); a prompt finishing in a step gives its first token then, decodes
// Z = (O − 1) / tokens_per_step steps, and is replaced at once (under overlap scheduling the
// replacement misses the step already formed). Steps
// with several prompts are timed as one chunk of their tokens (Compose's approximation). The
// figures are the means over the requests of a window after the first wave, the loop's
// repeating pattern: TTFT = first token − arrival, TPOT = (e2e − TTFT) / (O − 1).
DynamicsFigures FixedLengths(const ServingLoad& load, int64_t chunk_tokens, const StepClock& clock);

// ---- Disaggregated serving ------------------------------------------------------------------

// The requests in flight one of `workers` workers holds: ceil(concurrency / workers) (all of
// them with one worker or none).
int64_t WorkerShare(int64_t concurrency, int64_t workers);

// Disaggregated serving on `prefill_workers` and `decode_workers` (each worker its own clock;
// the prefill clock's `mixed` is asked with no decoding sequences): each prefill worker serves
// ceil(C / P) requests (mean-value analysis on time, the KV transfer and decode as their think
// time), each decode worker holds the decoding requests of C / D:
//   TTFT = a·t_c + W_q + Σ_j mixed(0, chunk_j, j·K) + kv_transfer_s
//   D_d  = 1 + (C / D − 1)·f,  f = Z·t_d / (Z·t_d + TTFT) at t_d = decode(ceil(C / D))
//   TPOT = decode(D_d) / tokens_per_step   (no prompt chunks in decode steps)
DynamicsFigures Disaggregated(const ServingLoad& load, int64_t chunk_tokens,
                              int64_t prefill_workers, int64_t decode_workers,
                              double kv_transfer_s, const StepClock& prefill,
                              const StepClock& decode);

}  // namespace opscope::llm
