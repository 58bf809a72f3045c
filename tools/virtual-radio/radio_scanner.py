"""Scanning and initiating as a real controller does them (testbed gaps 5 and 6).

Stock Bumble reported every advertisement as a connectable LE Extended
Advertising Report (even to a host that used legacy scan commands), sent a copy
of the advertising data as "scan response", ignored scan type, duplicates
filtering and accept lists, fixed RSSI at -50, raised on >229 bytes of data,
and connected to anything with the right address, connectable or not.
"""

from __future__ import annotations

from bumble import hci

from radio_air import RadioAdvertisement

E = hci.HCI_ErrorCode
LegacyEventType = hci.HCI_LE_Advertising_Report_Event.EventType
ExtendedReport = hci.HCI_LE_Extended_Advertising_Report_Event.Report
ACTIVE_SCANNING = 1
# Largest data one LE Extended Advertising Report can carry in a 255-byte event.
EXTENDED_REPORT_DATA_MAX = 229
# Extended report event type bits (Vol 4 Part E 7.7.65.13).
EXT_CONNECTABLE, EXT_SCANNABLE, EXT_DIRECTED, EXT_SCAN_RESPONSE, EXT_LEGACY = 1, 2, 4, 8, 16
DATA_COMPLETE, DATA_MORE_TO_COME = 0, 1


