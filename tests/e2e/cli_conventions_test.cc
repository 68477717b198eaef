// The CLI's conventions with real runs of the binary (issue 19 §4): `steward completion
// bash|zsh|fish` checked against the command tree `--help` shows (every subcommand, every flag,
// the enumerated values) by running the scripts in the shells; `-o json|yaml|wide|name` on get
// and list; and each exit code of src/cli/exit_codes.h produced by a command against `steward
// serve`, with stderr naming the cause (and docs/cli.md listing the same codes).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/json.h"
#include "common/yaml.h"
#include "process.h"

namespace steward::e2e {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;

std::string Describe(const RunResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

bool Installed(const std::string& path) { return access(path.c_str(), X_OK) == 0; }

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// Single-quoted for bash.
std::string Sq(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// ---- the command tree, as `--help` shows it ------------------------------------------------

struct HelpNode {
  std::vector<std::string> subcommands;
  std::vector<std::string> flags;                          // every name: -o, --output, ...
  std::map<std::string, std::vector<std::string>> values;  // "-o" → {json, yaml, ...}
};

// Parses CLI11's help: the "Options:" and "Subcommands:" sections (a blank line ends one).
HelpNode ParseHelp(const std::string& help) {
  HelpNode node;
  std::string section;
  std::istringstream in(help);
  std::string line;
  const std::regex option_re(R"(^  (-[^ ]+)(?: [A-Z]+(?:=\S*)?(?::\{([^}]*)\})?)?)");
  const std::regex sub_re(R"(^  (\S+) )");
  while (std::getline(in, line)) {
    if (line.empty()) {
      section.clear();
    } else if (line.back() == ':' && line[0] != ' ') {
      section = line;
    } else if (section == "Options:") {
      std::smatch m;
      if (!std::regex_search(line, m, option_re)) continue;
      std::vector<std::string> values;
      std::stringstream vs(m[2].str());
      for (std::string v; std::getline(vs, v, ',');) values.push_back(v);
      std::stringstream names(m[1].str());
      for (std::string n; std::getline(names, n, ',');) {
        node.flags.push_back(n);
        if (!values.empty()) node.values[n] = values;
      }
    } else if (section == "Subcommands:") {
      std::smatch m;
      if (std::regex_search(line, m, sub_re)) node.subcommands.push_back(m[1]);
    }
  }
  return node;
}

// Every command path ("", "project", "project list", ...) with what its --help shows.
void HelpTree(const std::string& path, std::map<std::string, HelpNode>& tree) {
  std::vector<std::string> argv = {StewardBinary()};
  std::stringstream words(path);
  for (std::string w; words >> w;) argv.push_back(w);
  argv.push_back("--help");
  RunResult r = ::steward::e2e::Run(argv, "", seconds(30));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  HelpNode node = ParseHelp(r.out);
  tree[path] = node;
  for (const auto& sub : node.subcommands) HelpTree(path.empty() ? sub : path + " " + sub, tree);
}

// ---- running the completion scripts ----------------------------------------------------------

// The three scripts `steward completion` prints, saved in a temporary directory.
class Scripts {
 public:
  Scripts() {
    for (const char* shell : {"bash", "zsh", "fish"}) {
      RunResult r = ::steward::e2e::Run({StewardBinary(), "completion", shell}, "", seconds(30));
      EXPECT_EQ(r.exit_code, 0) << Describe(r);
      EXPECT_FALSE(r.out.empty());
      text_[shell] = r.out;
      WriteFile(Path(shell), r.out);
    }
  }
  std::string Path(const std::string& shell) const { return dir_.path() + "/steward." + shell; }
  const std::string& Text(const std::string& shell) { return text_[shell]; }

  // Sources the bash script in a non-interactive bash, sets COMP_WORDS/COMP_CWORD to `words`
  // (the last is the word being completed; the binary is put first) and returns COMPREPLY.
  std::vector<std::string> BashComplete(std::vector<std::string> words,
                                        const std::vector<std::string>& env = {}) const {
    words.insert(words.begin(), StewardBinary());
    std::string array;
    for (const auto& w : words) array += " " + Sq(w);
    std::string program = "source " + Sq(Path("bash")) + "\nCOMP_WORDS=(" + array +
                          ")\nCOMP_CWORD=" + std::to_string(words.size() - 1) +
                          "\n_steward_complete\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n";
    std::vector<std::string> argv = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin"};
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), {"bash", "--norc", "--noprofile", "-c", program});
    RunResult r = ::steward::e2e::Run(argv, "", seconds(30));
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    EXPECT_EQ(r.err, "") << Describe(r);
    return Lines(r.out);
  }

 private:
  TempDir dir_;
  std::map<std::string, std::string> text_;
};

class CompletionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { scripts_ = new Scripts(); }
  static void TearDownTestSuite() {
    delete scripts_;
    scripts_ = nullptr;
  }
  static std::string Script(const std::string& shell) { return scripts_->Path(shell); }
  static std::vector<std::string> BashComplete(const std::vector<std::string>& words) {
    return scripts_->BashComplete(words);
  }
  static Scripts* scripts_;
};
Scripts* CompletionTest::scripts_ = nullptr;

