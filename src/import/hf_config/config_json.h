// Reading Hugging Face config.json files the way Python's json module does: bare Infinity,
// -Infinity and NaN are accepted (they are read as null; no field opscope uses can hold one),
// and a key that appears twice takes its last value. Lookups are typed and every error names
// the file and the field ("config.json: field 'text_config.hidden_size': expected an integer").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
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

// One JSON object of a config (the root, or a nested one such as text_config).
class ConfigObject {
 public:
  enum class Presence : uint8_t { kAbsent, kNull, kValue };

  ConfigObject(simdjson::dom::object object, std::string origin, std::string prefix)
      : object_(object), origin_(std::move(origin)), prefix_(std::move(prefix)) {}

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
  // The keys in file order, each once (a repeated key at its first place).
  std::vector<std::string> Keys() const;

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
};

// A parsed config document; owns the parser its objects point into.
class ConfigDocument {
 public:
  // `origin` names the file in every message ("config.json", "preset 'llama-3.1-8b'").
  static Result<std::unique_ptr<ConfigDocument>> Parse(std::string_view text, std::string origin);
  ConfigObject root() const { return ConfigObject(root_, origin_, ""); }

 private:
  ConfigDocument() = default;
  simdjson::dom::parser parser_;
  simdjson::dom::object root_;
  std::string origin_;
};

}  // namespace opscope::import::hf
