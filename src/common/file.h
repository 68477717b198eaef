// Small files and private paths: reading whole small files (configuration, tokens, certificates,
// specs) with errors that name the path and the cause, and creating the files and directories
// that may hold secrets (stores, tokens, keys, kubeconfigs) with modes 0600 / 0700 whatever the
// process umask. The umask itself is never changed (the process is multi-threaded). Stateless and
// thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace steward {

// Reads a whole regular file of at most `max_bytes`. kNotFound when it does not exist,
// kFailedPrecondition for anything else (permission denied, a directory, too large, read error);
// the message is "<path>: <cause>".
StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = 16u << 20);

// strerror_r's text for `err`.
std::string ErrnoText(int err);

// Creates `dir` with mode 0700 when it does not exist; missing parents are created as `mkdir -p`
// does (mode 0777 minus the umask). An existing directory is left as it is: PrivateDirWarning
// says whether its mode is too loose. kFailedPrecondition "<dir>: exists and is not a directory"
// or "<dir>: <cause>".
Status CreatePrivateDir(const std::string& dir);

// For a directory that holds secrets: "" when group and others have no permission on it (or it
// cannot be examined), else a warning naming the path, its mode and the fix (chmod 700).
std::string PrivateDirWarning(const std::string& dir);

// Makes sure the file `path` exists with no permission for group or others: created empty with
// mode 0600 when absent; an existing regular file with any group/other bit loses those bits
// (0644 becomes 0600) and the returned text is a warning saying so, naming the path and both
// modes; "" when there is nothing to say. Anything but a regular file (a device, a directory) is
// left alone for whoever opens it to refuse. kFailedPrecondition "<path>: <cause>" when it
// cannot be created or changed.
StatusOr<std::string> EnsurePrivateFile(const std::string& path);

// As EnsurePrivateFile for a file that may exist, but never creates it: "" when it is absent.
StatusOr<std::string> TightenPrivateFile(const std::string& path);

// Prepares a SQLite database file before sqlite3_open: EnsurePrivateFile(db_path), and
// TightenPrivateFile for its "-wal", "-shm" and "-journal" companions (SQLite creates those with
// the mode of the database file). Warnings are logged (LOG_WARN). ":memory:" is left alone.
Status PrepareSqliteFile(const std::string& db_path);

// Replaces `path` with `content` at mode 0600: written to a new file beside it (mode 0600 from
// the start), fsync'ed, then renamed over `path`, so readers see the old or the new content and
// never a secret at a looser mode. A symbolic link at `path` is replaced, not followed.
// kFailedPrecondition "<path>: <cause>".
Status WritePrivateFile(const std::string& path, std::string_view content);

}  // namespace steward
