#!/usr/bin/env python3
"""bareble-trace against tshark, packet by packet.

    tools/trace-agreement.py BAREBLE_TRACE CAPTURE... [--list FILE]

For each capture, `bareble-trace read --json` and tshark's fields must agree on: direction,
HCI packet type, command opcode, event code, ACL connection handle, L2CAP CID, ATT opcode,
ATT handle and SMP code. Prints the number of packets compared and every disagreement;
exits 1 when there is one.

One rule about tshark: on ATT responses and confirmations its handle is a *generated* field,
copied from the request its own tracking joined the response to, and that tracking leaves
some responses unjoined (seen: a Write Response whose request followed an Error Response,
a Handle Value Confirmation after a Write Response). Where tshark generated no handle for
a response or confirmation, ours (from our join) is not compared; where it did, it must be
equal. Those skipped are counted and printed.
"""
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

FIELDS = ['hci_h4.direction', 'hci_h4.type', 'bthci_cmd.opcode', 'bthci_evt.code', 'bthci_acl.chandle',
          'btl2cap.cid', 'btatt.opcode', 'btatt.handle', 'btsmp.opcode']
ANSWERS = {0x01, 0x03, 0x05, 0x07, 0x09, 0x0b, 0x0d, 0x0f, 0x11, 0x13, 0x17, 0x19, 0x1e, 0x21}


def number(text):
    if not text:
        return None
    return int(text, 16) if text.startswith('0x') else int(text)


def tshark(path):
    command = ['tshark', '-r', path, '-T', 'fields', '-E', 'occurrence=f', '-E', 'separator=|', '-e', 'frame.number']
    for field in FIELDS:
        command += ['-e', field]
    result = subprocess.run(command, capture_output=True, text=True)
    rows = {}
    for line in result.stdout.splitlines():
        values = line.split('|')
        rows[int(values[0])] = dict(zip(FIELDS, map(number, values[1:])))
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
    if status != 0:
        disagreements.append(f'{path}: bareble-trace exited {status}: {errors}')
    for frame in sorted(set(theirs) | set(mine)):
        compared += 1
        a, b = theirs.get(frame), mine.get(frame)
        if a is None or b is None:
            disagreements.append(f'{path} #{frame}: only {"bareble-trace" if a is None else "tshark"} has it')
            continue
        for field in FIELDS:
            if a[field] == b[field]:
                continue
            if field == 'btatt.handle' and a[field] is None and a['btatt.opcode'] in ANSWERS:
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