TEST_F(CompletionTest, BashScriptIsValidAndCompletesSubcommandsFlagsAndValues) {
  RunResult syntax = ::steward::e2e::Run({"bash", "-n", Script("bash")}, "", seconds(30));
  EXPECT_EQ(syntax.exit_code, 0) << Describe(syntax);
  EXPECT_THAT(scripts_->Text("bash"), HasSubstr("complete -F _steward_complete steward"));

  EXPECT_THAT(BashComplete({"pro"}), UnorderedElementsAre("project"));
  EXPECT_THAT(
      BashComplete({"project", ""}),
      UnorderedElementsAre("create", "start", "suspend", "restart", "rotate", "delete", "move",
                           "get", "list", "watch", "history", "logs", "info", "flows"));
  EXPECT_THAT(BashComplete({"project", "list", "-o", ""}),
              UnorderedElementsAre("json", "yaml", "wide", "name"));
  EXPECT_THAT(BashComplete({"project", "get", "alpha", "-o", ""}),
              UnorderedElementsAre("json", "yaml", "wide"));
  EXPECT_THAT(BashComplete({"project", "list", "--output", "=", "y"}),
              UnorderedElementsAre("yaml"));
  EXPECT_THAT(BashComplete({"project", "list", "--te"}), UnorderedElementsAre("--team"));
  // A flag's value is not taken for a subcommand or a positional.
  EXPECT_THAT(BashComplete({"project", "list", "--team", "project", "--ph"}),
              UnorderedElementsAre("--phase"));
  EXPECT_THAT(BashComplete({"project", "flows", ""}),
              UnorderedElementsAre("start", "stop", "restart"));
  EXPECT_THAT(BashComplete({"completion", ""}), UnorderedElementsAre("bash", "zsh", "fish"));
  EXPECT_THAT(BashComplete({"--ver"}), UnorderedElementsAre("--version"));
}

// Every command of the tree `--help` shows (walked from the root) completes to its subcommands
// and its flags; each enumerated flag to its values. A generator that stopped walking the tree
// (or a flag added without reaching the script) fails here.
TEST_F(CompletionTest, EveryCommandFlagAndValueOfTheRealTreeIsCompleted) {
  std::map<std::string, HelpNode> tree;
  HelpTree("", tree);
  ASSERT_GT(tree.size(), 30u);  // steward, project, project list, agent, ...
  ASSERT_TRUE(tree.count("project list") && tree.count("agent command") &&
              tree.count("completion"));
  for (const auto& [path, node] : tree) {
    std::vector<std::string> words;
    std::stringstream in(path);
    for (std::string w; in >> w;) words.push_back(w);
    if (!node.subcommands.empty()) {
      auto at = words;
      at.push_back("");
      EXPECT_THAT(BashComplete(at), UnorderedElementsAreArray(node.subcommands)) << path;
      EXPECT_THAT(scripts_->Text("zsh"),
                  HasSubstr("'steward" + (path.empty() ? "" : " " + path) + "' '"))
          << path;
    }
    auto dash = words;
    dash.push_back("-");
    EXPECT_THAT(BashComplete(dash), UnorderedElementsAreArray(node.flags)) << path;
    for (const auto& [flag, values] : node.values) {
      auto at = words;
      at.insert(at.end(), {flag, ""});
      EXPECT_THAT(BashComplete(at), UnorderedElementsAreArray(values)) << path << " " << flag;
    }
    // fish: one `complete` line per subcommand of this command.
    for (const auto& sub : node.subcommands) {
      EXPECT_THAT(scripts_->Text("fish"),
                  HasSubstr("-n '__steward_arg \\'steward" + (path.empty() ? "" : " " + path) +
                            "\\' 0' -a '" + sub + "'"))
          << path << " " << sub;
    }
  }
}

