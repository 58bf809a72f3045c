"""GATT centrals: Bumble devices that connect to an exposed controller's connectable
advertising (BareBLE as peripheral), pair, exchange the MTU, explore its GATT server and
read, write and subscribe. Several at once (`add-central`, then `central NAME ACTION`).

Each central is a Peer on its own controller (C4:4B:4D:00:02:NN, random static, also its
SMP identity) with its own pairing settings (`pairing centralN ...`), its own in-memory
bonds and its own ATT server MTU (what BareBLE's own Exchange MTU gets back). It can
reconnect from a resolvable private address of its IRK (`connect ... rpa`), as a bonded
phone does, and then encrypt with the bond (`encrypt`) instead of pairing."""

from __future__ import annotations

import asyncio
import logging

from bumble import att, gatt, hci
from cryptography.hazmat.primitives.ciphers import algorithms
from cryptography.hazmat.primitives.cmac import CMAC
from bumble.core import UUID, PhysicalTransport
from bumble.device import Peer as BumblePeer

from radio_controller import RadioController
from radio_gatt import uuid_text
from radio_peers import Peer

logger = logging.getLogger(__name__)

GATT_CENTRAL_ADDRESS_PREFIX = 'C4:4B:4D:00:02'
CONNECT_TIMEOUT = 30.0  # generous: CI runs the radio beside a loaded test pool
# Below BareBLE's 30 s ATT transaction timeout, so a refusal is reported before the test gives up.
REQUEST_TIMEOUT = 25.0
SCAN_TIMEOUT = 30.0
# What a server answers a request with (Vol 3 Part F 3.4.8); `exchange` collects these.
COMMAND_FLAG = 0x40
HANDLE_VALUE_CONFIRMATION = 0x1E
MULTIPLE_HANDLE_VALUE_NOTIFICATION = 0x23
SIGNED_WRITE_COMMAND = 0xD2
# An LE signaling command no host knows (Vol 3 Part A 4), and its identifier: its Command
# Reject (4.1) comes back after everything sent before it on the link was received.
FENCE_PROBE_CODE = 0x7F
FENCE_IDENTIFIER = 0xF7
RESPONSE_OPCODES = {0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x21}
_CPR = hci.LeFeatureMask.CONNECTION_PARAMETERS_REQUEST_PROCEDURE


def sign_data(csrk: bytes, data: bytes, counter: int) -> bytes:
    """The Authentication Signature of `data` (Core 5.4 Vol 3 Part H 2.4.5): AES-CMAC under
    the CSRK of data || SignCounter, both as numbers whose most significant octet is the
    last on the air; SignCounter then the tag's 64 most significant bits, little-endian."""
    message = data + counter.to_bytes(4, 'little')
    mac = CMAC(algorithms.AES(bytes(reversed(csrk))))
    mac.update(bytes(reversed(message)))
    tag = mac.finalize()
    return counter.to_bytes(4, 'little') + bytes(reversed(tag[:8]))


class WithoutParametersRequest(RadioController):
    """A link layer without the Connection Parameters Request procedure (Core Vol 6 Part B
    5.1.7): a peripheral must ask with L2CAP instead. A class default, since HCI Reset
    restores those."""
    le_features = hci.LeFeatureMask(RadioController.le_features & ~_CPR)


