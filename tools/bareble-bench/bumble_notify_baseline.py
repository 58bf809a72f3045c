#!/usr/bin/env python3
"""Baseline for `bareble-bench notify`: the same H4 stream of ATT Handle Value
Notifications through Bumble's host (H4 packet parser, HCI decoding, Host, L2CAP,
Device, GATT client and a subscriber callback), in one process, with no socket in
between. The link is set up the way the BareBLE side sees it: an LE Connection
Complete (Bumble as peripheral) is fed first, then the subscriber is registered for
the value handle, then the timed stream runs.

Usage: bumble_notify_baseline.py STREAM_FILE EXPECTED_NOTIFICATIONS VALUE_HANDLE
Prints one JSON line: {"notifications": N, "seconds": S, "notifications_per_second": R}.
"""
import asyncio
import json
import logging
import struct
import sys
import time

from bumble.device import Device
from bumble.host import DataPacketQueue, Host
from bumble.transport.common import PacketParser

CONNECTION_HANDLE = 0x0040


def connection_complete() -> bytes:
    """H4 LE Connection Complete: success, handle 0x0040, role peripheral, peer random
    C4:4B:4D:00:00:01, interval 6, latency 0, timeout 100, accuracy 0."""
    parameters = struct.pack('<BBHBB6sHHHB', 0x01, 0x00, CONNECTION_HANDLE, 0x01, 0x01,
                             bytes([1, 0, 0, 0x4D, 0x4B, 0xC4]),
                             6, 0, 100, 0)
    return bytes([0x04, 0x3E, len(parameters)]) + parameters


async def main() -> None:
    path, expected, value_handle = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with open(path, 'rb') as stream_file:
        stream = stream_file.read()
    logging.disable(logging.CRITICAL)

    host = Host(controller_source=None, controller_sink=None)
    host.send_hci_packet = lambda packet: None  # nothing is listening; the stream is scripted
    device = Device(host=host)
    host.ready = True
    # What the reset would have learned from LE Read Buffer Size: 251 bytes x 8.
    host.le_acl_packet_queue = DataPacketQueue(max_packet_size=251, max_in_flight=8, send=host.send_hci_packet)
    parser = PacketParser(host)
    parser.feed_data(connection_complete())
    await asyncio.sleep(0)
    connection = device.lookup_connection(CONNECTION_HANDLE)
    if connection is None:
        print('bumble made no connection from the LE Connection Complete', file=sys.stderr)
        sys.exit(1)
    received = 0

    def on_value(_value: bytes) -> None:
        nonlocal received
        received += 1

    connection.gatt_client.notification_subscribers.setdefault(value_handle, set()).add(on_value)

    chunk = 65536
    start = time.perf_counter()
    for offset in range(0, len(stream), chunk):
        parser.feed_data(stream[offset:offset + chunk])
    seconds = time.perf_counter() - start
    if received != expected:
        print(f'bumble delivered {received} notifications, expected {expected}', file=sys.stderr)
        sys.exit(1)
    print(json.dumps({'notifications': received, 'seconds': seconds, 'notifications_per_second': received / seconds}))


if __name__ == '__main__':
    asyncio.run(main())
