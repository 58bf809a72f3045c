// swift-tools-version: 6.2
// BareBLE: a Bluetooth Low Energy host stack for Linux. One module per protocol layer;
// dependencies point down only (see specs/architecture.md).
import PackageDescription

let strict: [SwiftSetting] = [.treatAllWarnings(as: .error)]

let package = Package(
    name: "BareBLE",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "BluetoothCore", targets: ["BluetoothCore"]),
        .library(name: "HCITransport", targets: ["HCITransport"]),
        .library(name: "HCI", targets: ["HCI"]),
        .library(name: "L2CAP", targets: ["L2CAP"]),
        .library(name: "ATT", targets: ["ATT"]),
        .library(name: "GATT", targets: ["GATT"]),
        .library(name: "BluetoothCrypto", targets: ["BluetoothCrypto"]),
        .library(name: "SMP", targets: ["SMP"]),
        .library(name: "Bonding", targets: ["Bonding"]),
        .library(name: "KernelHost", targets: ["KernelHost"]),
        .library(name: "Beacon", targets: ["Beacon"]),
        .library(name: "ANCS", targets: ["ANCS"]),
        .library(name: "BareBLE", targets: ["BareBLE"]),
        .library(name: "ANCSConsumer", targets: ["ANCSConsumer"]),
        .library(name: "Trace", targets: ["Trace"]),
        .executable(name: "bareble", targets: ["bareble"]),
        .executable(name: "bareble-central", targets: ["bareble-central"]),
        .executable(name: "bareble-peripheral", targets: ["bareble-peripheral"]),
        .executable(name: "bareble-beacon", targets: ["bareble-beacon"]),
        .executable(name: "bareble-ancs", targets: ["bareble-ancs"]),
        .executable(name: "bareble-trace", targets: ["bareble-trace"]),
        .executable(name: "bareble-bench", targets: ["bareble-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // P-256 ECDH for SMP; the AES block function and AES-CMAC (CryptoExtras) for
        // BluetoothCrypto.
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // The ecosystem's logging API: each layer logs under its own label; the application
        // (our tools, or an integrator's program) picks the handler and the level.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(name: "BluetoothCore", dependencies: [.product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // libbluetooth-dev's headers plus static inline shims for the macros Swift cannot
        // import. Header-only: nothing links against libbluetooth.
        .systemLibrary(
            name: "CBluetooth",
            providers: [.apt(["libbluetooth-dev"])]
        ),
        .target(name: "HCITransport", dependencies: ["BluetoothCore", "CBluetooth", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "HCI", dependencies: ["BluetoothCore", "HCITransport", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "L2CAP", dependencies: ["BluetoothCore", "HCI", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "ATT", dependencies: ["BluetoothCore", "L2CAP", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // The AES-128 block function and AES-CMAC that SMP's toolbox and GATT's Database Hash
        // share, so GATT never depends on SMP.
        .target(
            name: "BluetoothCrypto",
            dependencies: ["BluetoothCore", .product(name: "Crypto", package: "swift-crypto"), .product(name: "CryptoExtras", package: "swift-crypto")],
            swiftSettings: strict
        ),
        .target(name: "GATT", dependencies: ["BluetoothCore", "BluetoothCrypto", "ATT", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(
            name: "SMP",
            dependencies: ["BluetoothCore", "BluetoothCrypto", "L2CAP", .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict
        ),
        // The bond store (files) and privacy (our RPAs, resolving peers'): above SMP, whose
        // keys it keeps, and HCI, whose advertising and resolving list it drives.
        .target(name: "Bonding", dependencies: ["BluetoothCore", "HCI", "SMP", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // The kernel path (`hci-raw:N`), the other of the facade's two hosts: the management
        // interface (managed power-on, IO capability, the pairing agent, the keys the kernel
        // reports and loads), the kernel's L2CAP LE socket and listener, ATT over that socket,
        // and the kernel's keys kept in the bond store. Above ATT and Bonding, below the
        // facade; HCITransport for the HCI control channel's socket.
        .target(name: "KernelHost", dependencies: ["BluetoothCore", "CBluetooth", "HCITransport", "L2CAP", "ATT", "SMP", "Bonding", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        .target(name: "Beacon", dependencies: ["BluetoothCore", "HCI"], swiftSettings: strict),
        // Apple's Notification Center and Media services, consumer side: codecs and the
        // session state machine, no I/O.
        .target(name: "ANCS", dependencies: ["BluetoothCore"], swiftSettings: strict),
        // The facade: Central / Peripheral / Service / Characteristic in CoreBluetooth's
        // shape, wiring the layers below per connection. No logic of its own beyond that.
        .target(name: "BareBLE", dependencies: ["BluetoothCore", "HCITransport", "HCI", "L2CAP", "ATT", "GATT", "SMP", "Bonding", "KernelHost", .product(name: "Logging", package: "swift-log")], swiftSettings: strict),
        // The ANCS consumer over the facade: a PeripheralManager that brings each phone's link
        // to ANCS and AMS and drives the ANCS module's session on it.
        .target(name: "ANCSConsumer", dependencies: ["BluetoothCore", "ATT", "GATT", "BareBLE", "ANCS"], swiftSettings: strict),
        // The trace decoder: capture records to packets decoded at every layer with the
        // layers' own types (bareble-trace, the tools' --trace). Beside the facade, above the
        // protocol layers; no I/O.
        .target(name: "Trace", dependencies: ["BluetoothCore", "HCITransport", "HCI", "L2CAP", "ATT", "GATT", "SMP", "Beacon"], swiftSettings: strict),
        // What the tools share: the transport options, JSON lines, stopping on Ctrl-C, the
        // scan run (open, power on, scan until stopped), the pairing options and the
        // terminal's side of pairing (central and peripheral tools alike).
        .target(
            name: "ToolSupport",
            dependencies: ["BluetoothCore", "HCI", "HCITransport", "BareBLE", "SMP", "Bonding", "Trace", .product(name: "Logging", package: "swift-log"), .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "tools/tool-support",
            swiftSettings: strict
        ),
        // Each tool's commands are a library (a folder under tools/), run by two mains: the
        // tool's own executable (tools/mains/, what `swift run bareble-central` and the tests
        // run) and the multi-call `bareble` (tools/bareble/), which is every tool in one
        // binary, the tool chosen by the name it is called through (README, "One static
        // binary").
        .target(
            name: "CentralCommands",
            dependencies: ["BareBLE", "GATT", "ATT", "HCI", "HCITransport", "L2CAP", "Bonding", "KernelHost", "SMP", "Trace", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "tools/bareble-central",
            swiftSettings: strict
        ),
        .target(
            name: "PeripheralCommands",
            dependencies: ["BareBLE", "GATT", "ATT", "HCI", "HCITransport", "BluetoothCore", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "tools/bareble-peripheral",
            swiftSettings: strict
        ),
        .target(
            name: "BeaconCommands",
            dependencies: ["Beacon", "HCI", "HCITransport", "BluetoothCore", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "tools/bareble-beacon",
            swiftSettings: strict
        ),
        .target(
            name: "ANCSCommands",
            dependencies: ["ANCS", "ANCSConsumer", "BareBLE", "HCI", "HCITransport", "BluetoothCore", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "tools/bareble-ancs",
            swiftSettings: strict
        ),
        .target(
            name: "TraceCommands",
            dependencies: ["Trace", "HCITransport", "BluetoothCore", "Bonding", "SMP", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "tools/bareble-trace",
            swiftSettings: strict
        ),
        .executableTarget(name: "bareble-central", dependencies: ["CentralCommands", "ToolSupport"], path: "tools/mains/bareble-central", swiftSettings: strict),
        .executableTarget(name: "bareble-peripheral", dependencies: ["PeripheralCommands", "ToolSupport"], path: "tools/mains/bareble-peripheral", swiftSettings: strict),
        .executableTarget(name: "bareble-beacon", dependencies: ["BeaconCommands", "ToolSupport"], path: "tools/mains/bareble-beacon", swiftSettings: strict),
        .executableTarget(name: "bareble-ancs", dependencies: ["ANCSCommands", "ToolSupport"], path: "tools/mains/bareble-ancs", swiftSettings: strict),
        .executableTarget(name: "bareble-trace", dependencies: ["TraceCommands", "ToolSupport"], path: "tools/mains/bareble-trace", swiftSettings: strict),
        .executableTarget(
            name: "bareble",
            dependencies: ["CentralCommands", "PeripheralCommands", "BeaconCommands", "ANCSCommands", "TraceCommands", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "tools/bareble",
            swiftSettings: strict,
            // Measured on the static build (README, "One static binary"): the static
            // stdlib's link flags export every symbol of our modules, which keeps them all
            // (dead stripping removes nothing Swift exported) and costs 2.4 MB of symbol
            // table; lld's packed relative relocations (glibc 2.36 or later) save 1.5 MB of
            // the PIE's relocations and 1.2 MB of RSS. The toolchain ships lld. Unsafe flags
            // bar only the products that hold them from other packages: this executable, not
            // the libraries.
            linkerSettings: [
                .unsafeFlags(["-use-ld=lld", "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"], .when(configuration: .release))
            ]
        ),
        // The crash-safety test's victim: rewrites a bond file until killed.
        .executableTarget(name: "bond-store-writer", dependencies: ["Bonding"], path: "tools/bond-store-writer", swiftSettings: strict),
        // Shared by the test targets only: seeded random input, the virtual radio's harness,
        // the scripted ATT bearer (ATT and GATT client conversations), the scripted LE
        // controller under L2CAP (L2CAP's tests and ATT's bearer tests).
        .target(name: "TestSupport", dependencies: ["HCITransport", "HCI", "L2CAP", "ATT", "SMP", .product(name: "Logging", package: "swift-log"), .product(name: "InMemoryLogging", package: "swift-log")], path: "Tests/TestSupport", swiftSettings: strict),
        // Benchmarks: figures beside a baseline (Bumble) measured in the same run. The
        // allocation counter interposes malloc, so it is linked into the benchmark only.
        .target(name: "CAllocationCounter", path: "tools/allocation-counter"),
        .executableTarget(
            name: "bareble-bench",
            dependencies: ["BareBLE", "SMP", "HCI", "HCITransport", "L2CAP", "ATT", "GATT", "CAllocationCounter", "ToolSupport", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "tools/bareble-bench",
            exclude: ["bumble_scan_baseline.py", "bumble_notify_baseline.py", "bumble_server_baseline.py"],
            swiftSettings: strict
        ),
        // Coverage-guided fuzzing (tools/fuzz.sh, specs/testing.md): one binary, a target per
        // decoder or state machine fed by peer or controller bytes. tools/fuzz.sh builds it
        // with -sanitize=fuzzer,address and FUZZING; a normal build replays input files.
        .systemLibrary(name: "CLibFuzzer", path: "tools/fuzz/libfuzzer"),
        .executableTarget(
            name: "bareble-fuzz",
            dependencies: ["BluetoothCore", "HCITransport", "HCI", "L2CAP", "ATT", "GATT", "SMP", "Bonding", "Beacon", "ANCS", "Trace", "TestSupport", "CLibFuzzer",
                           .product(name: "Logging", package: "swift-log")],
            path: "tools/fuzz/targets",
            swiftSettings: strict
        ),
        .testTarget(name: "BluetoothCoreTests", dependencies: ["BluetoothCore", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HCITests", dependencies: ["HCI", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "HCITransportTests", dependencies: ["HCITransport", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "L2CAPTests", dependencies: ["L2CAP", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "ATTTests", dependencies: ["ATT", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "GATTTests", dependencies: ["GATT", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "BluetoothCryptoTests", dependencies: ["BluetoothCrypto", "BluetoothCore"], swiftSettings: strict),
        .testTarget(name: "SMPTests", dependencies: ["SMP", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "BondingTests", dependencies: ["Bonding", "HCITransport", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "KernelHostTests", dependencies: ["KernelHost", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "BeaconTests", dependencies: ["Beacon", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "ANCSTests", dependencies: ["ANCS", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "ANCSConsumerTests", dependencies: ["ANCSConsumer", "ANCS", "ATT", "BluetoothCore", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "TraceTests", dependencies: ["Trace", "BluetoothCore", "HCITransport", "HCI", "ATT", "L2CAP", "SMP", "TestSupport"], swiftSettings: strict),
        // ToolSupport and CentralCommands: the tools' own code (JSON lines, wall-clock time,
        // the scan table's bound) is tested here, beside the tools it serves.
        .testTarget(name: "IntegrationTests", dependencies: ["BareBLE", "ANCS", "ANCSConsumer", "GATT", "ATT", "L2CAP", "HCI", "HCITransport", "Bonding", "KernelHost", "SMP", "TestSupport", "ToolSupport", "CentralCommands", "ANCSCommands"], swiftSettings: strict),
    ]
)
