#!/usr/bin/env python3
"""BareBLE virtual radio: Bumble software controllers on one emulated LE link,
exposed to our stack as H4 over loopback TCP and/or a pty, plus scripted peers.

    bareble_radio.py [--tcp] [--pty] [--vhci N] [--peripheral] [--advertiser] [--scanner]
                     [--big-peripheral] [--hostile] [--iphone] [--beacons N] [--btsnoop DIR]
                     [--lifetime SECONDS]

stdout: first line {"event": "ready", "tcp": PORT, "pty": PATH, "vhci": N}, then one JSON
event per line. stdin: control lines (see README.md); EOF ends the process.
stderr: human diagnostics.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import logging
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from radio_air import RadioLink  # noqa: E402
from radio_central import GattCentral  # noqa: E402
from radio_explore import Explorer  # noqa: E402
from radio_pairing import PairingControl  # noqa: E402
from radio_hostile import HostilePeripheral  # noqa: E402
from radio_iphone import EmulatedIPhone  # noqa: E402
from radio_peers import Beacon, BigPeripheral, HeartRatePeripheral, IBeaconPeer, PairingCentral, PrivatePeer, Scanner  # noqa: E402
from radio_transport import Exposed, PtyEndpoint, TcpServer  # noqa: E402
from radio_vhci import VhciEndpoint  # noqa: E402

logger = logging.getLogger('bareble_radio')

TCP_ADDRESS_PREFIX = 'F0:0D:00:00'
PTY_ADDRESS = 'F0:0D:00:00:01:01'
VHCI_ADDRESS_PREFIX = 'F0:0D:00:00:02'  # hciN gets F0:0D:00:00:02:0N


def emit(**event) -> None:
    sys.stdout.write(json.dumps(event) + '\n')
    sys.stdout.flush()


class Radio:
    def __init__(self, options) -> None:
        self.options = options
        self.link = RadioLink()
        self.exposed: dict[str, Exposed] = {}  # by client id ('1', '2', ..., 'pty')
        self.tcp_clients_seen = 0
        self.peers = {}
        self.stopping = False
        self.stdin_buffer = b''
        self.explorer: Explorer | None = None
        self.tasks: set[asyncio.Task] = set()

    # -- exposed controllers ---------------------------------------------------
    def new_tcp_client(self) -> Exposed:
        self.tcp_clients_seen += 1
        number = self.tcp_clients_seen
        address = f'{TCP_ADDRESS_PREFIX}:{number >> 8:02X}:{number & 0xFF:02X}'
        exposed = Exposed(str(number), address, self.link, self.snoop_path(f'client-{number}'), emit)
        self.exposed[exposed.id] = exposed
        emit(event='client', id=number, address=address)
        return exposed

    def tcp_client_closed(self, exposed: Exposed) -> None:
        exposed.close()
        self.exposed.pop(exposed.id, None)
        emit(event='client-closed', id=int(exposed.id))

    def snoop_path(self, stem: str) -> str | None:
        if not self.options.btsnoop:
            return None
        return os.path.join(self.options.btsnoop, f'{stem}.btsnoop')

    def select(self, client: str | None) -> Exposed:
        if client is None:
            tcp = [e for e in self.exposed.values() if e.id.isdigit()]
            if tcp:
                return max(tcp, key=lambda e: int(e.id))
            client = 'pty'
        if client not in self.exposed:
            raise ValueError(f'no exposed controller {client!r}')
        return self.exposed[client]

    # -- control channel -------------------------------------------------------
    def on_stdin_readable(self) -> None:
        try:
            chunk = os.read(0, 65536)
        except BlockingIOError:
            return
        if not chunk:
            self.shutdown('stdin closed')
            return
        self.stdin_buffer += chunk
        while b'\n' in self.stdin_buffer:
            line, self.stdin_buffer = self.stdin_buffer.split(b'\n', 1)
            text = line.decode(errors='replace').strip()
            if text:
                self.execute(text)

    def execute(self, line: str) -> None:
        words = line.split()
        try:
            handler = getattr(self, 'control_' + words[0].replace('-', '_'), None)
            if handler is None:
                raise ValueError(f'unknown command {words[0]!r}')
            if getattr(handler, 'raw', False):
                # Free text (JSON with spaces) after the command word, as typed.
                result = handler(line.split(None, 1)[1] if len(words) > 1 else '')
            else:
                result = handler(*words[1:])
        except Exception as error:  # report, never die on a bad control line
            emit(event='error', command=line, message=str(error))
            return
        if inspect.isawaitable(result):
            # Runs on; its ack (or error) comes when it is done.
            task = asyncio.ensure_future(self.finish(line, result))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
            return
        emit(event='ack', command=line, **(result or {}))

    async def finish(self, line: str, awaitable) -> None:
        try:
            result = await awaitable
        except Exception as error:
            emit(event='error', command=line, message=str(error) or type(error).__name__)
            return
        emit(event='ack', command=line, **(result or {}))

    def control_hardware_error(self, code: str, client: str | None = None) -> None:
        exposed = self.select(client)
        value = int(code, 0)
        exposed.controller.send_hardware_error(value)
        emit(event='hardware-error', client=exposed.json_id, code=value)

    def control_credits(self, mode: str, client: str | None = None) -> dict:
        if mode not in ('hold', 'release'):
            raise ValueError('credits hold|release [CLIENT]')
        exposed = self.select(client)
        released = exposed.controller.hold_credits(mode == 'hold')
        return dict(client=exposed.json_id, released=released)

    def control_garbage(self, hex_bytes: str, client: str | None = None) -> None:
        self.select(client).write_raw(bytes.fromhex(hex_bytes))

    def control_rssi(self, peer: str, dbm: str) -> None:
        address = self.peer(peer).address
        self.link.rssi_by_address[bytes(address.address_bytes)] = int(dbm)

    def beacon(self, index: str) -> IBeaconPeer:
        peer = self.peers.get(f'beacon{int(index)}')
        if not isinstance(peer, IBeaconPeer):
            raise ValueError(f'no beacon {index!r}: start the radio with --beacons N or send add-beacon')
        return peer

    async def control_add_beacon(self) -> dict:
        index = 1 + sum(isinstance(peer, IBeaconPeer) for peer in self.peers.values())
        peer = IBeaconPeer(index, self.link, emit)
        self.peers[peer.name] = peer
        await peer.start()
        return {'peer': peer.name, 'address': str(peer.address).removesuffix('/P')}

    async def control_stop_beacon(self, index: str) -> None:
        await self.beacon(index).pause()

    async def control_start_beacon(self, index: str) -> None:
        await self.beacon(index).resume()

    async def control_rpa_advertise(self, irk_hex: str) -> dict:
        peer = self.peers.get('private')
        if peer is None:
            peer = self.peers['private'] = PrivatePeer(self.link, emit)
            await peer.start()
        return {'peer': 'private', 'address': await peer.advertise_from(bytes.fromhex(irk_hex))}

    def peer(self, name: str):
        if name not in self.peers:
            raise ValueError(f'no peer {name!r}')
        return self.peers[name]

    def gatt_peer(self, name: str):
        peer = self.peer(name)
        if not hasattr(peer, 'gatt'):
            raise ValueError(f'peer {name!r} has no GATT server')
        return peer

    def control_notify(self, peer: str, uuid: str, hex_value: str):
        return self.gatt_peer(peer).gatt.notify(uuid, bytes.fromhex(hex_value))

    def control_indicate(self, peer: str, uuid: str, hex_value: str):
        return self.gatt_peer(peer).gatt.indicate(uuid, bytes.fromhex(hex_value))

    def control_set_value(self, peer: str, uuid: str, hex_value: str) -> None:
        self.gatt_peer(peer).gatt.set_value(uuid, bytes.fromhex(hex_value))

    def control_add_service(self, peer: str):
        target = self.gatt_peer(peer)
        if not hasattr(target, 'new_service'):
            raise ValueError(f'peer {peer!r} has no service to add')
        return target.gatt.add_service(target.new_service())

    def control_disconnect(self, peer: str):
        target = self.peer(peer)

        async def disconnect() -> dict:
            count = len(target.device.connections)
            await target.disconnect_all()
            return dict(connections=count)

        return disconnect()

    def hostile_peer(self) -> HostilePeripheral:
        peer = self.peer('hostile')
        if not isinstance(peer, HostilePeripheral):
            raise ValueError('start the radio with --hostile')
        return peer

    def control_hostile(self, *modes: str) -> dict:
        return self.hostile_peer().set_modes(list(modes))

    def control_hostile_flood(self, kind: str, count: str) -> dict:
        return self.hostile_peer().flood(kind, int(count, 0))

    def control_bumble_explore(self, peer: str, mtu: str = '247'):
        target = self.gatt_peer(peer)
        if self.explorer is None:
            self.explorer = Explorer(self.link, emit)

        async def explore() -> None:
            result = await self.explorer.explore(target, int(mtu, 0))
            emit(event='bumble-explore', peer=peer, **result)

        return explore()

    # -- pairing -----------------------------------------------------------------
    def pairing_control(self, name: str) -> PairingControl:
        peer = self.peer(name)
        control = getattr(peer, 'pairing', None)
        if control is None:
            raise ValueError(f'peer {name!r} does not pair')
        return control

    def control_pairing(self, peer: str, *settings: str) -> dict:
        return self.pairing_control(peer).configure(*settings)

    def control_passkey(self, peer: str, value: str) -> dict:
        return self.pairing_control(peer).enter_passkey(int(value))

    def control_connect_pair(self, peer: str, address: str, *flags: str):
        target = self.peer(peer)
        if not isinstance(target, PairingCentral):
            raise ValueError(f'peer {peer!r} is not a central')
        return target.connect_and_pair(address, pair='no-pair' not in flags)

    def control_gatt_client(self, peer: str):
        target = self.peer(peer)
        if not isinstance(target, PairingCentral):
            raise ValueError(f'peer {peer!r} is not a central')
        return target.gatt_client()

    def control_pair(self, peer: str):
        target = self.peer(peer)
        if not isinstance(target, PairingCentral):
            raise ValueError(f'peer {peer!r} is not a central')
        return target.pair_again()

    def control_request_security(self, peer: str) -> dict:
        target = self.peer(peer)
        connections = list(target.device.connections.values())
        for connection in connections:
            connection.request_pairing()
        return dict(connections=len(connections))

    def control_forget_bonds(self, peer: str):
        target = self.peer(peer)

        async def forget() -> dict:
            keystore = target.device.keystore
            count = 0
            if keystore is not None:
                for name, _ in await keystore.get_all():
                    await keystore.delete(name)
                    count += 1
            return dict(removed=count)

        return forget()

    # -- GATT centrals (BareBLE as peripheral) -----------------------------------
    def control_add_central(self, *options: str):
        settings = dict(option.partition('=')[::2] for option in options)
        unknown = set(settings) - {'mtu', 'cpr'}
        if unknown:
            raise ValueError(f'unknown add-central option(s) {", ".join(sorted(unknown))}: use mtu=N, cpr=0|1')
        index = 1 + sum(isinstance(peer, GattCentral) for peer in self.peers.values())
        peer = GattCentral(index, self.link, emit, server_mtu=int(settings.get('mtu', '247'), 0),
                           parameters_request=settings.get('cpr', '1') in ('1', 'yes', 'true', 'on'))
        # Named and registered now, so lines right behind this one can use it; its actions
        # wait for the power-on.
        self.peers[peer.name] = peer
        peer.pairing = PairingControl(peer, emit)
        peer.powered = asyncio.ensure_future(peer.start())

        async def started() -> dict:
            await peer.powered
            return {'peer': peer.name, 'address': str(peer.address).removesuffix('/P')}

        return started()

    def control_central(self, name: str, action: str, *arguments: str):
        peer = self.peer(name)
        if not isinstance(peer, GattCentral):
            raise ValueError(f'peer {name!r} is not a GATT central (add-central makes them)')
        handler = getattr(peer, 'action_' + action.replace('-', '_'), None)
        if handler is None:
            raise ValueError(f'unknown central action {action!r}')
        return handler(*arguments)

    # -- emulated iPhones (BareBLE as ANCS consumer) ---------------------------------
    def new_iphone(self, name: str | None, settings: dict) -> EmulatedIPhone:
        unknown = set(settings) - {'mtu', 'exchange', 'publish', 'present'}
        if unknown:
            raise ValueError(f'unknown iphone option(s) {", ".join(sorted(unknown))}: use mtu=N, exchange=0|1, publish=encrypted|always, present=0|1')
        index = 1 + sum(isinstance(peer, EmulatedIPhone) for peer in self.peers.values())
        name = name or ('iphone' if index == 1 else f'iphone{index}')
        if name in self.peers:
            raise ValueError(f'a peer {name!r} exists')
        peer = EmulatedIPhone(index, name, self.link, emit, mtu=int(settings.get('mtu', '185'), 0),
                              exchange=settings.get('exchange', '1') in ('1', 'yes', 'true', 'on'),
                              publish=settings.get('publish', 'encrypted'),
                              present=settings.get('present', '1') in ('1', 'yes', 'true', 'on'))
        self.peers[name] = peer
        peer.pairing = PairingControl(peer, emit)
        peer.pairing.configure('io=keyboard-display')  # an iPhone has a keyboard and a display
        return peer

    def control_add_iphone(self, *words: str):
        names = [w for w in words if '=' not in w]
        if len(names) > 1:
            raise ValueError('add-iphone [NAME] [mtu=N] [exchange=0|1] [publish=encrypted|always] [present=0|1]')
        settings = dict(w.partition('=')[::2] for w in words if '=' in w)
        peer = self.new_iphone(names[0] if names else None, settings)

        async def started() -> dict:
            await peer.start()
            await peer.after_ready()
            return {'peer': peer.name, 'address': str(peer.address).removesuffix('/P'),
                    'irk': peer.device.irk[::-1].hex()}

        return started()

    def control_iphone(self, text: str):
        words = text.split(None, 2)
        if len(words) < 2:
            raise ValueError('iphone NAME ACTION ...')
        peer = self.peer(words[0])
        if not isinstance(peer, EmulatedIPhone):
            raise ValueError(f'peer {words[0]!r} is not an emulated iPhone (add-iphone makes them)')
        handler = getattr(peer, 'action_' + words[1].replace('-', '_'), None)
        if handler is None:
            raise ValueError(f'unknown iphone action {words[1]!r}')
        return handler(words[2] if len(words) > 2 else '')

    control_iphone.raw = True

    # -- lifetime --------------------------------------------------------------
    def shutdown(self, why: str) -> None:
        if self.stopping:
            return
        self.stopping = True
        logger.info('exiting: %s', why)
        for exposed in list(self.exposed.values()):
            exposed.flush()
        sys.stdout.flush()
        sys.stderr.flush()
        # os._exit: nothing left worth a graceful asyncio shutdown, and a test
        # waiting on us should never wait more than a few milliseconds.
        os._exit(0)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        ready = {'event': 'ready'}
        if self.options.btsnoop:
            os.makedirs(self.options.btsnoop, exist_ok=True)
        if self.options.peripheral:
            self.peers['peripheral'] = HeartRatePeripheral(self.link, emit)
        if self.options.advertiser:
            self.peers['advertiser'] = Beacon(self.link, emit)
        if self.options.scanner:
            self.peers['scanner'] = Scanner(self.link, emit)
        if self.options.big_peripheral:
            self.peers['big-peripheral'] = BigPeripheral(self.link, emit)
        if self.options.central:
            self.peers['central'] = PairingCentral(self.link, emit)
        if self.options.hostile:
            self.peers['hostile'] = HostilePeripheral(self.link, emit)
        if self.options.iphone:
            self.new_iphone('iphone', {})
        for name in ('peripheral', 'central'):
            if name in self.peers:
                self.peers[name].pairing = PairingControl(self.peers[name], emit)
        for index in range(1, self.options.beacons + 1):
            self.peers[f'beacon{index}'] = IBeaconPeer(index, self.link, emit)
        await asyncio.gather(*(peer.start() for peer in self.peers.values()))
        if self.options.tcp:
            server = TcpServer(self.new_tcp_client, self.tcp_client_closed)
            ready['tcp'] = await server.start()
        if self.options.pty:
            exposed = Exposed('pty', PTY_ADDRESS, self.link, self.snoop_path('pty'), emit)
            self.exposed['pty'] = exposed
            ready['pty'] = PtyEndpoint(exposed).open()
        if self.options.vhci:
            # One at a time: each adapter must be registered before the next open.
            for _ in range(self.options.vhci):
                endpoint = VhciEndpoint()
                index = endpoint.create()
                exposed = Exposed(f'hci{index}', f'{VHCI_ADDRESS_PREFIX}:{index:02X}', self.link,
                                  self.snoop_path(f'hci{index}'), emit)
                self.exposed[exposed.id] = exposed
                endpoint.attach(exposed)
                await endpoint.registered()
            ready['vhci'] = self.options.vhci
        os.set_blocking(0, False)
        loop.add_reader(0, self.on_stdin_readable)
        loop.add_signal_handler(signal.SIGTERM, self.shutdown, 'SIGTERM')
        loop.add_signal_handler(signal.SIGINT, self.shutdown, 'SIGINT')
        loop.call_later(self.options.lifetime, self.shutdown, 'lifetime expired')
        emit(**ready)
        await asyncio.gather(*(peer.after_ready() for peer in self.peers.values()))
        logger.info('ready after %.0f ms', (time.monotonic() - START) * 1000)
        await asyncio.Event().wait()


START = time.monotonic()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--tcp', action='store_true', help='serve H4 on 127.0.0.1, ephemeral port')
    parser.add_argument('--pty', action='store_true', help='expose one controller on a pty')
    parser.add_argument('--vhci', type=int, default=0, metavar='N',
                        help='expose N controllers to the Linux kernel through /dev/vhci (hciN gets F0:0D:00:00:02:0N)')
    parser.add_argument('--peripheral', action='store_true', help='add the BareBLE-HRM peripheral')
    parser.add_argument('--advertiser', action='store_true', help='add the BareBLE-Beacon advertiser')
    parser.add_argument('--scanner', action='store_true',
                        help='add the BareBLE-Scanner, which logs every advertisement it hears')
    parser.add_argument('--central', action='store_true',
                        help='add BareBLE-Central, which connects to an exposed controller and pairs (connect-pair)')
    parser.add_argument('--big-peripheral', action='store_true',
                        help='add BareBLE-Big, a large GATT database for the discovery benchmark')
    parser.add_argument('--hostile', action='store_true',
                        help='add the BareBLE-Hostile peripheral (C4:4B:4D:00:00:20), which breaks the protocol on request')
    parser.add_argument('--iphone', action='store_true',
                        help='add the emulated iPhone "iphone" (C4:4B:4D:00:03:01): ANCS/AMS provider, connects to an ANCS solicitation')
    parser.add_argument('--beacons', type=int, default=0, metavar='N',
                        help='add N non-connectable iBeacons, C4:4B:4D:00:01:01 ... (minor 1 ... N)')
    parser.add_argument('--btsnoop', metavar='DIR', help='record each exposed transport here')
    parser.add_argument('--lifetime', type=float, default=600, metavar='SECONDS',
                        help='watchdog: exit after this long (default 600)')
    parser.add_argument('--verbose', action='store_true', help='debug logging on stderr')
    options = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if options.verbose else logging.WARNING,
                        stream=sys.stderr, format='%(asctime)s %(name)s %(levelname)s %(message)s')
    logger.setLevel(logging.DEBUG if options.verbose else logging.WARNING)
    asyncio.run(Radio(options).run())


if __name__ == '__main__':
    main()
