// Robust fits of kernel and collective parameters (see fit.h).
#include "predict/fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace opscope::predict {

namespace {

constexpr double kPriorWeight = 0.05;

double Logistic(double u) { return 1.0 / (1.0 + std::exp(-u)); }
double Logit(double p) { return std::log(p / (1.0 - p)); }

double SoftL1(double r, double c) {
  const double z = r / c;
  return 2.0 * c * c * (std::sqrt(1.0 + z * z) - 1.0);
}

// Solves A x = b (n ≤ 16) by Gaussian elimination with partial pivoting; false if singular.
bool SolveLinear(std::vector<double> a, std::vector<double> b, size_t n, std::vector<double>& x) {
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r) {
      if (std::abs(a[r * n + col]) > std::abs(a[pivot * n + col])) pivot = r;
    }
    if (std::abs(a[pivot * n + col]) < 1e-300) return false;
    if (pivot != col) {
      for (size_t c = 0; c < n; ++c) std::swap(a[col * n + c], a[pivot * n + c]);
      std::swap(b[col], b[pivot]);
    }
    for (size_t r = col + 1; r < n; ++r) {
      const double f = a[r * n + col] / a[col * n + col];
      for (size_t c = col; c < n; ++c) a[r * n + c] -= f * a[col * n + c];
      b[r] -= f * b[col];
    }
  }
  x.assign(n, 0.0);
  for (size_t i = n; i-- > 0;) {
    double s = b[i];
    for (size_t c = i + 1; c < n; ++c) s -= a[i * n + c] * x[c];
    x[i] = s / a[i * n + i];
  }
  return true;
}

double TotalCost(const LeastSquares& p, std::span<const double> theta,
                 const std::vector<double>& r) {
  double cost = 0;
  for (double v : r) cost += std::isfinite(v) ? SoftL1(v, p.loss_scale) : 1e30;
  for (size_t j = 0; j < p.params; ++j) {
    const double d = p.prior_weight * (theta[j] - p.prior[j]);
    cost += d * d;
  }
  return cost;
}

}  // namespace

namespace {

// The IRLS-weighted normal equations of one Levenberg–Marquardt iteration: soft-L1 weights
// 1/√(1 + (r/c)²), the Jacobian by forward differences, the prior's terms on the diagonal.
void NormalEquations(const LeastSquares& p, const std::vector<double>& theta,
                     const std::vector<double>& r, std::vector<double>& a,
                     std::vector<double>& g) {
  const size_t n = p.params;
  std::vector<double> jac(r.size() * n), trial, r_step;
  for (size_t j = 0; j < n; ++j) {
    trial = theta;
    const double h = 1e-6 * std::max(1.0, std::abs(theta[j]));
    trial[j] += h;
    p.residuals(trial, r_step);
    for (size_t i = 0; i < r.size(); ++i) jac[i * n + j] = (r_step[i] - r[i]) / h;
  }
  a.assign(n * n, 0.0);
  g.assign(n, 0.0);
  for (size_t i = 0; i < r.size(); ++i) {
    const double z = r[i] / p.loss_scale;
    const double w = 1.0 / std::sqrt(1.0 + z * z);
    for (size_t j = 0; j < n; ++j) {
      const double wj = w * jac[i * n + j];
      g[j] += wj * r[i];
      for (size_t k = 0; k <= j; ++k) a[j * n + k] += wj * jac[i * n + k];
    }
  }
  const double pw2 = p.prior_weight * p.prior_weight;
  for (size_t j = 0; j < n; ++j) {
    for (size_t k = 0; k < j; ++k) a[k * n + j] = a[j * n + k];
    a[j * n + j] += pw2;
    g[j] += pw2 * (theta[j] - p.prior[j]);
  }
}

// Raises the damping until a step lowers the cost; false when none does.
bool DampedStep(const LeastSquares& p, const std::vector<double>& theta,
                const std::vector<double>& a, const std::vector<double>& g, double cost,
                double& lambda, std::vector<double>& trial, std::vector<double>& r_trial,
                double& trial_cost) {
  const size_t n = p.params;
  std::vector<double> delta, rhs(n);
  for (size_t j = 0; j < n; ++j) rhs[j] = -g[j];
  trial.resize(n);
  for (; lambda < 1e10; lambda *= 4) {
    std::vector<double> damped = a;
    for (size_t j = 0; j < n; ++j) damped[j * n + j] += lambda * (a[j * n + j] + 1e-12);
    if (!SolveLinear(damped, rhs, n, delta)) continue;
    for (size_t j = 0; j < n; ++j) trial[j] = std::clamp(theta[j] + delta[j], -40.0, 40.0);
    p.residuals(trial, r_trial);
    trial_cost = TotalCost(p, trial, r_trial);
    if (trial_cost < cost) return true;
  }
  return false;
}

}  // namespace

