// `steward completion bash|zsh|fish`: a completion script generated at run time from the CLI11
// command tree the binary parses with, so it offers exactly the subcommands, flags and values
// the parser accepts: subcommands, every flag (with -h/--help), the values of flags and
// positionals checked with CLI::IsMember (e.g. `-o json|yaml|wide`), and for a NAME positional
// the names `steward <group> list -o name` prints (projects, agents), when that list command
// offers `-o name`.
//
// The three scripts share one model (Command below) and one walk of the words typed so far: the
// words that name subcommands give the command path ("steward project list"), a flag that takes
// a value consumes the next word, and the other words are positionals, counted.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"

namespace steward::cli {
namespace {

struct Flag {
  std::vector<std::string> names;  // "-o", "--output"
  bool takes_value = false;
  std::vector<std::string> values;  // enumerated values; empty when any value goes
  std::string help;
};

struct Positional {
  std::string name;
  std::vector<std::string> values;
  std::string names_of;  // "project": completed from `steward project list -o name`
};

struct Command {
  std::string path;  // "steward", "steward project", "steward project list"
  std::string help;
  std::vector<std::pair<std::string, std::string>> subcommands;  // name, help
  std::vector<Flag> flags;
  std::vector<Positional> positionals;
};

// The values of an IsMember check: its description is "{a,b,c}".
std::vector<std::string> EnumeratedValues(CLI::Option* opt) {
  std::vector<std::string> values;
  for (int i = 0;; ++i) {
    CLI::Validator* v = nullptr;
    try {
      v = opt->get_validator(i);
    } catch (const CLI::OptionNotFound&) {
      break;
    }
    std::string d = v->get_description();
    if (d.size() < 2 || d.front() != '{' || d.back() != '}') continue;
    std::string item;
    for (char c : d.substr(1, d.size() - 2)) {
      if (c == ',') {
        values.push_back(item);
        item.clear();
      } else {
        item += c;
      }
    }
    if (!item.empty()) values.push_back(item);
  }
  return values;
}

bool ListOffersNames(CLI::App* group) {
  for (CLI::App* sub : group->get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_name() != "list") continue;
    for (CLI::Option* o : sub->get_options()) {
      auto snames = o->get_snames();
      if (std::find(snames.begin(), snames.end(), "o") == snames.end()) continue;
      auto values = EnumeratedValues(o);
      if (std::find(values.begin(), values.end(), "name") != values.end()) return true;
    }
  }
  return false;
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

void Walk(CLI::App* app, const std::string& path, std::vector<Command>& out) {
  Command c;
  c.path = path;
  c.help = FirstLine(app->get_description());
  for (CLI::Option* o : app->get_options()) {
    if (o->get_positional() && !o->nonpositional()) {
      Positional p{o->get_name(true), EnumeratedValues(o), ""};
      CLI::App* parent = app->get_parent();
      if (p.name == "NAME" && parent != nullptr && parent->get_parent() != nullptr &&
          ListOffersNames(parent)) {
        p.names_of = parent->get_name();
      }
      c.positionals.push_back(std::move(p));
      continue;
    }
    Flag f;
    for (const auto& s : o->get_snames()) f.names.push_back("-" + s);
    for (const auto& l : o->get_lnames()) f.names.push_back("--" + l);
    if (f.names.empty()) continue;
    f.takes_value = o->get_items_expected_min() > 0;
    f.values = EnumeratedValues(o);
    f.help = FirstLine(o->get_description());
    c.flags.push_back(std::move(f));
  }
  auto subs = app->get_subcommands([](CLI::App*) { return true; });
  for (CLI::App* sub : subs) {
    c.subcommands.emplace_back(sub->get_name(), FirstLine(sub->get_description()));
  }
  out.push_back(std::move(c));
  for (CLI::App* sub : subs) Walk(sub, path + " " + sub->get_name(), out);
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

// Single-quoted for bash and zsh.
std::string Sq(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Single-quoted for fish (backslash escapes ' and \ inside quotes).
std::string FishSq(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') q += '\\';
    q += c;
  }
  return q + "'";
}

// The tables the bash and zsh functions read, as associative arrays: bash's `([key]=value)`, or
// zsh's `(key value)` (which `zsh -n` can check without running the typeset).
std::string Tables(const std::vector<Command>& tree, bool zsh) {
  std::map<std::string, std::map<std::string, std::string>> t;
  for (const auto& c : tree) {
    std::vector<std::string> subs, flags, valued;
    for (const auto& [name, help] : c.subcommands) subs.push_back(name);
    if (!subs.empty()) t["subcommands"][c.path] = Join(subs);
    for (const auto& f : c.flags) {
      flags.insert(flags.end(), f.names.begin(), f.names.end());
      if (f.takes_value) valued.insert(valued.end(), f.names.begin(), f.names.end());
      for (const auto& n : f.names) {
        if (!f.values.empty()) t["values"][c.path + " " + n] = Join(f.values);
      }
    }
    t["flags"][c.path] = Join(flags);
    if (!valued.empty()) t["valued"][c.path] = Join(valued);
    std::vector<std::string> positionals;
    for (const auto& p : c.positionals) {
      positionals.push_back(p.name);
      if (!p.values.empty()) t["values"][c.path + " " + p.name] = Join(p.values);
      if (!p.names_of.empty()) t["names"][c.path + " " + p.name] = p.names_of;
    }
    if (!positionals.empty()) t["positionals"][c.path] = Join(positionals);
  }
  std::string out;
  for (const char* table : {"subcommands", "flags", "valued", "values", "positionals", "names"}) {
    out += std::string("typeset -gA _steward_") + table + "\n_steward_" + table + "=(\n";
    for (const auto& [key, value] : t[table]) {
      out +=
          zsh ? "  " + Sq(key) + " " + Sq(value) + "\n" : "  [" + Sq(key) + "]=" + Sq(value) + "\n";
    }
    out += ")\n";
  }
  return out;
}

// The walk of the words before the cursor, in the syntax bash and zsh share. Sets cmdpath,
// npos (positionals seen), pending (the flag whose value is being typed) and api (the flags
// that say which server, for the names list). `words` and `first`/`last` name the word array
// and the range to walk.
std::string WalkFunction() {
  return R"(_steward_walk() {
  local word i
  cmdpath=steward npos=0 pending=
  api=()
  for word in "$@"; do
    if [[ $word == '=' ]]; then
      [[ -z $pending ]] && pending='='
      continue
    fi
    if [[ -n $pending ]]; then
      case $pending in --server|--token|--token-file|--ca-file) api+=("$pending" "$word") ;; esac
      pending=
      continue
    fi
    case $word in
      --*=*)
        case ${word%%=*} in --server|--token|--token-file|--ca-file) api+=("$word") ;; esac
        continue ;;
      -*)
        [[ " ${_steward_valued[$cmdpath]-} " == *" $word "* ]] && pending=$word
        continue ;;
    esac
    if [[ $npos -eq 0 && " ${_steward_subcommands[$cmdpath]-} " == *" $word "* ]]; then
      cmdpath="$cmdpath $word"
    else
      npos=$((npos + 1))
    fi
  done
}

