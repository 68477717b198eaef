// LocalPostgres: initdb, postgres as a child process, readiness by PQping with a deadline.
// Every child of the postmaster (backends, checkpointer, walwriter, ...) calls setsid(): each is
// in a process group of its own, so Kill finds them by their parent (/proc) rather than by group.
#include "local_postgres/local_postgres.h"

#include <fcntl.h>
#include <grp.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "common/file.h"
#include "net/free_port.h"

namespace steward {
namespace {

using std::chrono::steady_clock;

std::string Tail(const std::string& path, size_t max = 2000) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > max ? s.substr(s.size() - max) : s;
}

}  // namespace

// /proc files are read with ReadSmallFile (plain read(2), errors as a Status): a process that
// exits between open and read makes read fail with ESRCH, which std::ifstream turns into an
// exception (std::ios_base::failure from basic_filebuf::underflow) that nothing here catches.
std::vector<pid_t> ChildProcessesOf(pid_t parent, const std::string& proc_root) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(proc_root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    auto stat = ReadSmallFile((entry.path() / "stat").string());
    if (!stat.ok()) continue;  // gone meanwhile, or not ours to read
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
    const size_t close = stat->rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat->substr(close + 1));
    char state = 0;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent) out.push_back(std::stoi(name));
  }
  return out;
}

bool ProcessAlive(pid_t pid, const std::string& proc_root) {
  auto stat = ReadSmallFile(proc_root + "/" + std::to_string(pid) + "/stat");
  if (!stat.ok()) return false;
  const size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 2 >= stat->size()) return false;
  return (*stat)[close + 2] != 'Z';
}

