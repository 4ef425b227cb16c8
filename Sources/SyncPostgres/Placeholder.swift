// PostgresStore lands here.
