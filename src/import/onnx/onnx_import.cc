// The ONNX importer: opset checks, dim binding, the ONNX library's shape inference, opscope's
// own shape rules, op mapping and control flow (see onnx_import.h and docs/onnx.md).
#include "import/onnx/onnx_import.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "format/format.h"
#include "import/onnx/onnx_ops.h"
#include "import/onnx/onnx_order.h"
#include "import/onnx/onnx_reader.h"
#include "import/onnx/onnx_shapes.h"
#include "support/checked_math.h"
#include "support/utf8.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

namespace opscope::import {
namespace {

using expr::Expr;
using onnx_ops::Rule;
using onnx_shapes::Dim;
using onnx_shapes::Info;

// Opset versions whose operator semantics the shape rules follow.
constexpr int64_t kMaxDefaultOpset = 21;
constexpr int64_t kMaxMlOpset = 5;

std::string Domain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

std::optional<format::Format> FormatOf(int32_t dtype) {
  using F = format::Format;
  switch (dtype) {
    case 1: return F::kF32;
    case 2: return F::kUint8;
    case 3: return F::kInt8;
    case 4: return F::kInt16;   // UINT16: same bytes as int16
    case 5: return F::kInt16;
    case 6: return F::kInt32;
    case 7: return F::kInt64;
    case 9: return F::kBool;
    case 10: return F::kF16;
    case 11: return F::kF64;
    case 12: return F::kInt32;  // UINT32
    case 13: return F::kInt64;  // UINT64
    case 16: return F::kBf16;
    case 17: case 18: return F::kFp8E4m3;  // FLOAT8E4M3FN, FLOAT8E4M3FNUZ
    case 19: case 20: return F::kFp8E5m2;  // FLOAT8E5M2, FLOAT8E5M2FNUZ
    default: return std::nullopt;          // STRING, COMPLEX*, 4-bit, undefined
  }
}

std::string DtypeName(int32_t dtype) {
  const auto& d = onnx::TensorProto::DataType_descriptor();
  if (const auto* v = d->FindValueByNumber(dtype)) return v->name();
  return std::to_string(dtype);
}

class Importer {
 public:
  Importer(std::string origin, const ImportOptions& options, bool library_inference)
      : origin_(std::move(origin)), library_inference_(library_inference) {
    for (const auto& [name, value] : options.dims) {
      bound_[name] = value;
      dim_order_.push_back(name);
    }
    for (const InputValue& v : options.inputs) {
      input_values_[v.name] = &v;
      input_order_.push_back(&v);
    }
  }

  Result<ir::Graph> Run(onnx::ModelProto& model);
  // False when some tensor's shape stayed unknown (then the library's inference may help).
  bool complete() const { return complete_; }

 private:
  struct Entry {
    int64_t tensor = -1;   // a materialized tensor
    int64_t pending = -1;  // an initializer not yet used by any node
  };
  struct Scope {
    const Scope* parent = nullptr;
    std::unordered_map<std::string, Entry> names;
    const Entry* Find(const std::string& name) const {
      for (const Scope* s = this; s != nullptr; s = s->parent) {
        auto it = s->names.find(name);
        if (it != s->names.end()) return &it->second;
      }
      return nullptr;
    }
  };
  struct Pending {
    std::string name;
    Info info;
    int64_t tensor = -1;
  };
  struct Ctx {
    std::string prefix;       // "<if node>/" inside inlined subgraphs
    uint64_t repeat = 1;      // a loop body's trip count
    std::string unresolved;   // set inside branches and bodies that cannot be resolved
  };
  using TypeMap = std::unordered_map<std::string, const onnx::TypeProto*>;

  std::string Where() const { return origin_; }
  std::unexpected<Error> Bad(const std::string& what) const {
    return MakeError(origin_ + ": " + what);
  }
  static std::string NodeLabel(const std::string& name, const onnx::NodeProto& n) {
    return "node '" + name + "' (" + (n.domain().empty() ? "" : n.domain() + ".") + n.op_type() + ")";
  }

  Result<void> CheckOpsets(const onnx::ModelProto& m);
  void CollectParams(const onnx::GraphProto& g, bool main_graph);
  void SubstituteBindings(onnx::GraphProto& g);
  void RunOnnxInference(onnx::ModelProto& m);

  Dim SymbolDim(const std::string& name) {
    const expr::SymbolId id = g_.symbols.Intern(name);
    if (auto it = bound_.find(name); it != bound_.end()) return Expr::Constant(it->second);
    return Expr::Symbol(id);
  }
  Result<Info> InfoFromType(const onnx::TypeProto& t, const std::string& name, bool graph_input);
  Info Merge(const std::string& node, std::optional<Info> mine, std::optional<Info> theirs);

  ir::TensorId NewTensor(const std::string& name, Info info, ir::Role role, std::string why = {});
  static std::string Uniquify(const std::string& name, std::unordered_set<std::string>& used,
                              std::unordered_map<std::string, int64_t>& next);
  std::string UniqueTensorName(const std::string& name);
  std::string UniqueNodeName(const std::string& name);
  ir::TensorId Use(const Entry& e);

  Result<void> ApplyInputValue(const InputValue& v, const std::string& input, Info& info) const;
  Result<void> FitInputShape(const InputValue& v, const std::string& opt, Info& info) const;
  struct Deciders {
    std::vector<std::string> inputs, dims;  // graph inputs with no value, unbound dims
  };
  Deciders ConditionDeciders(ir::TensorId cond) const;
  Result<void> CheckOptionNames(const onnx::GraphProto& main) const;
  std::string DimNames() const;
  std::string UnknownConditionReason(const onnx::NodeProto& n, const std::string& name, ir::TensorId cond, bool warn);
  Result<void> CheckUtf8();
  Result<void> CheckDivisorAttrs(const onnx::GraphProto& g) const;
  static void PinKernelShapes(onnx::GraphProto& g,
                              std::unordered_map<std::string, std::vector<int64_t>> shapes);
  Result<void> ImportGraph(const onnx::GraphProto& gp, Scope& scope, const Ctx& ctx,
                           bool main_graph);
  Result<void> ImportNode(const onnx::NodeProto& n, size_t index, Scope& scope,
                          const TypeMap& types, const Ctx& ctx,
                          const std::unordered_set<std::string>& later);
  Result<void> ImportIf(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                        const TypeMap& types, const Ctx& ctx);
  Result<void> ImportLoop(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                          const TypeMap& types, const Ctx& ctx, bool scan);
  // The type a graph declares for a tensor (value_info or a graph output), as an Info; nothing
  // when it declares none or the declaration does not read.
  std::optional<Info> DeclaredInfo(const TypeMap& types, const std::string& tensor) {
    auto it = types.find(tensor);
    if (it == types.end()) return std::nullopt;
    auto t = InfoFromType(*it->second, tensor, false);
    if (!t) return std::nullopt;
    return std::move(*t);
  }

  // Emits one node whose outputs are new tensors named after `outputs` (ONNX names).
  ir::NodeId Emit(const std::string& name, ir::OpKind kind, const std::string& source_op,
                  const onnx::NodeProto* attrs_from, std::vector<ir::TensorId> inputs,
                  const Ctx& ctx);
  void AddOutput(ir::NodeId node, Scope& scope, const std::string& onnx_name, const Ctx& ctx,
                 Info info, const std::string& why);
  void MarkUnresolved(size_t from_node, const std::string& why);
  void Finalize();

  std::string origin_;
  bool library_inference_ = false;
  bool complete_ = true;
  std::unordered_map<std::string, int64_t> bound_;
  std::vector<std::string> dim_order_;  // --dim names in command-line order
  std::unordered_map<std::string, const InputValue*> input_values_;
  std::vector<const InputValue*> input_order_;  // --input values in command-line order
  std::unordered_set<std::string> warned_;  // inputs and dims already warned about
  std::unordered_set<std::string> file_params_;
  std::unordered_set<std::string> input_params_;  // dim names declared on graph inputs
  std::vector<std::string> declared_dims_;  // every dim name the file declares, in file order
  std::unordered_set<std::string> assumption_set_;
  std::unordered_map<std::string, int64_t> opsets_;
  std::string onnx_errors_;  // the library's inference errors, one per line
  ir::Graph g_;
  std::vector<Info> infos_;             // parallel to g_.tensors
  std::vector<std::string> why_;        // why a tensor's shape is unknown (parallel)
  std::vector<int64_t> producer_;       // the node writing each tensor, -1 for leaves (parallel)
  std::vector<Pending> pending_;
  std::unordered_set<std::string> node_names_, tensor_names_;
  std::unordered_map<std::string, int64_t> node_suffix_, tensor_suffix_;
};

// ---- Setup ------------------------------------------------------------------------------

Result<void> Importer::CheckOpsets(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import()) {
    const std::string d = Domain(o.domain());
    const int64_t v = o.version();
    if (v <= 0) return Bad("opset version " + std::to_string(v) + " of domain '" + o.domain() + "' is not valid");
    if (d.empty() && v > kMaxDefaultOpset) {
      return Bad("opset " + std::to_string(v) + " of the default ONNX domain is not known (opscope "
                 "knows opsets 1-" + std::to_string(kMaxDefaultOpset) + ")");
    }
    if (d == "ai.onnx.ml" && v > kMaxMlOpset) {
      return Bad("opset " + std::to_string(v) + " of domain 'ai.onnx.ml' is not known");
    }
    opsets_[d] = v;
  }
  if (!opsets_.contains("")) {
    if (m.ir_version() >= 3) return Bad("the model imports no opset of the default ONNX domain");
    opsets_[""] = 1;
  }
  return {};
}

// Interns every dim name the file declares (before bound dims are substituted), so the
// ledger knows them: dim_params anywhere, and "INPUT:AXIS" for unnamed graph-input dims.
void Importer::CollectParams(const onnx::GraphProto& g, bool main_graph) {
  auto add = [&](const onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type()) return;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      if (d.has_dim_param() && !d.dim_param().empty()) {
        if (file_params_.insert(d.dim_param()).second) declared_dims_.push_back(d.dim_param());
        g_.symbols.Intern(d.dim_param());
      }
    }
  };
  std::unordered_set<std::string> inits;
  for (const auto& t : g.initializer()) inits.insert(t.name());
  for (const auto& vi : g.input()) {
    add(vi);
    if (main_graph && vi.type().has_tensor_type()) {
      for (const auto& d : vi.type().tensor_type().shape().dim()) {
        if (d.has_dim_param() && !d.dim_param().empty()) input_params_.insert(d.dim_param());
      }
    }
    if (!main_graph || inits.contains(vi.name()) || !vi.type().has_tensor_type()) continue;
    const auto& shape = vi.type().tensor_type().shape();
    for (int i = 0; i < shape.dim_size(); ++i) {
      const auto& d = shape.dim(i);
      if (!d.has_dim_value() && (!d.has_dim_param() || d.dim_param().empty())) {
        declared_dims_.push_back(vi.name() + ":" + std::to_string(i));
        g_.symbols.Intern(declared_dims_.back());
      }
    }
  }
  for (const auto& vi : g.output()) add(vi);
  for (const auto& vi : g.value_info()) add(vi);
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectParams(a.g(), false);
      for (const auto& sg : a.graphs()) CollectParams(sg, false);
    }
  }
}

