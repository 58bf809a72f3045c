"""GATT on the peers: what the peers' ATT servers log, the corrections made in
front of Bumble's GATT server, the database dump, and the control actions
(notify, indicate, set-value, add-service).

Everything here hooks Bumble's server at the L2CAP fixed-channel level (the ATT
channel handler), so it sees every PDU a client sends, even one Bumble cannot
parse, before Bumble's GATT server does.
"""

from __future__ import annotations

import asyncio
import struct
from types import SimpleNamespace

from bumble import att, gatt
from bumble.keys import MemoryKeyStore

UUID = gatt.UUID
Permissions = att.Attribute.Permissions
Properties = gatt.Characteristic.Properties

# ATT opcodes (Vol 3 Part F 3.4.8).
ERROR_RESPONSE = 0x01
EXCHANGE_MTU = 0x02
READ = 0x0A
READ_BLOB = 0x0C
READ_MULTIPLE = 0x0E
WRITE_REQUEST = 0x12
PREPARE_WRITE = 0x16
EXECUTE_WRITE = 0x18
HANDLE_VALUE_INDICATION = 0x1D
HANDLE_VALUE_CONFIRMATION = 0x1E
READ_MULTIPLE_VARIABLE = 0x20
WRITE_COMMAND = 0x52
KNOWN_CLIENT_OPCODES = {0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E, 0x10, 0x12, 0x16, 0x18, 0x1E, 0x20, 0x52, 0xD2}
# What a server sends (responses, notifications, indications): for a peer that is also a
# GATT client (the emulated iPhone), they go to Bumble's client untouched.
SERVER_OPCODES = {0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x1B, 0x1D, 0x21, 0x23}
COMMAND_FLAG = 0x40

# ATT error codes.
INVALID_HANDLE = 0x01
READ_NOT_PERMITTED = 0x02
WRITE_NOT_PERMITTED = 0x03
INVALID_PDU = 0x04
INSUFFICIENT_AUTHENTICATION = 0x05
REQUEST_NOT_SUPPORTED = 0x06
INVALID_ATTRIBUTE_LENGTH = 0x0D
INSUFFICIENT_ENCRYPTION = 0x0F
MAX_ATTRIBUTE_LENGTH = 512
MAX_PREPARED_WRITES = 64  # Bumble's queue limit (GATT_SERVER_MAX_PREPARED_WRITES)

INDICATION_TIMEOUT = 5.0  # seconds an `indicate` control line waits for confirmations
CCCD = gatt.GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR


def uuid_text(uuid: UUID) -> str:
    """'2A37' for a 16-bit UUID, 'B4AE0001-7E57-4BA2-B1E0-00000000C0DE' for a
    128-bit one (uppercase, dashed): the form every GATT event uses."""
    if len(uuid.uuid_bytes) == 2:
        return uuid.to_hex_str()
    h = uuid.to_hex_str()
    if len(h) != 32:  # 32-bit UUID
        return h
    return f'{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}'


def parse_uuid(text: str) -> UUID:
    text = text.strip()
    if len(text) <= 6 and not text.upper().startswith('UUID'):
        return UUID.from_16_bits(int(text, 16))
    return UUID(text)


def flag_names(flags, enum_type) -> list[str]:
    return [member.name for member in enum_type if member.value and int(flags) & member.value == member.value]


class SecureCharacteristic(gatt.Characteristic):
    """A characteristic whose unencrypted read fails the way the spec says
    (Vol 3 Part C 10.3.2): Insufficient Authentication (0x05) when the server has
    no key for the client, Insufficient Encryption (0x0F) when it has one but the
    link is not encrypted. Bumble always answers 0x0F."""

    async def read_value(self, bearer):
        connection = bearer.connection if att.is_enhanced_bearer(bearer) else bearer
        error = security_error(self, connection, self.permissions & Permissions.READ_REQUIRES_ENCRYPTION)
        if error:
            raise att.ATT_Error(error_code=error, att_handle=self.handle)
        return await super().read_value(bearer)


def security_error(attribute, connection, requires_encryption) -> int:
    if not requires_encryption or connection is None or connection.encryption:
        return 0
    # A bond is known by the address the client had when it paired (Bumble may
    # store the keys under another identity, see testbed.md) or by its keys.
    address = str(connection.peer_address)
    keystore = connection.device.keystore
    bonded = (address in getattr(connection.device, 'paired_addresses', ())
              or isinstance(keystore, MemoryKeyStore) and address in keystore.all_keys)
    return INSUFFICIENT_ENCRYPTION if bonded else INSUFFICIENT_AUTHENTICATION


