"""Exposed controllers the Linux kernel drives: each open of /dev/vhci (the hci_vhci
module) creates one adapter hciN whose HCI traffic is this file descriptor. Used inside
the kernel lane's QEMU guest, where the kernel's own stack, HCI sockets and L2CAP
sockets then talk to our controllers on the shared link."""

from __future__ import annotations

import asyncio
import os
import time

HCI_VENDOR_PKT = 0xFF
HCI_PRIMARY = 0x00
VHCI_PATH = '/dev/vhci'


class VhciEndpoint:
    """One /dev/vhci descriptor carrying H4 packets, one whole packet per read and write."""

    def __init__(self) -> None:
        self.fd = -1
        self.index = -1
        self.exposed = None

    def create(self) -> int:
        """Creates the adapter now (rather than on the driver's 1 s timer) and returns its
        index. The kernel starts its HCI init at once: attach without delay."""
        self.fd = os.open(VHCI_PATH, os.O_RDWR | os.O_CLOEXEC)
        os.write(self.fd, bytes([HCI_VENDOR_PKT, HCI_PRIMARY]))
        # The driver answers with a vendor packet: 0xFF, the controller type, the index (LE).
        reply = os.read(self.fd, 4)
        if len(reply) != 4 or reply[0] != HCI_VENDOR_PKT:
            raise RuntimeError(f'unexpected reply from {VHCI_PATH}: {reply.hex()}')
        self.index = reply[2] | reply[3] << 8
        return self.index

    def attach(self, exposed) -> None:
        self.exposed = exposed
        exposed.write = self.write
        os.set_blocking(self.fd, False)
        asyncio.get_running_loop().add_reader(self.fd, self.on_readable)

    async def registered(self, timeout: float = 30.0) -> None:
        """Returns once hciN is in sysfs; the next open must not race this registration.
        Waits on the event loop, so the kernel's init commands are answered meanwhile."""
        deadline = time.monotonic() + timeout
        while not os.path.exists(f'/sys/class/bluetooth/hci{self.index}'):
            if time.monotonic() > deadline:
                raise RuntimeError(f'hci{self.index} did not appear in /sys/class/bluetooth')
            await asyncio.sleep(0.01)

    def on_readable(self) -> None:
        try:
            packet = os.read(self.fd, 65536)
        except (BlockingIOError, InterruptedError):
            return
        if packet and packet[0] != HCI_VENDOR_PKT:
            self.exposed.from_host(packet)

    def write(self, data: bytes) -> None:
        # A vhci write takes exactly one packet and never blocks for long: the kernel
        # queues it for its RX work.
        os.write(self.fd, data)
