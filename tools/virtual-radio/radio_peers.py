"""Peers: Bumble devices on their own controllers on the shared link.

Each peer uses its random static address as its only identity: its controller
has no public address, so Bumble's SMP distributes the static address (testbed:
Bumble otherwise hands out the controller's public address while connecting
from the random one, and a bonded peer is then never found again).
"""

from __future__ import annotations

import asyncio
import logging
import struct

from bumble import att, gatt, hci
from bumble.device import AdvertisingType, Device, DeviceConfiguration
from bumble.host import Host
from bumble.transport.common import AsyncPipeSink

from radio_controller import RadioController
from radio_gatt import GattObserver, SecureCharacteristic, UUID, uuid_text

logger = logging.getLogger(__name__)

HEART_RATE_SERVICE = 0x180D
BATTERY_SERVICE = 0x180F
DEVICE_INFORMATION_SERVICE = 0x180A
HEART_RATE_MEASUREMENT = 0x2A37
BATTERY_LEVEL = 0x2A19
MANUFACTURER_NAME = 0x2A29
TEST_COMPANY_ID = 0xFFFF  # reserved for tests by the Bluetooth SIG

PERIPHERAL_ADDRESS = 'C4:4B:4D:00:00:01'
ADVERTISER_ADDRESS = 'C4:4B:4D:00:00:02'
# Device advertising intervals are in milliseconds; 20-40 ms keeps connects quick.
FAST_INTERVAL_MIN_MS, FAST_INTERVAL_MAX_MS = 20, 40


def ad_structure(ad_type: int, payload: bytes) -> bytes:
    return bytes([len(payload) + 1, ad_type]) + payload


def uuid16(value: int) -> gatt.UUID:
    return gatt.UUID.from_16_bits(value)


def uuid128(number: int) -> gatt.UUID:
    """The project's 128-bit UUIDs: B4AEnnnn-7E57-4BA2-B1E0-00000000C0DE."""
    return UUID(f'B4AE{number:04X}-7E57-4BA2-B1E0-00000000C0DE')


READ, WRITE, WRITE_NR = gatt.Characteristic.READ, gatt.Characteristic.WRITE, gatt.Characteristic.WRITE_WITHOUT_RESPONSE
NOTIFY, INDICATE = gatt.Characteristic.NOTIFY, gatt.Characteristic.INDICATE
READABLE, WRITEABLE = gatt.Characteristic.READABLE, gatt.Characteristic.WRITEABLE
EXTENDED_PROPERTIES, USER_DESCRIPTION, PRESENTATION_FORMAT = 0x2900, 0x2901, 0x2904


def user_description(text: str) -> gatt.Descriptor:
    return gatt.Descriptor(uuid16(USER_DESCRIPTION), READABLE, text.encode())


def presentation_format(fmt: int, exponent: int, unit: int, namespace: int = 1, description: int = 0) -> gatt.Descriptor:
    return gatt.Descriptor(uuid16(PRESENTATION_FORMAT), READABLE,
                           struct.pack('<BbHBH', fmt, exponent, unit, namespace, description))


def fix_include_declarations(server) -> None:
    """Bumble writes the first 2 bytes of a 128-bit UUID into an Include
    declaration; the spec (Vol 3 Part G 3.2) omits the UUID then (4-byte value:
    start and end handle), and a client reads the service declaration for it."""
    for attribute in server.attributes:
        if isinstance(attribute, gatt.IncludedServiceDeclaration) and len(attribute.service.uuid.uuid_bytes) != 2:
            attribute.value = struct.pack('<HH', attribute.service.handle, attribute.service.end_group_handle)


class Peer:
    """One named Bumble device; reports what it observes through `log`."""

    def __init__(self, name: str, local_name: str, address: str, link, log, controller_class=RadioController) -> None:
        self.name = name
        self.address = hci.Address(address, hci.Address.RANDOM_DEVICE_ADDRESS)
        self.log = log
        # No public address: the static random address is the identity (see above).
        self.controller = controller_class(name, link=link)
        config = DeviceConfiguration(
            name=local_name,
            advertising_interval_min=FAST_INTERVAL_MIN_MS,
            advertising_interval_max=FAST_INTERVAL_MAX_MS,
            identity_address_type=hci.Address.RANDOM_DEVICE_ADDRESS,
        )
        host = Host(self.controller, AsyncPipeSink(self.controller))
        self.device = Device(config=config, host=host, address=self.address)
        self.device.on(self.device.EVENT_CONNECTION, self.on_connection)

    def on_connection(self, connection) -> None:
        self.log(event='connected', peer=self.name, address=str(connection.peer_address),
                 handle=connection.handle)

        def on_disconnection(reason) -> None:
            self.log(event='disconnected', peer=self.name, address=str(connection.peer_address),
                     reason=int(reason))

        connection.on(connection.EVENT_DISCONNECTION, on_disconnection)

    async def after_ready(self) -> None:
        """Runs once the ready line is out: peers that log what they observe start
        observing here, so the ready line stays the first line."""

    async def disconnect_all(self) -> None:
        for connection in list(self.device.connections.values()):
            await connection.disconnect()