TEST_F(CompletionTest, ZshScriptIsValidAndCompletes) {
  EXPECT_THAT(scripts_->Text("zsh"), HasSubstr("#compdef steward"));
  EXPECT_THAT(scripts_->Text("zsh"), HasSubstr("compdef _steward steward"));
  if (!Installed("/usr/bin/zsh") && !Installed("/bin/zsh")) return;  // structure checked above
  RunResult syntax = ::steward::e2e::Run({"zsh", "-n", Script("zsh")}, "", seconds(30));
  EXPECT_EQ(syntax.exit_code, 0) << Describe(syntax);
  // compadd/compset/compdef stand-ins: what the function offers for `words`.
  const std::string program =
      "compdef() { :; }\n"
      "compset() { [[ $1 == -P ]] && cur=${cur#*=}; return 0 }\n"
      "compadd() { [[ $1 == -- ]] && shift; local w; for w in \"$@\"; do [[ $w == ${cur}* ]] && "
      "print -r -- $w; done }\n"
      "source " +
      Sq(Script("zsh")) +
      "\nfor q in 'steward pro' 'steward project list -o ' 'steward project flows '; do\n"
      "  words=(${=q}); [[ $q == *' ' ]] && words+=('')\n"
      "  CURRENT=${#words}; print -r -- \"[$q]\"; _steward\n"
      "done\n";
  RunResult r = ::steward::e2e::Run({"zsh", "-f", "-c", program}, "", seconds(30));
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_EQ(r.out,
            "[steward pro]\nproject\n"
            "[steward project list -o ]\njson\nyaml\nwide\nname\n"
            "[steward project flows ]\nstart\nstop\nrestart\n");
}

TEST_F(CompletionTest, FishScriptIsValidAndCompletes) {
  EXPECT_THAT(scripts_->Text("fish"), HasSubstr("complete -c steward"));
  if (!Installed("/usr/bin/fish") && !Installed("/bin/fish")) return;  // structure checked above
  RunResult syntax = ::steward::e2e::Run({"fish", "-n", Script("fish")}, "", seconds(30));
  EXPECT_EQ(syntax.exit_code, 0) << Describe(syntax);
  auto complete = [&](const std::string& line) {
    RunResult r = ::steward::e2e::Run(
        {"fish", "--no-config", "-c", "source " + Sq(Script("fish")) + "; complete -C" + Sq(line)},
        "", seconds(30));
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    std::vector<std::string> words;
    for (const auto& l : Lines(r.out)) words.push_back(l.substr(0, l.find('\t')));
    return words;
  };
  EXPECT_THAT(complete("steward pro"), UnorderedElementsAre("project"));
  EXPECT_THAT(complete("steward project list -o "),
              UnorderedElementsAre("json", "yaml", "wide", "name"));
  EXPECT_THAT(complete("steward project flows "), UnorderedElementsAre("start", "stop", "restart"));
  EXPECT_THAT(complete("steward agent "), IsSupersetOf({"put", "command", "status"}));
}

TEST(CompletionUsageTest, AnUnknownShellIsAUsageError) {
  RunResult r = ::steward::e2e::Run({StewardBinary(), "completion", "tcsh"}, "", seconds(30));
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("tcsh not in {bash,zsh,fish}"));
  EXPECT_EQ(r.out, "");
  RunResult none = ::steward::e2e::Run({StewardBinary(), "completion"}, "", seconds(30));
  EXPECT_EQ(none.exit_code, 2) << Describe(none);
  EXPECT_THAT(none.err, HasSubstr("SHELL is required"));
}

// ---- exit codes against `steward serve` -----------------------------------------------------

