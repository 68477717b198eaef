#include "cluster/apiserver/selectors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace steward::cluster {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Op = LabelSelector::Op;

Labels L(std::initializer_list<std::pair<std::string, std::string>> kv) {
  Labels l(kv);
  std::sort(l.begin(), l.end());
  return l;
}

struct ParseCase {
  std::string text;
  std::string canonical;  // ToString() of the parsed selector
};

TEST(LabelSelectorTest, ParsesTheApimachineryGrammar) {
  const ParseCase cases[] = {
      {"", ""},
      {"   ", ""},
      {"x=a", "x=a"},
      {"x==a", "x=a"},
      {"x = a", "x=a"},
      {"x!=a", "x!=a"},
      {"x=", "x="},
      {"x=,y", "x=,y"},
      {"x", "x"},
      {"!x", "!x"},
      {" ! x ", "!x"},
      {"x in (b,a)", "x in (a,b)"},
      {"x in (a,a)", "x in (a)"},
      {"x notin (a)", "x notin (a)"},
      {"x in ()", "x in ()"},
      {"x in (a,)", "x in (,a)"},
      {"x in (,a)", "x in (,a)"},
      {"x in (a,,b)", "x in (,a,b)"},
      {"x in (in,notin)", "x in (in,notin)"},  // keywords are values in a value list
      {"x=in", "x=in"},
      {"z=1,a=2,m", "a=2,m,z=1"},  // sorted by key
      {"example.com/app=web", "example.com/app=web"},
      {"a.b-c_d=A.b-C_1", "a.b-c_d=A.b-C_1"},
      {"x in(a),y notin(b)", "x in (a),y notin (b)"},
      {"app=web,\ttier in (fe, be)", "app=web,tier in (be,fe)"},
  };
  for (const auto& c : cases) {
    auto sel = LabelSelector::Parse(c.text);
    ASSERT_TRUE(sel.ok()) << c.text << ": " << sel.status().ToString();
    EXPECT_EQ(sel->ToString(), c.canonical) << c.text;
    // The canonical form parses back to itself.
    auto again = LabelSelector::Parse(sel->ToString());
    ASSERT_TRUE(again.ok()) << sel->ToString();
    EXPECT_EQ(again->ToString(), c.canonical);
  }
}

TEST(LabelSelectorTest, ParsedRequirementsCarryOpsAndSortedValues) {
  auto sel = LabelSelector::Parse("b notin (z,y),a,!c,d=1,e!=2,f in (q)");
  ASSERT_TRUE(sel.ok());
  const auto& r = sel->requirements();
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].key, "a");
  EXPECT_EQ(r[0].op, Op::kExists);
  EXPECT_EQ(r[1].op, Op::kNotIn);
  EXPECT_EQ(r[1].values, (std::vector<std::string>{"y", "z"}));
  EXPECT_EQ(r[2].op, Op::kDoesNotExist);
  EXPECT_EQ(r[3].op, Op::kEquals);
  EXPECT_EQ(r[3].values, (std::vector<std::string>{"1"}));
  EXPECT_EQ(r[4].op, Op::kNotEquals);
  EXPECT_EQ(r[5].op, Op::kIn);
  EXPECT_FALSE(sel->Empty());
  EXPECT_TRUE(LabelSelector::Parse("")->Empty());
}

struct BadCase {
  std::string text;
  std::string message;  // exact, or a prefix when `prefix` is set
  bool prefix = false;
};

