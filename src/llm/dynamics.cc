// Serving dynamics: steps counted, then timed (see dynamics.h; formulas in docs/llm.md).
#include "llm/dynamics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

namespace opscope::llm {
namespace {

// f at a fractional x ≥ 0, linear between f(floor x) and f(ceil x).
template <typename F>
double Lerp(const F& f, double x) {
  const double lo = std::floor(x);
  const double at_lo = f(static_cast<int64_t>(lo));
  if (x == lo) return at_lo;
  const double at_hi = f(static_cast<int64_t>(lo) + 1);
  return at_lo + (x - lo) * (at_hi - at_lo);
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Σ over a prompt's chunks (budget K: n_p − 1 full chunks and the rest) of chunk(tokens,
// offset). Past 8 chunks the full chunks are timed first and last and summed as a line in the
// offset (a chunk's attention grows linearly with the keys before it).
template <typename F>
double SumChunks(int64_t prompt, int64_t budget, const F& chunk) {
  const int64_t chunks = CeilDiv(prompt, budget);
  const int64_t full = prompt / budget, rest = prompt - full * budget;
  double total = 0;
  if (full <= 8) {
    for (int64_t j = 0; j < full; ++j) total += chunk(budget, j * budget);
  } else {
    const double first = chunk(budget, 0), last = chunk(budget, (full - 1) * budget);
    total = static_cast<double>(full) * (first + last) / 2;
  }
  if (rest > 0) total += chunk(rest, (chunks - 1) * budget);
  return total;
}

}  // namespace

int64_t StepTokenBudget(int64_t chunk_tokens, int64_t prompt) {
  return chunk_tokens > 0 ? chunk_tokens : std::max(prompt, kUnchunkedStepTokens);
}

double ExpectedTokensPerStep(int64_t drafts, double acceptance) {
  double tokens = 1, p = 1;
  for (int64_t i = 0; i < drafts; ++i) {
    p *= acceptance;
    tokens += p;
  }
  return tokens;
}

double ClosedLoopWait(int64_t customers, double demand, double think) {
  double queue = 0, residence = demand;
  for (int64_t n = 1; n <= customers; ++n) {
    residence = demand * (1 + queue);
    const double throughput = static_cast<double>(n) / (residence + think);
    queue = throughput * residence;
  }
  return std::max(0.0, residence - demand);
}

Composition Compose(const ServingLoad& load, int64_t chunk_tokens) {
  const int64_t C = load.concurrency, I = load.prompt;
  Composition c;
  const int64_t budget = StepTokenBudget(chunk_tokens, I);
  // Decoding sequences take their tokens of the budget first (vLLM counts them in
  // max_num_batched_tokens); at most C − 1 others decode beside a prompt.
  c.prefill_budget = std::max<int64_t>(1, budget - (C - 1));
  c.prefill_chunks = CeilDiv(I, c.prefill_budget);
  c.prefill_demand = static_cast<double>(I) / static_cast<double>(c.prefill_budget);
  c.decode_steps = static_cast<double>(load.gen_len - 1) / load.tokens_per_step;
  // Arriving at a uniform point of the running step: half of it left; under overlap
  // scheduling the next step was formed without the request, so a whole one more.
  c.arrival_steps = C > 1 ? (load.overlapped ? 1.5 : 0.5) : 0.0;
  const double think = c.arrival_steps + (static_cast<double>(c.prefill_chunks) - c.prefill_demand) +
                       c.decode_steps;
  c.queue_steps = ClosedLoopWait(C, c.prefill_demand, think);
  c.lifetime_steps = c.arrival_steps + c.queue_steps + static_cast<double>(c.prefill_chunks) +
                     c.decode_steps;
  const double others = static_cast<double>(C - 1);
  c.others_decoding = others * c.decode_steps / c.lifetime_steps;
  c.decode_seqs = 1 + c.others_decoding;
  // Other requests' prompt tokens per step, in chunks of min(I, K_p); past one chunk a step
  // (several short prompts at once) carries them all, up to the budget.
  const double prompt_tokens = others * static_cast<double>(I) / c.lifetime_steps;
  const int64_t chunk = std::min(I, c.prefill_budget);
  c.chunk_share = std::min(1.0, prompt_tokens / static_cast<double>(chunk));
  c.chunk_tokens = c.chunk_share < 1
                       ? chunk
                       : std::min(c.prefill_budget, static_cast<int64_t>(std::ceil(prompt_tokens)));
  c.chunk_offset = c.prefill_budget * (c.prefill_chunks - 1) / 2;
  return c;
}

DynamicsFigures Aggregated(const ServingLoad& load, const Composition& c, const StepClock& clock) {
  DynamicsFigures f;
  f.decode_seqs = c.decode_seqs;
  const double decode_s = Lerp(clock.decode, c.decode_seqs);
  double step_s = decode_s;
  if (c.chunk_share > 0) {
    const double mixed_s = Lerp(
        [&](int64_t seqs) { return clock.mixed(seqs, c.chunk_tokens, c.chunk_offset); },
        c.decode_seqs);
    step_s = (1 - c.chunk_share) * decode_s + c.chunk_share * mixed_s;
  }
  f.step_s = step_s;
  f.interference_s = (step_s - decode_s) / load.tokens_per_step;
  f.tpot_s = step_s / load.tokens_per_step;
  f.queue_s = (c.arrival_steps + c.queue_steps) * step_s;
  f.prefill_s = SumChunks(load.prompt, c.prefill_budget, [&](int64_t tokens, int64_t offset) {
    return Lerp([&](int64_t seqs) { return clock.mixed(seqs, tokens, offset); },
                c.others_decoding);
  });
  f.ttft_s = f.queue_s + f.prefill_s;
  f.e2e_s = f.ttft_s + static_cast<double>(load.gen_len - 1) * f.tpot_s;
  f.tokens_per_s = static_cast<double>(load.concurrency * load.gen_len) / f.e2e_s;
  return f;
}

namespace {

// One request of a fixed-length closed loop, in its slot.
struct Flight {
  int64_t id = 0;             // arrival order
  double arrival_s = 0;
  int64_t prompt_left = 0;    // prompt tokens not yet in a step
  int64_t offset = 0;         // prompt tokens already in steps
  double decode_left = 0;     // decode steps left after the first token
  bool decoding = false;
  int64_t eligible_step = 0;  // the first step that may carry its prompt
  double first_token_s = 0;
  double prefill_s = 0;       // the times of the steps that carried its prompt tokens
};

}  // namespace

DynamicsFigures FixedLengths(const ServingLoad& load, int64_t chunk_tokens, const StepClock& clock) {
  const int64_t C = load.concurrency, I = load.prompt;
  const int64_t budget = StepTokenBudget(chunk_tokens, I);
  const double Z = static_cast<double>(load.gen_len - 1) / load.tokens_per_step;
  // A replacement arrives as its predecessor's step ends; under overlap scheduling the next
  // step was formed without it.
  const int64_t missed = load.overlapped && C > 1 ? 1 : 0;
  // The window measured: the requests of the three waves after the first (ids C .. 4C − 1, at
  // least eight).
  const int64_t window_begin = C, window_end = C + std::max<int64_t>(3 * C, 8);
  std::vector<Flight> live(static_cast<size_t>(C));
  int64_t next_id = 0, step = 0;
  double t = 0;
  const auto arrive = [&](Flight& f) {
    f = Flight{};
    f.id = next_id++;
    f.arrival_s = t;
    f.prompt_left = I;
    f.decode_left = Z;
    f.eligible_step = f.id < C ? 0 : step + missed;
  };
  for (Flight& f : live) arrive(f);
  double ttft = 0, e2e = 0, tpot = 0, prefill = 0;
  int64_t measured = 0;
  std::map<double, int64_t> arrivals;  // the window's arrival instants and their counts
  double seqs_sum = 0, seqs_sq = 0;    // Σ D and Σ D² over decode-carrying steps, measured
  const auto finish = [&](Flight& f) {
    if (f.id >= window_begin && f.id < window_end) {
      const double first = f.first_token_s - f.arrival_s, whole = t - f.arrival_s;
      ttft += first;
      e2e += whole;
      prefill += f.prefill_s;
      if (load.gen_len > 1) tpot += (whole - first) / static_cast<double>(load.gen_len - 1);
      ++arrivals[f.arrival_s];
      ++measured;
    }
    arrive(f);
  };
  while (measured < window_end - window_begin) {
    int64_t decoding = 0;
    bool pending = false;
    for (const Flight& f : live) {
      decoding += f.decoding ? 1 : 0;
      pending = pending || f.prompt_left > 0;
    }
    const bool window_open = next_id > window_begin;
    if (!pending) {
      // Only decode steps until the next request finishes.
      double least = std::numeric_limits<double>::infinity();
      for (const Flight& f : live) least = std::min(least, f.decode_left);
      const double k = std::max(1.0, std::ceil(least - 1e-9));
      const double step_s = clock.decode(decoding);
      t += k * step_s;
      step += static_cast<int64_t>(k);
      if (window_open) {
        seqs_sum += k * static_cast<double>(decoding);
        seqs_sq += k * static_cast<double>(decoding * decoding);
      }
      for (Flight& f : live) {
        f.decode_left -= k;
        if (f.decode_left <= 1e-9) finish(f);
      }
      continue;
    }
    // The waiting prompts this step may carry, in arrival order; an idle engine forms its step
    // with whatever has arrived.
    std::vector<Flight*> waiting;
    for (Flight& f : live) {
      if (f.prompt_left > 0 && (f.eligible_step <= step || decoding == 0)) waiting.push_back(&f);
    }
    std::sort(waiting.begin(), waiting.end(),
              [](const Flight* a, const Flight* b) { return a->id < b->id; });
    // Under prefill_first a step with prompts holds no decodes.
    const bool prompts_only = load.prefill_first && !waiting.empty();
    const int64_t carried_decodes = prompts_only ? 0 : decoding;
    const int64_t room = std::max<int64_t>(1, budget - carried_decodes);
    int64_t tokens = 0, offset = 0;
    std::vector<std::pair<Flight*, int64_t>> carried;
    for (Flight* f : waiting) {
      int64_t n = std::min(f->prompt_left, room - tokens);
      // Without chunked prefill a prompt runs whole: it waits for a step with room for all of
      // it, unless it is the step's first.
      if (chunk_tokens == 0 && n < f->prompt_left && !carried.empty()) break;
      if (chunk_tokens == 0) n = f->prompt_left;
      if (n <= 0) break;
      if (carried.empty()) offset = f->offset;
      carried.emplace_back(f, n);
      tokens += n;
    }
    if (carried.size() > 1) offset = 0;  // several prompts: one chunk of their tokens
    const double step_s =
        tokens > 0 ? clock.mixed(carried_decodes, tokens, offset) : clock.decode(decoding);
    t += step_s;
    ++step;
    if (window_open && carried_decodes > 0) {
      seqs_sum += static_cast<double>(carried_decodes);
      seqs_sq += static_cast<double>(carried_decodes * carried_decodes);
    }
    for (Flight& f : live) {
      if (!f.decoding || prompts_only) continue;
      f.decode_left -= 1;
      if (f.decode_left <= 1e-9) finish(f);
    }
    for (const auto& [f, n] : carried) {
      f->prompt_left -= n;
      f->offset += n;
      f->prefill_s += step_s;
      if (f->prompt_left > 0) continue;
      f->first_token_s = t;
      if (f->decode_left <= 1e-9) {
        finish(*f);
      } else {
        f->decoding = true;
      }
    }
  }
  DynamicsFigures out;
  const double n = static_cast<double>(measured);
  out.ttft_s = ttft / n;
  out.e2e_s = e2e / n;
  out.prefill_s = prefill / n;
  out.queue_s = out.ttft_s - out.prefill_s;  // waiting: the running steps and the others' prompts
  out.decode_seqs = seqs_sum > 0 ? seqs_sq / seqs_sum : 1.0;
  const double decode_s = Lerp(clock.decode, out.decode_seqs);
  out.tpot_s = load.gen_len > 1 ? tpot / n : decode_s / load.tokens_per_step;
  out.step_s = out.tpot_s * load.tokens_per_step;
  out.interference_s = std::max(0.0, out.tpot_s - decode_s / load.tokens_per_step);
  out.tokens_per_s = static_cast<double>(C * load.gen_len) / out.e2e_s;
  double groups = 0;
  for (const auto& [at, count] : arrivals) groups += static_cast<double>(count * count);
  out.group_size = groups / n;
  return out;
}

DynamicsFigures Disaggregated(const ServingLoad& load, int64_t chunk_tokens,
                              int64_t prefill_workers, int64_t decode_workers,
                              double kv_transfer_s, const StepClock& prefill,
                              const StepClock& decode) {
  DynamicsFigures f;
  const int64_t I = load.prompt;
  const int64_t budget = StepTokenBudget(chunk_tokens, I);
  const int64_t chunks = CeilDiv(I, budget);
  f.prefill_s = SumChunks(I, budget, [&](int64_t tokens, int64_t offset) {
    return prefill.mixed(0, tokens, offset);
  });
  f.kv_transfer_s = kv_transfer_s;
  const double decode_steps = static_cast<double>(load.gen_len - 1) / load.tokens_per_step;
  const int64_t per_decode_worker = WorkerShare(load.concurrency, decode_workers);
  const double busy_decode_s = decode.decode(per_decode_worker);
  // Each prefill worker serves its share of the loop; the rest of a request's life (the
  // transfer and decode) is its think time.
  const int64_t customers = WorkerShare(load.concurrency, prefill_workers);
  const double think_s = kv_transfer_s + decode_steps * busy_decode_s;
  // Half the running prompt step. Overlap scheduling adds no step here: a prefill worker forms
  // its next step ahead only when requests wait (the closed loop's queue below counts them);
  // an aggregated worker always has the others' next decode step formed (Compose).
  const double arrival_s = customers > 1 ? 0.5 * f.prefill_s / static_cast<double>(chunks) : 0.0;
  f.queue_s = arrival_s + ClosedLoopWait(customers, f.prefill_s, think_s);
  f.ttft_s = f.queue_s + f.prefill_s + kv_transfer_s;
  // A decode worker holds its requests for their decode share of the request's life.
  const double share = static_cast<double>(load.concurrency) / static_cast<double>(decode_workers);
  const double decode_life_s = decode_steps * busy_decode_s;
  const double in_decode = decode_life_s + f.ttft_s > 0 ? decode_life_s / (decode_life_s + f.ttft_s) : 1.0;
  f.decode_seqs = std::max(1.0, 1 + (share - 1) * in_decode);
  f.step_s = Lerp(decode.decode, f.decode_seqs);
  f.tpot_s = f.step_s / load.tokens_per_step;
  f.e2e_s = f.ttft_s + static_cast<double>(load.gen_len - 1) * f.tpot_s;
  f.tokens_per_s = static_cast<double>(load.concurrency * load.gen_len) / f.e2e_s;
  return f;
}

int64_t WorkerShare(int64_t concurrency, int64_t workers) {
  return CeilDiv(concurrency, std::max<int64_t>(1, workers));
}

}  // namespace opscope::llm
