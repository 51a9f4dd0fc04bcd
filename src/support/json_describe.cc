// JSON error wording shared by the device, config and graph readers (see json_describe.h).
#include "support/json_describe.h"

#include <cctype>
#include <string_view>

namespace opscope {

using simdjson::dom::element;
using simdjson::dom::element_type;

std::string DescribeJsonValue(element value) {
  switch (value.type()) {
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
    case element_type::NULL_VALUE:
      return "null";
    case element_type::STRING: {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS) return "a string";
      constexpr size_t kMaxShown = 40;
      std::string shown = "\"";
      shown.append(s.substr(0, kMaxShown));
      shown.append(s.size() > kMaxShown ? "...\"" : "\"");
      return shown;
    }
    case element_type::INT64:
    case element_type::UINT64:
    case element_type::DOUBLE:
    case element_type::BOOL:
      return simdjson::minify(value);
  }
  return "a value";
}

std::string DescribeJsonValue(simdjson::ondemand::value& value) {
  namespace od = simdjson::ondemand;
  od::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return "a value";
  switch (type) {
    case od::json_type::array:
      return "an array";
    case od::json_type::object:
      return "an object";
    case od::json_type::null:
      return "null";
    case od::json_type::string:
    case od::json_type::number:
    case od::json_type::boolean:
      break;
  }
  // The token as written (strings with their quotes), without the blanks after it.
  std::string_view token = value.raw_json_token();
  while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' ||
                            token.back() == '\r')) {
    token.remove_suffix(1);
  }
  if (type != od::json_type::string) return std::string(token);
  constexpr size_t kMaxShown = 40;
  token = token.substr(1, token.size() >= 2 ? token.size() - 2 : 0);  // between the quotes
  std::string shown = "\"";
  shown.append(token.substr(0, kMaxShown));
  shown.append(token.size() > kMaxShown ? "...\"" : "\"");
  return shown;
}

std::string DescribeJsonParseError(simdjson::error_code code) {
  switch (code) {
    case simdjson::EMPTY:
      return "empty document, expected a JSON object";
    case simdjson::TAPE_ERROR:
      return "not valid JSON: truncated or malformed (unbalanced brackets, a missing value or "
             "comma, text after the document, or a bare word such as NaN or Infinity)";
    case simdjson::DEPTH_ERROR:
      return "not valid JSON: nested too deeply";
    case simdjson::UNCLOSED_STRING:
      return "not valid JSON: truncated (an unclosed string)";
    case simdjson::NUMBER_ERROR:
      return "not valid JSON: a malformed or out-of-range number";
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
      return "not valid JSON: an invalid literal (only true, false and null are bare words; "
             "NaN and Infinity are not JSON)";
    case simdjson::UTF8_ERROR:
      return "not valid JSON: invalid UTF-8";
    case simdjson::UNESCAPED_CHARS:
      return "not valid JSON: a control character inside a string (write it escaped)";
    case simdjson::TRAILING_CONTENT:
      return "not valid JSON: text after the document";
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
      return "not valid JSON: truncated (an unclosed array or object)";
    default:
      break;
  }
  // Anything else in simdjson's own words, as a fragment: lower-case, no final period.
  std::string message = simdjson::error_message(code);
  if (!message.empty()) {
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
    while (!message.empty() && (message.back() == '.' || message.back() == ' ')) {
      message.pop_back();
    }
  }
  return "not valid JSON: " + message;
}

}  // namespace opscope
