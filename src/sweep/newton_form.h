// An exact closed form of an integer quantity over the workload of an LLM step, in the
// variables S = seqs, T = token rows per sequence (n = S·T) and P = ctx:
//
//   q(S, T, P) = Σ d[a][b][c] · C(S−1, a) · C(T−1, b) · C(P−1, c),   a, b, c ∈ {0, 1, 2}
//
// (Newton's forward-difference form on the grid {1, 2, 3}³; C(x, k) the binomial
// coefficient, an integer for every integer x, so the coefficients d are the integer finite
// differences of q and evaluation is exact integer arithmetic). It represents exactly every
// polynomial of degree ≤ 2 in each variable — what the cost rules produce for matrix ops,
// norms, elementwise ops, recurrences and full causal attention (pairs = T·P + T(T+1)/2).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace opscope::sweep {

using Int128 = __int128;

// C(x−1, 0..2) for one variable value x.
struct NewtonBasis {
  std::array<Int128, 3> v{1, 0, 0};
  NewtonBasis() = default;
  explicit NewtonBasis(int64_t x) {
    const Int128 d = Int128(x) - 1;
    v = {1, d, d * (d - 1) / 2};
  }
};

class NewtonForm {
 public:
  // Fits the form to samples q[a][b][c] = q(1 + a, 1 + b, 1 + c).
  static NewtonForm Fit(const std::array<std::array<std::array<Int128, 3>, 3>, 3>& samples);

  Int128 Eval(const NewtonBasis& s, const NewtonBasis& t, const NewtonBasis& p) const {
    Int128 sum = 0;
    for (const Term& term : terms_) sum += term.coef * s.v[term.a] * t.v[term.b] * p.v[term.c];
    return sum;
  }
  size_t terms() const { return terms_.size(); }

  // Fixes two variables: e[j] = the coefficient of C(x−1, j) in the remaining variable
  // (`axis` 0 = S, 1 = T, 2 = P; the basis given for it is ignored).
  void Fold(const NewtonBasis& s, const NewtonBasis& t, const NewtonBasis& p, int axis,
            Int128 e[3]) const {
    e[0] = e[1] = e[2] = 0;
    for (const Term& term : terms_) {
      const uint8_t j = axis == 0 ? term.a : axis == 1 ? term.b : term.c;
      const Int128 fixed = (axis == 0 ? 1 : s.v[term.a]) * (axis == 1 ? 1 : t.v[term.b]) *
                           (axis == 2 ? 1 : p.v[term.c]);
      e[j] += term.coef * fixed;
    }
  }

 private:
  struct Term {
    uint8_t a, b, c;
    Int128 coef;
  };
  std::vector<Term> terms_;  // non-zero coefficients only
};

}  // namespace opscope::sweep
