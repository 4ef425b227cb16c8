/// Mail as a sync service: an IMAP client, notes kept in a mailbox, and the
/// data access daemon that syncs a mailbox when its push token fires.
public enum SyncMail {}
