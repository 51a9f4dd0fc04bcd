// opscope's ONNX shape rules and small-tensor evaluator (see onnx_shapes.h). Each rule
// follows the ONNX operator spec for the opsets the importer accepts (1-21); a dim that
// depends on data nobody knows stays unknown.
#include "import/onnx/onnx_shapes.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <utility>

#include "support/checked_math.h"

namespace opscope::import::onnx_shapes {
namespace {

using expr::Expr;
namespace fold = expr::fold;
using onnx::TensorProto;
using Rule = onnx_ops::Rule;

Expr C(int64_t v) { return Expr::Constant(v); }
using fold::ConstantOf;
using fold::IsConstant;

Info Unknown() { return Info{}; }
Info Ranked(std::vector<Dim> dims, int32_t dtype) {
  Info i;
  i.rank_known = true;
  i.dims = std::move(dims);
  i.dtype = dtype;
  return i;
}
Info ConstVector(const std::vector<Dim>& v, int32_t dtype = TensorProto::INT64) {
  Info i = Ranked({C(static_cast<int64_t>(v.size()))}, dtype);
  i.value = v;
  return i;
}

std::unexpected<Error> Fail(std::string why) { return MakeError(std::move(why)); }

const Info* In(const NodeView& v, size_t i) { return i < v.inputs.size() ? v.inputs[i] : nullptr; }

Result<const Info*> Ranked(const NodeView& v, size_t i) {
  const Info* in = In(v, i);
  if (in == nullptr) return Fail("input " + std::to_string(i) + " is missing");
  if (!in->rank_known) return Fail("the shape of input " + std::to_string(i) + " ('" +
                                   v.node.input(static_cast<int>(i)) + "') is unknown");
  return in;
}

// Normalizes a possibly negative axis against `rank`.
std::optional<size_t> Axis(int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return std::nullopt;
  return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

// The constant integer contents of an input (all elements known constants).
std::optional<std::vector<int64_t>> ConstInts(const Info* in) {
  if (in == nullptr || !in->value) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(in->value->size());
  for (const Dim& d : *in->value) {
    auto c = ConstantOf(d);
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

// An integer list from an attribute (older opsets) or an input (newer ones).
std::optional<std::vector<int64_t>> IntsFrom(const NodeView& v, std::string_view attr,
                                             size_t input) {
  if (auto a = IntsAttr(v.node, attr)) return a;
  return ConstInts(In(v, input));
}

bool Broadcast2(const Dim& a, const Dim& b, Dim& out, const NodeView& v) {
  const expr::SymbolTable& sym = *v.symbols;
  if (IsConstant(a, 1)) { out = b; return true; }
  if (IsConstant(b, 1)) { out = a; return true; }
  if (a && b && fold::Same(a, b, sym)) { out = a; return true; }
  auto ca = ConstantOf(a), cb = ConstantOf(b);
  if (ca && cb) return false;  // two different constants, neither 1
  if (ca) { out = a; return true; }  // the other must equal it
  if (cb) { out = b; return true; }
  if (!a || !b) {
    out = std::nullopt;  // unknown stays unknown
    return true;
  }
  // Two different expressions broadcast together: unified, as symbolic shape inference
  // does (exact unless one of them is 1 at run time), keeping the simpler one. Only without
  // bindings; with dims bound both sides are constants. The unification is reported.
  const std::string sa = a->ToString(sym), sb = b->ToString(sym);
  out = sb.size() < sa.size() ? b : a;
  if (v.notes != nullptr) {
    v.notes->push_back("dims '" + sa + "' and '" + sb + "' broadcast together: taken as equal");
  }
  return true;
}

Result<std::vector<Dim>> BroadcastDims(const NodeView& v, const std::vector<const Info*>& ins) {
  size_t rank = 0;
  for (const Info* in : ins) {
    if (!in->rank_known) return Fail("an input's shape is unknown");
    rank = std::max(rank, in->dims.size());
  }
  std::vector<Dim> out(rank, C(1));
  for (const Info* in : ins) {
    const size_t off = rank - in->dims.size();
    for (size_t i = 0; i < in->dims.size(); ++i) {
      Dim r;
      if (!Broadcast2(out[off + i], in->dims[i], r, v)) {
        return Fail("inputs do not broadcast: dim " + DimString(out[off + i], *v.symbols) +
                    " against " + DimString(in->dims[i], *v.symbols));
      }
      out[off + i] = r;
    }
  }
  return out;
}

// Constant dims of a tensor whose contents are known.
std::optional<std::vector<int64_t>> ConstDims(const Info& in) {
  if (!in.rank_known) return std::nullopt;
  std::vector<int64_t> d;
  for (const Dim& x : in.dims) {
    auto c = ConstantOf(x);
    if (!c) return std::nullopt;
    d.push_back(*c);
  }
  return d;
}

// The constant dims of a tensor whose contents are known and hold exactly those elements
// (a malformed file can disagree); std::nullopt otherwise.
std::optional<std::vector<int64_t>> ValueDims(const Info& in) {
  if (!in.value) return std::nullopt;
  auto d = ConstDims(in);
  if (!d) return std::nullopt;
  uint64_t elems = 1;
  for (int64_t k : *d) {
    auto p = k >= 0 ? CheckedMul(elems, static_cast<uint64_t>(k)) : std::nullopt;
    if (!p) return std::nullopt;
    elems = *p;
  }
  if (elems != in.value->size()) return std::nullopt;
  return d;
}

// Row-major strides of `dims`.
std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// A float that holds a whole number small enough for exact int64 (the file may hold 1e30 or
// inf, whose conversion would be undefined); else unknown.
Dim WholeFloat(double x) {
  if (!std::isfinite(x) || std::floor(x) != x || std::fabs(x) >= 9.0e15) return std::nullopt;
  return C(static_cast<int64_t>(x));
}

// Elementwise evaluation of small tensors with numpy broadcasting. `f` maps one element of
// each input to the output element (std::nullopt = unknown).
template <typename F>
std::optional<std::vector<Dim>> EvalElementwise(const std::vector<const Info*>& ins,
                                                const std::vector<Dim>& out_dims, F f) {
  std::vector<int64_t> od;
  for (const Dim& d : out_dims) {
    auto c = ConstantOf(d);
    if (!c) return std::nullopt;
    od.push_back(*c);
  }
  // Element count, checked: the dims come from the file and their product may overflow.
  int64_t n = 1;
  for (int64_t d : od) {
    if (d < 0) return std::nullopt;
    if (d == 0) n = 0;
  }
  for (int64_t d : od) {
    if (n == 0) break;
    auto p = CheckedMulSigned(n, d);
    if (!p || *p > kMaxValueElems) return std::nullopt;
    n = *p;
  }
  std::vector<std::vector<int64_t>> in_dims;
  for (const Info* in : ins) {
    // A value holding exactly its shape's elements, and no more dims than the output: the
    // loop below indexes by both.
    auto d = ValueDims(*in);
    if (!d || d->size() > od.size()) return std::nullopt;
    const size_t lag = od.size() - d->size();
    for (size_t i = 0; i < d->size(); ++i) {
      if ((*d)[i] != 1 && (*d)[i] != od[lag + i]) return std::nullopt;  // not broadcastable
    }
    in_dims.push_back(*d);
  }
  std::vector<Dim> out;
  out.reserve(static_cast<size_t>(n));
  std::vector<Dim> args(ins.size());
  for (int64_t flat = 0; flat < n; ++flat) {
    // Unravel the output index, then ravel it into each input (broadcast dims read index 0).
    for (size_t k = 0; k < ins.size(); ++k) {
      int64_t rem = flat, off = 0, stride = 1;
      const auto& d = in_dims[k];
      for (size_t ax = od.size(); ax-- > 0;) {
        const int64_t idx = rem % od[ax];
        rem /= od[ax];
        const size_t lag = od.size() - d.size();
        if (ax >= lag) {
          const int64_t dk = d[ax - lag];
          off += (dk == 1 ? 0 : idx) * stride;
          stride *= dk;
        }
      }
      args[k] = (*ins[k]->value)[static_cast<size_t>(off)];
    }
    out.push_back(f(args));
  }
  return out;
}

int64_t TruncDiv(int64_t a, int64_t b) { return a / b; }

bool IsFloatType(int32_t t) {
  return t == TensorProto::FLOAT || t == TensorProto::DOUBLE || t == TensorProto::FLOAT16 ||
         t == TensorProto::BFLOAT16;
}

// Values of Add/Sub/Mul/Div/Mod/Max/Min and the comparisons over small tensors.
std::optional<std::vector<Dim>> BinaryValue(const NodeView& v, const std::vector<Dim>& out_dims,
                                            int32_t dtype) {
  const std::string& op = v.node.op_type();
  std::vector<const Info*> ins;
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    if (v.inputs[i] == nullptr || !v.inputs[i]->value) return std::nullopt;
    ins.push_back(v.inputs[i]);
  }
  // A malformed node may have fewer inputs than its op takes: only the variadic ones read a[0]
  // alone; every other op reads a[1].
  const bool variadic = op == "Add" || op == "Sum" || op == "Max" || op == "Min";
  if (ins.empty() || (!variadic && ins.size() < 2)) return std::nullopt;
  const bool is_float = IsFloatType(dtype);
  const expr::SymbolTable& sym = *v.symbols;
  return EvalElementwise(ins, out_dims, [&](const std::vector<Dim>& a) -> Dim {
    for (const Dim& x : a) {
      if (!x) return std::nullopt;
    }
    if (op == "Add" || op == "Sum") {
      Dim r = a[0];
      for (size_t i = 1; i < a.size(); ++i) r = fold::Add(r, a[i]);
      return r;
    }
    if (op == "Sub") return fold::Sub(a[0], a[1]);
    if (op == "Mul") return fold::Mul(a[0], a[1]);
    if (op == "Max" || op == "Min") {
      Dim r = a[0];
      for (size_t i = 1; i < a.size(); ++i) r = op == "Max" ? fold::Max(r, a[i]) : fold::Min(r, a[i]);
      return r;
    }
    if (op == "Div") {
      auto x = ConstantOf(a[0]), y = ConstantOf(a[1]);
      if (x && y) {
        if (*y == 0 || (*y == -1 && *x == INT64_MIN)) return std::nullopt;  // traps
        if (is_float && *x % *y != 0) return std::nullopt;  // a non-integral float
        return C(TruncDiv(*x, *y));
      }
      return fold::Div(a[0], a[1]);  // symbolic: exact division (shapes split evenly)
    }
    if (op == "Mod") {
      auto x = ConstantOf(a[0]), y = ConstantOf(a[1]);
      if (!x || !y || *y == 0 || (*y == -1 && *x == INT64_MIN)) return std::nullopt;
      int64_t r = *x % *y;
      if (IntAttr(v.node, "fmod").value_or(0) == 0 && r != 0 && ((r < 0) != (*y < 0))) r += *y;
      return C(r);
    }
    // Comparisons: decidable for constants, and Equal for identical expressions.
    if (op == "Equal" && fold::Same(a[0], a[1], sym)) return C(1);
    auto x = ConstantOf(a[0]), y = ConstantOf(a[1]);
    if (!x || !y) return std::nullopt;
    if (op == "Equal") return C(*x == *y);
    if (op == "Less") return C(*x < *y);
    if (op == "LessOrEqual") return C(*x <= *y);
    if (op == "Greater") return C(*x > *y);
    if (op == "GreaterOrEqual") return C(*x >= *y);
    if (op == "And") return C((*x != 0) && (*y != 0));
    if (op == "Or") return C((*x != 0) || (*y != 0));
    if (op == "Xor") return C((*x != 0) != (*y != 0));
    return std::nullopt;
  });
}

// ---- Rules -----------------------------------------------------------------------------

using Outs = Result<std::vector<Info>>;

Outs One(Info i) { return std::vector<Info>{std::move(i)}; }

// Values of the unary ops that map integers to integers (Not of a condition, Neg, Abs, ...).
std::optional<std::vector<Dim>> UnaryValue(const NodeView& v, const Info& x) {
  if (!x.value) return std::nullopt;
  const std::string& op = v.node.op_type();
  std::function<Dim(int64_t)> f;
  if (op == "Not") f = [](int64_t a) -> Dim { return C(a == 0); };
  if (op == "Neg") f = [](int64_t a) -> Dim { return a == INT64_MIN ? Dim() : C(-a); };
  if (op == "Abs") f = [](int64_t a) -> Dim { return a == INT64_MIN ? Dim() : C(a < 0 ? -a : a); };
  if (op == "Sign") f = [](int64_t a) -> Dim { return C((a > 0) - (a < 0)); };
  if (op == "Relu") f = [](int64_t a) -> Dim { return C(std::max<int64_t>(a, 0)); };
  if (op == "Floor" || op == "Ceil" || op == "Round") f = [](int64_t a) -> Dim { return C(a); };
  if (!f) return std::nullopt;
  std::vector<Dim> out;
  out.reserve(x.value->size());
  for (const Dim& d : *x.value) {
    auto c = ConstantOf(d);
    out.push_back(c ? f(*c) : std::nullopt);
  }
  return out;
}

Outs SameRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  Info o = Ranked((*x)->dims, (*x)->dtype);
  o.value = UnaryValue(v, **x);
  return One(std::move(o));
}

Outs BroadcastRule(const NodeView& v, Rule rule) {
  std::vector<const Info*> ins;
  for (const Info* in : v.inputs) {
    if (in != nullptr) ins.push_back(in);
  }
  if (ins.empty()) return Fail("has no inputs");
  auto dims = BroadcastDims(v, ins);
  if (!dims) return std::unexpected(dims.error());
  int32_t dtype = ins[0]->dtype;
  if (rule == Rule::kCompare) dtype = TensorProto::BOOL;
  Info o = Ranked(*dims, dtype);
  if (rule == Rule::kWhere) {
    if (ins.size() != 3) return Fail("Where needs 3 inputs");
    o.dtype = ins[1]->dtype;
    o.value = EvalElementwise(ins, *dims, [](const std::vector<Dim>& a) -> Dim {
      auto c = ConstantOf(a[0]);
      if (!c) return std::nullopt;
      return *c != 0 ? a[1] : a[2];
    });
  } else if (v.node.op_type() != "Pow") {
    o.value = BinaryValue(v, *dims, ins[0]->dtype);
  }
  return One(std::move(o));
}

// numpy matmul of a[..., M, K] and b[..., K, N].
Result<Info> MatMulInfo(const NodeView& v, const Info& a, const Info& b, bool ta, bool tb) {
  if (!a.rank_known || !b.rank_known) return Fail("an input's shape is unknown");
  std::vector<Dim> ad = a.dims, bd = b.dims;
  if (ad.empty() || bd.empty()) return Fail("matmul of a scalar");
  const bool a1 = ad.size() == 1, b1 = bd.size() == 1;
  if (a1) ad.insert(ad.begin(), C(1));
  if (b1) bd.push_back(C(1));
  if (ta) std::swap(ad[ad.size() - 1], ad[ad.size() - 2]);
  if (tb) std::swap(bd[bd.size() - 1], bd[bd.size() - 2]);
  Info ab = Ranked(std::vector<Dim>(ad.begin(), ad.end() - 2), 0);
  Info bb = Ranked(std::vector<Dim>(bd.begin(), bd.end() - 2), 0);
  auto batch = BroadcastDims(v, {&ab, &bb});
  if (!batch) return std::unexpected(batch.error());
  std::vector<Dim> out = *batch;
  if (!a1) out.push_back(ad[ad.size() - 2]);
  if (!b1) out.push_back(bd.back());
  return Ranked(std::move(out), a.dtype);
}

Outs MatMulRule(const NodeView& v, int32_t dtype_override = 0) {
  auto a = Ranked(v, 0);
  if (!a) return std::unexpected(a.error());
  auto b = Ranked(v, 1);
  if (!b) return std::unexpected(b.error());
  const bool fused = v.node.op_type() == "FusedMatMul";
  auto o = MatMulInfo(v, **a, **b, fused && IntAttr(v.node, "transA").value_or(0) != 0,
                      fused && IntAttr(v.node, "transB").value_or(0) != 0);
  if (!o) return std::unexpected(o.error());
  if (dtype_override != 0) o->dtype = dtype_override;
  return One(std::move(*o));
}

Outs GemmRule(const NodeView& v) {
  auto a = Ranked(v, 0);
  if (!a) return std::unexpected(a.error());
  auto b = Ranked(v, 1);
  if (!b) return std::unexpected(b.error());
  if ((*a)->dims.size() != 2 || (*b)->dims.size() != 2) return Fail("Gemm inputs must be 2-D");
  const bool ta = IntAttr(v.node, "transA").value_or(0) != 0;
  const bool tb = IntAttr(v.node, "transB").value_or(0) != 0;
  const Dim m = (*a)->dims[ta ? 1 : 0];
  const Dim n = (*b)->dims[tb ? 0 : 1];
  return One(Ranked({m, n}, (*a)->dtype));
}

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad;
  // Per axis, checked once when read: the dilated kernel's extent, dilation·(kernel − 1) + 1,
  // and the axis's begin + end pads.
  std::vector<int64_t> extent, pad_total;
};

Result<Window> ReadWindow(const NodeView& v, size_t spatial, const std::vector<Dim>* kernel_dims) {
  Window w;
  if (auto k = IntsAttr(v.node, "kernel_shape")) {
    w.kernel = *k;
  } else if (kernel_dims != nullptr) {
    for (const Dim& d : *kernel_dims) {
      auto c = ConstantOf(d);
      if (!c) return Fail("kernel dims are not constant");
      w.kernel.push_back(*c);
    }
  } else {
    return Fail("has no kernel_shape");
  }
  if (w.kernel.size() != spatial) return Fail("kernel rank does not match the input");
  w.strides = IntsAttr(v.node, "strides").value_or(std::vector<int64_t>(spatial, 1));
  w.dilations = IntsAttr(v.node, "dilations").value_or(std::vector<int64_t>(spatial, 1));
  w.pads = IntsAttr(v.node, "pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  w.auto_pad = StringAttr(v.node, "auto_pad").value_or("NOTSET");
  if (w.strides.size() != spatial || w.dilations.size() != spatial ||
      w.pads.size() != 2 * spatial) {
    return Fail("strides, dilations or pads do not match the spatial rank");
  }
  for (int64_t s : w.strides) {
    if (s <= 0) return Fail("has a non-positive stride");
  }
  // The window's extent and pads are the file's numbers: one that overflows 64 bits is refused
  // here rather than wrapped in the extent arithmetic.
  for (size_t i = 0; i < spatial; ++i) {
    const auto span = CheckedSubSigned(w.kernel[i], 1);
    const auto dilated = span ? CheckedMulSigned(w.dilations[i], *span) : std::nullopt;
    const auto extent = dilated ? CheckedAddSigned(*dilated, 1) : std::nullopt;
    const auto pads = CheckedAddSigned(w.pads[i], w.pads[i + spatial]);
    if (!extent || !pads) return Fail("its kernel, dilations or pads overflow 64 bits");
    w.extent.push_back(*extent);
    w.pad_total.push_back(*pads);
  }
  return w;
}

// Output extent of one sliding-window axis (Conv and pooling).
Dim WindowOut(const Dim& in, const Window& w, size_t i, bool ceil_mode) {
  const int64_t s = w.strides[i];
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") return fold::CeilDiv(in, C(s));
  // pads − extent from ReadWindow's checked figures; the rest is checked here, and an overflow
  // leaves the extent unknown (the node is then reported, not costed).
  const int64_t pads = w.auto_pad == "VALID" ? 0 : w.pad_total[i];
  const auto shift = CheckedSubSigned(pads, w.extent[i]);
  if (!shift) return std::nullopt;
  // floor((in + pads - extent) / s) + 1 = ceil((in + pads - extent + 1) / s), in + pads >= extent.
  const Dim x = fold::Add(in, C(*shift));
  if (!ceil_mode) return fold::CeilDiv(fold::Add(x, C(1)), C(s));
  auto cx = ConstantOf(x), cin = ConstantOf(in);
  if (!cx || !cin) return std::nullopt;
  const auto bumped = CheckedAddSigned(*cx, s - 1);
  if (!bumped) return std::nullopt;
  int64_t out = *bumped / s + 1;
  // The last window must start inside the input or the begin padding.
  const auto last_start = CheckedMulSigned(out - 1, s);
  const auto limit = CheckedAddSigned(*cin, w.pads[i]);
  if (!last_start || !limit) return std::nullopt;
  if (*last_start >= *limit) --out;
  return C(out);
}

Outs ConvRule(const NodeView& v, size_t x_index, size_t w_index, int32_t dtype) {
  auto x = Ranked(v, x_index);
  if (!x) return std::unexpected(x.error());
  auto wt = Ranked(v, w_index);
  if (!wt) return std::unexpected(wt.error());
  const auto& xd = (*x)->dims;
  const auto& wd = (*wt)->dims;
  if (xd.size() < 3 || wd.size() != xd.size()) return Fail("X and W must be [N, C, spatial...]");
  const size_t spatial = xd.size() - 2;
  std::vector<Dim> kd(wd.begin() + 2, wd.end());
  auto w = ReadWindow(v, spatial, &kd);
  if (!w) return std::unexpected(w.error());
  std::vector<Dim> out{xd[0], wd[0]};
  for (size_t i = 0; i < spatial; ++i) out.push_back(WindowOut(xd[2 + i], *w, i, false));
  return One(Ranked(std::move(out), dtype != 0 ? dtype : (*x)->dtype));
}

Outs ConvTransposeRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  auto wt = Ranked(v, 1);
  if (!wt) return std::unexpected(wt.error());
  const auto& xd = (*x)->dims;
  const auto& wd = (*wt)->dims;
  if (xd.size() < 3 || wd.size() != xd.size()) return Fail("X and W must be [N, C, spatial...]");
  const size_t spatial = xd.size() - 2;
  std::vector<Dim> kd(wd.begin() + 2, wd.end());
  auto w = ReadWindow(v, spatial, &kd);
  if (!w) return std::unexpected(w.error());
  const int64_t group = IntAttr(v.node, "group").value_or(1);
  std::vector<Dim> out{xd[0], fold::Mul(wd[1], C(group))};
  const auto output_shape = IntsAttr(v.node, "output_shape");
  const auto out_pad = IntsAttr(v.node, "output_padding").value_or(std::vector<int64_t>(spatial, 0));
  for (size_t i = 0; i < spatial; ++i) {
    if (output_shape && output_shape->size() == spatial) {
      out.push_back(C((*output_shape)[i]));
      continue;
    }
    if (w->auto_pad == "SAME_UPPER" || w->auto_pad == "SAME_LOWER") {
      out.push_back(fold::Mul(xd[2 + i], C(w->strides[i])));
      continue;
    }
    // stride · (in − 1) + output_padding + dilation · (k − 1) + 1 − pad_begin − pad_end
    const int64_t extra = (i < out_pad.size() ? out_pad[i] : 0) +
                          w->dilations[i] * (w->kernel[i] - 1) + 1 - w->pads[i] -
                          w->pads[i + spatial];
    out.push_back(fold::Add(fold::Mul(fold::Sub(xd[2 + i], C(1)), C(w->strides[i])), C(extra)));
  }
  return One(Ranked(std::move(out), (*x)->dtype));
}

Outs PoolRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  if (xd.size() < 3) return Fail("X must be [N, C, spatial...]");
  const size_t spatial = xd.size() - 2;
  auto w = ReadWindow(v, spatial, nullptr);
  if (!w) return std::unexpected(w.error());
  const bool ceil_mode = IntAttr(v.node, "ceil_mode").value_or(0) != 0;
  std::vector<Dim> out{xd[0], xd[1]};
  for (size_t i = 0; i < spatial; ++i) out.push_back(WindowOut(xd[2 + i], *w, i, ceil_mode));
  std::vector<Info> outs{Ranked(out, (*x)->dtype)};
  if (v.node.output_size() > 1) outs.push_back(Ranked(out, TensorProto::INT64));
  return outs;
}

Outs GlobalPoolRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  std::vector<Dim> out = (*x)->dims;
  for (size_t i = 2; i < out.size(); ++i) out[i] = C(1);
  return One(Ranked(std::move(out), (*x)->dtype));
}