TEST(LabelSelectorTest, RejectsBadInputWithApimachineryMessages) {
  const std::string name_regex =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
      "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
      "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  const std::string value_regex =
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
      "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
      "'my_value',  or '12345', regex used for validation is "
      "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  const BadCase cases[] = {
      {"-x=a", "unable to parse requirement: <nil>: Invalid value: \"-x\": " + name_regex},
      {"x=-a", "unable to parse requirement: values[0][x]: Invalid value: \"-a\": " + value_regex},
      // Values are sorted before they are checked ('-' sorts before 'a').
      {"x in (a,-b)",
       "unable to parse requirement: values[0][x]: Invalid value: \"-b\": " + value_regex},
      {"x in (a,b-)",
       "unable to parse requirement: values[1][x]: Invalid value: \"b-\": " + value_regex},
      {std::string(64, 'k') + "=a", "unable to parse requirement: <nil>: Invalid value: \"" +
                                        std::string(64, 'k') +
                                        "\": name part must be no more than 63 characters"},
      {"x=" + std::string(64, 'v'), "unable to parse requirement: values[0][x]: Invalid value: \"" +
                                        std::string(64, 'v') +
                                        "\": must be no more than 63 characters"},
      {"/x=a",
       "unable to parse requirement: <nil>: Invalid value: \"/x\": prefix part must be "
       "non-empty"},
      {"Example.com/x",
       "unable to parse requirement: <nil>: Invalid value: \"Example.com/x\": "
       "prefix part a lowercase RFC 1123 subdomain",
       true},
      {"a/b/c",
       "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name "
       "must consist of",
       true},
      {"x/=a",
       "unable to parse requirement: <nil>: Invalid value: \"x/\": name part must be "
       "non-empty; " +
           name_regex},
      {"x in a", "unable to parse requirement: found 'a' expected: '('"},
      {"x in (a", "unable to parse requirement: found '', expected: ',' or ')'"},
      {"x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"},
      {"x in (,,)", "unable to parse requirement: found ')', expected: ',', or identifier"},
      {"x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier"},
      {"x ~ a", "unable to parse requirement: found '~', expected: in, notin, =, ==, !=, gt, lt"},
      {"x a", "unable to parse requirement: found 'a', expected: in, notin, =, ==, !=, gt, lt"},
      {"x=a b", "found 'b', expected: ',' or 'end of string'"},
      {"!x=a", "found '=', expected: ',' or 'end of string'"},
      {"x=a,", "found '', expected: identifier after ','"},
      {"x=a,,y", "found ',', expected: identifier after ','"},
      {",x", "found ',', expected: !, identifier, or 'end of string'"},
      {"=a", "found '=', expected: !, identifier, or 'end of string'"},
      {"x=(a)", "unable to parse requirement: found '(', expected: identifier"},
      {"!", "unable to parse requirement: found '', expected: identifier"},
      {"x>1", "unable to parse requirement: operator '>' is not supported by this server"},
  };
  for (const auto& c : cases) {
    auto sel = LabelSelector::Parse(c.text);
    ASSERT_FALSE(sel.ok()) << c.text << " parsed as " << sel->ToString();
    EXPECT_EQ(sel.status().code(), StatusCode::kInvalidArgument) << c.text;
    if (c.prefix) {
      EXPECT_THAT(sel.status().message(), StartsWith(c.message)) << c.text;
    } else {
      EXPECT_EQ(sel.status().message(), c.message) << c.text;
    }
  }
}

TEST(LabelSelectorTest, MatchesLikeApimachinery) {
  struct Case {
    std::string selector;
    Labels labels;
    bool match;
  };
  const Labels web = L({{"app", "web"}, {"tier", "fe"}, {"empty", ""}});
  const Case cases[] = {
      {"", {}, true},
      {"", web, true},
      {"app=web", web, true},
      {"app==web", web, true},
      {"app=db", web, false},
      {"app!=db", web, true},
      {"app!=web", web, false},
      {"missing!=x", web, true},  // != matches absence
      {"app", web, true},
      {"missing", web, false},
      {"!missing", web, true},
      {"!app", web, false},
      {"app in (db,web)", web, true},
      {"app in (db)", web, false},
      {"missing in (x)", web, false},
      {"app notin (db)", web, true},
      {"app notin (web)", web, false},
      {"missing notin (web)", web, true},  // notin matches absence
      {"empty=", web, true},
      {"empty", web, true},
      {"missing=", web, false},  // "=" with an empty value needs the key
      {"app in ()", web, false},
      {"empty in ()", web, true},
      {"app=web,tier=fe", web, true},
      {"app=web,tier=be", web, false},
  };
  for (const auto& c : cases) {
    auto sel = LabelSelector::Parse(c.selector);
    ASSERT_TRUE(sel.ok()) << c.selector;
    EXPECT_EQ(sel->Matches(c.labels), c.match) << c.selector;
    Json j = Json::object();
    for (const auto& [k, v] : c.labels) j[k] = v;
    EXPECT_EQ(sel->MatchesJson(j), c.match) << c.selector << " (json)";
  }
  auto sel = LabelSelector::Parse("!app,x notin (a)");
  ASSERT_TRUE(sel.ok());
  EXPECT_TRUE(sel->MatchesJson(nullptr));
  EXPECT_TRUE(sel->MatchesJson(Json::object()));
  EXPECT_FALSE(LabelSelector::Parse("app")->MatchesJson(nullptr));
  // A non-string label value counts as absent.
  EXPECT_FALSE(LabelSelector::Parse("app")->MatchesJson({{"app", 1}}));
}

