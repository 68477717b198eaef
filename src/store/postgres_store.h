// The PostgreSQL store: the Store (store.h) shared by several Steward replicas (docs/design.md
// §10).
//
// Every method keeps store.h's contract, with these differences, all about who delivers changes:
//   * Changes are delivered by the store's feed thread, not by the committing thread. The feed
//     thread reads the `changes` table in position order — woken by a NOTIFY on its own LISTEN
//     connection (a commit by any process), by a local commit, or by a periodic poll — and hands
//     each change to a store::ChangeFeed. So a change committed by another process reaches this
//     store's listeners too, in the same order (position order, which is commit order), without
//     gaps or duplicates.
//   * A committing call still returns only after its change was delivered here: it waits for the
//     feed thread, at most PostgresOptions::delivery_wait; then it logs a warning and returns Ok
//     (the change is committed; it will be delivered when the feed catches up). A write made from
//     inside a listener (on the feed thread) does not wait: its change is delivered after that
//     listener returns, as store.h says.
//   * A listener is called on the feed thread, never on the caller's.
//   * The feed keeps PostgresOptions::retain_changes / retain_for of changes. A store whose next
//     position was pruned (a feed connection lost for longer than that) logs an error and
//     re-synchronises: it delivers every current record as a change (record set, no history),
//     each at the position of the snapshot it read (the same position repeated, once per record),
//     then the changes after that position. Records purged during the gap are not delivered
//     (a listener learns they are gone by their absence from a later read).
//
// Errors: a unique violation is kAlreadyExists, a fence or compare-and-set that fails kAborted,
// as for SQLite. A lost connection, a server shutting down, a statement that ran past
// statement_timeout, or serialization failures/deadlocks that persist after a few retries give
// kUnavailable; a connection found dead is dropped and the next call opens a new one. A COMMIT
// whose result never arrived is kUnavailable "the outcome of the commit is unknown": never Ok.
// A transaction retried after a serialization failure or deadlock runs its MutateFn / CreateFn
// again: they must not act beyond their arguments (store.h asks that already: quick, no calls).
// Transactions are READ COMMITTED whatever the database's default; every write that changes a
// record or hostnames locks the one feed row first, so writers are serialised across processes.
//
// Schema: forward-only migrations (table schema_migrations) applied at open under a PostgreSQL
// advisory lock, so replicas starting together migrate once. Open fails with kFailedPrecondition
// for a database whose schema is newer than this binary knows, or one that holds other tables
// and no schema_migrations ("not a Steward database").
//
// Credentials: the URL must not hold a password (refused); it comes from password_file (read
// once at open; must not be readable by group or others) or from libpq's own PGPASSWORD /
// PGPASSFILE. No message or log line of this store contains a password.
//
// Thread-safety: every method may be called from any thread. Ownership: the store owns its
// connections (a pool of pool_size plus the feed's LISTEN connection) and the feed thread, which
// the destructor stops and joins; destroy the store only when no call is in progress.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "store/store.h"

namespace steward::store {

struct PostgresOptions {
  // postgres://[user@]host[:port]/dbname[?param=value...] (or postgresql://); any libpq URI
  // parameter (sslmode, sslrootcert, ...). Must not hold a password.
  std::string url;
  // A file holding the password (trailing newline ignored), mode 0600 or stricter; "" for none
  // (libpq then uses PGPASSWORD or PGPASSFILE, if set).
  std::string password_file;
  int pool_size = 4;  // connections for statements (the LISTEN connection comes on top)
  std::chrono::milliseconds statement_timeout{5000};  // each connection's statement_timeout
  std::chrono::milliseconds connect_timeout{5000};    // per connection attempt (whole seconds)
  // How long a committing call waits for its change to be delivered (see above).
  std::chrono::milliseconds delivery_wait{5000};
  // The feed thread reads the changes table at least this often, notifications or not.
  std::chrono::milliseconds poll_interval{1000};
  // Changes are pruned once there are more than retain_changes newer ones AND they are older
  // than retain_for.
  int64_t retain_changes = 100000;
  std::chrono::milliseconds retain_for{std::chrono::minutes(10)};
  Clock* clock = nullptr;  // wall clock for the *_ms stamps; nullptr: RealClock::Get()
  // Tests only (fault injection): called on the writing thread right before each COMMIT is sent.
  std::function<void()> before_commit;
};

// Checks a database URL without connecting: postgres:// or postgresql://, parseable by libpq,
// no password. kInvalidArgument naming what is wrong (never echoing a password).
Status ValidatePostgresUrl(std::string_view url);

// Connects, applies pending migrations and starts the feed thread. kInvalidArgument for a bad
// URL, kFailedPrecondition for a password file that cannot be used or a database that is not
// (or is a newer) Steward database, kUnavailable when the server cannot be reached (the message
// names host and port).
StatusOr<std::unique_ptr<Store>> OpenPostgresStore(const PostgresOptions& options);

}  // namespace steward::store
