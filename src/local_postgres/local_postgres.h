// LocalPostgres: a real PostgreSQL server this process starts — for `steward torture --database
// postgres` (so it ships) and for the store, end-to-end and replica tests and benchmarks — in a
// temporary directory, on a free loopback port, with fsync off (a commit reaches the kernel
// before it is acknowledged, so killing the server loses nothing acknowledged; only a power loss
// would).
//
// The binaries come from $STEWARD_PG_BINDIR, else /usr/lib/postgresql/15/bin (Debian's
// postgresql-15, installed by scripts/setup.sh); when they are missing Launch fails with a
// message saying so: tests must fail on it, never skip. initdb and postgres refuse to run as
// root: when the process is root they run as the `postgres` system user (or `nobody`), which
// then owns the temporary directory.
//
// Roles: `steward` (superuser; trust authentication over TCP and the socket) and whatever
// CreatePasswordRole makes (scram-sha-256 over TCP, to test password files).
//
// Ownership: the object owns the server process and the directory; the destructor kills the
// server and removes the directory. The server also gets SIGKILL when the thread that started it
// exits (PR_SET_PDEATHSIG), so a crashed test leaves none behind: call Launch and Start from a
// thread that outlives the server (a test's main thread). Thread-safety: one thread at a time
// (Exec/Query open their own connection, so they may run while a store uses the server).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace steward {

class LocalPostgres {
 public:
  // initdb + start; waits until the server accepts connections.
  static StatusOr<std::unique_ptr<LocalPostgres>> Launch();
  ~LocalPostgres();
  LocalPostgres(const LocalPostgres&) = delete;
  LocalPostgres& operator=(const LocalPostgres&) = delete;

  Status Start();    // again, after Stop or Kill: same data, same port
  Status Stop();     // fast shutdown (SIGINT), waits for the postmaster to exit
  Status Restart();  // Stop + Start
  void Kill();       // SIGKILL to the postmaster and all its children; waits until none runs
  bool running() const { return pid_ > 0; }

  int port() const { return port_; }
  // postgresql://USER@127.0.0.1:PORT/DB (no password).
  std::string Url(std::string_view db, std::string_view user = "steward") const;
  const std::string& dir() const { return dir_; }

  // As the superuser, on database `db` (a new connection each time).
  Status Exec(std::string_view db, const std::string& sql) const;
  // The first column of the first row ("" when no row).
  StatusOr<std::string> Query(std::string_view db, const std::string& sql) const;
  Status CreateDatabase(std::string_view name, std::string_view owner = "") const;
  // A login role with a password (scram-sha-256 over TCP).
  Status CreatePasswordRole(std::string_view name, std::string_view password) const;

 private:
  LocalPostgres() = default;
  Status Init();
  Status RunAsServerUser(const std::vector<std::string>& argv, const std::string& log, pid_t* child,
                         bool wait) const;
  Status WaitReady();

  std::string bindir_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  uid_t uid_ = 0;  // whom initdb and postgres run as (0: this process's user)
  gid_t gid_ = 0;
};

// Process helpers behind Kill, exposed for their tests. `proc_root` is "/proc" but for tests.
// The processes whose parent is `parent` (from <proc_root>/<pid>/stat); an entry that cannot be
// read (the process exited meanwhile) is passed over.
std::vector<pid_t> ChildProcessesOf(pid_t parent, const std::string& proc_root = "/proc");
// Whether `pid` still runs: its stat can be read and it is not a zombie (a zombie holds no memory
// or socket).
bool ProcessAlive(pid_t pid, const std::string& proc_root = "/proc");

}  // namespace steward