std::vector<double> SolveRobust(const LeastSquares& p, std::vector<double> theta,
                                int max_iterations) {
  std::vector<double> r, a, g, trial, r_trial;
  p.residuals(theta, r);
  double cost = TotalCost(p, theta, r);
  double lambda = 1e-3;
  for (int iter = 0; iter < max_iterations; ++iter) {
    NormalEquations(p, theta, r, a, g);
    double trial_cost = cost;
    if (!DampedStep(p, theta, a, g, cost, lambda, trial, r_trial, trial_cost)) break;
    const double gain = cost - trial_cost;
    theta = trial;
    r = r_trial;
    cost = trial_cost;
    lambda = std::max(lambda / 3, 1e-9);
    if (gain < 1e-10 * (1 + cost)) break;
  }
  return theta;
}

FitStats ErrorStats(std::span<const double> predicted, std::span<const double> measured,
                    uint32_t folds) {
  std::vector<double> e;
  for (size_t i = 0; i < predicted.size(); ++i) {
    e.push_back(std::abs(predicted[i] / measured[i] - 1.0));
  }
  FitStats s;
  s.samples = static_cast<uint32_t>(e.size());
  s.folds = folds;
  if (e.empty()) return s;
  std::sort(e.begin(), e.end());
  // Nearest-rank percentiles.
  const auto rank = [&](double q) {
    const auto k = static_cast<size_t>(std::ceil(q * static_cast<double>(e.size())));
    return e[std::min(e.size() - 1, k == 0 ? 0 : k - 1)];
  };
  s.median_abs_error = rank(0.5);
  s.p90_abs_error = rank(0.9);
  return s;
}

double SampleTime(const Sample& s, const KernelParams& p, const DeviceRates& rates) {
  double t = 0;
  for (const KernelInput& in : s.parts) t += KernelTime(in, p, rates);
  return t;
}

double SampleTime(const Sample& s, std::span<const CollectiveParams> algorithms,
                  const DeviceRates& rates) {
  double t = 0;
  for (const KernelInput& in : s.parts) {
    double best = std::numeric_limits<double>::infinity();
    for (const CollectiveParams& c : algorithms) {
      const double x = CollectiveTime(in, c, rates);
      if (x >= 0) best = std::min(best, x);
    }
    t += best;
  }
  return t;
}

size_t MinSamplesToCrossValidate(const FitOptions& options) {
  return 10 * size_t{std::max(options.folds, 1u)};
}

uint32_t FoldsFor(size_t samples, const FitOptions& options) {
  return samples >= MinSamplesToCrossValidate(options) ? options.folds : 0;
}

// ---- Kernel classes -------------------------------------------------------------------------