# The names of projects or agents ($1), from the server the command line names (or the
# environment's); nothing when it cannot be reached.
_steward_names() {
  command "$_steward_binary" "$1" list -o name --request-timeout 3s "${api[@]}" 2>/dev/null
}
)";
}

std::string BashScript(const std::vector<Command>& tree) {
  return "# bash completion for steward, generated by `steward completion bash` from its command\n"
         "# tree. Install: source <(steward completion bash)\n" +
         Tables(tree, false) + WalkFunction() + R"(
_steward_complete() {
  local cmdpath npos pending cur=${COMP_WORDS[COMP_CWORD]} key values
  local -a api=()
  _steward_binary=${COMP_WORDS[0]}
  _steward_walk "${COMP_WORDS[@]:1:COMP_CWORD-1}"
  [[ $cur == '=' ]] && cur=
  COMPREPLY=()
  if [[ -n $pending ]]; then
    [[ $pending == '=' ]] && return 0
    values=${_steward_values[$cmdpath $pending]-}
  elif [[ $cur == --*=* ]]; then
    values=${_steward_values[$cmdpath ${cur%%=*}]-}
    cur=${cur#*=}
  elif [[ $cur == -* ]]; then
    values=${_steward_flags[$cmdpath]-}
  elif [[ -n ${_steward_subcommands[$cmdpath]-} ]]; then
    values=${_steward_subcommands[$cmdpath]}
  else
    local -a positionals=(${_steward_positionals[$cmdpath]-})
    (( npos < ${#positionals[@]} )) || return 0
    key="$cmdpath ${positionals[npos]}"
    if [[ -n ${_steward_names[$key]-} ]]; then
      values=$(_steward_names "${_steward_names[$key]}")
    else
      values=${_steward_values[$key]-}
    fi
  fi
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "${values//[[:space:]]/$'\n'}" -- "$cur"))
}
complete -F _steward_complete steward
)";
}

std::string ZshScript(const std::vector<Command>& tree) {
  return "#compdef steward\n"
         "# zsh completion for steward, generated by `steward completion zsh` from its command\n"
         "# tree. Install: source <(steward completion zsh) (after compinit), or save it as\n"
         "# _steward in a directory of $fpath.\n" +
         Tables(tree, true) + WalkFunction() + R"(
_steward() {
  local cmdpath npos pending cur=${words[CURRENT]} key values
  local -a api
  _steward_binary=${words[1]}
  _steward_walk "${(@)words[2,CURRENT-1]}"
  if [[ -n $pending ]]; then
    values=${_steward_values[$cmdpath $pending]-}
  elif [[ $cur == --*=* ]]; then
    values=${_steward_values[$cmdpath ${cur%%=*}]-}
    compset -P '*='
  elif [[ $cur == -* ]]; then
    values=${_steward_flags[$cmdpath]-}
  elif [[ -n ${_steward_subcommands[$cmdpath]-} ]]; then
    values=${_steward_subcommands[$cmdpath]}
  else
    local -a positionals
    positionals=(${=_steward_positionals[$cmdpath]-})
    (( npos < ${#positionals} )) || return 1
    key="$cmdpath ${positionals[npos+1]}"
    if [[ -n ${_steward_names[$key]-} ]]; then
      values=$(_steward_names "${_steward_names[$key]}")
    else
      values=${_steward_values[$key]-}
    fi
  fi
  compadd -- ${=values}
}
if [[ ${funcstack[1]-} == _steward ]]; then
  _steward "$@"
else
  compdef _steward steward
fi
)";
}

// fish has no associative arrays: the walk's tables are `switch` functions, and each command's
// subcommands, flags and positionals are `complete` lines conditioned on the walk's result.
std::string FishScript(const std::vector<Command>& tree) {
  std::string out =
      "# fish completion for steward, generated by `steward completion fish` from its command\n"
      "# tree. Install: steward completion fish | source (or save it as\n"
      "# ~/.config/fish/completions/steward.fish).\n";
  auto table = [&](const std::string& fn, auto value_of) {
    out += "function " + fn + "\n  switch $argv[1]\n";
    for (const auto& c : tree) {
      std::string v = value_of(c);
      if (!v.empty()) out += "    case " + FishSq(c.path) + "\n      echo " + v + "\n";
    }
    out += "  end\nend\n";
  };
  table("__steward_subcommands", [](const Command& c) {
    std::vector<std::string> v;
    for (const auto& s : c.subcommands) v.push_back(s.first);
    return Join(v);
  });
  table("__steward_valued", [](const Command& c) {
    std::vector<std::string> v;
    for (const auto& f : c.flags) {
      if (f.takes_value) v.insert(v.end(), f.names.begin(), f.names.end());
    }
    return Join(v);
  });
  out += R"(# Prints the command path, the number of positionals and the flag awaiting a value.
function __steward_state
  set -l tokens (commandline -opc)
  set -l cmdpath steward
  set -l npos 0
  set -l pending
  for word in $tokens[2..-1]
    if test -n "$pending"
      set pending
      continue
    end
    switch $word
      case '--*=*'
        continue
      case '-*'
        if contains -- $word (string split ' ' -- (__steward_valued "$cmdpath"))
          set pending $word
        end
        continue
    end
    if test $npos -eq 0; and contains -- $word (string split ' ' -- (__steward_subcommands "$cmdpath"))
      set cmdpath "$cmdpath $word"
    else
      set npos (math $npos + 1)
    end
  end
  printf '%s\n%s\n%s\n' "$cmdpath" $npos "$pending"
end
# True when the command path is $argv[1] (flags of that command apply).
function __steward_in
  set -l s (__steward_state)
  test "$s[1]" = "$argv[1]"
end
# True when the next word is positional number $argv[2] (0: a subcommand) of $argv[1].
function __steward_arg
  set -l s (__steward_state)
  test "$s[1]" = "$argv[1]"; and test "$s[2]" = "$argv[2]"; and test -z "$s[3]"
end
function __steward_names
  set -l tokens (commandline -opc)
  command $tokens[1] $argv[1] list -o name --request-timeout 3s 2>/dev/null
end
complete -c steward -f
)";
  for (const auto& c : tree) {
    const std::string in = "-n " + FishSq("__steward_in " + FishSq(c.path));
    for (const auto& [name, help] : c.subcommands) {
      out += "complete -c steward -n " + FishSq("__steward_arg " + FishSq(c.path) + " 0") + " -a " +
             FishSq(name) + " -d " + FishSq(help) + "\n";
    }
    for (const auto& f : c.flags) {
      std::string line = "complete -c steward " + in;
      for (const auto& n : f.names) {
        line += n.starts_with("--") ? " -l " + n.substr(2) : " -s " + n.substr(1);
      }
      if (!f.values.empty()) {
        line += " -x -a " + FishSq(Join(f.values));
      } else if (f.takes_value) {
        line += " -r -F";
      }
      out += line + " -d " + FishSq(f.help) + "\n";
    }
    for (size_t i = 0; i < c.positionals.size(); ++i) {
      const Positional& p = c.positionals[i];
      std::string arg = "-n " + FishSq("__steward_arg " + FishSq(c.path) + " " + std::to_string(i));
      if (!p.values.empty()) {
        out += "complete -c steward " + arg + " -a " + FishSq(Join(p.values)) + "\n";
      } else if (!p.names_of.empty()) {
        out += "complete -c steward " + arg + " -a " +
               FishSq("(__steward_names " + p.names_of + ")") + "\n";
      }
    }
  }
  return out;
}

}  // namespace

void AddCompletionCommand(CLI::App& root) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = root.add_subcommand(
      "completion",
      "Print a shell completion script (bash, zsh or fish); e.g. source <(steward completion "
      "bash)");
  cmd->add_option("SHELL", *shell, "bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->callback([shell, &root] {
    std::vector<Command> tree;
    Walk(&root, "steward", tree);
    const std::string script = *shell == "bash"  ? BashScript(tree)
                               : *shell == "zsh" ? ZshScript(tree)
                                                 : FishScript(tree);
    std::fwrite(script.data(), 1, script.size(), stdout);
    std::fflush(stdout);
    SetExitCode(kExitOk);
  });
}

}  // namespace steward::cli