// Writes bound dims into the graph's declared shapes so the library's inference sees them.
void Importer::SubstituteBindings(onnx::GraphProto& g) {
  auto fix = [&](onnx::ValueInfoProto& vi, bool input) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    auto* shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int i = 0; i < shape->dim_size(); ++i) {
      auto* d = shape->mutable_dim(i);
      if (d->has_dim_value()) continue;
      const std::string key = d->has_dim_param() && !d->dim_param().empty()
                                  ? d->dim_param()
                                  : (input ? vi.name() + ":" + std::to_string(i) : std::string());
      if (key.empty()) continue;
      if (auto it = bound_.find(key); it != bound_.end()) d->set_dim_value(it->second);
    }
  };
  for (auto& vi : *g.mutable_input()) fix(vi, true);
  for (auto& vi : *g.mutable_output()) fix(vi, false);
  for (auto& vi : *g.mutable_value_info()) fix(vi, false);
}

void Importer::RunOnnxInference(onnx::ModelProto& m) {
  // error_mode 1: per-node errors are collected and thrown together after every node ran;
  // the value_info inferred so far stays in the graph.
  try {
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 1, true));
  } catch (const std::exception& e) {
    onnx_errors_ = e.what();
  }
}

Result<Info> Importer::InfoFromType(const onnx::TypeProto& t, const std::string& name,
                                    bool graph_input) {
  Info info;
  if (!t.has_tensor_type()) return info;
  info.dtype = t.tensor_type().elem_type();
  if (!t.tensor_type().has_shape()) return info;
  info.rank_known = true;
  const auto& shape = t.tensor_type().shape();
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& d = shape.dim(i);
    if (d.has_dim_value()) {
      if (d.dim_value() < 0) {
        return Bad("tensor '" + name + "' has the negative dim " + std::to_string(d.dim_value()));
      }
      info.dims.push_back(Expr::Constant(d.dim_value()));
    } else if (d.has_dim_param() && !d.dim_param().empty() && file_params_.contains(d.dim_param())) {
      info.dims.push_back(SymbolDim(d.dim_param()));
    } else if (graph_input) {
      info.dims.push_back(SymbolDim(name + ":" + std::to_string(i)));
    } else {
      info.dims.push_back(std::nullopt);  // unknown, or a name the library made up
    }
  }
  return info;
}

// Per dim: a constant beats an expression, opscope's expression beats the file's opaque name.
Info Importer::Merge(const std::string& node, std::optional<Info> mine, std::optional<Info> theirs) {
  if (!mine || !mine->rank_known) {
    if (!theirs) return mine ? *mine : Info{};
    if (mine && theirs->dtype == 0) theirs->dtype = mine->dtype;
    return *theirs;
  }
  if (!theirs || !theirs->rank_known || theirs->dims.size() != mine->dims.size()) {
    if (theirs && theirs->rank_known && mine->dims.size() != theirs->dims.size()) {
      g_.assumptions.push_back("node '" + node + "': opscope infers rank " +
                               std::to_string(mine->dims.size()) + ", the model says " +
                               std::to_string(theirs->dims.size()) + "; using opscope's");
    }
    if (mine->dtype == 0 && theirs) mine->dtype = theirs->dtype;
    return *mine;
  }
  Info out = *mine;
  if (out.dtype == 0) out.dtype = theirs->dtype;
  for (size_t i = 0; i < out.dims.size(); ++i) {
    const Dim& a = mine->dims[i];
    const Dim& b = theirs->dims[i];
    const bool ac = a && a->IsConstant(), bc = b && b->IsConstant();
    if (ac && bc && a->constant() != b->constant()) {
      g_.assumptions.push_back("node '" + node + "': opscope infers dim " + std::to_string(i) +
                               " = " + std::to_string(a->constant()) + ", the model says " +
                               std::to_string(b->constant()) + "; using the model's");
      out.dims[i] = b;
    } else if (ac) {
      out.dims[i] = a;
    } else if (bc || !a || (b && b->IsSymbol() && input_params_.contains(b->ToString(g_.symbols)))) {
      out.dims[i] = b;  // a constant, or a dim named on the graph inputs: simplest to bind
    }
  }
  return out;
}

// Protobuf does not check proto2 strings, and every name reaches the JSON report, which must
// be valid UTF-8: reject a name (tensor, node, op, dim, string attribute) that is not.
Result<void> Importer::CheckUtf8() {
  auto bad = [&](const std::string& what, const std::string& text) {
    return Bad(what + " '" + EscapeBytes(text) + "' is not valid UTF-8");
  };
  for (const ir::Tensor& t : g_.tensors) {
    if (!IsValidUtf8(t.name)) return bad("tensor name", t.name);
  }
  for (const ir::Node& n : g_.nodes) {
    if (!IsValidUtf8(n.name)) return bad("node name", n.name);
    if (!IsValidUtf8(n.source_op)) return bad("node '" + EscapeBytes(n.name) + "': op", n.source_op);
    for (const auto& [key, value] : n.attrs) {
      if (!IsValidUtf8(key)) return bad("node '" + n.name + "': attribute name", key);
      const auto* text = std::get_if<std::string>(&value);
      if (text != nullptr && !IsValidUtf8(*text)) {
        return bad("node '" + n.name + "': attribute '" + key + "'", *text);
      }
    }
  }
  for (size_t i = 0; i < g_.symbols.size(); ++i) {
    const std::string& s = g_.symbols.Name(static_cast<expr::SymbolId>(i));
    if (!IsValidUtf8(s)) return bad("dim", s);
  }
  for (const std::string& a : g_.assumptions) {
    if (!IsValidUtf8(a)) return bad("name in", a);
  }
  if (!IsValidUtf8(g_.name)) return bad("file name", g_.name);
  return {};
}

// The ONNX library's shape inference divides by these attributes unchecked (Debian's libonnx:
// convPoolShapeInference raises SIGFPE on strides 0), and a zero or negative value is not a
// valid model anyway: checked first, in every subgraph (protobuf bounds the nesting depth).
Result<void> Importer::CheckDivisorAttrs(const onnx::GraphProto& g) const {
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      const std::string& key = a.name();
      const bool list = key == "strides" || key == "dilations" || key == "kernel_shape";
      const bool scalar = key == "blocksize" || key == "group";
      auto bad = [&](int64_t v) {
        return Bad(NodeLabel(n.name().empty() ? n.op_type() : n.name(), n) + ": attribute '" +
                   key + "' holds " + std::to_string(v) + " (must be positive)");
      };
      if (list) {
        for (int64_t v : a.ints()) {
          if (v <= 0) return bad(v);
        }
      }
      if (scalar && a.has_i() && a.i() <= 0) return bad(a.i());
      if (a.has_g()) {
        if (auto ok = CheckDivisorAttrs(a.g()); !ok) return ok;
      }
      for (const auto& sub : a.graphs()) {
        if (auto ok = CheckDivisorAttrs(sub); !ok) return ok;
      }
    }
  }
  return {};
}

