// Graph JSON reader (format documented in graph_json.h), on simdjson's DOM parser (runtime-
// dispatched SIMD kernels in libsimdjson); every field validated as it is read.
#include "import/opscope_json/graph_json.h"

#include <simdjson.h>

#include <string>
#include <unordered_map>

#include "support/checked_math.h"
#include "support/file_io.h"
#include "support/json_describe.h"
#include "support/utf8.h"
#include "support/name_index.h"

namespace opscope::import {
namespace {

namespace dom = simdjson::dom;

// 'text' for an error message, at most 80 bytes of it ("..." marks a cut).
std::string Quote(std::string_view s) {
  constexpr size_t kMax = 80;
  if (s.size() <= kMax) return "'" + std::string(s) + "'";
  // Cut at a character boundary: never inside a UTF-8 sequence (continuation bytes are
  // 10xxxxxx), so the message stays valid UTF-8.
  size_t cut = kMax;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return "'" + std::string(s.substr(0, cut)) + "...'";
}

// Names the item being read, for error messages only: built lazily, since a million-node file
// must not pay for a million context strings it never prints.
struct Where {
  const char* array;  // "tensors" | "nodes"
  size_t index;
  const std::string* name;  // once known

  std::string str() const {
    if (name != nullptr && !name->empty()) {
      return std::string(array[0] == 't' ? "tensor " : "node ") + Quote(*name);
    }
    return std::string(array) + "[" + std::to_string(index) + "]";
  }
};

std::string operator+(const Where& w, const char* s) { return w.str() + s; }

// Maps ids to the names the graph stores (for the name indexes).
struct TensorName {
  const ir::Graph* g;
  std::string_view operator()(uint32_t id) const { return g->tensors[id].name; }
};
struct NodeName {
  const ir::Graph* g;
  std::string_view operator()(uint32_t id) const { return g->nodes[id].name; }
};

// Reading context: the error prefix and the parsed pieces that later fields refer to.
class Reader {
 public:
  Reader(std::string_view origin, ir::Graph& g)
      : origin_(origin), g_(g), tensor_ids_(TensorName{&g}), node_ids_(NodeName{&g}) {}

  std::unexpected<Error> Fail(const std::string& what) {
    return MakeError(std::string(origin_) + ": " + what);
  }
  // `what` was expected where the file holds `got`.
  std::unexpected<Error> Fail(const std::string& what, dom::element got) {
    return Fail(what + ", got " + DescribeJsonValue(got));
  }

  Result<void> ReadRoot(dom::element doc);

 private:
  Result<void> ReadDims(dom::element v);
  Result<void> ReadTensors(dom::element v);
  Result<void> ReadTensor(dom::element v, size_t index);
  Result<void> ReadNodes(dom::element v);
  Result<void> ReadNode(dom::element v, size_t index);
  Result<std::vector<ir::TensorId>> ReadTensorRefs(dom::element v, const Where& where,
                                                   const char* field);
  Result<void> ReadAttrs(dom::element v, ir::Node& node, const Where& where);
  Result<expr::Expr> ReadDim(dom::element v, const Where& where, size_t axis);

