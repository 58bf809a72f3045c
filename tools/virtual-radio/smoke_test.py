#!/usr/bin/env python3
"""Smoke test of the virtual radio with a minimal H4 host written from scratch
(no Bumble on this side). Run: python3 tools/virtual-radio/smoke_test.py
Prints one line per check and exits non-zero on the first failure."""

from __future__ import annotations

import asyncio
import json
import os
import select
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import termios
import time
import tty

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gatt_smoke import gatt_checks  # noqa: E402  (Bumble, for the GATT checks only)
HRM = bytes.fromhex('0100004d4bc4')  # C4:4B:4D:00:00:01, LSO first
BEACON = bytes.fromhex('0200004d4bc4')
ALL_EVENTS = 0x3FFFFFFFFFFFFFFF
ALL_LE_EVENTS = (1 << 40) - 1


def check(condition: bool, what: str) -> None:
    print(('ok   ' if condition else 'FAIL ') + what, flush=True)
    if not condition:
        sys.exit(1)


class H4Host:
    """Blocking H4 host over any file descriptor."""

    def __init__(self, fd: int, close=None) -> None:
        self.fd = fd
        self._close = close
        self.buffer = b''
        self.raw = b''  # every byte received, for the garbage check

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def command(self, opcode: int, params: bytes = b'') -> None:
        self.send(struct.pack('<BHB', 1, opcode, len(params)) + params)

    def _fill(self, deadline: float) -> bool:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([self.fd], [], [], remaining)[0]:
            return False
        data = os.read(self.fd, 65536)
        self.raw += data
        self.buffer += data
        return True

    def packet(self, deadline: float):
        while True:
            b = self.buffer
            if b and b[0] == 4 and len(b) >= 3 and len(b) >= 3 + b[2]:
                self.buffer = b[3 + b[2]:]
                return b[: 3 + b[2]]
            if b and b[0] == 2 and len(b) >= 5:
                total = 5 + struct.unpack_from('<H', b, 3)[0]
                if len(b) >= total:
                    self.buffer = b[total:]
                    return b[:total]
            if b and b[0] not in (2, 4):
                self.buffer = b[1:]
                continue
            if not self._fill(deadline):
                return None

    def wait(self, predicate, timeout: float = 2.0):
        deadline = time.monotonic() + timeout
        while (p := self.packet(deadline)) is not None:
            if predicate(p):
                return p
        return None

    def collect(self, seconds: float):
        deadline = time.monotonic() + seconds
        packets = []
        while (p := self.packet(deadline)) is not None:
            packets.append(p)
        return packets

    def complete(self, opcode: int, params: bytes = b'') -> bytes | None:
        """Command Complete return parameters (status first), or None."""
        self.command(opcode, params)
        p = self.wait(lambda p: p[:2] == b'\x04\x0e' and struct.unpack_from('<H', p, 4)[0] == opcode)
        return p[6:] if p else None

    def status(self, opcode: int, params: bytes = b'') -> int | None:
        self.command(opcode, params)
        p = self.wait(lambda p: p[:2] in (b'\x04\x0f', b'\x04\x0e') and struct.unpack_from('<H', p, 5 if p[1] == 0x0F else 4)[0] == opcode)
        return None if p is None else p[3] if p[1] == 0x0F else -p[6] - 1000

    def close(self) -> None:
        if self._close:
            self._close()


def le_meta(subevent: int):
    return lambda p: p[:2] == b'\x04\x3e' and p[3] == subevent


