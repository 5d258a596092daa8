"""A member restarted right after a SIGKILL waits, boundedly, for its ports (esplugin/local/node.py
``wait_ports_free``): a port freed within the wait is no error, one held past it is reported
with what holds it."""

from __future__ import annotations

import socket
import threading

from sira_seek.esplugin.local.node import port_free, port_states, wait_ports_free


def listening() -> tuple[socket.socket, int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock, int(sock.getsockname()[1])


def test_a_port_freed_during_the_wait_is_not_busy() -> None:
    sock, port = listening()
    assert not port_free(port)
    timer = threading.Timer(0.6, sock.close)
    timer.start()
    try:
        assert wait_ports_free([port], timeout_s=20.0) == []
    finally:
        timer.cancel()
        sock.close()


def test_a_port_held_past_the_wait_is_reported_with_its_socket_state() -> None:
    sock, port = listening()
    with sock:
        free_sock, free_port = listening()
        free_sock.close()
        assert wait_ports_free([free_port, port], timeout_s=0.6) == [port]
        assert "LISTEN" in port_states(port)
    assert port_states(port) == [] or "LISTEN" not in port_states(port)