// The ONNX library's convolution shape inference takes the kernel from W's shape when the node
// has no kernel_shape, then indexes X's per-axis attributes with it unchecked (Debian's libonnx
// 1.12, convPoolShapeInference: a W of more spatial axes than X reads past `dilations`,
// SIGSEGV). Writing kernel_shape out as W's spatial dims — the value the operator defaults it
// to — lets the library check it against X's rank and report a mismatch as an error. W's shape
// is known here when it is an initializer or a declared value with every dim fixed (`shapes`,
// the enclosing graphs' too), or one of those through DequantizeLinear, QuantizeLinear, Cast or
// Identity; otherwise the library stops at its unknown dims itself.
void Importer::PinKernelShapes(onnx::GraphProto& g,
                               std::unordered_map<std::string, std::vector<int64_t>> shapes) {
  for (const auto& t : g.initializer()) shapes[t.name()] = {t.dims().begin(), t.dims().end()};
  auto declared = [&](const onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    std::vector<int64_t> dims;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return;
      dims.push_back(d.dim_value());
    }
    shapes.try_emplace(vi.name(), std::move(dims));
  };
  for (const auto& vi : g.input()) declared(vi);
  for (const auto& vi : g.value_info()) declared(vi);
  for (auto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) PinKernelShapes(*a.mutable_g(), shapes);
      for (auto& sub : *a.mutable_graphs()) PinKernelShapes(sub, shapes);
    }
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    const std::string& op = n.op_type();
    // A weight passed through an op that keeps its shape (a quantized model's DequantizeLinear)
    // keeps the shape known, in file order.
    if ((op == "DequantizeLinear" || op == "QuantizeLinear" || op == "Cast" || op == "Identity") &&
        n.input_size() > 0 && n.output_size() > 0) {
      if (auto in = shapes.find(n.input(0)); in != shapes.end()) {
        shapes.try_emplace(n.output(0), in->second);
      }
      continue;
    }
    const int w = op == "QLinearConv" ? 3
                  : op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" ? 1
                                                                                   : -1;
    if (w < 0 || n.input_size() <= w) continue;
    const bool has_kernel = std::any_of(n.attribute().begin(), n.attribute().end(),
                                        [](const auto& a) { return a.name() == "kernel_shape"; });
    auto it = shapes.find(n.input(w));
    if (has_kernel || it == shapes.end() || it->second.size() < 3) continue;
    onnx::AttributeProto* kernel = n.add_attribute();
    kernel->set_name("kernel_shape");
    kernel->set_type(onnx::AttributeProto::INTS);
    for (size_t k = 2; k < it->second.size(); ++k) kernel->add_ints(it->second[k]);
  }
}

// ---- Options -----------------------------------------------------------------------------

bool IsIntegerType(int32_t t) {
  using T = onnx::TensorProto;
  return t == T::INT8 || t == T::INT16 || t == T::INT32 || t == T::INT64 || t == T::UINT8 ||
         t == T::UINT16 || t == T::UINT32 || t == T::UINT64 || t == T::BOOL;
}

bool IsFloatType(int32_t t) {
  using T = onnx::TensorProto;
  return t == T::FLOAT || t == T::DOUBLE || t == T::FLOAT16 || t == T::BFLOAT16 ||
         (t >= 17 && t <= 20);  // FLOAT8E4M3FN .. FLOAT8E5M2FNUZ (newer than this libonnx)
}

// Every --input names a graph input (not an initializer), before anything is imported.
Result<void> Importer::CheckOptionNames(const onnx::GraphProto& main) const {
  std::unordered_set<std::string> inits;
  for (const auto& t : main.initializer()) inits.insert(t.name());
  std::unordered_set<std::string> inputs;
  std::string list;
  for (const auto& vi : main.input()) {
    if (inits.contains(vi.name())) continue;
    inputs.insert(vi.name());
    list += (list.empty() ? "'" : ", '") + vi.name() + "'";
  }
  for (const InputValue* v : input_order_) {
    const std::string& name = v->name;
    if (inputs.contains(name)) continue;
    const std::string opt = "option '--input " + name + "=" + v->text + "': ";
    if (inits.contains(name)) return Bad(opt + "'" + name + "' is an initializer (a weight), not a graph input");
    return Bad(opt + "the model has no input named '" + name + "'" +
               (list.empty() ? std::string(" (it has no graph inputs)") : "; its inputs: " + list));
  }
  return {};
}

// "its dims: 'batch', 'input:1'" — the names --dim takes, in file order (unnamed dims of
// graph inputs as INPUT:AXIS).
std::string Importer::DimNames() const {
  if (declared_dims_.empty()) return "the model declares no symbolic dims (all its dims are fixed)";
  constexpr size_t kShown = 30;
  std::string list;
  for (size_t i = 0; i < declared_dims_.size() && i < kShown; ++i) {
    list += (i == 0 ? "'" : ", '") + declared_dims_[i] + "'";
  }
  if (declared_dims_.size() > kShown) list += ", ... (" + std::to_string(declared_dims_.size()) + " in all)";
  return "its dims: " + list + " (unnamed dims of graph inputs are INPUT:AXIS)";
}

// Checks a --input value against the input's declared type and shape and makes it the
// input's contents. A 1-D input of symbolic length takes the list's length.
Result<void> Importer::ApplyInputValue(const InputValue& v, const std::string& input, Info& info) const {
  const std::string opt = "option '--input " + v.name + "=" + v.text + "': input '" + input + "'";
  const int32_t t = info.dtype;
  if (!IsIntegerType(t) && !IsFloatType(t)) {
    return Bad(opt + " holds " + DtypeName(t) + ", which --input cannot give");
  }
  if (v.is_float && IsIntegerType(t)) {
    return Bad(opt + " holds " + DtypeName(t) + "; '" + v.text + "' is not an integer");
  }
  if (t == onnx::TensorProto::BOOL) {
    for (int64_t x : v.ints) {
      if (x != 0 && x != 1) return Bad(opt + " holds BOOL; give 0 or 1");
    }
  }
  if (auto ok = FitInputShape(v, opt, info); !ok) return ok;
  std::vector<Dim> value;
  if (v.is_float) {
    // Only whole numbers take part in shape and condition arithmetic; others stay unknown.
    const bool whole = std::floor(v.real) == v.real && std::fabs(v.real) < 9.0e15;
    value.push_back(whole ? Dim(Expr::Constant(static_cast<int64_t>(v.real))) : std::nullopt);
  } else {
    for (int64_t x : v.ints) value.push_back(Expr::Constant(x));
  }
  info.value = std::move(value);
  return {};
}

// A scalar fits a rank-0 (or all-1) input, a list a 1-D input of its length; a 1-D input of
// symbolic length takes the list's length, an input of unknown rank the value's.
Result<void> Importer::FitInputShape(const InputValue& v, const std::string& opt, Info& info) const {
  const int64_t n = v.is_float ? 1 : static_cast<int64_t>(v.ints.size());
  auto shape = [&] {
    std::string text;
    for (const Dim& d : info.dims) text += (text.empty() ? "" : ", ") + onnx_shapes::DimString(d, g_.symbols);
    return "[" + text + "]";
  };
  if (!info.rank_known) {
    info.rank_known = true;
    info.dims.clear();
    if (v.list) info.dims.push_back(Expr::Constant(n));
  } else if (v.list) {
    if (info.dims.size() != 1) return Bad(opt + " has shape " + shape() + "; a list gives a 1-D input");
    if (auto c = expr::fold::ConstantOf(info.dims[0]); c && *c != n) {
      return Bad(opt + " holds " + std::to_string(*c) + " elements; the list has " + std::to_string(n));
    }
    info.dims[0] = Expr::Constant(n);
  } else {
    for (const Dim& d : info.dims) {
      if (!expr::fold::IsConstant(d, 1)) return Bad(opt + " has shape " + shape() + "; a scalar gives a one-element input");
    }
  }
  return {};
}

// ---- Tensors and nodes ------------------------------------------------------------------

// "name", then "name#2", "name#3", ...; the next suffix per name is remembered, so a file with
// n nodes of one name costs O(n), not O(n^2).
std::string Importer::Uniquify(const std::string& name, std::unordered_set<std::string>& used,
                               std::unordered_map<std::string, int64_t>& next) {
  if (used.insert(name).second) return name;
  int64_t& k = next.try_emplace(name, 2).first->second;
  std::string n;
  do {
    n = name + "#" + std::to_string(k++);
  } while (!used.insert(n).second);
  return n;
}

std::string Importer::UniqueTensorName(const std::string& name) {
  return Uniquify(name, tensor_names_, tensor_suffix_);
}

std::string Importer::UniqueNodeName(const std::string& name) {
  return Uniquify(name, node_names_, node_suffix_);
}

ir::TensorId Importer::NewTensor(const std::string& name, Info info, ir::Role role, std::string why) {
  ir::Tensor t;
  t.name = UniqueTensorName(name);
  t.role = role;
  infos_.push_back(std::move(info));
  why_.push_back(std::move(why));
  producer_.push_back(-1);
  return g_.AddTensor(std::move(t));
}

ir::TensorId Importer::Use(const Entry& e) {
  if (e.tensor >= 0) return static_cast<ir::TensorId>(e.tensor);
  Pending& p = pending_[static_cast<size_t>(e.pending)];
  if (p.tensor < 0) p.tensor = NewTensor(p.name, p.info, ir::Role::kWeight);
  return static_cast<ir::TensorId>(p.tensor);
}

