#!/usr/bin/env python3
"""Checks of the emulated iPhone (radio_iphone.py) against an independent Notification
Consumer: a Bumble device on an exposed TCP controller that advertises the ANCS
solicitation, has a characteristic that needs encryption, and runs Bumble's own
AncsClient and AmsClient. Run: python3 tools/virtual-radio/iphone_smoke.py
(also run at the end of smoke_test.py). One line per check; exits non-zero on the
first failure, after the radio's last 30 events. IPHONE_SMOKE_TIMES=1 prefixes each line
with the seconds since start; IPHONE_SMOKE_VERBOSE=1 gives the radio --verbose."""

from __future__ import annotations

import asyncio
import json
import os
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bumble import att, gatt, hci  # noqa: E402
from bumble.core import AdvertisingData  # noqa: E402
from bumble.device import AdvertisingType, Device, DeviceConfiguration, Peer  # noqa: E402
from bumble.host import Host  # noqa: E402
from bumble.pairing import PairingConfig, PairingDelegate  # noqa: E402
from bumble.profiles import ams, ancs  # noqa: E402
from bumble.smp import AddressResolver  # noqa: E402
from bumble.transport import open_transport  # noqa: E402

NC_ADDRESS = 'C4:4B:4D:00:04:01'
SECRET = gatt.UUID('B4AE0401-7E57-4BA2-B1E0-00000000C0DE')
LONG_MESSAGE = ''.join(chr(0x41 + i % 26) for i in range(700)) + ' é€😀 end'  # several 185-byte MTUs
NA = ancs.NotificationAttributeId


EVENTS: list[dict] = []  # the radio's, shown after a failure
START = time.monotonic()


def check(condition: bool, what: str) -> None:
    print(f'{time.monotonic() - START:5.2f} ' * bool(os.environ.get('IPHONE_SMOKE_TIMES')) + ('ok   ' if condition else 'FAIL ') + what, flush=True)
    if not condition:
        for event in EVENTS[-30:]:
            print('     ', json.dumps(event)[:300])
        sys.exit(1)


class RadioProcess:
    """bareble_radio.py with its events collected and its control lines acknowledged."""

    def __init__(self, *arguments: str) -> None:
        self.process = subprocess.Popen([sys.executable, os.path.join(HERE, 'bareble_radio.py'), *arguments],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.ready = json.loads(self.process.stdout.readline())
        self.events = EVENTS
        threading.Thread(target=self.read, daemon=True).start()

    def read(self) -> None:
        for line in self.process.stdout:
            self.events.append(json.loads(line))

    async def find(self, predicate, timeout: float = 5.0, since: int = 0):
        # In a thread: the consumer's Bumble stack runs on this event loop meanwhile.
        return await asyncio.to_thread(self.wait_for_event, predicate, timeout, since)

    def wait_for_event(self, predicate, timeout: float, since: int):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events[since:]:
                if predicate(event):
                    return event
            time.sleep(0.01)
        return None

    async def control(self, line: str, timeout: float = 30.0) -> dict:
        mark = len(self.events)
        self.process.stdin.write(line + '\n')
        self.process.stdin.flush()
        event = await self.find(lambda e: e['event'] in ('ack', 'error') and e.get('command') == line, timeout, mark)
        if event is None or event['event'] != 'ack':
            check(False, f'control {line[:70]!r} acknowledged {event}')
        return event

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=5)


