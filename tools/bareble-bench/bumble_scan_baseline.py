#!/usr/bin/env python3
"""Baseline for `bareble-bench scan`: the same H4 stream of advertising report events
through Bumble's host (H4 packet parser, HCI decoding, Host, Device and its
'advertisement' event), in one process, with no socket in between.

Usage: bumble_scan_baseline.py STREAM_FILE EXPECTED_REPORTS
Prints one JSON line: {"reports": N, "seconds": S, "reports_per_second": R}.
"""
import json
import logging
import sys
import time

from bumble.device import Device
from bumble.host import Host
from bumble.transport.common import PacketParser


def main() -> None:
    path, expected = sys.argv[1], int(sys.argv[2])
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