TEST(LabelSelectorTest, FromJsonBuildsRequirements) {
  auto sel = LabelSelector::FromJson(Json::parse(R"({
    "matchLabels": {"app": "web", "tier": "fe"},
    "matchExpressions": [
      {"key": "env", "operator": "In", "values": ["prod", "dev"]},
      {"key": "canary", "operator": "DoesNotExist"},
      {"key": "zone", "operator": "NotIn", "values": ["a"]},
      {"key": "owner", "operator": "Exists", "values": []}
    ]})"));
  ASSERT_TRUE(sel.ok()) << sel.status().ToString();
  EXPECT_EQ(sel->ToString(), "app=web,!canary,env in (dev,prod),owner,tier=fe,zone notin (a)");
  EXPECT_TRUE(sel->Matches(L({{"app", "web"}, {"tier", "fe"}, {"env", "dev"}, {"owner", "x"}})));
  EXPECT_FALSE(sel->Matches(
      L({{"app", "web"}, {"tier", "fe"}, {"env", "dev"}, {"owner", "x"}, {"canary", "1"}})));
  EXPECT_FALSE(sel->Matches(L({{"app", "web"}, {"tier", "fe"}, {"env", "dev"}})));

  for (const char* everything : {"null", "{}", R"({"matchLabels": {}})",
                                 R"({"matchLabels": null, "matchExpressions": []})"}) {
    auto e = LabelSelector::FromJson(Json::parse(everything));
    ASSERT_TRUE(e.ok()) << everything;
    EXPECT_TRUE(e->Empty()) << everything;
    EXPECT_TRUE(e->Matches({}));
  }
}

TEST(LabelSelectorTest, MatchesStoredTreatsNullAsNoLabels) {
  auto sel = LabelSelector::Parse("app=web");
  auto absent = LabelSelector::Parse("!canary");
  ASSERT_TRUE(sel.ok() && absent.ok());
  auto stored = std::make_shared<const Labels>(L({{"app", "web"}}));
  EXPECT_TRUE(sel->MatchesStored(stored));
  EXPECT_FALSE(sel->MatchesStored(nullptr));
  EXPECT_TRUE(absent->MatchesStored(nullptr));
  EXPECT_FALSE(sel->MatchesStored(std::make_shared<const Labels>(L({{"app", "db"}}))));
}

TEST(LabelSelectorTest, FromJsonRejectsBadSelectors) {
  struct Case {
    const char* json;
    std::string message;
  };
  const Case cases[] = {
      {R"({"matchExpressions": [{"key": "a", "operator": "Equals", "values": ["x"]}]})",
       "\"Equals\" is not a valid label selector operator"},
      {R"({"matchExpressions": [{"key": "a", "operator": "in", "values": ["x"]}]})",
       "\"in\" is not a valid label selector operator"},
      {R"({"matchExpressions": [{"key": "a", "operator": "In"}]})",
       "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"},
      {R"({"matchExpressions": [{"key": "a", "operator": "NotIn", "values": []}]})",
       "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty"},
      {R"({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})",
       "values: Invalid value: [x]: values set must be empty for exists and does not exist"},
      {R"({"matchExpressions": [{"key": "a", "operator": "DoesNotExist", "values": ["x"]}]})",
       "values: Invalid value: [x]: values set must be empty for exists and does not exist"},
      {R"({"matchExpressions": [{"key": "-a", "operator": "Exists"}]})",
       "key: Invalid value: \"-a\": name part must consist of"},
      {R"({"matchLabels": {"app": "-web"}})", "values[0][app]: Invalid value: \"-web\""},
      {R"({"matchLabels": {"app": 1}})", "must be a string"},
      {R"({"matchLabels": ["app"]})", "matchLabels must be an object"},
      {R"({"matchExpressions": {"key": "a"}})", "matchExpressions must be a list"},
      {R"("app=web")", "label selector must be an object"},
  };
  for (const auto& c : cases) {
    auto sel = LabelSelector::FromJson(Json::parse(c.json));
    ASSERT_FALSE(sel.ok()) << c.json;
    EXPECT_EQ(sel.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(sel.status().message(), HasSubstr(c.message)) << c.json;
  }
  // Two problems in one requirement are aggregated, as apimachinery does.
  auto two = LabelSelector::FromJson(
      Json::parse(R"({"matchExpressions": [{"key": "-a", "operator": "In"}]})"));
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(two.status().message(), StartsWith("[key: Invalid value: \"-a\""));
  EXPECT_THAT(two.status().message(), HasSubstr(", values: Invalid value: []"));
}

TEST(FieldSelectorTest, ParsesAndMatches) {
  Json pod = Json::parse(R"({
    "metadata": {"name": "web-1", "namespace": "prod"},
    "spec": {"nodeName": "n1", "replicas": 3, "paused": false},
    "status": {"phase": "Running"}})");
  struct Case {
    std::string selector;
    bool match;
  };
  const Case cases[] = {
      {"", true},
      {"metadata.name=web-1", true},
      {"metadata.name==web-1", true},
      {"metadata.name!=web-1", false},
      {"metadata.name=web-2", false},
      {"metadata.name=web-1,metadata.namespace=prod", true},
      {"metadata.name=web-1,metadata.namespace!=prod", false},
      {"status.phase!=Succeeded,status.phase!=Failed", true},
      {"spec.replicas=3", true},
      {"spec.paused=false", true},
      {"spec.missing=", true},  // absent compares as ""
      {"spec.missing!=", false},
      {"spec.nodeName=", false},
      {"spec.nodeName!=", true},
      {"spec=x", false},
  };
  for (const auto& c : cases) {
    auto sel = FieldSelector::Parse(c.selector);
    ASSERT_TRUE(sel.ok()) << c.selector << ": " << sel.status().ToString();
    EXPECT_EQ(sel->Matches(pod), c.match) << c.selector;
  }
  EXPECT_TRUE(FieldSelector::Parse("")->Empty());
  EXPECT_FALSE(FieldSelector::Parse("a=b")->Empty());
}

