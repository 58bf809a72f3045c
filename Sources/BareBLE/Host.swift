import HCI
import HCITransport
import KernelHost
import L2CAP

/// Who makes a ``Central``'s links, chosen once from the transport: every place that differs
/// between the two switches on this, so none has to guess from a missing part.
enum Host: Sendable {
    /// BareBLE's own host (user channel `hci:N`, H4, the virtual radio): our L2CAP and
    /// Connector, built in the order they need (``ControllerHost``); SMP runs per link.
    case controller(ControllerHost)
    /// Beside the kernel (`hci-raw:N`): the kernel makes the connections (its L2CAP ATT
    /// socket and listener) and runs SMP; nothing of ours sees or answers for its links,
    /// and its keys are kept in the policy's bond store (``KernelAdapter``).
    case kernel(KernelAdapter)

    init(controller: HCIController) {
        if let index = controller.transport.kernelAdapter {
            self = .kernel(KernelAdapter(index: index))
        } else {
            self = .controller(ControllerHost(controller: controller))
        }
    }
}
