// SyncPush: the push server mounted in `anchorage serve` (device registrations, one token per
// collection, a bounded queue per device, notifications over a WebSocket) and the device's push client.
