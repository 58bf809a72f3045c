"""Pairing on the peers: settings from control lines, a delegate the test drives, and
events for the method Bumble chose, the keys it produced and every failure.

Bumble decides the method itself (its own copy of Core Vol 3 Part H Table 2.8); the
`pairing-complete` event reports that choice, so a test compares BareBLE's method with
an independent implementation's. A peer can also be told to stop answering SMP after N
PDUs of its own (`pairing-stall`), to exercise the 30 s SMP timeout.
"""

from __future__ import annotations

import asyncio
import logging
import os

from bumble import hci, smp
from bumble.pairing import PairingConfig, PairingDelegate

logger = logging.getLogger(__name__)

IO_CAPABILITIES = {
    'display-only': PairingDelegate.DISPLAY_OUTPUT_ONLY,
    'display-yesno': PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT,
    'keyboard-only': PairingDelegate.KEYBOARD_INPUT_ONLY,
    'no-input-no-output': PairingDelegate.NO_OUTPUT_NO_INPUT,
    'keyboard-display': PairingDelegate.DISPLAY_OUTPUT_AND_KEYBOARD_INPUT,
}

METHOD_NAMES = {
    smp.PairingMethod.JUST_WORKS: 'just-works',
    smp.PairingMethod.NUMERIC_COMPARISON: 'numeric-comparison',
    smp.PairingMethod.PASSKEY: 'passkey',
    smp.PairingMethod.OOB: 'oob',
}


def _install_hooks() -> None:
    """Record the method on the connection; drop SMP PDUs of a stalled peer."""
    if getattr(smp.Session, '_bareble_hooked', False):
        return
    smp.Session._bareble_hooked = True
    decide = smp.Session.decide_pairing_method

    def decide_pairing_method(self, *args, **kwargs):
        decide(self, *args, **kwargs)
        self.connection.bareble_pairing = {
            'method': METHOD_NAMES.get(self.pairing_method, str(self.pairing_method)),
            'sc': bool(self.sc), 'bonding': bool(self.bonding),
            'passkey_display': bool(getattr(self, 'passkey_display', False)),
        }

    smp.Session.decide_pairing_method = decide_pairing_method
    send = smp.Manager.send_command

    def send_command(self, connection, command):
        control = getattr(self.device, 'bareble_pairing_control', None)
        if control is not None and isinstance(command, smp.SMP_Signing_Information_Command):
            # Bumble 0.0.236 distributes an all-zero CSRK (its "FIXME: testing"): ours is
            # the peer's own, random unless `pairing PEER csrk=zero`.
            command = smp.SMP_Signing_Information_Command(signature_key=control.csrk)
        if control is not None and control.stall_after is not None:
            sent = getattr(connection, 'bareble_smp_sent', 0)
            connection.bareble_smp_sent = sent + 1
            if sent >= control.stall_after:
                control.log(event='smp-dropped', peer=control.name, command=type(command).__name__)
                return
        send(self, connection, command)

    smp.Manager.send_command = send_command


class RadioPairingDelegate(PairingDelegate):
    def __init__(self, control: 'PairingControl', connection) -> None:
        super().__init__(io_capability=IO_CAPABILITIES[control.io],
                         local_initiator_key_distribution=control.key_distribution(),
                         local_responder_key_distribution=control.key_distribution())
        self.control = control
        self.connection = connection

    def _log(self, **event) -> None:
        self.control.log(peer=self.control.name, address=str(self.connection.peer_address), **event)

    async def accept(self) -> bool:
        return True

    async def confirm(self, auto: bool = False) -> bool:
        self._log(event='pairing-confirm', auto=auto)
        return self.control.confirm

    async def compare_numbers(self, number: int, digits: int) -> bool:
        self._log(event='pairing-compare', number=number)
        return self.control.confirm

    async def get_number(self) -> int | None:
        self._log(event='pairing-passkey-request')
        if self.control.passkey is not None:
            return self.control.passkey
        if self.control.queued_passkeys:
            return self.control.queued_passkeys.pop(0)
        future = asyncio.get_running_loop().create_future()
        self.control.passkey_futures.append(future)
        return await future

    async def generate_passkey(self) -> int:
        if self.control.passkey is not None:
            return self.control.passkey
        return await super().generate_passkey()

    async def display_number(self, number: int, digits: int) -> None:
        self._log(event='pairing-display', number=number)


