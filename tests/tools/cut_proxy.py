#!/usr/bin/env python3
"""cut_proxy: a TCP relay on 127.0.0.1 whose path can be cut, for the
partition tests (tests/integration/ha_partition_test.sh).

  cut_proxy.py TARGET_PORT PORT_FILE

Listens on a free port of 127.0.0.1 (written to PORT_FILE once bound) and
relays every connection to 127.0.0.1:TARGET_PORT, both ways.

  SIGUSR1  cuts the path: nothing more goes through, either way, and nothing
           is closed, as when the network between two hosts drops every
           packet; the bytes wait (TCP would retransmit them), new
           connections are held before they reach the target.
  SIGUSR2  heals it: what waited goes through.
  SIGTERM  exits (so does the death of the process that started it).
"""
import asyncio
import ctypes
import os
import signal
import sys


def die_with_parent():
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


async def main(target_port, port_file):
    path_open = asyncio.Event()
    path_open.set()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, path_open.clear)
    loop.add_signal_handler(signal.SIGUSR2, path_open.set)
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)

    async def pump(reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                await path_open.wait()  # one chunk held at most: then the kernel's buffers fill
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def relay(client_reader, client_writer):
        await path_open.wait()
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pump(client_reader, up_writer), pump(up_reader, client_writer))

    server = await asyncio.start_server(relay, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, port_file)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    if len(sys.argv) != 3 or not sys.argv[1].isdigit():
        sys.stderr.write("usage: cut_proxy.py TARGET_PORT PORT_FILE\n")
        sys.exit(2)
    die_with_parent()
    asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
