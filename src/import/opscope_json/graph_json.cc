// Graph JSON reader (format documented in graph_json.h), on simdjson's On-Demand API: the
// document is indexed once and each value read in place as the reader walks it — no DOM tape
// (8 bytes per token) and, for strings without escapes, no copy — so a 165 MB graph of a million
// nodes costs its text, its index and the graph itself. Every field is validated as it is read;
// every value is consumed (nothing is skipped unread), so the whole document is checked.
#include "import/opscope_json/graph_json.h"

#include <simdjson.h>

#include <cstring>
#include <iterator>
#include <string>
#include <unordered_map>

#include "support/checked_math.h"
#include "support/file_io.h"
#include "support/huge_pages.h"
#include "support/json_describe.h"
#include "support/utf8.h"
#include "support/name_index.h"

namespace opscope::import {
namespace {

namespace od = simdjson::ondemand;
using simdjson::error_code;

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
  // Reading `got` as `what` failed with `ec`: a value of another type is named ("expected an
  // array, got an object"); a document that is not valid JSON says so.
  std::unexpected<Error> Fail(const std::string& what, od::value& got, error_code ec) {
    if (ec == simdjson::INCORRECT_TYPE || ec == simdjson::NUMBER_OUT_OF_RANGE) {
      od::json_type type;
      if (auto bad = got.type().get(type)) return Fail(DescribeJsonParseError(bad));
      return Fail(what + ", got " + DescribeJsonValue(got));
    }
    return Fail(DescribeJsonParseError(ec));
  }
  std::unexpected<Error> Fail(error_code ec) { return Fail(DescribeJsonParseError(ec)); }

  Result<void> ReadRoot(od::document& doc);

 private:
  // One field of an object: its key (a view into the document, or unescaped when it has
  // escapes) and its value.
  struct Field {
    std::string_view key;
    od::value value;
  };
  Result<Field> Next(simdjson::simdjson_result<od::field> item);
  Result<void> ReadDims(od::value v);
  Result<void> ReadTensors(od::value v);
  Result<void> ReadTensor(od::value v, size_t index);
  Result<void> IndexTensorNames(size_t upto);
  Result<void> ReadNodes(od::value v);
  Result<void> ReadNode(od::value v, size_t index);
  Result<void> ResolveNodeNames(bool last_failed);
  Result<void> ReadTensorRefs(od::value v, const Where& where, const char* field,
                              std::vector<ir::TensorId>& ids);
  Result<void> ReadAttrs(od::value v, ir::Node& node, const Where& where);
  Result<expr::Expr> ReadDim(od::value v, const Where& where, size_t axis);

