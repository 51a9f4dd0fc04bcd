// Fitting a kernel class's parameters to measured samples: robust least squares on log time
// (soft-L1 loss, Levenberg–Marquardt with a finite-difference Jacobian), tiles chosen by a
// small grid search, and the k-fold cross-validated |error| of the result.
//
// The parameters are fitted in an unconstrained form — overhead_s = exp(u0), efficiencies and
// the overlap and wave exponent as logistic functions of u1..u4 — so every fitted value stays
// in its physical range (efficiencies ≤ 1: predictions never below the roofline). A weak
// prior (weight kPriorWeight per parameter, against the sum over all samples) keeps a
// parameter the data do not determine (a memory-bound kernel's compute efficiency) near its
// starting value instead of drifting to a bound.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "predict/kernel_model.h"
#include "predict/profile.h"
#include "predict/samples.h"

namespace opscope::predict {

struct FitOptions {
  uint32_t folds = 5;        // k of the k-fold cross-validation (0 or 1: none)
  double loss_scale = 0.1;   // soft-L1 scale on log time: ~10 % errors count as quadratic
  int max_iterations = 60;
};

// The calls a fit needs before it is cross-validated: ten a fold (ten with no folds).
size_t MinSamplesToCrossValidate(const FitOptions& options);
// The folds a fit of `samples` calls is cross-validated with: options.folds from
// MinSamplesToCrossValidate on, else 0 (too few to hold any out: the fit's error is in-sample).
uint32_t FoldsFor(size_t samples, const FitOptions& options);

// Minimises Σ ρ(r_i(θ)) + Σ_j (w·(θ_j − prior_j))² over θ, ρ the soft-L1 loss of scale c:
// ρ(r) = 2c²(√(1 + (r/c)²) − 1). Deterministic.
struct LeastSquares {
  size_t params = 0;
  std::function<void(std::span<const double> theta, std::vector<double>& residuals)> residuals;
  std::vector<double> prior;
  double prior_weight = 0;
  double loss_scale = 0.1;
};
std::vector<double> SolveRobust(const LeastSquares& problem, std::vector<double> theta,
                                int max_iterations);

// Median and 90th percentile of |predicted / measured − 1|.
FitStats ErrorStats(std::span<const double> predicted, std::span<const double> measured,
                    uint32_t folds);

// Fits `cls`/`variant` (an MMA class) to samples whose parts are all of that class.
KernelParams FitKernel(std::span<const Sample> samples, KernelClass cls, const std::string& variant,
                       const DeviceRates& rates, const FitOptions& options);
// The same over samples of several devices (a family's pooled group, calibrate.h): sample i
// is timed on rates[i], its own device's bandwidth, peaks and compute units, so one set of
// efficiencies describes the kernel on every device of the family.
KernelParams FitKernel(std::span<const Sample> samples, std::span<const DeviceRates> rates,
                       KernelClass cls, const std::string& variant, const FitOptions& options);

// Fits all-reduce algorithms to samples; `fixed` algorithms take part in the min over
// algorithms with their parameters held.
std::vector<CollectiveParams> FitAllReduce(std::span<const Sample> samples,
                                           std::span<const Algorithm> algorithms,
                                           std::span<const CollectiveParams> fixed,
                                           const DeviceRates& rates, const FitOptions& options);

// The time of a sample under parameters (Σ of its parts), and under collective algorithms
// (the fastest).
double SampleTime(const Sample& s, const KernelParams& p, const DeviceRates& rates);
double SampleTime(const Sample& s, std::span<const CollectiveParams> algorithms,
                  const DeviceRates& rates);

}  // namespace opscope::predict
