"""A Bumble software controller that behaves like a real LE controller where our
host stack can tell the difference.

Each fix names the gap of the testbed note (../shared/notes/testbed.md, summarised
in README.md) it closes. Scanning/initiating lives in `radio_scanner.py`, the air in
`radio_air.py`.
"""

from __future__ import annotations

import asyncio
import logging
import struct

from bumble import hci, ll
from bumble.controller import Controller

from radio_air import (
    ADV_CONNECTABLE, ADV_LEGACY, ADV_SCANNABLE, COMPLETE_DATA, RadioAdvertisingSet, RadioLegacyAdvertiser,
)
from radio_commands import CommandsMixin
from radio_scanner import ScannerMixin

logger = logging.getLogger(__name__)

E = hci.HCI_ErrorCode
LE_META_EVENT = 0x3E
# Events a host cannot mask (Vol 4 Part E 7.3.1: the bits are reserved).
_UNMASKABLE_EVENTS = {0x0E, 0x0F, 0x13}
# LE subevents that replace LE Connection Complete when unmasked (7.7.65.10).
_ENHANCED_CONNECTION_COMPLETE = 0x0A
_ENHANCED_CONNECTION_COMPLETE_V2 = 0x29

# Classic (BR/EDR) commands Bumble happens to handle: we advertise BR/EDR Not
# Supported, so a real LE-only controller neither lists nor answers them (gap 3).
_CLASSIC_ONLY_OPCODES = {
    op for op in hci.HCI_SUPPORTED_COMMANDS_MASKS
    if (op >> 10) in (0x01, 0x02)
    and op not in (hci.HCI_DISCONNECT_COMMAND, hci.HCI_READ_REMOTE_VERSION_INFORMATION_COMMAND)
} | {
    hci.HCI_WRITE_SCAN_ENABLE_COMMAND,
    hci.HCI_READ_CLASS_OF_DEVICE_COMMAND,
    hci.HCI_WRITE_CLASS_OF_DEVICE_COMMAND,
    hci.HCI_READ_SYNCHRONOUS_FLOW_CONTROL_ENABLE_COMMAND,
    hci.HCI_WRITE_SYNCHRONOUS_FLOW_CONTROL_ENABLE_COMMAND,
    hci.HCI_WRITE_EXTENDED_INQUIRY_RESPONSE_COMMAND,
    hci.HCI_READ_SIMPLE_PAIRING_MODE_COMMAND,
    hci.HCI_WRITE_SIMPLE_PAIRING_MODE_COMMAND,
    hci.HCI_SEND_KEYPRESS_NOTIFICATION_COMMAND,
}


# Periodic advertising is not modelled on our air (radio_air.RadioAdvertisement
# replaced Bumble's AdvExtInd that carried it), so it is neither listed nor answered.
_UNMODELLED_OPCODES = {
    op for op in hci.HCI_SUPPORTED_COMMANDS_MASKS
    if 'PERIODIC_ADVERTISING' in hci.HCI_Command.command_name(op)
}
_REFUSED_OPCODES = _CLASSIC_ONLY_OPCODES | _UNMODELLED_OPCODES