class PairingControl:
    """A peer's pairing settings (control line `pairing PEER key=value ...`)."""

    def __init__(self, peer, log) -> None:
        _install_hooks()
        self.name = peer.name
        self.log = log
        self.io = 'no-input-no-output'
        self.sc = True
        self.mitm = True
        self.bonding = True
        self.confirm = True
        self.passkey: int | None = None
        self.stall_after: int | None = None
        self.passkey_futures: list[asyncio.Future] = []
        # A `passkey` line that came before Bumble asked: the next question gets it.
        self.queued_passkeys: list[int] = []
        # The CSRK this peer distributes (least significant octet first, as SMP carries it)
        # and the SignCounter of its next signed write (`central NAME signed-write`).
        self.csrk = os.urandom(16)
        self.sign_counter = 0
        device = peer.device
        device.bareble_pairing_control = self
        device.pairing_config_factory = self.config_for
        device.on(device.EVENT_CONNECTION, self.on_connection)

    def key_distribution(self) -> int:
        if not self.bonding:
            return 0
        return (PairingDelegate.KeyDistribution.DISTRIBUTE_ENCRYPTION_KEY
                | PairingDelegate.KeyDistribution.DISTRIBUTE_IDENTITY_KEY
                | PairingDelegate.KeyDistribution.DISTRIBUTE_SIGNING_KEY)

    def config_for(self, connection) -> PairingConfig:
        return PairingConfig(sc=self.sc, mitm=self.mitm, bonding=self.bonding,
                             delegate=RadioPairingDelegate(self, connection),
                             identity_address_type=hci.Address.RANDOM_DEVICE_ADDRESS)

    def configure(self, *settings: str) -> dict:
        for setting in settings:
            key, _, value = setting.partition('=')
            if key == 'io':
                if value not in IO_CAPABILITIES:
                    raise ValueError(f'io must be one of {", ".join(IO_CAPABILITIES)}')
                self.io = value
            elif key in ('sc', 'mitm', 'bonding', 'confirm'):
                setattr(self, key, value in ('1', 'yes', 'true', 'on'))
            elif key == 'passkey':
                self.passkey = None if value in ('', 'none', 'ask') else int(value)
            elif key == 'stall':
                self.stall_after = None if value in ('', 'none', 'off') else int(value)
            elif key == 'csrk':
                if value not in ('zero', 'random'):
                    raise ValueError('csrk must be zero or random')
                self.csrk = bytes(16) if value == 'zero' else os.urandom(16)
            else:
                raise ValueError(f'unknown pairing setting {key!r}')
        return dict(io=self.io, sc=self.sc, mitm=self.mitm, bonding=self.bonding,
                    confirm=self.confirm, passkey=self.passkey, stall=self.stall_after)

    def enter_passkey(self, value: int) -> dict:
        waiting = [f for f in self.passkey_futures if not f.done()]
        self.passkey_futures = []
        for future in waiting:
            future.set_result(value)
        if not waiting:
            self.queued_passkeys.append(value)
        return dict(delivered=len(waiting), queued=not waiting)

    def on_connection(self, connection) -> None:
        connection.bareble_smp_sent = 0
        address = str(connection.peer_address)

        def on_pairing(keys) -> None:
            details = getattr(connection, 'bareble_pairing', {})
            self.log(event='pairing-complete', peer=self.name, address=address, **details,
                     identity=str(connection.peer_address), keys=_keys_json(keys))

        def on_pairing_failure(reason) -> None:
            self.log(event='pairing-failed', peer=self.name, address=address, reason=int(reason),
                     **getattr(connection, 'bareble_pairing', {}))

        def on_encryption_change(*_args) -> None:
            self.log(event='encryption-change', peer=self.name, address=address,
                     encrypted=bool(connection.encryption))

        def on_encryption_failure(error) -> None:
            self.log(event='encryption-failure', peer=self.name, address=address, error=str(error))

        def on_security_request(auth_req) -> None:
            self.log(event='security-request', peer=self.name, address=address, auth_req=int(auth_req))
            # Bumble leaves the answer to the application: a central with a bond for this
            # peripheral encrypts with it (Core Vol 3 Part H 2.4.6), else it pairs.
            custom = getattr(connection.device, 'bareble_answer_security_request', None)
            if connection.role == hci.Role.CENTRAL and custom is not None:
                # A peer with its own rule (the emulated iPhone: one encryption per link,
                # whatever asks for it).
                asyncio.ensure_future(custom(connection))
            elif connection.role == hci.Role.CENTRAL:
                async def answer() -> None:
                    keystore = connection.device.keystore
                    bonded = keystore is not None and await keystore.get(str(connection.peer_address)) is not None
                    try:
                        if bonded:
                            await connection.encrypt()
                        else:
                            await connection.pair()
                    except Exception as error:  # reported by pairing-failed / encryption-failure
                        logger.debug('answering a security request failed: %s', error)
                asyncio.ensure_future(answer())

        connection.on(connection.EVENT_SECURITY_REQUEST, on_security_request)
        connection.on(connection.EVENT_PAIRING, on_pairing)
        connection.on(connection.EVENT_PAIRING_FAILURE, on_pairing_failure)
        connection.on(connection.EVENT_CONNECTION_ENCRYPTION_CHANGE, on_encryption_change)
        connection.on(connection.EVENT_CONNECTION_ENCRYPTION_FAILURE, on_encryption_failure)


def _key_hex(key) -> str | None:
    return None if key is None else bytes(key.value).hex()


def _keys_json(keys) -> dict:
    result = {'ltk': _key_hex(keys.ltk), 'ltk_central': _key_hex(keys.ltk_central),
              'ltk_peripheral': _key_hex(keys.ltk_peripheral), 'irk': _key_hex(keys.irk),
              'csrk': _key_hex(keys.csrk)}
    for name in ('ltk', 'ltk_central', 'ltk_peripheral'):
        key = getattr(keys, name)
        if key is not None:
            result[name + '_ediv'] = key.ediv
            result[name + '_rand'] = None if key.rand is None else bytes(key.rand).hex()
            result['authenticated'] = bool(key.authenticated)
    return result