ir::NodeId Importer::Emit(const std::string& name, ir::OpKind kind, const std::string& source_op,
                          const onnx::NodeProto* attrs_from, std::vector<ir::TensorId> inputs,
                          const Ctx& ctx) {
  ir::Node n;
  n.name = UniqueNodeName(name);
  n.op = kind;
  n.source_op = source_op;
  n.inputs = std::move(inputs);
  n.repeat = ctx.repeat;
  if (attrs_from != nullptr) {
    for (const auto& a : attrs_from->attribute()) {
      switch (a.type()) {
        case onnx::AttributeProto::INT: n.attrs.emplace_back(a.name(), a.i()); break;
        case onnx::AttributeProto::FLOAT: n.attrs.emplace_back(a.name(), static_cast<double>(a.f())); break;
        case onnx::AttributeProto::STRING: n.attrs.emplace_back(a.name(), a.s()); break;
        case onnx::AttributeProto::INTS:
          n.attrs.emplace_back(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end()));
          break;
        default: break;  // tensors, graphs, float and string lists: not used by any rule
      }
    }
  }
  if (!ctx.unresolved.empty()) n.attrs.emplace_back("unresolved_reason", ctx.unresolved);
  return g_.AddNode(std::move(n));
}

void Importer::AddOutput(ir::NodeId node, Scope& scope, const std::string& onnx_name,
                         const Ctx& ctx, Info info, const std::string& why) {
  const ir::TensorId t = NewTensor(ctx.prefix + onnx_name, std::move(info), ir::Role::kActivation, why);
  g_.nodes[node].outputs.push_back(t);
  producer_[t] = node;
  scope.names[onnx_name] = Entry{t, -1};
}

void Importer::MarkUnresolved(size_t from_node, const std::string& why) {
  for (size_t i = from_node; i < g_.nodes.size(); ++i) {
    ir::Node& n = g_.nodes[i];
    n.repeat = 1;
    if (!n.FindAttr("unresolved_reason")) n.attrs.emplace_back("unresolved_reason", why);
  }
}

// ---- Graph walk -------------------------------------------------------------------------

Result<void> Importer::ImportGraph(const onnx::GraphProto& gp, Scope& scope, const Ctx& ctx,
                                   bool main_graph) {
  TypeMap types;
  for (const auto& vi : gp.value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : gp.output()) types[vi.name()] = &vi.type();

  std::unordered_set<std::string> inits;
  for (const auto& t : gp.initializer()) {
    if (scope.names.contains(t.name())) return Bad("initializer '" + t.name() + "' is defined twice");
    auto info = onnx_shapes::InfoFromTensor(t);
    if (!info) return Bad("initializer: " + info.error().message);
    pending_.push_back(Pending{ctx.prefix + t.name(), std::move(*info), -1});
    scope.names[t.name()] = Entry{-1, static_cast<int64_t>(pending_.size() - 1)};
    inits.insert(t.name());
  }
  for (const auto& st : gp.sparse_initializer()) {
    Info info;
    info.rank_known = true;
    info.dtype = st.values().data_type();
    for (int64_t d : st.dims()) info.dims.push_back(Expr::Constant(d));
    pending_.push_back(Pending{ctx.prefix + st.values().name(), std::move(info), -1});
    scope.names[st.values().name()] = Entry{-1, static_cast<int64_t>(pending_.size() - 1)};
    g_.assumptions.push_back("sparse initializer '" + st.values().name() + "' counted as dense");
  }
  if (main_graph) {
    for (const auto& vi : gp.input()) {
      if (inits.contains(vi.name())) continue;  // IR < 4: initializers listed as inputs
      if (scope.names.contains(vi.name())) return Bad("graph input '" + vi.name() + "' is declared twice");
      auto info = InfoFromType(vi.type(), vi.name(), true);
      if (!info) return std::unexpected(info.error());
      if (auto v = input_values_.find(vi.name()); v != input_values_.end()) {
        if (auto ok = ApplyInputValue(*v->second, vi.name(), *info); !ok) return ok;
      }
      std::string why;
      if (!info->rank_known) why = "graph input '" + vi.name() + "' declares no shape";
      const ir::TensorId t = NewTensor(vi.name(), std::move(*info), ir::Role::kInput, why);
      scope.names[vi.name()] = Entry{t, -1};
    }
  }
  std::unordered_set<std::string> later;
  for (const auto& n : gp.node()) {
    for (const auto& o : n.output()) {
      if (o.empty()) continue;  // an omitted optional output
      if (!later.insert(o).second || scope.names.contains(o)) {
        return Bad(NodeLabel(ctx.prefix + n.name(), n) + ": output '" + o +
                   "' is already defined (ONNX names are assigned once)");
      }
    }
  }
  for (int i = 0; i < gp.node_size(); ++i) {
    if (auto ok = ImportNode(gp.node(i), static_cast<size_t>(i), scope, types, ctx, later); !ok) {
      return ok;
    }
  }
  if (main_graph) {
    for (const auto& vi : gp.output()) {
      const Entry* e = scope.Find(vi.name());
      if (e == nullptr) return Bad("graph output '" + vi.name() + "' is not produced by any node");
      const ir::TensorId t = Use(*e);
      if (g_.tensors[t].role == ir::Role::kActivation) g_.tensors[t].role = ir::Role::kOutput;
    }
  }
  return {};
}