  std::string_view origin_;
  ir::Graph& g_;
  NameIndex<TensorName> tensor_ids_;
  NameIndex<NodeName> node_ids_;
  std::unordered_map<std::string, expr::Expr> expr_cache_;
};

Result<void> Reader::ReadRoot(dom::element doc) {
  dom::object root;
  if (doc.get_object().get(root) != simdjson::SUCCESS) {
    return Fail("not an opscope graph (expected a JSON object with 'tensors' and 'nodes')", doc);
  }
  bool have_tensors = false, have_nodes = false, have_name = false, have_dims = false;
  for (dom::key_value_pair field : root) {
    const std::string_view key = field.key;
    dom::element v = field.value;
    auto once = [&](bool& seen) -> Result<void> {
      if (seen) return Fail("duplicate field " + Quote(key));
      seen = true;
      return {};
    };
    if (key == "name") {
      if (auto ok = once(have_name); !ok) return ok;
      std::string_view name;
      if (v.get_string().get(name) != simdjson::SUCCESS) return Fail("field 'name': expected a string", v);
      g_.name = std::string(name);
    } else if (key == "dims") {
      if (auto ok = once(have_dims); !ok) return ok;
      if (auto ok = ReadDims(v); !ok) return ok;
    } else if (key == "tensors") {
      if (auto ok = once(have_tensors); !ok) return ok;
      if (have_nodes) return Fail("'tensors' must come before 'nodes'");
      if (auto ok = ReadTensors(v); !ok) return ok;
    } else if (key == "nodes") {
      if (auto ok = once(have_nodes); !ok) return ok;
      if (auto ok = ReadNodes(v); !ok) return ok;
    } else {
      const bool hf = key == "model_type" || key == "architectures";
      return Fail("unknown field " + Quote(key) +
                  (hf ? " (this looks like a Hugging Face config: use 'opscope llm')" : ""));
    }
  }
  if (!have_tensors) return Fail("not an opscope graph: missing field 'tensors'");
  if (!have_nodes) return Fail("not an opscope graph: missing field 'nodes'");
  return {};
}

Result<void> Reader::ReadDims(dom::element v) {
  dom::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return Fail("field 'dims': expected an object", v);
  for (dom::key_value_pair field : obj) {
    const std::string_view key = field.key;
    const std::string where = "dims: " + Quote(key);
    int64_t value = 0;
    if (field.value.get_int64().get(value) != simdjson::SUCCESS) {
      return Fail(where + ": expected a non-negative integer", field.value);
    }
    if (value < 0) return Fail(where + ": negative dim " + std::to_string(value));
    if (key.empty()) return Fail("dims: empty symbol name");
    auto parsed = expr::Expr::Parse(key, g_.symbols);
    if (!parsed || !parsed->IsSymbol()) return Fail("dims: " + Quote(key) + " is not a symbol name");
    const expr::SymbolId id = *g_.symbols.Find(key);
    for (const auto& [sym, existing] : g_.dims) {
      if (sym == id) return Fail("dims: duplicate dim " + Quote(key));
    }
    g_.dims.emplace_back(id, value);
  }
  return {};
}

Result<expr::Expr> Reader::ReadDim(dom::element v, const Where& where, size_t axis) {
  struct At {
    const Where& where;
    size_t axis;
    std::string operator+(const std::string& s) const {
      return where.str() + ": shape[" + std::to_string(axis) + "]" + s;
    }
  } at{where, axis};
  const dom::element_type type = v.type();
  if (type == dom::element_type::INT64 || type == dom::element_type::UINT64 ||
      type == dom::element_type::DOUBLE) {
    int64_t value = 0;
    if (v.get_int64().get(value) != simdjson::SUCCESS) {
      return Fail(at + ": expected a non-negative integer that fits 64 bits", v);
    }
    if (value < 0) return Fail(at + ": negative dim " + std::to_string(value));
    return expr::Expr::Constant(value);
  }
  if (type != dom::element_type::STRING) {
    return Fail(at + ": expected an integer or a dim expression string");
  }
  std::string_view text;
  if (v.get_string().get(text) != simdjson::SUCCESS) return Fail(at + ": malformed string", v);
  std::string key(text);
  if (auto it = expr_cache_.find(key); it != expr_cache_.end()) return it->second;
  auto e = expr::Expr::Parse(text, g_.symbols);
  if (!e) return Fail(at + ": " + e.error().message);
  if (e->IsConstant() && e->constant() < 0) {
    return Fail(at + ": " + Quote(text) + " is negative (" + std::to_string(e->constant()) + ")");
  }
  expr_cache_.emplace(std::move(key), *e);
  return *e;
}

Result<void> Reader::ReadTensors(dom::element v) {
  dom::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS) return Fail("field 'tensors': expected an array", v);
  g_.tensors.reserve(arr.size());
  tensor_ids_ = NameIndex<TensorName>(TensorName{&g_}, arr.size());
  size_t index = 0;
  for (dom::element item : arr) {
    if (auto ok = ReadTensor(item, index); !ok) return ok;
    ++index;
  }
  return {};
}

Result<void> Reader::ReadTensor(dom::element v, size_t index) {
  ir::Tensor t;
  const Where where{"tensors", index, &t.name};
  dom::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return Fail(where + ": expected an object", v);
  bool have_name = false, have_shape = false, have_format = false, have_role = false;
  for (dom::key_value_pair field : obj) {
    const std::string_view key = field.key;
    dom::element fv = field.value;
    if (key == "name") {
      if (have_name) return Fail(where + ": duplicate field 'name'");
      have_name = true;
      std::string_view name;
      if (fv.get_string().get(name) != simdjson::SUCCESS) return Fail(where + ".name: expected a string", fv);
      if (name.empty()) return Fail(where + ".name: empty tensor name");
      t.name = std::string(name);
    } else if (key == "shape") {
      if (have_shape) return Fail(where + ": duplicate field 'shape'");
      have_shape = true;
      dom::array dims;
      if (fv.get_array().get(dims) != simdjson::SUCCESS) return Fail(where + ".shape: expected an array", fv);
      size_t axis = 0;
      for (dom::element d : dims) {
        auto e = ReadDim(d, where, axis++);
        if (!e) return std::unexpected(e.error());
        if (axis > 64) return Fail(where + ": rank above 64");
        t.shape.push_back(std::move(*e));
      }
    } else if (key == "format") {
      if (have_format) return Fail(where + ": duplicate field 'format'");
      have_format = true;
      std::string_view name;
      if (fv.get_string().get(name) != simdjson::SUCCESS) return Fail(where + ".format: expected a string", fv);
      auto f = format::ParseFormat(name);
      if (!f) return Fail(where + ": unknown format " + Quote(name));
      t.format = *f;
    } else if (key == "role") {
      if (have_role) return Fail(where + ": duplicate field 'role'");
      have_role = true;
      std::string_view name;
      if (fv.get_string().get(name) != simdjson::SUCCESS) return Fail(where + ".role: expected a string", fv);
      auto r = ir::ParseRole(name);
      if (!r) {
        return Fail(where + ": unknown role " + Quote(name) +
                    " (activation, input, output, weight, constant, state)");
      }
      t.role = *r;
    } else {
      return Fail(where + ": unknown field " + Quote(key));
    }
  }
  if (!have_name) return Fail(where + ": missing field 'name'");
  if (!have_shape) return Fail(where + ": missing field 'shape'");
  // Concrete shapes are checked now: element count and byte size must fit, blocks must divide.
  bool concrete = true;
  std::vector<int64_t> dims;
  for (const expr::Expr& e : t.shape) {
    concrete = concrete && e.IsConstant();
    if (concrete) dims.push_back(e.constant());
  }
  if (concrete) {
    uint64_t elems = 1;
    for (int64_t d : dims) {
      auto p = CheckedMul(elems, static_cast<uint64_t>(d));
      if (!p) return Fail(where + ": element count overflows 64 bits");
      elems = *p;
    }
    auto bytes = format::TensorBytes(t.format, dims);
    if (!bytes && bytes.error() == format::SizeError::kBlockMismatch) {
      return Fail(where + ": last dim " + std::to_string(dims.empty() ? 1 : dims.back()) +
                  " is not a multiple of " + std::string(format::FormatName(t.format)) + "'s " +
                  std::to_string(format::Info(t.format).block) + "-element block");
    }
    if (!bytes) return Fail(where + ": byte size overflows 64 bits");
  }
  const auto id = static_cast<ir::TensorId>(g_.tensors.size());
  g_.AddTensor(std::move(t));
  if (tensor_ids_.InsertOrFind(g_.tensors.back().name, id)) {
    return Fail("duplicate tensor name " + Quote(g_.tensors.back().name));
  }
  return {};
}

Result<void> Reader::ReadNodes(dom::element v) {
  dom::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS) return Fail("field 'nodes': expected an array", v);
  g_.nodes.reserve(arr.size());
  node_ids_ = NameIndex<NodeName>(NodeName{&g_}, arr.size());
  size_t index = 0;
  for (dom::element item : arr) {
    if (auto ok = ReadNode(item, index); !ok) return ok;
    ++index;
  }
  return {};
}

