"""GATT checks of the radio's peers, run by smoke_test.py: a Bumble host on a
fresh exposed TCP controller (so the traffic also crosses the exposed
controller and lands in its btsnoop) connects to the HRM peripheral as a GATT
client and checks the database, the events and the control lines."""

from __future__ import annotations

import asyncio
import struct

from bumble import att, hci
from bumble.device import Device
from bumble.transport import open_transport

from radio_explore import discover_includes
from radio_gatt import uuid_text

HRM = hci.Address('C4:4B:4D:00:00:01', hci.Address.RANDOM_DEVICE_ADDRESS)
CLIENT_ADDRESS = 'C4:4B:4D:00:00:10'
BASE = '-7E57-4BA2-B1E0-00000000C0DE'
LONG, READ_WRITE, WRITE_NR, NOTIFY, INDICATE, ENCRYPTED = (f'B4AE000{n}{BASE}' for n in range(2, 8))


async def gatt_checks(port: int, check, find_event, control, events) -> None:
    async def event(predicate, timeout=2.0):
        return await asyncio.to_thread(find_event, predicate, timeout)

    async def command(line: str):
        return await asyncio.to_thread(control, line)

    database = await event(lambda e: e['event'] == 'gatt-database' and e['peer'] == 'peripheral')
    check(database is not None and database['database_hash'], 'gatt-database event for the peripheral')
    transport = await open_transport(f'tcp-client:127.0.0.1:{port}')
    device = Device.with_hci('gatt-smoke', hci.Address(CLIENT_ADDRESS), transport.source, transport.sink)
    await device.power_on()
    connection = await device.connect(HRM, timeout=5)
    client = connection.gatt_client
    sent = 0
    send = client.send_gatt_pdu

    def counting_send(pdu: bytes) -> None:
        nonlocal sent
        sent += 1
        send(pdu)

    client.send_gatt_pdu = counting_send
    mark = len(events)

    # Discovery against the peer's own truth (MTU 23: no exchange).
    services = await client.discover_services()
    discovered = []
    for service in services:
        includes = await discover_includes(client, service)
        characteristics = await client.discover_characteristics([], service)
        entry = dict(handle=service.handle, end=service.end_group_handle, uuid=uuid_text(service.uuid),
                     includes=[dict(handle=h, start=s, end=e, uuid=uuid_text(u)) for h, s, e, u in includes],
                     characteristics=[])
        for characteristic in characteristics:
            descriptors = await client.discover_descriptors(characteristic)
            entry['characteristics'].append(dict(
                value_handle=characteristic.handle, uuid=uuid_text(characteristic.uuid),
                properties=int(characteristic.properties),
                descriptors=[dict(handle=d.handle, uuid=uuid_text(d.type)) for d in descriptors]))
        discovered.append(entry)
    truth = [dict(handle=s['handle'], end=s['end'], uuid=s['uuid'], includes=s['includes'],
                  characteristics=[dict(value_handle=c['value_handle'], uuid=c['uuid'], properties=c['properties'],
                                        descriptors=[dict(handle=d['handle'], uuid=d['uuid']) for d in c['descriptors']])
                                   for c in s['characteristics']])
             for s in database['services'] if s['primary']]
    check(discovered == truth, f'discovery matches the gatt-database event ({len(discovered)} primary services)')
    test_service = next(s for s in database['services'] if s['uuid'] == f'B4AE0001{BASE}')
    check([i['uuid'] for i in test_service['includes']] == ['1804', f'B4AE0101{BASE}'],
          'test service includes Tx Power (secondary, 16-bit) and B4AE0101 (128-bit)')
    secondary = next(s for s in database['services'] if not s['primary'])
    check(secondary['uuid'] == '1804' and test_service['includes'][0]['start'] == secondary['handle'],
          'the 16-bit include points at the secondary Tx Power service')

    def find(uuid: str):
        return client.get_characteristics_by_uuid(att.UUID(uuid))[0]

    # Long read: 512 bytes at MTU 23 (a Read and 23 Read Blobs).
    value = await client.read_value(find(LONG))
    check(value == bytes(i % 256 for i in range(512)), 'long value: 512 bytes, byte i = i mod 256')
    blobs = await event(lambda e: sum(1 for x in events[mark:] if x['event'] == 'att-request' and x['opcode'] == 0x0C) >= 23)
    check(blobs is not None, 'att-request events show the 23 Read Blob requests')

    # Writes.
    rw = find(READ_WRITE)
    await client.write_value(rw, b'hello', with_response=True)
    check(await client.read_value(rw) == b'hello', 'write with response, then read back')
    written = await event(lambda e: e['event'] == 'gatt-write' and e['uuid'] == READ_WRITE and e['value'] == b'hello'.hex())
    check(written is not None and written['with_response'] and written['handle'] == rw.handle,
          f'gatt-write event for the write request {written}')
    long_write = bytes(range(100))
    await client.write_value(rw, long_write, with_response=True)  # > MTU - 3: prepared writes
    check(await client.read_value(rw) == long_write, 'long write (prepare + execute), then read back')
    written = await event(lambda e: e['event'] == 'gatt-write' and e['uuid'] == READ_WRITE and e.get('prepared'))
    check(written is not None and written['value'] == long_write.hex(), 'gatt-write event for the long write')
    await client.write_value(find(WRITE_NR), b'\x01\x02\x03', with_response=False)
    written = await event(lambda e: e['event'] == 'gatt-write' and e['uuid'] == WRITE_NR)
    check(written is not None and written['value'] == '010203' and not written['with_response'],
          'gatt-write event for the write command')

    async def att_error(coroutine) -> int | None:
        try:
            await coroutine
        except att.ATT_Error as error:
            return error.error_code
        return None

    battery = client.get_characteristics_by_uuid(att.UUID.from_16_bits(0x2A19))[0]
    check(await att_error(client.write_value(battery, b'\x01', with_response=True)) == 0x03,
          'write to the read-only Battery Level -> Write Not Permitted')
    check(await client.read_value(battery) == bytes([87]), 'Battery Level still 87')
    service_changed = client.get_characteristics_by_uuid(att.UUID.from_16_bits(0x2A05))[0]
    check(await att_error(client.read_value(service_changed)) == 0x02, 'read Service Changed -> Read Not Permitted')
    check(await att_error(client.read_value(find(ENCRYPTED))) == 0x05,
          'unpaired read of the encrypted value -> Insufficient Authentication')
    check(await att_error(client.read_value(0x7FFF)) == 0x01, 'read of a missing handle -> Invalid Handle')

    # PDUs Bumble's server would raise on or ignore are answered.
    answers: asyncio.Queue = asyncio.Queue()
    receive = client.on_gatt_pdu
    client.on_gatt_pdu = lambda pdu: answers.put_nowait(bytes(pdu)) if pdu.op_code == 0x01 else receive(pdu)
    client.send_gatt_pdu(b'\x0a')  # Read Request without its handle
    check(await asyncio.wait_for(answers.get(), 2) == bytes.fromhex('010a000004'), 'truncated Read Request -> Invalid PDU')
    client.send_gatt_pdu(b'\x3c\x01\x00')  # an undefined request opcode
    check(await asyncio.wait_for(answers.get(), 2) == bytes.fromhex('013c000006'), 'unknown request -> Request Not Supported')
    client.on_gatt_pdu = receive
    invalid = await event(lambda e: e['event'] == 'att-invalid' and e['opcode'] == 0x0A)
    check(invalid is not None, 'att-invalid event for the truncated request')

    # Notifications and indications triggered by control lines.
    notified: asyncio.Queue = asyncio.Queue()
    await client.subscribe(find(NOTIFY), notified.put_nowait, prefer_notify=True)
    subscribed = await event(lambda e: e['event'] == 'subscription' and e.get('characteristic') == NOTIFY)
    check(subscribed is not None and subscribed['cccd'] == 'notify', f'subscription event {subscribed}')
    ack = await command(f'notify peripheral {NOTIFY} 0102')
    check(ack.get('subscribers') == 1, 'notify: one subscriber')
    check(await asyncio.wait_for(notified.get(), 2) == b'\x01\x02', 'notification 01 02 received')
    indicated: asyncio.Queue = asyncio.Queue()
    await client.subscribe(find(INDICATE), indicated.put_nowait, prefer_notify=False)
    ack = await command(f'indicate peripheral {INDICATE} 0a0b0c')
    check(ack.get('subscribers') == 1 and ack.get('confirmed') == 1, f'indicate acknowledged after the confirmation {ack}')
    check(await asyncio.wait_for(indicated.get(), 2) == b'\x0a\x0b\x0c', 'indication 0a 0b 0c received')
    confirmed = await event(lambda e: e['event'] == 'indication-confirmed' and e['uuid'] == INDICATE)
    check(confirmed is not None, 'indication-confirmed event')
    await command('set-value peripheral 2A19 50')
    check(await client.read_value(battery) == bytes([0x50]), 'set-value changes what a read returns')

    # Service Changed after add-service; the Database Hash follows.
    hash_characteristic = client.get_characteristics_by_uuid(att.UUID.from_16_bits(0x2B2A))[0]
    old_hash = await client.read_value(hash_characteristic)
    check(old_hash.hex() == database['database_hash'], 'Database Hash read = gatt-database event hash')
    changes: asyncio.Queue = asyncio.Queue()
    await client.subscribe(service_changed, changes.put_nowait, prefer_notify=False)
    ack = await command('add-service peripheral')
    check(ack.get('confirmed') == 1, f'add-service acknowledged after the Service Changed confirmation {ack}')
    changed = await asyncio.wait_for(changes.get(), 2)
    check(struct.unpack('<HH', changed) == (ack['start'], ack['end']), f'Service Changed covers {ack["start"]}-{ack["end"]}')
    new_database = await event(lambda e: e['event'] == 'gatt-database' and e['peer'] == 'peripheral'
                               and any(s['uuid'] == '181A' for s in e['services']))
    new_hash = await client.read_value(hash_characteristic)
    check(new_hash != old_hash and new_hash.hex() == new_database['database_hash'], 'Database Hash changed with the database')

    # Every PDU the client sent was logged by the peripheral.
    counted = await event(lambda e: sum(1 for x in events[mark:] if x['event'] == 'att-request'
                                        and x['address'] == CLIENT_ADDRESS) == sent)
    check(counted is not None, f'one att-request event per ATT PDU sent ({sent})')

    # Pairing (Just Works, bonding) makes the encrypted value readable.
    await connection.pair()
    check(connection.is_encrypted and await client.read_value(find(ENCRYPTED)) == b'secret',
          'after pairing the encrypted value reads "secret"')
    paired = await event(lambda e: e['event'] == 'paired' and e['address'] == CLIENT_ADDRESS)
    check(paired is not None, f'paired event {paired}')

    # disconnect: the peer drops us with 0x13 and advertises again.
    dropped = asyncio.get_running_loop().create_future()
    connection.on('disconnection', lambda reason: dropped.set_result(reason))
    await command('disconnect peripheral')
    check(await asyncio.wait_for(dropped, 2) == 0x13, 'disconnect peripheral -> reason 0x13')
    connection = await device.connect(HRM, timeout=5)
    check(connection is not None, 'reconnect after the disconnection (advertising restarted)')
    for service in await connection.gatt_client.discover_services():
        await connection.gatt_client.discover_characteristics([], service)
    encrypted = connection.gatt_client.get_characteristics_by_uuid(att.UUID(ENCRYPTED))[0]
    code = await att_error(connection.gatt_client.read_value(encrypted))
    check(code == 0x0F and connection.is_encrypted is False,
          f'bonded but not yet encrypted -> Insufficient Encryption ({code})')
    await connection.disconnect()
    await transport.close()

    ack = await command('bumble-explore big-peripheral')
    explored = await event(lambda e: e['event'] == 'bumble-explore' and e['peer'] == 'big-peripheral')
    check(explored is not None and explored['services'] >= 32 and explored['characteristics'] >= 200
          and explored['att_requests'] > explored['services'] and explored['read_errors'] == 0,
          f'bumble-explore big-peripheral {explored}')
