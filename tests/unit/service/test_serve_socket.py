"""The socket ``sira-seek serve`` listens on: every connection it accepts has Nagle's
algorithm off. asyncio sets ``TCP_NODELAY`` only on sockets that say they are TCP; a listening
socket made with protocol 0 hands out connections that keep Nagle on, and a response written
as headers then body then waits for the client's delayed ACK: ~40 ms more per request on a
kept-alive connection (what benchmarks/http_load.py showed before the fix: p50 64 ms against
16 ms direct)."""

from __future__ import annotations

import asyncio
import socket

from sira_seek.service.runner import bind


def test_accepted_connections_have_nagle_off() -> None:
    listener = bind("127.0.0.1", 0)
    port = listener.getsockname()[1]
    seen: list[int] = []

    async def main() -> None:
        def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            seen.append(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        listener.listen()
        server = await asyncio.start_server(accepted, sock=listener)
        async with server:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
            for _ in range(100):
                if seen:
                    break
                await asyncio.sleep(0.01)
            writer.close()

    asyncio.run(main())
    assert seen and seen[0] != 0