Outs ReduceRule(const NodeView& v, bool arg) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  const bool keep = IntAttr(v.node, "keepdims").value_or(1) != 0;
  std::vector<int64_t> axes;
  if (arg) {
    axes.push_back(IntAttr(v.node, "axis").value_or(0));
  } else if (auto a = IntsAttr(v.node, "axes")) {
    axes = *a;
  } else if (In(v, 1) != nullptr) {
    auto c = ConstInts(In(v, 1));
    if (!c) return Fail("reduction axes are not constant");
    axes = *c;
  }
  std::vector<bool> reduce(xd.size(), false);
  if (axes.empty()) {
    if (IntAttr(v.node, "noop_with_empty_axes").value_or(0) != 0) {
      return One(Ranked(xd, (*x)->dtype));
    }
    std::fill(reduce.begin(), reduce.end(), true);
  }
  for (int64_t a : axes) {
    auto ax = Axis(a, xd.size());
    if (!ax) return Fail("axis " + std::to_string(a) + " is out of range");
    reduce[*ax] = true;
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < xd.size(); ++i) {
    if (!reduce[i]) {
      out.push_back(xd[i]);
    } else if (keep) {
      out.push_back(C(1));
    }
  }
  Info o = Ranked(std::move(out), arg ? TensorProto::INT64 : (*x)->dtype);
  // ReduceProd / ReduceSum over a small known vector (numel computations).
  if (!arg && (*x)->value && (*x)->dims.size() == 1 &&
      (v.node.op_type() == "ReduceProd" || v.node.op_type() == "ReduceSum")) {
    Dim acc = C(v.node.op_type() == "ReduceProd" ? 1 : 0);
    for (const Dim& e : *(*x)->value) {
      acc = v.node.op_type() == "ReduceProd" ? fold::Mul(acc, e) : fold::Add(acc, e);
    }
    o.value = std::vector<Dim>{acc};
  }
  return One(std::move(o));
}

