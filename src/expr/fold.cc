// Folding arithmetic on possibly unknown dims (see fold.h).
#include "expr/fold.h"

#include <algorithm>

#include "support/checked_math.h"

namespace opscope::expr::fold {
namespace {

MaybeExpr C(int64_t v) { return Expr::Constant(v); }

// A constant result of two constants, or unknown when it overflows.
MaybeExpr Checked(std::optional<int64_t> r) {
  if (!r) return std::nullopt;
  return C(*r);
}

}  // namespace

std::optional<int64_t> ConstantOf(const MaybeExpr& d) {
  if (d && d->IsConstant()) return d->constant();
  return std::nullopt;
}

bool IsConstant(const MaybeExpr& d, int64_t v) { return d && d->IsConstant() && d->constant() == v; }

bool NonNegative(const MaybeExpr& d) {
  return d && (d->IsSymbol() || (d->IsConstant() && d->constant() >= 0));
}

MaybeExpr Add(const MaybeExpr& a, const MaybeExpr& b) {
  if (!a || !b) return std::nullopt;
  if (IsConstant(a, 0)) return b;
  if (IsConstant(b, 0)) return a;
  if (a->IsConstant() && b->IsConstant()) return Checked(CheckedAddSigned(a->constant(), b->constant()));
  return Expr::Add(*a, *b);
}

MaybeExpr Sub(const MaybeExpr& a, const MaybeExpr& b) {
  if (!a || !b) return std::nullopt;
  if (IsConstant(b, 0)) return a;
  if (a->IsConstant() && b->IsConstant()) return Checked(CheckedSubSigned(a->constant(), b->constant()));
  return Expr::Sub(*a, *b);
}

MaybeExpr Mul(const MaybeExpr& a, const MaybeExpr& b) {
  if (!a || !b) return std::nullopt;
  if (IsConstant(a, 1)) return b;
  if (IsConstant(b, 1)) return a;
  if (IsConstant(a, 0) || IsConstant(b, 0)) return C(0);
  if (a->IsConstant() && b->IsConstant()) return Checked(CheckedMulSigned(a->constant(), b->constant()));
  return Expr::Mul(*a, *b);
}

MaybeExpr Div(const MaybeExpr& a, const MaybeExpr& b) {
  if (!a || !b || IsConstant(b, 0)) return std::nullopt;
  if (IsConstant(b, 1)) return a;
  if (a->IsConstant() && b->IsConstant()) {
    const int64_t x = a->constant(), y = b->constant();
    if ((x == INT64_MIN && y == -1) || x % y != 0) return std::nullopt;
    return C(x / y);
  }
  return Expr::Div(*a, *b);
}

MaybeExpr CeilDiv(const MaybeExpr& a, const MaybeExpr& b) {
  if (!a || !b || IsConstant(b, 0)) return std::nullopt;
  if (IsConstant(b, 1)) return a;
  if (a->IsConstant() && b->IsConstant()) {
    const int64_t x = a->constant(), y = b->constant();
    if (y < 0 || x == INT64_MIN) return std::nullopt;
    if (x < 0) return C(-((-x) / y));
    return C(x / y + (x % y != 0 ? 1 : 0));
  }
  return Expr::CeilDiv(*a, *b);
}

MaybeExpr Min(const MaybeExpr& a, const MaybeExpr& b) {
  if (!a || !b) return std::nullopt;
  if (a->IsConstant() && b->IsConstant()) return C(std::min(a->constant(), b->constant()));
  return Expr::Min(*a, *b);
}

MaybeExpr Max(const MaybeExpr& a, const MaybeExpr& b) {
  if (!a || !b) return std::nullopt;
  if (IsConstant(b, 0) && NonNegative(a)) return a;
  if (IsConstant(a, 0) && NonNegative(b)) return b;
  if (a->IsConstant() && b->IsConstant()) return C(std::max(a->constant(), b->constant()));
  return Expr::Max(*a, *b);
}

MaybeExpr Product(std::span<const MaybeExpr> dims, size_t from, size_t to) {
  MaybeExpr p = C(1);
  for (size_t i = from; i < to && i < dims.size(); ++i) p = Mul(p, dims[i]);
  return p;
}

bool Same(const MaybeExpr& a, const MaybeExpr& b, const SymbolTable& symbols) {
  if (!a || !b) return false;
  if (a->IsConstant() || b->IsConstant()) {
    return a->IsConstant() && b->IsConstant() && a->constant() == b->constant();
  }
  return a->ToString(symbols) == b->ToString(symbols);
}

}  // namespace opscope::expr::fold
