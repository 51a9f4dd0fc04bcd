// Dim expressions: grammar and precedence, exact division, min/max/ceil_div, bindings, the
// exact error texts (unbound symbol, inexact division, overflow, nesting), ToString round trips,
// and the folding helpers on possibly unknown dims.
#include "expr/expr.h"
#include "expr/fold.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace opscope::expr {
namespace {

// Parses and evaluates `text` with `bindings` (name -> value); fails the test on a parse error.
std::expected<int64_t, std::string> Eval(
    const std::string& text, std::vector<std::pair<std::string, int64_t>> bindings = {}) {
  SymbolTable table;
  auto e = Expr::Parse(text, table);
  if (!e) return std::unexpected("parse: " + e.error().message);
  Bindings b(table);
  for (const auto& [name, value] : bindings) b.Set(table.Intern(name), value);
  auto v = e->Eval(b);
  if (!v) return std::unexpected(v.error().Message(table));
  return *v;
}

std::string ParseError(const std::string& text) {
  SymbolTable table;
  auto e = Expr::Parse(text, table);
  EXPECT_FALSE(e.has_value()) << "'" << text << "' parsed";
  return e ? std::string() : e.error().message;
}

TEST(ExprTest, IntegersAndPrecedence) {
  struct Case {
    const char* text;
    int64_t value;
  } cases[] = {
      {"0", 0},
      {"4096", 4096},
      {"2 + 3 * 4", 2 + 3 * 4},        // * binds tighter than +
      {"(2 + 3) * 4", (2 + 3) * 4},    // parentheses override
      {"2 * 3 + 4 * 5", 2 * 3 + 4 * 5},
      {"10 - 3 - 2", (10 - 3) - 2},    // left associative
      {"64 / 4 / 2", (64 / 4) / 2},    // left associative
      {"64 / (4 / 2)", 64 / (4 / 2)},
      {"100 - 4 * 8 / 2", 100 - 4 * 8 / 2},
      {"((((7))))", 7},
      {"  1+2  ", 3},                  // spaces and tabs are ignored
      {"\t8\t*\t8", 64},
      {"9223372036854775807", INT64_MAX},
  };
  for (const Case& c : cases) {
    auto v = Eval(c.text);
    ASSERT_TRUE(v.has_value()) << c.text << ": " << v.error();
    EXPECT_EQ(*v, c.value) << c.text;
  }
}

TEST(ExprTest, FunctionsMinMaxCeilDiv) {
  EXPECT_EQ(Eval("min(3, 5)").value(), 3);
  EXPECT_EQ(Eval("max(3, 5)").value(), 5);
  EXPECT_EQ(Eval("ceil_div(10, 3)").value(), 4);   // ⌈10/3⌉
  EXPECT_EQ(Eval("ceil_div(9, 3)").value(), 3);    // exact stays exact
  EXPECT_EQ(Eval("ceil_div(0, 7)").value(), 0);
  EXPECT_EQ(Eval("ceil_div(1, 128)").value(), 1);
  EXPECT_EQ(Eval("min(ctx, 4096)", {{"ctx", 8192}}).value(), 4096);
  EXPECT_EQ(Eval("min(ctx, 4096)", {{"ctx", 100}}).value(), 100);
  EXPECT_EQ(Eval("max(a, b) * 2", {{"a", 7}, {"b", 9}}).value(), 18);
  EXPECT_EQ(Eval("ceil_div(rows, 128) * ceil_div(d, 128)", {{"rows", 300}, {"d", 200}}).value(),
            3 * 2);
  EXPECT_EQ(Eval("min(max(a, 1), ceil_div(b, 2))", {{"a", 0}, {"b", 7}}).value(), 1);
  EXPECT_EQ(Eval("  min ( 1 , 2 )").value(), 1);
}

// Table-driven symbolic cases: known dims give numbers, bound symbols give numbers, an unbound
// symbol gives the exact expected error text.
TEST(ExprTest, SymbolsBoundAndUnbound) {
  struct Case {
    const char* text;
    std::vector<std::pair<std::string, int64_t>> bindings;
    std::expected<int64_t, std::string> expected;
  };
  const Case cases[] = {
      {"n", {{"n", 7}}, 7},
      {"n * k", {{"n", 3}, {"k", 5}}, 3 * 5},
      {"n * top_k", {{"n", 4}, {"top_k", 8}}, 4 * 8},
      {"hidden / heads", {{"hidden", 4096}, {"heads", 32}}, 4096 / 32},
      {"batch * (ctx + 1)", {{"batch", 2}, {"ctx", 9}}, 2 * (9 + 1)},
      {"p2o.DynamicDimension.0 * 2", {{"p2o.DynamicDimension.0", 21}}, 42},  // dots in names
      {"_x1 + x_2", {{"_x1", 1}, {"x_2", 2}}, 3},
      {"ctx", {}, std::unexpected("dim 'ctx' is not bound")},
      {"n * k", {{"n", 3}}, std::unexpected("dim 'k' is not bound")},
      {"min(ctx, 4096)", {}, std::unexpected("dim 'ctx' is not bound")},
      {"n / 3", {{"n", 8}}, std::unexpected("8 is not divisible by 3")},
      {"n / d", {{"n", 8}, {"d", 0}}, std::unexpected("8 divided by zero")},
      {"n * n", {{"n", int64_t{1} << 32}}, std::unexpected("value overflows 64 bits")},
      {"n + 1", {{"n", INT64_MAX}}, std::unexpected("value overflows 64 bits")},
  };
  for (const Case& c : cases) {
    auto v = Eval(c.text, c.bindings);
    EXPECT_EQ(v, c.expected) << c.text << " -> "
                             << (v ? std::to_string(*v) : "error: " + v.error());
  }
}

TEST(ExprTest, EvalErrorCarriesTheUnboundSymbol) {
  SymbolTable table;
  auto e = Expr::Parse("a * b + c", table);
  ASSERT_TRUE(e.has_value());
  Bindings b(table);
  b.Set(*table.Find("a"), 2);
  b.Set(*table.Find("c"), 2);
  auto v = e->Eval(b);
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().kind, EvalError::Kind::kUnbound);
  EXPECT_EQ(table.Name(v.error().symbol), "b");
  b.Set(*table.Find("b"), 5);
  EXPECT_EQ(e->Eval(b).value(), 2 * 5 + 2);
}

