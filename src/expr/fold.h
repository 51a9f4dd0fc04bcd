// Folding arithmetic on dims that may be unknown: importers that infer shapes (ONNX) compose
// dims with these instead of the raw Expr builders, so constants fold to constants, identities
// (x·1, x+0, max(x, 0) of a dim) vanish, and anything unknown, inexact or overflowing stays
// unknown (std::nullopt) — never a guessed or rounded dim.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "expr/expr.h"

namespace opscope::expr {

// A dim: an expression, or std::nullopt when nobody can know it.
using MaybeExpr = std::optional<Expr>;

namespace fold {

// The value of a constant dim; std::nullopt for a symbolic or unknown one.
std::optional<int64_t> ConstantOf(const MaybeExpr& d);
// True when `d` is the constant `v`.
bool IsConstant(const MaybeExpr& d, int64_t v);
// Dims are non-negative: a constant >= 0 or a bare symbol (symbols name dims).
bool NonNegative(const MaybeExpr& d);

// Checked sums, differences and products (an overflowing constant result is unknown).
MaybeExpr Add(const MaybeExpr& a, const MaybeExpr& b);
MaybeExpr Sub(const MaybeExpr& a, const MaybeExpr& b);
MaybeExpr Mul(const MaybeExpr& a, const MaybeExpr& b);
// Exact division: an inexact constant quotient is unknown, never rounded; a symbolic one is
// an exact-division expression (a remainder fails when it is evaluated).
MaybeExpr Div(const MaybeExpr& a, const MaybeExpr& b);
// ceil(a / b) for b > 0; a negative constant numerator gives -floor(-a / b) (an extent that
// is then negative, which the caller rejects), a negative constant divisor is unknown.
MaybeExpr CeilDiv(const MaybeExpr& a, const MaybeExpr& b);
MaybeExpr Min(const MaybeExpr& a, const MaybeExpr& b);
// max(a, 0) of a non-negative dim is the dim itself.
MaybeExpr Max(const MaybeExpr& a, const MaybeExpr& b);
// The product of dims[from, to) (1 for an empty range).
MaybeExpr Product(std::span<const MaybeExpr> dims, size_t from, size_t to);

// Two dims known to be equal: equal constants, or the same expression text.
bool Same(const MaybeExpr& a, const MaybeExpr& b, const SymbolTable& symbols);

}  // namespace fold
}  // namespace opscope::expr