namespace {

// θ = (log overhead_s, logit bandwidth_eff, logit compute_eff, logit overlap, logit wave_exp,
//      log wave_latency_s, logit k_overhead / kMaxKOverhead). The depth term starts at 16
// elements of K (a few per cent at K = 512, under 1 % from K = 2048) and only samples whose K
// varies, down to a few k-steps, move it; classes without a K (attention, memory) leave it at
// the start, where it means nothing. It is bounded by 16 k-steps of 128: a deep operand
// pipeline's fill plus the output tile's store; beyond that the fit would be using the term
// to tell shapes apart for some other reason.
constexpr size_t kKernelParams = 7;
constexpr double kMaxKOverhead = 2048;
constexpr std::array<double, kKernelParams> kKernelStart = {
    -12.206, 0.8473, 0.4055, 0.0, 0.0, -15.425, -4.8442};  // 5 µs, 0.70, 0.60, 0.5, 0.5, 0.2 µs, 16

KernelParams FromTheta(std::span<const double> t, KernelClass cls, const std::string& variant,
                       int64_t tile_m, int64_t tile_n) {
  KernelParams k;
  k.cls = cls;
  k.variant = variant;
  k.overhead_s = std::exp(t[0]);
  k.bandwidth_efficiency = Logistic(t[1]);
  k.compute_efficiency = Logistic(t[2]);
  k.overlap = Logistic(t[3]);
  k.wave_exponent = Logistic(t[4]);
  k.wave_latency_s = std::exp(t[5]);
  // Only GEMM classes read a depth (KernelShape::k); elsewhere the parameter is left out.
  const bool gemm = cls == KernelClass::kGemm || cls == KernelClass::kGroupedGemm;
  k.k_overhead = gemm ? kMaxKOverhead * Logistic(t[6]) : 0;
  k.tile_m = tile_m;
  k.tile_n = tile_n;
  return k;
}

// The samples' shape factors under one tile choice, flattened part by part.
struct Prepared {
  std::vector<double> bytes, flops, peak, tile_eff, log_wave, waves, depth_k;
  std::vector<uint32_t> first_part;  // per sample, index of its first part; plus the end
  std::vector<double> log_measured;
};

Prepared Prepare(std::span<const Sample> samples, int64_t tile_m, int64_t tile_n,
                 std::span<const DeviceRates> rates_of) {
  Prepared p;
  for (size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    const DeviceRates& rates = rates_of[i];
    p.first_part.push_back(static_cast<uint32_t>(p.bytes.size()));
    p.log_measured.push_back(std::log(s.measured_s));
    for (const KernelInput& in : s.parts) {
      const TileWave tw = TileAndWave(in, tile_m, tile_n, rates.compute_units);
      const format::MmaClass cls =
          in.mma_class != format::MmaClass::kNone ? in.mma_class : format::MmaClass::kFp32;
      p.bytes.push_back(in.bytes / rates.dram_bytes_per_s);
      p.flops.push_back(in.flops);
      p.peak.push_back(rates.peak_flops_per_s[static_cast<int>(cls)]);
      p.tile_eff.push_back(tw.tile_eff);
      p.log_wave.push_back(std::log(std::max(tw.wave_eff, 1e-9)));
      p.waves.push_back(tw.waves);
      p.depth_k.push_back(in.shape.k);
    }
  }
  p.first_part.push_back(static_cast<uint32_t>(p.bytes.size()));
  return p;
}

// log(predicted) of sample i under θ (the kernel formula of kernel_model.cc, inlined on the
// prepared factors).
double LogPredicted(const Prepared& p, size_t i, std::span<const double> t) {
  const double t0 = std::exp(t[0]), eta_m = Logistic(t[1]), eta_c = Logistic(t[2]);
  const double overlap = Logistic(t[3]), gamma = Logistic(t[4]), wave_s = std::exp(t[5]);
  const double k_overhead = kMaxKOverhead * Logistic(t[6]);
  double total = 0;
  for (uint32_t k = p.first_part[i]; k < p.first_part[i + 1]; ++k) {
    const double depth = DepthEfficiency(p.depth_k[k], k_overhead);
    const double memory_s = p.bytes[k] / eta_m;
    const double compute_s =
        p.flops[k] > 0 && p.peak[k] > 0
            ? p.flops[k] /
                  (eta_c * depth * p.tile_eff[k] * std::exp(gamma * p.log_wave[k]) * p.peak[k])
            : 0.0;
    total += t0 + std::max({memory_s, compute_s, p.waves[k] * wave_s}) +
             (1 - overlap) * std::min(memory_s, compute_s);
  }
  return std::log(total);
}

std::vector<double> FitTheta(const Prepared& p, std::span<const size_t> rows,
                             std::vector<double> start, const FitOptions& options,
                             double* cost) {
  LeastSquares ls;
  ls.params = kKernelParams;
  ls.prior.assign(kKernelStart.begin(), kKernelStart.end());
  ls.prior_weight = kPriorWeight;
  ls.loss_scale = options.loss_scale;
  ls.residuals = [&](std::span<const double> t, std::vector<double>& r) {
    r.resize(rows.size());
    for (size_t j = 0; j < rows.size(); ++j) {
      r[j] = LogPredicted(p, rows[j], t) - p.log_measured[rows[j]];
    }
  };
  std::vector<double> theta = SolveRobust(ls, std::move(start), options.max_iterations);
  if (cost != nullptr) {
    std::vector<double> r;
    ls.residuals(theta, r);
    *cost = 0;
    for (double v : r) *cost += SoftL1(v, options.loss_scale);
  }
  return theta;
}

// Candidate tiles per class: CTA tiles of GEMM libraries (64–256), decode kernels' M tile
// (the 16-row MMA atom or 64) with or without splitting the keys, FlashAttention's 64/128.
std::vector<std::pair<int64_t, int64_t>> TileGrid(KernelClass cls) {
  switch (cls) {
    case KernelClass::kGemm:
    case KernelClass::kGroupedGemm:
      return {{64, 64},  {64, 128},  {64, 256},  {128, 64}, {128, 128},
              {128, 256}, {256, 64}, {256, 128}, {256, 256}};
    case KernelClass::kAttentionDecode:
    case KernelClass::kMlaDecode:
      return {{1, 1},  {1, 256},  {1, 1024},  {16, 1}, {16, 256},
              {16, 1024}, {64, 1}, {64, 256}, {64, 1024}};
    case KernelClass::kAttentionPrefill:
    case KernelClass::kMlaPrefill: return {{64, 64}, {64, 128}, {128, 64}, {128, 128}};
    default: return {{1, 1}};
  }
}

std::vector<size_t> FoldRows(size_t n, uint32_t folds, uint32_t fold, bool held_out) {
  std::vector<size_t> rows;
  for (size_t i = 0; i < n; ++i) {
    if ((folds > 1 && i % folds == fold) == held_out) rows.push_back(i);
  }
  return rows;
}

}  // namespace

