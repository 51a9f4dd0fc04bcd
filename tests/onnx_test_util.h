// Builds small ONNX models in memory for the ONNX importer tests (no torch, no files), and
// imports + costs them through the same path as `opscope analyze`.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "cost/ledger.h"
#include "import/onnx/onnx_import.h"

#include <onnx/onnx_pb.h>

namespace opscope::testing_onnx {

using DimSpec = std::variant<int64_t, std::string>;  // a size, or a dim_param ("" = unnamed)
constexpr int32_t kF32 = onnx::TensorProto::FLOAT;
constexpr int32_t kF16 = onnx::TensorProto::FLOAT16;
constexpr int32_t kI64 = onnx::TensorProto::INT64;
constexpr int32_t kI8 = onnx::TensorProto::INT8;
constexpr int32_t kU8 = onnx::TensorProto::UINT8;
constexpr int32_t kBool = onnx::TensorProto::BOOL;

inline void SetType(onnx::ValueInfoProto* vi, int32_t dtype, const std::vector<DimSpec>& dims) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  auto* shape = tt->mutable_shape();
  for (const DimSpec& d : dims) {
    auto* dim = shape->add_dim();
    if (const auto* v = std::get_if<int64_t>(&d)) {
      dim->set_dim_value(*v);
    } else if (!std::get<std::string>(d).empty()) {
      dim->set_dim_param(std::get<std::string>(d));
    }
  }
}

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }
  ModelBuilder& Opset(const std::string& domain, int64_t version) {
    auto* o = model_.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
    return *this;
  }
  ModelBuilder& Input(const std::string& name, int32_t dtype, const std::vector<DimSpec>& dims) {
    SetType(graph()->add_input(), dtype, dims);
    graph()->mutable_input()->rbegin()->set_name(name);
    return *this;
  }
  ModelBuilder& Output(const std::string& name) {
    graph()->add_output()->set_name(name);
    return *this;
  }
  // A weight whose data lives in an external file nobody writes.
  ModelBuilder& Weight(const std::string& name, int32_t dtype, const std::vector<int64_t>& dims) {
    auto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(dtype);
    for (int64_t d : dims) t->add_dims(d);
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* e = t->add_external_data();
    e->set_key("location");
    e->set_value("missing.weights.bin");
    return *this;
  }
  // A small int64 initializer with data (shapes, axes).
  ModelBuilder& Ints(const std::string& name, const std::vector<int64_t>& values,
                     bool scalar = false) {
    auto* t = graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(kI64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }
  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "") {
    auto* n = graph()->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op : name);
    if (!domain.empty()) n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  onnx::GraphProto* graph() { return model_.mutable_graph(); }
  onnx::ModelProto& model() { return model_; }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
};

inline void AttrInt(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void AttrInts(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void AttrString(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// An imported graph with its ledger.
struct Costed {
  ir::Graph graph;
  cost::Ledger ledger;

  const ir::Node& node(const std::string& name) const {
    for (const auto& n : graph.nodes) {
      if (n.name == name) return n;
    }
    ADD_FAILURE() << "no node '" << name << "'";
    static const ir::Node none;
    return none;
  }
  const cost::NodeCost& cost(const std::string& name) const {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      if (graph.nodes[i].name == name) return ledger.nodes[i];
    }
    ADD_FAILURE() << "no node '" << name << "'";
    static const cost::NodeCost none;
    return none;
  }
  const ir::Tensor& tensor(const std::string& name) const {
    for (const auto& t : graph.tensors) {
      if (t.name == name) return t;
    }
    ADD_FAILURE() << "no tensor '" << name << "'";
    static const ir::Tensor none;
    return none;
  }
  // The tensor's dims as text ("2,8,32").
  std::string shape(const std::string& name) const {
    std::string s;
    for (const auto& d : tensor(name).shape) {
      if (!s.empty()) s += ",";
      s += d.ToString(graph.symbols);
    }
    return s;
  }
  uint64_t total_flops() const {
    uint64_t f = 0;
    for (const auto& c : ledger.nodes) f += c.flops;
    return f;
  }
};

inline Result<Costed> ImportAndCost(const std::string& bytes, const import::DimBindings& dims = {}) {
  auto g = import::ImportOnnxBytes(bytes, "test.onnx", dims);
  if (!g) return std::unexpected(g.error());
  cost::Workload w;
  w.bindings = dims;
  auto l = cost::BuildLedger(*g, w);
  if (!l) return std::unexpected(l.error());
  return Costed{std::move(*g), std::move(*l)};
}

}  // namespace opscope::testing_onnx