Result<void> Importer::ImportNode(const onnx::NodeProto& n, size_t index, Scope& scope,
                                  const TypeMap& types, const Ctx& ctx,
                                  const std::unordered_set<std::string>& later) {
  const std::string domain = Domain(n.domain());
  const std::string name = ctx.prefix + (n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name());
  const std::string label = NodeLabel(name, n);
  const std::string source_op = domain.empty() ? n.op_type() : domain + "." + n.op_type();

  // Inputs: every named input must exist already (ONNX graphs are topologically sorted).
  std::vector<const Entry*> entries;
  std::vector<const Info*> infos;
  for (const auto& in : n.input()) {
    if (in.empty()) {
      entries.push_back(nullptr);
      infos.push_back(nullptr);
      continue;
    }
    const Entry* e = scope.Find(in);
    if (e == nullptr) {
      if (later.contains(in)) {
        return Bad(label + ": input '" + in + "' is produced by a later node (the graph is not "
                   "topologically sorted)");
      }
      return Bad(label + ": input '" + in + "' is not a graph input, an initializer or the "
                 "output of an earlier node");
    }
    entries.push_back(e);
    infos.push_back(e->tensor >= 0 ? &infos_[static_cast<size_t>(e->tensor)]
                                   : &pending_[static_cast<size_t>(e->pending)].info);
  }
  const auto opset_it = opsets_.find(domain);
  if (opset_it == opsets_.end()) {
    return Bad(label + ": its domain '" + n.domain() + "' is not imported by the model");
  }

  if (domain.empty() && n.op_type() == "Constant") {
    auto info = onnx_shapes::InfoFromConstantNode(n);
    if (!info) return Bad(label + ": " + info.error().message);
    if (n.output_size() != 1) return Bad(label + ": needs one output");
    const ir::TensorId t = NewTensor(ctx.prefix + n.output(0), std::move(*info), ir::Role::kConstant);
    scope.names[n.output(0)] = Entry{t, -1};
    return {};
  }

  const onnx_ops::OnnxOp* row = onnx_ops::FindOp(domain, n.op_type());
  if (row != nullptr && (row->rule == Rule::kIf)) return ImportIf(n, name, scope, types, ctx);
  if (row != nullptr && (row->rule == Rule::kLoop || row->rule == Rule::kScan)) {
    return ImportLoop(n, name, scope, types, ctx, row->rule == Rule::kScan);
  }

  // Output shapes: opscope's rule, merged with the file's / the library's.
  std::optional<std::vector<Info>> mine;
  std::string mine_error;
  if (row != nullptr) {
    std::vector<std::string> notes;
    onnx_shapes::NodeView view{n, infos, opset_it->second, &g_.symbols, &notes};
    auto r = onnx_shapes::InferOutputs(row->rule, view);
    for (std::string& note : notes) {
      if (assumption_set_.insert(note).second) g_.assumptions.push_back(std::move(note));
    }
    if (r) {
      mine = std::move(*r);
    } else {
      mine_error = r.error().message;
    }
  } else {
    mine_error = "no shape rule for an unknown op";
  }
  std::vector<Info> outs;
  std::vector<std::string> whys;
  for (int i = 0; i < n.output_size(); ++i) {
    std::optional<Info> theirs;
    if (auto it = types.find(n.output(i)); it != types.end()) {
      auto t = InfoFromType(*it->second, n.output(i), false);
      if (!t) return std::unexpected(t.error());
      theirs = std::move(*t);
    }
    std::optional<Info> m;
    if (mine && static_cast<size_t>(i) < mine->size()) m = (*mine)[static_cast<size_t>(i)];
    outs.push_back(Merge(name, std::move(m), std::move(theirs)));
    std::string why;
    if (!outs.back().AllDimsKnown()) {
      why = "shape inference failed at " + label + ": " +
            (mine_error.empty() ? std::string("some dims stay unknown") : mine_error);
      // The library's message for this node, when it had one.
      const std::string key = "node name: " + n.name() + ")";
      if (!n.name().empty()) {
        if (auto p = onnx_errors_.find(key); p != std::string::npos) {
          auto e = onnx_errors_.find('\n', p);
          size_t from = p + key.size();
          while (from < onnx_errors_.size() && (onnx_errors_[from] == ':' || onnx_errors_[from] == ' ')) ++from;
          why += "; ONNX: " + onnx_errors_.substr(from, e == std::string::npos ? std::string::npos : e - from);
        }
      }
    }
    whys.push_back(std::move(why));
  }

  auto in_id = [&](size_t i) -> std::optional<ir::TensorId> {
    if (i >= entries.size() || entries[i] == nullptr) return std::nullopt;
    return Use(*entries[i]);
  };
  auto all_inputs = [&](std::initializer_list<size_t> order) {
    std::vector<ir::TensorId> ids;
    std::vector<bool> used(entries.size(), false);
    for (size_t i : order) {
      if (auto id = in_id(i)) ids.push_back(*id);
      if (i < used.size()) used[i] = true;
    }
    for (size_t i = 0; i < entries.size(); ++i) {
      if (!used[i]) {
        if (auto id = in_id(i)) ids.push_back(*id);
      }
    }
    return ids;
  };
  auto add_outputs = [&](ir::NodeId node, int from, int to) {
    for (int i = from; i < to && i < n.output_size(); ++i) {
      if (n.output(i).empty()) continue;
      AddOutput(node, scope, n.output(i), ctx, outs[static_cast<size_t>(i)], whys[static_cast<size_t>(i)]);
    }
  };
  auto set_attr = [&](ir::NodeId node, const std::string& key, ir::AttrValue v) {
    g_.nodes[node].attrs.emplace_back(key, std::move(v));
  };

  const ir::OpKind kind = row != nullptr ? row->kind : ir::OpKind::kUnknown;
  const Rule rule = row != nullptr ? row->rule : Rule::kNone;
  switch (rule) {
    case Rule::kQLinearMatMul: {
      // MatMul convention: A first, B second; scales and zero points count bytes only.
      const ir::NodeId id = Emit(name, kind, source_op, &n, all_inputs({0, 3}), ctx);
      add_outputs(id, 0, n.output_size());
      return {};
    }
    case Rule::kQLinearConv: {
      const ir::NodeId id = Emit(name, kind, source_op, &n, all_inputs({0, 3, 8}), ctx);
      add_outputs(id, 0, n.output_size());
      return {};
    }
    case Rule::kRnn: {
      // Optional inputs may be absent (""): the cost rule finds B and P by their ONNX slot.
      const ir::NodeId id = Emit(name, kind, source_op, &n, all_inputs({}), ctx);
      std::vector<int64_t> slots;
      for (size_t i = 0; i < entries.size(); ++i) {
        if (entries[i] != nullptr) slots.push_back(static_cast<int64_t>(i));
      }
      set_attr(id, "input_slots", std::move(slots));
      add_outputs(id, 0, n.output_size());
      return {};
    }
    case Rule::kSplit: {
      const ir::NodeId id = Emit(name, kind, source_op, &n, all_inputs({}), ctx);
      // Split along an axis whose leading dims are all 1 yields contiguous pieces: a view.
      bool contiguous = false;
      if (const Info* x = infos.empty() ? nullptr : infos[0]; x != nullptr && x->rank_known) {
        int64_t axis = onnx_shapes::IntAttr(n, "axis").value_or(0);
        if (axis < 0) axis += static_cast<int64_t>(x->dims.size());
        contiguous = axis >= 0;
        for (int64_t i = 0; i < axis && i < static_cast<int64_t>(x->dims.size()); ++i) {
          const Dim& d = x->dims[static_cast<size_t>(i)];
          contiguous = contiguous && d && d->IsConstant() && d->constant() == 1;
        }
      }
      if (contiguous) set_attr(id, "layout", std::string("contiguous"));
      add_outputs(id, 0, n.output_size());
      return {};
    }
    case Rule::kMsFusedMatMul: {
      const ir::NodeId id = Emit(name, kind, source_op, &n, all_inputs({}), ctx);
      if (onnx_shapes::IntAttr(n, "transA").value_or(0) != 0 && !g_.nodes[id].FindAttr("unresolved_reason")) {
        set_attr(id, "unresolved_reason", std::string("FusedMatMul with transA=1 is not modelled"));
      }
      add_outputs(id, 0, n.output_size());
      return {};
    }
    case Rule::kMsSkipNorm: {
      // input + skip (+ bias) is an Add; the norm then reads the sum (the unfused traffic).
      if (entries.size() < 3 || !entries[0] || !entries[1]) return Bad(label + ": needs input, skip and gamma");
      Ctx c = ctx;
      std::vector<ir::TensorId> add_in{*in_id(0), *in_id(1)};
      if (auto b = in_id(4)) add_in.push_back(*b);
      const ir::NodeId add = Emit(name + "/skip_add", ir::OpKind::kAdd, source_op, nullptr, add_in, ctx);
      const std::string sum = n.output_size() > 3 && !n.output(3).empty() ? n.output(3) : n.output(0) + "/skip_sum";
      AddOutput(add, scope, sum, ctx, outs[0], whys[0]);
      std::vector<ir::TensorId> norm_in{g_.nodes[add].outputs[0]};
      for (size_t i : {size_t{2}, size_t{3}}) {
        if (auto id = in_id(i)) norm_in.push_back(*id);
      }
      const ir::NodeId norm = Emit(name, kind, source_op, &n, norm_in, c);
      add_outputs(norm, 0, std::min(n.output_size(), 3));
      return {};
    }
    case Rule::kMsMatMulNBits: {
      const auto bits = onnx_shapes::IntAttr(n, "bits").value_or(4);
      const auto block = onnx_shapes::IntAttr(n, "block_size").value_or(0);
      const auto kk = onnx_shapes::IntAttr(n, "K"), nn = onnx_shapes::IntAttr(n, "N");
      const bool has_zp = entries.size() > 3 && entries[3] != nullptr;
      const bool f16_scales = infos.size() > 2 && infos[2] != nullptr && infos[2]->dtype == onnx::TensorProto::FLOAT16;
      std::optional<format::Format> f;
      if (bits == 4 && block == 128 && f16_scales) f = has_zp ? format::Format::kInt4G128Zp : format::Format::kInt4G128;
      if (bits == 4 && block == 32 && f16_scales && !has_zp) f = format::Format::kQ4_0;
      if (bits == 8 && block == 32 && f16_scales && !has_zp) f = format::Format::kQ8_0;
      const bool untouched = entries.size() > 1 && entries[1] != nullptr && entries[1]->pending >= 0 &&
                             pending_[static_cast<size_t>(entries[1]->pending)].tensor < 0;
      std::vector<ir::TensorId> ins;
      if (f && kk && nn && untouched) {
        // The packed weight, its scales (and zero points) as one [N, K] tensor in the
        // matching format: exactly the same bytes, and the format the roofline understands.
        Pending& p = pending_[static_cast<size_t>(entries[1]->pending)];
        p.info.dims = {Expr::Constant(*nn), Expr::Constant(*kk)};
        p.info.dtype = -static_cast<int32_t>(*f) - 1;  // marks a synthesized format (Finalize)
        ins.push_back(*in_id(0));
        ins.push_back(Use(*entries[1]));
        for (size_t i = 4; i < entries.size(); ++i) {
          if (auto id = in_id(i)) ins.push_back(*id);
        }
        // x [rows, K] · w [N, K]: the Linear convention, blocks along K.
        const ir::NodeId id = Emit(name, ir::OpKind::kLinear, source_op, &n, ins, ctx);
        add_outputs(id, 0, n.output_size());
        return {};
      }
      // No opscope format holds these bits / block / scale / zero-point layout exactly: the
      // node is listed (its packed inputs kept) rather than costed with a near format.
      const ir::NodeId id = Emit(name, ir::OpKind::kUnknown, source_op, &n, all_inputs({}), ctx);
      if (!g_.nodes[id].FindAttr("unresolved_reason")) {
        set_attr(id, "unresolved_reason",
                 "MatMulNBits with bits=" + std::to_string(bits) + ", block_size=" + std::to_string(block) +
                     (f16_scales ? "" : ", non-f16 scales") + (has_zp ? ", zero points" : "") +
                     " has no matching opscope weight format");
      }
      add_outputs(id, 0, n.output_size());
      return {};
    }
    case Rule::kMsAttention: {
      // Packed QKV projection inside the op: a MatMul node, a free split view, then SDPA.
      const auto heads = onnx_shapes::IntAttr(n, "num_heads");
      if (entries.size() < 2 || !entries[0] || !entries[1]) return Bad(label + ": needs input and weights");
      Info qkv_info;
      std::vector<Info> qkv_parts(3);
      const Info* x = infos[0];
      const Info* w = infos[1];
      if (x->rank_known && x->dims.size() == 3 && w->rank_known && w->dims.size() == 2) {
        qkv_info.rank_known = true;
        qkv_info.dtype = x->dtype;
        qkv_info.dims = {x->dims[0], x->dims[1], w->dims[1]};
        std::vector<Dim> sizes;
        if (auto q = onnx_shapes::IntsAttr(n, "qkv_hidden_sizes"); q && q->size() == 3) {
          for (int64_t s : *q) sizes.push_back(Expr::Constant(s));
        } else if (w->dims[1] && w->dims[1]->IsConstant() && w->dims[1]->constant() % 3 == 0) {
          sizes.assign(3, Expr::Constant(w->dims[1]->constant() / 3));
        } else {
          sizes.assign(3, std::nullopt);
        }
        for (size_t k = 0; k < 3; ++k) {
          qkv_parts[k] = qkv_info;
          qkv_parts[k].dims[2] = sizes[k];
        }
      }
      std::string why = qkv_info.AllDimsKnown() ? "" : "shape inference failed at " + label;
      std::vector<ir::TensorId> mm_in{*in_id(0), *in_id(1)};
      if (auto b = in_id(2)) mm_in.push_back(*b);
      const ir::NodeId mm = Emit(name + "/qkv_proj", ir::OpKind::kMatMul, source_op, nullptr, mm_in, ctx);
      AddOutput(mm, scope, n.output(0) + "/qkv", ctx, qkv_info, why);
      const ir::NodeId split = Emit(name + "/qkv_split", ir::OpKind::kSplit, source_op, nullptr,
                                    {g_.nodes[mm].outputs[0]}, ctx);
      set_attr(split, "layout", std::string("contiguous"));  // the kernel reads q, k, v in place
      const char* parts[] = {"/q", "/k", "/v"};
      for (size_t k = 0; k < 3; ++k) AddOutput(split, scope, name + parts[k], ctx, qkv_parts[k], why);
      std::vector<ir::TensorId> att_in(g_.nodes[split].outputs.begin(), g_.nodes[split].outputs.end());
      for (size_t i = 3; i < entries.size(); ++i) {
        if (auto id = in_id(i)) att_in.push_back(*id);
      }
      const ir::NodeId att = Emit(name, kind, source_op, &n, att_in, ctx);
      if (heads) {
        set_attr(att, "q_heads", *heads);
        set_attr(att, "kv_heads", *heads);
      }
      set_attr(att, "causal", onnx_shapes::IntAttr(n, "unidirectional").value_or(0));
      if (entries.size() > 4 && entries[4] != nullptr && !g_.nodes[att].FindAttr("unresolved_reason")) {
        set_attr(att, "unresolved_reason", std::string("attention over a past key/value cache is not modelled"));
      }
      add_outputs(att, 0, n.output_size());
      return {};
    }
    case Rule::kMsMultiHeadAttention:
    case Rule::kMsGroupQueryAttention: {
      const bool gqa = rule == Rule::kMsGroupQueryAttention;
      const auto heads = onnx_shapes::IntAttr(n, "num_heads");
      const auto kv = gqa ? onnx_shapes::IntAttr(n, "kv_num_heads") : heads;
      std::string unresolved;
      std::vector<ir::TensorId> ins;
      const bool packed = entries.size() < 2 || entries[1] == nullptr;
      if (packed && gqa && heads && kv && infos[0]->rank_known && infos[0]->dims.size() == 3) {
        // Packed QKV [B, S, (heads + 2·kv)·head]: a free split view into q, k, v.
        const Info* x = infos[0];
        std::optional<int64_t> head;
        if (x->dims[2] && x->dims[2]->IsConstant() && x->dims[2]->constant() % (*heads + 2 * *kv) == 0) {
          head = x->dims[2]->constant() / (*heads + 2 * *kv);
        }
        const ir::NodeId split = Emit(name + "/qkv_split", ir::OpKind::kSplit, source_op, nullptr, {*in_id(0)}, ctx);
        set_attr(split, "layout", std::string("contiguous"));
        const int64_t hs[] = {*heads, *kv, *kv};
        const char* parts[] = {"/q", "/k", "/v"};
        for (size_t k = 0; k < 3; ++k) {
          Info p = *x;
          p.value.reset();
          p.dims[2] = head ? Dim(Expr::Constant(*head * hs[k])) : std::nullopt;
          AddOutput(split, scope, name + parts[k], ctx, p, head ? "" : "shape inference failed at " + label);
        }
        ins.assign(g_.nodes[split].outputs.begin(), g_.nodes[split].outputs.end());
        for (size_t i = 3; i < entries.size(); ++i) {
          if (auto id = in_id(i)) ins.push_back(*id);
        }
      } else if (packed) {
        unresolved = "packed query/key/value layouts of " + n.op_type() + " are not modelled";
        ins = all_inputs({});
      } else {
        for (size_t i = 0; i < 3 && i < infos.size(); ++i) {
          if (infos[i] != nullptr && infos[i]->rank_known && infos[i]->dims.size() != 3) {
            unresolved = "key/value given per head (rank 4) are not modelled";
          }
        }
        ins = all_inputs({0, 1, 2});
      }
      // A past KV cache that is not provably empty: the SDPA rule would miss its pairs.
      const size_t past = gqa ? 3 : 6;
      if (entries.size() > past && entries[past] != nullptr) {
        const Info* p = infos[past];
        const bool empty = p->rank_known && p->dims.size() == 4 && p->dims[2] &&
                           p->dims[2]->IsConstant() && p->dims[2]->constant() == 0;
        if (!empty && unresolved.empty()) {
          unresolved = "attention over a past key/value cache is not modelled (bind its length to 0 "
                       "for prefill)";
        }
      }
      const ir::NodeId att = Emit(name, kind, source_op, &n, ins, ctx);
      if (heads) set_attr(att, "q_heads", *heads);
      if (kv) set_attr(att, "kv_heads", *kv);
      set_attr(att, "causal", gqa ? int64_t{1} : onnx_shapes::IntAttr(n, "unidirectional").value_or(0));
      if (!unresolved.empty() && !g_.nodes[att].FindAttr("unresolved_reason")) {
        set_attr(att, "unresolved_reason", unresolved);
      }
      add_outputs(att, 0, n.output_size());
      return {};
    }
    default: {
      const ir::NodeId id = Emit(name, kind, source_op, &n, all_inputs({}), ctx);
      add_outputs(id, 0, n.output_size());
      return {};
    }
  }
}

