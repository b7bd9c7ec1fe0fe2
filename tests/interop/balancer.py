"""A tiny TCP load balancer on loopback for the replica tests: each connection goes to the next
replica that accepts it, and the balancer remembers which replica served each connection."""

from __future__ import annotations

import socket
import socketserver
import threading


class Balancer:
    def __init__(self, backends: list[int]):
        self.backends = backends
        self.served: list[int] = []  # backend port of each connection, in order
        self._next = 0
        self._lock = threading.Lock()
        balancer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                for _ in range(len(balancer.backends)):
                    port = balancer._pick()
                    try:
                        upstream = socket.create_connection(("127.0.0.1", port), timeout=2)
                    except OSError:
                        continue
                    with balancer._lock:
                        balancer.served.append(port)
                    upstream.settimeout(None)
                    _pump_both(self.request, upstream)
                    return

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def _pick(self) -> int:
        with self._lock:
            port = self.backends[self._next % len(self.backends)]
            self._next += 1
            return port

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _pump_both(client: socket.socket, upstream: socket.socket) -> None:
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
