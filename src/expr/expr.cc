// Dim expression parsing (recursive descent, bounded depth) and postfix evaluation.
#include "expr/expr.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "support/checked_math.h"

namespace opscope::expr {

SymbolId SymbolTable::Intern(std::string_view name) {
  auto it = ids_.find(std::string(name));
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<SymbolId>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(names_.back(), id);
  return id;
}

std::optional<SymbolId> SymbolTable::Find(std::string_view name) const {
  auto it = ids_.find(std::string(name));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

void Bindings::Set(SymbolId id, int64_t value) {
  if (id >= values_.size()) {
    values_.resize(id + 1, 0);
    bound_.resize(id + 1, false);
  }
  values_[id] = value;
  bound_[id] = true;
}

std::string EvalError::Message(const SymbolTable& table) const {
  switch (kind) {
    case Kind::kUnbound:
      return "dim '" + table.Name(symbol) + "' is not bound";
    case Kind::kInexact:
      return std::to_string(lhs) + " is not divisible by " + std::to_string(rhs);
    case Kind::kDivideByZero:
      return std::to_string(lhs) + " divided by zero";
    case Kind::kOverflow:
      return "value overflows 64 bits";
    case Kind::kNegativeOperand:
      return "ceil_div(" + std::to_string(lhs) + ", " + std::to_string(rhs) +
             ") needs non-negative operands";
  }
  return "invalid expression";
}

std::expected<int64_t, EvalError> ApplyOp(Expr::Op op, int64_t a, int64_t b) {
  using K = EvalError::Kind;
  std::optional<int64_t> r;
  switch (op) {
    case Expr::Op::kAdd:
      r = CheckedAddSigned(a, b);
      break;
    case Expr::Op::kSub:
      r = CheckedSubSigned(a, b);
      break;
    case Expr::Op::kMul:
      r = CheckedMulSigned(a, b);
      break;
    case Expr::Op::kDiv:
      if (b == 0) return std::unexpected(EvalError{K::kDivideByZero, 0, a, b});
      if (a == INT64_MIN && b == -1) break;  // before '%': INT64_MIN % -1 traps too
      if (a % b != 0) return std::unexpected(EvalError{K::kInexact, 0, a, b});
      r = a / b;
      break;
    case Expr::Op::kCeilDiv:
      if (b == 0) return std::unexpected(EvalError{K::kDivideByZero, 0, a, b});
      if (a < 0 || b < 0) return std::unexpected(EvalError{K::kNegativeOperand, 0, a, b});
      r = a / b + (a % b != 0 ? 1 : 0);
      break;
    case Expr::Op::kMin:
      r = std::min(a, b);
      break;
    case Expr::Op::kMax:
      r = std::max(a, b);
      break;
    case Expr::Op::kPushConst:
    case Expr::Op::kPushSymbol:
      break;
  }
  if (!r) return std::unexpected(EvalError{K::kOverflow});
  return *r;
}

Expr Expr::Constant(int64_t value) {
  Expr e;
  e.kind_ = Kind::kConstant;
  e.value_ = value;
  return e;
}

Expr Expr::Symbol(SymbolId id) {
  Expr e;
  e.kind_ = Kind::kSymbol;
  e.value_ = id;
  return e;
}

void Expr::AppendTo(std::vector<Instr>& code) const {
  switch (kind_) {
    case Kind::kConstant:
      code.push_back({Op::kPushConst, value_});
      return;
    case Kind::kSymbol:
      code.push_back({Op::kPushSymbol, value_});
      return;
    case Kind::kProgram:
      code.insert(code.end(), program_->begin(), program_->end());
      return;
  }
}

// Folds constant operands (when the result is exact and in range); otherwise builds a program.
Expr Expr::Combine(Op op, const Expr& a, const Expr& b) {
  if (a.IsConstant() && b.IsConstant()) {
    if (auto r = ApplyOp(op, a.value_, b.value_)) return Constant(*r);
  }
  auto code = std::make_shared<std::vector<Instr>>();
  a.AppendTo(*code);
  b.AppendTo(*code);
  code->push_back({op, 0});
  Expr e;
  e.kind_ = Kind::kProgram;
  e.program_ = std::move(code);
  return e;
}

Expr Expr::Add(const Expr& a, const Expr& b) { return Combine(Op::kAdd, a, b); }
Expr Expr::Sub(const Expr& a, const Expr& b) { return Combine(Op::kSub, a, b); }
Expr Expr::Mul(const Expr& a, const Expr& b) { return Combine(Op::kMul, a, b); }
Expr Expr::Div(const Expr& a, const Expr& b) { return Combine(Op::kDiv, a, b); }
Expr Expr::Min(const Expr& a, const Expr& b) { return Combine(Op::kMin, a, b); }
Expr Expr::Max(const Expr& a, const Expr& b) { return Combine(Op::kMax, a, b); }
Expr Expr::CeilDiv(const Expr& a, const Expr& b) { return Combine(Op::kCeilDiv, a, b); }

std::expected<int64_t, EvalError> Expr::EvalProgram(const Bindings& bindings) const {
  std::vector<int64_t> stack;
  stack.reserve(16);
  for (const Instr& in : *program_) {
    switch (in.op) {
      case Op::kPushConst:
        stack.push_back(in.operand);
        break;
      case Op::kPushSymbol: {
        const auto id = static_cast<SymbolId>(in.operand);
        if (!bindings.IsBound(id)) {
          return std::unexpected(EvalError{EvalError::Kind::kUnbound, id});
        }
        stack.push_back(bindings.Value(id));
        break;
      }
      case Op::kAdd:
      case Op::kSub:
      case Op::kMul:
      case Op::kDiv:
      case Op::kMin:
      case Op::kMax:
      case Op::kCeilDiv: {
        const int64_t b = stack.back();
        stack.pop_back();
        auto r = ApplyOp(in.op, stack.back(), b);
        if (!r) return r;
        stack.back() = *r;
        break;
      }
    }
  }
  return stack.back();
}

void Expr::CollectSymbols(std::vector<SymbolId>& out) const {
  if (kind_ == Kind::kSymbol) {
    out.push_back(static_cast<SymbolId>(value_));
  } else if (kind_ == Kind::kProgram) {
    for (const Instr& in : *program_) {
      if (in.op == Op::kPushSymbol) out.push_back(static_cast<SymbolId>(in.operand));
    }
  }
}

std::string Expr::ToString(const SymbolTable& table) const {
  if (kind_ == Kind::kConstant) return std::to_string(value_);
  if (kind_ == Kind::kSymbol) return table.Name(static_cast<SymbolId>(value_));
  // Rebuild infix text from the postfix program, fully parenthesised below the top level.
  std::vector<std::string> stack;
  for (const Instr& in : *program_) {
    switch (in.op) {
      case Op::kPushConst:
        stack.push_back(std::to_string(in.operand));
        break;
      case Op::kPushSymbol:
        stack.push_back(table.Name(static_cast<SymbolId>(in.operand)));
        break;
      default: {
        std::string b = std::move(stack.back());
        stack.pop_back();
        std::string a = std::move(stack.back());
        static constexpr const char* kInfix[] = {"", "", " + ", " - ", " * ", " / "};
        static constexpr const char* kFunc[] = {"", "", "", "", "", "", "min", "max", "ceil_div"};
        const int i = static_cast<int>(in.op);
        if (in.op == Op::kMin || in.op == Op::kMax || in.op == Op::kCeilDiv) {
          stack.back() = std::string(kFunc[i]) + "(" + a + ", " + b + ")";
        } else {
          stack.back() = "(" + a + kInfix[i] + b + ")";
        }
      }
    }
  }
  std::string s = std::move(stack.back());
  if (s.size() > 1 && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
  return s;
}

namespace {

constexpr int kMaxDepth = 64;       // nesting of parentheses and calls
constexpr size_t kMaxLength = 4096;  // characters in one expression

class Parser {
 public:
  Parser(std::string_view text, SymbolTable& table) : text_(text), table_(table) {}

  Result<Expr> Run() {
    if (text_.size() > kMaxLength) return Fail("expression longer than 4096 characters");
    auto e = ParseSum(0);
    if (!e) return e;
    SkipSpace();
    if (pos_ != text_.size()) return Fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return e;
  }

 private:
  std::unexpected<Error> Fail(const std::string& why) {
    return MakeError("invalid dim expression '" + std::string(text_) + "': " + why);
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }

  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Result<Expr> ParseSum(int depth) {
    auto lhs = ParseProduct(depth);
    if (!lhs) return lhs;
    while (true) {
      Expr::Op op;
      if (Accept('+')) {
        op = Expr::Op::kAdd;
      } else if (Accept('-')) {
        op = Expr::Op::kSub;
      } else {
        return lhs;
      }
      auto rhs = ParseProduct(depth);
      if (!rhs) return rhs;
      auto combined = Fold(op, *lhs, *rhs);
      if (!combined) return combined;
      lhs = std::move(combined);
    }
  }

  Result<Expr> ParseProduct(int depth) {
    auto lhs = ParseFactor(depth);
    if (!lhs) return lhs;
    while (true) {
      Expr::Op op;
      if (Accept('*')) {
        op = Expr::Op::kMul;
      } else if (Accept('/')) {
        op = Expr::Op::kDiv;
      } else {
        return lhs;
      }
      auto rhs = ParseFactor(depth);
      if (!rhs) return rhs;
      auto combined = Fold(op, *lhs, *rhs);
      if (!combined) return combined;
      lhs = std::move(combined);
    }
  }

  // Combines two operands; constant operands are evaluated now, so "7 / 2" fails here.
  Result<Expr> Fold(Expr::Op op, const Expr& a, const Expr& b) {
    if (a.IsConstant() && b.IsConstant()) {
      auto r = ApplyOp(op, a.constant(), b.constant());
      if (!r) return Fail(r.error().Message(table_));
      return Expr::Constant(*r);
    }
    switch (op) {
      case Expr::Op::kAdd: return Expr::Add(a, b);
      case Expr::Op::kSub: return Expr::Sub(a, b);
      case Expr::Op::kMul: return Expr::Mul(a, b);
      case Expr::Op::kDiv: return Expr::Div(a, b);
      case Expr::Op::kMin: return Expr::Min(a, b);
      case Expr::Op::kMax: return Expr::Max(a, b);
      case Expr::Op::kCeilDiv: return Expr::CeilDiv(a, b);
      case Expr::Op::kPushConst:
      case Expr::Op::kPushSymbol:
        break;
    }
    return Fail("internal: bad operator");
  }

  Result<Expr> ParseFactor(int depth) {
    if (depth >= kMaxDepth) return Fail("nested deeper than 64 levels");
    SkipSpace();
    if (pos_ >= text_.size()) return Fail(text_.empty() ? "empty" : "unexpected end");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      auto inner = ParseSum(depth + 1);
      if (!inner) return inner;
      if (!Accept(')')) return Fail("missing ')'");
      return inner;
    }
    if (c >= '0' && c <= '9') {
      const size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
      int64_t value = 0;
      auto [ptr, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, value);
      if (ec != std::errc()) return Fail("integer out of range");
      return Expr::Constant(value);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
              text_[pos_] == '.')) {
        ++pos_;
      }
      const std::string_view name = text_.substr(start, pos_ - start);
      SkipSpace();
      const bool call = pos_ < text_.size() && text_[pos_] == '(';
      if (!call) return Expr::Symbol(table_.Intern(name));
      Expr::Op op;
      if (name == "min") {
        op = Expr::Op::kMin;
      } else if (name == "max") {
        op = Expr::Op::kMax;
      } else if (name == "ceil_div") {
        op = Expr::Op::kCeilDiv;
      } else {
        return Fail("unknown function '" + std::string(name) + "'");
      }
      ++pos_;  // '('
      auto a = ParseSum(depth + 1);
      if (!a) return a;
      if (!Accept(',')) return Fail("'" + std::string(name) + "' takes two arguments");
      auto b = ParseSum(depth + 1);
      if (!b) return b;
      if (!Accept(')')) return Fail("missing ')'");
      return Fold(op, *a, *b);
    }
    return Fail("unexpected '" + std::string(1, c) + "'");
  }

  std::string_view text_;
  SymbolTable& table_;
  size_t pos_ = 0;
};

}  // namespace

Result<Expr> Expr::Parse(std::string_view text, SymbolTable& table) {
  return Parser(text, table).Run();
}

}  // namespace opscope::expr
