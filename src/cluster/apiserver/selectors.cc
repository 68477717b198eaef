#include "cluster/apiserver/selectors.h"

#include <algorithm>
#include <optional>

namespace steward::cluster {
namespace {

// ---- Validation, with apimachinery's wording (k8s.io/apimachinery/pkg/util/validation). ----

constexpr std::string_view kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kQualifiedNameErr =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::string_view kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr std::string_view kLabelValueErr =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character";
constexpr std::string_view kDns1123SubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kDns1123SubdomainErr =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr size_t kMaxNameLength = 63;
constexpr size_t kMaxSubdomainLength = 253;

std::string RegexError(std::string_view msg, std::string_view fmt,
                       std::initializer_list<std::string_view> examples) {
  std::string out(msg);
  out += " (e.g. ";
  bool first = true;
  for (std::string_view e : examples) {
    if (!first) out += " or ";
    first = false;
    out += "'";
    out += e;
    out += "', ";
  }
  out += "regex used for validation is '";
  out += fmt;
  out += "')";
  return out;
}

std::string MaxLenError(size_t n) {
  return "must be no more than " + std::to_string(n) + " characters";
}

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool MatchesQualifiedName(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool MatchesDns1123Subdomain(std::string_view s) {
  if (s.empty()) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty() || !IsLowerAlnum(label.front()) || !IsLowerAlnum(label.back())) return false;
    for (char c : label) {
      if (!IsLowerAlnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::vector<std::string> QualifiedNameErrors(std::string_view value) {
  std::vector<std::string> errs;
  size_t slashes = std::count(value.begin(), value.end(), '/');
  std::string_view name = value;
  if (slashes == 1) {
    size_t slash = value.find('/');
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > kMaxSubdomainLength) {
        errs.push_back("prefix part " + MaxLenError(kMaxSubdomainLength));
      }
      if (!MatchesDns1123Subdomain(prefix)) {
        errs.push_back("prefix part " +
                       RegexError(kDns1123SubdomainErr, kDns1123SubdomainFmt, {"example.com"}));
      }
    }
  } else if (slashes > 1) {
    errs.push_back(
        "a qualified name " +
        RegexError(kQualifiedNameErr, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}) +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
    return errs;
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > kMaxNameLength) {
    errs.push_back("name part " + MaxLenError(kMaxNameLength));
  }
  if (!MatchesQualifiedName(name)) {
    errs.push_back("name part " + RegexError(kQualifiedNameErr, kQualifiedNameFmt,
                                             {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> LabelValueErrors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kMaxNameLength) errs.push_back(MaxLenError(kMaxNameLength));
  if (!value.empty() && !MatchesQualifiedName(value)) {
    errs.push_back(RegexError(kLabelValueErr, kLabelValueFmt, {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

// field.Invalid(path, value, detail).Error()
std::string InvalidValue(std::string_view path, std::string_view value, std::string_view detail) {
  return std::string(path) + ": Invalid value: " + Quote(value) + ": " + std::string(detail);
}

// Checks a requirement as labels.NewRequirement does; `path` prefixes field paths ("" = none).
// Returns the aggregated error text, or nullopt when valid.
std::optional<std::string> ValidateRequirement(const LabelSelector::Requirement& r,
                                               std::string_view path) {
  std::vector<std::string> errs;
  auto child = [&](std::string_view c) {
    return path.empty() ? std::string(c) : std::string(path) + "." + std::string(c);
  };
  if (auto e = QualifiedNameErrors(r.key); !e.empty()) {
    errs.push_back(InvalidValue(child("key"), r.key, Join(e, "; ")));
  }
  using Op = LabelSelector::Op;
  switch (r.op) {
    case Op::kIn:
    case Op::kNotIn:
      if (r.values.empty()) {
        errs.push_back(
            child("values") +
            ": Invalid value: []: for 'in', 'notin' operators, values set can't be empty");
      }
      break;
    case Op::kEquals:
    case Op::kNotEquals:
      if (r.values.size() != 1) {
        errs.push_back(child("values") +
                       ": Invalid value: []: exact-match compatibility requires one single value");
      }
      break;
    case Op::kExists:
    case Op::kDoesNotExist:
      if (!r.values.empty()) {
        errs.push_back(child("values") + ": Invalid value: [" + Join(r.values, " ") +
                       "]: values set must be empty for exists and does not exist");
      }
      break;
  }
  for (size_t i = 0; i < r.values.size(); ++i) {
    if (auto e = LabelValueErrors(r.values[i]); !e.empty()) {
      errs.push_back(InvalidValue(child("values") + "[" + std::to_string(i) + "][" + r.key + "]",
                                  r.values[i], Join(e, "; ")));
    }
  }
  if (errs.empty()) return std::nullopt;
  if (errs.size() == 1) return errs[0];
  return "[" + Join(errs, ", ") + "]";
}

void SortUnique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// ---- Label selector lexer and parser (the grammar of labels.Parse). ----

enum class Tok {
  kError,
  kEnd,
  kClosedPar,
  kComma,
  kNot,  // "!"
  kDoubleEquals,
  kEquals,
  kGreaterThan,
  kIdentifier,
  kIn,
  kLessThan,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

struct Item {
  Tok tok;
  std::string lit;
};

bool IsWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsSpecial(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

std::optional<Tok> SymbolToken(std::string_view s) {
  if (s == ")") return Tok::kClosedPar;
  if (s == ",") return Tok::kComma;
  if (s == "!") return Tok::kNot;
  if (s == "==") return Tok::kDoubleEquals;
  if (s == "=") return Tok::kEquals;
  if (s == ">") return Tok::kGreaterThan;
  if (s == "<") return Tok::kLessThan;
  if (s == "!=") return Tok::kNotEquals;
  if (s == "(") return Tok::kOpenPar;
  return std::nullopt;
}

std::vector<Item> Lex(std::string_view s) {
  std::vector<Item> items;
  size_t pos = 0;
  while (true) {
    while (pos < s.size() && IsWhitespace(s[pos])) ++pos;
    if (pos >= s.size()) {
      items.push_back({Tok::kEnd, ""});
      return items;
    }
    if (IsSpecial(s[pos])) {
      // Longest run of special characters that still forms a known operator.
      std::string buf;
      std::optional<Item> last;
      while (pos < s.size() && IsSpecial(s[pos])) {
        buf += s[pos];
        if (auto t = SymbolToken(buf)) {
          last = Item{*t, buf};
          ++pos;
        } else if (last) {
          break;
        } else {
          ++pos;
        }
      }
      if (!last) {
        items.push_back({Tok::kError, "error expected: keyword found '" + buf + "'"});
      } else {
        items.push_back(*last);
      }
      continue;
    }
    size_t start = pos;
    while (pos < s.size() && !IsSpecial(s[pos]) && !IsWhitespace(s[pos])) ++pos;
    std::string word(s.substr(start, pos - start));
    Tok t = word == "in" ? Tok::kIn : word == "notin" ? Tok::kNotIn : Tok::kIdentifier;
    items.push_back({t, std::move(word)});
  }
}

class Parser {
 public:
  explicit Parser(std::vector<Item> items) : items_(std::move(items)) {}

  StatusOr<std::vector<LabelSelector::Requirement>> Parse() {
    std::vector<LabelSelector::Requirement> reqs;
    while (true) {
      auto [tok, lit] = Peek(true);
      switch (tok) {
        case Tok::kIdentifier:
        case Tok::kNot: {
          auto r = ParseRequirement();
          if (!r.ok()) {
            return InvalidArgument("unable to parse requirement: " + r.status().message());
          }
          reqs.push_back(std::move(r).value());
          auto [t, l] = Next(true);
          if (t == Tok::kEnd) return reqs;
          if (t == Tok::kComma) {
            auto [t2, l2] = Peek(true);
            if (t2 != Tok::kIdentifier && t2 != Tok::kNot) {
              return InvalidArgument("found '" + l2 + "', expected: identifier after ','");
            }
            continue;
          }
          return InvalidArgument("found '" + l + "', expected: ',' or 'end of string'");
        }
        case Tok::kEnd:
          return reqs;
        default:
          return InvalidArgument("found '" + lit +
                                 "', expected: !, identifier, or 'end of string'");
      }
    }
  }

 private:
  using LS = LabelSelector;

  // In a values context the keywords "in"/"notin" are plain identifiers.
  std::pair<Tok, std::string> Peek(bool values) const {
    const Item& it = items_[pos_];
    Tok t = it.tok;
    if (values && (t == Tok::kIn || t == Tok::kNotIn)) t = Tok::kIdentifier;
    return {t, it.lit};
  }
  std::pair<Tok, std::string> Next(bool values) {
    auto r = Peek(values);
    if (pos_ + 1 < items_.size()) ++pos_;
    return r;
  }

  // Error text without the "unable to parse requirement" prefix (the caller adds it).
  static Status Err(std::string m) { return InvalidArgument(std::move(m)); }

  StatusOr<LS::Requirement> ParseRequirement() {
    LS::Requirement r;
    bool not_exists = false;
    auto [tok, lit] = Next(true);
    if (tok == Tok::kNot) {
      not_exists = true;
      std::tie(tok, lit) = Next(true);
    }
    if (tok != Tok::kIdentifier) return Err("found '" + lit + "', expected: identifier");
    if (auto e = QualifiedNameErrors(lit); !e.empty()) {
      return Err(InvalidValue("<nil>", lit, Join(e, "; ")));
    }
    r.key = lit;
    // "!key" is complete by itself: whatever follows is checked by the caller ("!a=b" fails
    // there with "found '=', expected: ',' or 'end of string'", as in apimachinery).
    if (not_exists) {
      r.op = LS::Op::kDoesNotExist;
      return r;
    }
    auto [next, next_lit] = Peek(true);
    if (next == Tok::kEnd || next == Tok::kComma) {
      r.op = LS::Op::kExists;
      return r;
    }
    auto [op_tok, op_lit] = Next(false);
    switch (op_tok) {
      case Tok::kIn:
        r.op = LS::Op::kIn;
        break;
      case Tok::kNotIn:
        r.op = LS::Op::kNotIn;
        break;
      case Tok::kEquals:
      case Tok::kDoubleEquals:
        r.op = LS::Op::kEquals;
        break;
      case Tok::kNotEquals:
        r.op = LS::Op::kNotEquals;
        break;
      case Tok::kGreaterThan:
      case Tok::kLessThan:
        return Err("operator '" + op_lit + "' is not supported by this server");
      default:
        return Err("found '" + op_lit + "', expected: in, notin, =, ==, !=, gt, lt");
    }
    if (r.op == LS::Op::kIn || r.op == LS::Op::kNotIn) {
      ASSIGN_OR_RETURN(r.values, ParseValues());
    } else {
      ASSIGN_OR_RETURN(r.values, ParseExactValue());
    }
    SortUnique(r.values);
    if (auto e = ValidateRequirement(r, "")) return Err(*e);
    return r;
  }

  // "(" values ")", where values may be empty strings: "()", "(a,)", "(,a)", "(a,,b)".
  StatusOr<std::vector<std::string>> ParseValues() {
    auto [tok, lit] = Next(true);
    if (tok != Tok::kOpenPar) return Err("found '" + lit + "' expected: '('");
    auto [t, l] = Peek(true);
    if (t == Tok::kClosedPar) {
      Next(true);
      return std::vector<std::string>{""};
    }
    if (t != Tok::kIdentifier && t != Tok::kComma) {
      return Err("found '" + l + "', expected: ',', ')' or identifier");
    }
    ASSIGN_OR_RETURN(auto values, ParseIdentifiersList());
    auto [ct, cl] = Next(true);
    if (ct != Tok::kClosedPar) return Err("found '" + cl + "', expected: ')'");
    return values;
  }

  // Leaves the closing parenthesis for the caller.
  StatusOr<std::vector<std::string>> ParseIdentifiersList() {
    std::vector<std::string> values;
    while (true) {
      auto [t, l] = Next(true);
      if (t == Tok::kIdentifier) {
        values.push_back(l);
        auto [t2, l2] = Peek(true);
        if (t2 == Tok::kComma) continue;
        if (t2 == Tok::kClosedPar) return values;
        return Err("found '" + l2 + "', expected: ',' or ')'");
      }
      if (t == Tok::kComma) {
        if (values.empty()) values.push_back("");  // "(,"
        auto [t2, l2] = Peek(true);
        if (t2 == Tok::kClosedPar) {
          values.push_back("");  // ",)"
          return values;
        }
        if (t2 == Tok::kComma) {
          Next(true);
          values.push_back("");  // ",,"
        }
        continue;
      }
      return Err("found '" + l + "', expected: ',', or identifier");
    }
  }

  StatusOr<std::vector<std::string>> ParseExactValue() {
    auto [t, l] = Peek(true);
    if (t == Tok::kEnd || t == Tok::kComma) return std::vector<std::string>{""};
    auto [vt, vl] = Next(true);
    if (vt == Tok::kIdentifier) return std::vector<std::string>{vl};
    return Err("found '" + vl + "', expected: identifier");
  }

  std::vector<Item> items_;
  size_t pos_ = 0;
};

const std::string* FindLabel(const Labels& labels, const std::string& key) {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& kv, const std::string& k) { return kv.first < k; });
  if (it == labels.end() || it->first != key) return nullptr;
  return &it->second;
}

bool RequirementMatches(const LabelSelector::Requirement& r, const std::string* value) {
  auto has = [&] { return std::binary_search(r.values.begin(), r.values.end(), *value); };
  switch (r.op) {
    case LabelSelector::Op::kEquals:
    case LabelSelector::Op::kIn:
      return value != nullptr && has();
    case LabelSelector::Op::kNotEquals:
    case LabelSelector::Op::kNotIn:
      return value == nullptr || !has();
    case LabelSelector::Op::kExists:
      return value != nullptr;
    case LabelSelector::Op::kDoesNotExist:
      return value == nullptr;
  }
  return false;
}

void SortByKey(std::vector<LabelSelector::Requirement>& reqs) {
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const auto& a, const auto& b) { return a.key < b.key; });
}

}  // namespace

StatusOr<LabelSelector> LabelSelector::Parse(std::string_view text) {
  std::vector<Item> items = Lex(text);
  Parser parser(std::move(items));
  ASSIGN_OR_RETURN(auto reqs, parser.Parse());
  SortByKey(reqs);
  LabelSelector sel;
  sel.requirements_ = std::move(reqs);
  return sel;
}

StatusOr<LabelSelector> LabelSelector::FromJson(const Json& selector) {
  LabelSelector sel;
  if (selector.is_null()) return sel;
  if (!selector.is_object()) return InvalidArgument("label selector must be an object");
  if (auto it = selector.find("matchLabels"); it != selector.end() && !it->is_null()) {
    if (!it->is_object()) return InvalidArgument("matchLabels must be an object");
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string()) {
        return InvalidArgument("matchLabels." + k + ": Invalid value: must be a string");
      }
      Requirement r{k, Op::kEquals, {v.get<std::string>()}};
      if (auto e = ValidateRequirement(r, "")) return InvalidArgument(*e);
      sel.requirements_.push_back(std::move(r));
    }
  }
  if (auto it = selector.find("matchExpressions"); it != selector.end() && !it->is_null()) {
    if (!it->is_array()) return InvalidArgument("matchExpressions must be a list");
    for (const Json& expr : *it) {
      if (!expr.is_object()) return InvalidArgument("matchExpressions entries must be objects");
      Requirement r;
      r.key = GetString(expr, "key");
      std::string op = GetString(expr, "operator");
      if (op == "In") {
        r.op = Op::kIn;
      } else if (op == "NotIn") {
        r.op = Op::kNotIn;
      } else if (op == "Exists") {
        r.op = Op::kExists;
      } else if (op == "DoesNotExist") {
        r.op = Op::kDoesNotExist;
      } else {
        return InvalidArgument(Quote(op) + " is not a valid label selector operator");
      }
      if (auto v = expr.find("values"); v != expr.end() && !v->is_null()) {
        if (!v->is_array()) return InvalidArgument("matchExpressions values must be a list");
        for (const Json& s : *v) {
          if (!s.is_string()) return InvalidArgument("matchExpressions values must be strings");
          r.values.push_back(s.get<std::string>());
        }
      }
      SortUnique(r.values);
      if (auto e = ValidateRequirement(r, "")) return InvalidArgument(*e);
      sel.requirements_.push_back(std::move(r));
    }
  }
  SortByKey(sel.requirements_);
  return sel;
}

bool LabelSelector::MatchesStored(const std::shared_ptr<const Labels>& labels) const {
  static const Labels kNone;
  return Matches(labels ? *labels : kNone);
}

bool LabelSelector::Matches(const Labels& labels) const {
  for (const Requirement& r : requirements_) {
    if (!RequirementMatches(r, FindLabel(labels, r.key))) return false;
  }
  return true;
}

bool LabelSelector::MatchesJson(const Json& labels) const {
  for (const Requirement& r : requirements_) {
    const std::string* value = nullptr;
    if (labels.is_object()) {
      auto it = labels.find(r.key);
      if (it != labels.end() && it->is_string()) value = it->get_ptr<const std::string*>();
    }
    if (!RequirementMatches(r, value)) return false;
  }
  return true;
}

std::string LabelSelector::ToString() const {
  std::string out;
  for (const Requirement& r : requirements_) {
    if (!out.empty()) out += ',';
    if (r.op == Op::kDoesNotExist) out += '!';
    out += r.key;
    switch (r.op) {
      case Op::kEquals:
        out += '=' + (r.values.empty() ? std::string() : r.values[0]);
        break;
      case Op::kNotEquals:
        out += "!=" + (r.values.empty() ? std::string() : r.values[0]);
        break;
      case Op::kIn:
        out += " in (" + Join(r.values, ",") + ")";
        break;
      case Op::kNotIn:
        out += " notin (" + Join(r.values, ",") + ")";
        break;
      case Op::kExists:
      case Op::kDoesNotExist:
        break;
    }
  }
  return out;
}

// ---- Field selectors (fields.ParseSelector). ----

namespace {

// Splits on unescaped commas, keeping escapes in the terms.
std::vector<std::string_view> SplitTerms(std::string_view s) {
  std::vector<std::string_view> terms;
  if (s.empty()) return terms;
  size_t start = 0;
  bool in_slash = false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (in_slash) {
      in_slash = false;
    } else if (s[i] == '\\') {
      in_slash = true;
    } else if (s[i] == ',') {
      terms.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  terms.push_back(s.substr(start));
  return terms;
}

StatusOr<std::string> UnescapeValue(std::string_view s) {
  std::string out;
  bool in_slash = false;
  for (char c : s) {
    if (in_slash) {
      if (c != '\\' && c != ',' && c != '=') {
        return InvalidArgument(std::string("invalid field selector: invalid escape sequence: \\") +
                               c);
      }
      out += c;
      in_slash = false;
      continue;
    }
    if (c == '\\') {
      in_slash = true;
    } else if (c == ',' || c == '=') {
      // apimachinery prints the rune as a number.
      return InvalidArgument("invalid field selector: unescaped character in value: " +
                             std::to_string(static_cast<int>(c)));
    } else {
      out += c;
    }
  }
  if (in_slash) return InvalidArgument("invalid field selector: invalid escape sequence: \\");
  return out;
}

std::string FieldText(const Json* v) {
  if (v == nullptr || v->is_null()) return "";
  if (v->is_string()) return v->get<std::string>();
  return DumpJson(*v);
}

}  // namespace

StatusOr<FieldSelector> FieldSelector::Parse(std::string_view text) {
  FieldSelector sel;
  for (std::string_view part : SplitTerms(text)) {
    if (part.empty()) continue;
    std::optional<size_t> at;
    size_t op_len = 0;
    bool equals = true;
    for (size_t i = 0; i < part.size() && !at; ++i) {
      if (part.substr(i, 2) == "!=") {
        at = i, op_len = 2, equals = false;
      } else if (part.substr(i, 2) == "==") {
        at = i, op_len = 2;
      } else if (part[i] == '=') {
        at = i, op_len = 1;
      }
    }
    if (!at || *at == 0) {
      return InvalidArgument("invalid selector: '" + std::string(text) + "'; can't understand '" +
                             std::string(part) + "'");
    }
    ASSIGN_OR_RETURN(std::string value, UnescapeValue(part.substr(*at + op_len)));
    sel.requirements_.push_back({std::string(part.substr(0, *at)), equals, std::move(value)});
  }
  // Ordered by field, as Kubernetes' fields.ParseSelector orders them (by key, not by the text
  // of the term: "a==x" and "a=x" are one requirement and must sort alike; found by the
  // cluster_selectors fuzzer). Terms on one field keep their order.
  std::stable_sort(sel.requirements_.begin(), sel.requirements_.end(),
                   [](const Requirement& a, const Requirement& b) { return a.path < b.path; });
  return sel;
}

bool FieldSelector::Matches(const Json& object) const {
  for (const Requirement& r : requirements_) {
    bool eq = FieldText(FindPath(object, r.path)) == r.value;
    if (eq != r.equals) return false;
  }
  return true;
}

std::string FieldSelector::PinnedName() const {
  for (const Requirement& r : requirements_) {
    if (r.equals && r.path == "metadata.name") return r.value;
  }
  return "";
}

std::string FieldSelector::PinnedNamespace() const {
  for (const Requirement& r : requirements_) {
    if (r.equals && r.path == "metadata.namespace") return r.value;
  }
  return "";
}

}  // namespace steward::cluster