# The HRM's test service (README.md, "GATT database"): 128-bit UUIDs B4AE00nn-...
TEST_SERVICE = uuid128(0x0001)
LONG_VALUE = uuid128(0x0002)          # read: 512 bytes, byte i = i mod 256 (long reads)
READ_WRITE_VALUE = uuid128(0x0003)    # read + write with response; starts as "BareBLE"
WRITE_NO_RESPONSE_VALUE = uuid128(0x0004)  # write without response only
NOTIFY_VALUE = uuid128(0x0005)        # read + notify (the `notify` control line)
INDICATE_VALUE = uuid128(0x0006)      # read + indicate (the `indicate` control line)
ENCRYPTED_VALUE = uuid128(0x0007)     # read only over an encrypted link
INCLUDED_SERVICE = uuid128(0x0101)    # primary service, also included by TEST_SERVICE
INCLUDED_VALUE = uuid128(0x0102)
TX_POWER_SERVICE, TX_POWER_LEVEL = 0x1804, 0x2A07  # secondary, included by TEST_SERVICE
ENVIRONMENTAL_SENSING_SERVICE, TEMPERATURE = 0x181A, 0x2A6E  # added by `add-service`
LONG_VALUE_BYTES = bytes(i % 256 for i in range(512))


class GattPeer(Peer):
    """A connectable peer with a GATT server that logs what clients do."""

    def __init__(self, name: str, local_name: str, address: str, link, log) -> None:
        super().__init__(name, local_name, address, link, log)
        self.gatt = GattObserver(self)

    async def after_ready(self) -> None:
        self.gatt.log_database()


