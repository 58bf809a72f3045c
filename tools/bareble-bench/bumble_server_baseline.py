#!/usr/bin/env python3
"""Baseline for `bareble-bench server`: Bumble's GATT server (H4 packet parser, HCI
decoding, Host, L2CAP, Device, GATT server) fed the central's side of the same H4 stream,
in one process, with no socket in between. What Bumble sends goes to a function that
notes it; the central's bytes are fed as the fake controller feeds BareBLE:

- the setup frames first, central after central (LE Connection Complete with Bumble as
  peripheral, Exchange MTU Request, CCCD write, a credit after each response); an ACL
  frame from a central is fed only once Bumble has answered the previous one;
- reads: each Read Request fed once the previous Read Response has gone out, followed by
  its credit (Number Of Completed Packets); with several centrals the requests take turns
  among them;
- notify: COUNT rounds of `notify_subscriber(connection, characteristic, value)` (the
  per-connection call, lighter than `notify_subscribers`) to each central in turn; when
  Bumble has all 8 controller buffers in flight, their credits are fed back at once in one
  Number Of Completed Packets with a count per central, as the fake controller returns
  what it read in one event to BareBLE (so Bumble never queues a packet). The stream
  holds only the setup frames then.

The characteristic's value handle is made to equal BareBLE's (plain attributes pad the
table before the service), so the Read Requests and the CCCD write are byte for byte the
ones BareBLE answered.

Usage: bumble_server_baseline.py STREAM_FILE reads|notify COUNT SETUP_FRAMES VALUE_HANDLE SIZE CENTRALS
Prints one JSON line: {"mode": M, "count": N, "seconds": S, "per_second": R}, N the reads
or the notifications sent.
"""
import asyncio
import json
import logging
import sys
import time

from bumble import hci
from bumble.att import Attribute
from bumble.device import Device
from bumble.gatt import Characteristic, Service
from bumble.host import DataPacketQueue, Host
from bumble.transport.common import PacketParser

CONNECTION_HANDLE = 0x0040
BUFFERS = 8  # the fake controller's LE ACL buffers (LE Read Buffer Size)
HEADER_LENGTHS = {0x01: (3, 2, 1), 0x02: (4, 2, 2), 0x04: (2, 1, 1)}  # header, length offset, length size


def split_frames(stream: bytes) -> list[bytes]:
    frames = []
    offset = 0
    while offset < len(stream):
        header, at, size = HEADER_LENGTHS[stream[offset]]
        length = int.from_bytes(stream[offset + 1 + at:offset + 1 + at + size], 'little')
        end = offset + 1 + header + length
        frames.append(stream[offset:end])
        offset = end
    return frames


def completed_packets(counts: dict[int, int]) -> bytes:
    """H4 Number Of Completed Packets crediting `counts` (packets per connection handle)."""
    parameters = bytes([len(counts)]) + b''.join(
        handle.to_bytes(2, 'little') + packets.to_bytes(2, 'little') for handle, packets in counts.items())
    return bytes([0x04, 0x13, len(parameters)]) + parameters


def fail(message: str) -> None:
    print(message, file=sys.stderr)
    sys.exit(1)


async def main() -> None:
    path, mode, count, setup, value_handle, size, centrals = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:8])
    with open(path, 'rb') as stream_file:
        frames = split_frames(stream_file.read())
    logging.disable(logging.CRITICAL)

    loop = asyncio.get_running_loop()
    answered: asyncio.Future | None = None
    sent = 0
    last_opcode = None
    in_flight: dict[int, int] = {}  # packets sent and not yet credited, per connection handle

    def send(packet: hci.HCI_Packet) -> None:
        nonlocal sent, last_opcode
        if not isinstance(packet, hci.HCI_AclDataPacket):
            return  # commands: nothing is listening, the stream is scripted
        sent += 1
        in_flight[packet.connection_handle] = in_flight.get(packet.connection_handle, 0) + 1
        last_opcode = packet.data[4]
        if answered is not None and not answered.done():
            answered.set_result(None)

    host = Host(controller_source=None, controller_sink=None)
    host.send_hci_packet = send
    device = Device(host=host)
    host.ready = True
    # What the reset would have learned from LE Read Buffer Size: 251 bytes x 8.
    host.le_acl_packet_queue = DataPacketQueue(max_packet_size=251, max_in_flight=BUFFERS, send=send)
    while device.gatt_server.next_handle() < value_handle - 2:
        device.gatt_server.add_attribute(Attribute('FFFF', Attribute.READABLE, b''))
    characteristic = Characteristic(
        '2A19', Characteristic.Properties.READ | Characteristic.Properties.NOTIFY, Characteristic.READABLE, bytes(range(size)))
    device.add_service(Service('180F', [characteristic]))
    if characteristic.handle != value_handle:
        fail(f'bumble laid the value out at {characteristic.handle:#06x}, not {value_handle:#06x}')
    parser = PacketParser(host)

    async def feed(frame: bytes) -> None:
        nonlocal answered
        if frame[0] != 0x02:
            parser.feed_data(frame)
            return
        answered = loop.create_future()
        parser.feed_data(frame)
        await asyncio.wait_for(answered, 10)

    for frame in frames[:setup]:
        await feed(frame)
    connections = [device.lookup_connection(CONNECTION_HANDLE + index) for index in range(centrals)]
    for connection in connections:
        if connection is None:
            fail('bumble made no connection from an LE Connection Complete')
        if not device.gatt_server.subscribers.get(connection, {}).get(value_handle):
            fail('a CCCD write did not subscribe its central')

    workload = frames[setup:]
    sent = 0
    start = time.perf_counter()
    if mode == 'reads':
        for frame in workload:
            await feed(frame)
            if frame[0] == 0x02 and last_opcode != 0x0B:
                fail(f'bumble answered a Read Request with opcode {last_opcode:#04x}')
    else:
        value = bytes(range(size))
        in_flight.clear()
        for _ in range(count):
            for connection in connections:
                await device.notify_subscriber(connection, characteristic, value)
                if sum(in_flight.values()) >= BUFFERS:
                    parser.feed_data(completed_packets(in_flight))
                    in_flight.clear()
        count *= centrals
    seconds = time.perf_counter() - start
    if sent != count:
        fail(f'bumble sent {sent} packets, expected {count}')
    print(json.dumps({'mode': mode, 'count': count, 'seconds': seconds, 'per_second': count / seconds}))


if __name__ == '__main__':
    asyncio.run(main())
