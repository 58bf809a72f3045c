"""The hostile peripheral: a Bumble GATT server that breaks the protocol on request.

Honest until told otherwise, so a test first sees a working peer. `hostile MODE...`
turns on misbehaviours that rewrite what Bumble's server answers (the request is
still handled by Bumble; only the bytes on the air change), `hostile none` turns
them off, and `hostile-flood KIND COUNT` pushes unsolicited PDUs at every link.
What each one provokes in a central is what the integration tests check
(HostilePeerVirtualRadioTests): a typed error, a count, never a crash or a hang.
"""

from __future__ import annotations

import struct

from bumble import att, gatt, smp

from radio_peers import READ, NOTIFY, READABLE, GattPeer, ad_structure, uuid16, uuid128
from bumble.device import AdvertisingType

HOSTILE_ADDRESS = 'C4:4B:4D:00:00:20'
HOSTILE_SERVICE = uuid128(0x0020)
HOSTILE_LONG_VALUE = uuid128(0x0021)   # read: 100 bytes, so a long read needs Read Blob
HOSTILE_NOTIFY_VALUE = uuid128(0x0022)  # read + notify
SIGNALING_CID = 0x0005

# Response opcodes the modes rewrite (Core 5.4 Vol 3 Part F 3.4).
EXCHANGE_MTU_RESPONSE = 0x03
READ_BY_TYPE_RESPONSE = 0x09
READ_RESPONSE = 0x0B
READ_BLOB_RESPONSE = 0x0D
READ_BY_GROUP_TYPE_RESPONSE = 0x11
READ_BY_TYPE_REQUEST = 0x08
READ_BY_GROUP_TYPE_REQUEST = 0x10
CHARACTERISTIC_DECLARATION = 0x2803

MODES = {
    # Read By Group Type lists services in reverse handle order (issue 14's crash).
    'services-reversed',
    # The first service's group claims every handle after it, overlapping the rest.
    'services-overlap',
    # The first service starts at handle 0x0000, which no attribute may have.
    'service-from-zero',
    # Characteristic declarations in reverse handle order.
    'characteristics-reversed',
    # Read By Group Type is answered with a Read By Type Response (a response to a
    # request that was not sent).
    'wrong-response',
    # Every Read and Read Blob Response is full (ATT_MTU - 1 bytes): a long read that
    # never ends on its own.
    'endless-blob',
    # Discovery responses lose their last byte: the entries no longer fit the length.
    'truncate',
    # Exchange MTU answers a Server Rx MTU of 5, below the least an LE bearer allows.
    'small-mtu',
    # Pairing Response with a maximum key size of 253 (SweynTooth's key size overflow).
    'smp-key-size',
}