// The same elements laid out with new dims (Reshape, Flatten, Squeeze, Unsqueeze): the dtype
// and any known values carry over.
Outs Relaid(const Info& x, std::vector<Dim> dims) {
  Info o = Ranked(std::move(dims), x.dtype);
  o.value = x.value;
  return One(std::move(o));
}

Outs ReshapeRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const Info* s = In(v, 1);
  std::vector<Dim> target;
  if (auto a = IntsAttr(v.node, "shape"); a && s == nullptr) {  // opset < 5
    for (int64_t d : *a) target.push_back(C(d));
  } else if (s != nullptr && s->value) {
    target = *s->value;
  } else if (s != nullptr && s->rank_known && s->dims.size() == 1 && s->dims[0] &&
             s->dims[0]->IsConstant()) {
    // Rank only. The rank comes from the file: bound it before it sizes the dims.
    const int64_t rank = s->dims[0]->constant();
    if (rank < 0 || rank > kMaxValueElems) {
      return Fail("the target shape has " + std::to_string(rank) + " dims");
    }
    target.assign(static_cast<size_t>(rank), std::nullopt);
  } else {
    return Fail("the target shape is not known");
  }
  const auto& xd = (*x)->dims;
  const bool allow_zero = IntAttr(v.node, "allowzero").value_or(0) != 0;
  std::optional<size_t> infer;
  Dim known = C(1);
  for (size_t i = 0; i < target.size(); ++i) {
    if (IsConstant(target[i], 0) && !allow_zero) {
      if (i >= xd.size()) return Fail("shape copies dim " + std::to_string(i) + " the input lacks");
      target[i] = xd[i];
    } else if (IsConstant(target[i], -1)) {
      if (infer) return Fail("shape has two -1 dims");
      infer = i;
      continue;
    } else if (auto c = ConstantOf(target[i]); c && *c < 0) {
      return Fail("shape has the negative dim " + std::to_string(*c));
    }
    known = fold::Mul(known, target[i]);
  }
  if (infer) {
    target[*infer] = fold::Div(fold::Product(xd, 0, xd.size()), known);
  } else if (auto in_n = fold::Product(xd, 0, xd.size()), out_n = fold::Product(target, 0, target.size());
             ConstantOf(in_n) && ConstantOf(out_n) && *ConstantOf(in_n) != *ConstantOf(out_n)) {
    return Fail("cannot reshape " + std::to_string(*ConstantOf(in_n)) + " elements to " +
                std::to_string(*ConstantOf(out_n)));
  }
  return Relaid(**x, std::move(target));
}