class HeartRatePeripheral(GattPeer):
    def __init__(self, link, log) -> None:
        super().__init__('peripheral', 'BareBLE-HRM', PERIPHERAL_ADDRESS, link, log)
        self.heart_rate_measurement = gatt.Characteristic(
            uuid16(HEART_RATE_MEASUREMENT),
            gatt.Characteristic.Properties.NOTIFY,
            gatt.Characteristic.READABLE,
            bytes([0x00, 72]),  # flags: 8-bit value; 72 bpm
        )
        self.battery_level = gatt.Characteristic(
            uuid16(BATTERY_LEVEL),
            gatt.Characteristic.Properties.READ | gatt.Characteristic.Properties.NOTIFY,
            gatt.Characteristic.READABLE,
            bytes([87]),
        )
        manufacturer = gatt.Characteristic(
            uuid16(MANUFACTURER_NAME),
            gatt.Characteristic.Properties.READ,
            gatt.Characteristic.READABLE,
            b'BareBLE',
        )
        tx_power = gatt.Service(uuid16(TX_POWER_SERVICE), [
            gatt.Characteristic(uuid16(TX_POWER_LEVEL), READ, READABLE, bytes([0])),
        ], primary=False)
        included = gatt.Service(INCLUDED_SERVICE, [
            gatt.Characteristic(INCLUDED_VALUE, READ, READABLE, b'included',
                                [user_description('Included service value')]),
        ])
        test_service = gatt.Service(TEST_SERVICE, [
            gatt.Characteristic(LONG_VALUE, READ, READABLE, LONG_VALUE_BYTES,
                                [user_description('Long value: 512 bytes, byte i = i mod 256')]),
            gatt.Characteristic(READ_WRITE_VALUE, READ | WRITE, READABLE | WRITEABLE, b'BareBLE', [
                user_description('Read/write value'),
                presentation_format(0x19, 0, 0x2700),  # UTF-8 string, unitless
            ]),
            gatt.Characteristic(WRITE_NO_RESPONSE_VALUE, WRITE_NR, WRITEABLE, b''),
            gatt.Characteristic(NOTIFY_VALUE, READ | NOTIFY, READABLE, bytes([0]),
                                [user_description('Notified on the notify control line')]),
            gatt.Characteristic(INDICATE_VALUE, READ | INDICATE, READABLE, bytes([0])),
            SecureCharacteristic(ENCRYPTED_VALUE, READ, READABLE | gatt.Characteristic.READ_REQUIRES_ENCRYPTION,
                                 b'secret'),
        ], included_services=[tx_power, included])
        self.device.add_services([
            gatt.Service(uuid16(HEART_RATE_SERVICE), [self.heart_rate_measurement]),
            gatt.Service(uuid16(BATTERY_SERVICE), [self.battery_level]),
            gatt.Service(uuid16(DEVICE_INFORMATION_SERVICE), [manufacturer]),
            # Included services first: Bumble would otherwise put them inside the
            # including service's handle range.
            tx_power,
            included,
            test_service,
        ])
        fix_include_declarations(self.device.gatt_server)
        self.advertising_data = (
            ad_structure(0x01, bytes([0x06]))  # LE General Discoverable, BR/EDR not supported
            + ad_structure(0x09, b'BareBLE-HRM')
            + ad_structure(0x03, struct.pack('<H', HEART_RATE_SERVICE))
        )
        # A scan response that differs from the advertising data, so a scanner can show
        # that active scanning merged it: TX power 0 dBm, Battery service data (level 87).
        self.scan_response_data = (
            ad_structure(0x0A, bytes([0x00]))
            + ad_structure(0x16, struct.pack('<H', BATTERY_SERVICE) + bytes([87]))
        )

    def new_service(self) -> gatt.Service:
        """What `add-service` adds: Environmental Sensing with a Temperature of 21.50 C.
        Its Characteristic Extended Properties descriptor (Reliable Write) is the one
        descriptor whose value the Database Hash covers (Vol 3 Part G 7.3.1), so a client
        that recomputes Bumble's hash must read it."""
        extended = gatt.Characteristic.Properties.EXTENDED_PROPERTIES
        return gatt.Service(uuid16(ENVIRONMENTAL_SENSING_SERVICE), [
            gatt.Characteristic(uuid16(TEMPERATURE), READ | WRITE | extended, READABLE | WRITEABLE,
                                struct.pack('<h', 2150), [
                                    gatt.Descriptor(uuid16(EXTENDED_PROPERTIES), READABLE, struct.pack('<H', 0x0001)),
                                    user_description('Temperature'),
                                ]),
        ])

    async def start(self) -> None:
        await self.device.power_on()
        await self.device.start_advertising(
            advertising_type=AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE,
            advertising_data=self.advertising_data,
            scan_response_data=self.scan_response_data,
            auto_restart=True,
        )


class Beacon(Peer):
    def __init__(self, link, log) -> None:
        super().__init__('advertiser', 'BareBLE-Beacon', ADVERTISER_ADDRESS, link, log)
        self.advertising_data = (
            ad_structure(0x01, bytes([0x06]))
            + ad_structure(0x09, b'BareBLE-Beacon')
            + ad_structure(0xFF, struct.pack('<H', TEST_COMPANY_ID) + bytes([1, 2, 3]))
        )

    async def start(self) -> None:
        await self.device.power_on()
        await self.device.start_advertising(
            advertising_type=AdvertisingType.UNDIRECTED,  # non-connectable, non-scannable
            advertising_data=self.advertising_data,
        )


# iBeacon peers (--beacons N, add-beacon): one fixed proximity UUID in the project's
# test range, major 1, minor k, measured power -59 dBm (a typical calibration at 1 m).
IBEACON_UUID = 'B4AEBEAC-7E57-4BA2-B1E0-00000000C0DE'
IBEACON_MAJOR = 1
IBEACON_MEASURED_POWER = -59
# Fast enough that ranging (1 s ticks, 3 samples before a proximity) settles in well
# under a second, slow enough that a handful of beacons do not flood the link.
IBEACON_INTERVAL_MIN_MS, IBEACON_INTERVAL_MAX_MS = 50, 60
APPLE_COMPANY_ID = 0x004C


def ibeacon_address(index: int) -> str:
    return f'C4:4B:4D:00:01:{index:02X}'


def ibeacon_data(minor: int) -> bytes:
    """Apple's iBeacon layout: flags 0x06, then manufacturer data 4C 00 02 15 UUID
    major minor power, every field big-endian."""
    payload = (struct.pack('<H', APPLE_COMPANY_ID) + bytes([0x02, 0x15])
               + bytes.fromhex(IBEACON_UUID.replace('-', ''))
               + struct.pack('>HHb', IBEACON_MAJOR, minor, IBEACON_MEASURED_POWER))
    return ad_structure(0x01, bytes([0x06])) + ad_structure(0xFF, payload)