Result<std::vector<ir::TensorId>> Reader::ReadTensorRefs(dom::element v, const Where& where,
                                                         const char* field) {
  dom::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS) {
    return Fail(where + "." + field + ": expected an array of tensor names", v);
  }
  std::vector<ir::TensorId> ids;
  for (dom::element item : arr) {
    std::string_view name;
    if (item.get_string().get(name) != simdjson::SUCCESS) {
      return Fail(where + "." + field + ": expected tensor names", item);
    }
    const auto id = tensor_ids_.Find(name);
    if (!id) {
      return Fail(where + ": " + (std::string_view(field) == "inputs" ? "input " : "output ") +
                  Quote(name) + " is not a declared tensor");
    }
    ids.push_back(*id);
  }
  return ids;
}

Result<void> Reader::ReadAttrs(dom::element v, ir::Node& node, const Where& where) {
  dom::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return Fail(where + ".attrs: expected an object", v);
  for (dom::key_value_pair field : obj) {
    const std::string_view key = field.key;
    const std::string at = where + ": attribute " + Quote(key);
    if (node.FindAttr(key) != nullptr) return Fail(at + " is given twice");
    dom::element av = field.value;
    switch (av.type()) {
      case dom::element_type::INT64: {
        node.attrs.emplace_back(std::string(key), av.get_int64().value_unsafe());
        break;
      }
      case dom::element_type::DOUBLE: {
        const double d = av.get_double().value_unsafe();
        node.attrs.emplace_back(std::string(key), d);
        break;
      }
      case dom::element_type::UINT64:
        return Fail(at + ": integer does not fit 64 bits");
      case dom::element_type::STRING: {
        node.attrs.emplace_back(std::string(key), std::string(av.get_string().value_unsafe()));
        break;
      }
      case dom::element_type::ARRAY: {
        std::vector<int64_t> ints;
        dom::array arr;
        if (av.get_array().get(arr) != simdjson::SUCCESS) return Fail(at + ": expected an array", av);
        for (dom::element item : arr) {
          int64_t i = 0;
          if (item.get_int64().get(i) != simdjson::SUCCESS) return Fail(at + ": expected integers", item);
          ints.push_back(i);
        }
        node.attrs.emplace_back(std::string(key), std::move(ints));
        break;
      }
      default:
        return Fail(at + ": expected a number, a string or an array of integers");
    }
  }
  return {};
}