// The table `steward --help` prints (from exit_codes.h) is the one docs/cli.md documents: each
// code 0..7 once, in order, in both.
TEST(ExitCodeDocsTest, HelpAndDocsListTheSameCodes) {
  RunResult help = ::steward::e2e::Run({StewardBinary(), "--help"}, "", seconds(30));
  ASSERT_EQ(help.exit_code, 0) << Describe(help);
  std::vector<std::string> from_help;
  const std::string tail = help.out.substr(help.out.find("Exit codes"));
  std::regex help_row(R"(\n  ([0-9]+)  )");
  for (std::sregex_iterator it(tail.begin(), tail.end(), help_row), end; it != end; ++it) {
    from_help.push_back((*it)[1]);
  }
  const std::string docs = ReadFile(std::string(STEWARD_SOURCE_DIR) + "/docs/cli.md");
  const std::string table = docs.substr(docs.find("| code | meaning | example |"));
  std::vector<std::string> from_docs;
  std::regex docs_row(R"(\n\| ([0-9]+) \| )");
  for (std::sregex_iterator it(table.begin(), table.end(), docs_row), end; it != end; ++it) {
    from_docs.push_back((*it)[1]);
  }
  EXPECT_EQ(from_help, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7"}));
  EXPECT_EQ(from_docs, from_help);
}

// A port nothing listens on: bound, then closed.
uint16_t ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// A socket that listens and never answers: connections complete (the backlog), requests wait.
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    listen(fd_, 16);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentListener() { close(fd_); }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

class CliAgainstServeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    serve_ = new ServeUnderTest();
    ASSERT_TRUE(serve_->ok()) << serve_->output();
    server_ = serve_->server();
    token_file_ = serve_->token_file();
  }
  static void TearDownTestSuite() {
    delete serve_;
    serve_ = nullptr;
  }
  // `steward project ARGS` (or `group`) with the server and token of `steward serve` unless
  // `auth` replaces them; `env -i` keeps the test's own STEWARD_* out.
  static RunResult Cli(const std::vector<std::string>& args,
                       std::vector<std::string> auth = {"default"},
                       const std::string& group = "project") {
    if (auth == std::vector<std::string>{"default"}) {
      auth = {"--server", server_, "--token-file", token_file_};
    }
    std::vector<std::string> argv = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", StewardBinary(),
                                     group};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), auth.begin(), auth.end());
    return ::steward::e2e::Run(argv, "", seconds(90));
  }

  static ServeUnderTest* serve_;
  static std::string server_;
  static std::string token_file_;
};
ServeUnderTest* CliAgainstServeTest::serve_ = nullptr;
std::string CliAgainstServeTest::server_;
std::string CliAgainstServeTest::token_file_;

TEST_F(CliAgainstServeTest, ZeroOnSuccessAndNamesForScriptsAndCompletion) {
  for (const char* name : {"ec-one", "ec-two"}) {
    RunResult c = Cli({"create", name, "--team", "team-ec", "--image", "nodered/node-red:4.0"});
    ASSERT_EQ(c.exit_code, 0) << Describe(c);
  }
  RunResult names = Cli({"list", "--team", "team-ec", "-o", "name"});
  EXPECT_EQ(names.exit_code, 0) << Describe(names);
  EXPECT_THAT(Lines(names.out), UnorderedElementsAre("ec-one", "ec-two"));  // nothing else
  // bash completion of NAME asks the server the command line (or the environment) names.
  Scripts scripts;
  EXPECT_THAT(scripts.BashComplete(
                  {"project", "get", "--server", server_, "--token-file", token_file_, "ec-"}),
              UnorderedElementsAre("ec-one", "ec-two"));
  EXPECT_THAT(
      scripts.BashComplete({"project", "delete", "ec-t"},
                           {"STEWARD_SERVER=" + server_, "STEWARD_TOKEN_FILE=" + token_file_}),
      UnorderedElementsAre("ec-two"));
  // Unreachable: no names, no noise.
  EXPECT_THAT(scripts.BashComplete({"project", "get", "--server",
                                    "http://127.0.0.1:" + std::to_string(ClosedPort()), "--token",
                                    "x", ""}),
              UnorderedElementsAre());
  for (const char* name : {"ec-one", "ec-two"}) EXPECT_EQ(Cli({"delete", name}).exit_code, 0);
}

