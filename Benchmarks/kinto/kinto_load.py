#!/usr/bin/env python3
"""The sync-load workloads against a Kinto server, for performance.sh.

Each device is its own user (HTTP Basic, Kinto's basicauth policy) writing to its own default bucket,
in the same contacts as sync-load (SyncSamples' fields, generated here with the same shape):

- fast syncs: N devices each POST one contact and GET the records changed since their last sync
  (`_since`), both in one /batch request (one round trip, as an Anchorage device's sync), in a loop:
  syncs/s, p50/p99, Kinto's CPU per sync and peak RSS;
- upload: one device sends CONTACTS contacts through /batch (Kinto's default 25 requests a batch);
- pull: a second device of that user GETs them all, following Next-Page.

Prints one line per run and writes the figures as JSON, keyed like sync-load's.
"""

import argparse
import base64
import http.client
import json
import os
import random
import sys
import threading
import time

FIRST = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Frances", "John", "Katherine", "Linus"]
LAST = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Allen", "Backus", "Johnson", "Torvalds"]
STREETS = ["Main St", "Oak Ave", "Pine Rd", "Maple Dr", "Cedar Ln"]
CITIES = ["Springfield", "Riverside", "Fairview", "Madison", "Georgetown"]


def contact(rng):
    """A contact with SyncSamples' fields and sizes (no photo)."""
    first, last = rng.choice(FIRST), rng.choice(LAST)
    return {
        "uuid": "%032x" % rng.getrandbits(128),
        "firstName": first,
        "lastName": last,
        "company": rng.choice(["Acme", "Globex", "Initech", "Umbrella", "Hooli"]),
        "emails": [{"label": ["home", "work", "other"][i], "address": f"{first.lower()}.{last.lower()}{i or ''}@example.com"}
                   for i in range(rng.randint(1, 3))],
        "phones": [{"label": ["mobile", "home", "work"][i], "number": f"+1 {rng.randint(200, 999)} 555 {rng.randint(1000, 9999)}"}
                   for i in range(rng.randint(1, 3))],
        "address": {"street": f"{rng.randint(1, 9999)} {rng.choice(STREETS)}", "city": rng.choice(CITIES),
                    "postalCode": str(rng.randint(10000, 99999)), "country": "US"},
        "birthday": "1970-01-01T00:00:00Z",
        "notes": "".join(rng.choice("abcdefghij klmnopqrstuvwxyz") for _ in range(rng.randint(0, 400))),
        "modified": "2024-01-01T00:00:00Z",
    }


class Device:
    """One user's connection to Kinto, keep-alive, with its own credentials."""

    def __init__(self, port, user):
        self.port = port
        self.auth = "Basic " + base64.b64encode(f"{user}:secret".encode()).decode()
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.since = None

    def request(self, method, path, body=None):
        headers = {"Authorization": self.auth}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in range(3):
            try:
                self.connection.request(method, path, body=data, headers=headers)
                response = self.connection.getresponse()
                payload = response.read()
                break
            except (http.client.HTTPException, ConnectionError):
                self.connection.close()
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                if attempt == 2:
                    raise
        if response.status >= 400:
            raise RuntimeError(f"{method} {path}: {response.status} {payload[:200]!r}")
        return response, payload

    RECORDS = "/v1/buckets/default/collections/contacts/records"
    # The same collection as a /batch request names it (without the API's version prefix).
    BATCH_RECORDS = RECORDS.removeprefix("/v1")

    def sync(self, record):
        """Push one record and pull what changed since the last sync, in one /batch request: one round
        trip, as an Anchorage device's sync when nothing waits to be pulled."""
        pull = self.BATCH_RECORDS + "?_sort=last_modified" + (f"&_since={self.since}" if self.since else "")
        requests = [{"method": "POST", "path": self.BATCH_RECORDS, "body": {"data": record}}, {"method": "GET", "path": pull}]
        _, payload = self.request("POST", "/v1/batch", {"requests": requests})
        answers = json.loads(payload)["responses"]
        if any(answer["status"] >= 400 for answer in answers):
            raise RuntimeError(f"a sync's batch failed: {[answer['status'] for answer in answers]}")
        etag = answers[1]["headers"].get("ETag")
        if etag:
            self.since = etag.strip('"')
        return len(answers[1]["body"]["data"])


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def memory(pid):
    current = peak = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                current = int(line.split()[1]) * 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) * 1024
    return current, peak


