#!/usr/bin/env python3
"""bareble-trace against tshark, packet by packet.

    tools/trace-agreement.py BAREBLE_TRACE CAPTURE... [--list FILE]

For each capture, `bareble-trace read --json` and tshark's fields must agree on: direction
and HCI packet type (for a monitor capture: the record's opcode and adapter), command opcode, event code, ACL connection handle, L2CAP CID, ATT opcode,
ATT handle and SMP code. Prints the number of packets compared and every disagreement;
exits 1 when there is one.

Two rules about tshark 4.0. On ATT responses and confirmations its handle is a *generated*
field, copied from the request its own tracking joined the answer to, and that tracking is
not per connection: packet-btatt.c's get_request keys requests by interface and adapter only
and walks back to the latest request of the matching opcode, on any link, in either
direction, answered or not. So:
1. Where tshark joined an answer to a request on another connection, one sent the same way
   as the answer, or one it had already joined to an earlier answer (seen: two links
   answering at once; a flood of indications, every confirmation joined to the last one;
   a Write Response joined to an older, answered Write Request after (2)), its handle is
   not compared with ours, which is joined within the connection and direction.
2. It drops from its tracking a request it wrongly marks malformed (seen on ANCS links,
   where both sides are GATT servers: it keeps one handle table for both databases, takes
   our Write Request to the phone's CCCD 0x0011 for a write to our own characteristic
   declaration 0x0011). An answer whose request (the latest from the other side of that
   connection) is one it marked malformed is not compared.
Where tshark generated no handle for an answer, ours is not compared either. Everything
skipped is counted and printed.
"""
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

FIELDS = ['hci_h4.direction', 'hci_h4.type', 'hci_mon.opcode', 'hci_mon.adapter_id', 'bthci_cmd.opcode',
          'bthci_evt.code', 'bthci_acl.chandle', 'btl2cap.cid', 'btatt.opcode', 'btatt.handle', 'btsmp.opcode']
# Not compared: where tshark joined an answer (rule 1 above).
JOIN = 'btatt.request_in_frame'
# A Linux monitor capture (btsnoop 2001, linktype 254) has no H4 header: there the record's
# monitor opcode and adapter stand for the H4 direction and type.
H4_ONLY = {'hci_h4.direction', 'hci_h4.type'}
MONITOR_ONLY = {'hci_mon.opcode', 'hci_mon.adapter_id'}
REQUESTS = {0x02, 0x04, 0x06, 0x08, 0x0a, 0x0c, 0x0e, 0x10, 0x12, 0x16, 0x18, 0x20}
ANSWERS = {0x01, 0x03, 0x05, 0x07, 0x09, 0x0b, 0x0d, 0x0f, 0x11, 0x13, 0x17, 0x19, 0x1e, 0x21}


def number(text):
    if not text:
        return None
    return int(text, 16) if text.startswith('0x') else int(text)


def tshark(path):
    command = ['tshark', '-r', path, '-T', 'fields', '-E', 'occurrence=f', '-E', 'separator=|', '-e', 'frame.number',
               '-e', '_ws.malformed']
    for field in FIELDS + [JOIN]:
        command += ['-e', field]
    result = subprocess.run(command, capture_output=True, text=True)
    rows = {}
    for line in result.stdout.splitlines():
        values = line.split('|')
        rows[int(values[0])] = dict(zip(FIELDS + [JOIN], map(number, values[2:])), malformed=bool(values[1]))
    return rows


def ours(tool, path):
    result = subprocess.run([tool, 'read', path, '--json'], capture_output=True, text=True)
    rows = {}
    for line in result.stdout.splitlines():
        packet = json.loads(line)
        kind = packet['type']
        rows[packet['n']] = {
            'hci_h4.direction': {'sent': 0, 'received': 1}.get(packet['direction']),
            'hci_h4.type': {'command': 1, 'acl': 2, 'sco': 3, 'event': 4, 'iso': 5}.get(kind),
            'hci_mon.opcode': packet.get('record'),
            'hci_mon.adapter_id': packet.get('index'),
            'bthci_cmd.opcode': packet.get('opcode') if kind == 'command' else None,
            'bthci_evt.code': packet.get('event'),
            'bthci_acl.chandle': packet.get('connection') if kind == 'acl' else None,
            'btl2cap.cid': packet.get('cid'),
            'btatt.opcode': packet.get('attOpcode'),
            'btatt.handle': packet.get('attHandle'),
            'btsmp.opcode': packet.get('smpCode'),
        }
    return rows, result.returncode, result.stderr.strip()


def compare(tool, path):
    theirs = tshark(path)
    mine, status, errors = ours(tool, path)
    compared, skipped, disagreements = 0, 0, []
    # Per connection and sending side: was the latest request tshark's tracking dropped?
    lost_request = {}
    # Requests tshark has joined an answer to.
    joined = set()
    if status != 0:
        disagreements.append(f'{path}: bareble-trace exited {status}: {errors}')
    for frame in sorted(set(theirs) | set(mine)):
        compared += 1
        a, b = theirs.get(frame), mine.get(frame)
        if a is None or b is None:
            disagreements.append(f'{path} #{frame}: only {"bareble-trace" if a is None else "tshark"} has it')
            continue
        monitor = a['hci_mon.opcode'] is not None
        sent = a['hci_mon.opcode'] == 4 if monitor else a['hci_h4.direction'] == 0
        if a['btatt.opcode'] in REQUESTS:
            lost_request[(a['bthci_acl.chandle'], sent)] = a['malformed']
        # An answer travels the other way from its request.
        asker_lost = lost_request.get((a['bthci_acl.chandle'], not sent), False)
        request = theirs.get(a[JOIN]) if a['btatt.opcode'] in ANSWERS else None
        no_join = request is not None and (
            a[JOIN] in joined or request['bthci_acl.chandle'] != a['bthci_acl.chandle']
            or (request['hci_mon.opcode'] == 4 if monitor else request['hci_h4.direction'] == 0) == sent)
        if request is not None:
            joined.add(a[JOIN])
        for field in FIELDS:
            if field in (H4_ONLY if monitor else MONITOR_ONLY):
                continue
            if a[field] == b[field]:
                continue
            if field == 'btatt.handle' and a['btatt.opcode'] in ANSWERS and (a[field] is None or asker_lost or no_join):
                skipped += 1
                continue
            disagreements.append(f'{path} #{frame}: {field} tshark {a[field]} bareble-trace {b[field]}')
    return compared, skipped, disagreements


def main():
    tool, paths = sys.argv[1], sys.argv[2:]
    if '--list' in paths:
        at = paths.index('--list')
        paths = paths[:at] + open(paths[at + 1]).read().split() + paths[at + 2:]
    total, skipped, disagreements = 0, 0, []
    with ThreadPoolExecutor(max_workers=2) as pool:
        for compared, skips, found in pool.map(lambda path: compare(tool, path), paths):
            total += compared
            skipped += skips
            disagreements += found
    for line in disagreements[:200]:
        print(line)
    print(f'trace-agreement: {len(paths)} captures, {total} packets compared, {len(disagreements)} disagreements, '
          f'{skipped} response handles tshark did not generate (not compared)')
    sys.exit(1 if disagreements or total == 0 else 0)


if __name__ == '__main__':
    main()