// `-o` on get and list: json and yaml parse to the record (or {"items": [...]}), wide adds the
// id, team, observed generation, reason and message columns, name prints names only.
TEST_F(CliAgainstServeTest, GetAndListPrintJsonYamlWideAndName) {
  RunResult c = Cli({"create", "fmt-a", "--team", "team-fmt", "--image", "nodered/node-red:4.0"});
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  for (const char* format : {"json", "yaml"}) {
    RunResult get = Cli({"get", "fmt-a", "-o", format});
    ASSERT_EQ(get.exit_code, 0) << Describe(get);
    auto record = std::string(format) == "json" ? ParseJson(get.out) : ParseYaml(get.out);
    ASSERT_TRUE(record.ok()) << get.out;
    EXPECT_EQ(GetString(*record, "name"), "fmt-a") << format;
    EXPECT_EQ(GetString(*record, "team"), "team-fmt") << format;
    RunResult list = Cli({"list", "--team", "team-fmt", "-o", format});
    ASSERT_EQ(list.exit_code, 0) << Describe(list);
    auto items = std::string(format) == "json" ? ParseJson(list.out) : ParseYaml(list.out);
    ASSERT_TRUE(items.ok()) << list.out;
    ASSERT_TRUE((*items)["items"].is_array()) << list.out;
    ASSERT_EQ((*items)["items"].size(), 1u) << list.out;
    EXPECT_EQ(GetString((*items)["items"][0], "name"), "fmt-a") << format;
  }
  const std::string wide_header =
      "^NAME +PHASE +DESIRED +GENERATION +URL +AGE +ID +TEAM +OBSERVED +REASON +MESSAGE\n";
  RunResult get = Cli({"get", "fmt-a", "-o", "wide"});
  ASSERT_EQ(get.exit_code, 0) << Describe(get);
  EXPECT_TRUE(std::regex_search(get.out, std::regex(wide_header))) << get.out;
  EXPECT_TRUE(std::regex_search(get.out, std::regex(R"(\nfmt-a +\S+ +suspended +1 .* team-fmt )")))
      << get.out;
  RunResult list = Cli({"list", "--team", "team-fmt", "-o", "wide"});
  ASSERT_EQ(list.exit_code, 0) << Describe(list);
  EXPECT_TRUE(std::regex_search(list.out, std::regex(wide_header))) << list.out;
  EXPECT_EQ(Lines(list.out).size(), 2u) << list.out;
  RunResult names = Cli({"list", "--team", "team-fmt", "-o", "name"});
  EXPECT_EQ(names.exit_code, 0) << Describe(names);
  EXPECT_EQ(names.out, "fmt-a\n");
  EXPECT_EQ(Cli({"delete", "fmt-a"}).exit_code, 0);
}

TEST_F(CliAgainstServeTest, OneWhenTheOperationFails) {
  // A Deployment of that name that Steward does not own: the project goes Failed (NameTaken).
  RunResult taken =
      ::steward::e2e::Run({"kubectl", "--kubeconfig", serve_->dir() + "/kubeconfig", "-n",
                           "steward", "create", "deployment", "ec-taken", "--image=nginx"},
                          "", seconds(60));
  ASSERT_EQ(taken.exit_code, 0) << Describe(taken);
  RunResult r = Cli({"create", "ec-taken", "--team", "team-ec", "--image", "nodered/node-red:4.0",
                     "--start", "--wait", "60s"});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("ec-taken failed at generation 1: NameTaken"));
  EXPECT_EQ(Cli({"delete", "ec-taken", "--wait", "60s"}).exit_code, 0);
}

TEST_F(CliAgainstServeTest, TwoForUsageErrorsOfTheParserOfTheCommandAndOfTheApi) {
  RunResult flag = Cli({"list", "--no-such-flag"});
  EXPECT_EQ(flag.exit_code, 2) << Describe(flag);
  EXPECT_THAT(flag.err, HasSubstr("--no-such-flag"));
  RunResult output = Cli({"list", "-o", "xml"});
  EXPECT_EQ(output.exit_code, 2) << Describe(output);
  EXPECT_THAT(output.err, HasSubstr("xml not in {json,yaml,wide,name}"));
  RunResult no_token = Cli({"list"}, {"--server", server_});
  EXPECT_EQ(no_token.exit_code, 2) << Describe(no_token);
  EXPECT_THAT(no_token.err, HasSubstr("no API token"));
  // The API's 400: the name is not a valid project name.
  RunResult api = Cli({"create", "Not_A_Name", "--team", "t", "--image", "nodered/node-red:4.0"});
  EXPECT_EQ(api.exit_code, 2) << Describe(api);
  EXPECT_THAT(api.err, HasSubstr("steward: InvalidArgument: "));
}

