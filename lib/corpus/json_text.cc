#include "corpus/json_text.h"

#include "common/strings.h"
#include "simdjson.h"

namespace tokenmill {

static_assert(kJsonPadding == simdjson::SIMDJSON_PADDING, "kJsonPadding must match simdjson");

struct JsonTextExtractor::Parser {
  simdjson::dom::parser parser;
};

JsonTextExtractor::JsonTextExtractor(std::string field)
    : field_(std::move(field)), parser_(std::make_unique<Parser>()) {}

JsonTextExtractor::~JsonTextExtractor() = default;

bool JsonTextExtractor::Extract(std::string_view record, std::string_view* text, Problem* problem,
                                std::string* detail) {
  // A UTF-8 byte order mark before a record (a file saved by Windows tools starts with one) is
  // passed over, as RFC 8259 (8.1) allows a parser to; it is no part of the text.
  if (record.starts_with("\xEF\xBB\xBF")) record.remove_prefix(3);
  simdjson::dom::element root;
  auto error = parser_->parser.parse(record.data(), record.size(), false).get(root);
  if (error) {
    *problem = Problem::kMalformed;
    *detail = StrCat("malformed JSON: ", simdjson::error_message(error));
    return false;
  }
  simdjson::dom::element value;
  if (!field_.empty() && field_[0] == '/') {
    error = root.at_pointer(field_).get(value);
  } else {
    simdjson::dom::object object;
    if (root.get(object)) {
      *problem = Problem::kMissingField;
      *detail = StrCat("the record is not a JSON object, so it has no field \"", field_, "\"");
      return false;
    }
    error = object.at_key(field_).get(value);
  }
  if (error) {
    *problem = Problem::kMissingField;
    *detail = StrCat("the record has no field \"", field_, "\" (see `text_field`)");
    return false;
  }
  std::string_view s;
  if (value.get_string().get(s)) {
    *problem = Problem::kNotAString;
    *detail = StrCat("field \"", field_, "\" is not a string");
    return false;
  }
  *text = s;
  *problem = Problem::kNone;
  return true;
}

bool IsBlankLine(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  }
  return true;
}

}  // namespace tokenmill