Result<void> Reader::ReadNode(dom::element v, size_t index) {
  ir::Node node;
  const Where where{"nodes", index, &node.name};
  dom::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS) return Fail(where + ": expected an object", v);
  bool have_name = false, have_op = false, have_in = false, have_out = false, have_attrs = false,
       have_source = false;
  for (dom::key_value_pair field : obj) {
    const std::string_view key = field.key;
    dom::element fv = field.value;
    auto once = [&](bool& seen) -> Result<void> {
      if (seen) return Fail(where + ": duplicate field " + Quote(key));
      seen = true;
      return {};
    };
    if (key == "name") {
      if (auto ok = once(have_name); !ok) return ok;
      std::string_view name;
      if (fv.get_string().get(name) != simdjson::SUCCESS) return Fail(where + ".name: expected a string", fv);
      if (name.empty()) return Fail(where + ".name: empty node name");
      node.name = std::string(name);
    } else if (key == "op") {
      if (auto ok = once(have_op); !ok) return ok;
      std::string_view op;
      if (fv.get_string().get(op) != simdjson::SUCCESS) return Fail(where + ".op: expected a string", fv);
      if (op.empty()) return Fail(where + ".op: empty op name");
      if (auto kind = ir::ParseOpKind(op)) {
        node.op = *kind;
      } else {
        node.op = ir::OpKind::kUnknown;
        if (node.source_op.empty()) node.source_op = std::string(op);
      }
    } else if (key == "source_op") {
      if (auto ok = once(have_source); !ok) return ok;
      std::string_view s;
      if (fv.get_string().get(s) != simdjson::SUCCESS) return Fail(where + ".source_op: expected a string", fv);
      node.source_op = std::string(s);
    } else if (key == "inputs") {
      if (auto ok = once(have_in); !ok) return ok;
      auto ids = ReadTensorRefs(fv, where, "inputs");
      if (!ids) return std::unexpected(ids.error());
      node.inputs = std::move(*ids);
    } else if (key == "outputs") {
      if (auto ok = once(have_out); !ok) return ok;
      auto ids = ReadTensorRefs(fv, where, "outputs");
      if (!ids) return std::unexpected(ids.error());
      node.outputs = std::move(*ids);
    } else if (key == "attrs") {
      if (auto ok = once(have_attrs); !ok) return ok;
      if (auto ok = ReadAttrs(fv, node, where); !ok) return ok;
    } else {
      return Fail(where + ": unknown field " + Quote(key));
    }
  }
  if (!have_name) return Fail(where + ": missing field 'name'");
  if (!have_op) return Fail(where + ": missing field 'op'");
  if (!have_out) return Fail(where + ": missing field 'outputs'");
  const auto id = static_cast<uint32_t>(g_.nodes.size());
  g_.AddNode(std::move(node));
  if (node_ids_.InsertOrFind(g_.nodes.back().name, id)) {
    return Fail("duplicate node name " + Quote(g_.nodes.back().name));
  }
  return {};
}

}  // namespace

