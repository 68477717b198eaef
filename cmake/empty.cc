// Keeps every library non-empty while its module is being written.
