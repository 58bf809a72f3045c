// Bluetooth SIG Assigned Numbers 2.6, Appearance Values: every category and subcategory
// name, as data. A category line is "0xCCC Name" (the 10-bit category), each of its
// subcategories follows on an indented "SS Name" line (the 6-bit subcategory, hex).
// Subcategory 0 is never listed: it is the category's generic value.
//
// One string literal parsed on first use, for the reason CompanyIdentifiers gives: a
// dictionary literal this size is slow to type-check and this costs nothing.

extension Appearance {
    struct Category: Sendable {
        let name: String
        var subcategories: [UInt8: String]
    }

    static let names: (categories: [UInt16: Category], order: [UInt16]) = {
        var categories: [UInt16: Category] = [:]
        var order: [UInt16] = []
        var current: UInt16?
        for line in table.split(separator: "\n") {
            if line.hasPrefix("0x") {
                guard let number = UInt16(line.dropFirst(2).prefix(3), radix: 16) else { continue }
                categories[number] = Category(name: String(line.dropFirst(6)), subcategories: [:])
                order.append(number)
                current = number
            } else if let category = current {
                let body = line.drop(while: { $0 == " " })
                guard let number = UInt8(body.prefix(2), radix: 16) else { continue }
                categories[category]?.subcategories[number] = String(body.dropFirst(3))
            }
        }
        return (categories, order)
    }()

    /// Every assigned appearance value, categories in order, each followed by its
    /// subcategories: for tests and for tools that list them.
    public static var allAssigned: [Appearance] {
        names.order.flatMap { category in
            [Appearance(category: category, subcategory: 0)]
                + (names.categories[category]?.subcategories.keys.sorted() ?? []).map {
                    Appearance(category: category, subcategory: $0)
                }
        }
    }

