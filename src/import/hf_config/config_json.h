// Reading Hugging Face config.json files the way Python's json module does: bare Infinity,
// -Infinity and NaN are accepted (they are read as null; no field opscope uses can hold one),
// and a key that appears twice takes its last value. Lookups are typed and every error names
// the file and the field ("config.json: field 'text_config.hidden_size': expected an integer").
// Every lookup is logged by its path, so that the importer can name the fields it never read
// (config_fields.h: a field that changes shapes is never ignored silently).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "support/error.h"

namespace opscope::import::hf {

// Replaces bare Infinity, -Infinity and NaN outside strings with null. Exposed for tests.
std::string SanitizeNonFiniteLiterals(std::string_view text);

// The largest integer a config field may hold: 2^24 (vocabularies are ~2^18, hidden sizes ~2^14).
inline constexpr int64_t kMaxConfigInt = int64_t{1} << 24;

// The paths of the fields a reader looked up ("text_config.hidden_size"), present or not.
using FieldLog = std::set<std::string, std::less<>>;

// One JSON object of a config (the root, or a nested one such as text_config).
class ConfigObject {
 public:
  enum class Presence : uint8_t { kAbsent, kNull, kValue };

  // `log`, when given, records the path of every key looked up through this object and the
  // objects it hands out; it must outlive them.
  ConfigObject(simdjson::dom::object object, std::string origin, std::string prefix,
               FieldLog* log = nullptr)
      : object_(object), origin_(std::move(origin)), prefix_(std::move(prefix)), log_(log) {}

  // Absent, explicitly null, or holding a value (the last one when the key repeats).
  Presence Find(std::string_view key) const;
  bool HasValue(std::string_view key) const { return Find(key) == Presence::kValue; }

  // Absent or null give std::nullopt; a value of the wrong type is an error naming the field,
  // and so is an integer above kMaxConfigInt (real sizes and counts are far below it).
  Result<std::optional<int64_t>> Int(std::string_view key) const;
  Result<std::optional<double>> Number(std::string_view key) const;
  Result<std::optional<bool>> Bool(std::string_view key) const;
  Result<std::optional<std::string>> String(std::string_view key) const;
  Result<std::optional<std::vector<std::string>>> StringList(std::string_view key) const;
  Result<std::optional<std::vector<int64_t>>> IntList(std::string_view key) const;
  Result<std::optional<ConfigObject>> Object(std::string_view key) const;
  // A list of objects (DeciLM's block_configs); each item's path is "key[i].".
  Result<std::optional<std::vector<ConfigObject>>> ObjectList(std::string_view key) const;
  // Whether the field holds a string (fields that take an int or a name, such as "auto").
  bool IsString(std::string_view key) const;

  // The keys of this object in document order, each once (a repeated key is listed where it
  // first appears). Listing keys logs nothing.
  std::vector<std::string> Keys() const;
  // Marks a key as read without looking at its value (a field known to have no shape effect).
  void MarkRead(std::string_view key) const;
  bool WasRead(std::string_view key) const;

  // "text_config.hidden_size": the field as the user wrote it, for messages.
  std::string Path(std::string_view key) const { return prefix_ + std::string(key); }
  const std::string& origin() const { return origin_; }
  // "config.json: field 'text_config.hidden_size': <why>"
  Error FieldError(std::string_view key, const std::string& why) const;

 private:
  std::optional<simdjson::dom::element> Last(std::string_view key) const;

  simdjson::dom::object object_;
  std::string origin_;
  std::string prefix_;
  FieldLog* log_ = nullptr;
};

// A parsed config document; owns the parser its objects point into.
class ConfigDocument {
 public:
  // `origin` names the file in every message ("config.json", "preset 'llama-3.1-8b'").
  static Result<std::unique_ptr<ConfigDocument>> Parse(std::string_view text, std::string origin);
  // The root object; its lookups (and those of the objects it hands out) go to read_log().
  ConfigObject root() const { return ConfigObject(root_, origin_, "", &read_); }
  const FieldLog& read_log() const { return read_; }

 private:
  ConfigDocument() = default;
  simdjson::dom::parser parser_;
  simdjson::dom::object root_;
  std::string origin_;
  mutable FieldLog read_;
};

}  // namespace opscope::import::hf
