"""Peers: Bumble devices on their own controllers on the shared link.

Each peer uses its random static address as its only identity: its controller
has no public address, so Bumble's SMP distributes the static address (testbed:
Bumble otherwise hands out the controller's public address while connecting
from the random one, and a bonded peer is then never found again).
"""

from __future__ import annotations

import logging
import struct

from bumble import gatt, hci
from bumble.device import AdvertisingType, Device, DeviceConfiguration
from bumble.host import Host
from bumble.transport.common import AsyncPipeSink

from radio_controller import RadioController

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


class Peer:
    """One named Bumble device; reports what it observes through `log`."""

    def __init__(self, name: str, local_name: str, address: str, link, log) -> None:
        self.name = name
        self.address = hci.Address(address, hci.Address.RANDOM_DEVICE_ADDRESS)
        self.log = log
        # No public address: the static random address is the identity (see above).
        self.controller = RadioController(name, link=link)
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

    async def disconnect_all(self) -> None:
        for connection in list(self.device.connections.values()):
            await connection.disconnect()


class HeartRatePeripheral(Peer):
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
        self.device.add_services([
            gatt.Service(uuid16(HEART_RATE_SERVICE), [self.heart_rate_measurement]),
            gatt.Service(uuid16(BATTERY_SERVICE), [self.battery_level]),
            gatt.Service(uuid16(DEVICE_INFORMATION_SERVICE), [manufacturer]),
        ])
        self.device.on('characteristic_subscription', self.on_subscription)
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

    def on_subscription(self, _bearer, characteristic, notify: bool, indicate: bool) -> None:
        self.log(event='subscription', peer=self.name, uuid=str(characteristic.uuid),
                 notify=notify, indicate=indicate)

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