class GattCentral(Peer):
    def __init__(self, index: int, link, log, server_mtu: int, parameters_request: bool) -> None:
        super().__init__(f'central{index}', f'BareBLE-GATT-Central-{index}',
                         f'{GATT_CENTRAL_ADDRESS_PREFIX}:{index:02X}', link, log,
                         controller_class=RadioController if parameters_request else WithoutParametersRequest)
        self.device.gatt_server.max_mtu = server_mtu
        self.connection = None
        self.peer = None
        self.powered: asyncio.Future | None = None
        # `exchange` takes the server's responses off the ATT channel before Bumble's client,
        # which would drop them (it sent no request) or match them to its own.
        manager = self.device.l2cap_channel_manager
        self.att_downstream = manager.fixed_channels[att.ATT_CID]
        manager.register_fixed_channel(att.ATT_CID, self.on_att_pdu)
        self.responses: asyncio.Queue | None = None
        # `exchange ... fence`: the Command Reject that answers our unknown signaling probe.
        self.fence: asyncio.Future | None = None
        on_control_frame = manager.on_control_frame

        def on_signaling(connection, cid: int, frame) -> None:
            if self.fence is not None and frame.code == 0x01 and frame.identifier == FENCE_IDENTIFIER:
                if not self.fence.done():
                    self.fence.set_result(True)
                return
            on_control_frame(connection, cid, frame)

        manager.on_control_frame = on_signaling

    def on_att_pdu(self, connection_handle: int, pdu: bytes) -> None:
        if self.responses is not None and pdu and pdu[0] in RESPONSE_OPCODES:
            self.responses.put_nowait(bytes(pdu))
            return
        if pdu and pdu[0] == MULTIPLE_HANDLE_VALUE_NOTIFICATION:
            # Bumble 0.0.236 has no decoder for it: decoded here (Core 5.4 Vol 3 Part F
            # 3.4.7.4), each value logged in order; `malformed` when a Length overruns.
            values, offset = [], 1
            while offset + 4 <= len(pdu):
                handle, length = int.from_bytes(pdu[offset:offset + 2], 'little'), int.from_bytes(pdu[offset + 2:offset + 4], 'little')
                values.append(dict(handle=handle, value=bytes(pdu[offset + 4:offset + 4 + length]).hex()))
                offset += 4 + length
            self.log(event='multiple-notification', peer=self.name, values=values, malformed=offset != len(pdu))
            return
        self.att_downstream(connection_handle, pdu)

    async def start(self) -> None:
        await self.device.power_on()

    def on_connection(self, connection) -> None:
        super().on_connection(connection)

        def on_parameters() -> None:
            parameters = connection.parameters
            self.log(event='connection-parameters', peer=self.name, address=str(connection.peer_address),
                     interval=parameters.connection_interval, latency=parameters.peripheral_latency,
                     timeout=parameters.supervision_timeout)

        def on_mtu() -> None:
            self.log(event='mtu', peer=self.name, address=str(connection.peer_address), mtu=connection.att_mtu)

        connection.on(connection.EVENT_CONNECTION_PARAMETERS_UPDATE, on_parameters)
        connection.on(connection.EVENT_CONNECTION_ATT_MTU_UPDATE, on_mtu)

    # -- actions (`central NAME ACTION ...`) ------------------------------------------
    def live(self):
        if self.connection is None or self.connection.handle not in self.device.connections:
            raise ValueError(f'{self.name} is not connected')
        return self.connection

    async def find(self, name: str) -> hci.Address:
        found = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement) -> None:
            data = advertisement.data
            heard = data.get(data.COMPLETE_LOCAL_NAME) or data.get(data.SHORTENED_LOCAL_NAME)
            if isinstance(heard, bytes):
                heard = heard.decode(errors='replace')
            if heard == name and advertisement.is_connectable and not found.done():
                found.set_result(advertisement.address)

        self.device.on(self.device.EVENT_ADVERTISEMENT, on_advertisement)
        await self.device.start_scanning(active=True)
        try:
            return await asyncio.wait_for(found, SCAN_TIMEOUT)
        finally:
            self.device.remove_listener(self.device.EVENT_ADVERTISEMENT, on_advertisement)
            await self.device.stop_scanning()

    async def action_connect(self, target: str, *options: str) -> dict:
        """TARGET: an address (public unless `random` is given) or `name=LOCAL_NAME`, found
        by an active scan. Options: `mtu=N` (Exchange MTU after connecting), `rpa`
        (connect from a fresh resolvable private address of our IRK), `random`."""
        settings = dict(option.partition('=')[::2] for option in options)
        if self.powered is not None:
            await self.powered
        if target.startswith('name='):
            address = await self.find(target[5:])
        else:
            kind = hci.Address.RANDOM_DEVICE_ADDRESS if 'random' in settings else hci.Address.PUBLIC_DEVICE_ADDRESS
            address = hci.Address(target, kind)
        own = self.device.static_address
        if 'rpa' in settings:
            own = hci.Address.generate_private_address(self.device.irk)
        await self.device.send_command(hci.HCI_LE_Set_Random_Address_Command(random_address=own))
        self.device.random_address = own
        connection = await self.device.connect(address, transport=PhysicalTransport.LE,
                                               own_address_type=hci.OwnAddressType.RANDOM,
                                               timeout=CONNECT_TIMEOUT)
        self.connection = connection
        self.peer = BumblePeer(connection)
        result = dict(handle=connection.handle, address=str(address), own_address=own.to_string(False))
        if 'mtu' in settings:
            result.update(await self.action_mtu(settings['mtu']))
        return result

    async def action_mtu(self, mtu: str) -> dict:
        try:
            agreed = await asyncio.wait_for(self.peer.request_mtu(int(mtu, 0)), REQUEST_TIMEOUT)
        except Exception as error:  # an absent or slow server is reported, not fatal
            return dict(mtu_error=type(error).__name__ + ': ' + str(error))
        return dict(mtu=agreed)

    async def action_pair(self) -> dict:
        connection = self.live()
        try:
            await asyncio.wait_for(connection.pair(), timeout=90)  # passkey entry is 20 round trips; CI loads the pool
        except Exception as error:  # the event log has the reason; the ack says it failed
            return dict(paired=False, error=type(error).__name__ + ': ' + str(error))
        return dict(paired=True, encrypted=bool(connection.encryption))

    async def action_encrypt(self) -> dict:
        connection = self.live()
        try:
            await asyncio.wait_for(connection.encrypt(), timeout=10)
        except Exception as error:
            return dict(encrypted=False, error=type(error).__name__ + ': ' + str(error))
        return dict(encrypted=bool(connection.encryption))

    async def action_disconnect(self) -> dict:
        connection = self.live()
        await connection.disconnect()
        return dict(handle=connection.handle)

    async def action_att(self, hex_pdu: str) -> dict:
        """Sends raw ATT PDU bytes on the fixed channel (no response expected)."""
        connection = self.live()
        self.device.send_l2cap_pdu(connection.handle, att.ATT_CID, bytes.fromhex(hex_pdu))
        return dict(length=len(hex_pdu) // 2)

    async def action_exchange(self, pdus: str, *options: str) -> dict:
        """Sends raw ATT PDUs on CID 4 as a hostile client would: back to back, without
        waiting for any answer (pipelined requests, floods), then collects the server's
        responses until `expect=N` (default 1) have come, the link drops, or `timeout=SECONDS`
        (default REQUEST_TIMEOUT) passes: each wait below has that deadline. With `step`, each request (no Command Flag, even opcode, not a confirmation)
        waits for its response before the next PDU goes (`expect` is then not used). With
        `fence`, an unknown LE signaling command follows the PDUs and its Command Reject is
        waited for: the server has then received every PDU sent before it (one ACL link
        keeps order), which a flood with `expect=0` needs to know.
        PDUS: comma-separated `HEX` or `HEX*COUNT`. Ack: `sent`, `received` (response PDUs,
        hex, in order), and `disconnected` (the HCI reason) when the link dropped."""
        connection = self.live()
        settings = dict(option.partition('=')[::2] for option in options)
        step = 'step' in settings
        expect = int(settings.get('expect', '1'), 0)
        timeout = float(settings.get('timeout', REQUEST_TIMEOUT))
        plan = []
        for item in pdus.split(','):
            hex_pdu, _, count = item.partition('*')
            plan.append((bytes.fromhex(hex_pdu), int(count or '1', 0)))
        loop = asyncio.get_running_loop()
        dropped = loop.create_future()

        def on_disconnection(reason) -> None:
            if not dropped.done():
                dropped.set_result(int(reason))

        async def collect(count: int) -> None:
            deadline = loop.time() + timeout
            wanted = len(received) + count
            while len(received) < wanted and not dropped.done() and loop.time() < deadline:
                answer = asyncio.ensure_future(self.responses.get())
                await asyncio.wait({answer, dropped}, timeout=deadline - loop.time(),
                                   return_when=asyncio.FIRST_COMPLETED)
                if answer.done():
                    received.append(answer.result().hex())
                else:
                    answer.cancel()

        connection.on(connection.EVENT_DISCONNECTION, on_disconnection)
        self.responses = asyncio.Queue()
        received: list[str] = []
        sent = 0
        fenced = False
        try:
            for pdu, count in plan:
                for _ in range(count):
                    if dropped.done():
                        break
                    self.device.send_l2cap_pdu(connection.handle, att.ATT_CID, pdu)
                    sent += 1
                    opcode = pdu[0] if pdu else COMMAND_FLAG
                    if step and not opcode & (COMMAND_FLAG | 1) and opcode != HANDLE_VALUE_CONFIRMATION:
                        await collect(1)
            # Every PDU handed to the central's controller and sent on (its Number Of
            # Completed Packets come after the link has taken each one), so that `expect=0`
            # acks a flood only once it is on its way to the exposed controller.
            # The host forgets the connection as soon as the link drops, which may be before
            # the disconnection event reaches `dropped`.
            host_connection = self.device.host.connections.get(connection.handle)
            if host_connection is not None:
                drained = asyncio.ensure_future(host_connection.acl_packet_queue.drain(connection.handle))
                await asyncio.wait({drained, dropped}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                drained.cancel()
            elif not dropped.done():
                await asyncio.wait({dropped}, timeout=timeout)
            if 'fence' in settings and not dropped.done():
                self.fence = loop.create_future()
                self.device.send_l2cap_pdu(connection.handle, 0x0005, bytes([FENCE_PROBE_CODE, FENCE_IDENTIFIER, 0, 0]))
                await asyncio.wait({self.fence, dropped}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                fenced = self.fence.done()
            if not step:
                await collect(expect)
            while not self.responses.empty():  # already here when the link dropped
                received.append(self.responses.get_nowait().hex())
        finally:
            self.responses = None
            self.fence = None
            connection.remove_listener(connection.EVENT_DISCONNECTION, on_disconnection)
        result = dict(sent=sent, received=received)
        if 'fence' in settings:
            result['fenced'] = fenced
        if dropped.done():
            result['disconnected'] = dropped.result()
        return result

    async def action_signed_write(self, handle: str, hex_value: str, *options: str) -> dict:
        """Sends a Signed Write Command (Core 5.4 Vol 3 Part F 3.4.5.4) signed with the CSRK
        this central distributed when it paired (Vol 3 Part H 2.4.5, computed here with the
        `cryptography` package's AES-CMAC, independently of BareBLE). Options: `counter=N`
        (default: one past the last one used), `tamper` (flip a bit of the MAC). Ack:
        `counter` and the `pdu` sent, hex."""
        connection = self.live()
        settings = dict(option.partition('=')[::2] for option in options)
        control = self.device.bareble_pairing_control
        counter = int(settings['counter'], 0) if 'counter' in settings else control.sign_counter
        control.sign_counter = counter + 1
        data = bytes([SIGNED_WRITE_COMMAND]) + int(handle, 0).to_bytes(2, 'little') + bytes.fromhex(hex_value)
        signature = sign_data(control.csrk, data, counter)
        if 'tamper' in settings:
            signature = signature[:-1] + bytes([signature[-1] ^ 0x01])
        pdu = data + signature
        self.device.send_l2cap_pdu(connection.handle, att.ATT_CID, pdu)
        return dict(counter=counter, pdu=pdu.hex())

    async def action_request(self, hex_pdu: str) -> dict:
        """Sends one raw ATT request through Bumble's GATT client (its one-at-a-time rule
        and timeout) and returns the response PDU: what a test needs for procedures
        Bumble's client has no call for (Read Multiple Variable, robust caching)."""
        self.live()
        request = att.ATT_PDU.from_bytes(bytes.fromhex(hex_pdu))
        response = await asyncio.wait_for(self.peer.gatt_client.send_request(request), REQUEST_TIMEOUT)
        return dict(response=bytes(response).hex(), name=type(response).__name__)

    async def action_discover(self) -> dict:
        """Bumble's GATT discovery; the result is logged as a `gatt-discovered` event."""
        self.live()
        peer = self.peer
        services = []
        await asyncio.wait_for(peer.discover_services(), REQUEST_TIMEOUT)
        for service in peer.services:
            await asyncio.wait_for(peer.discover_characteristics(service=service), REQUEST_TIMEOUT)
        for service in peer.services:
            characteristics = []
            for characteristic in service.characteristics:
                descriptors = []
                for descriptor in await asyncio.wait_for(peer.discover_descriptors(characteristic), REQUEST_TIMEOUT):
                    descriptors.append(dict(handle=descriptor.handle, uuid=uuid_text(descriptor.type),
                                            value=await self.readable(descriptor)))
                readable = characteristic.properties & gatt.Characteristic.Properties.READ
                characteristics.append(dict(
                    value_handle=characteristic.handle, end=characteristic.end_group_handle,
                    uuid=uuid_text(characteristic.uuid),
                    properties=int(characteristic.properties),
                    value=await self.readable(characteristic) if readable else None,
                    descriptors=descriptors))
            services.append(dict(handle=service.handle, end=service.end_group_handle, uuid=uuid_text(service.uuid),
                                 characteristics=characteristics))
        self.log(event='gatt-discovered', peer=self.name, services=services)
        return dict(services=len(services), characteristics=sum(len(s['characteristics']) for s in services))

    async def readable(self, attribute) -> str | dict:
        try:
            return (await asyncio.wait_for(self.peer.read_value(attribute), REQUEST_TIMEOUT)).hex()
        except att.ATT_Error as error:
            return dict(error=int(error.error_code))

    async def action_read(self, handle: str) -> dict:
        self.live()
        try:
            value = await asyncio.wait_for(self.peer.read_value(int(handle, 0)), REQUEST_TIMEOUT)
        except att.ATT_Error as error:
            return dict(error=int(error.error_code))
        return dict(value=value.hex())

    async def action_write(self, handle: str, hex_value: str, *flags: str) -> dict:
        self.live()
        with_response = 'command' not in flags
        try:
            await asyncio.wait_for(self.peer.write_value(int(handle, 0), bytes.fromhex(hex_value), with_response),
                                   REQUEST_TIMEOUT)
        except att.ATT_Error as error:
            return dict(error=int(error.error_code))
        return dict(written=True, with_response=with_response)

    async def action_subscribe(self, uuid: str, *flags: str) -> dict:
        """Subscribes to the (discovered) characteristic UUID; each value it sends is logged
        as a `notification` event."""
        self.live()
        matches = self.peer.get_characteristics_by_uuid(UUID(uuid))
        if not matches:
            raise ValueError(f'no discovered characteristic {uuid}: run discover first')
        characteristic = matches[0]

        def on_value(value: bytes) -> None:
            self.log(event='notification', peer=self.name, uuid=uuid_text(characteristic.uuid),
                     handle=characteristic.handle, value=value.hex())

        await asyncio.wait_for(self.peer.subscribe(characteristic, on_value, prefer_notify='indicate' not in flags),
                               REQUEST_TIMEOUT)
        return dict(handle=characteristic.handle)
