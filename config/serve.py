"""The production server: uvicorn's command line, with TCP_NODELAY on the
listening socket.

With `--workers` above 1, uvicorn binds the listening socket itself without
naming the TCP protocol, so asyncio does not switch Nagle's algorithm off on
the connections it accepts; on a kept-alive connection each response's body
then waits for the client's delayed ACK of its headers, about 40 ms a
request. Linux passes TCP_NODELAY from a listening socket to the sockets it
accepts, so setting it once here fixes every worker.

    python -m config.serve config.asgi:application --workers 4 ...
"""

import socket

import uvicorn.config
from uvicorn.main import main

_bind_socket = uvicorn.config.Config.bind_socket


def _bind_socket_without_delay(self: uvicorn.config.Config) -> socket.socket:
    sock = _bind_socket(self)
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


uvicorn.config.Config.bind_socket = _bind_socket_without_delay

if __name__ == "__main__":
    main()