namespace {

// Waits for `pid` to exit, at most `timeout`; true when it did.
bool WaitExit(pid_t pid, std::chrono::milliseconds timeout, int* status) {
  auto deadline = steady_clock::now() + timeout;
  while (true) {
    pid_t r = waitpid(pid, status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    if (steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling a child's exit
  }
}

}  // namespace

StatusOr<std::unique_ptr<LocalPostgres>> LocalPostgres::Launch() {
  std::unique_ptr<LocalPostgres> s(new LocalPostgres());
  RETURN_IF_ERROR(s->Init());
  return s;
}

Status LocalPostgres::Init() {
  const char* env = getenv("STEWARD_PG_BINDIR");
  bindir_ = env && *env ? env : "/usr/lib/postgresql/15/bin";
  if (access((bindir_ + "/initdb").c_str(), X_OK) != 0 ||
      access((bindir_ + "/postgres").c_str(), X_OK) != 0) {
    return FailedPrecondition("PostgreSQL binaries not found in " + bindir_ +
                              " (initdb, postgres): run scripts/setup.sh (it installs "
                              "postgresql-15), or set STEWARD_PG_BINDIR");
  }
  char tmpl[] = "/tmp/steward-pg-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return Internal("mkdtemp failed");
  dir_ = tmpl;
  if (geteuid() == 0) {
    const passwd* pw = getpwnam("postgres");
    if (pw == nullptr) pw = getpwnam("nobody");
    if (pw == nullptr) return FailedPrecondition("running as root and no postgres or nobody user");
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
    if (chown(dir_.c_str(), uid_, gid_) != 0) return Internal("chown " + dir_ + " failed");
  }
  port_ = net::PickFreePort();  // outside the ephemeral range: it must still be free at a restart
  if (port_ == 0) return Internal("no free loopback port");
  pid_t child = -1;
  RETURN_IF_ERROR(
      RunAsServerUser({bindir_ + "/initdb", "-D", dir_ + "/data", "-U", "steward", "-A", "trust",
                       "--no-sync", "--locale=C", "-E", "UTF8", "--no-instructions"},
                      dir_ + "/initdb.log", &child, /*wait=*/true));
  {
    std::ofstream hba(dir_ + "/data/pg_hba.conf", std::ios::trunc);
    hba << "local all all trust\n"
           "host all steward 127.0.0.1/32 trust\n"
           "host all all 127.0.0.1/32 scram-sha-256\n";
  }
  return Start();
}

// fork + (when root) setgid/setuid + exec, output to `log`; waits for the exit when `wait`.
Status LocalPostgres::RunAsServerUser(const std::vector<std::string>& argv, const std::string& log,
                                      pid_t* child, bool wait) const {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return Internal("cannot open " + log);
  if (uid_ != 0 && fchown(out, uid_, gid_) != 0) {
    close(out);
    return Internal("chown " + log + " failed");
  }
  pid_t pid = fork();
  if (pid < 0) {
    close(out);
    return Internal("fork failed");
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    setpgid(0, 0);
    dup2(out, 1);
    dup2(out, 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    if (uid_ != 0) {
      if (setgroups(0, nullptr) != 0 || setgid(gid_) != 0 || setuid(uid_) != 0) _exit(126);
    }
    // A test that crashes must not leave a server behind (set after setuid, which clears it).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (chdir(dir_.c_str()) != 0) _exit(126);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out);
  *child = pid;
  if (!wait) return Status::Ok();
  int status = 0;
  if (!WaitExit(pid, std::chrono::seconds(120), &status)) {
    kill(pid, SIGKILL);
    return Unavailable(argv[0] + " did not finish: " + Tail(log));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Internal(argv[0] + " failed (status " + std::to_string(status) + "): " + Tail(log));
  }
  return Status::Ok();
}

Status LocalPostgres::Start() {
  if (pid_ > 0) return FailedPrecondition("postgres is already running");
  RETURN_IF_ERROR(RunAsServerUser(
      {bindir_ + "/postgres", "-D", dir_ + "/data", "-p", std::to_string(port_), "-k", dir_, "-c",
       "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "full_page_writes=off", "-c",
       "max_connections=200", "-c", "shared_buffers=16MB"},
      dir_ + "/postgres.log", &pid_, /*wait=*/false));
  return WaitReady();
}

Status LocalPostgres::WaitReady() {
  const std::string conninfo = "host=127.0.0.1 port=" + std::to_string(port_) +
                               " dbname=postgres user=steward connect_timeout=2";
  auto deadline = steady_clock::now() + std::chrono::seconds(60);
  while (steady_clock::now() < deadline) {
    if (PQping(conninfo.c_str()) == PQPING_OK) return Status::Ok();
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return Internal("postgres exited at start: " + Tail(dir_ + "/postgres.log"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling readiness
  }
  return Unavailable("postgres did not accept connections within 60 s: " +
                     Tail(dir_ + "/postgres.log"));
}

Status LocalPostgres::Stop() {
  if (pid_ <= 0) return Status::Ok();
  kill(pid_, SIGINT);
  int status = 0;
  if (!WaitExit(pid_, std::chrono::seconds(30), &status)) {
    Kill();
    return Unavailable("postgres did not stop within 30 s (killed)");
  }
  // The backends exit before the postmaster does on a fast shutdown.
  pid_ = -1;
  return Status::Ok();
}

Status LocalPostgres::Restart() {
  RETURN_IF_ERROR(Stop());
  return Start();
}

void LocalPostgres::Kill() {
  if (pid_ <= 0) return;
  // Stopped first, the postmaster forks no child while they are listed. A child left running
  // keeps the old shared memory attached, and the next Start fails on it ("pre-existing shared
  // memory block is still in use").
  kill(pid_, SIGSTOP);
  const std::vector<pid_t> children = ChildProcessesOf(pid_);
  for (pid_t child : children) kill(child, SIGKILL);
  kill(pid_, SIGKILL);
  int status = 0;
  WaitExit(pid_, std::chrono::seconds(30), &status);
  // The children are not ours (init reaps them): wait until none runs.
  auto deadline = steady_clock::now() + std::chrono::seconds(10);
  for (pid_t child : children) {
    while (ProcessAlive(child) && steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling their exit
    }
  }
  pid_ = -1;
}

LocalPostgres::~LocalPostgres() {
  Kill();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string LocalPostgres::Url(std::string_view db, std::string_view user) const {
  return "postgresql://" + std::string(user) + "@127.0.0.1:" + std::to_string(port_) + "/" +
         std::string(db);
}

StatusOr<std::string> LocalPostgres::Query(std::string_view db, const std::string& sql) const {
  const std::string conninfo = "host=127.0.0.1 port=" + std::to_string(port_) +
                               " dbname=" + std::string(db) + " user=steward connect_timeout=5";
  PGconn* c = PQconnectdb(conninfo.c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    std::string m = PQerrorMessage(c);
    PQfinish(c);
    return Unavailable("connect to " + std::string(db) + ": " + m);
  }
  PGresult* r = PQexec(c, sql.c_str());
  ExecStatusType st = PQresultStatus(r);
  std::string out;
  Status s = Status::Ok();
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    s = Internal(sql + ": " + PQresultErrorMessage(r));
  } else if (st == PGRES_TUPLES_OK && PQntuples(r) > 0) {
    out = PQgetvalue(r, 0, 0);
  }
  PQclear(r);
  PQfinish(c);
  if (!s.ok()) return s;
  return out;
}

Status LocalPostgres::Exec(std::string_view db, const std::string& sql) const {
  return Query(db, sql).status();
}

Status LocalPostgres::CreateDatabase(std::string_view name, std::string_view owner) const {
  return Exec("postgres", "CREATE DATABASE " + std::string(name) +
                              (owner.empty() ? "" : " OWNER " + std::string(owner)));
}

Status LocalPostgres::CreatePasswordRole(std::string_view name, std::string_view password) const {
  return Exec("postgres", "CREATE ROLE " + std::string(name) + " LOGIN PASSWORD '" +
                              std::string(password) + "'");
}

}  // namespace steward