class RadioController(CommandsMixin, ScannerMixin, Controller):
    # Spec defaults after power-on/reset (Vol 4 Part E 7.3.1, 7.8.1); Bumble starts at 0
    # and ignores the masks altogether (gap 5).
    event_mask = 0x00001FFFFFFFFFFF
    le_event_mask = 0x1F
    event_mask_page_2 = 0
    # Gap 8: a common modern controller: 251-byte LE ACL buffers, few of them, so
    # a host really has to obey flow control.
    le_acl_data_packet_length = 251
    total_num_le_acl_data_packets = 8
    supported_max_tx_octets = 251
    supported_max_tx_time = 2120
    supported_max_rx_octets = 251
    supported_max_rx_time = 2120
    # Number Of Completed Packets is batched per this period (gap 8): "transmitted
    # on the next connection event" rather than instantly.
    completed_packets_delay_s = 0.003
    le_features = hci.LeFeatureMask(Controller.le_features & ~hci.LeFeatureMask.LE_PERIODIC_ADVERTISING)
    # 5.2: the version that defines the commands we list (LE Read Buffer Size v2,
    # Enhanced Connection Complete v2).
    hci_version = hci.HCI_VERSION_BLUETOOTH_CORE_5_2
    lmp_version = hci.HCI_VERSION_BLUETOOTH_CORE_5_2

    def __init__(self, name, link=None, public_address=None, on_event=None) -> None:
        super().__init__(name, link=link, public_address=public_address)
        # Observer for things worth logging (the radio prints them as JSON).
        self.on_event = on_event or (lambda **_: None)
        self._fresh_state()

    # Attributes a reset must not touch: identity, wiring, and our observers.
    _KEEP_ON_RESET = {'name', 'link', '_public_address', 'hci_sink', 'terminated', 'on_event'}

    def _fresh_state(self) -> None:
        self.le_legacy_advertiser = RadioLegacyAdvertiser(self)
        self.filter_accept_list: set[tuple[int, bytes]] = set()
        self.authenticated_payload_timeouts: dict[int, int] = {}
        self.completed_packets: dict[int, int] = {}
        self.completed_packets_timer: asyncio.TimerHandle | None = None
        # `credits hold`: ACL packets from the host wait here, unsent and unacknowledged, as
        # in a controller whose peer stopped acknowledging (no Number Of Completed Packets).
        self.holding_credits = False
        self.held_packets: list[hci.HCI_AclDataPacket] = []
        self.scanner_reset()

    # ------------------------------------------------------------------
    # Gap 1: every command gets an answer.
    # ------------------------------------------------------------------
    def on_packet(self, packet: bytes) -> None:
        if packet and packet[0] == hci.HCI_COMMAND_PACKET and len(packet) >= 4:
            (op_code,) = struct.unpack_from('<H', packet, 1)
            try:
                command = hci.HCI_Command.from_bytes(packet)
            except Exception as error:  # Bumble's parser refused the parameters.
                logger.warning('command 0x%04X failed to parse: %s', op_code, error)
                self.reject_command(op_code, E.INVALID_COMMAND_PARAMETERS_ERROR)
                return
            self.on_hci_packet(command)
            return
        try:
            super().on_packet(packet)
        except Exception:
            logger.exception('dropping packet from host: %s', packet.hex())

    def on_hci_command_packet(self, command: hci.HCI_Command) -> None:
        handler = getattr(self, f'on_{command.name.lower()}', None)
        if handler is None or command.op_code in _REFUSED_OPCODES:
            logger.info('unknown command %s', command.name)
            self.reject_command(command.op_code, E.UNKNOWN_HCI_COMMAND_ERROR)
            return
        try:
            result = handler(command)
        except Exception:
            logger.exception('handler for %s failed', command.name)
            self.reject_command(command.op_code, E.INVALID_COMMAND_PARAMETERS_ERROR)
            return
        # Handlers return return parameters (or raw bytes) for a Command Complete,
        # None when they answered with Command Status themselves. Bumble only sends
        # Command Complete for classes it declared "sync"; commands it has no class
        # for (LE Encrypt, ...) were left unanswered.
        if result is not None:
            self.send_command_complete(command.op_code, result)

    def send_command_complete(self, op_code: int, result) -> None:
        if isinstance(result, (bytes, bytearray)):
            result = hci.HCI_GenericReturnParameters(data=bytes(result))
        self.send_hci_packet(
            hci.HCI_Command_Complete_Event(
                num_hci_command_packets=1, command_opcode=op_code, return_parameters=result
            )
        )

    def reject_command(self, op_code: int, status: int) -> None:
        """Command Status for commands that normally get one, else Command Complete."""
        command_class = hci.HCI_Command.command_classes.get(op_code)
        if command_class is not None and issubclass(command_class, hci.HCI_AsyncCommand):
            self._send_hci_command_status(status, op_code)
        else:
            self.send_command_complete(op_code, bytes([status]))

    # ------------------------------------------------------------------
    # Gap 3: the supported-commands bitmask lists exactly what we answer.
    # ------------------------------------------------------------------
    @property
    def supported_commands(self) -> set[int]:  # type: ignore[override]
        return {
            op_code
            for op_code in hci.HCI_SUPPORTED_COMMANDS_MASKS
            if op_code not in _REFUSED_OPCODES
            and hasattr(self, f'on_{hci.HCI_Command.command_name(op_code).lower()}')
        }

    # ------------------------------------------------------------------
    # Event delivery: masks (gap 5) and the enhanced connection complete (gap 6).
    # ------------------------------------------------------------------
    def send_hci_packet(self, packet) -> None:
        if isinstance(packet, hci.HCI_LE_Connection_Complete_Event):
            packet = self.upgrade_connection_complete(packet)
        super().send_hci_packet(packet)

    def deliver(self, data: bytes) -> None:
        """Hand raw packet bytes to the host, queued in order with send_hci_packet."""
        if self.host:
            asyncio.get_running_loop().call_soon(self.host.on_packet, data)

    def event_allowed(self, data: bytes) -> bool:
        if len(data) < 2 or data[0] != hci.HCI_EVENT_PACKET:
            return True
        code = data[1]
        if code in _UNMASKABLE_EVENTS or code > 0x40:
            return True
        if not self.event_mask & (1 << (code - 1)):
            return False
        if code == LE_META_EVENT and len(data) > 3:
            return bool(self.le_event_mask & (1 << (data[3] - 1)))
        return True

    def le_event_enabled(self, subevent: int) -> bool:
        return bool(self.event_mask & (1 << (LE_META_EVENT - 1))) and bool(
            self.le_event_mask & (1 << (subevent - 1))
        )

    def upgrade_connection_complete(self, event):
        # A controller sends the enhanced form when the host unmasked it (7.7.65.10).
        fields = dict(
            status=event.status,
            connection_handle=event.connection_handle,
            role=event.role,
            peer_address_type=event.peer_address_type,
            peer_address=event.peer_address,
            local_resolvable_private_address=hci.Address.ANY,
            peer_resolvable_private_address=hci.Address.ANY,
            connection_interval=event.connection_interval,
            peripheral_latency=event.peripheral_latency,
            supervision_timeout=event.supervision_timeout,
            central_clock_accuracy=event.central_clock_accuracy,
        )
        if self.le_event_enabled(_ENHANCED_CONNECTION_COMPLETE_V2):
            handle = getattr(self, 'connecting_advertising_handle', None)
            return hci.HCI_LE_Enhanced_Connection_Complete_V2_Event(
                **fields,
                advertising_handle=0xFF if handle is None else handle,
                sync_handle=0xFFFF,
            )
        if self.le_event_enabled(_ENHANCED_CONNECTION_COMPLETE):
            return hci.HCI_LE_Enhanced_Connection_Complete_Event(**fields)
        return event

    # Bumble's send_hci_packet schedules host.on_packet(bytes); filtering in the
    # sink makes every path (stock handlers included) obey the masks.
    def set_packet_sink(self, sink) -> None:
        self.hci_sink = _MaskingSink(self, sink) if sink is not None else None

    def send_hardware_error(self, code: int) -> None:
        self.deliver(bytes([hci.HCI_EVENT_PACKET, 0x10, 0x01, code & 0xFF]))

    # ------------------------------------------------------------------
    # Gap 7: HCI Reset resets.
    # ------------------------------------------------------------------
    def on_hci_reset_command(self, _command):
        self.tear_down(hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR)
        for name in list(vars(self)):
            # Everything a handler changed lives as an instance attribute shadowing
            # a class default: dropping it restores the power-on value.
            if name not in self._KEEP_ON_RESET and hasattr(type(self), name):
                delattr(self, name)
        self._fresh_state()
        return hci.HCI_StatusReturnParameters(E.SUCCESS)

    def tear_down(self, peer_reason: int) -> None:
        """Stop all activity; peers see their links drop with `peer_reason`
        (a reset or vanished host looks like a supervision timeout to them)."""
        self.le_legacy_advertiser.stop()
        for advertising_set in self.advertising_sets.values():
            advertising_set.stop()
        self.advertising_sets = {}
        self.le_scan_enable = False
        self.pending_le_connection = None
        for connection in list(self.le_connections.values()):
            try:
                connection.send_ll_control_pdu(ll.TerminateInd(peer_reason))
            except Exception:  # the peer left the link already
                pass
        self.le_connections = {}
        self.classic_connections = {}
        self.pending_periodic_advertising_syncs = {}
        self.established_periodic_advertising_syncs = {}
        self.central_cis_links = {}
        self.peripheral_cis_links = {}
        if self.completed_packets_timer:
            self.completed_packets_timer.cancel()
        self.completed_packets_timer = None
        self.completed_packets = {}
        self.default_phy = {'all_phys': 0, 'tx_phys': 0, 'rx_phys': 0}

    # ------------------------------------------------------------------
    # Gap 6: connections.
    # ------------------------------------------------------------------
    def on_hci_disconnect_command(self, command):
        connection = self.find_le_connection_by_handle(command.connection_handle)
        if connection is None:
            self._send_hci_command_status(E.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, command.op_code)
            return None
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        connection.send_ll_control_pdu(ll.TerminateInd(command.reason))
        # The local side reports "Connection Terminated By Local Host" (7.7.5),
        # not the reason it sent to the peer.
        self.on_le_disconnected(connection, E.CONNECTION_TERMINATED_BY_LOCAL_HOST_ERROR)
        return None

    def on_le_disconnected(self, connection, reason: int) -> None:
        self.completed_packets.pop(connection.handle, None)
        super().on_le_disconnected(connection, reason)
        self.on_event(event='disconnected', handle=connection.handle,
                      address=str(connection.peer_address), reason=reason)

    def on_le_connect_ind(self, packet) -> None:
        advertiser = self.advertiser_for(packet.advertiser_address)
        if advertiser is None or not advertiser.connectable:
            return  # Not ours, or we are not connectable (gap 6).
        self.connecting_advertising_handle = getattr(advertiser, 'handle', None)
        try:
            super().on_le_connect_ind(packet)
        finally:
            self.connecting_advertising_handle = None
        self.on_event(event='connected', role='peripheral', address=str(packet.initiator_address))

    def advertiser_for(self, address):
        legacy = self.le_legacy_advertiser
        if legacy.enabled and legacy.address == address:
            return legacy
        for advertising_set in self.advertising_sets.values():
            if advertising_set.enabled and advertising_set.address == address:
                return advertising_set
        return None

    # Gap 4/5/6: our advertising set class carries event properties to scanners.
    def on_hci_le_set_extended_advertising_parameters_command(self, command):
        properties = int(command.advertising_event_properties)
        if not properties & ADV_LEGACY and properties & ADV_CONNECTABLE and properties & ADV_SCANNABLE:
            # Extended PDUs cannot be connectable and scannable at once (Vol 4 Part E
            # 7.8.53); a real controller refuses, so a host bug shows up here too. The
            # Command Complete still carries Selected_TX_Power (tshark expects it).
            return hci.HCI_LE_Set_Extended_Advertising_Parameters_ReturnParameters(
                status=E.INVALID_COMMAND_PARAMETERS_ERROR, selected_tx_power=0
            )
        self.advertising_sets.setdefault(
            command.advertising_handle, RadioAdvertisingSet(self, command.advertising_handle)
        )
        return super().on_hci_le_set_extended_advertising_parameters_command(command)

    def on_hci_le_set_extended_advertising_data_command(self, command):
        advertising_set = self.advertising_sets.get(command.advertising_handle)
        if advertising_set is not None and advertising_set.properties & ADV_LEGACY:
            # Legacy PDUs carry 31 bytes, in one complete operation (7.8.54).
            if len(command.advertising_data) > 31 or command.operation != COMPLETE_DATA:
                return hci.HCI_StatusReturnParameters(E.INVALID_COMMAND_PARAMETERS_ERROR)
        return super().on_hci_le_set_extended_advertising_data_command(command)

    def on_hci_le_set_extended_scan_response_data_command(self, command):
        advertising_set = self.advertising_sets.get(command.advertising_handle)
        if advertising_set is not None and advertising_set.parameters is not None:
            properties = advertising_set.properties
            if command.scan_response_data and not properties & ADV_SCANNABLE:
                # A non-scannable set has no scan response to hold (7.8.55).
                return hci.HCI_StatusReturnParameters(E.INVALID_COMMAND_PARAMETERS_ERROR)
            if properties & ADV_LEGACY and (len(command.scan_response_data) > 31 or command.operation != COMPLETE_DATA):
                return hci.HCI_StatusReturnParameters(E.INVALID_COMMAND_PARAMETERS_ERROR)
        return super().on_hci_le_set_extended_scan_response_data_command(command)

    def on_hci_le_set_extended_advertising_enable_command(self, command):
        result = super().on_hci_le_set_extended_advertising_enable_command(command)
        if command.enable:
            # Bumble ignores Duration and Max_Extended_Advertising_Events; a real
            # controller ends the set and says so with LE Advertising Set Terminated.
            for handle, duration, max_events in zip(
                command.advertising_handles, command.durations, command.max_extended_advertising_events
            ):
                advertising_set = self.advertising_sets.get(handle)
                if advertising_set is not None:
                    advertising_set.limit(duration * 0.010 if duration else None, max_events or None)
        return result

    def send_advertising_set_terminated(self, handle: int, status: int, events: int) -> None:
        self.send_hci_packet(hci.HCI_LE_Advertising_Set_Terminated_Event(
            status=status, advertising_handle=handle, connection_handle=0,
            num_completed_extended_advertising_events=min(events, 0xFF),
        ))

    def on_hci_le_set_advertising_set_random_address_command(self, command):
        self.advertising_sets.setdefault(
            command.advertising_handle, RadioAdvertisingSet(self, command.advertising_handle)
        )
        return super().on_hci_le_set_advertising_set_random_address_command(command)

    # ------------------------------------------------------------------
    # Gap 8: ACL flow control and fragmentation.
    # ------------------------------------------------------------------
    def on_hci_acl_data_packet(self, packet: hci.HCI_AclDataPacket) -> None:
        if self.holding_credits:
            if len(self.held_packets) >= self.total_num_le_acl_data_packets:
                # More than the buffers we announced: a real controller has nowhere to put it.
                self.on_event(event='acl-overflow', handle=packet.connection_handle)
                return
            self.held_packets.append(packet)
            return
        connection = self.find_le_connection_by_handle(packet.connection_handle)
        if connection is None:
            logger.warning('ACL data for unknown handle 0x%04X dropped', packet.connection_handle)
            return
        if len(packet.data) > self.le_acl_data_packet_length:
            # A real controller has no buffer this large; the data is lost.
            logger.warning('oversized ACL fragment (%d bytes) dropped', len(packet.data))
            self.on_event(event='acl-oversized', handle=packet.connection_handle, length=len(packet.data))
            return
        try:
            connection.assembler.feed_packet(packet)
        except Exception:
            logger.exception('bad ACL fragment from host')
        handle = packet.connection_handle
        self.completed_packets[handle] = self.completed_packets.get(handle, 0) + 1
        if self.completed_packets_timer is None:
            self.completed_packets_timer = asyncio.get_running_loop().call_later(
                self.completed_packets_delay_s, self.flush_completed_packets
            )

    def hold_credits(self, hold: bool) -> int:
        """Stops (or resumes) sending the host's ACL packets and returning its credits.
        Returns how many packets were held when resuming (they go out now, in order)."""
        self.holding_credits = hold
        if hold:
            return 0
        held, self.held_packets = self.held_packets, []
        for packet in held:
            self.on_hci_acl_data_packet(packet)
        return len(held)

    def flush_completed_packets(self) -> None:
        self.completed_packets_timer = None
        pending = {h: n for h, n in self.completed_packets.items() if self.find_le_connection_by_handle(h)}
        self.completed_packets = {}
        if pending:
            self.send_hci_packet(
                hci.HCI_Number_Of_Completed_Packets_Event(
                    connection_handles=list(pending), num_completed_packets=list(pending.values())
                )
            )

    def on_link_acl_data(self, sender_address, transport, data: bytes) -> None:
        connection = self.le_connections.get(sender_address)
        if connection is None:
            super().on_link_acl_data(sender_address, transport, data)
            return
        # Fragment to the LE ACL buffer size we advertised (Bumble sent whole PDUs).
        size = self.le_acl_data_packet_length
        for offset in range(0, max(len(data), 1), size):
            fragment = data[offset : offset + size]
            pb_flag = hci.HCI_ACL_PB_FIRST_FLUSHABLE if offset == 0 else hci.HCI_ACL_PB_CONTINUATION
            self.send_hci_packet(hci.HCI_AclDataPacket(connection.handle, pb_flag, 0, len(fragment), fragment))


class _MaskingSink:
    """Wraps the host sink so that every event obeys the host's event masks."""

    def __init__(self, controller: RadioController, sink) -> None:
        self.controller = controller
        self.sink = sink

    def on_packet(self, data: bytes) -> None:
        if self.controller.event_allowed(data):
            self.sink.on_packet(data)

    def __getattr__(self, name):
        return getattr(self.sink, name)