    private static let table = """
    0x000 Unknown
    0x001 Phone
    0x002 Computer
      01 Desktop Workstation
      02 Server-class Computer
      03 Laptop
      04 Handheld PC/PDA (clamshell)
      05 Palm-size PC/PDA
      06 Wearable computer (watch size)
      07 Tablet
      08 Docking Station
      09 All in One
      0A Blade Server
      0B Convertible
      0C Detachable
      0D IoT Gateway
      0E Mini PC
      0F Stick PC
    0x003 Watch
      01 Sports Watch
      02 Smartwatch
    0x004 Clock
    0x005 Display
    0x006 Remote Control
    0x007 Eye-glasses
    0x008 Tag
    0x009 Keyring
    0x00A Media Player
    0x00B Barcode Scanner
    0x00C Thermometer
      01 Ear Thermometer
    0x00D Heart Rate Sensor
      01 Heart Rate Belt
    0x00E Blood Pressure
      01 Arm Blood Pressure
      02 Wrist Blood Pressure
    0x00F Human Interface Device
      01 Keyboard
      02 Mouse
      03 Joystick
      04 Gamepad
      05 Digitizer Tablet
      06 Card Reader
      07 Digital Pen
      08 Barcode Scanner
      09 Touchpad
      0A Presentation Remote
    0x010 Glucose Meter
    0x011 Running Walking Sensor
      01 In-Shoe Running Walking Sensor
      02 On-Shoe Running Walking Sensor
      03 On-Hip Running Walking Sensor
    0x012 Cycling
      01 Cycling Computer
      02 Speed Sensor
      03 Cadence Sensor
      04 Power Sensor
      05 Speed and Cadence Sensor
    0x013 Control Device
      01 Switch
      02 Multi-switch
      03 Button
      04 Slider
      05 Rotary Switch
      06 Touch Panel
      07 Single Switch
      08 Double Switch
      09 Triple Switch
      0A Battery Switch
      0B Energy Harvesting Switch
      0C Push Button
    0x014 Network Device
      01 Access Point
      02 Mesh Device
      03 Mesh Network Proxy
    0x015 Sensor
      01 Motion Sensor
      02 Air quality Sensor
      03 Temperature Sensor
      04 Humidity Sensor
      05 Leak Sensor
      06 Smoke Sensor
      07 Occupancy Sensor
      08 Contact Sensor
      09 Carbon Monoxide Sensor
      0A Carbon Dioxide Sensor
      0B Ambient Light Sensor
      0C Energy Sensor
      0D Color Light Sensor
      0E Rain Sensor
      0F Fire Sensor
      10 Wind Sensor
      11 Proximity Sensor
      12 Multi-Sensor
      13 Flush Mounted Sensor
      14 Ceiling Mounted Sensor
      15 Wall Mounted Sensor
      16 Multisensor
      17 Energy Meter
      18 Flame Detector
      19 Vehicle Tire Pressure Sensor
    0x016 Light Fixtures
      01 Wall Light
      02 Ceiling Light
      03 Floor Light
      04 Cabinet Light
      05 Desk Light
      06 Troffer Light
      07 Pendant Light
      08 In-ground Light
      09 Flood Light
      0A Underwater Light
      0B Bollard with Light
      0C Pathway Light
      0D Garden Light
      0E Pole-top Light
      0F Spotlight
      10 Linear Light
      11 Street Light
      12 Shelves Light
      13 Bay Light
      14 Emergency Exit Light
      15 Light Controller
      16 Light Driver
      17 Bulb
      18 Low-bay Light
      19 High-bay Light
    0x017 Fan
      01 Ceiling Fan
      02 Axial Fan
      03 Exhaust Fan
      04 Pedestal Fan
      05 Desk Fan
      06 Wall Fan
    0x018 HVAC
      01 Thermostat
      02 Humidifier
      03 De-humidifier
      04 Heater
      05 Radiator
      06 Boiler
      07 Heat Pump
      08 Infrared Heater
      09 Radiant Panel Heater
      0A Fan Heater
      0B Air Curtain
    0x019 Air Conditioning
    0x01A Humidifier
    0x01B Heating
      01 Radiator
      02 Boiler
      03 Heat Pump
      04 Infrared Heater
      05 Radiant Panel Heater
      06 Fan Heater
      07 Air Curtain
    0x01C Access Control
      01 Access Door
      02 Garage Door
      03 Emergency Exit Door
      04 Access Lock
      05 Elevator
      06 Window
      07 Entrance Gate
      08 Door Lock
      09 Locker
    0x01D Motorized Device
      01 Motorized Gate
      02 Awning
      03 Blinds or Shades
      04 Curtains
      05 Screen
    0x01E Power Device
      01 Power Outlet
      02 Power Strip
      03 Plug
      04 Power Supply
      05 LED Driver
      06 Fluorescent Lamp Gear
      07 HID Lamp Gear
      08 Charge Case
      09 Power Bank
    0x01F Light Source
      01 Incandescent Light Bulb
      02 LED Lamp
      03 HID Lamp
      04 Fluorescent Lamp
      05 LED Array
      06 Multi-Color LED Array
      07 Low voltage halogen
      08 Organic light emitting diode (OLED)
    0x020 Window Covering
      01 Window Shades
      02 Window Blinds
      03 Window Awning
      04 Window Curtain
      05 Exterior Shutter
      06 Exterior Screen
    0x021 Audio Sink
      01 Standalone Speaker
      02 Soundbar
      03 Bookshelf Speaker
      04 Standmounted Speaker
      05 Speakerphone
    0x022 Audio Source
      01 Microphone
      02 Alarm
      03 Bell
      04 Horn
      05 Broadcasting Device
      06 Service Desk
      07 Kiosk
      08 Broadcasting Room
      09 Auditorium
    0x023 Motorized Vehicle
      01 Car
      02 Large Goods Vehicle
      03 2-Wheeled Vehicle
      04 Motorbike
      05 Scooter
      06 Moped
      07 3-Wheeled Vehicle
      08 Light Vehicle
      09 Quad Bike
      0A Minibus
      0B Bus
      0C Trolley
      0D Agricultural Vehicle
      0E Camper / Caravan
      0F Recreational Vehicle / Motor Home
    0x024 Domestic Appliance
      01 Refrigerator
      02 Freezer
      03 Oven
      04 Microwave
      05 Toaster
      06 Washing Machine
      07 Dryer
      08 Coffee maker
      09 Clothes iron
      0A Curling iron
      0B Hair dryer
      0C Vacuum cleaner
      0D Robotic vacuum cleaner
      0E Rice cooker
      0F Clothes steamer
    0x025 Wearable Audio Device
      01 Earbud
      02 Headset
      03 Headphones
      04 Neck Band
    0x026 Aircraft
      01 Light Aircraft
      02 Microlight
      03 Paraglider
      04 Large Passenger Aircraft
    0x027 AV Equipment
      01 Amplifier
      02 Receiver
      03 Radio
      04 Tuner
      05 Turntable
      06 CD Player
      07 DVD Player
      08 Bluray Player
      09 Optical Disc Player
      0A Set-Top Box
    0x028 Display Equipment
      01 Television
      02 Monitor
      03 Projector
    0x029 Hearing aid
      01 In-ear hearing aid
      02 Behind-ear hearing aid
      03 Cochlear Implant
    0x02A Gaming
      01 Home Video Game Console
      02 Portable handheld console
    0x02B Signage
      01 Digital Signage
      02 Electronic Label
    0x031 Pulse Oximeter
      01 Fingertip Pulse Oximeter
      02 Wrist Worn Pulse Oximeter
    0x032 Weight Scale
    0x033 Personal Mobility Device
      01 Powered Wheelchair
      02 Mobility Scooter
    0x034 Continuous Glucose Monitor
    0x035 Insulin Pump
      01 Insulin Pump, durable pump
      02 Insulin Pump, patch pump
      03 Insulin Pen
    0x036 Medication Delivery
    0x037 Spirometer
      01 Handheld Spirometer
    0x051 Outdoor Sports Activity
      01 Location Display
      02 Location and Navigation Display
      03 Location Pod
      04 Location and Navigation Pod
    0x052 Industrial Measurement Device
      01 Torque Testing Device
      02 Caliper
      03 Dial Indicator
      04 Micrometer
      05 Height Gauge
      06 Force Gauge
    0x053 Industrial Tools
      01 Machine Tool Holder
      02 Generic Clamping Device
      03 Clamping Jaws/Jaw Chuck
      04 Clamping (Collet) Chuck
      05 Clamping Mandrel
      06 Vise
      07 Zero-Point Clamping System
      08 Torque Wrench
      09 Torque Screwdriver
    """
}
