"""The emulated air: what one advertiser puts on the link, and the link itself.

Bumble's stock air model has three problems our tests trip over (testbed.md):
  gap 4: legacy advertising only ever sends ADV_IND, reads the interval in ms
         instead of 0.625 ms units, and never sends scan response data;
  gap 5: an advertising PDU carries no connectable/scannable information, so every
         advertiser looks connectable to every scanner;
  gap 9: LocalLink stamps LE ACL data with the sender's *random* address, so a
         host that connected with its public address loses all data.
This module fixes the model: one `RadioAdvertisement` PDU carries the event
properties and the scan response (a scanner that is active gets the scan
response right after the advertisement, standing in for SCAN_REQ/SCAN_RSP),
and `RadioLink` routes ACL data by the connection's own addresses.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging

from bumble import controller as bumble_controller
from bumble import core, hci, ll
from bumble.link import LocalLink

logger = logging.getLogger(__name__)

AdvertisingProperties = hci.HCI_LE_Set_Extended_Advertising_Parameters_Command.AdvertisingProperties
LegacyAdvertisingType = hci.HCI_LE_Set_Advertising_Parameters_Command.AdvertisingType

# Advertising timers below this are pointless on the emulated air and only burn CPU.
MINIMUM_ADVERTISING_INTERVAL_S = 0.010
# Advertising_Event_Properties bits (Vol 4 Part E 7.8.53) and the data operation that
# carries a whole payload (7.8.54).
ADV_CONNECTABLE, ADV_SCANNABLE, ADV_LEGACY = 0x01, 0x02, 0x10
COMPLETE_DATA = 0x03
ADVERTISING_TIMEOUT_ERROR = 0x3C
LIMIT_REACHED_ERROR = 0x43


@dataclasses.dataclass
class RadioAdvertisement(ll.AdvertisingPdu):
    """One advertising event as a scanner on the link perceives it."""

    advertiser_address: hci.Address
    data: bytes
    connectable: bool
    scannable: bool
    legacy: bool
    scan_response_data: bytes = b''
    target_address: hci.Address | None = None  # directed advertising
    sid: int = 0xFF  # 0xFF: no ADI (legacy PDUs)
    # Gap 10: one advertising event takes one CONNECT_IND. Every initiator on the link gets
    # this same object; the first to connect claims it and the others wait for the next
    # event (stock Bumble connected them all on its side while the advertiser took one).
    claimed: bool = False

    @property
    def directed(self) -> bool:
        return self.target_address is not None


# Legacy advertising types -> (connectable, scannable, directed).
_LEGACY_TYPE_PROPERTIES = {
    LegacyAdvertisingType.ADV_IND: (True, True, False),
    LegacyAdvertisingType.ADV_DIRECT_IND: (True, False, True),
    LegacyAdvertisingType.ADV_SCAN_IND: (False, True, False),
    LegacyAdvertisingType.ADV_NONCONN_IND: (False, False, False),
    LegacyAdvertisingType.ADV_DIRECT_IND_LOW_DUTY: (True, False, True),
}


class RadioLegacyAdvertiser(bumble_controller.LegacyAdvertiser):
    """Legacy advertiser with every PDU type, the right interval unit and scan
    response data (gap 4)."""

    @property
    def connectable(self) -> bool:
        return _LEGACY_TYPE_PROPERTIES.get(self.advertising_type, (False,))[0]

    def _on_timer_fired(self) -> None:
        self.send_advertising_data()
        # The interval is in 0.625 ms units (Vol 4 Part E 7.8.5), not milliseconds.
        interval = max(self.advertising_interval_min * 0.000625, MINIMUM_ADVERTISING_INTERVAL_S)
        self.timer_handle = asyncio.get_running_loop().call_later(interval, self._on_timer_fired)

    def send_advertising_data(self) -> None:
        if not self.enabled:
            return
        connectable, scannable, directed = _LEGACY_TYPE_PROPERTIES.get(
            self.advertising_type, (False, False, False)
        )
        self.controller.send_advertising_pdu(
            RadioAdvertisement(
                advertiser_address=self.address,
                # ADV_DIRECT_IND carries no advertising data.
                data=b'' if directed else bytes(self.advertising_data),
                connectable=connectable,
                scannable=scannable,
                legacy=True,
                scan_response_data=bytes(self.scan_response_data) if scannable else b'',
                target_address=self.peer_address if directed else None,
            )
        )


class RadioAdvertisingSet(bumble_controller.AdvertisingSet):
    """Extended advertising set that tells scanners its event properties and scan
    response (gaps 4/5/6: a non-connectable set must look and be non-connectable)."""

    events_sent: int = 0
    max_events: int | None = None
    duration_timer: asyncio.TimerHandle | None = None

    @property
    def properties(self) -> int:
        if not self.parameters:
            return 0
        return int(self.parameters.advertising_event_properties)

    def limit(self, duration_s: float | None, max_events: int | None) -> None:
        """Duration and event limits of one enable (Vol 4 Part E 7.8.56)."""
        self.events_sent = 0
        self.max_events = max_events
        if self.duration_timer:
            self.duration_timer.cancel()
        self.duration_timer = None
        if duration_s is not None:
            self.duration_timer = asyncio.get_running_loop().call_later(
                duration_s, self.terminate, ADVERTISING_TIMEOUT_ERROR
            )

    def terminate(self, status: int) -> None:
        if not self.enabled:
            return
        self.stop()
        self.controller.send_advertising_set_terminated(self.handle, status, self.events_sent)

    def stop(self) -> None:
        super().stop()
        if self.duration_timer:
            self.duration_timer.cancel()
        self.duration_timer = None

    @property
    def connectable(self) -> bool:
        return bool(self.properties & AdvertisingProperties.CONNECTABLE_ADVERTISING)

    def send_extended_advertising_data(self) -> None:
        if not self.controller.link or not self.parameters:
            return
        properties = self.properties
        directed = bool(properties & AdvertisingProperties.DIRECTED_ADVERTISING)
        scannable = bool(properties & AdvertisingProperties.SCANNABLE_ADVERTISING)
        legacy = bool(properties & AdvertisingProperties.USE_LEGACY_ADVERTISING_PDUS)
        self.controller.send_advertising_pdu(
            RadioAdvertisement(
                advertiser_address=self.address,
                data=bytes(self.data),
                connectable=self.connectable,
                scannable=scannable,
                legacy=legacy,
                scan_response_data=bytes(self.scan_response_data) if scannable else b'',
                target_address=self.parameters.peer_address if directed else None,
                sid=0xFF if legacy else self.parameters.advertising_sid,
            )
        )
        self.events_sent += 1
        if self.max_events is not None and self.events_sent >= self.max_events:
            self.terminate(LIMIT_REACHED_ERROR)


class RadioLink(LocalLink):
    """LocalLink that routes LE ACL data by the connection's addresses (gap 9) and
    knows the RSSI each scanner should see for an advertiser."""

    DEFAULT_RSSI = -50

    def __init__(self) -> None:
        super().__init__()
        self.rssi_by_address: dict[bytes, int] = {}

    def rssi_for(self, address: hci.Address) -> int:
        return self.rssi_by_address.get(bytes(address.address_bytes), self.DEFAULT_RSSI)

    def send_acl_data(self, sender_controller, destination_address, transport, data) -> None:
        if transport != core.PhysicalTransport.LE:
            super().send_acl_data(sender_controller, destination_address, transport, data)
            return
        # Stock code stamps the sender's random address; the receiving controller
        # keys its connection by the address the sender really connected with.
        connection = sender_controller.le_connections.get(destination_address)
        if connection is None:
            logger.warning('ACL data for %s without a connection', destination_address)
            return
        source_address = connection.self_address
        receiver = self.find_le_peer(source_address, destination_address)
        if receiver is None:
            logger.warning('no controller holds a connection %s -> %s', source_address, destination_address)
            return
        asyncio.get_running_loop().call_soon(
            receiver.on_link_acl_data, source_address, transport, data
        )

    def find_le_peer(self, peer_address: hci.Address, self_address: hci.Address):
        """The controller holding the other end of a connection."""
        for candidate in self.controllers:
            connection = candidate.le_connections.get(peer_address)
            if connection is not None and connection.self_address == self_address:
                return candidate
        return None