class IBeaconPeer(Peer):
    """A non-connectable iBeacon, `beaconK` (minor K). `stop-beacon K` / `start-beacon K`
    silence and resume it, `rssi beaconK DBM` moves it."""

    def __init__(self, index: int, link, log) -> None:
        super().__init__(f'beacon{index}', f'BareBLE-iBeacon-{index}', ibeacon_address(index), link, log)
        self.index = index
        self.advertising_data = ibeacon_data(index)
        # Control lines run as tasks; the lock (FIFO) keeps stop/start in line order.
        self.lock = asyncio.Lock()

    async def start(self) -> None:
        await self.device.power_on()
        await self.resume()

    async def resume(self) -> None:
        async with self.lock:
            if self.device.is_advertising:
                return
            await self.device.start_advertising(
                advertising_type=AdvertisingType.UNDIRECTED,  # ADV_NONCONN_IND
                advertising_data=self.advertising_data,
                advertising_interval_min=IBEACON_INTERVAL_MIN_MS,
                advertising_interval_max=IBEACON_INTERVAL_MAX_MS,
            )

    async def pause(self) -> None:
        async with self.lock:
            if self.device.is_advertising:
                await self.device.stop_advertising()


PRIVATE_PEER_ADDRESS = 'C4:4B:4D:00:00:06'  # its identity; never on the air


class PrivatePeer(Peer):
    """`private`: a device that uses privacy (Core Vol 6 Part B 1.3.2.2). Each
    `rpa-advertise IRK` line makes Bumble generate a fresh resolvable private address
    from that IRK (Bumble's own ah, independent of BareBLE's) and restarts
    non-connectable advertising from it, as a bonded peer does when its RPA rotates."""

    def __init__(self, link, log) -> None:
        super().__init__('private', 'BareBLE-Private', PRIVATE_PEER_ADDRESS, link, log)
        self.advertising_data = ad_structure(0x01, bytes([0x06])) + ad_structure(0x09, b'BareBLE-Private')
        self.lock = asyncio.Lock()

    async def start(self) -> None:
        await self.device.power_on()

    async def advertise_from(self, irk_most_significant_first: bytes) -> str:
        if len(irk_most_significant_first) != 16:
            raise ValueError('an IRK is 16 bytes (32 hex digits)')
        async with self.lock:
            await self.device.stop_advertising()
            # Bumble takes keys least significant octet first.
            address = hci.Address.generate_private_address(irk_most_significant_first[::-1])
            self.device.random_address = address
            await self.device.start_advertising(
                advertising_type=AdvertisingType.UNDIRECTED,  # ADV_NONCONN_IND
                own_address_type=hci.OwnAddressType.RANDOM,
                advertising_data=self.advertising_data,
                advertising_interval_min=IBEACON_INTERVAL_MIN_MS,
                advertising_interval_max=IBEACON_INTERVAL_MAX_MS,
            )
            return address.to_string(False)


SCANNER_ADDRESS = 'C4:4B:4D:00:00:03'
# Extended report event type bits (Vol 4 Part E 7.7.65.13) and its data status field.
_EXT_CONNECTABLE, _EXT_SCANNABLE, _EXT_SCAN_RESPONSE, _EXT_LEGACY = 0x01, 0x02, 0x08, 0x10
_DATA_MORE_TO_COME = 1
_LegacyReport = hci.HCI_LE_Advertising_Report_Event.Report
_LegacyType = hci.HCI_LE_Advertising_Report_Event.EventType
_ADDRESS_TYPES = {0: 'public', 1: 'random', 2: 'public-identity', 3: 'random-identity', 0xFF: 'anonymous'}


