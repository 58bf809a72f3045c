import Glibc

/// H4 over a UART or pty (`serial:/dev/ttyX[,BAUD][,rtscts]`): raw mode, 8N1, the given
/// speed, optional RTS/CTS hardware flow control.
public enum SerialTransport {
    public static func open(
        path: String, baud: Int = TransportSpec.defaultBaud, flowControl: Bool = false,
        framing: H4Framer.Configuration = .controllerToHost, wait: ReaderWait = .blocking
    ) throws(TransportError) -> DescriptorTransport {
        let spec = TransportSpec.serial(path: path, baud: baud, flowControl: flowControl)
        guard let speed = baudConstant(baud) else {
            throw .invalidSpec(spec.description, reason: "unsupported baud rate \(baud)")
        }
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw TransportError.from(errno: errno, operation: .open, spec: spec) }
        var options = termios()
        guard tcgetattr(fd, &options) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TransportError.from(errno: code, operation: .configure, spec: spec)
        }
        cfmakeraw(&options)
        options.c_cflag |= tcflag_t(CLOCAL | CREAD)
        if flowControl {
            options.c_cflag |= tcflag_t(CRTSCTS)
        } else {
            options.c_cflag &= ~tcflag_t(CRTSCTS)
        }
        withUnsafeMutableBytes(of: &options.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        guard cfsetispeed(&options, speed) == 0, cfsetospeed(&options, speed) == 0,
            tcsetattr(fd, TCSANOW, &options) == 0
        else {
            let code = errno
            Glibc.close(fd)
            throw TransportError.from(errno: code, operation: .configure, spec: spec)
        }
        // Bytes that sat in the driver before we configured it belong to nobody.
        tcflush(fd, TCIOFLUSH)
        let loop = try DescriptorLoop(fd: fd, spec: spec, name: spec.description, eioIsEndOfFile: true, wait: wait)
        return DescriptorTransport(loop: loop, framing: .stream(framing))
    }

    /// The termios constant for a baud rate, nil if the kernel has none.
    static func baudConstant(_ baud: Int) -> speed_t? {
        switch baud {
        case 9600: speed_t(B9600)
        case 19200: speed_t(B19200)
        case 38400: speed_t(B38400)
        case 57600: speed_t(B57600)
        case 115_200: speed_t(B115200)
        case 230_400: speed_t(B230400)
        case 460_800: speed_t(B460800)
        case 500_000: speed_t(B500000)
        case 921_600: speed_t(B921600)
        case 1_000_000: speed_t(B1000000)
        case 1_500_000: speed_t(B1500000)
        case 2_000_000: speed_t(B2000000)
        case 3_000_000: speed_t(B3000000)
        case 4_000_000: speed_t(B4000000)
        default: nil
        }
    }
}
