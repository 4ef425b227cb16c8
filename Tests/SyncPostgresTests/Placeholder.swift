// Tests of PostgresStore land here.