class ScannerMixin:
    def scanner_reset(self) -> None:
        self.scan_api: str | None = None  # 'legacy' or 'extended': shapes the reports
        self.scan_active = False
        self.extended_scan_active = False
        self.scan_reported: set[tuple] = set()

    # -- scan commands ---------------------------------------------------------
    def on_hci_le_set_scan_enable_command(self, command):
        result = super().on_hci_le_set_scan_enable_command(command)
        if command.le_scan_enable:
            self.scan_api = 'legacy'
            self.scan_active = self.le_scan_type == ACTIVE_SCANNING
            self.scan_reported.clear()
        return result

    def on_hci_le_set_extended_scan_parameters_command(self, command):
        if self.le_scan_enable:
            return hci.HCI_StatusReturnParameters(E.COMMAND_DISALLOWED_ERROR)
        result = super().on_hci_le_set_extended_scan_parameters_command(command)
        self.extended_scan_active = any(t == ACTIVE_SCANNING for t in command.scan_types)
        return result

    def on_hci_le_set_extended_scan_enable_command(self, command):
        result = super().on_hci_le_set_extended_scan_enable_command(command)
        if command.enable:
            self.scan_api = 'extended'
            self.scan_active = self.extended_scan_active
            self.scan_reported.clear()
        return result

    # -- the air -------------------------------------------------------------------
    def on_ll_advertising_pdu(self, packet) -> None:
        if isinstance(packet, RadioAdvertisement):
            self.on_radio_advertisement(packet)
        else:
            super().on_ll_advertising_pdu(packet)

    def is_own_address(self, address: hci.Address) -> bool:
        return address in (self.public_address, self.random_address)

    def on_radio_advertisement(self, pdu: RadioAdvertisement) -> None:
        if pdu.target_address is not None and not self.is_own_address(pdu.target_address):
            return  # directed at someone else
        if self.le_scan_enable and self.scan_accepts(pdu.advertiser_address):
            self.report_advertisement(pdu)
        self.maybe_connect(pdu)

    def scan_accepts(self, address: hci.Address) -> bool:
        # Policies 1 and 3 accept only devices on the filter accept list.
        return not (self.le_scanning_filter_policy & 1) or self.in_filter_accept_list(address)

    def report_advertisement(self, pdu: RadioAdvertisement) -> None:
        rssi = self.link.rssi_for(pdu.advertiser_address)
        events = [(False, pdu.data)]
        if self.scan_active and pdu.scannable:
            events.append((True, pdu.scan_response_data))
        for is_scan_response, data in events:
            if self.filter_duplicates:
                key = (bytes(pdu.advertiser_address.address_bytes), is_scan_response, bytes(data))
                if key in self.scan_reported:
                    continue
                self.scan_reported.add(key)
            if self.scan_api == 'legacy':
                self.send_legacy_report(pdu, is_scan_response, data, rssi)
            else:
                self.send_extended_report(pdu, is_scan_response, data, rssi)

    def send_legacy_report(self, pdu, is_scan_response: bool, data: bytes, rssi: int) -> None:
        if not pdu.legacy:
            return  # a legacy scanner does not see extended advertising PDUs
        if is_scan_response:
            event_type = LegacyEventType.SCAN_RSP
        elif pdu.directed:
            event_type = LegacyEventType.ADV_DIRECT_IND
        elif pdu.connectable:
            event_type = LegacyEventType.ADV_IND
        elif pdu.scannable:
            event_type = LegacyEventType.ADV_SCAN_IND
        else:
            event_type = LegacyEventType.ADV_NONCONN_IND
        report = hci.HCI_LE_Advertising_Report_Event.Report(
            event_type=event_type,
            address_type=pdu.advertiser_address.address_type,
            address=pdu.advertiser_address,
            data=data,
            rssi=rssi,
        )
        self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))

    def send_extended_report(self, pdu, is_scan_response: bool, data: bytes, rssi: int) -> None:
        event_type = (
            (EXT_CONNECTABLE if pdu.connectable else 0)
            | (EXT_SCANNABLE if pdu.scannable else 0)
            | (EXT_DIRECTED if pdu.directed else 0)
            | (EXT_SCAN_RESPONSE if is_scan_response else 0)
            | (EXT_LEGACY if pdu.legacy else 0)
        )
        chunks = [data[i : i + EXTENDED_REPORT_DATA_MAX] for i in range(0, len(data), EXTENDED_REPORT_DATA_MAX)] or [b'']
        for index, chunk in enumerate(chunks):
            status = DATA_COMPLETE if index == len(chunks) - 1 else DATA_MORE_TO_COME
            report = ExtendedReport(
                event_type=event_type | (status << 5),
                address_type=pdu.advertiser_address.address_type,
                address=pdu.advertiser_address,
                primary_phy=hci.Phy.LE_1M,
                # Legacy PDUs use no secondary channel: 0 means "no packets".
                secondary_phy=0 if pdu.legacy else hci.Phy.LE_1M,
                advertising_sid=pdu.sid,
                tx_power=0x7F,  # not available
                rssi=rssi,
                periodic_advertising_interval=0,
                direct_address_type=pdu.target_address.address_type if pdu.directed else 0,
                direct_address=pdu.target_address if pdu.directed else hci.Address.ANY,
                data=chunk,
            )
            self.send_hci_packet(hci.HCI_LE_Extended_Advertising_Report_Event([report]))

    # -- initiating ----------------------------------------------------------------
    def still_advertising(self, address: hci.Address) -> bool:
        """Whether a controller on the link still advertises connectably from `address`.
        On air a CONNECT_IND follows its ADV_IND by 150 us; here the advertiser's next
        PDU can be queued before it has taken the CONNECT_IND of the event before, and
        an initiator answering that PDU once the advertiser stopped would report a link
        the advertiser never made."""
        return any(
            (advertiser := controller.advertiser_for(address)) is not None and advertiser.connectable
            for controller in self.link.controllers
            if hasattr(controller, 'advertiser_for')
        )

    def maybe_connect(self, pdu: RadioAdvertisement) -> None:
        pending = self.pending_le_connection
        if pending is None or not pdu.connectable:
            return  # non-connectable advertisers cannot be connected to (gap 6)
        if pending.initiator_filter_policy & 1:
            if not self.in_filter_accept_list(pdu.advertiser_address):
                return
            # The accept list names the peer; Bumble's code reads it from here.
            pending.peer_address = pdu.advertiser_address
            pending.peer_address_type = pdu.advertiser_address.address_type
        elif pending.peer_address != pdu.advertiser_address:
            return
        if pdu.claimed:
            return  # another initiator answered this advertising event (gap 10)
        if not self.still_advertising(pdu.advertiser_address):
            return  # an event from before the advertiser accepted another link (gap 10)
        pdu.claimed = True
        self.create_le_connection(pdu.advertiser_address)
        self.on_event(event='connected', role='central', address=str(pdu.advertiser_address))
