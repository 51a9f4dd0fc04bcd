// A small helper to build ir::Graph values in tests: tensors by name with shapes written as
// integers or dim-expression strings, nodes by op kind with tensor names and attributes.
//
//   GraphBuilder b("mm");
//   b.Dim("k", 128);
//   b.Tensor("x", {"n", "k"}, "f32", ir::Role::kInput);
//   b.Tensor("w", {128, 32}, "f32", ir::Role::kWeight);
//   b.Tensor("y", {"n", 32});
//   b.Node("mm", ir::OpKind::kMatMul, {"x", "w"}, {"y"});
//   ir::Graph g = b.Build();
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "cost/ledger.h"
#include "expr/expr.h"
#include "format/format.h"
#include "ir/graph.h"

namespace opscope::testing {

// One dim of a test shape: an integer or an expression string.
struct D {
  D(int64_t v) : text(std::to_string(v)) {}  // NOLINT: implicit by design
  D(int v) : text(std::to_string(v)) {}      // NOLINT
  D(const char* s) : text(s) {}              // NOLINT
  D(std::string s) : text(std::move(s)) {}   // NOLINT
  std::string text;
};

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "test") { g_.name = std::move(name); }

  GraphBuilder& Dim(const std::string& symbol, int64_t value) {
    g_.dims.emplace_back(g_.symbols.Intern(symbol), value);
    return *this;
  }

  ir::TensorId Tensor(const std::string& name, std::vector<D> shape,
                      const std::string& format = "f32",
                      ir::Role role = ir::Role::kActivation) {
    ir::Tensor t;
    t.name = name;
    for (const D& d : shape) {
      auto e = expr::Expr::Parse(d.text, g_.symbols);
      EXPECT_TRUE(e.has_value()) << "bad test dim '" << d.text << "' of " << name;
      t.shape.push_back(e ? *e : expr::Expr::Constant(0));
    }
    auto f = format::ParseFormat(format);
    EXPECT_TRUE(f.has_value()) << "bad test format '" << format << "'";
    t.format = f.value_or(format::Format::kF32);
    t.role = role;
    return g_.AddTensor(std::move(t));
  }

  // Shorthands for the roles.
  ir::TensorId Input(const std::string& name, std::vector<D> shape,
                     const std::string& format = "f32") {
    return Tensor(name, std::move(shape), format, ir::Role::kInput);
  }
  ir::TensorId Weight(const std::string& name, std::vector<D> shape,
                      const std::string& format = "f32") {
    return Tensor(name, std::move(shape), format, ir::Role::kWeight);
  }
  ir::TensorId State(const std::string& name, std::vector<D> shape,
                     const std::string& format = "f32") {
    return Tensor(name, std::move(shape), format, ir::Role::kState);
  }
  ir::TensorId Output(const std::string& name, std::vector<D> shape,
                      const std::string& format = "f32") {
    return Tensor(name, std::move(shape), format, ir::Role::kOutput);
  }

  ir::NodeId Node(const std::string& name, ir::OpKind op, const std::vector<std::string>& inputs,
                  const std::vector<std::string>& outputs,
                  std::vector<std::pair<std::string, ir::AttrValue>> attrs = {}) {
    ir::Node n;
    n.name = name;
    n.op = op;
    for (const std::string& s : inputs) n.inputs.push_back(Id(s));
    for (const std::string& s : outputs) n.outputs.push_back(Id(s));
    n.attrs = std::move(attrs);
    return g_.AddNode(std::move(n));
  }

  ir::Node& LastNode() { return g_.nodes.back(); }
  ir::Graph& graph() { return g_; }

  // The graph, after checking it passes ir::Validate (a test bug otherwise).
  ir::Graph Build() const {
    auto ok = ir::Validate(g_);
    EXPECT_TRUE(ok.has_value()) << (ok ? "" : ok.error().message);
    return g_;
  }

 private:
  ir::TensorId Id(const std::string& name) const {
    for (ir::TensorId i = 0; i < g_.tensors.size(); ++i) {
      if (g_.tensors[i].name == name) return i;
    }
    ADD_FAILURE() << "test graph has no tensor '" << name << "'";
    return 0;
  }

  ir::Graph g_;
};

// Builds the ledger and fails the test when it is an error.
inline cost::Ledger MustLedger(const ir::Graph& g, cost::Workload w = {}) {
  auto l = cost::BuildLedger(g, w);
  EXPECT_TRUE(l.has_value()) << (l ? "" : l.error().message);
  return l ? std::move(*l) : cost::Ledger{};
}

}  // namespace opscope::testing
