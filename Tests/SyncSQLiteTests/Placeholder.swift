// Tests of the SQLite store land here.
