import ANCS
import Testing

/// Reassembly of answers split the way iOS splits them: at the MTU, header once.
@Suite struct DataSourceAssemblyTests {
    let attributes = ANCSSessionConfiguration().attributes

    @Test(arguments: [23, 24, 50, 185, 517])
    func longMessageReassemblesByteForByteAtAnyMTU(mtu: Int) throws {
        let message = (0..<3000).map { "\($0 % 10)" }.joined()
        var assembler = DataSourceAssembler()
        assembler.expect(DataSourceRequest(command: .getNotificationAttributes(uid: 42, attributes: ANCSSessionConfiguration(messageLength: 4000).attributes))!)
        let fragments = ANCSWire.fragments(ANCSWire.fullAnswer(uid: 42, message: message), mtu: mtu)
        #expect(fragments.count > 1)
        var response: DataSourceResponse?
        for (index, fragment) in fragments.enumerated() {
            response = try assembler.receive(fragment)
            #expect((response == nil) == (index < fragments.count - 1))
        }
        let values = try #require(response).values
        #expect(values[3] == Array(message.utf8))
        #expect(NotificationAttributes(values: values).messageSize == 3000)
        #expect(assembler.request == nil)
    }

    @Test func oneOctetFragmentsReassemble() throws {
        var assembler = DataSourceAssembler()
        assembler.expect(DataSourceRequest(command: .getAppAttributes(appIdentifier: "com.apple.mobilephone", attributes: [.displayName]))!)
        let answer = ANCSWire.appAnswer(app: "com.apple.mobilephone", displayName: "Phone")
        for octet in answer.dropLast() { #expect(try assembler.receive([octet]) == nil) }
        let response = try #require(try assembler.receive([answer.last!]))
        #expect(response.subject == .app(identifier: Array("com.apple.mobilephone".utf8)))
        #expect(response.values[0] == Array("Phone".utf8))
    }

    @Test func attributesInAnyOrderAndEmptyValuesComplete() throws {
        var assembler = DataSourceAssembler()
        assembler.expect(DataSourceRequest(command: .getNotificationAttributes(uid: 1, attributes: [NotificationAttributeRequest(.title, maximumLength: 8), NotificationAttributeRequest(.date)]))!)
        let response = try #require(try assembler.receive(ANCSWire.notificationAnswer(uid: 1, [(5, []), (1, [0x41])])))
        #expect(response.values == [5: [], 1: [0x41]])
    }

    @Test func boundIsDerivedFromTheRequest() throws {
        let request = try #require(DataSourceRequest(command: .getNotificationAttributes(uid: 1, attributes: [
            NotificationAttributeRequest(.appIdentifier), NotificationAttributeRequest(.title, maximumLength: 100),
            NotificationAttributeRequest(.message),
        ])))
        // Header 5, then 3 + 512 (implicit), 3 + 100, 3 + 65535 (Message with no length asked).
        #expect(request.maximumResponseLength == 5 + 515 + 103 + 65538)
        let app = try #require(DataSourceRequest(command: .getAppAttributes(appIdentifier: "abc", attributes: [.displayName])))
        #expect(app.maximumResponseLength == 5 + 515)
        #expect(DataSourceRequest(command: .performNotificationAction(uid: 1, action: .positive)) == nil)
    }
}
