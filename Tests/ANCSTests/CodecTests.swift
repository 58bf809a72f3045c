import ANCS
import BluetoothCore
import Testing

/// ANCS and AMS values against the layouts in Apple's specifications.
@Suite struct CodecTests {
    @Test func serviceUUIDsAreApples() {
        #expect(ANCSUUID.service.description == "7905F431-B5CE-4E99-A40F-4B1E122D00D0")
        #expect(ANCSUUID.notificationSource.description == "9FBF120D-6301-42D9-8C58-25E699A21DBD")
        #expect(ANCSUUID.controlPoint.description == "69D1D8F3-45E1-49A8-9821-9BBDFDAAD9D9")
        #expect(ANCSUUID.dataSource.description == "22EAC6E9-24D6-4BB5-BE44-B36ACE7C7BFB")
        #expect(AMSUUID.service.description == "89D3502B-0F36-433A-8EF4-C502AD55F8DC")
        #expect(AMSUUID.remoteCommand.description == "9B3C81D8-57B1-4A8A-B8DF-0E56F7CA51C2")
        #expect(AMSUUID.entityUpdate.description == "2F7CABCE-808D-411F-9A0C-BB92BA96C102")
        #expect(AMSUUID.entityAttribute.description == "C6B2F38C-23AB-46D8-A6AB-A3A870BBD5D7")
    }

    @Test func notificationSourceEventDecodes() throws {
        // Added, Important | PositiveAction | NegativeAction, MissedCall, 3 of them, UID 0x04030201.
        let event = try NotificationEvent(bytes: [0x00, 0x1A, 0x02, 0x03, 0x01, 0x02, 0x03, 0x04])
        #expect(event.kind == .added)
        #expect(event.flags == [.important, .positiveAction, .negativeAction])
        #expect(event.flags.names == ["important", "positiveAction", "negativeAction"])
        #expect(event.category == .missedCall)
        #expect(event.category.description == "MissedCall")
        #expect(event.categoryCount == 3)
        #expect(event.uid == 0x0403_0201)
        #expect(event.bytes == [0x00, 0x1A, 0x02, 0x03, 0x01, 0x02, 0x03, 0x04])
    }

    @Test func everyCategoryHasItsName() throws {
        let names = ["Other", "IncomingCall", "MissedCall", "Voicemail", "Social", "Schedule", "Email", "News",
                     "HealthAndFitness", "BusinessAndFinance", "Location", "Entertainment"]
        for (id, name) in names.enumerated() {
            #expect(try NotificationEvent(bytes: ANCSWire.event(0, uid: 1, category: UInt8(id))).category.description == name)
        }
        // A category a later iOS may add is kept by number, not refused.
        #expect(try NotificationEvent(bytes: ANCSWire.event(0, uid: 1, category: 12)).category.description == "Category12")
    }

    @Test func shortAndUnknownEventsAreTypedErrors() {
        for length in 0..<8 {
            #expect(throws: NotificationSourceError.truncated(length: length)) { try NotificationEvent(bytes: Array(ANCSWire.event(0, uid: 1).prefix(length))) }
        }
        #expect(throws: NotificationSourceError.unknownEventID(3)) { try NotificationEvent(bytes: ANCSWire.event(3, uid: 1)) }
        // Octets past the eighth: ignored (room for fields a later iOS appends).
        #expect((try? NotificationEvent(bytes: ANCSWire.event(2, uid: 9) + [0xFF]))?.uid == 9)
    }

    @Test func getNotificationAttributesWritesMaximumLengthsOnlyWhereTheyBelong() {
        let command = ControlPointCommand.getNotificationAttributes(uid: 0x0403_0201, attributes: [
            NotificationAttributeRequest(.appIdentifier), NotificationAttributeRequest(.title, maximumLength: 0x0102),
            NotificationAttributeRequest(.subtitle), NotificationAttributeRequest(.message, maximumLength: 1000),
            NotificationAttributeRequest(.messageSize, maximumLength: 7), NotificationAttributeRequest(.date),
        ])
        #expect(command.bytes == [0x00, 0x01, 0x02, 0x03, 0x04, 0x00, 0x01, 0x02, 0x01, 0x02, 0xFF, 0xFF, 0x03, 0xE8, 0x03, 0x04, 0x05])
    }

    @Test func getAppAttributesAndPerformActionEncode() {
        #expect(ControlPointCommand.getAppAttributes(appIdentifier: "com.a", attributes: [.displayName]).bytes == [0x01, 0x63, 0x6F, 0x6D, 0x2E, 0x61, 0x00, 0x00])
        #expect(ControlPointCommand.performNotificationAction(uid: 5, action: .negative).bytes == [0x02, 0x05, 0x00, 0x00, 0x00, 0x01])
    }

    @Test func controlPointErrorsAreTyped() {
        #expect(ControlPointError(attErrorCode: 0xA0) == .unknownCommand)
        #expect(ControlPointError(attErrorCode: 0xA1) == .invalidCommand)
        #expect(ControlPointError(attErrorCode: 0xA2) == .invalidParameter)
        #expect(ControlPointError(attErrorCode: 0xA3) == .actionFailed)
        #expect(ControlPointError(attErrorCode: 0x03) == .notificationSharingNotAllowed)
        #expect(ControlPointError(attErrorCode: 0x0E) == .attError(0x0E))
        let advice = ControlPointError.sharingNotAllowedAdvice(deviceName: "Desk")
        #expect(advice.contains("Settings > Bluetooth, tap (i) next to \"Desk\" and turn on Share System Notifications"))
        #expect(advice.contains("Allow"))
    }