class HostilePeripheral(GattPeer):
    def __init__(self, link, log) -> None:
        super().__init__('hostile', 'BareBLE-Hostile', HOSTILE_ADDRESS, link, log)
        self.device.add_services([
            gatt.Service(uuid16(0x180F), [
                gatt.Characteristic(uuid16(0x2A19), READ | NOTIFY, READABLE, bytes([50])),
            ]),
            gatt.Service(HOSTILE_SERVICE, [
                gatt.Characteristic(HOSTILE_LONG_VALUE, READ, READABLE, bytes(range(100))),
                gatt.Characteristic(HOSTILE_NOTIFY_VALUE, READ | NOTIFY, READABLE, bytes([0])),
            ]),
        ])
        self.modes: set[str] = set()
        # The request each response answers, per connection (responses carry no handle).
        self.last_request: dict[int, bytes] = {}
        self.mtu: dict[int, int] = {}
        self.advertising_data = ad_structure(0x01, bytes([0x06])) + ad_structure(0x09, b'BareBLE-Hostile')
        self.rewrite_server_output()
        self.intercept_requests()
        self.intercept_pairing()

    async def start(self) -> None:
        await self.device.power_on()
        await self.device.start_advertising(
            advertising_type=AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE,
            advertising_data=self.advertising_data,
            auto_restart=True,
        )

    # -- control -----------------------------------------------------------------
    def set_modes(self, names: list[str]) -> dict:
        chosen = set() if names == ['none'] else set(names)
        unknown = chosen - MODES
        if unknown:
            raise ValueError(f'unknown mode(s) {sorted(unknown)}; known: {sorted(MODES)} or none')
        self.modes = chosen
        return dict(modes=sorted(self.modes))

    def flood(self, kind: str, count: int) -> dict:
        """Unsolicited PDUs, as fast as the link takes them, to every connection."""
        changed = self.device.gatt_service.service_changed_characteristic.handle
        notify_handle = self.device.gatt_server.get_characteristic_attributes(
            HOSTILE_SERVICE, HOSTILE_NOTIFY_VALUE)[1].handle
        pdus = {
            # Each names the whole database as changed, none waits for a confirmation.
            'service-changed-indications': lambda i: struct.pack('<BHHH', 0x1D, changed, 0x0001, 0xFFFF),
            'service-changed-notifications': lambda i: struct.pack('<BHHH', 0x1B, changed, 0x0001, 0xFFFF),
            # Longer than any ATT_MTU the central can have agreed.
            'oversized-notifications': lambda i: struct.pack('<BH', 0x1B, notify_handle) + bytes(600),
            # Signaling commands no LE host knows (code 0x7F): each is answered with a
            # Command Reject.
            'signaling-unknown': lambda i: struct.pack('<BBH', 0x7F, i & 0xFF or 1, 0),
        }
        if kind not in pdus:
            raise ValueError(f'unknown flood {kind!r}; known: {sorted(pdus)}')
        cid = SIGNALING_CID if kind.startswith('signaling') else att.ATT_CID
        sent = 0
        for connection in list(self.device.connections.values()):
            for i in range(count):
                self.device.send_l2cap_pdu(connection.handle, cid, pdus[kind](i))
                sent += 1
        return dict(kind=kind, sent=sent)

    # -- rewriting ----------------------------------------------------------------
    def intercept_requests(self) -> None:
        manager = self.device.l2cap_channel_manager
        downstream = manager.fixed_channels[att.ATT_CID]

        def on_att_pdu(connection_handle: int, pdu: bytes) -> None:
            if pdu and not pdu[0] & 0x40:
                self.last_request[connection_handle] = pdu
            downstream(connection_handle, pdu)

        manager.register_fixed_channel(att.ATT_CID, on_att_pdu)

    def rewrite_server_output(self) -> None:
        server = self.device.gatt_server
        send = server.send_gatt_pdu

        def send_gatt_pdu(bearer, pdu: bytes) -> None:
            send(bearer, self.rewrite(bearer.handle, bearer.att_mtu, pdu))

        server.send_gatt_pdu = send_gatt_pdu

    def rewrite(self, handle: int, mtu: int, pdu: bytes) -> bytes:
        if not self.modes or not pdu:
            return pdu
        opcode = pdu[0]
        request = self.last_request.get(handle, b'')
        if opcode == EXCHANGE_MTU_RESPONSE and 'small-mtu' in self.modes:
            return struct.pack('<BH', EXCHANGE_MTU_RESPONSE, 5)
        if opcode == READ_BY_GROUP_TYPE_RESPONSE and len(pdu) > 2:
            if 'wrong-response' in self.modes:
                return bytes([READ_BY_TYPE_RESPONSE]) + pdu[1:]
            pdu = self.rewrite_entries(pdu, groups=True)
        elif (opcode == READ_BY_TYPE_RESPONSE and len(pdu) > 2 and request[:1] == bytes([READ_BY_TYPE_REQUEST])
              and request[-2:] == struct.pack('<H', CHARACTERISTIC_DECLARATION)):
            pdu = self.rewrite_entries(pdu, groups=False)
        elif opcode in (READ_RESPONSE, READ_BLOB_RESPONSE) and 'endless-blob' in self.modes:
            body = pdu[1:]
            pdu = bytes([opcode]) + (body + bytes(mtu))[:mtu - 1]
        if 'truncate' in self.modes and opcode in (READ_BY_GROUP_TYPE_RESPONSE, READ_BY_TYPE_RESPONSE, 0x05):
            pdu = pdu[:-1]
        return pdu

    def rewrite_entries(self, pdu: bytes, groups: bool) -> bytes:
        length = pdu[1]
        entries = [bytearray(pdu[i:i + length]) for i in range(2, len(pdu) - length + 1, length)]
        if groups and 'services-overlap' in self.modes and len(entries) > 1:
            entries[0][2:4] = struct.pack('<H', 0xFFFF)
        if groups and 'service-from-zero' in self.modes:
            entries[0][0:2] = struct.pack('<H', 0x0000)
        if (groups and 'services-reversed' in self.modes) or (not groups and 'characteristics-reversed' in self.modes):
            entries.reverse()
        return pdu[:2] + b''.join(bytes(entry) for entry in entries)

    def intercept_pairing(self) -> None:
        manager = self.device.l2cap_channel_manager
        downstream = manager.fixed_channels[smp.SMP_CID]

        def on_smp_pdu(connection_handle: int, pdu: bytes) -> None:
            if 'smp-key-size' in self.modes and pdu[:1] == bytes([smp.CommandCode.PAIRING_REQUEST]):
                # IO NoInputNoOutput, no OOB, bonding + SC, max key size 253, keys: ID.
                response = bytes([smp.CommandCode.PAIRING_RESPONSE, 0x03, 0x00, 0x09, 253, 0x02, 0x02])
                self.device.send_l2cap_pdu(connection_handle, smp.SMP_CID, response)
                return
            downstream(connection_handle, pdu)

        manager.register_fixed_channel(smp.SMP_CID, on_smp_pdu)