// Found by the cluster_selectors fuzzer: "p==x" and "p=x" are the same requirement, but the
// terms were sorted by their text, so the two spellings came out in different orders.
TEST(FieldSelectorTest, RequirementsAreOrderedByFieldWhateverTheSpelling) {
  auto paths = [](std::string_view text) {
    std::vector<std::string> out;
    auto sel = FieldSelector::Parse(text);
    EXPECT_TRUE(sel.ok()) << text;
    if (!sel.ok()) return out;
    for (const auto& r : sel->requirements()) {
      out.push_back(r.path + (r.equals ? "=" : "!=") + r.value);
    }
    return out;
  };
  const std::vector<std::string> want = {"a=z", "p=x", "p=g", "q!=1"};
  EXPECT_EQ(paths("q!=1,p==x,a=z,p=g"), want);
  EXPECT_EQ(paths("q!=1,p=x,a==z,p=g"), want);
}

TEST(FieldSelectorTest, UnescapesValues) {
  auto sel = FieldSelector::Parse(R"(metadata.name=a\,b\=c\\d,spec.x!=y)");
  ASSERT_TRUE(sel.ok()) << sel.status().ToString();
  ASSERT_EQ(sel->requirements().size(), 2u);
  EXPECT_EQ(sel->requirements()[0].path, "metadata.name");
  EXPECT_EQ(sel->requirements()[0].value, R"(a,b=c\d)");
  EXPECT_TRUE(sel->requirements()[0].equals);
  EXPECT_EQ(sel->requirements()[1].path, "spec.x");
  EXPECT_FALSE(sel->requirements()[1].equals);
  EXPECT_TRUE(sel->Matches({{"metadata", {{"name", R"(a,b=c\d)"}}}}));
  // "==" is taken before "=": the value does not keep a leading '='.
  EXPECT_EQ(FieldSelector::Parse("a==b")->requirements()[0].value, "b");
}

TEST(FieldSelectorTest, RejectsBadInput) {
  struct Case {
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"metadata.name", "invalid selector: 'metadata.name'; can't understand 'metadata.name'"},
      {"a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'"},
      {"=b", "invalid selector: '=b'; can't understand '=b'"},
      {"a=b=c", "invalid field selector: unescaped character in value: 61"},
      {R"(a=b\x)", R"(invalid field selector: invalid escape sequence: \x)"},
      {R"(a=b\)", R"(invalid field selector: invalid escape sequence: \)"},
  };
  for (const auto& c : cases) {
    auto sel = FieldSelector::Parse(c.text);
    ASSERT_FALSE(sel.ok()) << c.text;
    EXPECT_EQ(sel.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sel.status().message(), c.message) << c.text;
  }
}

TEST(FieldSelectorTest, PinnedNameAndNamespace) {
  auto sel = FieldSelector::Parse("metadata.namespace=ns1,metadata.name=web");
  ASSERT_TRUE(sel.ok());
  EXPECT_EQ(sel->PinnedName(), "web");
  EXPECT_EQ(sel->PinnedNamespace(), "ns1");
  auto neg = FieldSelector::Parse("metadata.name!=web,status.phase=Running");
  ASSERT_TRUE(neg.ok());
  EXPECT_EQ(neg->PinnedName(), "");
  EXPECT_EQ(neg->PinnedNamespace(), "");
  EXPECT_EQ(FieldSelector::Parse("metadata.name==x")->PinnedName(), "x");
}

}  // namespace
}  // namespace steward::cluster