// ---- Control flow -----------------------------------------------------------------------

const onnx::GraphProto* GraphAttr(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name && a.has_g()) return &a.g();
  }
  return nullptr;
}

// The nodes opscope would import from a branch: every node of the file's branch, nested
// subgraphs included, Constant nodes (leaves, never nodes) excluded.
uint64_t CountNodes(const onnx::GraphProto& g) {
  uint64_t count = 0;
  for (const auto& n : g.node()) {
    if (!(Domain(n.domain()).empty() && n.op_type() == "Constant")) ++count;
    for (const auto& a : n.attribute()) {
      if (a.has_g()) count += CountNodes(a.g());
      for (const auto& sub : a.graphs()) count += CountNodes(sub);
    }
  }
  return count;
}

// "'a'" or "'a' and 'b'" or "'a', 'b' and 'c'".
std::string QuotedList(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

// "--input a=VALUE --input b=VALUE"
std::string PassList(const char* option, const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + std::string(option) + " " + n + "=VALUE";
  return out;
}

// What an unknown condition is computed from: the graph inputs given no --input value, and the
// unbound dims (read through Shape or Size, or already symbols in a tensor's contents).
Importer::Deciders Importer::ConditionDeciders(ir::TensorId cond) const {
  Deciders out;
  std::vector<std::string>& inputs = out.inputs;
  std::vector<std::string>& dims = out.dims;
  auto add = [](std::vector<std::string>& list, const std::string& item) {
    if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
  };
  auto known = [](const Info& i) {
    if (!i.value) return false;
    for (const Dim& d : *i.value) {
      if (!d || !d->IsConstant()) return false;
    }
    return true;
  };
  std::unordered_set<ir::TensorId> seen;
  std::vector<ir::TensorId> stack{cond};
  while (!stack.empty()) {
    const ir::TensorId t = stack.back();
    stack.pop_back();
    if (!seen.insert(t).second || known(infos_[t])) continue;
    if (const auto& value = infos_[t].value;
        value && std::all_of(value->begin(), value->end(), [](const Dim& d) { return d.has_value(); })) {
      // Contents known up to symbols (Shape -> Gather of a symbolic dim): those dims decide.
      for (const Dim& d : *value) {
        std::vector<expr::SymbolId> syms;
        d->CollectSymbols(syms);
        for (expr::SymbolId id : syms) add(dims, g_.symbols.Name(id));
      }
      continue;
    }
    const int64_t p = producer_[t];
    if (p < 0) {
      const std::string& tn = g_.tensors[t].name;
      if (g_.tensors[t].role == ir::Role::kInput && !input_values_.contains(tn)) add(inputs, tn);
      continue;
    }
    const ir::Node& node = g_.nodes[static_cast<size_t>(p)];
    if (node.op == ir::OpKind::kShape) {  // Shape and Size read dims, not values
      for (ir::TensorId in : node.inputs) {
        for (const Dim& d : infos_[in].dims) {
          std::vector<expr::SymbolId> syms;
          if (d) d->CollectSymbols(syms);
          for (expr::SymbolId id : syms) add(dims, g_.symbols.Name(id));
        }
      }
      continue;
    }
    for (ir::TensorId in : node.inputs) stack.push_back(in);
  }
  return out;
}

// Why an If's condition is unknown, naming what would decide it and the option to pass. With
// `warn`, each such input or dim is also warned about once (graph.warnings).
std::string Importer::UnknownConditionReason(const onnx::NodeProto& n, const std::string& name,
                                             ir::TensorId cond, bool warn) {
  const Deciders d = ConditionDeciders(cond);
  const std::vector<std::string>& inputs = d.inputs;
  const std::vector<std::string>& dims = d.dims;
  if (inputs.empty() && dims.empty()) {
    return "condition '" + n.input(0) + "' of If '" + name + "' is not known before running";
  }
  std::string what;
  if (!inputs.empty()) {
    what = std::string(inputs.size() == 1 ? "the value of input " : "the values of inputs ") +
           QuotedList(inputs) + " (pass " + PassList("--input", inputs) + ")";
  }
  if (!dims.empty()) {
    what += std::string(what.empty() ? "" : " and on ") + (dims.size() == 1 ? "dim " : "dims ") +
            QuotedList(dims) + " (pass " + PassList("--dim", dims) + ")";
  }
  if (warn) {
    for (const auto* list : {&inputs, &dims}) {
      for (const std::string& item : *list) {
        if (warned_.insert(item).second) {
          g_.warnings.push_back("If '" + name + "' depends on " + what +
                                "; neither branch is costed");
          break;
        }
      }
    }
  }
  return "condition of If '" + name + "' depends on " + what;
}

Result<void> Importer::ImportIf(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                                const TypeMap& types, const Ctx& ctx) {
  const std::string label = NodeLabel(name, n);
  const onnx::GraphProto* then_g = GraphAttr(n, "then_branch");
  const onnx::GraphProto* else_g = GraphAttr(n, "else_branch");
  if (then_g == nullptr || else_g == nullptr || n.input_size() != 1) {
    return Bad(label + ": needs a condition and both branches");
  }
  const Entry* ce = scope.Find(n.input(0));
  if (ce == nullptr) return Bad(label + ": input '" + n.input(0) + "' is not defined");
  const ir::TensorId cond = Use(*ce);
  const Info& ci = infos_[cond];
  std::optional<bool> taken;
  if (ci.value && ci.value->size() == 1 && (*ci.value)[0] && (*ci.value)[0]->IsConstant()) {
    taken = (*ci.value)[0]->constant() != 0;
  }
  auto theirs = [&](int i) { return DeclaredInfo(types, n.output(i)); };
  if (taken) {
    const onnx::GraphProto& b = *taken ? *then_g : *else_g;
    if (b.output_size() != n.output_size()) return Bad(label + ": branch and node outputs differ in count");
    g_.not_taken.push_back({name, *taken ? "else" : "then", CountNodes(*taken ? *else_g : *then_g)});
    Scope child{&scope, {}};
    Ctx sub = ctx;
    sub.prefix = name + (*taken ? "/then/" : "/else/");
    if (auto ok = ImportGraph(b, child, sub, false); !ok) return ok;
    for (int i = 0; i < n.output_size(); ++i) {
      const Entry* e = child.Find(b.output(i).name());
      if (e == nullptr) return Bad(label + ": branch output '" + b.output(i).name() + "' is not defined");
      const ir::TensorId src = Use(*e);
      const ir::NodeId id = Emit(sub.prefix + "out" + std::to_string(i), ir::OpKind::kIdentity, "If", nullptr, {src}, ctx);
      Info info = Merge(name, infos_[src], theirs(i));
      info.value = infos_[src].value;
      AddOutput(id, scope, n.output(i), ctx, info, info.AllDimsKnown() ? "" : why_[src]);
    }
    return {};
  }
  // Unknown condition: both branches are listed, not costed; the If node carries the reason.
  const std::string reason = UnknownConditionReason(n, name, cond, ctx.unresolved.empty());
  using Branch = std::pair<const onnx::GraphProto*, const char*>;
  for (const auto& [b, tag] : {Branch{then_g, "/then/"}, Branch{else_g, "/else/"}}) {
    Scope child{&scope, {}};
    Ctx sub = ctx;
    sub.prefix = name + tag;
    sub.unresolved = "in a branch of If '" + name + "': " + reason;
    if (auto ok = ImportGraph(*b, child, sub, false); !ok) return ok;
  }
  Ctx c = ctx;
  c.unresolved = reason;
  const ir::NodeId id = Emit(name, ir::OpKind::kIf, "If", &n, {cond}, c);
  for (int i = 0; i < n.output_size(); ++i) {
    Info info = theirs(i).value_or(Info{});
    AddOutput(id, scope, n.output(i), ctx, info, info.AllDimsKnown() ? "" : reason);
  }
  return {};
}

// Loop (M, cond, v_initial...) -> (v_final..., scan_outputs...), body (iter, cond, v...) ->
// (cond, v..., scan...). Scan (states..., scan inputs...) -> (final states..., scan outputs...),
// body (states..., slices...) -> (states..., per-iteration outputs...).
Result<void> Importer::ImportLoop(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                                  const TypeMap& types, const Ctx& ctx, bool scan) {
  const std::string label = NodeLabel(name, n);
  const onnx::GraphProto* body = GraphAttr(n, "body");
  if (body == nullptr) return Bad(label + ": has no body");
  std::vector<std::optional<ir::TensorId>> ins;
  for (const auto& in : n.input()) {
    if (in.empty()) {
      ins.push_back(std::nullopt);
      continue;
    }
    const Entry* e = scope.Find(in);
    if (e == nullptr) return Bad(label + ": input '" + in + "' is not defined");
    ins.push_back(Use(*e));
  }
  std::string unresolved;
  std::optional<int64_t> trip;
  const std::string prefix = name + "/body/";
  Scope child{&scope, {}};
  size_t n_state = 0;                 // loop-carried values / scan states
  std::vector<int64_t> in_axes, out_axes;
  std::vector<ir::NodeId> slice_nodes;

  auto scalar_value = [&](ir::TensorId t) -> std::optional<int64_t> {
    const Info& i = infos_[t];
    if (i.value && i.value->size() == 1 && (*i.value)[0] && (*i.value)[0]->IsConstant()) {
      return (*i.value)[0]->constant();
    }
    return std::nullopt;
  };
  if (!scan) {
    if (body->input_size() < 2 || body->input_size() != static_cast<int>(ins.size())) {
      return Bad(label + ": body inputs do not match the loop inputs");
    }
    n_state = ins.size() - 2;
    if (ins[0]) {
      trip = scalar_value(*ins[0]);
      if (!trip) unresolved = "trip count '" + n.input(0) + "' of Loop '" + name + "' is not known before running";
    } else {
      unresolved = "Loop '" + name + "' has no trip count (a while loop)";
    }
    if (ins[1] && unresolved.empty()) {
      auto c = scalar_value(*ins[1]);
      if (!c) unresolved = "loop condition '" + n.input(1) + "' is not known before running";
      else if (*c == 0) trip = 0;
    }
    // Body inputs: the iteration number (unknown), the condition, the carried values.
    Info iter;
    iter.rank_known = true;
    iter.dtype = onnx::TensorProto::INT64;
    child.names[body->input(0).name()] = Entry{NewTensor(prefix + body->input(0).name(), iter, ir::Role::kConstant), -1};
    if (ins[1]) {
      child.names[body->input(1).name()] = Entry{*ins[1], -1};
    } else {
      Info t = iter;
      t.dtype = onnx::TensorProto::BOOL;
      t.value = std::vector<Dim>{Expr::Constant(1)};
      child.names[body->input(1).name()] = Entry{NewTensor(prefix + body->input(1).name(), t, ir::Role::kConstant), -1};
    }
    for (size_t k = 0; k < n_state; ++k) {
      if (!ins[2 + k]) return Bad(label + ": loop-carried input " + std::to_string(k) + " is missing");
      child.names[body->input(static_cast<int>(2 + k)).name()] = Entry{*ins[2 + k], -1};
    }
  } else {
    const auto m = onnx_shapes::IntAttr(n, "num_scan_inputs");
    if (!m || *m <= 0 || static_cast<size_t>(*m) > ins.size()) return Bad(label + ": bad num_scan_inputs");
    n_state = ins.size() - static_cast<size_t>(*m);
    in_axes = onnx_shapes::IntsAttr(n, "scan_input_axes").value_or(std::vector<int64_t>(static_cast<size_t>(*m), 0));
    out_axes = onnx_shapes::IntsAttr(n, "scan_output_axes").value_or(std::vector<int64_t>{});
    if (body->input_size() != static_cast<int>(ins.size()) || in_axes.size() != static_cast<size_t>(*m)) {
      return Bad(label + ": body inputs do not match the scan inputs");
    }
    for (size_t k = 0; k < n_state; ++k) {
      if (!ins[k]) return Bad(label + ": state input " + std::to_string(k) + " is missing");
      child.names[body->input(static_cast<int>(k)).name()] = Entry{*ins[k], -1};
    }
    for (size_t k = n_state; k < ins.size(); ++k) {
      if (!ins[k]) return Bad(label + ": scan input is missing");
      const Info& x = infos_[*ins[k]];
      std::optional<size_t> axis;
      if (x.rank_known) {
        int64_t a = in_axes[k - n_state];
        if (a < 0) a += static_cast<int64_t>(x.dims.size());
        if (a >= 0 && a < static_cast<int64_t>(x.dims.size())) axis = static_cast<size_t>(a);
      }
      Info slice;
      if (axis) {
        slice = x;
        slice.value.reset();
        const Dim len = x.dims[*axis];
        slice.dims.erase(slice.dims.begin() + static_cast<std::ptrdiff_t>(*axis));
        if (len && len->IsConstant()) {
          if (trip && *trip != len->constant()) return Bad(label + ": scan inputs differ in length");
          trip = len->constant();
        }
      }
      if (!trip && unresolved.empty()) unresolved = "the scan length of Scan '" + name + "' is not known";
      // Each iteration reads its slice: a free view along axis 0, a copy otherwise.
      const ir::NodeId s = Emit(prefix + "slice" + std::to_string(k - n_state), ir::OpKind::kSplit, "Scan", nullptr, {*ins[k]}, ctx);
      if (axis && *axis == 0) g_.nodes[s].attrs.emplace_back("layout", std::string("contiguous"));
      slice_nodes.push_back(s);
      AddOutput(s, child, body->input(static_cast<int>(k)).name(), Ctx{prefix, ctx.repeat, ctx.unresolved}, slice,
                slice.AllDimsKnown() ? "" : "scan input shape unknown");
    }
  }
  Ctx sub = ctx;
  sub.prefix = prefix;
  if (trip && unresolved.empty()) {
    auto r = CheckedMul(ctx.repeat, static_cast<uint64_t>(std::max<int64_t>(*trip, 0)));
    if (!r) return Bad(label + ": trip count overflows");
    sub.repeat = *r;
  }
  const size_t body_first = g_.nodes.size();
  if (auto ok = ImportGraph(*body, child, sub, false); !ok) return ok;
  const size_t carried_out0 = scan ? 0 : 1;
  if (body->output_size() < static_cast<int>(carried_out0 + n_state)) {
    return Bad(label + ": body has too few outputs");
  }
  std::vector<ir::TensorId> outs_body;
  for (int i = 0; i < body->output_size(); ++i) {
    const Entry* e = child.Find(body->output(i).name());
    if (e == nullptr) return Bad(label + ": body output '" + body->output(i).name() + "' is not defined");
    outs_body.push_back(Use(*e));
  }
  if (unresolved.empty() && !scan) {
    auto c = scalar_value(outs_body[0]);
    if (!c || *c == 0) unresolved = "Loop '" + name + "' may exit early: its condition is computed in the body";
  }
  for (size_t k = 0; k < n_state && unresolved.empty(); ++k) {
    const Info& a = infos_[outs_body[carried_out0 + k]];
    const ir::TensorId init = scan ? *ins[k] : *ins[2 + k];
    const Info& b = infos_[init];
    bool same = a.rank_known && b.rank_known && a.dims.size() == b.dims.size();
    for (size_t i = 0; same && i < a.dims.size(); ++i) same = expr::fold::Same(a.dims[i], b.dims[i], g_.symbols);
    if (!same) unresolved = "loop-carried '" + g_.tensors[init].name + "' changes shape across iterations";
  }
  auto theirs = [&](int i) { return DeclaredInfo(types, n.output(i)); };
  if (!unresolved.empty()) {
    MarkUnresolved(body_first, "in the body of " + std::string(scan ? "Scan" : "Loop") + " '" + name + "': " + unresolved);
    for (ir::NodeId s : slice_nodes) {
      if (!g_.nodes[s].FindAttr("unresolved_reason")) g_.nodes[s].attrs.emplace_back("unresolved_reason", unresolved);
    }
    Ctx c = ctx;
    c.unresolved = unresolved;
    std::vector<ir::TensorId> node_in;
    for (const auto& i : ins) {
      if (i) node_in.push_back(*i);
    }
    const ir::NodeId id = Emit(name, scan ? ir::OpKind::kScan : ir::OpKind::kLoop, n.op_type(), &n, node_in, c);
    for (int i = 0; i < n.output_size(); ++i) {
      if (n.output(i).empty()) continue;
      Info info = theirs(i).value_or(Info{});
      AddOutput(id, scope, n.output(i), ctx, info, info.AllDimsKnown() ? "" : unresolved);
    }
    return {};
  }
  // Resolved: final values are the last iteration's; scan outputs stack every iteration's.
  for (int i = 0; i < n.output_size(); ++i) {
    if (n.output(i).empty()) continue;
    const size_t k = static_cast<size_t>(i);
    if (k < n_state) {
      const ir::TensorId src = outs_body[carried_out0 + k];
      const ir::NodeId id = Emit(prefix + "final" + std::to_string(k), ir::OpKind::kIdentity, n.op_type(), nullptr, {src}, ctx);
      AddOutput(id, scope, n.output(i), ctx, Merge(name, infos_[src], theirs(i)), why_[src]);
      continue;
    }
    if (carried_out0 + k >= outs_body.size()) return Bad(label + ": body has too few outputs");
    const ir::TensorId src = outs_body[carried_out0 + k];
    Info info = infos_[src];
    info.value.reset();
    size_t axis = 0;
    if (scan && k - n_state < out_axes.size()) {
      int64_t a = out_axes[k - n_state];
      if (a < 0) a += static_cast<int64_t>(info.dims.size()) + 1;
      axis = static_cast<size_t>(std::clamp<int64_t>(a, 0, static_cast<int64_t>(info.dims.size())));
    }
    if (info.rank_known) info.dims.insert(info.dims.begin() + static_cast<std::ptrdiff_t>(axis), Expr::Constant(*trip));
    // Stacking the per-iteration outputs: one copy of all of them.
    const ir::NodeId id = Emit(prefix + "stack" + std::to_string(k - n_state), ir::OpKind::kConcat, n.op_type(), nullptr, {src}, ctx);
    AddOutput(id, scope, n.output(i), ctx, Merge(name, info, theirs(i)), why_[src]);
  }
  return {};
}

// ---- Finishing --------------------------------------------------------------------------

void Importer::Finalize() {
  std::vector<std::string> bad(g_.tensors.size());
  for (size_t t = 0; t < g_.tensors.size(); ++t) {
    ir::Tensor& tensor = g_.tensors[t];
    const Info& info = infos_[t];
    std::string dtype_why;
    if (info.dtype < 0) {
      tensor.format = static_cast<format::Format>(-info.dtype - 1);
    } else if (auto f = FormatOf(info.dtype)) {
      tensor.format = *f;
    } else {
      tensor.format = format::Format::kUint8;
      dtype_why = info.dtype == 0 ? "its element type is unknown"
                                  : "its element type " + DtypeName(info.dtype) + " has no byte size in opscope";
    }
    // The shape's reason first (it names the node that failed), then the element type's.
    if (!info.AllDimsKnown()) complete_ = false;
    if (info.AllDimsKnown()) bad[t] = dtype_why;
    if (!info.rank_known) {
      tensor.shape = {Expr::Symbol(g_.symbols.Intern(tensor.name + ":?"))};
      if (bad[t].empty()) bad[t] = why_[t].empty() ? "its shape is unknown" : why_[t];
      continue;
    }
    tensor.shape.clear();
    for (size_t i = 0; i < info.dims.size(); ++i) {
      if (info.dims[i]) {
        tensor.shape.push_back(*info.dims[i]);
      } else {
        tensor.shape.push_back(Expr::Symbol(g_.symbols.Intern(tensor.name + ":" + std::to_string(i))));
        if (bad[t].empty()) bad[t] = why_[t].empty() ? "dim " + std::to_string(i) + " is unknown" : why_[t];
      }
    }
  }
  for (ir::Node& n : g_.nodes) {
    if (n.FindAttr("unresolved_reason")) continue;
    for (const auto* list : {&n.inputs, &n.outputs}) {
      for (ir::TensorId t : *list) {
        if (!bad[t].empty() && !n.FindAttr("unresolved_reason")) {
          n.attrs.emplace_back("unresolved_reason", "tensor '" + g_.tensors[t].name + "': " + bad[t]);
        }
      }
    }
  }
}

Result<ir::Graph> Importer::Run(onnx::ModelProto& model) {
  if (auto ok = CheckOpsets(model); !ok) return std::unexpected(ok.error());
  for (const auto& [name, value] : bound_) {
    if (value < 0) return Bad("--dim " + name + "=" + std::to_string(value) + ": dims must be non-negative");
  }
  if (auto ok = CheckDivisorAttrs(model.graph()); !ok) return std::unexpected(ok.error());
  if (auto ok = CheckOptionNames(model.graph()); !ok) return std::unexpected(ok.error());
  CollectParams(model.graph(), true);
  if (library_inference_) {
    SubstituteBindings(*model.mutable_graph());
    PinKernelShapes(*model.mutable_graph(), {});
    RunOnnxInference(model);
  }
  // The model's name in reports: the file name (exporters' graph names are generic).
  g_.name = origin_.substr(origin_.find_last_of('/') + 1);
  Scope root;
  if (auto ok = ImportGraph(model.graph(), root, Ctx{}, true); !ok) return std::unexpected(ok.error());
  Finalize();
  for (const std::string& name : dim_order_) {
    if (!g_.symbols.Find(name)) {
      return Bad("--dim '" + name + "': the model has no dim named '" + name + "'; " + DimNames());
    }
  }
  if (auto ok = CheckUtf8(); !ok) return std::unexpected(ok.error());
  if (auto ok = ir::Validate(g_); !ok) return std::unexpected(Wrap(origin_, ok.error()));
  return std::move(g_);
}

}  // namespace

Result<ir::Graph> ImportOnnxBytes(std::string_view bytes, std::string_view origin,
                                  const ImportOptions& options) {
  auto model = onnx_reader::ParseModel(bytes, origin);
  if (!model) return std::unexpected(model.error());
  if (auto ok = onnx_order::SortNodes(*model->mutable_graph()); !ok) {
    return std::unexpected(Wrap(std::string(origin), ok.error()));
  }
  // opscope's own rules and the file's value_info first; the ONNX library's inference (and
  // its one-time schema set-up, ~25 ms) only when some shape stays unknown.
  {
    Importer own{std::string(origin), options, false};
    auto g = own.Run(*model);
    if (!g || own.complete()) return g;
  }
  Importer with_library{std::string(origin), options, true};
  return with_library.Run(*model);
}

Result<ir::Graph> ImportOnnx(const std::string& path, const ImportOptions& options) {
  auto file = onnx_reader::MappedFile::Open(path);
  if (!file) return std::unexpected(file.error());
  return ImportOnnxBytes(file->bytes(), path, options);
}

}  // namespace opscope::import
