// Tests of SyncPush.
