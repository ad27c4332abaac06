"""The production server's listening socket turns Nagle's algorithm off."""

import socket

import uvicorn

from config import serve


def test_the_listening_socket_of_several_workers_sends_without_delay():
    config = uvicorn.Config(serve.__name__, host="127.0.0.1", port=0, workers=2)
    sock = config.bind_socket()
    try:
        # Linux hands this to every connection the workers accept.
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        sock.close()
