"""The Notification Provider side of Apple's Notification Center Service, as iOS
behaves, with no I/O: the notification store, Control Point commands decoded and
answered, Data Source responses built and split, and the hostile rewrites.

The emulated iPhone (radio_iphone.py) carries the bytes; everything that decides
what the bytes are is here. Formats and error codes: Apple's ANCS specification
(Notification Source 8 bytes, Control Point commands 0-2, Data Source responses, errors
0xA0-0xA3). Where the specification is silent, the choice is written next to the code
and in README.md ("Emulated iPhone").
"""

from __future__ import annotations

import dataclasses
import struct

# Event IDs and flags (Notification Source).
ADDED, MODIFIED, REMOVED = 0, 1, 2
EVENT_NAMES = {ADDED: 'added', MODIFIED: 'modified', REMOVED: 'removed'}
SILENT, IMPORTANT, PRE_EXISTING, POSITIVE_ACTION, NEGATIVE_ACTION = 1, 2, 4, 8, 16
FLAG_NAMES = {SILENT: 'silent', IMPORTANT: 'important', PRE_EXISTING: 'pre-existing',
              POSITIVE_ACTION: 'positive-action', NEGATIVE_ACTION: 'negative-action'}

CATEGORIES = ['Other', 'IncomingCall', 'MissedCall', 'Voicemail', 'Social', 'Schedule', 'Email', 'News',
              'HealthAndFitness', 'BusinessAndFinance', 'Location', 'Entertainment']

# Control Point commands and attributes.
GET_NOTIFICATION_ATTRIBUTES, GET_APP_ATTRIBUTES, PERFORM_NOTIFICATION_ACTION = 0, 1, 2
COMMAND_NAMES = {GET_NOTIFICATION_ATTRIBUTES: 'get-notification-attributes',
                 GET_APP_ATTRIBUTES: 'get-app-attributes',
                 PERFORM_NOTIFICATION_ACTION: 'perform-notification-action'}
APP_IDENTIFIER, TITLE, SUBTITLE, MESSAGE, MESSAGE_SIZE, DATE, POSITIVE_LABEL, NEGATIVE_LABEL = range(8)
ATTRIBUTE_NAMES = ['AppIdentifier', 'Title', 'Subtitle', 'Message', 'MessageSize', 'Date',
                   'PositiveActionLabel', 'NegativeActionLabel']
WITH_MAX_LENGTH = (TITLE, SUBTITLE, MESSAGE)
DISPLAY_NAME = 0
POSITIVE, NEGATIVE = 0, 1

# ATT application errors ANCS defines.
UNKNOWN_COMMAND, INVALID_COMMAND, INVALID_PARAMETER, ACTION_FAILED = 0xA0, 0xA1, 0xA2, 0xA3

# What iOS names a few of its own apps (Get App Attributes, Display Name); more with
# `iphone NAME app ID NAME` or an `app_name` key when adding a notification.
KNOWN_APPS = {
    'com.apple.mobilephone': 'Phone',
    'com.apple.MobileSMS': 'Messages',
    'com.apple.mobilemail': 'Mail',
    'com.apple.mobilecal': 'Calendar',
    'com.apple.reminders': 'Reminders',
    'com.apple.news': 'News',
    'com.apple.Health': 'Health',
    'com.apple.Maps': 'Maps',
    'com.apple.facetime': 'FaceTime',
}
DEFAULT_APP = 'com.apple.MobileSMS'
# Labels when a notification is added without `positive`/`negative`: what iOS shows for
# calls, and "Clear" (dismiss) for everything else.
DEFAULT_LABELS = {1: ('Answer', 'Decline'), 2: ('Dial Back', 'Clear'), 3: ('Dial', 'Clear')}
BASE_DATE = (2025, 1, 2, 3, 4, 5)


class AncsError(Exception):
    """A command the NP refuses: the Control Point write gets this ATT error code."""

    def __init__(self, code: int, why: str) -> None:
        super().__init__(why)
        self.code = code


@dataclasses.dataclass
class Notification:
    uid: int
    category: int
    app: str
    title: str = ''
    subtitle: str = ''
    message: str = ''
    date: str = ''
    positive: str = ''
    negative: str = ''
    silent: bool = False
    important: bool = False

    def flags(self, pre_existing: bool = False) -> int:
        return ((SILENT if self.silent else 0) | (IMPORTANT if self.important else 0)
                | (PRE_EXISTING if pre_existing else 0)
                | (POSITIVE_ACTION if self.positive else 0) | (NEGATIVE_ACTION if self.negative else 0))

    def attribute(self, attribute_id: int) -> bytes:
        values = [self.app, self.title, self.subtitle, self.message, str(len(self.message.encode())),
                  self.date, self.positive, self.negative]
        return values[attribute_id].encode()


def truncate_utf8(value: bytes, limit: int) -> bytes:
    """At most `limit` bytes, cut at a character boundary (so the value stays UTF-8)."""
    if len(value) <= limit:
        return value
    cut = limit
    while cut > 0 and (value[cut] & 0xC0) == 0x80:
        cut -= 1
    return value[:cut]


