"""Command handlers Bumble's controller lacks or gets wrong (testbed gaps 1, 2, 6).

A handler returns return parameters (a Bumble object or raw bytes, status first)
for a Command Complete, or None after sending Command Status itself.
"""

from __future__ import annotations

import asyncio
import struct

from bumble import crypto, hci

E = hci.HCI_ErrorCode
FILTER_ACCEPT_LIST_SIZE = 8
ALL_DATA_CHANNELS = bytes.fromhex('ffffffff1f')  # 37 channels used
# Vol 6 Part B 4.5.10: minimum/maximum connEffectiveMaxTxOctets and -Time.
MIN_TX_OCTETS, MAX_TX_OCTETS = 0x1B, 0xFB
MIN_TX_TIME, MAX_TX_TIME = 0x148, 0x4290
DEFAULT_AUTHENTICATED_PAYLOAD_TIMEOUT = 3000  # 30 s in 10 ms units


def _tx_time(octets: int) -> int:
    # LE 1M: preamble+access address+header+MIC (14 octets) plus payload, 8 us/octet.
    return (octets + 14) * 8


class CommandsMixin:
    # -- Gap 1: commands the stock controller never answered ------------------
    def on_hci_le_encrypt_command(self, command):
        parameters = command.parameters
        if len(parameters) != 32:
            return bytes([E.INVALID_COMMAND_PARAMETERS_ERROR])
        # HCI carries key and data least significant octet first; crypto.e does
        # the byte swapping around AES-128 (Vol 4 Part E 7.8.22).
        return bytes([E.SUCCESS]) + crypto.e(parameters[:16], parameters[16:])

    def on_hci_le_set_host_channel_classification_command(self, command):
        if len(command.parameters) != 5:
            return bytes([E.INVALID_COMMAND_PARAMETERS_ERROR])
        return bytes([E.SUCCESS])

    def _handle_parameter(self, command, length: int = 2) -> int | None:
        if len(command.parameters) != length:
            return None
        return struct.unpack_from('<H', command.parameters, 0)[0] & 0x0FFF

    def on_hci_le_read_channel_map_command(self, command):
        handle = self._handle_parameter(command)
        if handle is None:
            return bytes([E.INVALID_COMMAND_PARAMETERS_ERROR])
        status = E.SUCCESS if self.find_le_connection_by_handle(handle) else E.UNKNOWN_CONNECTION_IDENTIFIER_ERROR
        return struct.pack('<BH', status, handle) + ALL_DATA_CHANNELS

    def on_hci_read_transmit_power_level_command(self, command):
        handle = self._handle_parameter(command, 3)
        if handle is None:
            return bytes([E.INVALID_COMMAND_PARAMETERS_ERROR])
        status = E.SUCCESS if self.find_le_connection_by_handle(handle) else E.UNKNOWN_CONNECTION_IDENTIFIER_ERROR
        return struct.pack('<BHb', status, handle, 0)

    def on_hci_read_authenticated_payload_timeout_command(self, command):
        handle = self._handle_parameter(command)
        if handle is None:
            return bytes([E.INVALID_COMMAND_PARAMETERS_ERROR])
        status = E.SUCCESS if self.find_le_connection_by_handle(handle) else E.UNKNOWN_CONNECTION_IDENTIFIER_ERROR
        timeout = self.authenticated_payload_timeouts.get(handle, DEFAULT_AUTHENTICATED_PAYLOAD_TIMEOUT)
        return struct.pack('<BHH', status, handle, timeout)

    def on_hci_write_authenticated_payload_timeout_command(self, command):
        handle = command.connection_handle
        if not self.find_le_connection_by_handle(handle):
            return struct.pack('<BH', E.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, handle)
        self.authenticated_payload_timeouts[handle] = command.authenticated_payload_timeout
        return struct.pack('<BH', E.SUCCESS, handle)

    def on_hci_read_remote_version_information_command(self, command):
        connection = self.find_le_connection_by_handle(command.connection_handle)
        if connection is None:
            self._send_hci_command_status(E.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, command.op_code)
            return None
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        peer = self.link.find_le_peer(connection.self_address, connection.peer_address)
        self.send_hci_packet(
            hci.HCI_Read_Remote_Version_Information_Complete_Event(
                status=E.SUCCESS,
                connection_handle=connection.handle,
                version=peer.lmp_version if peer else self.lmp_version,
                manufacturer_name=peer.manufacturer_company_identifier if peer else 0xFFFF,
                subversion=peer.lmp_subversion if peer else 0,
            )
        )
        return None

    def on_hci_le_set_phy_command(self, command):
        connection = self.find_le_connection_by_handle(command.connection_handle)
        if connection is None:
            self._send_hci_command_status(E.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, command.op_code)
            return None
        self._send_hci_command_status(hci.HCI_COMMAND_STATUS_PENDING, command.op_code)
        # The emulated air has one PHY; the procedure completes and keeps LE 1M,
        # consistent with LE Read PHY.
        self.send_hci_packet(
            hci.HCI_LE_PHY_Update_Complete_Event(
                status=E.SUCCESS, connection_handle=connection.handle,
                tx_phy=hci.HCI_LE_1M_PHY, rx_phy=hci.HCI_LE_1M_PHY,
            )
        )
        return None

    # -- Gap 2: full return parameters -----------------------------------------
    def on_hci_read_encryption_key_size_command(self, command):
        # Stock Bumble has no handler. The link layer uses the LTK it was given, so the
        # key size is 16 octets (SMP masks shorter keys in the key itself).
        connection = self.find_connection_by_handle(command.connection_handle)
        if connection is None:
            return bytes([hci.HCI_ErrorCode.UNKNOWN_CONNECTION_IDENTIFIER_ERROR]) + struct.pack('<HB', command.connection_handle, 0)
        return bytes([hci.HCI_SUCCESS]) + struct.pack('<HB', command.connection_handle, 16)

    def on_hci_read_rssi_command(self, command):
        connection = self.find_le_connection_by_handle(command.handle)
        if connection is None:
            return hci.HCI_Read_RSSI_ReturnParameters(
                status=E.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, handle=command.handle, rssi=127
            )
        return hci.HCI_Read_RSSI_ReturnParameters(
            status=E.SUCCESS, handle=connection.handle, rssi=self.link.rssi_for(connection.peer_address)
        )

    def on_hci_le_set_data_length_command(self, command):
        handle = command.connection_handle
        connection = self.find_le_connection_by_handle(handle)
        if connection is None:
            return struct.pack('<BH', E.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, handle)
        if not (MIN_TX_OCTETS <= command.tx_octets <= MAX_TX_OCTETS
                and MIN_TX_TIME <= command.tx_time <= MAX_TX_TIME):
            return struct.pack('<BH', E.INVALID_COMMAND_PARAMETERS_ERROR, handle)
        tx_octets = min(command.tx_octets, self.supported_max_tx_octets)
        if tx_octets != getattr(connection, 'tx_octets', MIN_TX_OCTETS):
            connection.tx_octets = tx_octets
            # The data length update procedure completes after the Command Complete.
            asyncio.get_running_loop().call_soon(self._data_length_changed, connection)
        return struct.pack('<BH', E.SUCCESS, handle)

    def _data_length_changed(self, connection) -> None:
        peer = self.link.find_le_peer(connection.self_address, connection.peer_address)
        peer_connection = peer.le_connections.get(connection.self_address) if peer else None
        ours = getattr(connection, 'tx_octets', MIN_TX_OCTETS)
        theirs = getattr(peer_connection, 'tx_octets', MIN_TX_OCTETS)
        for controller, conn, tx, rx in ((self, connection, ours, theirs), (peer, peer_connection, theirs, ours)):
            if controller is None or conn is None:
                continue
            controller.send_hci_packet(
                hci.HCI_LE_Data_Length_Change_Event(
                    connection_handle=conn.handle, max_tx_octets=tx, max_tx_time=_tx_time(tx),
                    max_rx_octets=rx, max_rx_time=_tx_time(rx),
                )
            )

    # -- Gap 6: filter accept list and connection cancel -------------------------
    def on_hci_le_clear_filter_accept_list_command(self, _command):
        self.filter_accept_list.clear()
        return hci.HCI_StatusReturnParameters(E.SUCCESS)

    def on_hci_le_add_device_to_filter_accept_list_command(self, command):
        entry = (command.address_type, bytes(command.address.address_bytes))
        if entry not in self.filter_accept_list and len(self.filter_accept_list) >= FILTER_ACCEPT_LIST_SIZE:
            return hci.HCI_StatusReturnParameters(E.MEMORY_CAPACITY_EXCEEDED_ERROR)
        self.filter_accept_list.add(entry)
        return hci.HCI_StatusReturnParameters(E.SUCCESS)

    def on_hci_le_remove_device_from_filter_accept_list_command(self, command):
        self.filter_accept_list.discard((command.address_type, bytes(command.address.address_bytes)))
        return hci.HCI_StatusReturnParameters(E.SUCCESS)

    def in_filter_accept_list(self, address: hci.Address) -> bool:
        return (address.address_type, bytes(address.address_bytes)) in self.filter_accept_list

    def on_hci_le_create_connection_cancel_command(self, _command):
        pending = self.pending_le_connection
        if pending is None:
            return hci.HCI_StatusReturnParameters(E.COMMAND_DISALLOWED_ERROR)
        self.pending_le_connection = None
        # Vol 4 Part E 7.8.13: after the Command Complete, the controller reports
        # the cancelled attempt as LE Connection Complete with Unknown Connection
        # Identifier. Bumble said success and kept the attempt pending.
        event = hci.HCI_LE_Connection_Complete_Event(
            status=E.UNKNOWN_CONNECTION_IDENTIFIER_ERROR, connection_handle=0,
            role=hci.Role.CENTRAL, peer_address_type=pending.peer_address_type,
            peer_address=pending.peer_address, connection_interval=0,
            peripheral_latency=0, supervision_timeout=0, central_clock_accuracy=0,
        )
        asyncio.get_running_loop().call_soon(self.send_hci_packet, event)
        return hci.HCI_StatusReturnParameters(E.SUCCESS)