TEST(ExprTest, ConstantExpressionsFoldAtParseTime) {
  SymbolTable table;
  auto e = Expr::Parse("2 * 64 + ceil_div(300, 128)", table);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->IsConstant());
  EXPECT_EQ(e->constant(), 2 * 64 + 3);
  EXPECT_EQ(table.size(), 0u);
  auto s = Expr::Parse("hidden", table);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->IsSymbol());
}

// Exact division: a remainder in a constant expression is a parse error quoting the text.
TEST(ExprTest, ParseErrorTexts) {
  EXPECT_EQ(ParseError("7 / 2"), "invalid dim expression '7 / 2': 7 is not divisible by 2");
  EXPECT_EQ(ParseError("4 / 0"), "invalid dim expression '4 / 0': 4 divided by zero");
  EXPECT_EQ(ParseError("9223372036854775807 + 1"),
            "invalid dim expression '9223372036854775807 + 1': value overflows 64 bits");
  EXPECT_EQ(ParseError("4294967296 * 4294967296"),
            "invalid dim expression '4294967296 * 4294967296': value overflows 64 bits");
  EXPECT_EQ(ParseError("99999999999999999999"),
            "invalid dim expression '99999999999999999999': integer out of range");
  EXPECT_EQ(ParseError(""), "invalid dim expression '': empty");
  EXPECT_EQ(ParseError("n +"), "invalid dim expression 'n +': unexpected end");
  EXPECT_EQ(ParseError("(n"), "invalid dim expression '(n': missing ')'");
  EXPECT_EQ(ParseError("n)"), "invalid dim expression 'n)': unexpected ')'");
  EXPECT_EQ(ParseError("n $ 2"), "invalid dim expression 'n $ 2': unexpected '$'");
  EXPECT_EQ(ParseError("-1"), "invalid dim expression '-1': unexpected '-'");
  EXPECT_EQ(ParseError("1e3"), "invalid dim expression '1e3': unexpected 'e'");
  EXPECT_EQ(ParseError("foo(1, 2)"), "invalid dim expression 'foo(1, 2)': unknown function 'foo'");
  EXPECT_EQ(ParseError("min(1)"), "invalid dim expression 'min(1)': 'min' takes two arguments");
  EXPECT_EQ(ParseError("max(1, 2"), "invalid dim expression 'max(1, 2': missing ')'");
  EXPECT_EQ(ParseError("n n"), "invalid dim expression 'n n': unexpected 'n'");
}

// (0 − 2^63) / (0 − 1) is the one signed division that overflows; it must be an error, not a
// crash (x86 idiv traps on INT64_MIN / −1 and on INT64_MIN % −1).
TEST(ExprTest, MinInt64DividedByMinusOneIsAnOverflowNotACrash) {
  const std::string text = "(0 - 9223372036854775807 - 1) / (0 - 1)";
  EXPECT_EQ(ParseError(text), "invalid dim expression '" + text + "': value overflows 64 bits");
  auto v = Eval("a / b", {{"a", INT64_MIN}, {"b", -1}});
  EXPECT_EQ(v, std::unexpected(std::string("value overflows 64 bits")));
  auto ok = Eval("a / b", {{"a", INT64_MIN}, {"b", 1}});
  EXPECT_EQ(ok, INT64_MIN);
}