KernelParams FitKernel(std::span<const Sample> samples, KernelClass cls, const std::string& variant,
                       const DeviceRates& rates, const FitOptions& options) {
  const std::vector<DeviceRates> each(samples.size(), rates);
  return FitKernel(samples, each, cls, variant, options);
}

KernelParams FitKernel(std::span<const Sample> samples, std::span<const DeviceRates> rates,
                       KernelClass cls, const std::string& variant, const FitOptions& options) {
  std::vector<size_t> all(samples.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<double> start(kKernelStart.begin(), kKernelStart.end());
  double best_cost = std::numeric_limits<double>::infinity();
  std::vector<double> best_theta = start;
  std::pair<int64_t, int64_t> best_tile{1, 1};
  for (const auto& tile : TileGrid(cls)) {
    const Prepared p = Prepare(samples, tile.first, tile.second, rates);
    double cost = 0;
    std::vector<double> theta = FitTheta(p, all, start, options, &cost);
    if (cost < best_cost) {
      best_cost = cost;
      best_theta = std::move(theta);
      best_tile = tile;
    }
  }
  KernelParams result = FromTheta(best_theta, cls, variant, best_tile.first, best_tile.second);
  // k-fold cross-validation with the chosen tiles: refit on k−1 folds, predict the held-out.
  const uint32_t folds = FoldsFor(samples.size(), options);
  const Prepared p = Prepare(samples, best_tile.first, best_tile.second, rates);
  std::vector<double> predicted, measured;
  for (uint32_t f = 0; f < std::max(folds, 1u); ++f) {
    const std::vector<size_t> train = folds > 1 ? FoldRows(samples.size(), folds, f, false) : all;
    const std::vector<size_t> test = folds > 1 ? FoldRows(samples.size(), folds, f, true) : all;
    const std::vector<double> theta =
        folds > 1 ? FitTheta(p, train, best_theta, options, nullptr) : best_theta;
    for (size_t i : test) {
      predicted.push_back(std::exp(LogPredicted(p, i, theta)));
      measured.push_back(samples[i].measured_s);
    }
  }
  result.fit = ErrorStats(predicted, measured, folds > 1 ? folds : 0);
  return result;
}

// ---- All-reduce ---------------------------------------------------------------------------

namespace {

// θ per algorithm = (log latency_s, log latency_per_peer_s, logit bandwidth_efficiency).
constexpr size_t kCollectiveParams = 3;

std::array<double, kCollectiveParams> CollectiveStart(Algorithm a) {
  switch (a) {
    case Algorithm::kOneShot: return {std::log(3e-6), std::log(2e-7), Logit(0.25)};
    case Algorithm::kTwoShot: return {std::log(8e-6), std::log(5e-7), Logit(0.5)};
    case Algorithm::kNvls: return {std::log(10e-6), std::log(5e-7), Logit(0.6)};
    case Algorithm::kRing: return {std::log(15e-6), std::log(1e-6), Logit(0.7)};
  }
  return {std::log(5e-6), std::log(5e-7), 0.0};
}

std::vector<CollectiveParams> CollectivesFromTheta(std::span<const double> t,
                                                   std::span<const Algorithm> algorithms) {
  std::vector<CollectiveParams> out;
  for (size_t a = 0; a < algorithms.size(); ++a) {
    CollectiveParams c;
    c.cls = KernelClass::kAllReduce;
    c.algorithm = algorithms[a];
    c.latency_s = std::exp(t[a * kCollectiveParams]);
    c.latency_per_peer_s = std::exp(t[a * kCollectiveParams + 1]);
    c.bandwidth_efficiency = Logistic(t[a * kCollectiveParams + 2]);
    out.push_back(c);
  }
  return out;
}

std::vector<double> FitCollectiveTheta(std::span<const Sample> samples,
                                       std::span<const size_t> rows,
                                       std::span<const Algorithm> algorithms,
                                       std::span<const CollectiveParams> fixed,
                                       const DeviceRates& rates, std::vector<double> start,
                                       const FitOptions& options) {
  LeastSquares ls;
  ls.params = algorithms.size() * kCollectiveParams;
  for (Algorithm a : algorithms) {
    const auto s = CollectiveStart(a);
    ls.prior.insert(ls.prior.end(), s.begin(), s.end());
  }
  ls.prior_weight = kPriorWeight;
  ls.loss_scale = options.loss_scale;
  ls.residuals = [&](std::span<const double> t, std::vector<double>& r) {
    std::vector<CollectiveParams> all = CollectivesFromTheta(t, algorithms);
    all.insert(all.end(), fixed.begin(), fixed.end());
    r.resize(rows.size());
    for (size_t j = 0; j < rows.size(); ++j) {
      const Sample& s = samples[rows[j]];
      r[j] = std::log(SampleTime(s, all, rates)) - std::log(s.measured_s);
    }
  };
  return SolveRobust(ls, std::move(start), options.max_iterations);
}

}  // namespace

std::vector<CollectiveParams> FitAllReduce(std::span<const Sample> samples,
                                           std::span<const Algorithm> algorithms,
                                           std::span<const CollectiveParams> fixed,
                                           const DeviceRates& rates, const FitOptions& options) {
  std::vector<double> start;
  for (Algorithm a : algorithms) {
    const auto s = CollectiveStart(a);
    start.insert(start.end(), s.begin(), s.end());
  }
  std::vector<size_t> all(samples.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::vector<double> theta =
      FitCollectiveTheta(samples, all, algorithms, fixed, rates, start, options);
  std::vector<CollectiveParams> result = CollectivesFromTheta(theta, algorithms);
  const uint32_t folds = FoldsFor(samples.size(), options);
  std::vector<double> predicted, measured;
  for (uint32_t f = 0; f < std::max(folds, 1u); ++f) {
    const std::vector<size_t> train = folds > 1 ? FoldRows(samples.size(), folds, f, false) : all;
    const std::vector<size_t> test = folds > 1 ? FoldRows(samples.size(), folds, f, true) : all;
    const std::vector<double> t =
        folds > 1 ? FitCollectiveTheta(samples, train, algorithms, fixed, rates, theta, options)
                  : theta;
    std::vector<CollectiveParams> held = CollectivesFromTheta(t, algorithms);
    held.insert(held.end(), fixed.begin(), fixed.end());
    for (size_t i : test) {
      predicted.push_back(SampleTime(samples[i], held, rates));
      measured.push_back(samples[i].measured_s);
    }
  }
  const FitStats stats = ErrorStats(predicted, measured, folds > 1 ? folds : 0);
  for (CollectiveParams& c : result) c.fit = stats;
  return result;
}

}  // namespace opscope::predict