class Scanner(Peer):
    """Scans actively and reports what it hears: one `heard` event whenever an
    advertiser's PDU kind, data or scan response differs from the last one logged
    for that address. Extended scanning hears legacy PDUs too (they come with the
    legacy bit set); legacy reports are understood as well, should a controller
    send them. Reports are taken from the host before Bumble's accumulator, which
    merges advertising data and scan response into one."""

    def __init__(self, link, log) -> None:
        super().__init__('scanner', 'BareBLE-Scanner', SCANNER_ADDRESS, link, log)
        self.fragments: dict[tuple, bytes] = {}  # (address key, is scan response) -> bytes so far
        self.awaiting_response: dict[tuple, dict] = {}  # scannable advertisement, until its scan response
        self.last_heard: dict[tuple, tuple] = {}

    async def start(self) -> None:
        await self.device.power_on()
        self.device.host.on('advertising_report', self.on_report)

    async def after_ready(self) -> None:
        await self.device.start_scanning(active=True, filter_duplicates=False)

    def on_report(self, report) -> None:
        address_key = (bytes(report.address.address_bytes), int(report.address_type))
        if isinstance(report, _LegacyReport):
            kind = report.event_type
            is_scan_response = kind == _LegacyType.SCAN_RSP
            flags = dict(
                connectable=kind in (_LegacyType.ADV_IND, _LegacyType.ADV_DIRECT_IND),
                scannable=kind in (_LegacyType.ADV_IND, _LegacyType.ADV_SCAN_IND),
                legacy=True,
            )
            more = False
        else:
            kind = int(report.event_type)
            is_scan_response = bool(kind & _EXT_SCAN_RESPONSE)
            flags = dict(
                connectable=bool(kind & _EXT_CONNECTABLE),
                scannable=bool(kind & _EXT_SCANNABLE),
                legacy=bool(kind & _EXT_LEGACY),
            )
            more = (kind >> 5) & 3 == _DATA_MORE_TO_COME
        # Data longer than one report arrives in pieces (data status "more to come").
        fragment_key = (address_key, is_scan_response)
        data = self.fragments.pop(fragment_key, b'') + bytes(report.data)
        if more:
            self.fragments[fragment_key] = data
            return
        if is_scan_response:
            advertisement = self.awaiting_response.pop(address_key, None)
            if advertisement is not None:
                self.heard(address_key, advertisement, data)
            return
        # A scannable advertisement whose scan response never came is reported without one.
        if (previous := self.awaiting_response.pop(address_key, None)) is not None:
            self.heard(address_key, previous, None)
        advertisement = dict(
            address=report.address.to_string(False),
            address_type=_ADDRESS_TYPES.get(int(report.address_type), str(int(report.address_type))),
            **flags,
            data=data.hex(),
            rssi=int(report.rssi),
        )
        if flags['scannable'] and not self.device.scanning_is_passive:
            self.awaiting_response[address_key] = advertisement
        else:
            self.heard(address_key, advertisement, None)

    def heard(self, address_key: tuple, advertisement: dict, scan_response: bytes | None) -> None:
        event = dict(event='heard', **advertisement)
        event['scan_response'] = None if scan_response is None else scan_response.hex()
        signature = tuple((k, v) for k, v in event.items() if k != 'rssi')
        if self.last_heard.get(address_key) == signature:
            return
        self.last_heard[address_key] = signature
        self.log(**event)


BIG_PERIPHERAL_ADDRESS = 'C4:4B:4D:00:00:04'
BIG_SERVICE = uuid128(0x1000)  # the big peripheral's first service, advertised
BIG_SERVICES, BIG_CHARACTERISTICS_PER_SERVICE = 32, 7
# Characteristic kinds, chosen by (service + characteristic index) mod 7:
# (properties, permissions, long value)
BIG_KINDS = [
    (READ, READABLE, False),
    (READ | WRITE, READABLE | WRITEABLE, False),
    (READ | NOTIFY, READABLE, False),
    (WRITE | WRITE_NR, WRITEABLE, False),
    (READ | INDICATE, READABLE, False),
    (READ, READABLE, True),
    (NOTIFY, gatt.Characteristic.Permissions(0), False),
]


def big_database() -> list[gatt.Service]:
    """The big peripheral's 32 services of 7 characteristics (224), the same on
    every run (README.md, "Big peripheral"). Characteristic n = 7 * s + c."""
    services = []
    for s in range(BIG_SERVICES):
        characteristics = []
        for c in range(BIG_CHARACTERISTICS_PER_SERVICE):
            n = s * BIG_CHARACTERISTICS_PER_SERVICE + c
            properties, permissions, long = BIG_KINDS[(s + c) % len(BIG_KINDS)]
            length = 101 + (n * 37) % 200 if long or n % 11 == 0 else 1 + n % 20
            value = bytes((n + 7 * i) & 0xFF for i in range(length))
            descriptors = []
            if n % 3 == 0:
                descriptors.append(user_description(f'Big {s}.{c}'))
            if n % 10 == 4:
                descriptors.append(presentation_format(0x04, 0, 0x2700))  # uint8, unitless
            uuid = uuid128(0x2000 + n) if n % 2 else uuid16(0xB000 + n)
            characteristics.append(gatt.Characteristic(uuid, properties, permissions, value, descriptors))
        uuid = BIG_SERVICE if s == 0 else uuid128(0x1000 + s) if s % 3 == 0 else uuid16(0xA000 + s)
        services.append(gatt.Service(uuid, characteristics))
    return services


