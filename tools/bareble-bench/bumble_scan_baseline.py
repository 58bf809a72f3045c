#!/usr/bin/env python3
"""Baseline for `bareble-bench scan`: the same H4 stream of advertising report events
through Bumble's host (H4 packet parser, HCI decoding, Host, Device and its
'advertisement' event), in one process, with no socket in between.

Usage: bumble_scan_baseline.py STREAM_FILE EXPECTED_REPORTS [--no-debug-format]
Prints one JSON line: {"reports": N, "seconds": S, "reports_per_second": R}.

--no-debug-format: Bumble's Host.on_hci_packet formats every packet into an f-string for
logger.debug before it looks at the log level (the string is built even with logging off);
this runs the same method with that one statement removed, to show Bumble's own speed
without that cost.
"""
import inspect
import json
import logging
import sys
import textwrap
import time

import bumble.host
from bumble.device import Device
from bumble.host import Host
from bumble.transport.common import PacketParser


def remove_per_packet_debug_format() -> None:
    source = textwrap.dedent(inspect.getsource(Host.on_hci_packet))
    lines = source.splitlines()
    kept = [line for line in lines if 'CONTROLLER -> HOST' not in line]
    if len(kept) != len(lines) - 1:
        sys.exit('Host.on_hci_packet has changed: no single debug line to remove')
    namespace: dict = {}
    exec('\n'.join(kept), vars(bumble.host), namespace)
    Host.on_hci_packet = namespace['on_hci_packet']


def main() -> None:
    path, expected = sys.argv[1], int(sys.argv[2])
    if '--no-debug-format' in sys.argv[3:]:
        remove_per_packet_debug_format()
    with open(path, 'rb') as stream_file:
        stream = stream_file.read()
    logging.disable(logging.CRITICAL)

    host = Host(controller_source=None, controller_sink=None)
    device = Device(host=host)
    # The stream starts mid-session: the host has been reset and is scanning passively.
    host.ready = True
    device.scanning = True
    device.scanning_is_passive = True
    received = 0

    def on_advertisement(advertisement) -> None:
        nonlocal received
        received += 1

    device.on('advertisement', on_advertisement)
    parser = PacketParser(host)

    chunk = 65536
    start = time.perf_counter()
    for offset in range(0, len(stream), chunk):
        parser.feed_data(stream[offset:offset + chunk])
    seconds = time.perf_counter() - start
    if received != expected:
        print(f'bumble delivered {received} advertisements, expected {expected}', file=sys.stderr)
        sys.exit(1)
    print(json.dumps({'reports': received, 'seconds': seconds, 'reports_per_second': received / seconds}))


if __name__ == '__main__':
    main()