def category_number(value) -> int:
    if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
        number = int(value)
    elif value in CATEGORIES:
        number = CATEGORIES.index(value)
    else:
        raise ValueError(f'category must be 0-11 or one of {", ".join(CATEGORIES)}')
    if not 0 <= number < len(CATEGORIES):
        raise ValueError('category must be 0-11')
    return number


def source_event(kind: int, notification: Notification, count: int, pre_existing: bool = False) -> bytes:
    """A Notification Source GATT notification (8 bytes)."""
    flags = notification.flags(pre_existing) if kind != REMOVED else 0
    return struct.pack('<BBBBI', kind, flags, notification.category, min(count, 255), notification.uid)


class NotificationStore:
    """The phone's notification centre: notifications in the order they arrived."""

    def __init__(self) -> None:
        self.notifications: dict[int, Notification] = {}
        self.next_uid = 1
        self.apps = dict(KNOWN_APPS)

    def count(self, category: int) -> int:
        return sum(1 for n in self.notifications.values() if n.category == category)

    def add(self, fields: dict) -> Notification:
        unknown = set(fields) - {'uid', 'category', 'app', 'app_name', 'title', 'subtitle', 'message', 'date',
                                 'positive', 'negative', 'flags'}
        if unknown:
            raise ValueError(f'unknown notification field(s) {sorted(unknown)}')
        uid = int(fields.get('uid', self.next_uid))
        if not 0 <= uid <= 0xFFFFFFFF:
            raise ValueError('uid must fit 32 bits')
        if uid in self.notifications:
            raise ValueError(f'uid {uid} exists: use modify')
        self.next_uid = max(self.next_uid, uid + 1) & 0xFFFFFFFF
        category = category_number(fields.get('category', 0))
        positive, negative = DEFAULT_LABELS.get(category, ('', 'Clear'))
        year, month, day, hour, minute, second = BASE_DATE
        minute = (minute + uid) % 60  # distinct per notification, still a valid date
        notification = Notification(uid=uid, category=category, app=fields.get('app', DEFAULT_APP),
                                    date=f'{year:04}{month:02}{day:02}T{hour:02}{minute:02}{second:02}',
                                    positive=positive, negative=negative)
        self.apply(notification, fields)
        self.notifications[uid] = notification
        return notification

    def apply(self, notification: Notification, fields: dict) -> None:
        for key in ('app', 'title', 'subtitle', 'message', 'date', 'positive', 'negative'):
            if key in fields:
                setattr(notification, key, fields[key] or '')
        if 'category' in fields:
            notification.category = category_number(fields['category'])
        if 'flags' in fields:
            flags = set(fields['flags'])
            if flags - {'silent', 'important'}:
                raise ValueError('flags may be "silent" and "important" (the others follow from the state)')
            notification.silent, notification.important = 'silent' in flags, 'important' in flags
        if fields.get('app_name'):
            self.apps[notification.app] = fields['app_name']

    def modify(self, uid: int, fields: dict) -> Notification:
        notification = self.get(uid)
        if 'uid' in fields:
            raise ValueError('the uid of a notification does not change')
        self.apply(notification, fields)
        return notification

    def remove(self, uid: int) -> Notification:
        notification = self.get(uid)
        del self.notifications[uid]
        return notification

    def get(self, uid: int) -> Notification:
        if uid not in self.notifications:
            raise ValueError(f'no notification {uid}')
        return self.notifications[uid]


@dataclasses.dataclass
class Command:
    """A decoded Control Point write, as the event log shows it."""
    command: int
    uid: int | None = None
    app: str | None = None
    attributes: list = dataclasses.field(default_factory=list)  # (id, max length or None)
    action: int | None = None

    def describe(self) -> dict:
        described = dict(command=COMMAND_NAMES[self.command])
        if self.uid is not None:
            described['uid'] = self.uid
        if self.app is not None:
            described['app'] = self.app
        if self.command != PERFORM_NOTIFICATION_ACTION:
            described['attributes'] = [
                dict(id=i, name=ATTRIBUTE_NAMES[i] if self.command == GET_NOTIFICATION_ATTRIBUTES else 'DisplayName',
                     **({} if limit is None else {'max': limit}))
                for i, limit in self.attributes]
        if self.action is not None:
            described['action'] = 'positive' if self.action == POSITIVE else 'negative'
        return described