class Consumer:
    """The independent NC: Bumble as LE peripheral on an exposed controller."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.connections: asyncio.Queue = asyncio.Queue()
        self.changes: asyncio.Queue = asyncio.Queue()
        self.secret_required = True
        self.subscribed = asyncio.Event()
        device.on('connection', self.connections.put_nowait)

    async def gone(self, connection) -> None:
        if connection.handle in self.device.connections:
            left = asyncio.get_running_loop().create_future()
            connection.on('disconnection', lambda reason: left.done() or left.set_result(reason))
            await left

    @classmethod
    async def create(cls, port: int) -> 'Consumer':
        transport = await open_transport(f'tcp-client:127.0.0.1:{port}')
        config = DeviceConfiguration(name='Bumble-NC', address=hci.Address(NC_ADDRESS, hci.Address.RANDOM_DEVICE_ADDRESS),
                                     identity_address_type=hci.Address.RANDOM_DEVICE_ADDRESS,
                                     advertising_interval_min=20, advertising_interval_max=40,
                                     irk=bytes(range(0x40, 0x50)))
        device = Device(config=config, host=Host(transport.source, transport.sink))
        consumer = cls(device)

        async def secret(connection) -> bytes:
            if consumer.secret_required and not connection.is_encrypted:
                # Held until our Service Changed subscription is in, so the phone's
                # pairing (and publishing) comes after it, as the check expects.
                await consumer.subscribed.wait()
                raise att.ATT_Error(0x05)  # Insufficient Authentication, as Apple's guidelines ask
            return b'secret'

        device.add_service(gatt.Service(gatt.UUID('B4AE0400-7E57-4BA2-B1E0-00000000C0DE'), [
            gatt.Characteristic(SECRET, gatt.Characteristic.Properties.READ, gatt.Characteristic.READABLE,
                                gatt.CharacteristicValue(read=secret))]))
        keys = (PairingDelegate.KeyDistribution.DISTRIBUTE_ENCRYPTION_KEY
                | PairingDelegate.KeyDistribution.DISTRIBUTE_IDENTITY_KEY)
        device.pairing_config_factory = lambda connection: PairingConfig(
            sc=True, mitm=False, bonding=True, identity_address_type=hci.Address.RANDOM_DEVICE_ADDRESS,
            delegate=PairingDelegate(PairingDelegate.NO_OUTPUT_NO_INPUT, local_initiator_key_distribution=keys,
                                     local_responder_key_distribution=keys))
        await device.power_on()
        await consumer.advertise()
        return consumer

    async def advertise(self) -> str:
        """Connectable advertising with the ANCS solicitation from a fresh resolvable
        private address of our IRK (a consumer with privacy, as BareBLE can be)."""
        device = self.device
        if device.is_advertising:
            await device.stop_advertising()
        address = hci.Address.generate_private_address(device.irk)
        await device.send_command(hci.HCI_LE_Set_Random_Address_Command(random_address=address))
        device.random_address = address
        await device.start_advertising(
            advertising_type=AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE,
            advertising_data=bytes([2, 0x01, 0x06, 17, AdvertisingData.LIST_OF_128_BIT_SERVICE_SOLICITATION_UUIDS])
            + bytes(gatt.GATT_ANCS_SERVICE.uuid_bytes),
            scan_response_data=bytes([10, 0x09]) + b'Bumble-NC',
            own_address_type=hci.OwnAddressType.RANDOM, auto_restart=True)
        return address.to_string(False)

    async def discover(self, connection) -> Peer:
        peer = Peer(connection)
        await peer.discover_services()
        for service in peer.services:
            await peer.discover_characteristics(service=service)
        return peer


def resolves(address: str, irk_most_significant_first: str) -> bool:
    resolver = AddressResolver([(bytes.fromhex(irk_most_significant_first)[::-1],
                                 hci.Address('C4:4B:4D:00:03:01'))])
    return resolver.resolve(hci.Address(address)) is not None


async def att_error(awaitable) -> int | None:
    try:
        await awaitable
    except att.ATT_Error as error:
        return error.error_code
    except ancs.CommandError as error:
        return int(error.error_code)
    return None


async def checks(radio: RadioProcess) -> None:
    phone = await radio.find(lambda e: e['event'] == 'iphone')
    check(phone is not None and phone['mtu'] == 185 and phone['publish'] == 'encrypted', f'iphone event {phone}')
    irk = phone['irk']
    # Notifications the phone holds before anyone connects: every category, one long message.
    uids = {}
    for category in range(12):
        fields = dict(category=category, app='com.apple.MobileSMS', title=f'Title {category}',
                      subtitle=f'Sub {category}', message=f'Message {category}')
        if category == 4:
            fields['message'] = LONG_MESSAGE
        uids[category] = (await radio.control('iphone iphone add ' + json.dumps(fields)))['uid']

    nc = await Consumer.create(radio.ready['tcp'])
    connection = await asyncio.wait_for(nc.connections.get(), 10)
    connected = await radio.find(lambda e: e['event'] == 'connected' and e.get('peer') == 'iphone')
    rpa = connected['own_address']
    check(int(rpa[:2], 16) >> 6 == 1 and resolves(rpa, irk) and str(connection.peer_address).startswith(rpa),
          f'the phone connects from a resolvable private address of its IRK ({rpa})')
    mtu = await radio.find(lambda e: e['event'] == 'mtu' and e.get('peer') == 'iphone')
    check(mtu is not None and mtu['mtu'] == 185, f'MTU 185 exchanged ({mtu})')

    # Before encryption: no ANCS, no AMS; Service Changed is there to subscribe to.
    peer = await nc.discover(connection)
    uuids = {s.uuid for s in peer.services}
    check(gatt.GATT_ANCS_SERVICE not in uuids and gatt.GATT_AMS_SERVICE not in uuids,
          'unencrypted link: ANCS and AMS are not published')
    changed = peer.get_characteristics_by_uuid(gatt.GATT_SERVICE_CHANGED_CHARACTERISTIC)[0]
    await peer.subscribe(changed, nc.changes.put_nowait, prefer_notify=False)
    nc.subscribed.set()

    # The phone reads our secret, is refused, pairs (SC, bonding, its IRK distributed).
    paired = await radio.find(lambda e: e['event'] == 'pairing-complete' and e.get('peer') == 'iphone', 20)
    check(paired is not None and paired['sc'] and paired['bonding'] and paired['keys']['irk'],
          f'refused read -> Secure Connections pairing with bonding and an IRK ({paired and paired["method"]})')
    check(await radio.find(lambda e: e['event'] == 'refused' and e.get('error') == 0x05) is not None,
          'the pairing followed the Insufficient Authentication refusal')
    change = await asyncio.wait_for(nc.changes.get(), 10)
    start, end = struct.unpack('<HH', change)
    published = await radio.find(lambda e: e['event'] == 'published')
    check(connection.is_encrypted and published['service_changed'] == 'confirmed' and (start, end) ==
          (published['start'], published['end']), f'encrypted: Service Changed {start}-{end} publishes ANCS/AMS')
    explored = await radio.find(lambda e: e['event'] == 'explored', 10)
    check(explored is not None and explored['reads'].get('B4AE0401-7E57-4BA2-B1E0-00000000C0DE') == b'secret'.hex(),
          'after pairing the phone reads the secret')

    peer = await nc.discover(connection)
    client = await ancs.AncsClient.for_peer(peer)
    check(client is not None, 'ANCS discovered after the Service Changed indication')
    fragments: list[bytes] = []
    on_data = client._on_data

    def record(data: bytes) -> None:
        fragments.append(bytes(data))
        on_data(data)

    client._on_data = record
    received: list[ancs.Notification] = []
    client.on('notification', received.append)
    await client.start()
    deadline = time.monotonic() + 5
    while len(received) < 12 and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    check(len(received) == 12 and {n.category_id for n in received} == set(range(12))
          and all(n.event_flags & ancs.EventFlags.PRE_EXISTING and n.event_id == ancs.EventId.NOTIFICATION_ADDED
                  for n in received), 'subscription brings the 12 held notifications (every category), pre-existing')
    check(await radio.find(lambda e: e['event'] == 'subscription' and e['peer'] == 'iphone'
                     and e['characteristic'] == '9FBF120D-6301-42D9-8C58-25E699A21DBD') is not None,
          'subscription event for the Notification Source')

    # A message several MTUs long, byte for byte, split at ATT_MTU - 3 with no header repeated.
    fragments.clear()
    long_uid = uids[4]
    attributes = await asyncio.wait_for(client.get_notification_attributes(long_uid, [
        NA.APP_IDENTIFIER, (NA.TITLE, 100), (NA.MESSAGE, 4000), NA.MESSAGE_SIZE, NA.DATE,
        NA.POSITIVE_ACTION_LABEL, NA.NEGATIVE_ACTION_LABEL]), 5)
    values = {a.attribute_id: a.value for a in attributes}
    check(values[NA.MESSAGE] == LONG_MESSAGE, f'message of {len(LONG_MESSAGE.encode())} bytes reassembled byte for byte')
    joined = b''.join(fragments)
    check(len(fragments) >= 4 and all(len(f) == 182 for f in fragments[:-1]) and joined[0] == 0
          and struct.unpack_from('<I', joined, 1)[0] == long_uid and joined.count(bytes([0]) + struct.pack('<I', long_uid)) == 1,
          f'Data Source split in {len(fragments)} fragments of 182 bytes, one header')
    check(values[NA.APP_IDENTIFIER] == 'com.apple.MobileSMS' and values[NA.TITLE] == 'Title 4'
          and values[NA.MESSAGE_SIZE] == len(LONG_MESSAGE.encode()) and values[NA.NEGATIVE_ACTION_LABEL] == 'Clear'
          and values[NA.POSITIVE_ACTION_LABEL] == '', f'the other attributes {values[NA.DATE]}')
    inside_emoji = LONG_MESSAGE.encode().index('😀'.encode()) + 2
    short = await client.get_notification_attributes(long_uid, [(NA.MESSAGE, inside_emoji), (NA.TITLE, 3)])
    check([a.value for a in short] == [LONG_MESSAGE[:LONG_MESSAGE.index('😀')], 'Tit'],
          'attributes truncated to the requested maximum length (at a UTF-8 character boundary)')
    names = await client.get_app_attributes('com.apple.MobileSMS', [ancs.AppAttributeId.DISPLAY_NAME])
    check(names[0].value == 'Messages', 'Get App Attributes: com.apple.MobileSMS is "Messages"')
    command = await radio.find(lambda e: e['event'] == 'ancs-command' and e.get('command') == 'get-app-attributes')
    check(command is not None and command['app'] == 'com.apple.MobileSMS', f'ancs-command event {command}')

    # Bad commands get the ANCS errors.
    write = client._ancs_proxy.control_point.write_value
    check(await att_error(write(bytes([7]), with_response=True)) == 0xA0, 'unknown command ID -> 0xA0')
    check(await att_error(write(bytes([0, 1, 2]), with_response=True)) == 0xA1, 'truncated command -> 0xA1')
    check(await att_error(write(struct.pack('<BIB', 0, long_uid, 1), with_response=True)) == 0xA1,
          'Title without its maximum length -> 0xA1')
    check(await att_error(write(struct.pack('<BIB', 0, 9999, 0), with_response=True)) == 0xA2, 'unknown UID -> 0xA2')
    check(await att_error(client.perform_positive_action(long_uid)) == 0xA3, 'an action it does not offer -> 0xA3')
    await radio.control('iphone iphone state')  # a barrier: every earlier event is read
    commands = sum(1 for e in radio.events if e['event'] == 'ancs-command')
    await write(struct.pack('<BIB', 2, long_uid, 1), with_response=False)  # the Control Point takes no commands
    refused = await att_error(write(bytes([7]), with_response=True))
    held = (await radio.control('iphone iphone state'))['notifications']  # its ack follows every earlier event
    check(refused == 0xA0 and sum(1 for e in radio.events if e['event'] == 'ancs-command') == commands + 1
          and long_uid in held, 'a Write Command to the Control Point is dropped')

    # Added at run time, then an action that removes it.
    mark = len(received)
    added = await radio.control('iphone iphone add {"category": "IncomingCall", "app": "com.apple.mobilephone", "title": "Mum"}')
    call = await await_notification(received, mark, lambda n: n.notification_uid == added['uid'])
    check(call.event_id == ancs.EventId.NOTIFICATION_ADDED and call.category_id == ancs.CategoryId.INCOMING_CALL
          and not call.event_flags & ancs.EventFlags.PRE_EXISTING
          and call.event_flags & ancs.EventFlags.POSITIVE_ACTION, 'notification added at run time (not pre-existing)')
    await radio.control(f'iphone iphone modify {added["uid"]} {{"title": "Mum (2 calls)", "flags": ["important"]}}')
    modified = await await_notification(received, mark, lambda n: n.event_id == ancs.EventId.NOTIFICATION_MODIFIED)
    title = await client.get_notification_attributes(added['uid'], [(NA.TITLE, 50)])
    check(modified is not None and modified.event_flags & ancs.EventFlags.IMPORTANT and title[0].value == 'Mum (2 calls)',
          'modify: a Modified event, then the new title')
    await client.perform_positive_action(added['uid'])
    removed = await await_notification(received, mark, lambda n: n.notification_uid == added['uid']
                                       and n.event_id == ancs.EventId.NOTIFICATION_REMOVED)
    action = await radio.find(lambda e: e['event'] == 'ancs-action')
    check(removed is not None and action['label'] == 'Answer', 'positive action -> Notification Source removed')

    # Hostile Data Source answers.
    await radio.control('iphone iphone hostile wrong-uid')
    try:
        await asyncio.wait_for(client.get_notification_attributes(uids[0], [(NA.TITLE, 20)]), 5)
        outcome = 'answered'
    except ancs.ProtocolError:
        outcome = 'protocol-error'
    check(outcome == 'protocol-error', 'hostile wrong-uid: the consumer sees a response for another UID')
    await radio.control('iphone iphone hostile incomplete')
    try:
        await asyncio.wait_for(client.get_notification_attributes(uids[0], [(NA.TITLE, 20)]), 0.3)
        outcome = 'answered'
    except (asyncio.TimeoutError, TimeoutError):
        outcome = 'timeout'
    check(outcome == 'timeout', 'hostile incomplete: the response never completes')
    attributes = await asyncio.wait_for(client.get_notification_attributes(uids[0], [(NA.TITLE, 20)]), 5)
    check(attributes[0].value == 'Title 0', 'one hostile response only: the next is whole')
    for mode, looks_hostile in (('length-overrun', lambda r: r[5:8] == bytes([NA.TITLE, 0xFF, 0xFF])),
                                ('unknown-command', lambda r: r[0] == 0x7F)):
        await radio.control(f'iphone iphone hostile {mode}')
        fragments.clear()
        try:
            await asyncio.wait_for(client.get_notification_attributes(uids[0], [(NA.TITLE, 20)]), 0.3)
        except (asyncio.TimeoutError, TimeoutError, ancs.ProtocolError):
            pass
        sent = await radio.find(lambda e: e['event'] == 'ancs-data' and e.get('hostile') == mode)
        await wait_until(lambda: fragments)
        check(sent is not None and fragments and looks_hostile(fragments[0]), f'hostile {mode}: {fragments[:1]}')
    await radio.control('iphone iphone sharing off')
    check(await att_error(client.get_notification_attributes(uids[0], [(NA.TITLE, 20)])) == 0x03,
          'sharing off -> Control Point answers 0x03')
    await radio.control('iphone iphone sharing on')

    # AMS: registration answered with the values, updates, remote commands.
    media = await ams.AmsClient.for_peer(peer)
    await media.start()
    await radio.control('iphone iphone media {"title": "Blue in Green", "artist": "Miles Davis"}')
    await media.observe(ams.EntityId.TRACK, [ams.TrackAttributeId.TITLE, ams.TrackAttributeId.ARTIST])
    await wait_until(lambda: media.track_title == 'Blue in Green' and media.track_artist == 'Miles Davis')
    await radio.control('iphone iphone media {"title": "So What"}')
    await wait_until(lambda: media.track_title == 'So What')
    check(media.track_title == 'So What', 'AMS Entity Update: track title and artist, then a change')
    await media.pause()
    check(await radio.find(lambda e: e['event'] == 'media-command' and e.get('command') == 'pause') is not None,
          'AMS remote command logged (pause)')

    # A burst: every event arrives.
    mark = len(received)
    burst = await radio.control('iphone iphone burst 1000 {"category": 6}')
    await wait_until(lambda: len(received) - mark >= 1000, 10)
    check(len(received) - mark == 1000 and burst['sent'] == 1000, f'burst of 1000 added notifications ({len(received) - mark})')

    # Reconnect: new RPA, same bond, no pairing; Service Changed again; notifications flow.
    pairings = sum(1 for e in radio.events if e['event'] == 'pairing-complete')
    mark_events = len(radio.events)
    nc_rpa = await nc.advertise()  # the consumer rotated its address too
    ack = await radio.control('iphone iphone reconnect')
    connection = await asyncio.wait_for(nc.connections.get(), 10)
    check(ack['address'] == 'C4:4B:4D:00:04:01', f'the phone resolves the consumer\'s new RPA {nc_rpa} to its identity')
    new_rpa = ack['own_address']
    check(new_rpa != ack['previous_own_address'] and resolves(new_rpa, irk),
          f'reconnect from a new RPA ({ack["previous_own_address"]} -> {new_rpa})')
    check(str(connection.peer_address) == 'C4:4B:4D:00:03:01', f'the consumer resolves it to the phone ({connection.peer_address})')
    encrypted = await radio.find(lambda e: e['event'] == 'encrypted', 10, mark_events)
    check(encrypted is not None and encrypted['using'] == 'bond', f'encrypted with the bond ({encrypted})')
    published = await radio.find(lambda e: e['event'] == 'published', 10, mark_events)
    check(published is not None and published['service_changed'] == 'confirmed',
          f'Service Changed to the bonded consumer without a new subscription ({published})')
    peer = await nc.discover(connection)
    client = await ancs.AncsClient.for_peer(peer)
    received = []
    client.on('notification', received.append)
    await client.start()
    held = 12 + 1000  # the call was removed by its action
    await wait_until(lambda: len(received) >= held, 10)
    check(len(received) == held and all(n.event_flags & ancs.EventFlags.PRE_EXISTING for n in received),
          f'the {held} held notifications again after the reconnect, pre-existing')
    attributes = await asyncio.wait_for(client.get_notification_attributes(long_uid, [(NA.MESSAGE, 4000)]), 5)
    check(attributes[0].value == LONG_MESSAGE, 'the long message again after the reconnect')
    check(sum(1 for e in radio.events if e['event'] == 'pairing-complete') == pairings, 'no new pairing')
    ack = await radio.control('iphone iphone forget')
    check(ack['removed'] == 1, 'forget drops the bond')
    await radio.control('iphone iphone leave')
    await asyncio.wait_for(nc.gone(connection), 5)

    # A second phone that publishes ANCS before encryption: its CCCDs refuse an
    # unencrypted link, and the consumer's Security Request makes it pair.
    nc.secret_required = False
    ack = await radio.control('add-iphone p2 publish=always')
    connection = await asyncio.wait_for(nc.connections.get(), 10)
    await radio.find(lambda e: e['event'] == 'explored' and e['peer'] == 'p2', 10)
    peer = await nc.discover(connection)
    source = peer.get_characteristics_by_uuid(gatt.GATT_ANCS_NOTIFICATION_SOURCE_CHARACTERISTIC)
    check(len(source) == 1 and not connection.is_encrypted, 'publish=always: ANCS visible on an unencrypted link')
    await peer.discover_descriptors(source[0])
    cccd = source[0].get_descriptor(gatt.GATT_CLIENT_CHARACTERISTIC_CONFIGURATION_DESCRIPTOR)
    check(await att_error(peer.write_value(cccd, b'\x01\x00', with_response=True)) == 0x05,
          'unencrypted CCCD write -> Insufficient Authentication')
    connection.request_pairing()  # SMP Security Request
    paired = await radio.find(lambda e: e['event'] == 'encrypted' and e['peer'] == 'p2', 10)
    check(paired is not None and paired['using'] == 'pairing', f'Security Request -> the phone pairs ({paired})')
    check(await att_error(peer.write_value(cccd, b'\x01\x00', with_response=True)) is None,
          'encrypted: the CCCD write succeeds')


async def await_notification(received: list, mark: int, predicate, timeout: float = 5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for notification in received[mark:]:
            if predicate(notification):
                return notification
        await asyncio.sleep(0.01)
    return None


async def wait_until(predicate, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


def main() -> None:
    radio = RadioProcess('--tcp', '--iphone', *(['--verbose'] if os.environ.get('IPHONE_SMOKE_VERBOSE') else []))
    check(radio.ready['event'] == 'ready' and 'tcp' in radio.ready, f'ready line {radio.ready}')
    asyncio.run(checks(radio))
    radio.close()
    print('all iphone checks passed')


if __name__ == '__main__':
    main()
