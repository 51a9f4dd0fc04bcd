// Typed, Python-compatible lookups into a config.json (see config_json.h).
#include "import/hf_config/config_json.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <utility>

#include "support/json_describe.h"
#include "support/utf8.h"

namespace opscope::import::hf {

using simdjson::dom::element;
using simdjson::dom::element_type;

std::string SanitizeNonFiniteLiterals(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.push_back(c);
      if (c == '\\' && i + 1 < text.size()) {
        out.push_back(text[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out.push_back(c);
      continue;
    }
    const std::string_view rest = text.substr(i);
    size_t literal = 0;
    if (rest.starts_with("-Infinity")) {
      literal = 9;
    } else if (rest.starts_with("Infinity")) {
      literal = 8;
    } else if (rest.starts_with("NaN")) {
      literal = 3;
    }
    if (literal > 0) {
      out += "null";
      i += literal - 1;
      continue;
    }
    out.push_back(c);
  }
  return out;
}

namespace {

// Integers may be written as 4096 or 4096.0 (Python accepts both for int fields).
std::optional<int64_t> AsInt(element value) {
  int64_t i = 0;
  if (value.type() == element_type::INT64 && value.get_int64().get(i) == simdjson::SUCCESS) {
    return i;
  }
  uint64_t u = 0;
  if (value.type() == element_type::UINT64 && value.get_uint64().get(u) == simdjson::SUCCESS &&
      u <= static_cast<uint64_t>(INT64_MAX)) {
    return static_cast<int64_t>(u);
  }
  double d = 0;
  if (value.type() == element_type::DOUBLE && value.get_double().get(d) == simdjson::SUCCESS &&
      std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

}  // namespace

std::optional<element> ConfigObject::Last(std::string_view key) const {
  MarkRead(key);
  std::optional<element> found;
  for (auto field : object_) {
    if (field.key == key) found = field.value;  // duplicate keys: the last one wins
  }
  return found;
}

void ConfigObject::MarkRead(std::string_view key) const {
  if (log_ != nullptr) log_->insert(Path(key));
}

bool ConfigObject::WasRead(std::string_view key) const {
  return log_ != nullptr && log_->contains(Path(key));
}

std::vector<std::string> ConfigObject::Keys() const {
  std::vector<std::string> keys;
  for (auto field : object_) {
    if (std::find(keys.begin(), keys.end(), field.key) == keys.end()) keys.emplace_back(field.key);
  }
  return keys;
}

ConfigObject::Presence ConfigObject::Find(std::string_view key) const {
  const auto v = Last(key);
  if (!v) return Presence::kAbsent;
  return v->type() == element_type::NULL_VALUE ? Presence::kNull : Presence::kValue;
}

Error ConfigObject::FieldError(std::string_view key, const std::string& why) const {
  return Error{origin_ + ": field '" + Path(key) + "': " + why};
}

Result<std::optional<int64_t>> ConfigObject::Int(std::string_view key) const {
  const auto v = Last(key);
  if (!v || v->type() == element_type::NULL_VALUE) return std::nullopt;
  if (auto i = AsInt(*v)) {
    // Every integer opscope reads is a size or a count that the step graph multiplies
    // (2 · heads · head_dim, ...): bounding each keeps those products far from overflow.
    if (*i > kMaxConfigInt) {
      return std::unexpected(FieldError(key, std::to_string(*i) + " is larger than " +
                                                 std::to_string(kMaxConfigInt) +
                                                 ", the most opscope accepts for a size or count"));
    }
    return *i;
  }
  return std::unexpected(FieldError(key, "expected an integer, got " + DescribeJsonValue(*v)));
}

Result<std::optional<double>> ConfigObject::Number(std::string_view key) const {
  const auto v = Last(key);
  if (!v || v->type() == element_type::NULL_VALUE) return std::nullopt;
  double d = 0;
  const element_type t = v->type();
  if ((t == element_type::INT64 || t == element_type::UINT64 || t == element_type::DOUBLE) &&
      v->get_double().get(d) == simdjson::SUCCESS) {
    return d;
  }
  return std::unexpected(FieldError(key, "expected a number, got " + DescribeJsonValue(*v)));
}

Result<std::optional<bool>> ConfigObject::Bool(std::string_view key) const {
  const auto v = Last(key);
  if (!v || v->type() == element_type::NULL_VALUE) return std::nullopt;
  bool b = false;
  if (v->get_bool().get(b) == simdjson::SUCCESS) return b;
  return std::unexpected(FieldError(key, "expected true or false, got " + DescribeJsonValue(*v)));
}

Result<std::optional<std::string>> ConfigObject::String(std::string_view key) const {
  const auto v = Last(key);
  if (!v || v->type() == element_type::NULL_VALUE) return std::nullopt;
  std::string_view s;
  if (v->get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  return std::unexpected(FieldError(key, "expected a string, got " + DescribeJsonValue(*v)));
}

Result<std::optional<std::vector<std::string>>> ConfigObject::StringList(
    std::string_view key) const {
  const auto v = Last(key);
  if (!v || v->type() == element_type::NULL_VALUE) return std::nullopt;
  simdjson::dom::array array;
  if (v->get_array().get(array) != simdjson::SUCCESS) {
    return std::unexpected(FieldError(key, "expected a list of strings, got " + DescribeJsonValue(*v)));
  }
  std::vector<std::string> out;
  size_t index = 0;
  for (element item : array) {
    std::string_view s;
    if (item.get_string().get(s) != simdjson::SUCCESS) {
      return std::unexpected(FieldError(key, "item " + std::to_string(index) +
                                                 ": expected a string, got " + DescribeJsonValue(item)));
    }
    out.emplace_back(s);
    ++index;
  }
  return out;
}

Result<std::optional<std::vector<int64_t>>> ConfigObject::IntList(std::string_view key) const {
  const auto v = Last(key);
  if (!v || v->type() == element_type::NULL_VALUE) return std::nullopt;
  simdjson::dom::array array;
  if (v->get_array().get(array) != simdjson::SUCCESS) {
    return std::unexpected(FieldError(key, "expected a list of integers, got " + DescribeJsonValue(*v)));
  }
  std::vector<int64_t> out;
  size_t index = 0;
  for (element item : array) {
    const auto i = AsInt(item);
    if (!i) {
      return std::unexpected(FieldError(key, "item " + std::to_string(index) +
                                                 ": expected an integer, got " + DescribeJsonValue(item)));
    }
    out.push_back(*i);
    ++index;
  }
  return out;
}

Result<std::optional<ConfigObject>> ConfigObject::Object(std::string_view key) const {
  const auto v = Last(key);
  if (!v || v->type() == element_type::NULL_VALUE) return std::nullopt;
  simdjson::dom::object object;
  if (v->get_object().get(object) != simdjson::SUCCESS) {
    return std::unexpected(FieldError(key, "expected an object, got " + DescribeJsonValue(*v)));
  }
  return ConfigObject(object, origin_, Path(key) + ".", log_);
}

Result<std::optional<std::vector<ConfigObject>>> ConfigObject::ObjectList(
    std::string_view key) const {
  const auto v = Last(key);
  if (!v || v->type() == element_type::NULL_VALUE) return std::nullopt;
  simdjson::dom::array array;
  if (v->get_array().get(array) != simdjson::SUCCESS) {
    return std::unexpected(FieldError(key, "expected a list of objects, got " + DescribeJsonValue(*v)));
  }
  std::vector<ConfigObject> out;
  for (element item : array) {
    simdjson::dom::object object;
    if (item.get_object().get(object) != simdjson::SUCCESS) {
      return std::unexpected(FieldError(key, "item " + std::to_string(out.size()) +
                                                 ": expected an object, got " + DescribeJsonValue(item)));
    }
    out.emplace_back(object, origin_, Path(key) + "[" + std::to_string(out.size()) + "].", log_);
  }
  return out;
}

bool ConfigObject::IsString(std::string_view key) const {
  std::optional<element> found;
  for (auto field : object_) {
    if (field.key == key) found = field.value;
  }
  return found && found->type() == element_type::STRING;
}

Result<std::unique_ptr<ConfigDocument>> ConfigDocument::Parse(std::string_view text,
                                                              std::string origin) {
  std::unique_ptr<ConfigDocument> doc(new ConfigDocument());
  doc->origin_ = std::move(origin);
  text = SkipUtf8Bom(text);
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return MakeError(doc->origin_ + ": empty file, expected a JSON object (an HF config.json)");
  }
  const std::string sanitized = SanitizeNonFiniteLiterals(text);
  element root;
  if (auto code = doc->parser_.parse(sanitized).get(root); code != simdjson::SUCCESS) {
    return MakeError(doc->origin_ + ": " + DescribeJsonParseError(code));
  }
  if (root.get_object().get(doc->root_) != simdjson::SUCCESS) {
    return MakeError(doc->origin_ + ": expected a JSON object at the top level, got " +
                     DescribeJsonValue(root));
  }
  return doc;
}

}  // namespace opscope::import::hf