TEST_F(CliAgainstServeTest, ThreeWhenThereIsNoSuchProjectOrAgent) {
  RunResult r = Cli({"get", "ec-nowhere"});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward: NotFound: "));
  RunResult start = Cli({"start", "ec-nowhere", "--wait", "10s"});
  EXPECT_EQ(start.exit_code, 3) << Describe(start);
  RunResult agent = Cli({"history", "ec-nowhere"}, {"default"}, "agent");
  EXPECT_EQ(agent.exit_code, 3) << Describe(agent);
  EXPECT_THAT(agent.err, HasSubstr("NotFound"));
}

TEST_F(CliAgainstServeTest, FourWhenTheProjectIsNotInAStateForTheCall) {
  RunResult c =
      Cli({"create", "ec-suspended", "--team", "team-ec", "--image", "nodered/node-red:4.0"});
  ASSERT_EQ(c.exit_code, 0) << Describe(c);
  RunResult r = Cli({"restart", "ec-suspended"});  // restart needs desired running
  EXPECT_EQ(r.exit_code, 4) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward: Conflict: project ec-suspended is not running"));
  RunResult logs = Cli({"logs", "ec-suspended"});  // no pod to answer
  EXPECT_EQ(logs.exit_code, 4) << Describe(logs);
  EXPECT_THAT(logs.err, HasSubstr("steward: ProjectNotRunning: "));
  EXPECT_EQ(Cli({"delete", "ec-suspended"}).exit_code, 0);
}

TEST_F(CliAgainstServeTest, FiveWhenTheTokenIsRefused) {
  RunResult r = Cli({"list"}, {"--server", server_, "--token", "not-the-token"});
  EXPECT_EQ(r.exit_code, 5) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward: Unauthorized: "));
  RunResult w = Cli({"watch", "--timeout", "5s"}, {"--server", server_, "--token", "nope"});
  EXPECT_EQ(w.exit_code, 5) << Describe(w);
  EXPECT_THAT(w.err, HasSubstr("Unauthorized"));
}

TEST_F(CliAgainstServeTest, SixWhenTheServerCannotBeReached) {
  const std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort());
  RunResult r = Cli({"get", "alpha"}, {"--server", url, "--token", "x"});
  EXPECT_EQ(r.exit_code, 6) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward: cannot reach the Steward API at " + url + ": "));
  RunResult w = Cli({"start", "alpha", "--wait"}, {"--server", url, "--token", "x"});
  EXPECT_EQ(w.exit_code, 6) << Describe(w);
  EXPECT_THAT(w.err, HasSubstr("cannot reach the Steward API at " + url));
}

TEST_F(CliAgainstServeTest, SevenWhenADeadlinePasses) {
  // --wait: the embedded cluster cannot pull *.invalid images, so the project never runs.
  RunResult r = Cli({"create", "ec-stuck", "--team", "team-ec", "--image", "registry.invalid/x:1",
                     "--start", "--wait", "2s"});
  EXPECT_EQ(r.exit_code, 7) << Describe(r);
  EXPECT_THAT(r.err, HasSubstr("steward: timed out after 2.0s waiting for ec-stuck to be Running"));
  EXPECT_EQ(Cli({"delete", "ec-stuck", "--wait", "60s"}).exit_code, 0);
  // --request-timeout: a server that accepts the connection and never answers.
  SilentListener silent;
  const std::string url = "http://127.0.0.1:" + std::to_string(silent.port());
  RunResult t = Cli({"list"}, {"--server", url, "--token", "x", "--request-timeout", "1s"});
  EXPECT_EQ(t.exit_code, 7) << Describe(t);
  EXPECT_THAT(t.err, HasSubstr("timed out"));
}

}  // namespace
}  // namespace steward::e2e