Outs FlattenRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  int64_t axis = IntAttr(v.node, "axis").value_or(1);
  if (axis < 0) axis += static_cast<int64_t>(xd.size());
  if (axis < 0 || axis > static_cast<int64_t>(xd.size())) return Fail("axis out of range");
  const auto a = static_cast<size_t>(axis);
  return Relaid(**x, {fold::Product(xd, 0, a), fold::Product(xd, a, xd.size())});
}

Outs SqueezeRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  std::vector<bool> drop(xd.size(), false);
  std::optional<std::vector<int64_t>> axes = IntsAttr(v.node, "axes");
  if (!axes && In(v, 1) != nullptr) {
    axes = ConstInts(In(v, 1));
    if (!axes) return Fail("squeeze axes are not constant");
  }
  if (!axes) {
    for (size_t i = 0; i < xd.size(); ++i) {
      if (!ConstantOf(xd[i])) return Fail("cannot tell which dims are 1");
      drop[i] = IsConstant(xd[i], 1);
    }
  } else {
    for (int64_t a : *axes) {
      auto ax = Axis(a, xd.size());
      if (!ax) return Fail("axis " + std::to_string(a) + " is out of range");
      drop[*ax] = true;
    }
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < xd.size(); ++i) {
    if (!drop[i]) out.push_back(xd[i]);
  }
  return Relaid(**x, std::move(out));
}

Outs UnsqueezeRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  std::optional<std::vector<int64_t>> axes = IntsAttr(v.node, "axes");
  if (!axes) axes = ConstInts(In(v, 1));
  if (!axes) return Fail("unsqueeze axes are not constant");
  const size_t rank = (*x)->dims.size() + axes->size();
  std::vector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    auto ax = Axis(a, rank);
    if (!ax || inserted[*ax]) return Fail("axis " + std::to_string(a) + " is invalid");
    inserted[*ax] = true;
  }
  std::vector<Dim> out;
  size_t j = 0;
  for (size_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? C(1) : (*x)->dims[j++]);
  return Relaid(**x, std::move(out));
}

Outs TransposeRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  std::vector<int64_t> perm = IntsAttr(v.node, "perm").value_or(std::vector<int64_t>{});
  if (perm.empty()) {
    for (size_t i = xd.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  if (perm.size() != xd.size()) return Fail("perm does not match the input rank");
  std::vector<Dim> out;
  for (int64_t p : perm) {
    auto ax = Axis(p, xd.size());
    if (!ax) return Fail("perm entry out of range");
    out.push_back(xd[*ax]);
  }
  Info o = Ranked(std::move(out), (*x)->dtype);
  if (xd.size() <= 1) {
    o.value = (*x)->value;
  } else if (auto d = ValueDims(**x)) {
    // out[o_0, ..., o_r] = in[i] with i_perm[k] = o_k.
    const std::vector<int64_t> in_strides = Strides(*d);
    std::vector<int64_t> od;
    for (int64_t p : perm) od.push_back((*d)[*Axis(p, xd.size())]);
    std::vector<Dim> val;
    val.reserve((*x)->value->size());
    std::vector<int64_t> idx(od.size(), 0);
    for (size_t flat = 0; flat < (*x)->value->size(); ++flat) {
      int64_t off = 0;
      for (size_t k = 0; k < od.size(); ++k) off += idx[k] * in_strides[*Axis(perm[k], xd.size())];
      val.push_back((*(*x)->value)[static_cast<size_t>(off)]);
      for (size_t k = od.size(); k-- > 0;) {  // odometer over the output index
        if (++idx[k] < od[k]) break;
        idx[k] = 0;
      }
    }
    o.value = std::move(val);
  }
  return One(std::move(o));
}

Outs ConcatRule(const NodeView& v) {
  std::vector<const Info*> ins;
  for (size_t i = 0; i < v.inputs.size(); ++i) {
    auto x = Ranked(v, i);
    if (!x) return std::unexpected(x.error());
    ins.push_back(*x);
  }
  if (ins.empty()) return Fail("has no inputs");
  const size_t rank = ins[0]->dims.size();
  auto axis = Axis(IntAttr(v.node, "axis").value_or(0), rank);
  if (!axis) return Fail("axis out of range");
  std::vector<Dim> out = ins[0]->dims;
  out[*axis] = C(0);
  std::vector<Dim> value;
  bool has_value = rank == 1;
  for (const Info* in : ins) {
    if (in->dims.size() != rank) return Fail("inputs differ in rank");
    for (size_t i = 0; i < rank; ++i) {
      if (i == *axis) continue;
      if (!out[i] || (!ConstantOf(out[i]) && ConstantOf(in->dims[i]))) out[i] = in->dims[i];
    }
    out[*axis] = fold::Add(out[*axis], in->dims[*axis]);
    if (has_value && in->value) {
      value.insert(value.end(), in->value->begin(), in->value->end());
    } else {
      has_value = false;
    }
  }
  Info o = Ranked(std::move(out), ins[0]->dtype);
  if (has_value) o.value = std::move(value);
  return One(std::move(o));
}

// The elements of `value` (dims `dims`) at the cartesian product of the kept indices per axis
// (an axis with none keeps all of it), in row-major order.
std::vector<Dim> SliceValue(const std::vector<Dim>& value, const std::vector<int64_t>& dims,
                            const std::vector<std::optional<std::vector<int64_t>>>& kept) {
  std::vector<std::vector<int64_t>> picks(dims.size());
  size_t count = 1;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (kept[a]) {
      picks[a] = *kept[a];
    } else {
      for (int64_t k = 0; k < dims[a]; ++k) picks[a].push_back(k);
    }
    count *= picks[a].size();  // at most value.size(): slices never grow a tensor
  }
  const std::vector<int64_t> strides = Strides(dims);
  std::vector<Dim> out;
  out.reserve(count);
  std::vector<size_t> idx(dims.size(), 0);
  for (size_t flat = 0; flat < count; ++flat) {
    int64_t off = 0;
    for (size_t a = 0; a < dims.size(); ++a) off += picks[a][idx[a]] * strides[a];
    out.push_back(value[static_cast<size_t>(off)]);
    for (size_t a = dims.size(); a-- > 0;) {
      if (++idx[a] < picks[a].size()) break;
      idx[a] = 0;
    }
  }
  return out;
}

