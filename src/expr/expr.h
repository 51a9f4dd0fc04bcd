// Symbolic dim expressions: integers, symbols and + - * / (exact), min, max, ceil_div.
// Parsed once into a postfix program, evaluated many times against bindings.
//
//   expr   := term (('+' | '-') term)*
//   term   := factor (('*' | '/') factor)*
//   factor := INT | SYMBOL | FUNC '(' expr ',' expr ')' | '(' expr ')'
//   FUNC   := min | max | ceil_div        SYMBOL := [A-Za-z_][A-Za-z0-9_.]*
//
// '/' is exact: a remainder is an error, never a rounded dim. Arithmetic is checked 64-bit.
#pragma once

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "support/error.h"

namespace opscope::expr {

using SymbolId = uint32_t;

// Interns symbol names; a graph owns one, and its expressions refer to symbols by id.
class SymbolTable {
 public:
  SymbolId Intern(std::string_view name);
  std::optional<SymbolId> Find(std::string_view name) const;
  const std::string& Name(SymbolId id) const { return names_[id]; }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, SymbolId> ids_;
};

// Values for some symbols of one table.
class Bindings {
 public:
  explicit Bindings(const SymbolTable& table) : table_(&table) {}
  void Set(SymbolId id, int64_t value);
  bool IsBound(SymbolId id) const { return id < bound_.size() && bound_[id]; }
  int64_t Value(SymbolId id) const { return values_[id]; }
  const SymbolTable& table() const { return *table_; }

 private:
  const SymbolTable* table_;
  std::vector<int64_t> values_;
  std::vector<bool> bound_;
};

struct EvalError {
  enum class Kind : uint8_t { kUnbound, kInexact, kDivideByZero, kOverflow, kNegativeOperand };
  Kind kind;
  SymbolId symbol = 0;  // kUnbound: the first unbound symbol
  int64_t lhs = 0;      // kInexact / kDivideByZero / kNegativeOperand: the operands
  int64_t rhs = 0;
  // "dim 'ctx' is not bound", "8 is not divisible by 3", ...
  std::string Message(const SymbolTable& table) const;
};

class Expr {
 public:
  Expr() = default;  // the constant 0
  static Expr Constant(int64_t value);
  static Expr Symbol(SymbolId id);
  // Parses `text`, interning its symbols. A symbol-free expression is folded to a constant
  // here, so an inexact or overflowing constant expression is a parse error.
  static Result<Expr> Parse(std::string_view text, SymbolTable& table);

  // Builders for importers that compose shapes (e.g. n * top_k, min(ctx, 4096)).
  static Expr Add(const Expr& a, const Expr& b);
  static Expr Sub(const Expr& a, const Expr& b);
  static Expr Mul(const Expr& a, const Expr& b);
  static Expr Div(const Expr& a, const Expr& b);
  static Expr Min(const Expr& a, const Expr& b);
  static Expr Max(const Expr& a, const Expr& b);
  static Expr CeilDiv(const Expr& a, const Expr& b);

  bool IsConstant() const { return kind_ == Kind::kConstant; }
  int64_t constant() const { return value_; }  // valid when IsConstant()
  bool IsSymbol() const { return kind_ == Kind::kSymbol; }

  std::expected<int64_t, EvalError> Eval(const Bindings& bindings) const {
    if (kind_ == Kind::kConstant) return value_;
    if (kind_ == Kind::kSymbol) {
      const auto id = static_cast<SymbolId>(value_);
      if (bindings.IsBound(id)) return bindings.Value(id);
      return std::unexpected(EvalError{EvalError::Kind::kUnbound, id});
    }
    return EvalProgram(bindings);
  }

  void CollectSymbols(std::vector<SymbolId>& out) const;
  std::string ToString(const SymbolTable& table) const;

  // Postfix instruction; public so the builders and evaluator share one definition.
  enum class Op : uint8_t { kPushConst, kPushSymbol, kAdd, kSub, kMul, kDiv, kMin, kMax, kCeilDiv };
  struct Instr {
    Op op;
    int64_t operand;  // constant value or symbol id
  };

 private:
  enum class Kind : uint8_t { kConstant, kSymbol, kProgram };
  static Expr Combine(Op op, const Expr& a, const Expr& b);
  void AppendTo(std::vector<Instr>& code) const;
  std::expected<int64_t, EvalError> EvalProgram(const Bindings& bindings) const;

  Kind kind_ = Kind::kConstant;
  int64_t value_ = 0;
  std::shared_ptr<const std::vector<Instr>> program_;
};

// Applies one binary operation with the checks every evaluation shares.
std::expected<int64_t, EvalError> ApplyOp(Expr::Op op, int64_t a, int64_t b);

}  // namespace opscope::expr