def tcp_host(port: int) -> H4Host:
    s = socket.create_connection(('127.0.0.1', port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return H4Host(s.fileno(), s.close), s


def bring_up(host: H4Host) -> None:
    check(host.complete(0x0C03) == b'\x00', 'Reset -> Command Complete status 0')
    check(host.complete(0x0C01, struct.pack('<Q', ALL_EVENTS)) == b'\x00', 'Set Event Mask')
    check(host.complete(0x2001, struct.pack('<Q', ALL_LE_EVENTS)) == b'\x00', 'LE Set Event Mask')


def legacy_reports(packets):
    out = {}
    for p in packets:
        if p[:2] == b'\x04\x3e' and p[3] == 0x02:
            event_type, address, length = p[5], p[7:13], p[13]
            out.setdefault(address, set()).add((event_type, p[14 + length] - 256))
    return out


def extended_reports(packets):
    out = {}
    for p in packets:
        if p[:2] == b'\x04\x3e' and p[3] == 0x0D:
            event_type = struct.unpack_from('<H', p, 5)[0]
            out.setdefault(p[8:14], set()).add(event_type)
    return out


def exposed_to_exposed(one: H4Host, two: H4Host) -> None:
    """Client 2 advertises (legacy types, scan response, extended data > 229
    bytes); client 1 scans and then connects; ACL both ways."""
    adv_params = lambda adv_type: struct.pack('<HHBBB6sBB', 0x20, 0x20, adv_type, 0, 0, bytes(6), 7, 0)
    ad = bytes.fromhex('020106') + bytes([8, 9]) + b'client2'
    check(two.complete(0x2008, bytes([len(ad)]) + ad.ljust(31, b'\0')) == b'\x00', 'LE Set Advertising Data')
    check(two.complete(0x2009, bytes([4, 3, 0xFF, 1, 2]).ljust(32, b'\0')) == b'\x00', 'LE Set Scan Response Data')
    two_address = bytes.fromhex('020000000df0')
    seen = {}
    for adv_type, expected in ((2, {0x02, 0x04}), (3, {0x03}), (0, {0x00, 0x04})):
        check(two.complete(0x2006, adv_params(adv_type)) == b'\x00', f'legacy advertising type {adv_type}')
        check(two.complete(0x200A, b'\x01') == b'\x00', 'LE Set Advertising Enable')
        check(one.complete(0x200B, b'\x01\x10\x00\x10\x00\x00\x00') == b'\x00', 'active legacy scan parameters')
        check(one.complete(0x200C, b'\x01\x00') == b'\x00', 'scan on')
        packets = one.collect(0.15)
        check(one.complete(0x200C, b'\x00\x00') == b'\x00', 'scan off')
        check(two.complete(0x200A, b'\x00') == b'\x00', 'advertising off')
        got = {t for t, _ in legacy_reports(packets).get(two_address, set())}
        check(got == expected, f'type {adv_type} reported as {sorted(got)}')
        for p in packets:
            if p[3:4] == b'\x02' and p[7:13] == two_address and p[5] == 4:
                seen['scan_rsp'] = p[14 : 14 + p[13]]
    check(seen.get('scan_rsp') == bytes([3, 0xFF, 1, 2]), 'scan response carries the scan response data')

    # Extended advertising with 300 bytes: fragmented reports, not a crash.
    props = 0  # non-connectable, non-scannable, extended PDUs
    ext_params = struct.pack('<BH3s3sBBB6sBBbBBBB', 1, props, (0x20).to_bytes(3, 'little'), (0x20).to_bytes(3, 'little'),
                             7, 0, 0, bytes(6), 0, 0x7F, 1, 0, 1, 0, 0)
    check(two.complete(0x2036, ext_params)[:1] == b'\x00', 'LE Set Extended Advertising Parameters')
    # Two AD structures, the first exactly one report long, so that tshark can
    # dissect each fragment on its own.
    big = bytes([228, 0xFF]) + bytes(range(227)) + bytes([70, 0xFF]) + bytes(69)
    check(two.complete(0x2037, bytes([1, 1, 1, 229]) + big[:229]) == b'\x00', 'ext adv data first fragment')
    check(two.complete(0x2037, bytes([1, 2, 1, len(big) - 229]) + big[229:]) == b'\x00', 'ext adv data last fragment')
    check(two.complete(0x2039, b'\x01\x01\x01\x00\x00\x00') == b'\x00', 'LE Set Extended Advertising Enable')
    check(one.complete(0x0C03) == b'\x00', 'Reset client 1 (it last used legacy scanning)')
    bring_up(one)
    check(one.complete(0x2041, b'\x00\x00\x01\x00\x10\x00\x10\x00') == b'\x00', 'ext scan params')
    check(one.complete(0x2042, b'\x01\x01\x00\x00\x00\x00') == b'\x00', 'ext scan on, duplicates filtered')
    packets = [p for p in one.collect(0.2) if p[3:4] == b'\x0d' and p[8:14] == two_address]
    check(one.complete(0x2042, bytes(6)) == b'\x00', 'ext scan off')
    statuses = [(struct.unpack_from('<H', p, 5)[0] >> 5) & 3 for p in packets]
    data = b''.join(p[29 : 29 + p[28]] for p in packets)
    check(statuses == [1, 0] and data == big, f'300-byte data in 2 fragments, duplicates filtered ({statuses})')
    check(two.complete(0x2039, b'\x00\x00') == b'\x00', 'ext advertising off')

    # Connect client 1 -> client 2 (both public addresses) and move a big PDU.
    check(two.complete(0x2006, adv_params(0)) == b'\x00' and two.complete(0x200A, b'\x01') == b'\x00', 'client 2 connectable')
    params = struct.pack('<HHBB6sBHHHHHH', 0x60, 0x30, 0, 0, two_address, 0, 24, 40, 0, 400, 0, 0)
    check(one.status(0x200D, params) == 0, 'connect client 1 -> client 2')
    central = one.wait(le_meta(0x0A))
    peripheral = two.wait(le_meta(0x0A))
    check(central is not None and peripheral is not None and central[4] == 0 and peripheral[4] == 0, 'both sides connected')
    h1 = struct.unpack_from('<H', central, 5)[0]
    h2 = struct.unpack_from('<H', peripheral, 5)[0]
    payload = bytes(i & 0xFF for i in range(400))
    pdu = struct.pack('<HH', len(payload), 0x0040) + payload
    fragments = [pdu[:251], pdu[251:]]
    one.send(struct.pack('<BHH', 2, h1 | 0x2000, 251) + fragments[0])
    one.send(struct.pack('<BHH', 2, h1 | 0x1000, len(fragments[1])) + fragments[1])
    received = [two.wait(lambda p: p[0] == 2), two.wait(lambda p: p[0] == 2)]
    check(None not in received and [len(p) - 5 for p in received] == [251, 153], 'peer host gets the 404-byte PDU as 251 + 153')
    check(b''.join(p[5:] for p in received) == pdu, 'PDU intact across the link')
    nocp = one.wait(lambda p: p[:2] == b'\x04\x13')
    check(nocp is not None and nocp[3] == 1 and struct.unpack_from('<H', nocp, 6)[0] == 2, 'one batched Number Of Completed Packets for 2 packets')
    one.send(struct.pack('<BHH', 2, h1 | 0x2000, 300) + struct.pack('<HH', 296, 0x40) + bytes(296))
    check(two.wait(lambda p: p[0] == 2, 0.3) is None, 'oversized fragment (300 > 251) dropped')
    check(one.status(0x0406, struct.pack('<HB', h1, 0x13)) == 0, 'disconnect')
    theirs = two.wait(lambda p: p[:2] == b'\x04\x05')
    check(theirs is not None and theirs[6] == 0x13, 'peer host sees reason 0x13')

    # Gap 7: Reset drops the link; the peer sees a supervision timeout.
    check(two.complete(0x200A, b'\x01') == b'\x00', 'client 2 advertises again (a connection stopped it)')
    check(one.status(0x200D, params) == 0 and one.wait(le_meta(0x0A)) is not None, 'reconnect client 1 -> client 2')
    check(one.complete(0x0C03) == b'\x00', 'Reset client 1 while connected')
    theirs = two.wait(lambda p: p[:2] == b'\x04\x05')
    check(theirs is not None and theirs[6] == 0x08, 'peer host sees reason 0x08 after the reset')
    bring_up(one)
    check(two.complete(0x200A, b'\x00') == b'\x00', 'advertising off')


def heard_by_scanner(two: H4Host, find_event) -> None:
    """The scanner peer hears client 2's own advertising with its exact bytes and
    PDU kind; the controller enforces the extended advertising rules and limits."""
    random_address = bytes.fromhex('0a0900000dc6')  # C6:0D:00:00:09:0A, LSO first
    check(two.complete(0x2005, random_address) == b'\x00', 'LE Set Random Address')
    ad = bytes.fromhex('020106') + bytes([6, 9]) + b'smoke'
    rsp = bytes([5, 0xFF, 0xFF, 0xFF, 7, 8])
    check(two.complete(0x2006, struct.pack('<HHBBB6sBB', 0x20, 0x20, 2, 1, 0, bytes(6), 7, 0)) == b'\x00', 'ADV_SCAN_IND from the random address')
    check(two.complete(0x2008, bytes([len(ad)]) + ad.ljust(31, b'\0')) == b'\x00', 'advertising data')
    check(two.complete(0x2009, bytes([len(rsp)]) + rsp.ljust(31, b'\0')) == b'\x00', 'scan response data')
    check(two.complete(0x200A, b'\x01') == b'\x00', 'advertising on')
    heard = find_event(lambda e: e['event'] == 'heard' and e['address'] == 'C6:0D:00:00:09:0A')
    check(heard is not None and heard['address_type'] == 'random' and heard['legacy'] and heard['scannable']
          and not heard['connectable'] and heard['data'] == ad.hex() and heard['scan_response'] == rsp.hex(),
          f'scanner heard ADV_SCAN_IND with data and scan response {heard}')
    check(two.complete(0x200A, b'\x00') == b'\x00', 'advertising off')

    ext_params = lambda handle, props: struct.pack(
        '<BH3s3sBBB6sBBbBBBB', handle, props, (0x20).to_bytes(3, 'little'), (0x20).to_bytes(3, 'little'),
        7, 0, 0, bytes(6), 0, 0x7F, 1, 0, 1, 0, 0)
    check(two.complete(0x2036, ext_params(2, 0x03))[:1] == b'\x12', 'extended connectable + scannable -> 0x12')
    check(two.complete(0x2036, ext_params(2, 0x10))[:1] == b'\x00', 'extended set with legacy PDUs')
    check(two.complete(0x2037, bytes([2, 3, 1, 40]) + bytes(40)) == b'\x12', '40 bytes in a legacy-PDU set -> 0x12')
    check(two.complete(0x2038, bytes([2, 3, 1, 3]) + bytes(3)) == b'\x12', 'scan response for a non-scannable set -> 0x12')
    check(two.complete(0x203C, b'\x02') == b'\x00', 'LE Remove Advertising Set')
    # 400 bytes of extended data in two fragments; the set ends after 50 ms.
    big = bytes([250, 0xFF]) + bytes(i & 0xFF for i in range(249)) + bytes([148, 0xFF]) + bytes(147)
    check(two.complete(0x2036, ext_params(3, 0x00))[:1] == b'\x00', 'extended non-connectable set')
    check(two.complete(0x2037, bytes([3, 1, 1, 251]) + big[:251]) == b'\x00', 'first fragment')
    check(two.complete(0x2037, bytes([3, 2, 1, len(big) - 251]) + big[251:]) == b'\x00', 'last fragment')
    check(two.complete(0x2039, bytes([1, 1, 3, 5, 0, 0])) == b'\x00', 'enable for 50 ms')
    heard = find_event(lambda e: e['event'] == 'heard' and e['address'] == 'F0:0D:00:00:00:02' and e['data'] == big.hex())
    check(heard is not None and heard['data'] == big.hex() and not heard['connectable'] and not heard['scannable']
          and heard['scan_response'] is None and heard['address_type'] == 'public', 'scanner heard 400 bytes of extended data')
    ended = two.wait(le_meta(0x12), 1.0)
    check(ended is not None and ended[4] == 0x3C and ended[5] == 3, 'LE Advertising Set Terminated 0x3C after the duration')
    check(two.complete(0x203D) == b'\x00', 'LE Clear Advertising Sets')


async def stale_advertising_pdu() -> tuple[int, int]:
    """README gap 10, in process: two initiators wait to connect to one advertiser; the
    first answers its advertising event, and the advertiser's next PDU goes out in the
    same turn of the loop, before it has taken that CONNECT_IND (as its timer can under
    load). Returns (links the initiators report, links the advertiser accepted)."""
    from bumble import hci
    from radio_air import RadioLink
    from radio_controller import RadioController

    class Sink:
        def on_packet(self, packet) -> None:
            pass

    link = RadioLink()
    advertiser = RadioController('advertiser', link=link, public_address='F0:0D:00:00:0A:00')
    initiators = [RadioController(f'initiator{n}', link=link, public_address=f'F0:0D:00:00:0A:0{n}') for n in (1, 2)]
    for controller in [advertiser, *initiators]:
        controller.host = Sink()
    advertising = advertiser.le_legacy_advertiser
    advertising.advertising_type = 0  # ADV_IND, from the public address
    advertising.enabled = True  # no timer: the check sends each PDU itself
    for initiator in initiators:
        initiator.pending_le_connection = hci.HCI_LE_Create_Connection_Command(
            le_scan_interval=16, le_scan_window=16, initiator_filter_policy=0,
            peer_address_type=0, peer_address=advertiser.public_address, own_address_type=0,
            connection_interval_min=24, connection_interval_max=40, max_latency=0,
            supervision_timeout=72, min_ce_length=0, max_ce_length=0)
    advertising.send_advertising_data()
    asyncio.get_running_loop().call_soon(advertising.send_advertising_data)
    for _ in range(6):
        await asyncio.sleep(0)
    return sum(len(initiator.le_connections) for initiator in initiators), len(advertiser.le_connections)


def main() -> None:
    reported, accepted = asyncio.run(stale_advertising_pdu())
    check((reported, accepted) == (1, 1),
          f'an advertising PDU from before the advertiser took a CONNECT_IND is not answered ({reported} initiator links, {accepted} accepted)')
    snoop_dir = tempfile.mkdtemp(prefix='radio-snoop-')
    radio = subprocess.Popen(
        [sys.executable, os.path.join(HERE, 'bareble_radio.py'), '--tcp', '--pty', '--peripheral',
         '--advertiser', '--scanner', '--big-peripheral', '--btsnoop', snoop_dir],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
    )

    ready = json.loads(radio.stdout.readline())
    events = []

    def read_events() -> None:
        for line in radio.stdout:
            events.append(json.loads(line))

    threading.Thread(target=read_events, daemon=True).start()

    def find_event(predicate, timeout: float = 2.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in list(events):
                if predicate(event):
                    return event
            time.sleep(0.01)
        return None

    def control(line: str, timeout: float = 10.0) -> dict:
        mark = len(events)
        radio.stdin.write(line + '\n')
        radio.stdin.flush()
        event = find_event(lambda e: e['event'] in ('ack', 'error') and e.get('command') == line
                           and events.index(e) >= mark, timeout)
        check(event is not None and event['event'] == 'ack', f'control {line!r} acknowledged {event}')
        return event
    check(ready['event'] == 'ready' and 'tcp' in ready and 'pty' in ready, f'ready line {ready}')

    one, sock1 = tcp_host(ready['tcp'])
    bring_up(one)
    check(one.complete(0x1009) == b'\x00' + bytes.fromhex('01000000 0df0'.replace(' ', '')), 'first client is F0:0D:00:00:00:01')
    two, sock2 = tcp_host(ready['tcp'])
    bring_up(two)
    check(two.complete(0x1009)[1:] == bytes.fromhex('020000000df0'), 'second client is F0:0D:00:00:00:02')

    # Gap 1: unknown opcodes and parse failures are answered.
    check(one.complete(0xFC55) == b'\x01', 'vendor opcode 0xFC55 -> Unknown HCI Command')
    check(one.complete(0x2099, b'\x01\x02') == b'\x01', 'opcode 0x2099 -> Unknown HCI Command')
    check(one.complete(0x2006, b'\x01\x02\x03') == b'\x12', 'truncated LE Set Advertising Parameters -> 0x12')
    check(one.status(0x0405, bytes(13)) == 0x01, 'classic Create Connection -> Command Status 0x01')
    key = bytes(range(16))
    encrypted = one.complete(0x2017, key + bytes(16))
    check(encrypted is not None and encrypted[0] == 0 and len(encrypted) == 17, 'LE Encrypt answers')
    check(one.complete(0x2014, b'\xff' * 4 + b'\x1f') == b'\x00', 'LE Set Host Channel Classification')
    check(one.complete(0x2015, b'\x40\x00')[:3] == b'\x02\x40\x00', 'LE Read Channel Map, unknown handle -> 0x02')
    check(one.complete(0x2022, b'\x40\x00\xfb\x00\x48\x08') == b'\x02\x40\x00', 'LE Set Data Length: status + handle')
    check(one.complete(0x1405, b'\x40\x00')[:3] == b'\x02\x40\x00', 'Read RSSI: status + handle + rssi')

    # Gap 3: supported commands.
    supported = one.complete(0x1002)[1:]
    check(supported[37] & (1 << 6) and supported[37] & (1 << 5) and supported[37] & (1 << 7), 'extended scan + create connection listed (octet 37 bits 5-7)')
    check(supported[36] & (1 << 2) and supported[27] & (1 << 6) and supported[33] & (1 << 6), 'ext adv params, LE Encrypt, LE Set Data Length listed')
    check(not supported[0] & (1 << 4), 'classic Create Connection not listed')

    # Hardware error goes to the most recent client; re-bring-up works.
    control('hardware-error 66')
    check(two.wait(lambda p: p == b'\x04\x10\x01\x42') is not None, 'hardware-error 66 -> 04 10 01 42 on client 2')
    bring_up(two)

    # Gap 5: legacy active scan sees both peers with the right types.
    control('rssi peripheral -70')
    check(one.complete(0x200B, b'\x01\x10\x00\x10\x00\x00\x00') == b'\x00', 'LE Set Scan Parameters (active)')
    check(one.complete(0x200C, b'\x01\x00') == b'\x00', 'LE Set Scan Enable')
    reports = legacy_reports(one.collect(0.3))
    check(one.complete(0x200C, b'\x00\x00') == b'\x00', 'LE Set Scan Disable')
    check(reports.get(HRM) == {(0x00, -70), (0x04, -70)}, f'HRM: ADV_IND + SCAN_RSP at -70 dBm {reports.get(HRM)}')
    check(reports.get(BEACON) == {(0x03, -50)}, f'beacon: ADV_NONCONN_IND only {reports.get(BEACON)}')

    # Passive extended scan on client 2.
    check(two.complete(0x2041, b'\x00\x00\x01\x00\x10\x00\x10\x00') == b'\x00', 'LE Set Extended Scan Parameters (passive)')
    check(two.complete(0x2042, b'\x01\x00\x00\x00\x00\x00') == b'\x00', 'LE Set Extended Scan Enable')
    reports = extended_reports(two.collect(0.3))
    check(two.complete(0x2042, b'\x00\x00\x00\x00\x00\x00') == b'\x00', 'LE Set Extended Scan Disable')
    check(reports.get(HRM) == {0x13} and reports.get(BEACON) == {0x10}, f'extended reports: HRM 0x13, beacon 0x10 {reports}')

    # Gap 6: non-connectable beacon is not connectable; cancel works; then connect.
    create = lambda peer: struct.pack('<HHBB6sBHHHHHH', 0x60, 0x30, 0, 1, peer, 0, 24, 40, 0, 400, 0, 0)
    check(one.status(0x200D, create(BEACON)) == 0, 'LE Create Connection to the beacon pending')
    check(one.wait(le_meta(0x0A), 0.3) is None, 'beacon never connects')
    check(one.complete(0x200E) == b'\x00', 'LE Create Connection Cancel -> success')
    cancelled = one.wait(le_meta(0x0A))
    check(cancelled is not None and cancelled[4] == 0x02, 'cancelled attempt -> Connection Complete 0x02')
    check(one.status(0x200D, create(HRM)) == 0, 'LE Create Connection to HRM pending')
    done = one.wait(le_meta(0x0A))
    check(done is not None and done[4] == 0, 'connected to HRM (enhanced connection complete)')
    handle = struct.unpack_from('<H', done, 5)[0]
    h = struct.pack('<H', handle)
    check(one.complete(0x1405, h)[:3] == b'\x00' + h, 'Read RSSI on the link')
    check(one.complete(0x2015, h) == b'\x00' + h + bytes.fromhex('ffffffff1f'), 'LE Read Channel Map on the link')
    check(one.status(0x041D, h) == 0 and one.wait(lambda p: p[:2] == b'\x04\x0c') is not None, 'Read Remote Version Information completes')
    check(one.status(0x2032, h + b'\x00\x03\x03\x00\x00') == 0 and one.wait(le_meta(0x0C)) is not None, 'LE Set PHY -> PHY Update Complete')
    check(one.complete(0x2022, h + b'\xfb\x00\x48\x08') == b'\x00' + h, 'LE Set Data Length on the link')
    check(one.wait(le_meta(0x07)) is not None, 'LE Data Length Change follows')

    # Gap 9: ATT over the link from a host that connected with its public address.
    att_mtu_request = struct.pack('<HH', 3, 4) + b'\x02\xf7\x00'
    one.send(struct.pack('<BHH', 2, handle | 0x2000, len(att_mtu_request)) + att_mtu_request)
    # Either may come first (completions are batched every 3 ms).
    seen = {}

    def response_or_completion(p) -> bool:
        if p[0] == 2 and p[9:10] == b'\x03':
            seen['response'] = p
        elif p[:2] == b'\x04\x13':
            seen['nocp'] = p
        return len(seen) == 2

    one.wait(response_or_completion)
    check('response' in seen, 'ATT Exchange MTU answered by the HRM')
    check('nocp' in seen, 'Number Of Completed Packets for our ACL packet')
    check(find_event(lambda e: e == {'event': 'connected', 'peer': 'peripheral', 'address': 'F0:0D:00:00:00:01/P', 'handle': e.get('handle')}) is not None,
          'event log: peripheral saw client 1 connect with its public address')

    # Local disconnect reason 0x16.
    check(one.status(0x0406, h + b'\x13') == 0, 'Disconnect pending')
    gone = one.wait(lambda p: p[:2] == b'\x04\x05')
    check(gone is not None and gone[6] == 0x16, 'local Disconnection Complete reason 0x16')

    check(find_event(lambda e: e.get('peer') == 'peripheral' and e['event'] == 'disconnected' and e['reason'] == 0x13) is not None,
          'event log: peripheral saw the disconnection (0x13)')

    exposed_to_exposed(one, two)
    heard_by_scanner(two, find_event)

    # pty: bring-up and garbage between packets.
    master_path = ready['pty']
    fd = os.open(master_path, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd, termios.TCSANOW)
    serial = H4Host(fd, lambda: os.close(fd))
    bring_up(serial)
    control('garbage ff pty')
    check(serial.complete(0x1009) == b'\x00' + bytes.fromhex('010100000df0'), 'pty controller is F0:0D:00:00:01:01')
    check(b'\xff\x04\x0e' in serial.raw and serial.raw.count(b'\xff') >= 1, 'garbage byte ff on the pty stream before the next packet')

    # Reset stops everything: start scanning, reset, no more reports.
    check(one.complete(0x200C, b'\x01\x00') == b'\x00', 'scan enabled before Reset')
    check(one.complete(0x0C03) == b'\x00', 'Reset')
    one.collect(0.05)
    check(one.complete(0x0C01, struct.pack('<Q', ALL_EVENTS)) == b'\x00', 'Set Event Mask after Reset')
    check(not any(p[:2] == b'\x04\x3e' for p in one.collect(0.3)), 'no reports after Reset')

    # GATT: a Bumble client on a third exposed controller (gatt_smoke.py).
    asyncio.run(gatt_checks(ready['tcp'], check, find_event, control, events))

    # GATT centrals (radio_central.py) against the HRM: MTU, discovery dump, read,
    # subscription, and the reconnect from a resolvable private address found by name.
    name = control('add-central mtu=100')['peer']
    ack = control(f'central {name} connect C4:4B:4D:00:00:01 random mtu=100')
    check(ack.get('mtu') == 100, f'{name} connects to the HRM and exchanges MTU 100 ({ack})')
    ack = control(f'central {name} discover', 20)
    dump = find_event(lambda e: e['event'] == 'gatt-discovered' and e.get('peer') == name)
    check(dump is not None and ack.get('services') == len(dump['services']) >= 7, f'discovery dump ({ack})')
    battery = [c for s in dump['services'] for c in s['characteristics'] if c['uuid'] == '2A19']
    check(len(battery) == 1 and battery[0]['properties'] & 0x12 == 0x12, 'the dump lists Battery Level, read + notify')
    read = control(f"central {name} read {battery[0]['value_handle']}")
    check(read.get('value') == battery[0]['value'], f'read matches the dump ({read})')
    handle = struct.pack('<H', battery[0]['value_handle']).hex()
    ack = control(f'central {name} exchange 7e{handle},0a{handle} step')
    check(ack.get('received') == ['0b' + battery[0]['value']] and ack.get('sent') == 2,
          f'raw exchange: an unknown command is not answered, the read after it is ({ack})')
    ack = control(f'central {name} exchange 0a{handle}*3 expect=3 fence')
    check(ack.get('received') == ['0b' + battery[0]['value']] * 3 and ack.get('fenced') is True,
          f'raw exchange: three reads sent back to back, the signaling fence answered ({ack})')
    control(f'central {name} subscribe 2A19')
    control('notify peripheral 2A19 2a')
    check(find_event(lambda e: e['event'] == 'notification' and e.get('peer') == name and e['value'] == '2a') is not None,
          'the subscribed central logs the notification')
    control(f'central {name} disconnect')
    ack = control(f'central {name} connect name=BareBLE-HRM rpa')
    check(int(ack['own_address'][:2], 16) >> 6 == 1, f"reconnect from a resolvable private address ({ack['own_address']})")

    # Exit on stdin EOF.
    serial.close()
    sock1.close()
    sock2.close()
    start = time.monotonic()
    radio.stdin.close()
    radio.wait(timeout=5)
    elapsed = time.monotonic() - start
    check(elapsed < 0.1, f'exit {elapsed * 1000:.0f} ms after stdin EOF')

    for name in sorted(os.listdir(snoop_dir)):
        path = os.path.join(snoop_dir, name)
        # The truncated LE Set Advertising Parameters above is malformed on purpose.
        # tshark 4.0 also flags a correct Read By Type Response for an Include of a
        # 128-bit service (4-byte values, no UUID: Vol 3 Part G 3.2), a dissector bug.
        # gatt_smoke.py sends a truncated Read Request on purpose.
        display_filter = ('_ws.malformed && !(bthci_cmd.opcode == 0x2006 && bthci_cmd.param_length == 3)'
                          ' && !(btatt.opcode == 0x09 && btatt.length == 6)'
                          ' && !(btatt.opcode == 0x0a && btl2cap.length == 1)')  # truncated on purpose
        out = subprocess.run(['tshark', '-r', path, '-Y', display_filter], capture_output=True, text=True)
        check(out.returncode == 0 and not out.stdout.strip(), f'{name}: no malformed packets')

    # The emulated iPhone against an independent consumer, on a radio of its own.
    iphone = subprocess.run([sys.executable, os.path.join(HERE, 'iphone_smoke.py')], capture_output=True, text=True)
    lines = iphone.stdout.strip().splitlines()
    failed = [line for line in lines if line.startswith('FAIL')]
    if iphone.returncode:
        print(iphone.stdout + iphone.stderr[-2000:])
    check(iphone.returncode == 0, 'iphone_smoke.py: ' + (failed or lines or ['no output'])[-1])
    print('all checks passed')


if __name__ == '__main__':
    main()