TEST(ExprTest, NestingDepthLimit) {
  auto nested = [](int depth) {
    return std::string(static_cast<size_t>(depth), '(') + "n" +
           std::string(static_cast<size_t>(depth), ')');
  };
  EXPECT_EQ(Eval(nested(63), {{"n", 5}}).value(), 5);
  const std::string deep = nested(64);
  EXPECT_EQ(ParseError(deep), "invalid dim expression '" + deep + "': nested deeper than 64 levels");
  // Very deep input is rejected by the limit, never by exhausting the stack.
  const std::string huge(4000, '(');
  EXPECT_NE(ParseError(huge).find("nested deeper than 64 levels"), std::string::npos);

  std::string calls = "n";
  for (int i = 0; i < 70; ++i) calls = "min(" + calls + ", 9)";
  EXPECT_NE(ParseError(calls).find("nested deeper than 64 levels"), std::string::npos);
}

TEST(ExprTest, LengthLimit) {
  std::string longest = "1";
  while (longest.size() + 4 <= 4096) longest += " + 1";
  EXPECT_TRUE(Eval(longest).has_value());
  std::string too_long(4097, '1');
  EXPECT_EQ(ParseError(too_long),
            "invalid dim expression '" + too_long + "': expression longer than 4096 characters");
}

TEST(ExprTest, SymbolsAreInterned) {
  SymbolTable table;
  auto a = Expr::Parse("n * k + n", table);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(table.size(), 2u);
  const SymbolId n = *table.Find("n");
  EXPECT_EQ(table.Intern("n"), n);
  EXPECT_FALSE(table.Find("m").has_value());
  std::vector<SymbolId> syms;
  a->CollectSymbols(syms);
  EXPECT_EQ(syms.size(), 3u);  // one entry per occurrence
}

TEST(ExprTest, BuildersFoldOnlyExactConstants) {
  EXPECT_EQ(Expr::Add(Expr::Constant(2), Expr::Constant(3)).constant(), 5);
  EXPECT_EQ(Expr::Mul(Expr::Constant(6), Expr::Constant(7)).constant(), 42);
  EXPECT_EQ(Expr::CeilDiv(Expr::Constant(300), Expr::Constant(128)).constant(), 3);
  EXPECT_EQ(Expr::Min(Expr::Constant(3), Expr::Constant(-1)).constant(), -1);
  // 7 / 2 cannot fold: it stays a program whose evaluation reports the remainder.
  SymbolTable table;
  const Expr inexact = Expr::Div(Expr::Constant(7), Expr::Constant(2));
  EXPECT_FALSE(inexact.IsConstant());
  auto v = inexact.Eval(Bindings(table));
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().Message(table), "7 is not divisible by 2");

  const SymbolId n = table.Intern("n");
  const Expr rows = Expr::Mul(Expr::Symbol(n), Expr::Constant(8));
  Bindings b(table);
  b.Set(n, 5);
  EXPECT_EQ(rows.Eval(b).value(), 40);
  EXPECT_EQ(rows.ToString(table), "n * 8");
}

// ToString gives text that parses back to an expression with the same value everywhere.
TEST(ExprTest, ToStringRoundTrip) {
  const char* texts[] = {
      "n",
      "4096",
      "n * k",
      "(a + b) * c",
      "a - (b - c)",
      "a - b - c",
      "a / b / c",
      "a / (b / c)",
      "a * b + c * a",
      "min(a, b) + max(b, c)",
      "ceil_div(a + b, c) * c",
      "min(ctx, 4096) * 2 * b",
      "a + (b + c) * (a - c)",
  };
  std::mt19937_64 rng(7);
  for (const char* text : texts) {
    SymbolTable table;
    auto e = Expr::Parse(text, table);
    ASSERT_TRUE(e.has_value()) << text;
    const std::string printed = e->ToString(table);
    auto again = Expr::Parse(printed, table);
    ASSERT_TRUE(again.has_value()) << text << " printed as " << printed;
    EXPECT_EQ(again->ToString(table), printed) << text;  // printing is a fixed point
    for (int trial = 0; trial < 50; ++trial) {
      Bindings b(table);
      // Powers of two so that every division in the list is exact.
      for (SymbolId id = 0; id < table.size(); ++id) {
        b.Set(id, int64_t{1} << (rng() % 6));
      }
      auto x = e->Eval(b);
      auto y = again->Eval(b);
      ASSERT_EQ(x.has_value(), y.has_value()) << text;
      if (x) {
        EXPECT_EQ(*x, *y) << text << " vs " << printed;
      }
    }
  }
  SymbolTable table;
  EXPECT_EQ(Expr::Parse("(a + b) * c", table)->ToString(table), "(a + b) * c");
  EXPECT_EQ(Expr::Parse("a - (b - c)", table)->ToString(table), "a - (b - c)");
  EXPECT_EQ(Expr::Parse("min(a, 2)", table)->ToString(table), "min(a, 2)");
}

