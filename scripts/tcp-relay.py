#!/usr/bin/env python3
"""A TCP relay that counts the bytes each way and, when asked, limits them to a phone's link.

    tcp-relay.py LISTEN_PORT TARGET_PORT [--rate BITS_PER_SECOND] [--delay SECONDS]

The compression benchmark measures a phone's link with it (Benchmarks/compression); tests stop and
start it to take a server away at the address a client knows it by (NotesOfflineTests).

Prints "relaying" once it listens; on SIGTERM prints "up BYTES down BYTES" (client to server, server
to client) and exits. With --rate, each direction is paced to that many bits a second; with --delay,
every chunk arrives that much later (a one-way latency, so a round trip takes twice that).
"""
import asyncio, signal, sys, time

args = sys.argv[1:]
listen_port, target_port = int(args[0]), int(args[1])
rate = float(args[args.index("--rate") + 1]) / 8 if "--rate" in args else None
delay = float(args[args.index("--delay") + 1]) if "--delay" in args else 0.0
totals = {"up": 0, "down": 0}


async def pipe(reader, writer, direction):
    # Chunks are timestamped as they arrive and released at arrival + delay, paced by the rate:
    # a queue keeps reading while earlier chunks wait, as a link with a buffer does.
    queue = asyncio.Queue()

    async def receive():
        while data := await reader.read(16384):
            totals[direction] += len(data)
            await queue.put((time.monotonic(), data))
        await queue.put((time.monotonic(), None))

    async def send():
        free_at = 0.0
        while True:
            arrived, data = await queue.get()
            if data is None:
                break
            due = max(arrived + delay, free_at)
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if rate:
                free_at = max(time.monotonic(), due) + len(data) / rate
            writer.write(data)
            await writer.drain()
        writer.close()

    try:
        await asyncio.gather(receive(), send())
    except Exception:
        writer.close()


async def handle(client_reader, client_writer):
    try:
        server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
    except Exception:
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, server_writer, "up"), pipe(server_reader, client_writer, "down"))


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", listen_port, reuse_address=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print("relaying", flush=True)
    await stop.wait()
    print(f"up {totals['up']} down {totals['down']}", flush=True)


asyncio.run(main())
