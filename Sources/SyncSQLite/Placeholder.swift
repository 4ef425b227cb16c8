// The SQLite store lands here.