class GattObserver:
    """Attached to one peer: logs ATT traffic and writes, corrects Bumble's
    server where it answers wrongly or not at all, runs the control actions."""

    def __init__(self, peer) -> None:
        self.peer = peer
        self.device = peer.device
        self.server = self.device.gatt_server
        self.requests_by_connection: dict[int, int] = {}  # peer-side handle -> ATT PDUs received
        self.prepared: dict[int, list[tuple[int, int, bytes]]] = {}
        self.last_indication: dict[int, int] = {}  # connection handle -> attribute handle
        manager = self.device.l2cap_channel_manager
        self.downstream = manager.fixed_channels[att.ATT_CID]
        manager.register_fixed_channel(att.ATT_CID, self.on_att_pdu)
        bumble_send = self.server.send_gatt_pdu

        def send_gatt_pdu(bearer, pdu: bytes) -> None:
            if pdu[:1] == bytes([HANDLE_VALUE_INDICATION]) and not att.is_enhanced_bearer(bearer):
                self.last_indication[bearer.handle] = struct.unpack_from('<H', pdu, 1)[0]
            bumble_send(bearer, pdu)

        self.server.send_gatt_pdu = send_gatt_pdu
        self.server.on('characteristic_subscription', self.on_subscription)
        self.device.paired_addresses = set()
        self.device.on('connection', self.on_connection)

    def on_connection(self, connection) -> None:
        address = str(connection.peer_address)  # Bumble replaces it with the identity on pairing

        def on_pairing(_keys) -> None:
            self.device.paired_addresses.add(address)
            self.log(event='paired', peer=self.peer.name, address=address, identity=str(connection.peer_address))

        connection.on('pairing', on_pairing)

    def log(self, **event) -> None:
        self.peer.log(**event)

    # -- the ATT channel -------------------------------------------------------
    def on_att_pdu(self, connection_handle: int, pdu: bytes) -> None:
        connection = self.device.lookup_connection(connection_handle)
        if not pdu or connection is None:
            return
        opcode = pdu[0]
        if opcode in SERVER_OPCODES:
            self.downstream(connection_handle, pdu)
            return
        self.requests_by_connection[connection_handle] = self.requests_by_connection.get(connection_handle, 0) + 1
        self.log(event='att-request', peer=self.peer.name, opcode=opcode, length=len(pdu),
                 connection=connection_handle, address=str(connection.peer_address))
        is_request = not opcode & COMMAND_FLAG and opcode != HANDLE_VALUE_CONFIRMATION and not opcode & 1
        try:
            if opcode not in KNOWN_CLIENT_OPCODES:
                # Bumble ignores unknown opcodes; a request must still be answered.
                if is_request:
                    self.error(connection, opcode, 0, REQUEST_NOT_SUPPORTED)
                return
            if self.precheck(connection, opcode, pdu):
                return
            if opcode == HANDLE_VALUE_CONFIRMATION:
                handle = self.last_indication.pop(connection_handle, None)
                attribute = self.server.get_attribute(handle) if handle else None
                self.log(event='indication-confirmed', peer=self.peer.name, handle=handle,
                         uuid=uuid_text(attribute.type) if attribute else None,
                         connection=connection_handle, address=str(connection.peer_address))
            self.downstream(connection_handle, pdu)
        except Exception as failure:  # a PDU Bumble cannot parse: answer instead of raising
            if is_request:
                self.error(connection, opcode, 0, INVALID_PDU)
            self.peer.log(event='att-invalid', peer=self.peer.name, opcode=opcode, pdu=pdu.hex(),
                          message=str(failure))

    def error(self, connection, opcode: int, handle: int, code: int) -> None:
        response = att.ATT_Error_Response(request_opcode_in_error=opcode, attribute_handle_in_error=handle,
                                          error_code=code)
        self.server.send_response(connection, response)

    def precheck(self, connection, opcode: int, pdu: bytes) -> bool:
        """Answers what Bumble's server gets wrong; True when answered here.
        Bumble never checks READABLE/WRITEABLE (a write to a read-only value or a
        declaration overwrites it), and a Read Multiple naming a protected handle
        gets no answer at all. Also logs accepted writes."""
        if opcode in (READ, READ_BLOB):
            handle = struct.unpack_from('<H', pdu, 1)[0]
            return self.check_read(connection, opcode, [handle])
        if opcode in (READ_MULTIPLE, READ_MULTIPLE_VARIABLE):
            if len(pdu) < 5 or (len(pdu) - 1) % 2:
                raise ValueError('Read Multiple needs at least two handles')
            handles = list(struct.unpack_from(f'<{(len(pdu) - 1) // 2}H', pdu, 1))
            return self.check_read(connection, opcode, handles)
        if opcode in (WRITE_REQUEST, WRITE_COMMAND, PREPARE_WRITE):
            handle = struct.unpack_from('<H', pdu, 1)[0]
            value = pdu[5:] if opcode == PREPARE_WRITE else pdu[3:]
            attribute = self.server.get_attribute(handle)
            if attribute is None:
                return False  # Bumble answers Invalid Handle (or drops a command)
            if opcode == WRITE_COMMAND and not (isinstance(attribute, gatt.Characteristic)
                                                and attribute.properties & Properties.WRITE_WITHOUT_RESPONSE):
                # Write Without Response is for values that offer it (Vol 3 Part G 4.9.1);
                # descriptors take Write Requests only (4.12.3). Bumble would write.
                return True
            code = 0
            if not attribute.permissions & Permissions.WRITEABLE:
                code = WRITE_NOT_PERMITTED
            else:
                code = security_error(attribute, connection, attribute.permissions & Permissions.WRITE_REQUIRES_ENCRYPTION)
            if code:
                if opcode != WRITE_COMMAND:
                    self.error(connection, opcode, handle, code)
                return True
            if opcode == PREPARE_WRITE:
                offset = struct.unpack_from('<H', pdu, 3)[0]
                queue = self.prepared.setdefault(connection.handle, [])
                if len(queue) < MAX_PREPARED_WRITES:
                    queue.append((handle, offset, value))
                return False
            if len(value) <= MAX_ATTRIBUTE_LENGTH:
                self.log_write(connection, attribute, value, opcode == WRITE_REQUEST)
            return False
        if opcode == EXECUTE_WRITE:
            queue = self.prepared.pop(connection.handle, [])
            if pdu[1:2] != b'\x01':
                return False
            values: dict[int, bytearray] = {}
            for handle, offset, part in queue:
                buffer = values.setdefault(handle, bytearray())
                if offset > len(buffer):
                    return False  # Bumble refuses the whole execute: nothing written
                buffer[offset : offset + len(part)] = part
                if len(buffer) > MAX_ATTRIBUTE_LENGTH:
                    return False
            for handle, value in values.items():
                self.log_write(connection, self.server.get_attribute(handle), bytes(value), True, prepared=True)
        return False

    def check_read(self, connection, opcode: int, handles: list[int]) -> bool:
        for handle in handles:
            attribute = self.server.get_attribute(handle)
            if attribute is None:
                code = INVALID_HANDLE
            elif not attribute.permissions & Permissions.READABLE:
                code = READ_NOT_PERMITTED
            else:
                code = security_error(attribute, connection, attribute.permissions & Permissions.READ_REQUIRES_ENCRYPTION)
            if code:
                self.error(connection, opcode, handle, code)
                return True
        return False

    def log_write(self, connection, attribute, value: bytes, with_response: bool, prepared: bool = False) -> None:
        event = dict(event='gatt-write', peer=self.peer.name, handle=attribute.handle, uuid=uuid_text(attribute.type),
                     value=value.hex(), with_response=with_response)
        if prepared:
            event['prepared'] = True
        event['address'] = str(connection.peer_address)
        self.log(**event)

    def on_subscription(self, bearer, characteristic, notify: bool, indicate: bool) -> None:
        cccd = 'notify+indicate' if notify and indicate else 'notify' if notify else 'indicate' if indicate else 'none'
        connection = bearer.connection if att.is_enhanced_bearer(bearer) else bearer
        # `uuid` keeps Bumble's string (the event predates this module); `characteristic`
        # is the UUID in the form every other GATT event uses.
        self.log(event='subscription', peer=self.peer.name, uuid=str(characteristic.uuid),
                 notify=notify, indicate=indicate, cccd=cccd, characteristic=uuid_text(characteristic.uuid),
                 handle=characteristic.handle, address=str(connection.peer_address))

    # -- database ----------------------------------------------------------------
    def characteristic(self, uuid_string: str) -> gatt.Characteristic:
        uuid = parse_uuid(uuid_string)
        for attribute in self.server.attributes:
            if isinstance(attribute, gatt.Characteristic) and attribute.uuid == uuid:
                return attribute
        raise ValueError(f'no characteristic {uuid_string} on {self.peer.name}')

    def database_hash(self) -> str | None:
        service = self.device.gatt_service
        if service is None or service.database_hash_characteristic is None:
            return None
        return service.get_database_hash(SimpleNamespace(device=self.device)).hex()

    def describe(self) -> dict:
        """The database as a JSON-able dict (format in README.md)."""
        services = []
        current_service = current_characteristic = None
        for attribute in self.server.attributes:
            if isinstance(attribute, gatt.Service):
                current_service = dict(handle=attribute.handle, end=attribute.end_group_handle,
                                       uuid=uuid_text(attribute.uuid), primary=attribute.primary,
                                       includes=[], characteristics=[])
                services.append(current_service)
                current_characteristic = None
            elif isinstance(attribute, gatt.IncludedServiceDeclaration):
                included = attribute.service
                current_service['includes'].append(dict(handle=attribute.handle, start=included.handle,
                                                        end=included.end_group_handle, uuid=uuid_text(included.uuid)))
            elif isinstance(attribute, gatt.CharacteristicDeclaration):
                characteristic = attribute.characteristic
                current_characteristic = dict(
                    handle=attribute.handle, value_handle=characteristic.handle, end=characteristic.end_group_handle,
                    uuid=uuid_text(characteristic.uuid), properties=int(characteristic.properties),
                    property_names=flag_names(characteristic.properties, Properties),
                    permissions=flag_names(characteristic.permissions, Permissions),
                    value=static_value(characteristic), descriptors=[])
                current_service['characteristics'].append(current_characteristic)
            elif isinstance(attribute, gatt.Characteristic):
                pass  # described with its declaration
            elif current_characteristic is not None:
                current_characteristic['descriptors'].append(dict(
                    handle=attribute.handle, uuid=uuid_text(attribute.type),
                    permissions=flag_names(attribute.permissions, Permissions), value=static_value(attribute)))
        return dict(database_hash=self.database_hash(), services=services)

    def log_database(self) -> None:
        self.log(event='gatt-database', peer=self.peer.name, **self.describe())

    # -- control actions ---------------------------------------------------------
    def subscribed(self, characteristic, bit: int) -> list:
        return [bearer for bearer, cccds in self.server.subscribers.items()
                if len(cccds.get(characteristic.handle, b'')) == 2 and cccds[characteristic.handle][0] & bit]

    async def notify(self, uuid: str, value: bytes) -> dict:
        characteristic = self.characteristic(uuid)
        if not characteristic.properties & Properties.NOTIFY:
            raise ValueError(f'{uuid} does not notify')
        store_value(characteristic, value)
        bearers = self.subscribed(characteristic, 0x01)
        for bearer in bearers:
            await self.server.notify_subscriber(bearer, characteristic, value)
        return dict(subscribers=len(bearers))

    async def indicate(self, uuid: str, value: bytes) -> dict:
        characteristic = self.characteristic(uuid)
        if not characteristic.properties & Properties.INDICATE:
            raise ValueError(f'{uuid} does not indicate')
        store_value(characteristic, value)
        return await self.indicate_value(characteristic, value)

    async def indicate_value(self, characteristic, value: bytes) -> dict:
        bearers = self.subscribed(characteristic, 0x02)

        async def one(bearer) -> bool:
            try:
                await asyncio.wait_for(self.server.indicate_subscriber(bearer, characteristic, value),
                                       INDICATION_TIMEOUT)
                return True
            except (asyncio.TimeoutError, TimeoutError):
                return False

        results = await asyncio.gather(*(one(bearer) for bearer in bearers))
        return dict(subscribers=len(bearers), confirmed=sum(results))

    def set_value(self, uuid: str, value: bytes) -> None:
        store_value(self.characteristic(uuid), value)

    async def add_service(self, service: gatt.Service) -> dict:
        self.device.add_service(service)
        start, end = service.handle, service.end_group_handle
        result = dict(start=start, end=end)
        self.log_database()
        changed = self.device.gatt_service and self.device.gatt_service.service_changed_characteristic
        if changed:
            result.update(await self.indicate_value(changed, struct.pack('<HH', start, end)))
        return result


def static_value(attribute) -> str | None:
    value = attribute.value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return None  # computed per read (CCCDs, Database Hash)


def store_value(characteristic, value: bytes) -> None:
    if not isinstance(characteristic.value, (bytes, bytearray)) and characteristic.value is not None:
        raise ValueError(f'{uuid_text(characteristic.uuid)} has a computed value')
    characteristic.value = value