// The folding helpers importers compose dims with (expr/fold.h).
TEST(ExprFold, ConstantsFoldAndIdentitiesVanish) {
  SymbolTable table;
  const MaybeExpr n = Expr::Symbol(table.Intern("n"));
  const MaybeExpr two = Expr::Constant(2), three = Expr::Constant(3);
  EXPECT_EQ(fold::ConstantOf(fold::Add(two, three)), 5);
  EXPECT_EQ(fold::ConstantOf(fold::Sub(two, three)), -1);
  EXPECT_EQ(fold::ConstantOf(fold::Mul(two, three)), 6);
  EXPECT_EQ(fold::ConstantOf(fold::Div(Expr::Constant(6), three)), 2);
  EXPECT_EQ(fold::ConstantOf(fold::CeilDiv(Expr::Constant(7), two)), 4);  // ceil(7/2)
  EXPECT_EQ(fold::ConstantOf(fold::Min(two, three)), 2);
  EXPECT_EQ(fold::ConstantOf(fold::Max(two, three)), 3);
  // x·1, x+0, x−0, x/1, max(x, 0) of a dim are x itself; x·0 is 0.
  for (const MaybeExpr& e : {fold::Mul(n, Expr::Constant(1)), fold::Add(Expr::Constant(0), n),
                             fold::Sub(n, Expr::Constant(0)), fold::Div(n, Expr::Constant(1)),
                             fold::Max(n, Expr::Constant(0))}) {
    ASSERT_TRUE(e.has_value());
    EXPECT_TRUE(e->IsSymbol());
    EXPECT_EQ(e->ToString(table), "n");
  }
  EXPECT_EQ(fold::ConstantOf(fold::Mul(n, Expr::Constant(0))), 0);
  EXPECT_EQ(fold::Mul(n, two)->ToString(table), "n * 2");
  const std::vector<MaybeExpr> dims{two, n, three};
  EXPECT_EQ(fold::Product(dims, 0, 3)->ToString(table), "(2 * n) * 3");
  EXPECT_EQ(fold::ConstantOf(fold::Product(dims, 2, 3)), 3);
  EXPECT_EQ(fold::ConstantOf(fold::Product(dims, 1, 1)), 1);  // empty range
}

TEST(ExprFold, UnknownInexactAndOverflowingStayUnknown) {
  const MaybeExpr unknown, two = Expr::Constant(2), seven = Expr::Constant(7);
  const MaybeExpr big = Expr::Constant(INT64_MAX);
  EXPECT_FALSE(fold::Add(unknown, two));
  EXPECT_FALSE(fold::Mul(two, unknown));
  EXPECT_FALSE(fold::Div(seven, two));                 // 7/2 is not a dim: never rounded
  EXPECT_FALSE(fold::Div(seven, Expr::Constant(0)));
  EXPECT_FALSE(fold::Div(Expr::Constant(INT64_MIN), Expr::Constant(-1)));
  EXPECT_FALSE(fold::Add(big, Expr::Constant(1)));    // overflow
  EXPECT_FALSE(fold::Mul(big, two));
  EXPECT_FALSE(fold::CeilDiv(seven, Expr::Constant(-2)));
  EXPECT_EQ(fold::ConstantOf(fold::CeilDiv(Expr::Constant(-7), two)), -3);  // -floor(7/2)
}

TEST(ExprFold, SameComparesConstantsAndExpressions) {
  SymbolTable table;
  const MaybeExpr n = Expr::Symbol(table.Intern("n"));
  const MaybeExpr m = Expr::Symbol(table.Intern("m"));
  EXPECT_TRUE(fold::Same(Expr::Constant(4), Expr::Constant(4), table));
  EXPECT_FALSE(fold::Same(Expr::Constant(4), n, table));
  EXPECT_TRUE(fold::Same(fold::Mul(n, m), fold::Mul(n, m), table));
  EXPECT_FALSE(fold::Same(n, m, table));
  EXPECT_FALSE(fold::Same(MaybeExpr{}, MaybeExpr{}, table));  // unknown is never "the same"
  EXPECT_TRUE(fold::NonNegative(n));
  EXPECT_FALSE(fold::NonNegative(Expr::Constant(-1)));
  EXPECT_FALSE(fold::NonNegative(fold::Sub(n, m)));
}

}  // namespace
}  // namespace opscope::expr