// Clamped [start, end) of one sliced axis with step 1, symbolic where the dim is.
Dim SliceExtent(const Dim& dim, const Dim& start, const Dim& end) {
  constexpr int64_t kBig = int64_t{1} << 40;
  auto clamp = [&](const Dim& idx) -> Dim {
    auto c = ConstantOf(idx);
    if (c && *c >= kBig) return dim;
    if (c && *c < 0) return fold::Max(fold::Add(dim, idx), C(0));
    if (c && *c == 0) return C(0);
    return fold::Min(idx, dim);  // a non-negative index (constant or shape-derived)
  };
  return fold::Max(fold::Sub(clamp(end), clamp(start)), C(0));
}

Outs SliceRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  std::vector<Dim> starts, ends;
  std::vector<int64_t> axes, steps;
  if (auto s = IntsAttr(v.node, "starts")) {  // opset < 10
    for (int64_t a : *s) starts.push_back(C(a));
    for (int64_t a : IntsAttr(v.node, "ends").value_or(std::vector<int64_t>{})) ends.push_back(C(a));
    axes = IntsAttr(v.node, "axes").value_or(std::vector<int64_t>{});
  } else {
    const Info* si = In(v, 1);
    const Info* ei = In(v, 2);
    if (si == nullptr || ei == nullptr || !si->value || !ei->value) {
      return Fail("slice starts/ends are not known");
    }
    starts = *si->value;
    ends = *ei->value;
    if (In(v, 3) != nullptr) {
      auto a = ConstInts(In(v, 3));
      if (!a) return Fail("slice axes are not constant");
      axes = *a;
    }
    if (In(v, 4) != nullptr) {
      auto st = ConstInts(In(v, 4));
      if (!st) return Fail("slice steps are not constant");
      steps = *st;
    }
  }
  if (starts.size() != ends.size()) return Fail("starts and ends differ in length");
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    return Fail("axes or steps differ in length from starts");
  }
  std::vector<Dim> out = xd;
  // For a tensor with known contents: per sliced axis, the indices kept (every slice constant).
  const auto vd = ValueDims(**x);
  std::vector<std::optional<std::vector<int64_t>>> kept(xd.size());
  bool all_constant = true;
  for (size_t i = 0; i < starts.size(); ++i) {
    auto ax = Axis(axes[i], xd.size());
    if (!ax) return Fail("slice axis out of range");
    const int64_t step = steps[i];
    if (step == 0) return Fail("slice step is 0");
    auto cs = ConstantOf(starts[i]), ce = ConstantOf(ends[i]), cd = ConstantOf(xd[*ax]);
    if (step == 1 && !(cs && ce && cd)) {
      out[*ax] = SliceExtent(xd[*ax], starts[i], ends[i]);
      all_constant = false;
      continue;
    }
    if (!cs || !ce || !cd) return Fail("a strided slice of a symbolic dim");
    const int64_t d = *cd;
    if (d < 0) return Fail("sliced dim " + std::to_string(d) + " is negative");
    auto norm = [&](int64_t idx, bool is_start) {
      if (idx < 0) idx += d;
      if (step > 0) return std::clamp<int64_t>(idx, 0, d);
      return std::clamp<int64_t>(idx, is_start && d > 0 ? 0 : -1, d - 1);  // ONNX: start in [0, d-1]
    };
    const int64_t s = norm(*cs, true), e = norm(*ce, false);
    // ceil(range / |step|) without overflow: s and e lie in [-1, d].
    int64_t n = 0;
    if (step > 0 && e > s) n = (e - s - 1) / step + 1;
    if (step < 0 && s > e) n = (s - e - 1) / (step == INT64_MIN ? INT64_MAX : -step) + 1;
    out[*ax] = C(n);
    if (vd) {  // small: at most kMaxValueElems indices
      kept[*ax].emplace();
      for (int64_t k = 0; k < n; ++k) kept[*ax]->push_back(s + k * step);
    }
  }
  Info o = Ranked(std::move(out), (*x)->dtype);
  if (vd && all_constant) {
    o.value = SliceValue(*(*x)->value, *vd, kept);
  } else if ((*x)->value && xd.size() == 1) {
    if (auto n = ConstantOf(o.dims[0]); n && IsConstant(xd[0], static_cast<int64_t>((*x)->value->size()))) {
      // A step-1 slice resolved symbolically: only when it kept everything from 0.
      if (*n == static_cast<int64_t>((*x)->value->size())) o.value = (*x)->value;
    }
  }
  return One(std::move(o));
}

Outs GatherRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  auto idx = Ranked(v, 1);
  if (!idx) return std::unexpected(idx.error());
  const auto& xd = (*x)->dims;
  auto axis = Axis(IntAttr(v.node, "axis").value_or(0), xd.size());
  if (!axis) return Fail("axis out of range");
  std::vector<Dim> out(xd.begin(), xd.begin() + static_cast<std::ptrdiff_t>(*axis));
  out.insert(out.end(), (*idx)->dims.begin(), (*idx)->dims.end());
  out.insert(out.end(), xd.begin() + static_cast<std::ptrdiff_t>(*axis) + 1, xd.end());
  Info o = Ranked(std::move(out), (*x)->dtype);
  // Gathering from a known vector (Shape -> Gather).
  if ((*x)->value && xd.size() == 1) {
    if (auto ids = ConstInts(*idx)) {
      const auto n = static_cast<int64_t>((*x)->value->size());
      std::vector<Dim> val;
      for (int64_t i : *ids) {
        if (i < 0) i += n;
        if (i < 0 || i >= n) return Fail("index " + std::to_string(i) + " out of range");
        val.push_back((*(*x)->value)[static_cast<size_t>(i)]);
      }
      o.value = std::move(val);
    }
  }
  return One(std::move(o));
}

Outs GatherNdRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  auto idx = Ranked(v, 1);
  if (!idx) return std::unexpected(idx.error());
  const auto& id = (*idx)->dims;
  if (id.empty()) return Fail("indices must have rank >= 1");
  auto last = ConstantOf(id.back());
  if (!last) return Fail("the index depth is not constant");
  const auto b = static_cast<size_t>(IntAttr(v.node, "batch_dims").value_or(0));
  std::vector<Dim> out(id.begin(), id.end() - 1);
  const size_t from = b + static_cast<size_t>(*last);
  if (from > (*x)->dims.size()) return Fail("index depth exceeds the data rank");
  out.insert(out.end(), (*x)->dims.begin() + static_cast<std::ptrdiff_t>(from), (*x)->dims.end());
  return One(Ranked(std::move(out), (*x)->dtype));
}

Outs SplitRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  auto axis = Axis(IntAttr(v.node, "axis").value_or(0), xd.size());
  if (!axis) return Fail("axis out of range");
  const auto n = static_cast<size_t>(v.node.output_size());
  std::vector<Dim> sizes;
  if (auto s = IntsFrom(v, "split", 1)) {
    for (int64_t e : *s) sizes.push_back(C(e));
  } else if (In(v, 1) != nullptr) {
    return Fail("split sizes are not constant");
  } else {
    const Dim whole = xd[*axis];
    auto c = ConstantOf(whole);
    if (c && v.node.op_type() == "Split" && IntAttr(v.node, "num_outputs") && *c % static_cast<int64_t>(n) != 0) {
      // opset 18 num_outputs: all chunks ceil(d/n), the last one smaller.
      const int64_t chunk = (*c + static_cast<int64_t>(n) - 1) / static_cast<int64_t>(n);
      for (size_t i = 0; i < n; ++i) {
        sizes.push_back(C(std::min<int64_t>(chunk, *c - chunk * static_cast<int64_t>(i))));
      }
    } else {
      const Dim each = fold::Div(whole, C(static_cast<int64_t>(n)));
      sizes.assign(n, each);
    }
  }
  if (sizes.size() != n) return Fail("split sizes do not match the output count");
  std::vector<Info> outs;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Dim> d = xd;
    d[*axis] = sizes[i];
    outs.push_back(Ranked(std::move(d), (*x)->dtype));
  }
  return outs;
}

Outs ShapeRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  const auto rank = static_cast<int64_t>(xd.size());
  int64_t start = IntAttr(v.node, "start").value_or(0);
  int64_t end = IntAttr(v.node, "end").value_or(rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  return One(ConstVector(std::vector<Dim>(xd.begin() + start, xd.begin() + end)));
}

Outs SizeRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  Info o = Ranked({}, TensorProto::INT64);
  o.value = std::vector<Dim>{fold::Product((*x)->dims, 0, (*x)->dims.size())};
  return One(std::move(o));
}

Outs CastRule(const NodeView& v, int32_t to) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  Info o = Ranked((*x)->dims, to);
  if ((*x)->value) {
    o.value = *(*x)->value;
    if (to == TensorProto::BOOL) {
      for (Dim& d : *o.value) {
        if (auto c = ConstantOf(d)) d = C(*c != 0);
        else d = std::nullopt;
      }
    }
  }
  return One(std::move(o));
}