  std::string_view origin_;
  ir::Graph& g_;
  // Scratch reused across tensors: a shape's dims before they move into the tensor.
  std::vector<expr::Expr> shape_;
  using TensorIndex = NameIndex<TensorName>;
  using NodeIndex = NameIndex<NodeName>;
  TensorIndex tensor_ids_;
  NodeIndex node_ids_;
  // Dim strings seen so far ("n", "ctx + 1"): looked up by view, no string built per dim.
  struct ViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, expr::Expr, ViewHash, std::equal_to<>> expr_cache_;
  const std::pair<const std::string, expr::Expr>* last_dim_ = nullptr;  // stable in the map
  // Names are looked up in batches of kNameBatch tensors or nodes: the batch's hash slots are
  // prefetched together, so their cache misses overlap (a million-node graph's name indexes
  // are tens of MB, and a lookup per name would otherwise wait on memory each time).
  static constexpr size_t kNameBatch = 64;
  uint32_t indexed_tensors_ = 0, indexed_nodes_ = 0;  // entered in the name indexes so far
  struct PendingRef {  // a tensor name a node refers to, not yet resolved
    std::string_view name;  // into the document or the parser's buffer: lives as long
    uint32_t hash;
    uint32_t node;
    uint32_t position;
    bool output;
  };
  std::vector<PendingRef> pending_refs_;
};

// Whether `key` is `word`: a length test and a fixed-size compare the compiler inlines (a
// million-node file compares a few keys per object).
template <size_t N>
bool Is(std::string_view key, const char (&word)[N]) {
  return key.size() == N - 1 && std::memcmp(key.data(), word, N - 1) == 0;
}

// A string value as a view: into the document itself when it holds no escape (names, formats,
// roles: the usual case), else unescaped into the parser's buffer. Both live as long as the
// parser. Anything else is the getter's error (INCORRECT_TYPE for another type).
error_code GetString(od::value& v, std::string_view& out) {
  const std::string_view token = v.raw_json_token();  // the token and the blanks after it
  if (!token.empty() && token[0] == '"') {
    size_t end = 1;  // names are short: a plain loop beats find_first_of's per-byte memchr
    while (end < token.size() && token[end] != '"' && token[end] != '\\') ++end;
    if (end < token.size() && token[end] == '"') {
      od::raw_json_string consumed;  // consumes the value without unescaping it
      if (auto ec = v.get_raw_json_string().get(consumed)) return ec;
      out = token.substr(1, end - 1);
      return simdjson::SUCCESS;
    }
  }
  return v.get_string().get(out);
}

Result<Reader::Field> Reader::Next(simdjson::simdjson_result<od::field> item) {
  od::field f;
  if (auto ec = std::move(item).get(f)) return Fail(ec);
  Field out;
  const char* raw = f.key().raw();
  size_t n = 0;
  while (raw[n] != '"' && raw[n] != '\\') ++n;  // the key ends at its closing quote
  if (raw[n] == '"') {
    out.key = std::string_view(raw, n);
  } else if (auto ec = f.unescaped_key().get(out.key)) {
    return Fail(ec);
  }
  out.value = std::move(f).value();
  return out;
}

Result<void> Reader::ReadRoot(od::document& doc) {
  od::object root;
  if (auto ec = doc.get_object().get(root)) {
    if (ec == simdjson::INCORRECT_TYPE || ec == simdjson::SCALAR_DOCUMENT_AS_VALUE) {
      od::json_type type;
      if (auto bad = doc.type().get(type)) return Fail(bad);
      const char* shown = type == od::json_type::array ? "an array" : "a single value";
      return Fail(std::string("not an opscope graph (expected a JSON object with 'tensors' and "
                              "'nodes'), got ") + shown);
    }
    return Fail(ec);
  }
  bool have_tensors = false, have_nodes = false, have_name = false, have_dims = false;
  for (auto item : root) {
    auto field = Next(item);
    if (!field) return std::unexpected(field.error());
    const std::string_view key = field->key;
    od::value& v = field->value;
    auto once = [&](bool& seen) -> Result<void> {
      if (seen) return Fail("duplicate field " + Quote(key));
      seen = true;
      return {};
    };
    if (Is(key, "name")) {
      if (auto ok = once(have_name); !ok) return ok;
      std::string_view name;
      if (auto ec = GetString(v, name)) return Fail("field 'name': expected a string", v, ec);
      g_.name = std::string(name);
    } else if (Is(key, "dims")) {
      if (auto ok = once(have_dims); !ok) return ok;
      if (auto ok = ReadDims(v); !ok) return ok;
    } else if (Is(key, "tensors")) {
      if (auto ok = once(have_tensors); !ok) return ok;
      if (have_nodes) return Fail("'tensors' must come before 'nodes'");
      if (auto ok = ReadTensors(v); !ok) return ok;
    } else if (Is(key, "nodes")) {
      if (auto ok = once(have_nodes); !ok) return ok;
      if (auto ok = ReadNodes(v); !ok) return ok;
    } else {
      const bool hf = Is(key, "model_type") || Is(key, "architectures");
      return Fail("unknown field " + Quote(key) +
                  (hf ? " (this looks like a Hugging Face config: use 'opscope llm')" : ""));
    }
  }
  // Past the root object only blanks may follow (a location there means more text).
  const char* after = nullptr;
  if (doc.current_location().get(after) == simdjson::SUCCESS) {
    return Fail(simdjson::TRAILING_CONTENT);
  }
  if (!have_tensors) return Fail("not an opscope graph: missing field 'tensors'");
  if (!have_nodes) return Fail("not an opscope graph: missing field 'nodes'");
  return {};
}

Result<void> Reader::ReadDims(od::value v) {
  od::object obj;
  if (auto ec = v.get_object().get(obj)) return Fail("field 'dims': expected an object", v, ec);
  for (auto item : obj) {
    auto field = Next(item);
    if (!field) return std::unexpected(field.error());
    const std::string_view key = field->key;
    const std::string where = "dims: " + Quote(key);
    int64_t value = 0;
    if (auto ec = field->value.get_int64().get(value)) {
      return Fail(where + ": expected a non-negative integer", field->value, ec);
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

Result<expr::Expr> Reader::ReadDim(od::value v, const Where& where, size_t axis) {
  struct At {
    const Where& where;
    size_t axis;
    std::string operator+(const std::string& s) const {
      return where.str() + ": shape[" + std::to_string(axis) + "]" + s;
    }
  } at{where, axis};
  od::json_type type;
  if (auto ec = v.type().get(type)) return Fail(ec);
  if (type == od::json_type::number) {
    int64_t value = 0;
    if (auto ec = v.get_int64().get(value)) {
      return Fail(at + ": expected a non-negative integer that fits 64 bits", v, ec);
    }
    if (value < 0) return Fail(at + ": negative dim " + std::to_string(value));
    return expr::Expr::Constant(value);
  }
  std::string_view text;
  if (auto ec = GetString(v, text)) {
    return Fail(at + ": expected an integer or a dim expression string", v, ec);
  }
  // Most shapes repeat one dim string ("n"): the last one is checked before the cache.
  if (last_dim_ != nullptr && last_dim_->first == text) return last_dim_->second;
  if (auto it = expr_cache_.find(text); it != expr_cache_.end()) {
    last_dim_ = &*it;
    return it->second;
  }
  auto e = expr::Expr::Parse(text, g_.symbols);
  if (!e) return Fail(at + ": " + e.error().message);
  if (e->IsConstant() && e->constant() < 0) {
    return Fail(at + ": " + Quote(text) + " is negative (" + std::to_string(e->constant()) + ")");
  }
  last_dim_ = &*expr_cache_.emplace(std::string(text), *e).first;
  return *e;
}

Result<void> Reader::ReadTensors(od::value v) {
  od::array arr;
  if (auto ec = v.get_array().get(arr)) return Fail("field 'tensors': expected an array", v, ec);
  // Counting first (a walk over the index) sizes the tensors and their name index once,
  // instead of growing both through a million copies.
  size_t count = 0;
  if (auto ec = arr.count_elements().get(count)) return Fail(ec);
  ReserveHugePages(g_.tensors, count);  // filled in place, first touched once
  tensor_ids_ = NameIndex<TensorName>(TensorName{&g_}, count);
  size_t index = 0;
  for (auto item : arr) {
    od::value t;
    auto ok = std::move(item).get(t) == simdjson::SUCCESS ? ReadTensor(t, index) : Fail(item.error());
    // Names enter the index in batches (IndexTensorNames); a tensor that fails to read is
    // reported after any duplicate name before it, in file order.
    if (!ok || (index + 1) % kNameBatch == 0) {
      // A tensor that failed is not indexed: its own error comes first.
      if (auto indexed = IndexTensorNames(ok ? g_.tensors.size() : index); !indexed) return indexed;
    }
    if (!ok) return ok;
    ++index;
  }
  return IndexTensorNames(g_.tensors.size());
}

Result<void> Reader::IndexTensorNames(size_t upto) {
  const auto end = static_cast<uint32_t>(upto);
  uint32_t hashes[kNameBatch];
  for (uint32_t i = indexed_tensors_; i < end; ++i) {
    hashes[i - indexed_tensors_] = TensorIndex::Hash(g_.tensors[i].name);
    tensor_ids_.Prefetch(hashes[i - indexed_tensors_]);
  }
  for (uint32_t i = indexed_tensors_; i < end; ++i) {
    if (tensor_ids_.InsertOrFind(g_.tensors[i].name, hashes[i - indexed_tensors_], i)) {
      return Fail("duplicate tensor name " + Quote(g_.tensors[i].name));
    }
  }
  indexed_tensors_ = end;
  return {};
}

Result<void> Reader::ReadTensor(od::value v, size_t index) {
  // Built in place (the tensors were reserved): no move of a finished tensor.
  ir::Tensor& t = g_.tensors.emplace_back();
  const Where where{"tensors", index, &t.name};
  od::object obj;
  if (auto ec = v.get_object().get(obj)) return Fail(where + ": expected an object", v, ec);
  bool have_name = false, have_shape = false, have_format = false, have_role = false;
  for (auto item : obj) {
    auto field = Next(item);
    if (!field) return std::unexpected(field.error());
    const std::string_view key = field->key;
    od::value& fv = field->value;
    if (Is(key, "name")) {
      if (have_name) return Fail(where + ": duplicate field 'name'");
      have_name = true;
      std::string_view name;
      if (auto ec = GetString(fv, name)) return Fail(where + ".name: expected a string", fv, ec);
      if (name.empty()) return Fail(where + ".name: empty tensor name");
      t.name = std::string(name);
    } else if (Is(key, "shape")) {
      if (have_shape) return Fail(where + ": duplicate field 'shape'");
      have_shape = true;
      od::array dims;
      if (auto ec = fv.get_array().get(dims)) return Fail(where + ".shape: expected an array", fv, ec);
      shape_.clear();
      for (auto d : dims) {
        od::value dv;
        if (auto ec = std::move(d).get(dv)) return Fail(ec);
        auto e = ReadDim(dv, where, shape_.size());
        if (!e) return std::unexpected(e.error());
        if (shape_.size() == 64) return Fail(where + ": rank above 64");
        shape_.push_back(std::move(*e));
      }
      // One allocation, of the exact size; the dims are moved, not copied.
      t.shape.assign(std::make_move_iterator(shape_.begin()), std::make_move_iterator(shape_.end()));
    } else if (Is(key, "format")) {
      if (have_format) return Fail(where + ": duplicate field 'format'");
      have_format = true;
      std::string_view name;
      if (auto ec = GetString(fv, name)) return Fail(where + ".format: expected a string", fv, ec);
      auto f = format::ParseFormat(name);
      if (!f) return Fail(where + ": unknown format " + Quote(name));
      t.format = *f;
    } else if (Is(key, "role")) {
      if (have_role) return Fail(where + ": duplicate field 'role'");
      have_role = true;
      std::string_view name;
      if (auto ec = GetString(fv, name)) return Fail(where + ".role: expected a string", fv, ec);
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
  int64_t dims[64];
  for (size_t d = 0; d < t.shape.size(); ++d) {
    concrete = concrete && t.shape[d].IsConstant();
    if (concrete) dims[d] = t.shape[d].constant();
  }
  if (concrete) {
    const std::span<const int64_t> shape(dims, t.shape.size());
    uint64_t elems = 1;
    for (int64_t d : shape) {
      auto p = CheckedMul(elems, static_cast<uint64_t>(d));
      if (!p) return Fail(where + ": element count overflows 64 bits");
      elems = *p;
    }
    auto bytes = format::TensorBytes(t.format, shape);
    if (!bytes && bytes.error() == format::SizeError::kBlockMismatch) {
      return Fail(where + ": last dim " + std::to_string(shape.empty() ? 1 : shape.back()) +
                  " is not a multiple of " + std::string(format::FormatName(t.format)) + "'s " +
                  std::to_string(format::Info(t.format).block) + "-element block");
    }
    if (!bytes) return Fail(where + ": byte size overflows 64 bits");
  }
  return {};
}

Result<void> Reader::ReadNodes(od::value v) {
  od::array arr;
  if (auto ec = v.get_array().get(arr)) return Fail("field 'nodes': expected an array", v, ec);
  size_t count = 0;
  if (auto ec = arr.count_elements().get(count)) return Fail(ec);
  ReserveHugePages(g_.nodes, count);
  node_ids_ = NameIndex<NodeName>(NodeName{&g_}, count);
  size_t index = 0;
  for (auto item : arr) {
    od::value n;
    auto ok = std::move(item).get(n) == simdjson::SUCCESS ? ReadNode(n, index) : Fail(item.error());
    // Tensor references and node names are resolved in batches (ResolveNodeNames); a node
    // that fails to read is reported after any earlier problem with a name, in file order.
    if (!ok || (index + 1) % kNameBatch == 0) {
      if (auto resolved = ResolveNodeNames(!ok); !resolved) return resolved;
    }
    if (!ok) return ok;
    ++index;
  }
  return ResolveNodeNames(false);
}

Result<void> Reader::ResolveNodeNames(bool last_failed) {
  for (PendingRef& r : pending_refs_) {
    r.hash = TensorIndex::Hash(r.name);
    tensor_ids_.Prefetch(r.hash);
  }
  const auto end = static_cast<uint32_t>(g_.nodes.size());
  uint32_t hashes[kNameBatch];
  for (uint32_t i = indexed_nodes_; i < end; ++i) {
    hashes[i - indexed_nodes_] = NodeIndex::Hash(g_.nodes[i].name);
    node_ids_.Prefetch(hashes[i - indexed_nodes_]);
  }
  // In file order: each node's references (inputs, then outputs, as read), then its name.
  size_t next_ref = 0;
  for (uint32_t i = indexed_nodes_; i < end; ++i) {
    ir::Node& node = g_.nodes[i];
    for (; next_ref < pending_refs_.size() && pending_refs_[next_ref].node == i; ++next_ref) {
      const PendingRef& r = pending_refs_[next_ref];
      const auto id = tensor_ids_.Find(r.name, r.hash);
      if (!id) {
        const Where where{"nodes", i, &node.name};
        return Fail(where + ": " + (r.output ? "output " : "input ") + Quote(r.name) +
                    " is not a declared tensor");
      }
      std::vector<ir::TensorId>& ids = r.output ? node.outputs : node.inputs;
      if (r.position < ids.size()) ids[r.position] = *id;  // a failed list was never sized
    }
    // A node that failed to read is checked up to the references it read, as they were read;
    // its name is not (its own error comes first).
    if (last_failed && i + 1 == end) break;
    if (node_ids_.InsertOrFind(node.name, hashes[i - indexed_nodes_], i)) {
      return Fail("duplicate node name " + Quote(node.name));
    }
  }
  pending_refs_.clear();
  indexed_nodes_ = end;
  return {};
}

Result<void> Reader::ReadTensorRefs(od::value v, const Where& where, const char* field,
                                    std::vector<ir::TensorId>& ids) {
  od::array arr;
  if (auto ec = v.get_array().get(arr)) {
    return Fail(where + "." + field + ": expected an array of tensor names", v, ec);
  }
  const bool output = std::string_view(field) == "outputs";
  const auto node = static_cast<uint32_t>(g_.nodes.size() - 1);
  uint32_t position = 0;
  for (auto item : arr) {
    od::value name_value;
    if (auto ec = std::move(item).get(name_value)) return Fail(ec);
    std::string_view name;
    if (auto ec = GetString(name_value, name)) {
      return Fail(where + "." + field + ": expected tensor names", name_value, ec);
    }
    pending_refs_.push_back({name, 0, node, position++, output});  // resolved in its batch
  }
  ids.assign(position, 0);  // one allocation, of the exact size; the ids come in the batch
  return {};
}

Result<void> Reader::ReadAttrs(od::value v, ir::Node& node, const Where& where) {
  od::object obj;
  if (auto ec = v.get_object().get(obj)) return Fail(where + ".attrs: expected an object", v, ec);
  for (auto item : obj) {
    auto field = Next(item);
    if (!field) return std::unexpected(field.error());
    const std::string_view key = field->key;
    od::value& av = field->value;
    const std::string at = where + ": attribute " + Quote(key);
    if (node.FindAttr(key) != nullptr) return Fail(at + " is given twice");
    od::json_type type;
    if (auto ec = av.type().get(type)) return Fail(ec);
    switch (type) {
      case od::json_type::number: {
        od::number_type kind;
        if (auto ec = av.get_number_type().get(kind)) return Fail(ec);
        if (kind == od::number_type::unsigned_integer) {
          return Fail(at + ": integer does not fit 64 bits");
        }
        if (kind == od::number_type::signed_integer) {
          int64_t i = 0;
          if (auto ec = av.get_int64().get(i)) return Fail(at, av, ec);
          node.attrs.emplace_back(std::string(key), i);
        } else {
          double d = 0;
          if (auto ec = av.get_double().get(d)) return Fail(at, av, ec);
          node.attrs.emplace_back(std::string(key), d);
        }
        break;
      }
      case od::json_type::string: {
        std::string_view s;
        if (auto ec = GetString(av, s)) return Fail(at, av, ec);
        node.attrs.emplace_back(std::string(key), std::string(s));
        break;
      }
      case od::json_type::array: {
        std::vector<int64_t> ints;
        od::array arr;
        if (auto ec = av.get_array().get(arr)) return Fail(at + ": expected an array", av, ec);
        for (auto element : arr) {
          od::value ev;
          if (auto ec = std::move(element).get(ev)) return Fail(ec);
          int64_t i = 0;
          if (auto ec = ev.get_int64().get(i)) return Fail(at + ": expected integers", ev, ec);
          ints.push_back(i);
        }
        node.attrs.emplace_back(std::string(key), std::move(ints));
        break;
      }
      case od::json_type::object:
      case od::json_type::boolean:
      case od::json_type::null:
        return Fail(at + ": expected a number, a string or an array of integers, got " +
                    DescribeJsonValue(av));
    }
  }
  return {};
}

Result<void> Reader::ReadNode(od::value v, size_t index) {
  ir::Node& node = g_.nodes.emplace_back();  // in place, as the tensors
  const Where where{"nodes", index, &node.name};
  od::object obj;
  if (auto ec = v.get_object().get(obj)) return Fail(where + ": expected an object", v, ec);
  bool have_name = false, have_op = false, have_in = false, have_out = false, have_attrs = false,
       have_source = false;
  for (auto item : obj) {
    auto field = Next(item);
    if (!field) return std::unexpected(field.error());
    const std::string_view key = field->key;
    od::value& fv = field->value;
    auto once = [&](bool& seen) -> Result<void> {
      if (seen) return Fail(where + ": duplicate field " + Quote(key));
      seen = true;
      return {};
    };
    if (Is(key, "name")) {
      if (auto ok = once(have_name); !ok) return ok;
      std::string_view name;
      if (auto ec = GetString(fv, name)) return Fail(where + ".name: expected a string", fv, ec);
      if (name.empty()) return Fail(where + ".name: empty node name");
      node.name = std::string(name);
    } else if (Is(key, "op")) {
      if (auto ok = once(have_op); !ok) return ok;
      std::string_view op;
      if (auto ec = GetString(fv, op)) return Fail(where + ".op: expected a string", fv, ec);
      if (op.empty()) return Fail(where + ".op: empty op name");
      if (auto kind = ir::ParseOpKind(op)) {
        node.op = *kind;
      } else {
        node.op = ir::OpKind::kUnknown;
        if (node.source_op.empty()) node.source_op = std::string(op);
      }
    } else if (Is(key, "source_op")) {
      if (auto ok = once(have_source); !ok) return ok;
      std::string_view s;
      if (auto ec = GetString(fv, s)) return Fail(where + ".source_op: expected a string", fv, ec);
      node.source_op = std::string(s);
    } else if (Is(key, "inputs")) {
      if (auto ok = once(have_in); !ok) return ok;
      if (auto ok = ReadTensorRefs(fv, where, "inputs", node.inputs); !ok) return ok;
    } else if (Is(key, "outputs")) {
      if (auto ok = once(have_out); !ok) return ok;
      if (auto ok = ReadTensorRefs(fv, where, "outputs", node.outputs); !ok) return ok;
    } else if (Is(key, "attrs")) {
      if (auto ok = once(have_attrs); !ok) return ok;
      if (auto ok = ReadAttrs(fv, node, where); !ok) return ok;
    } else {
      return Fail(where + ": unknown field " + Quote(key));
    }
  }
  if (!have_name) return Fail(where + ": missing field 'name'");
  if (!have_op) return Fail(where + ": missing field 'op'");
  if (!have_out) return Fail(where + ": missing field 'outputs'");
  return {};
}

}  // namespace

namespace {

// Parses text that already has SIMDJSON_PADDING bytes of capacity after it.
Result<ir::Graph> ParsePadded(const char* data, size_t size, size_t capacity,
                              std::string_view origin) {
  ir::Graph g;
  if (const std::string_view body = SkipUtf8Bom(std::string_view(data, size)); body.size() != size) {
    data += 3;  // the padding after the text stays where it was
    size -= 3;
    capacity -= 3;
  }
  if (std::string_view(data, size).find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return MakeError(std::string(origin) + ": " + DescribeJsonParseError(simdjson::EMPTY));
  }
  od::parser parser;
  od::document doc;
  if (auto ec = parser.iterate(data, size, capacity).get(doc)) {
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
  const simdjson::padded_string padded(text);  // the parser reads past the end in blocks
  return ParsePadded(padded.data(), padded.size(), padded.size() + simdjson::SIMDJSON_PADDING,
                     origin);
}

Result<ir::Graph> LoadGraphJson(const std::string& path) {
  // Mapped in place, with the padding simdjson reads past the end, instead of copied.
  auto file = MapFile(path, uint64_t{1} << 36, simdjson::SIMDJSON_PADDING);
  if (!file) return std::unexpected(file.error());
  return ParsePadded(file->data(), file->size(), file->capacity(), path);
}

}  // namespace opscope::import
