// FileSync: a WebDAV client and a local folder kept in sync with a WebDAV server through the journal.