def fast_syncs(port, pid, devices, seconds, prefix):
    clients = [Device(port, f"{prefix}-d{i}") for i in range(devices)]
    for client in clients:  # the first sync (bucket and collection made on first use) is not timed
        client.request("GET", Device.RECORDS + "?_limit=1")
        client.sync(contact(random.Random(0)))
    latencies = []
    lock = threading.Lock()
    cpu_before = cpu_seconds(pid)
    began = time.monotonic()
    deadline = began + seconds

    def run(client, index):
        rng = random.Random(index)
        mine = []
        while time.monotonic() < deadline:
            start = time.monotonic()
            client.sync(contact(rng))
            mine.append(time.monotonic() - start)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=run, args=(client, i)) for i, client in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - began
    cpu = cpu_seconds(pid) - cpu_before
    for client in clients:
        client.connection.close()
    latencies.sort()

    def percentile(p):
        return latencies[min(len(latencies) - 1, int(len(latencies) * p))] if latencies else 0

    return {
        "syncs_per_s": len(latencies) / elapsed,
        "p50_ms": percentile(0.5) * 1000,
        "p99_ms": percentile(0.99) * 1000,
        "server_cpu_ms_per_sync": cpu / max(1, len(latencies)) * 1000,
        "server_rss_mb": memory(pid)[1] / 1048576,
    }


class Sampler:
    """The peak resident memory of a process, sampled every 20 ms."""

    def __init__(self, pid):
        self.pid, self.peak, self.running = pid, 0, True
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while self.running:
            self.peak = max(self.peak, *memory(self.pid))
            time.sleep(0.02)

    def stop(self):
        self.running = False
        self.thread.join()
        return self.peak / 1048576


def bulk(port, pid, count, prefix):
    rng = random.Random(2024)
    records = [contact(rng) for _ in range(count)]
    uploader = Device(port, f"{prefix}-bulk")
    uploader.request("GET", Device.RECORDS + "?_limit=1")  # the default bucket and collection exist from here on
    sampler, cpu_before, began = Sampler(pid), cpu_seconds(pid), time.monotonic()
    for start in range(0, count, 25):
        requests = [{"method": "POST", "path": Device.BATCH_RECORDS, "body": {"data": r}}
                    for r in records[start:start + 25]]
        _, payload = uploader.request("POST", "/v1/batch", {"requests": requests})
        if any(answer["status"] >= 400 for answer in json.loads(payload)["responses"]):
            raise RuntimeError("a batch request failed")
    upload_seconds = time.monotonic() - began
    upload = {"records_per_s": count / upload_seconds, "seconds": upload_seconds,
              "server_cpu_s": cpu_seconds(pid) - cpu_before, "server_rss_mb": sampler.stop()}

    puller = Device(port, f"{prefix}-bulk")
    sampler, cpu_before, began = Sampler(pid), cpu_seconds(pid), time.monotonic()
    pulled, path = 0, Device.RECORDS + "?_sort=last_modified"
    while path:
        response, payload = puller.request("GET", path)
        pulled += len(json.loads(payload)["data"])
        next_page = response.getheader("Next-Page")
        path = next_page[next_page.index("/v1/"):] if next_page else None
    pull_seconds = time.monotonic() - began
    if pulled < count:
        raise RuntimeError(f"pulled {pulled} of {count} records")
    pull = {"records_per_s": count / pull_seconds, "seconds": pull_seconds,
            "server_cpu_s": cpu_seconds(pid) - cpu_before, "server_rss_mb": sampler.stop()}
    return upload, pull


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pid", type=int, required=True, help="Kinto's process, for its CPU time and memory")
    parser.add_argument("--backend", required=True, help="the name results are keyed by: memory or postgres")
    parser.add_argument("--devices", default="10,100,1000")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--contacts", type=int, default=100000)
    parser.add_argument("--json", required=True)
    arguments = parser.parse_args()
    results = {}
    prefix = f"run{os.getpid()}"
    for devices in [int(n) for n in arguments.devices.split(",") if n]:
        run = fast_syncs(arguments.port, arguments.pid, devices, arguments.seconds, f"{prefix}-{devices}")
        print(f"kinto {arguments.backend}, {devices} devices: {run['syncs_per_s']:.0f} syncs/s, p50 {run['p50_ms']:.1f} ms, "
              f"p99 {run['p99_ms']:.1f} ms, server CPU {run['server_cpu_ms_per_sync'] * 1000:.0f} µs a sync, "
              f"server peak RSS {run['server_rss_mb']:.0f} MB", flush=True)
        for key, value in run.items():
            results[f"kinto-{arguments.backend}.fast.{devices}.{key}"] = value
    if arguments.contacts > 0:
        upload, pull = bulk(arguments.port, arguments.pid, arguments.contacts, prefix)
        for name, run in (("upload", upload), ("pull", pull)):
            print(f"kinto {arguments.backend}, {name} of {arguments.contacts} contacts: {run['seconds']:.2f} s, "
                  f"{run['records_per_s']:.0f} records/s, server peak RSS {run['server_rss_mb']:.0f} MB", flush=True)
            for key, value in run.items():
                results[f"kinto-{arguments.backend}.{name}.{key}"] = value
    with open(arguments.json, "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    sys.exit(main())
