"""H4 byte streams between our stack and an exposed controller: loopback TCP
(a fresh controller per client) and a pty that looks like a UART."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import struct
import termios
import tty

from bumble import hci
from bumble.snoop import BtSnooper, Snooper

from radio_controller import RadioController

logger = logging.getLogger(__name__)

MAX_PENDING_PTY_OUTPUT = 1 << 20

# H4 packet type -> (header length, offset and size of the length field, mask).
_H4_HEADERS = {
    hci.HCI_COMMAND_PACKET: (3, 2, 1, 0xFF),
    hci.HCI_ACL_DATA_PACKET: (4, 2, 2, 0xFFFF),
    hci.HCI_SYNCHRONOUS_DATA_PACKET: (3, 2, 1, 0xFF),
    hci.HCI_EVENT_PACKET: (2, 1, 1, 0xFF),
    hci.HCI_ISO_DATA_PACKET: (4, 2, 2, 0x3FFF),
}


class H4Framer:
    """Splits an H4 byte stream into packets (type byte included). A byte that is
    not a packet type is skipped, the way a controller UART resynchronises."""

    def __init__(self, on_packet) -> None:
        self.on_packet = on_packet
        self.buffer = bytearray()

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while self.buffer:
            header = _H4_HEADERS.get(self.buffer[0])
            if header is None:
                logger.warning('H4: skipping stray byte 0x%02X', self.buffer[0])
                del self.buffer[0]
                continue
            header_length, offset, size, mask = header
            if len(self.buffer) < 1 + header_length:
                return
            field = self.buffer[1 + offset : 1 + offset + size]
            length = int.from_bytes(field, 'little') & mask
            total = 1 + header_length + length
            if len(self.buffer) < total:
                return
            packet = bytes(self.buffer[:total])
            del self.buffer[:total]
            self.on_packet(packet)


class Exposed:
    """One controller our stack talks to, its byte stream and its capture."""

    def __init__(self, client_id: str, address: str, link, snoop_path: str | None, emit) -> None:
        self.id = client_id
        self.emit = emit
        self.write = lambda data: None  # set by the transport
        self.snoop_file = open(snoop_path, 'wb', buffering=0) if snoop_path else None
        self.snooper = BtSnooper(self.snoop_file) if self.snoop_file else None
        self.controller = RadioController(
            f'exposed-{client_id}', link=link, public_address=address, on_event=self.on_controller_event
        )
        self.controller.host = self  # the controller calls on_packet with H4 bytes
        self.framer = H4Framer(self.from_host)

    @property
    def json_id(self):
        return int(self.id) if self.id.isdigit() else self.id

    def on_controller_event(self, **event) -> None:
        self.emit(**event, client=self.json_id)

    # Controller -> host.
    def on_packet(self, packet: bytes) -> None:
        if self.snooper:
            self.snooper.snoop(packet, Snooper.Direction.CONTROLLER_TO_HOST)
        self.write(packet)

    # Host -> controller.
    def from_host(self, packet: bytes) -> None:
        if self.snooper:
            self.snooper.snoop(packet, Snooper.Direction.HOST_TO_CONTROLLER)
        self.controller.on_packet(packet)

    def write_raw(self, data: bytes) -> None:
        """Bytes outside any packet (resynchronisation tests); not captured."""
        self.write(data)

    def flush(self) -> None:
        if self.snoop_file:
            self.snoop_file.flush()

    def close(self) -> None:
        # The host vanished: to peers the links drop as if by supervision timeout.
        self.controller.tear_down(hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR)
        self.controller.host = None
        if self.controller in self.controller.link.controllers:
            self.controller.link.remove_controller(self.controller)
        if self.snoop_file:
            self.snoop_file.close()
            self.snoop_file = None
            self.snooper = None


class _TcpClient(asyncio.Protocol):
    def __init__(self, on_open, on_close) -> None:
        self.on_open = on_open
        self.on_close = on_close
        self.exposed: Exposed | None = None

    def connection_made(self, transport) -> None:
        sock = transport.get_extra_info('socket')
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.exposed = self.on_open()
        self.exposed.write = transport.write

    def data_received(self, data: bytes) -> None:
        self.exposed.framer.feed(data)

    def connection_lost(self, _exc) -> None:
        self.exposed.write = lambda data: None
        self.on_close(self.exposed)


class TcpServer:
    def __init__(self, on_open, on_close) -> None:
        self.on_open = on_open
        self.on_close = on_close

    async def start(self) -> int:
        loop = asyncio.get_running_loop()
        self.server = await loop.create_server(
            lambda: _TcpClient(self.on_open, self.on_close), '127.0.0.1', 0
        )
        return self.server.sockets[0].getsockname()[1]


class PtyEndpoint:
    """The master side of a pty carrying H4; our stack opens the slave path."""

    def __init__(self, exposed: Exposed) -> None:
        self.exposed = exposed
        self.pending = bytearray()
        self.master = -1
        self.slave = -1

    def open(self) -> str:
        self.master, self.slave = os.openpty()
        for fd in (self.master, self.slave):
            tty.setraw(fd, termios.TCSANOW)
        # Keeping our slave descriptor open means the master never sees a hangup
        # while the stack has the device closed (between tests, while reopening).
        os.set_blocking(self.master, False)
        loop = asyncio.get_running_loop()
        loop.add_reader(self.master, self.on_readable)
        self.exposed.write = self.write
        return os.ttyname(self.slave)

    def on_readable(self) -> None:
        try:
            data = os.read(self.master, 65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as error:
            if error.errno == errno.EIO:
                return
            raise
        if data:
            self.exposed.framer.feed(data)

    def write(self, data: bytes) -> None:
        if self.pending:
            self._queue(data)
            return
        try:
            written = os.write(self.master, data)
        except BlockingIOError:
            written = 0
        if written < len(data):
            self._queue(data[written:])
            asyncio.get_running_loop().add_writer(self.master, self.on_writable)

    def _queue(self, data: bytes) -> None:
        if len(self.pending) + len(data) > MAX_PENDING_PTY_OUTPUT:
            logger.warning('pty reader is not reading: dropping %d bytes', len(data))
            return
        self.pending += data

    def on_writable(self) -> None:
        try:
            written = os.write(self.master, self.pending)
        except BlockingIOError:
            return
        del self.pending[:written]
        if not self.pending:
            asyncio.get_running_loop().remove_writer(self.master)