Outs ExpandRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const Info* s = In(v, 1);
  if (s == nullptr || !s->value) return Fail("the target shape is not known");
  Info target = Ranked(*s->value, 0);
  auto dims = BroadcastDims(v, {*x, &target});
  if (!dims) return std::unexpected(dims.error());
  Info o = Ranked(*dims, (*x)->dtype);
  o.value = EvalElementwise({*x}, *dims, [](const std::vector<Dim>& a) { return a[0]; });
  return One(std::move(o));
}

Outs TileRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const Info* r = In(v, 1);
  if (r == nullptr || !r->value || r->value->size() != (*x)->dims.size()) {
    return Fail("repeats are not known");
  }
  std::vector<Dim> out;
  for (size_t i = 0; i < (*x)->dims.size(); ++i) out.push_back(fold::Mul((*x)->dims[i], (*r->value)[i]));
  return One(Ranked(std::move(out), (*x)->dtype));
}

Outs PadRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  auto pads = IntsFrom(v, "pads", 1);
  if (!pads) return Fail("pads are not constant");
  std::vector<int64_t> axes;
  if (In(v, 3) != nullptr) {
    auto a = ConstInts(In(v, 3));
    if (!a) return Fail("pad axes are not constant");
    axes = *a;
  } else {
    for (size_t i = 0; i < xd.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (pads->size() != 2 * axes.size()) return Fail("pads do not match the axes");
  std::vector<Dim> out = xd;
  for (size_t i = 0; i < axes.size(); ++i) {
    auto ax = Axis(axes[i], xd.size());
    if (!ax) return Fail("pad axis out of range");
    // Both pads are the file's numbers: their sum is checked, not wrapped.
    const auto both = CheckedAddSigned((*pads)[i], (*pads)[i + axes.size()]);
    if (!both) return Fail("its pads overflow 64 bits");
    out[*ax] = fold::Add(out[*ax], C(*both));
  }
  return One(Ranked(std::move(out), (*x)->dtype));
}

Outs ConstantOfShapeRule(const NodeView& v) {
  const Info* s = In(v, 0);
  if (s == nullptr || !s->value) return Fail("the shape input is not known");
  int32_t dtype = TensorProto::FLOAT;
  Dim fill = C(0);
  for (const auto& a : v.node.attribute()) {
    if (a.name() == "value" && a.has_t()) {
      dtype = a.t().data_type();
      auto val = TensorValue(a.t());
      fill = val && val->size() == 1 ? (*val)[0] : std::nullopt;
    }
  }
  Info o = Ranked(*s->value, dtype);
  if (auto n = o.ConstantElems(); n && *n <= kMaxValueElems) {
    o.value = std::vector<Dim>(static_cast<size_t>(*n), fill);
  }
  return One(std::move(o));
}

Outs RangeRule(const NodeView& v) {
  const Info* s = In(v, 0);
  const Info* l = In(v, 1);
  const Info* d = In(v, 2);
  if (s == nullptr || l == nullptr || d == nullptr) return Fail("needs start, limit and delta");
  const int32_t dtype = s->dtype;
  auto scalar = [](const Info* i) -> Dim {
    return i->value && i->value->size() == 1 ? (*i->value)[0] : std::nullopt;
  };
  const Dim start = scalar(s), limit = scalar(l), delta = scalar(d);
  auto cd = ConstantOf(delta);
  if (!cd || *cd == 0) return Fail("delta is not a known non-zero constant");
  Dim n;
  auto cs = ConstantOf(start), cl = ConstantOf(limit);
  if (cs && cl) {
    // ceil((limit - start) / delta) in exact, checked integers: the bounds come from the file.
    const auto diff = CheckedSubSigned(*cl, *cs);
    if (!diff || (*diff == INT64_MIN && *cd == -1)) return Fail("the range's length overflows 64 bits");
    int64_t count = *diff / *cd;
    if (*diff % *cd != 0 && (*diff < 0) == (*cd < 0)) ++count;
    n = C(std::max<int64_t>(count, 0));
  } else if (*cd > 0) {
    n = fold::CeilDiv(fold::Max(fold::Sub(limit, start), C(0)), C(*cd));
  } else {
    return Fail("a descending range over symbolic bounds");
  }
  Info o = Ranked({n}, dtype);
  if (auto cn = ConstantOf(n); cn && *cn <= kMaxValueElems && cs) {
    std::vector<Dim> val;
    for (int64_t i = 0; i < *cn; ++i) val.push_back(C(*cs + i * *cd));
    o.value = std::move(val);
  }
  return One(std::move(o));
}

Outs TopKRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  Dim k;
  if (auto a = IntAttr(v.node, "k"); a && In(v, 1) == nullptr) {
    k = C(*a);
  } else if (const Info* ki = In(v, 1); ki != nullptr && ki->value && ki->value->size() == 1) {
    k = (*ki->value)[0];
  } else {
    return Fail("K is not known");
  }
  auto axis = Axis(IntAttr(v.node, "axis").value_or(-1), (*x)->dims.size());
  if (!axis) return Fail("axis out of range");
  std::vector<Dim> out = (*x)->dims;
  out[*axis] = k;
  return std::vector<Info>{Ranked(out, (*x)->dtype), Ranked(out, TensorProto::INT64)};
}

Outs ResizeRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  const bool upsample = v.node.op_type() == "Upsample";
  const Info* sizes = upsample ? nullptr : In(v, 3);
  const Info* scales = upsample ? In(v, 1) : (v.opset <= 10 ? In(v, 1) : In(v, 2));
  if (IntsAttr(v.node, "axes")) return Fail("Resize with axes is not supported");
  std::vector<Dim> out;
  if (sizes != nullptr && sizes->value && sizes->value->size() == xd.size()) {
    out = *sizes->value;
  } else if (scales != nullptr && scales->value && scales->value->size() == xd.size()) {
    for (size_t i = 0; i < xd.size(); ++i) out.push_back(fold::Mul(xd[i], (*scales->value)[i]));
  } else {
    return Fail("sizes or integral scales are not known");
  }
  return One(Ranked(std::move(out), (*x)->dtype));
}

Outs EinsumRule(const NodeView& v) {
  auto eq = StringAttr(v.node, "equation");
  if (!eq) return Fail("has no equation");
  std::string e;
  for (char c : *eq) {
    if (c != ' ') e.push_back(c);
  }
  if (e.find("...") != std::string::npos) return Fail("einsum with '...' is not supported");
  const auto arrow = e.find("->");
  const std::string lhs = e.substr(0, arrow);
  std::vector<std::string> terms;
  size_t pos = 0;
  while (true) {
    const auto comma = lhs.find(',', pos);
    terms.push_back(lhs.substr(pos, comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (terms.size() != v.inputs.size()) return Fail("equation and inputs differ in count");
  Dim extent[128];
  int count[128] = {};
  for (size_t t = 0; t < terms.size(); ++t) {
    auto x = Ranked(v, t);
    if (!x) return std::unexpected(x.error());
    if (terms[t].size() != (*x)->dims.size()) return Fail("equation term rank mismatch");
    for (size_t i = 0; i < terms[t].size(); ++i) {
      const auto c = static_cast<unsigned char>(terms[t][i]) & 127;
      Dim r;
      if (count[c] == 0) {
        extent[c] = (*x)->dims[i];
      } else if (Broadcast2(extent[c], (*x)->dims[i], r, v)) {
        extent[c] = r;
      } else {
        return Fail("index extents disagree");
      }
      ++count[c];
    }
  }
  std::string out_idx;
  if (arrow != std::string::npos) {
    out_idx = e.substr(arrow + 2);
  } else {
    for (int c = 0; c < 128; ++c) {
      if (count[c] == 1) out_idx.push_back(static_cast<char>(c));
    }
  }
  std::vector<Dim> out;
  for (char c : out_idx) {
    const auto u = static_cast<unsigned char>(c) & 127;
    if (count[u] == 0) return Fail("output index not in any input");
    out.push_back(extent[u]);
  }
  return One(Ranked(std::move(out), v.inputs[0]->dtype));
}

Outs LayerNormRule(const NodeView& v, size_t stat_outputs_from) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  auto axis = Axis(IntAttr(v.node, "axis").value_or(-1), xd.size());
  if (!axis) return Fail("axis out of range");
  std::vector<Dim> stat = xd;
  for (size_t i = *axis; i < stat.size(); ++i) stat[i] = C(1);
  std::vector<Info> outs;
  for (int i = 0; i < v.node.output_size(); ++i) {
    if (static_cast<size_t>(i) >= stat_outputs_from && static_cast<size_t>(i) < stat_outputs_from + 2) {
      outs.push_back(Ranked(stat, TensorProto::FLOAT));
    } else {
      outs.push_back(Ranked(xd, (*x)->dtype));
    }
  }
  return outs;
}

Outs QuantizeRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  if (v.node.op_type() == "DynamicQuantizeLinear") {
    return std::vector<Info>{Ranked((*x)->dims, TensorProto::UINT8),
                             Ranked({}, TensorProto::FLOAT), Ranked({}, TensorProto::UINT8)};
  }
  int32_t dtype = TensorProto::UINT8;
  if (const Info* zp = In(v, 2); zp != nullptr && zp->dtype != 0) dtype = zp->dtype;
  if (auto od = IntAttr(v.node, "output_dtype"); od && *od != 0) dtype = static_cast<int32_t>(*od);
  return One(Ranked((*x)->dims, dtype));
}

Outs DequantizeRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const Info* scale = In(v, 1);
  return One(Ranked((*x)->dims, scale != nullptr ? scale->dtype : TensorProto::FLOAT));
}

