"""`bumble-explore PEER [MTU]`: Bumble's own GATT client explores a peer over
the LocalLink, the baseline for BareBLE's explorer benchmark.

The explorer is one more peer (C4:4B:4D:00:00:05) on its own controller. It
connects, exchanges the MTU (not timed), then, timed: discovers all primary
services, the included services and characteristics of each, the descriptors
of each characteristic, reads every characteristic that has the Read property
(long reads with Read Blob) and every descriptor. It counts the ATT requests its
client sends in the timed part, then disconnects."""

from __future__ import annotations

import asyncio
import struct
import time

from bumble import att, gatt
from bumble.core import UUID, PhysicalTransport

from radio_peers import Peer

EXPLORER_ADDRESS = 'C4:4B:4D:00:00:05'
CONNECT_TIMEOUT = 5.0


class Explorer(Peer):
    def __init__(self, link, log) -> None:
        super().__init__('explorer', 'BareBLE-Explorer', EXPLORER_ADDRESS, link, log)
        self.started = False
        self.lock = asyncio.Lock()  # one exploration at a time (one pending connect)

    async def start(self) -> None:
        await self.device.power_on()
        self.started = True

    async def explore(self, target, mtu: int) -> dict:
        async with self.lock:
            return await self._explore(target, mtu)

    async def _explore(self, target, mtu: int) -> dict:
        if not self.started:
            await self.start()
        connection = await self.device.connect(target.address, transport=PhysicalTransport.LE,
                                               timeout=CONNECT_TIMEOUT)
        try:
            client = connection.gatt_client
            if mtu > att.ATT_DEFAULT_MTU:
                await client.request_mtu(mtu)
            requests = 0
            by_procedure = dict(services=0, includes=0, characteristics=0, descriptors=0, reads=0, other=0)
            send = client.send_gatt_pdu

            def counting_send(pdu: bytes) -> None:
                nonlocal requests
                requests += 1
                by_procedure[procedure(pdu)] += 1
                send(pdu)

            client.send_gatt_pdu = counting_send
            start = time.monotonic()
            services = await client.discover_services()
            included = characteristics = descriptors = reads = read_errors = value_bytes = 0
            for service in services:
                included += len(await discover_includes(client, service))
                await client.discover_characteristics([], service)
            for service in services:
                for characteristic in service.characteristics:
                    characteristics += 1
                    found = await client.discover_descriptors(characteristic)
                    descriptors += len(found)
                    targets = list(found)
                    if characteristic.properties & gatt.Characteristic.Properties.READ:
                        targets.insert(0, characteristic)
                    for attribute in targets:
                        try:
                            value_bytes += len(await client.read_value(attribute))
                            reads += 1
                        except att.ATT_Error:
                            read_errors += 1
            seconds = time.monotonic() - start
            client.send_gatt_pdu = send
            return dict(att_requests=requests, requests_by_procedure=by_procedure, seconds=round(seconds, 4), services=len(services),
                        included_services=included, characteristics=characteristics, descriptors=descriptors,
                        reads=reads, read_errors=read_errors, value_bytes=value_bytes, mtu=client.mtu)
        finally:
            if connection.handle in self.device.connections:
                await connection.disconnect()


def procedure(pdu: bytes) -> str:
    """The GATT procedure (Vol 3 Part G 4) an ATT request serves, as BareBLE's benchmark
    counts them."""
    opcode = pdu[0]
    if opcode in (att.Opcode.ATT_READ_BY_GROUP_TYPE_REQUEST, att.Opcode.ATT_FIND_BY_TYPE_VALUE_REQUEST):
        return 'services'
    if opcode == att.Opcode.ATT_READ_BY_TYPE_REQUEST and pdu[5:] == bytes([0x02, 0x28]):
        return 'includes'
    if opcode == att.Opcode.ATT_READ_BY_TYPE_REQUEST and pdu[5:] == bytes([0x03, 0x28]):
        return 'characteristics'
    if opcode == att.Opcode.ATT_FIND_INFORMATION_REQUEST:
        return 'descriptors'
    if opcode in (att.Opcode.ATT_READ_REQUEST, att.Opcode.ATT_READ_BLOB_REQUEST, att.Opcode.ATT_READ_BY_TYPE_REQUEST):
        return 'reads'
    return 'other'


async def discover_includes(client, service) -> list[tuple[int, int, int, UUID]]:
    """Find Included Services (Vol 3 Part G 4.5.1). Bumble's client cannot parse
    the declaration of an included 128-bit service (4 bytes, no UUID: the UUID
    is read from the service declaration), so this is done here, with one Read
    Request per such include as the spec says. Returns (declaration handle,
    start, end, UUID) per include."""
    found = []
    start = service.handle
    while start <= service.end_group_handle:
        response = await client.send_request(att.ATT_Read_By_Type_Request(
            starting_handle=start, ending_handle=service.end_group_handle,
            attribute_type=gatt.GATT_INCLUDE_ATTRIBUTE_TYPE))
        if response.op_code == att.Opcode.ATT_ERROR_RESPONSE or not response.attributes:
            break
        for handle, value in response.attributes:
            included_start, included_end = struct.unpack_from('<HH', value)
            if len(value) == 4:
                declaration = await client.send_request(att.ATT_Read_Request(attribute_handle=included_start))
                uuid = UUID.from_bytes(declaration.attribute_value)
            else:
                uuid = UUID.from_bytes(value[4:])
            found.append((handle, included_start, included_end, uuid))
        start = response.attributes[-1][0] + 1
    return found