namespace {

// Parses text that already has SIMDJSON_PADDING bytes of capacity after it.
Result<ir::Graph> ParsePadded(const char* data, size_t size, size_t capacity,
                              std::string_view origin) {
  ir::Graph g;
  dom::parser parser;
  dom::element doc;
  if (const std::string_view body = SkipUtf8Bom(std::string_view(data, size)); body.size() != size) {
    data += 3;  // the padding after the text stays where it was
    size -= 3;
    capacity -= 3;
  }
  if (auto ec = parser.parse(data, size, capacity < size + simdjson::SIMDJSON_PADDING)
                    .get(doc)) {
    return MakeError(std::string(origin) + ": " + DescribeJsonParseError(ec));
  }
  Reader reader(origin, g);
  if (auto ok = reader.ReadRoot(doc); !ok) return std::unexpected(ok.error());
  if (auto ok = ir::Validate(g, /*check_names=*/false); !ok) return std::unexpected(Wrap(origin, ok.error()));
  if (g.name.empty()) {
    std::string_view stem = origin.substr(origin.find_last_of('/') + 1);
    g.name = std::string(stem.substr(0, stem.rfind('.')));
  }
  return g;
}

}  // namespace

Result<ir::Graph> ParseGraphJson(std::string_view text, std::string_view origin) {
  return ParsePadded(text.data(), text.size(), text.size(), origin);
}

Result<ir::Graph> LoadGraphJson(const std::string& path) {
  // Read once, with the padding simdjson needs, instead of copying into a padded string.
  auto text = ReadFile(path, uint64_t{1} << 36, simdjson::SIMDJSON_PADDING);
  if (!text) return std::unexpected(text.error());
  return ParsePadded(text->data(), text->size(), text->capacity(), path);
}

}  // namespace opscope::import
