"""The emulated iPhone: a Notification Provider (ANCS) and media source (AMS) that
behaves like iOS towards a Notification Consumer (BareBLE's peripheral role).

As an iPhone does, it is the LE central: it scans for an advertiser that solicits
ANCS (AD type 0x15 with 7905F431-...), connects from a fresh resolvable private address
of its IRK, exchanges a 185-byte MTU, encrypts at once with a stored bond or else
explores the consumer's GATT server and pairs (Secure Connections, bonding) when a read
is refused with Insufficient Authentication/Encryption or the consumer sends a Security
Request. Its GATT server has GAP, GATT (Service Changed), ANCS and AMS; the ANCS and
AMS characteristics and their CCCDs require encryption ("all these characteristics
require authorization", Apple's ANCS specification) and, by default, both services are
published only once the link is encrypted, announced by a Service Changed indication
("the NC should look for and subscribe to the Service Changed characteristic ... to
monitor for the potential publishing and unpublishing of the ANCS").

The protocol bytes are decided in radio_ancs.py; this file carries them and runs the
control actions (`iphone NAME ACTION ...`, README.md "Emulated iPhone").
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import struct

from bumble import att, gatt, hci
from bumble.core import AdvertisingData, PhysicalTransport
from bumble.device import Peer as BumblePeer

import radio_ancs as ancs
from radio_gatt import CCCD, uuid_text
from radio_peers import GattPeer

logger = logging.getLogger(__name__)

IPHONE_ADDRESS_PREFIX = 'C4:4B:4D:00:03'
IPHONE_MTU = 185
CONNECT_TIMEOUT = 30.0
REQUEST_TIMEOUT = 25.0  # below BareBLE's 30 s ATT timeout
SECURITY_TIMEOUT = 90.0  # passkey entry waits for a control line; CI loads the pool
INDICATION_TIMEOUT = 5.0
RECONNECT_TIMEOUT = 60.0
# A phone's buffers are finite: a burst waits while this many of its ACL packets wait for
# the controller, so an answer (a Control Point's Write Response) never queues behind a
# whole burst and outlasts the consumer's 30 s ATT timeout on a slow (loaded) radio.
BURST_AHEAD = 32
MAX_BURST = 100_000

ANCS_SERVICE = gatt.GATT_ANCS_SERVICE
NOTIFICATION_SOURCE = gatt.GATT_ANCS_NOTIFICATION_SOURCE_CHARACTERISTIC
CONTROL_POINT = gatt.GATT_ANCS_CONTROL_POINT_CHARACTERISTIC
DATA_SOURCE = gatt.GATT_ANCS_DATA_SOURCE_CHARACTERISTIC
AMS_SERVICE = gatt.GATT_AMS_SERVICE
REMOTE_COMMAND = gatt.GATT_AMS_REMOTE_COMMAND_CHARACTERISTIC
ENTITY_UPDATE = gatt.GATT_AMS_ENTITY_UPDATE_CHARACTERISTIC
ENTITY_ATTRIBUTE = gatt.GATT_AMS_ENTITY_ATTRIBUTE_CHARACTERISTIC
ANCS_UUID_BYTES = bytes(ANCS_SERVICE.uuid_bytes)  # little-endian, as in AD structures

HANDLE_VALUE_NOTIFICATION = 0x1B
INSUFFICIENT_AUTHENTICATION, INSUFFICIENT_ENCRYPTION = 0x05, 0x0F
WRITE_NOT_PERMITTED = 0x03

Properties = gatt.Characteristic.Properties
Permissions = att.Attribute.Permissions
SECURE_READ = Permissions.READABLE | Permissions.READ_REQUIRES_ENCRYPTION
SECURE_WRITE = Permissions.WRITEABLE | Permissions.WRITE_REQUIRES_ENCRYPTION

# AMS (Apple Media Service): entities, attributes, remote commands, errors.
PLAYER, QUEUE, TRACK = 0, 1, 2
ENTITY_NAMES = ['player', 'queue', 'track']
MEDIA_ATTRIBUTES = [
    ['name', 'playback', 'volume'],
    ['queue_index', 'queue_count', 'shuffle', 'repeat'],
    ['artist', 'album', 'title', 'duration'],
]
REMOTE_COMMANDS = ['play', 'pause', 'toggle-play-pause', 'next-track', 'previous-track', 'volume-up',
                   'volume-down', 'advance-repeat-mode', 'advance-shuffle-mode', 'skip-forward',
                   'skip-backward', 'like-track', 'dislike-track', 'bookmark-track']
AMS_INVALID_STATE, AMS_INVALID_COMMAND, AMS_ABSENT_ATTRIBUTE = 0xA0, 0xA1, 0xA2
TRUNCATED = 1
MEDIA_KEYS = {'player', 'state', 'rate', 'elapsed', 'volume', 'queue_index', 'queue_count', 'shuffle', 'repeat',
              'artist', 'album', 'title', 'duration'}


def solicits_ancs(advertisement) -> bool:
    for ad_type, payload in advertisement.data.ad_structures:
        if ad_type == AdvertisingData.LIST_OF_128_BIT_SERVICE_SOLICITATION_UUIDS:
            if any(payload[i:i + 16] == ANCS_UUID_BYTES for i in range(0, len(payload) - 15, 16)):
                return True
    return False


def parse_json(text: str) -> dict:
    value = json.loads(text) if text.strip() else {}
    if not isinstance(value, dict):
        raise ValueError('expected a JSON object')
    return value


class Left(Exception):
    """The phone went away (`leave`) while it was scanning."""


class Media:
    """The now-playing state AMS reports, as the strings AMS sends."""

    def __init__(self) -> None:
        self.state = dict(player='Music', state=0, rate=1.0, elapsed=0.0, volume=0.5, queue_index=0,
                          queue_count=0, shuffle=0, repeat=0, artist='', album='', title='', duration=0.0)

    def value(self, entity: int, attribute: int) -> bytes:
        s = self.state
        values = [
            [s['player'], f"{s['state']},{s['rate']},{s['elapsed']}", str(s['volume'])],
            [str(s['queue_index']), str(s['queue_count']), str(s['shuffle']), str(s['repeat'])],
            [s['artist'], s['album'], s['title'], str(s['duration'])],
        ]
        return values[entity][attribute].encode()

    def update(self, fields: dict) -> set[tuple[int, int]]:
        """Applies the fields; returns the (entity, attribute) pairs whose value changed."""
        unknown = set(fields) - MEDIA_KEYS
        if unknown:
            raise ValueError(f'unknown media field(s) {sorted(unknown)}; known: {sorted(MEDIA_KEYS)}')
        before = {(e, a): self.value(e, a) for e in range(3) for a in range(len(MEDIA_ATTRIBUTES[e]))}
        self.state.update(fields)
        return {key for key, value in before.items() if self.value(*key) != value}


class EmulatedIPhone(GattPeer):
    def __init__(self, index: int, name: str, link, log, mtu: int = IPHONE_MTU, publish: str = 'encrypted',
                 present: bool = True, exchange: bool = True) -> None:
        if publish not in ('encrypted', 'always'):
            raise ValueError('publish must be encrypted or always')
        super().__init__(name, 'iPhone', f'{IPHONE_ADDRESS_PREFIX}:{index:02X}', link, log)
        # Bumble's default IRK is all zeros; every phone gets its own, the same on every run.
        self.device.irk = hashlib.sha256(f'BareBLE-iPhone-{index}'.encode()).digest()[:16]
        self.mtu = mtu
        self.exchange = exchange
        self.device.gatt_server.max_mtu = mtu
        self.publish_mode = publish
        self.store = ancs.NotificationStore()
        self.media = Media()
        self.sharing = True
        self.hostile_mode: str | None = None
        self.hostile_left = 0
        self.present = asyncio.Event()
        if present:
            self.present.set()
        self.connection = None
        self.own_address: str | None = None
        self.connected_waiters: list[asyncio.Future] = []
        self.securing: dict[int, asyncio.Future] = {}
        self.after_response: dict[int, list] = {}
        self.media_registrations: dict[int, list[int]] = {}
        self.entity_attribute: tuple[int, int] | None = None
        self.service_changed_bonds: set[str] = set()
        self.published = True
        self.build_database()
        self.hook_responses()
        self.device.bareble_answer_security_request = self.secure
        self.device.gatt_server.on('characteristic_subscription', self.on_subscription)
        self.runner: asyncio.Task | None = None
        self.scanning: asyncio.Future | None = None

    # -- database ----------------------------------------------------------------
    def secure_cccd(self, characteristic) -> gatt.Descriptor:
        """A CCCD that needs an encrypted link, like every ANCS/AMS attribute (Bumble's own
        CCCDs take any write)."""
        return gatt.Descriptor(CCCD, SECURE_READ | SECURE_WRITE,
                               self.device.gatt_server.make_descriptor_value(characteristic))

    def characteristic(self, uuid, properties, permissions, read=None, write=None) -> gatt.Characteristic:
        value = att.AttributeValueV2(read=read, write=write) if (read or write) else b''
        characteristic = gatt.Characteristic(uuid, properties, permissions, value)
        if properties & Properties.NOTIFY:
            characteristic.descriptors = [self.secure_cccd(characteristic)]
        return characteristic

    def build_database(self) -> None:
        c = self.characteristic
        self.notification_source = c(NOTIFICATION_SOURCE, Properties.NOTIFY, Permissions(0))
        self.control_point = c(CONTROL_POINT, Properties.WRITE, SECURE_WRITE, write=self.on_control_point)
        self.data_source = c(DATA_SOURCE, Properties.NOTIFY, Permissions(0))
        self.remote_command = c(REMOTE_COMMAND, Properties.WRITE | Properties.WRITE_WITHOUT_RESPONSE | Properties.NOTIFY,
                                SECURE_WRITE, write=self.on_remote_command)
        self.entity_update = c(ENTITY_UPDATE, Properties.WRITE | Properties.NOTIFY, SECURE_WRITE,
                               write=self.on_entity_update)
        self.entity_attribute_characteristic = c(ENTITY_ATTRIBUTE, Properties.READ | Properties.WRITE,
                                                 SECURE_READ | SECURE_WRITE, read=self.read_entity_attribute,
                                                 write=self.on_entity_attribute)
        self.ancs_service = gatt.Service(ANCS_SERVICE, [self.notification_source, self.control_point, self.data_source])
        self.ams_service = gatt.Service(AMS_SERVICE, [self.remote_command, self.entity_update,
                                                      self.entity_attribute_characteristic])
        self.device.add_services([self.ancs_service, self.ams_service])
        server = self.device.gatt_server
        self.hidden_from = self.ancs_service.handle  # ANCS and AMS are the last services
        self.hidden_attributes = server.attributes[self.hidden_from - 1:]

    def set_published(self, published: bool) -> None:
        """iOS publishes ANCS and AMS on encrypted links only: the services leave the
        database (handles kept for their return, as a stable database does)."""
        server = self.device.gatt_server
        if published == self.published:
            return
        self.published = published
        server.attributes_by_handle.clear()
        if published:
            server.attributes.extend(self.hidden_attributes)
            server.services.extend([self.ancs_service, self.ams_service])
        else:
            del server.attributes[self.hidden_from - 1:]
            server.services = [s for s in server.services if s not in (self.ancs_service, self.ams_service)]

    def hook_responses(self) -> None:
        """Work that must follow a request's response on the air (Data Source answers
        after the Control Point's Write Response, pre-existing notifications after the
        CCCD write's) is queued per link and run right after Bumble sends the response."""
        server = self.device.gatt_server
        send_response = server.send_response

        def send_response_then(bearer, response) -> None:
            send_response(bearer, response)
            for work in self.after_response.pop(getattr(bearer, 'handle', None), []):
                work()

        server.send_response = send_response_then

    def later(self, connection, work) -> None:
        self.after_response.setdefault(connection.handle, []).append(work)

    # -- lifetime ------------------------------------------------------------------
    async def start(self) -> None:
        await self.device.power_on()

    async def after_ready(self) -> None:
        self.gatt.log_database()
        self.set_published(self.publish_mode == 'always')
        self.log(event='iphone', peer=self.name, identity=str(self.address).removesuffix('/P'),
                 irk=self.device.irk[::-1].hex(), mtu=self.mtu, publish=self.publish_mode,
                 present=self.present.is_set())
        self.runner = asyncio.ensure_future(self.run())

    async def run(self) -> None:
        """Present: scan for a consumer, connect, stay until the link drops, again."""
        while True:
            await self.present.wait()
            try:
                target = await self.scan()
                connection = await self.connect(target)
            except Left:
                continue
            except Exception as error:  # a failed attempt is logged; the phone tries again
                self.log(event='connect-failed', peer=self.name, error=type(error).__name__ + ': ' + str(error))
                continue
            await self.session(connection)

    async def scan(self) -> hci.Address:
        found = self.scanning = asyncio.get_running_loop().create_future()

        def on_advertisement(advertisement) -> None:
            if advertisement.is_connectable and solicits_ancs(advertisement) and not found.done():
                found.set_result(advertisement.address)

        self.device.on(self.device.EVENT_ADVERTISEMENT, on_advertisement)
        await self.device.start_scanning(active=False)
        try:
            return await found
        finally:
            self.device.remove_listener(self.device.EVENT_ADVERTISEMENT, on_advertisement)
            await self.device.stop_scanning()

    async def connect(self, target: hci.Address):
        # A new resolvable private address for every connection (iOS rotates its RPA).
        own = hci.Address.generate_private_address(self.device.irk)
        await self.device.send_command(hci.HCI_LE_Set_Random_Address_Command(random_address=own))
        self.device.random_address = own
        self.own_address = own.to_string(False)
        return await self.device.connect(target, transport=PhysicalTransport.LE,
                                         own_address_type=hci.OwnAddressType.RANDOM, timeout=CONNECT_TIMEOUT)

    def on_connection(self, connection) -> None:
        self.connection = connection
        self.log(event='connected', peer=self.name, address=str(connection.peer_address), handle=connection.handle,
                 own_address=self.own_address)

        def on_disconnection(reason) -> None:
            self.log(event='disconnected', peer=self.name, address=str(connection.peer_address), reason=int(reason))

        def on_mtu() -> None:
            self.log(event='mtu', peer=self.name, address=str(connection.peer_address), mtu=connection.att_mtu)

        def on_encryption_change(*_args) -> None:
            if connection.is_encrypted:
                asyncio.ensure_future(self.on_encrypted(connection))

        def on_pairing(_keys) -> None:
            # Encryption starts before the keys are distributed: only now is the
            # consumer known by its identity, which the kept subscription must name.
            if self.service_changed_subscribed(connection):
                self.service_changed_bonds.add(str(connection.peer_address))

        connection.on(connection.EVENT_DISCONNECTION, on_disconnection)
        connection.on(connection.EVENT_PAIRING, on_pairing)
        connection.on(connection.EVENT_CONNECTION_ATT_MTU_UPDATE, on_mtu)
        connection.on(connection.EVENT_CONNECTION_ENCRYPTION_CHANGE, on_encryption_change)
        for waiter in self.connected_waiters:
            if not waiter.done():
                waiter.set_result(connection)
        self.connected_waiters = []

    async def session(self, connection) -> None:
        gone = asyncio.get_running_loop().create_future()
        connection.on(connection.EVENT_DISCONNECTION, lambda reason: gone.done() or gone.set_result(reason))
        if connection.handle not in self.device.connections:  # dropped before we listened
            gone.set_result(None)
        work = asyncio.ensure_future(self.meet(connection))
        await gone
        work.cancel()
        self.after_response.pop(connection.handle, None)
        self.securing.pop(connection.handle, None)
        self.media_registrations.clear()
        self.entity_attribute = None
        if self.connection is connection:
            self.connection = None
        if self.publish_mode == 'encrypted':
            self.set_published(False)

    async def meet(self, connection) -> None:
        """What iOS does on a new link: MTU (unless `exchange=0`), then encryption with the
        bond it has, else a look at the consumer's GATT server, pairing when a read is refused."""
        peer = BumblePeer(connection)
        try:
            if self.exchange:
                await asyncio.wait_for(peer.request_mtu(self.mtu), REQUEST_TIMEOUT)
            if await self.bonded(connection):
                await self.secure(connection)
            await self.explore(peer, connection)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the link went or the consumer stopped answering
            self.log(event='explore-failed', peer=self.name, error=type(error).__name__ + ': ' + str(error))

    async def explore(self, peer, connection) -> None:
        await asyncio.wait_for(peer.discover_services(), REQUEST_TIMEOUT)
        reads = {}
        for service in peer.services:
            await asyncio.wait_for(peer.discover_characteristics(service=service), REQUEST_TIMEOUT)
            for characteristic in service.characteristics:
                if not characteristic.properties & Properties.READ:
                    continue
                uuid = uuid_text(characteristic.uuid)
                reads[uuid] = await self.read(peer, connection, characteristic)
        self.log(event='explored', peer=self.name, services=[uuid_text(s.uuid) for s in peer.services], reads=reads)

    async def read(self, peer, connection, characteristic):
        for attempt in range(2):
            try:
                return (await asyncio.wait_for(peer.read_value(characteristic), REQUEST_TIMEOUT)).hex()
            except att.ATT_Error as error:
                refused = error.error_code in (INSUFFICIENT_AUTHENTICATION, INSUFFICIENT_ENCRYPTION)
                if not refused or attempt or connection.is_encrypted:
                    return dict(error=int(error.error_code))
                self.log(event='refused', peer=self.name, uuid=uuid_text(characteristic.uuid),
                         error=int(error.error_code))
                if not await self.secure(connection):
                    return dict(error=int(error.error_code))

    async def bonded(self, connection) -> bool:
        keystore = self.device.keystore
        return keystore is not None and await keystore.get(str(connection.peer_address)) is not None

    async def secure(self, connection) -> bool:
        """Encrypts the link once, however many reasons ask at the same time (a refused
        read, the consumer's Security Request): with the stored LTK when bonded, never
        pairing again then; else pairs. True when the link ends up encrypted."""
        if connection.is_encrypted:
            return True
        running = self.securing.get(connection.handle)
        if running is None:
            running = self.securing[connection.handle] = asyncio.ensure_future(self.encrypt_or_pair(connection))
        return await asyncio.shield(running)

    async def encrypt_or_pair(self, connection) -> bool:
        bonded = await self.bonded(connection)
        try:
            if bonded:
                await asyncio.wait_for(connection.encrypt(), SECURITY_TIMEOUT)
            else:
                await asyncio.wait_for(connection.pair(), SECURITY_TIMEOUT)
        except Exception as error:  # iOS does not pair again over a failed bond: the user forgets it
            self.log(event='security-failed', peer=self.name, address=str(connection.peer_address),
                     using='bond' if bonded else 'pairing', error=type(error).__name__ + ': ' + str(error))
            return False
        self.log(event='encrypted', peer=self.name, address=str(connection.peer_address),
                 using='bond' if bonded else 'pairing', own_address=self.own_address)
        return bool(connection.is_encrypted)

    async def on_encrypted(self, connection) -> None:
        identity = str(connection.peer_address)
        if self.service_changed_subscribed(connection):
            self.service_changed_bonds.add(identity)
        if self.published:
            return
        self.set_published(True)
        start, end = self.hidden_from, self.hidden_attributes[-1].handle
        event = dict(event='published', peer=self.name, address=identity, start=start, end=end)
        changed = self.device.gatt_service.service_changed_characteristic
        # Service Changed goes to a client subscribed on this link, or to a bonded one
        # that subscribed before (Core Vol 3 Part G 7.1: the configuration persists).
        if self.service_changed_subscribed(connection) or identity in self.service_changed_bonds:
            try:
                await asyncio.wait_for(self.device.gatt_server.indicate_subscriber(
                    connection, changed, struct.pack('<HH', start, end), force=True), INDICATION_TIMEOUT)
                event['service_changed'] = 'confirmed'
            except (asyncio.TimeoutError, TimeoutError):
                event['service_changed'] = 'unconfirmed'
        else:
            event['service_changed'] = 'not-subscribed'
        self.log(**event)

    def service_changed_subscribed(self, connection) -> bool:
        changed = self.device.gatt_service.service_changed_characteristic
        cccd = self.device.gatt_server.subscribers.get(connection, {}).get(changed.handle, b'')
        return len(cccd) == 2 and bool(cccd[0] & 0x02)

    # -- sending -------------------------------------------------------------------
    def subscribed(self, connection, characteristic) -> bool:
        if connection is None or connection.handle not in self.device.connections:
            return False
        cccd = self.device.gatt_server.subscribers.get(connection, {}).get(characteristic.handle, b'')
        return len(cccd) == 2 and bool(cccd[0] & 0x01)

    def send(self, connection, characteristic, value: bytes) -> None:
        """A notification as is: the caller sized it to ATT_MTU - 3 (Bumble would cut it)."""
        pdu = struct.pack('<BH', HANDLE_VALUE_NOTIFICATION, characteristic.handle) + value
        self.device.gatt_server.send_gatt_pdu(connection, pdu)

    async def room_to_send(self) -> None:
        """Returns once at most BURST_AHEAD of the phone's ACL packets wait for the controller
        (or the link is gone); yields to the event loop either way, so a burst nobody is
        subscribed to, which queues nothing, still lets control lines through."""
        await asyncio.sleep(0)
        host = self.device.host
        queue = host.le_acl_packet_queue or host.acl_packet_queue
        while queue is not None and queue.pending > BURST_AHEAD and self.connection is not None:
            flowed = asyncio.get_running_loop().create_future()

            def on_flow() -> None:
                if not flowed.done():
                    flowed.set_result(None)

            queue.on('flow', on_flow)
            try:
                await asyncio.wait_for(flowed, 1.0)  # a link that drops completes nothing
            except asyncio.TimeoutError:
                pass
            finally:
                queue.remove_listener('flow', on_flow)

    def source(self, kind: int, notification, pre_existing: bool = False, log: bool = True) -> bool:
        connection = self.connection
        sent = self.subscribed(connection, self.notification_source)
        count = self.store.count(notification.category)
        if sent:
            self.send(connection, self.notification_source,
                      ancs.source_event(kind, notification, count, pre_existing))
        if log:
            self.log(event='ancs-notification', peer=self.name, kind=ancs.EVENT_NAMES[kind], uid=notification.uid,
                     category=ancs.CATEGORIES[notification.category], category_id=notification.category,
                     count=min(count, 255),
                     flags=[name for bit, name in ancs.FLAG_NAMES.items()
                            if kind != ancs.REMOVED and notification.flags(pre_existing) & bit],
                     sent=sent)
        return sent

    def on_subscription(self, bearer, characteristic, notify: bool, indicate: bool) -> None:
        connection = bearer.connection if att.is_enhanced_bearer(bearer) else bearer
        if characteristic is self.device.gatt_service.service_changed_characteristic and connection.is_encrypted:
            # A bonded client's Service Changed configuration outlives the link.
            identity = str(connection.peer_address)
            if indicate:
                self.service_changed_bonds.add(identity)
            else:
                self.service_changed_bonds.discard(identity)
        if not notify:
            return
        if characteristic is self.notification_source:
            # iOS sends every notification it holds, flagged pre-existing, at subscription.
            def pre_existing() -> None:
                for notification in list(self.store.notifications.values()):
                    self.source(ancs.ADDED, notification, pre_existing=True)
            self.later(connection, pre_existing)
        elif characteristic is self.remote_command:
            def supported() -> None:
                self.send(connection, self.remote_command, bytes(range(len(REMOTE_COMMANDS))))
            self.later(connection, supported)

    # -- ANCS Control Point ------------------------------------------------------------
    def on_control_point(self, bearer, value: bytes) -> None:
        connection = bearer.connection if att.is_enhanced_bearer(bearer) else bearer
        event = dict(event='ancs-command', peer=self.name, raw=bytes(value).hex())
        if not self.sharing:
            self.log(**event, error=WRITE_NOT_PERMITTED, reason='notification sharing is off')
            raise att.ATT_Error(WRITE_NOT_PERMITTED, self.control_point.handle)
        try:
            command = ancs.decode_command(bytes(value))
            event.update(command.describe())
            if command.command == ancs.PERFORM_NOTIFICATION_ACTION:
                notification = ancs.check_action(self.store, command)
                self.later(connection, lambda: self.perform(notification, command.action))
            else:
                response = ancs.respond(self.store, command)
                self.later(connection, lambda: self.answer(connection, command, response))
        except ancs.AncsError as error:
            self.log(**event, error=error.code, reason=str(error))
            raise att.ATT_Error(error.code, self.control_point.handle) from None
        self.log(**event)

    def answer(self, connection, command, response: bytes) -> None:
        mode = None
        if self.hostile_mode and self.hostile_left:
            mode = self.hostile_mode
            self.hostile_left -= 1
            response = ancs.rewrite(response, mode)
        parts = ancs.fragments(response, connection.att_mtu)
        sent = self.subscribed(connection, self.data_source)
        if sent:
            for part in parts:
                self.send(connection, self.data_source, part)
        event = dict(event='ancs-data', peer=self.name, command=ancs.COMMAND_NAMES[command.command],
                     bytes=len(response), fragments=len(parts), mtu=connection.att_mtu, sent=sent)
        if command.uid is not None:
            event['uid'] = command.uid
        if command.app is not None:
            event['app'] = command.app
        if mode:
            event['hostile'] = mode
        self.log(**event)

    def perform(self, notification, action: int) -> None:
        self.log(event='ancs-action', peer=self.name, uid=notification.uid,
                 action='positive' if action == ancs.POSITIVE else 'negative',
                 label=notification.positive if action == ancs.POSITIVE else notification.negative)
        if notification.uid in self.store.notifications:
            self.store.remove(notification.uid)
            self.source(ancs.REMOVED, notification)

    # -- AMS ---------------------------------------------------------------------------
    def on_remote_command(self, bearer, value: bytes) -> None:
        if len(value) != 1 or value[0] >= len(REMOTE_COMMANDS):
            self.log(event='media-command', peer=self.name, raw=bytes(value).hex(), error=AMS_INVALID_COMMAND)
            raise att.ATT_Error(AMS_INVALID_COMMAND, self.remote_command.handle)
        name = REMOTE_COMMANDS[value[0]]
        self.log(event='media-command', peer=self.name, command=name, id=value[0])
        playing = self.media.state['state']
        if name in ('play', 'pause', 'toggle-play-pause'):
            # At once: a command may come as Write Without Response, which has no response to follow.
            state = 1 if name == 'play' or (name == 'toggle-play-pause' and playing != 1) else 0
            self.media_updates(self.media.update(dict(state=state)))

    def on_entity_update(self, bearer, value: bytes) -> None:
        connection = bearer.connection if att.is_enhanced_bearer(bearer) else bearer
        if len(value) < 1 or value[0] > TRACK or any(a >= len(MEDIA_ATTRIBUTES[value[0]]) for a in value[1:]):
            self.log(event='media-register', peer=self.name, raw=bytes(value).hex(), error=AMS_INVALID_COMMAND)
            raise att.ATT_Error(AMS_INVALID_COMMAND, self.entity_update.handle)
        entity, attributes = value[0], list(value[1:])
        self.media_registrations[entity] = attributes
        self.log(event='media-register', peer=self.name, entity=ENTITY_NAMES[entity],
                 attributes=[MEDIA_ATTRIBUTES[entity][a] for a in attributes])
        # iOS answers a registration with the current values at once.
        self.later(connection, lambda: self.media_updates({(entity, a) for a in attributes}))

    def media_updates(self, changed: set[tuple[int, int]]) -> int:
        connection = self.connection
        if not self.subscribed(connection, self.entity_update):
            return 0
        sent = 0
        for entity, attribute in sorted(changed):
            if attribute not in self.media_registrations.get(entity, []):
                continue
            value = self.media.value(entity, attribute)
            room = connection.att_mtu - 3 - 3
            flags = TRUNCATED if len(value) > room else 0
            self.send(connection, self.entity_update, bytes([entity, attribute, flags]) + value[:room])
            self.log(event='media-update', peer=self.name, entity=ENTITY_NAMES[entity],
                     attribute=MEDIA_ATTRIBUTES[entity][attribute], value=value.decode(errors='replace'),
                     truncated=bool(flags))
            sent += 1
        return sent

    def on_entity_attribute(self, bearer, value: bytes) -> None:
        if len(value) != 2 or value[0] > TRACK or value[1] >= len(MEDIA_ATTRIBUTES[value[0]]):
            raise att.ATT_Error(AMS_INVALID_COMMAND, self.entity_attribute_characteristic.handle)
        self.entity_attribute = (value[0], value[1])

    def read_entity_attribute(self, bearer) -> bytes:
        if self.entity_attribute is None:
            raise att.ATT_Error(AMS_ABSENT_ATTRIBUTE, self.entity_attribute_characteristic.handle)
        return self.media.value(*self.entity_attribute)

    # -- control actions (`iphone NAME ACTION ...`) -----------------------------------
    def action_add(self, text: str = '') -> dict:
        notification = self.store.add(parse_json(text))
        return dict(uid=notification.uid, sent=self.source(ancs.ADDED, notification))

    def action_modify(self, text: str) -> dict:
        uid, _, rest = text.strip().partition(' ')
        notification = self.store.modify(int(uid, 0), parse_json(rest))
        return dict(uid=notification.uid, sent=self.source(ancs.MODIFIED, notification))

    def action_remove(self, text: str) -> dict:
        notification = self.store.remove(int(text.strip(), 0))
        return dict(uid=notification.uid, sent=self.source(ancs.REMOVED, notification))

    def action_clear(self, text: str = '') -> dict:
        removed = [self.action_remove(str(uid)) for uid in list(self.store.notifications)]
        return dict(removed=len(removed))

    async def action_burst(self, text: str) -> dict:
        """N notifications added at once (one Notification Source event each, as fast as
        the link takes them); one `ancs-burst` event instead of N `ancs-notification`."""
        count, _, rest = text.strip().partition(' ')
        count = int(count, 0)
        if not 0 < count <= MAX_BURST:
            raise ValueError(f'burst size must be 1-{MAX_BURST}')
        template = parse_json(rest)
        template.pop('uid', None)
        first = last = None
        sent = 0
        for i in range(count):
            fields = dict(template)
            fields.setdefault('title', f'Burst {i + 1}')
            notification = self.store.add(fields)
            first = notification.uid if first is None else first
            last = notification.uid
            sent += self.source(ancs.ADDED, notification, log=False)
            await self.room_to_send()
        self.log(event='ancs-burst', peer=self.name, count=count, first=first, last=last, sent=sent)
        return dict(count=count, first=first, last=last, sent=sent)

    def action_app(self, text: str) -> dict:
        app, _, display = text.strip().partition(' ')
        self.store.apps[app] = display
        return dict(app=app, name=display)

    def action_media(self, text: str) -> dict:
        changed = self.media.update(parse_json(text))
        return dict(changed=len(changed), sent=self.media_updates(changed))

    def action_sharing(self, text: str) -> dict:
        value = text.strip()
        if value not in ('on', 'off'):
            raise ValueError('sharing on|off')
        self.sharing = value == 'on'
        return dict(sharing=self.sharing)

    def action_hostile(self, text: str) -> dict:
        words = text.split()
        if not words or words[0] == 'none':
            self.hostile_mode, self.hostile_left = None, 0
        elif words[0] not in ancs.HOSTILE_MODES:
            raise ValueError(f'unknown mode {words[0]!r}; known: {sorted(ancs.HOSTILE_MODES)} or none')
        else:
            self.hostile_mode = words[0]
            self.hostile_left = int(words[1], 0) if len(words) > 1 else 1
        return dict(mode=self.hostile_mode, responses=self.hostile_left)

    async def action_disconnect(self, text: str = '') -> dict:
        connection = self.connection
        if connection is None:
            raise ValueError(f'{self.name} is not connected')
        await connection.disconnect()
        return dict(handle=connection.handle)

    async def action_leave(self, text: str = '') -> dict:
        """The phone goes away (out of range, Bluetooth off): no link, no scanning."""
        self.present.clear()
        if self.scanning is not None and not self.scanning.done():
            self.scanning.set_exception(Left())
        connection = self.connection
        if connection is not None:
            await connection.disconnect()
        return dict(disconnected=connection is not None)

    def action_return(self, text: str = '') -> dict:
        self.present.set()
        return dict(present=True)

    async def action_reconnect(self, text: str = '') -> dict:
        """Drops the link and waits for the next one (a new RPA, the same bond)."""
        previous = self.own_address
        waiter = asyncio.get_running_loop().create_future()
        self.connected_waiters.append(waiter)
        if self.connection is not None:
            await self.connection.disconnect()
        self.present.set()
        connection = await asyncio.wait_for(waiter, RECONNECT_TIMEOUT)
        return dict(handle=connection.handle, address=str(connection.peer_address), own_address=self.own_address,
                    previous_own_address=previous)

    async def action_forget(self, text: str = '') -> dict:
        keystore = self.device.keystore
        removed = 0
        if keystore is not None:
            for name, _ in await keystore.get_all():
                await keystore.delete(name)
                removed += 1
        self.service_changed_bonds.clear()
        await self.device.refresh_resolving_list()
        return dict(removed=removed)

    async def action_state(self, text: str = '') -> dict:
        keystore = self.device.keystore
        bonds = [name for name, _ in await keystore.get_all()] if keystore is not None else []
        connection = self.connection
        return dict(connected=connection is not None, own_address=self.own_address if connection else None,
                    address=str(connection.peer_address) if connection else None,
                    encrypted=bool(connection and connection.is_encrypted), mtu=connection.att_mtu if connection else None,
                    published=self.published, present=self.present.is_set(), bonds=bonds,
                    notifications=list(self.store.notifications), sharing=self.sharing,
                    subscribed=[name for name, c in (('notification-source', self.notification_source),
                                                     ('data-source', self.data_source),
                                                     ('remote-command', self.remote_command),
                                                     ('entity-update', self.entity_update))
                                if self.subscribed(connection, c)])