def decode_command(data: bytes) -> Command:
    """A Control Point write, or AncsError with the code iOS answers: 0xA0 for a command ID
    it does not know, 0xA1 for a command that does not parse (too short, an attribute ID
    ANCS does not define, a missing maximum length, an identifier without its NUL, bytes
    after a Perform Notification Action)."""
    if not data:
        raise AncsError(INVALID_COMMAND, 'empty write')
    command = data[0]
    if command == GET_NOTIFICATION_ATTRIBUTES:
        if len(data) < 5:
            raise AncsError(INVALID_COMMAND, 'Get Notification Attributes without a whole UID')
        decoded = Command(command, uid=struct.unpack_from('<I', data, 1)[0])
        i = 5
        while i < len(data):
            attribute = data[i]
            if attribute >= len(ATTRIBUTE_NAMES):
                raise AncsError(INVALID_COMMAND, f'attribute ID {attribute} is not defined')
            if attribute in WITH_MAX_LENGTH:
                if i + 3 > len(data):
                    raise AncsError(INVALID_COMMAND, f'{ATTRIBUTE_NAMES[attribute]} without its maximum length')
                decoded.attributes.append((attribute, struct.unpack_from('<H', data, i + 1)[0]))
                i += 3
            else:
                decoded.attributes.append((attribute, None))
                i += 1
        return decoded
    if command == GET_APP_ATTRIBUTES:
        end = data.find(0, 1)
        if end < 0:
            raise AncsError(INVALID_COMMAND, 'app identifier without its NUL')
        try:
            app = data[1:end].decode()
        except UnicodeDecodeError:
            raise AncsError(INVALID_COMMAND, 'app identifier is not UTF-8') from None
        attributes = list(data[end + 1:])
        if any(a != DISPLAY_NAME for a in attributes):
            raise AncsError(INVALID_COMMAND, 'app attribute IDs other than 0 (Display Name)')
        return Command(command, app=app, attributes=[(a, None) for a in attributes])
    if command == PERFORM_NOTIFICATION_ACTION:
        if len(data) != 6:
            raise AncsError(INVALID_COMMAND, 'Perform Notification Action is 6 bytes')
        return Command(command, uid=struct.unpack_from('<I', data, 1)[0], action=data[5])
    raise AncsError(UNKNOWN_COMMAND, f'command ID {command}')


def attribute_tuple(attribute_id: int, value: bytes) -> bytes:
    return struct.pack('<BH', attribute_id, len(value)) + value


def respond(store: NotificationStore, command: Command) -> bytes:
    """The whole Data Source response for a Get command (0xA2 when it names a
    notification that is not there). An unknown app gets an empty Display Name, as iOS
    answers for an identifier it has no app for."""
    if command.command == GET_NOTIFICATION_ATTRIBUTES:
        if command.uid not in store.notifications:
            raise AncsError(INVALID_PARAMETER, f'no notification {command.uid}')
        notification = store.notifications[command.uid]
        body = b''
        for attribute, limit in command.attributes:
            value = notification.attribute(attribute)
            if limit is not None:
                value = truncate_utf8(value, limit)
            body += attribute_tuple(attribute, value)
        return struct.pack('<BI', command.command, command.uid) + body
    name = store.apps.get(command.app, '').encode()
    return (bytes([command.command]) + command.app.encode() + b'\0'
            + b''.join(attribute_tuple(a, name) for a, _ in command.attributes))


def check_action(store: NotificationStore, command: Command) -> Notification:
    """Perform Notification Action: 0xA2 for an unknown UID or action ID, 0xA3 when the
    notification has no such action (its flags did not offer it)."""
    if command.uid not in store.notifications:
        raise AncsError(INVALID_PARAMETER, f'no notification {command.uid}')
    if command.action not in (POSITIVE, NEGATIVE):
        raise AncsError(INVALID_PARAMETER, f'action ID {command.action}')
    notification = store.notifications[command.uid]
    if not (notification.positive if command.action == POSITIVE else notification.negative):
        raise AncsError(ACTION_FAILED, 'the notification offers no such action')
    return notification


def fragments(response: bytes, mtu: int) -> list[bytes]:
    """Data Source notifications: the response cut every ATT_MTU - 3 bytes, no header
    repeated (the NC reassembles until every requested attribute has arrived)."""
    size = mtu - 3
    return [response[i:i + size] for i in range(0, len(response), size)] or [b'']


HOSTILE_MODES = {
    # The response loses its last byte: the NC waits for a fragment that never comes.
    'incomplete',
    # The response names another notification (UID + 1, modulo 2^32).
    'wrong-uid',
    # The first attribute's length says 65535: it runs past the data.
    'length-overrun',
    # The response carries command ID 0x7F, which the NC never sent.
    'unknown-command',
}
UNKNOWN_COMMAND_ID = 0x7F


def rewrite(response: bytes, mode: str) -> bytes:
    if mode == 'incomplete':
        return response[:-1]
    if mode == 'wrong-uid' and response[0] == GET_NOTIFICATION_ATTRIBUTES:
        uid = (struct.unpack_from('<I', response, 1)[0] + 1) & 0xFFFFFFFF
        return response[:1] + struct.pack('<I', uid) + response[5:]
    if mode == 'wrong-uid':  # an app response: another app identifier
        return response[:1] + b'x' + response[1:]
    if mode == 'length-overrun':
        start = 5 if response[0] == GET_NOTIFICATION_ATTRIBUTES else response.index(0, 1) + 1
        if len(response) >= start + 3:
            return response[:start + 1] + struct.pack('<H', 0xFFFF) + response[start + 3:]
        return response + bytes([TITLE]) + struct.pack('<H', 0xFFFF)
    if mode == 'unknown-command':
        return bytes([UNKNOWN_COMMAND_ID]) + response[1:]
    return response