class BigPeripheral(GattPeer):
    """A large database for the GATT discovery benchmark."""

    def __init__(self, link, log) -> None:
        super().__init__('big-peripheral', 'BareBLE-Big', BIG_PERIPHERAL_ADDRESS, link, log)
        self.device.add_services(big_database())
        self.advertising_data = (
            ad_structure(0x01, bytes([0x06]))
            + ad_structure(0x07, BIG_SERVICE.to_bytes())  # complete list of 128-bit UUIDs
        )
        self.scan_response_data = ad_structure(0x09, b'BareBLE-Big')

    async def start(self) -> None:
        await self.device.power_on()
        await self.device.start_advertising(
            advertising_type=AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE,
            advertising_data=self.advertising_data,
            scan_response_data=self.scan_response_data,
            auto_restart=True,
        )


CENTRAL_ADDRESS = 'C4:4B:4D:00:00:06'


class PairingCentral(Peer):
    """A central that connects to an exposed controller's connectable advertising and
    pairs with it: BareBLE as the SMP responder (`connect-pair central ADDRESS`)."""

    def __init__(self, link, log) -> None:
        super().__init__('central', 'BareBLE-Central', CENTRAL_ADDRESS, link, log)

    async def start(self) -> None:
        await self.device.power_on()

    async def connect_and_pair(self, address: str, pair: bool = True) -> dict:
        target = hci.Address(address, hci.Address.PUBLIC_DEVICE_ADDRESS)
        connection = await asyncio.wait_for(self.device.connect(target), timeout=10)
        if not pair:
            return dict(handle=connection.handle)
        try:
            await asyncio.wait_for(connection.pair(), timeout=40)
        except Exception as error:  # the event log has the reason; the ack says it failed
            return dict(handle=connection.handle, paired=False, error=type(error).__name__ + ': ' + str(error))
        return dict(handle=connection.handle, paired=True, encrypted=bool(connection.encryption))

    async def gatt_client(self) -> dict:
        """Bumble's GATT client against the exposed controller's ATT server (BareBLE's) on
        the connection `connect-pair` made: exchanges the MTU, discovers everything, reads
        every readable characteristic (long reads included; refused ones give their ATT
        error code), writes the first writable one with and without response, then
        subscribes to every indicating one and logs each value (`gatt-indication`)."""
        connection = next(iter(self.device.connections.values()))
        client = connection.gatt_client
        mtu = await client.request_mtu(247)
        services = await client.discover_services()
        characteristics = []
        for service in services:
            characteristics += await client.discover_characteristics([], service)
        for characteristic in characteristics:
            await client.discover_descriptors(characteristic)
        reads, errors = {}, {}
        for characteristic in characteristics:
            if characteristic.properties & gatt.Characteristic.Properties.READ:
                try:
                    reads[str(characteristic.uuid)] = (await client.read_value(characteristic)).hex()
                except att.ATT_Error as error:
                    errors[str(characteristic.uuid)] = int(error.error_code)
        writable = [c for c in characteristics if c.properties & gatt.Characteristic.Properties.WRITE]
        if writable:
            await client.write_value(writable[0], bytes([0x12, 0x34]), with_response=True)
            await client.write_value(writable[0], bytes([0x56]), with_response=False)
        for characteristic in characteristics:
            if characteristic.properties & gatt.Characteristic.Properties.INDICATE:
                def indicated(value, uuid=str(characteristic.uuid)) -> None:
                    self.log(event='gatt-indication', peer=self.name, uuid=uuid, value=bytes(value).hex())
                await client.subscribe(characteristic, indicated, prefer_notify=False)
        return dict(mtu=mtu, services=[str(s.uuid) for s in services],
                    characteristics=[str(c.uuid) for c in characteristics], reads=reads, errors=errors)

    async def pair_again(self) -> dict:
        results = []
        for connection in list(self.device.connections.values()):
            try:
                await asyncio.wait_for(connection.pair(), timeout=40)
                results.append(True)
            except Exception:
                results.append(False)
        return dict(paired=results)