Outs SpaceDepthRule(const NodeView& v, bool to_space) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  const auto& xd = (*x)->dims;
  if (xd.size() != 4) return Fail("input must be 4-D");
  const auto b = IntAttr(v.node, "blocksize");
  if (!b || *b <= 0) return Fail("has no blocksize");
  const auto b2 = CheckedMulSigned(*b, *b);
  if (!b2) return Fail("blocksize " + std::to_string(*b) + " squared overflows 64 bits");
  const Dim bb = C(*b2), bs = C(*b);
  if (to_space) {
    return One(Ranked({xd[0], fold::Div(xd[1], bb), fold::Mul(xd[2], bs), fold::Mul(xd[3], bs)}, (*x)->dtype));
  }
  return One(Ranked({xd[0], fold::Mul(xd[1], bb), fold::Div(xd[2], bs), fold::Div(xd[3], bs)}, (*x)->dtype));
}

// LSTM / GRU / RNN: X [steps, batch, I] (layout=1: [batch, steps, I]), W [dirs, G·H, I];
// Y [steps, dirs, batch, H] (layout=1: [batch, steps, dirs, H]), Y_h and Y_c [dirs, batch, H]
// (layout=1: [batch, dirs, H]). H is attribute hidden_size, else R's last dim.
Outs RnnRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  auto w = Ranked(v, 1);
  if (!w) return std::unexpected(w.error());
  if ((*x)->dims.size() != 3 || (*w)->dims.size() != 3) return Fail("X and W must have rank 3");
  Dim hidden;
  if (auto h = IntAttr(v.node, "hidden_size")) {
    hidden = C(*h);
  } else if (const Info* r = In(v, 2); r != nullptr && r->rank_known && r->dims.size() == 3) {
    hidden = r->dims[2];
  } else {
    return Fail("has no hidden_size and R's shape is unknown");
  }
  const bool batch_first = IntAttr(v.node, "layout").value_or(0) != 0;
  const auto& xd = (*x)->dims;
  const Dim steps = xd[batch_first ? 1 : 0], batch = xd[batch_first ? 0 : 1], dirs = (*w)->dims[0];
  std::vector<Info> outs;
  for (int i = 0; i < v.node.output_size(); ++i) {
    std::vector<Dim> d;
    if (i == 0) {
      d = batch_first ? std::vector<Dim>{batch, steps, dirs, hidden} : std::vector<Dim>{steps, dirs, batch, hidden};
    } else {
      d = batch_first ? std::vector<Dim>{batch, dirs, hidden} : std::vector<Dim>{dirs, batch, hidden};
    }
    outs.push_back(Ranked(std::move(d), (*x)->dtype));
  }
  return outs;
}

Outs IdentityRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  std::vector<Info> outs{**x};
  if (v.node.output_size() > 1) outs.push_back(Ranked((*x)->dims, TensorProto::BOOL));
  return outs;
}

// ---- com.microsoft ----------------------------------------------------------------------

Outs MsAttentionRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  auto w = Ranked(v, 1);
  if (!w) return std::unexpected(w.error());
  const auto& xd = (*x)->dims;
  if (xd.size() != 3 || (*w)->dims.size() != 2) return Fail("input must be [B, S, hidden] and weights 2-D");
  Dim v_hidden = fold::Div((*w)->dims[1], C(3));
  if (auto q = IntsAttr(v.node, "qkv_hidden_sizes"); q && q->size() == 3) v_hidden = C((*q)[2]);
  std::vector<Info> outs{Ranked({xd[0], xd[1], v_hidden}, (*x)->dtype)};
  if (v.node.output_size() > 1) {
    const auto heads = IntAttr(v.node, "num_heads");
    if (!heads || *heads <= 0) return Fail("has no num_heads");
    Dim total = xd[1];
    if (const Info* past = In(v, 4); past != nullptr && past->rank_known && past->dims.size() == 5) {
      total = fold::Add(past->dims[3], xd[1]);
    }
    outs.push_back(Ranked({C(2), xd[0], C(*heads), total, fold::Div(v_hidden, C(*heads))}, (*x)->dtype));
  }
  return outs;
}

Outs MsMhaRule(const NodeView& v) {
  auto q = Ranked(v, 0);
  if (!q) return std::unexpected(q.error());
  const auto& qd = (*q)->dims;
  if (qd.size() != 3) return Fail("query must be [B, S, hidden]");
  Dim v_hidden = qd[2];
  if (const Info* val = In(v, 2); val != nullptr && val->rank_known) {
    if (val->dims.size() == 3) v_hidden = val->dims[2];
    if (val->dims.size() == 4) v_hidden = fold::Mul(val->dims[1], val->dims[3]);
  }
  std::vector<Info> outs{Ranked({qd[0], qd[1], v_hidden}, (*q)->dtype)};
  for (int i = 1; i < v.node.output_size(); ++i) outs.push_back(Unknown());
  return outs;
}

Outs MsGqaRule(const NodeView& v) {
  auto q = Ranked(v, 0);
  if (!q) return std::unexpected(q.error());
  const auto& qd = (*q)->dims;
  if (qd.size() != 3) return Fail("query must be [B, S, hidden]");
  const auto heads = IntAttr(v.node, "num_heads");
  const auto kv = IntAttr(v.node, "kv_num_heads");
  if (!heads || !kv || *heads <= 0 || *kv <= 0) return Fail("needs num_heads and kv_num_heads");
  Dim hidden = qd[2];
  if (In(v, 1) == nullptr) {  // packed QKV: hidden = (heads + 2·kv) · head
    const auto kv2 = CheckedMulSigned(2, *kv);
    const auto all = kv2 ? CheckedAddSigned(*heads, *kv2) : std::nullopt;
    if (!all) return Fail("num_heads + 2 * kv_num_heads overflows 64 bits");
    hidden = fold::Mul(fold::Div(qd[2], C(*all)), C(*heads));
  }
  std::vector<Info> outs{Ranked({qd[0], qd[1], hidden}, (*q)->dtype)};
  for (int i = 1; i < v.node.output_size(); ++i) outs.push_back(Unknown());
  return outs;
}

Outs MsSkipNormRule(const NodeView& v) {
  auto x = Ranked(v, 0);
  if (!x) return std::unexpected(x.error());
  std::vector<Dim> stat = (*x)->dims;
  if (!stat.empty()) stat.back() = C(1);
  std::vector<Info> outs;
  for (int i = 0; i < v.node.output_size(); ++i) {
    outs.push_back(i == 1 || i == 2 ? Ranked(stat, TensorProto::FLOAT)
                                    : Ranked((*x)->dims, (*x)->dtype));
  }
  return outs;
}

Outs MsMatMulNBitsRule(const NodeView& v) {
  auto a = Ranked(v, 0);
  if (!a) return std::unexpected(a.error());
  const auto n = IntAttr(v.node, "N");
  if (!n || (*a)->dims.empty()) return Fail("needs attribute N and a ranked A");
  std::vector<Dim> out = (*a)->dims;
  out.back() = C(*n);
  return One(Ranked(std::move(out), (*a)->dtype));
}

}  // namespace

// ---- Public helpers --------------------------------------------------------------------

bool Info::AllDimsKnown() const {
  if (!rank_known) return false;
  for (const Dim& d : dims) {
    if (!d) return false;
  }
  return true;
}

std::optional<int64_t> Info::ConstantElems() const {
  if (!rank_known) return std::nullopt;
  int64_t n = 1;
  for (const Dim& d : dims) {
    auto c = ConstantOf(d);
    if (!c || *c < 0) return std::nullopt;
    auto r = CheckedMulSigned(n, *c);
    if (!r) return std::nullopt;
    n = *r;
  }
  return n;
}

std::string DimString(const Dim& d, const expr::SymbolTable& symbols) {
  return d ? d->ToString(symbols) : std::string("?");
}

std::optional<int64_t> IntAttr(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> IntsAttr(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name && a.type() == onnx::AttributeProto::INTS) {
      return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    }
  }
  return std::nullopt;
}

std::optional<std::string> StringAttr(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name && a.type() == onnx::AttributeProto::STRING) return a.s();
  }
  return std::nullopt;
}