    @Test func dateParsesToCalendarFields() throws {
        let date = try ANCSDate(text: Array("20250102T030405".utf8))
        #expect(date == ANCSDate(year: 2025, month: 1, day: 2, hour: 3, minute: 4, second: 5))
        #expect(date.description == "2025-01-02T03:04:05")
        #expect(date.text == "20250102T030405")
    }

    @Test func malformedDatesAreTypedErrors() {
        for bad in ["2025010T030405", "20250102 030405", "20251302T030405", "20250100T030405", "20250102T240000",
                    "20250102T036000", "2025O102T030405", "20250102T0304051", ""] {
            #expect(throws: DecodeError.self) { try ANCSDate(text: Array(bad.utf8)) }
        }
    }

    @Test func attributesReadTextNumbersAndDates() {
        let values: [UInt8: [UInt8]] = [
            0: Array("com.apple.mobilephone".utf8), 1: Array("Mum".utf8), 3: [0x68, 0xC3], 4: Array("1234".utf8),
            5: Array("20250102T030405".utf8), 6: Array("Answer".utf8),
        ]
        let attributes = NotificationAttributes(values: values)
        #expect(attributes.appIdentifier == "com.apple.mobilephone")
        #expect(attributes.title == "Mum")
        #expect(attributes.subtitle == nil)
        // Truncated mid-character: the broken sequence becomes U+FFFD.
        #expect(attributes.message == "h\u{FFFD}")
        #expect(attributes.messageSize == 1234)
        #expect(attributes.date?.description == "2025-01-02T03:04:05")
        #expect(attributes.positiveActionLabel == "Answer")
        #expect(attributes.problems.isEmpty)
        let broken = NotificationAttributes(values: [4: Array("12a".utf8), 5: Array("yesterday".utf8)])
        #expect(broken.messageSize == nil)
        #expect(broken.date == nil)
        #expect(broken.problems.count == 2)
    }

    @Test func amsRemoteCommandsAndSupportedList() {
        #expect(AMSRemoteCommand.play.bytes == [0])
        #expect(AMSRemoteCommand.volumeDown.bytes == [6])
        #expect(AMSRemoteCommand.bookmarkTrack.rawValue == 13)
        #expect(AMSRemoteCommand(name: "next") == .nextTrack)
        #expect(AMSRemoteCommand(name: "previous") == .previousTrack)
        #expect(AMSRemoteCommand(name: "rewind") == nil)
        #expect(AMSRemoteCommand.supported(from: [0, 1, 2, 0x40]) == [.play, .pause, .togglePlayPause])
    }

    @Test func amsEntityUpdateSubscribeAndDecode() throws {
        #expect(AMSEntityUpdateCommand.nowPlaying.map(\.bytes) == [[0, 0, 1, 2], [2, 0, 1, 2, 3]])
        let update = try AMSEntityUpdate(bytes: [2, 2, 1] + Array("Blue in Gr".utf8))
        #expect(update == AMSEntityUpdate(entity: .track, attribute: 2, truncated: true, value: "Blue in Gr"))
        #expect(update.bytes == [2, 2, 1] + Array("Blue in Gr".utf8))
        #expect(throws: AMSDecodeError.truncated(length: 2)) { try AMSEntityUpdate(bytes: [0, 0]) }
        #expect(throws: AMSDecodeError.unknownEntity(3)) { try AMSEntityUpdate(bytes: [3, 0, 0]) }
    }

    @Test func nowPlayingFoldsUpdates() throws {
        var playing = AMSNowPlaying()
        for (entity, attribute, value) in [(0, 0, "Music"), (0, 1, "1,1.0,12.5"), (0, 2, "0.75"), (2, 0, "Miles Davis"),
                                           (2, 1, "Kind of Blue"), (2, 2, "So What"), (2, 3, "562.0")] as [(UInt8, UInt8, String)] {
            #expect(playing.apply(try AMSEntityUpdate(bytes: [entity, attribute, 0] + Array(value.utf8))))
        }
        #expect(playing.playerName == "Music")
        #expect(playing.playbackInfo == AMSPlaybackInfo(state: .playing, rate: 1.0, elapsed: 12.5))
        #expect(playing.volume == 0.75)
        #expect(playing.artist == "Miles Davis")
        #expect(playing.album == "Kind of Blue")
        #expect(playing.title == "So What")
        #expect(playing.duration == 562.0)
        // Queue attributes are not now-playing; garbage numbers are refused, not trapped.
        let queueTaken = playing.apply(AMSEntityUpdate(entity: .queue, attribute: 0, value: "3"))
        let garbageTaken = playing.apply(AMSEntityUpdate(entity: .player, attribute: 1, value: "9,x,"))
        #expect(!queueTaken && !garbageTaken)
        #expect(playing.playbackInfo == nil)
        #expect(AMSPlaybackInfo(text: "0,0.0,nan") == nil)
    }
}