// Reads a tensor's `count` elements of one type, from raw_data (little-endian Raw values) or
// from its typed repeated field, passing each to `push`; false when the sizes disagree.
template <typename Raw, typename Field, typename Push>
bool ReadElements(const TensorProto& t, size_t count, const Field& typed, Push push) {
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != count * sizeof(Raw)) return false;
    for (size_t i = 0; i < count; ++i) {
      Raw x;
      std::memcpy(&x, raw.data() + i * sizeof(Raw), sizeof(Raw));
      push(x);
    }
    return true;
  }
  if (static_cast<size_t>(typed.size()) != count) return false;
  for (auto x : typed) push(x);
  return true;
}

std::optional<std::vector<Dim>> TensorValue(const TensorProto& t) {
  if (t.data_location() == TensorProto::EXTERNAL) return std::nullopt;
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0) return std::nullopt;
    auto r = CheckedMulSigned(n, d);
    if (!r || *r > kMaxValueElems) return std::nullopt;
    n = *r;
  }
  const auto count = static_cast<size_t>(n);
  std::vector<Dim> out;
  out.reserve(count);
  auto push_float = [&](double x) {
    if (std::isfinite(x) && std::floor(x) == x && std::fabs(x) < 9.0e15) {
      out.push_back(C(static_cast<int64_t>(x)));
    } else {
      out.push_back(std::nullopt);
    }
  };
  auto push_int = [&](int64_t x) { out.push_back(C(x)); };
  bool ok = false;
  switch (t.data_type()) {
    case TensorProto::INT64: ok = ReadElements<int64_t>(t, count, t.int64_data(), push_int); break;
    case TensorProto::INT32: ok = ReadElements<int32_t>(t, count, t.int32_data(), push_int); break;
    // Narrower integers travel in int32_data when not raw.
    case TensorProto::INT16: ok = ReadElements<int16_t>(t, count, t.int32_data(), push_int); break;
    case TensorProto::UINT16: ok = ReadElements<uint16_t>(t, count, t.int32_data(), push_int); break;
    case TensorProto::INT8: ok = ReadElements<int8_t>(t, count, t.int32_data(), push_int); break;
    case TensorProto::UINT8:
    case TensorProto::BOOL: ok = ReadElements<uint8_t>(t, count, t.int32_data(), push_int); break;
    case TensorProto::FLOAT: ok = ReadElements<float>(t, count, t.float_data(), push_float); break;
    case TensorProto::DOUBLE: ok = ReadElements<double>(t, count, t.double_data(), push_float); break;
    default: break;
  }
  if (!ok) return std::nullopt;
  return out;
}

Result<Info> InfoFromTensor(const TensorProto& t) {
  Info i;
  i.rank_known = true;
  i.dtype = t.data_type();
  for (int64_t d : t.dims()) {
    if (d < 0) return MakeError("tensor '" + t.name() + "' has the negative dim " + std::to_string(d));
    i.dims.push_back(C(d));
  }
  i.value = TensorValue(t);
  return i;
}

Result<Info> InfoFromConstantNode(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value" && a.has_t()) return InfoFromTensor(a.t());
    if (a.name() == "value_int") {
      Info i = Ranked({}, TensorProto::INT64);
      i.value = std::vector<Dim>{C(a.i())};
      return i;
    }
    if (a.name() == "value_ints") {
      std::vector<Dim> v;
      for (int64_t x : a.ints()) v.push_back(C(x));
      return ConstVector(v);
    }
    if (a.name() == "value_float") {
      Info i = Ranked({}, TensorProto::FLOAT);
      const double x = a.f();
      i.value = std::vector<Dim>{WholeFloat(x)};
      return i;
    }
    if (a.name() == "value_floats") {
      std::vector<Dim> v;
      for (float x : a.floats()) v.push_back(WholeFloat(x));
      return ConstVector(v, TensorProto::FLOAT);
    }
    if (a.name() == "sparse_value") return MakeError("sparse constants are not supported");
    if (a.name() == "value_string" || a.name() == "value_strings") {
      Info i = Ranked({}, TensorProto::STRING);
      if (a.name() == "value_strings") i.dims.push_back(C(a.strings_size()));
      return i;
    }
  }
  return MakeError("Constant has no value attribute");
}

Result<std::vector<Info>> InferOutputs(Rule rule, const NodeView& v) {
  switch (rule) {
    case Rule::kNone: return Fail("opscope has no shape rule for this op");
    case Rule::kSame:
    case Rule::kCumSum:
    case Rule::kTrilu:
    case Rule::kMsRotary:
    case Rule::kMsBiasGelu: return SameRule(v);
    case Rule::kBroadcast:
    case Rule::kCompare:
    case Rule::kWhere: return BroadcastRule(v, rule);
    case Rule::kMatMul: return MatMulRule(v);
    case Rule::kMsFusedMatMul: return MatMulRule(v);
    case Rule::kMatMulInteger: return MatMulRule(v, TensorProto::INT32);
    case Rule::kQLinearMatMul: {
      // (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp)
      if (v.inputs.size() < 8 || !v.inputs[0] || !v.inputs[3]) return Fail("needs 8 inputs");
      auto o = MatMulInfo(v, *v.inputs[0], *v.inputs[3], false, false);
      if (!o) return std::unexpected(o.error());
      if (v.inputs[7]) o->dtype = v.inputs[7]->dtype;
      return One(std::move(*o));
    }
    case Rule::kGemm: return GemmRule(v);
    case Rule::kConv: return ConvRule(v, 0, 1, v.node.op_type() == "ConvInteger" ? TensorProto::INT32 : 0);
    case Rule::kQLinearConv: {
      // (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B)
      const int32_t dtype = In(v, 7) != nullptr ? In(v, 7)->dtype : 0;
      return ConvRule(v, 0, 3, dtype);
    }
    case Rule::kConvTranspose: return ConvTransposeRule(v);
    case Rule::kPool: return PoolRule(v);
    case Rule::kGlobalPool: return GlobalPoolRule(v);
    case Rule::kReduce: return ReduceRule(v, false);
    case Rule::kArgReduce: return ReduceRule(v, true);
    case Rule::kReshape: return ReshapeRule(v);
    case Rule::kFlatten: return FlattenRule(v);
    case Rule::kSqueeze: return SqueezeRule(v);
    case Rule::kUnsqueeze: return UnsqueezeRule(v);
    case Rule::kTranspose: return TransposeRule(v);
    case Rule::kConcat: return ConcatRule(v);
    case Rule::kSlice: return SliceRule(v);
    case Rule::kGather: return GatherRule(v);
    case Rule::kGatherElements: {
      auto x = Ranked(v, 0);
      if (!x) return std::unexpected(x.error());
      auto idx = Ranked(v, 1);
      if (!idx) return std::unexpected(idx.error());
      return One(Ranked((*idx)->dims, (*x)->dtype));
    }
    case Rule::kGatherNd: return GatherNdRule(v);
    case Rule::kSplit: return SplitRule(v);
    case Rule::kShape: return ShapeRule(v);
    case Rule::kSize: return SizeRule(v);
    case Rule::kCast: {
      const auto to = IntAttr(v.node, "to");
      if (!to) return Fail("Cast has no 'to'");
      return CastRule(v, static_cast<int32_t>(*to));
    }
    case Rule::kCastLike: {
      const Info* like = In(v, 1);
      if (like == nullptr || like->dtype == 0) return Fail("the target type is unknown");
      return CastRule(v, like->dtype);
    }
    case Rule::kExpand: return ExpandRule(v);
    case Rule::kTile: return TileRule(v);
    case Rule::kPad: return PadRule(v);
    case Rule::kConstant: return Fail("Constant is handled by the importer");
    case Rule::kConstantOfShape: return ConstantOfShapeRule(v);
    case Rule::kRange: return RangeRule(v);
    case Rule::kTopK: return TopKRule(v);
    case Rule::kResize: return ResizeRule(v);
    case Rule::kEinsum: return EinsumRule(v);
    case Rule::kLayerNorm: return LayerNormRule(v, 1);
    case Rule::kQuantize: return QuantizeRule(v);
    case Rule::kDequantize: return DequantizeRule(v);
    case Rule::kDepthToSpace: return SpaceDepthRule(v, true);
    case Rule::kSpaceToDepth: return SpaceDepthRule(v, false);
    case Rule::kIdentity: return IdentityRule(v);
    case Rule::kNonZero: return Fail("the output shape depends on the tensor's data");
    case Rule::kRnn: return RnnRule(v);
    case Rule::kMsAttention: return MsAttentionRule(v);
    case Rule::kMsMultiHeadAttention: return MsMhaRule(v);
    case Rule::kMsGroupQueryAttention: return MsGqaRule(v);
    case Rule::kMsSkipNorm: return MsSkipNormRule(v);
    case Rule::kMsMatMulNBits: return MsMatMulNBitsRule(v);
    case Rule::kIf:
    case Rule::kLoop:
    case Rule::kScan: return Fail("control flow is handled by the importer");
  }
  return Fail("unhandled rule");
}

}  // namespace opscope::import::onnx_shapes
