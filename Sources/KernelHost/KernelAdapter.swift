import BluetoothCore
import Bonding
import HCITransport

/// Adapter hci`index` as a host beside the kernel (`hci-raw:N`) holds it: the kernel makes
/// the links (``KernelL2CAPSocket``, ``KernelAcceptance``) and runs SMP, and its keys are
/// kept in a bond store (``KernelBonds``) from the first time a host needs them.
///
/// Attaching the bonds is deferred to that first need (a link, accepting centrals) so a
/// host that only scans never touches the management interface; a refusal there is kept
/// (``bondsProblem``) and not retried: links still work, with the kernel's keys in its
/// memory only.
public final class KernelAdapter: Sendable {
    public let index: Int
    private let attachment = Lock(Attachment.notYet)

    private enum Attachment: Sendable {
        case notYet
        case attached(KernelBonds)
        case failed(TransportError)
    }

    public init(index: Int) {
        self.index = index
    }

    /// `store` loaded into the kernel and the kernel's new keys kept in it, attached at the
    /// first call (later calls return the same, whatever store they name); nil when the
    /// management interface refused.
    public func bonds(keptIn store: BondStore) -> KernelBonds? {
        attachment.withLock { attachment in
            switch attachment {
            case let .attached(bonds): return bonds
            case .failed: return nil
            case .notYet:
                do throws(TransportError) {
                    let bonds = try KernelBonds.attach(adapter: index, store: store)
                    attachment = .attached(bonds)
                    return bonds
                } catch {
                    attachment = .failed(error)
                    return nil
                }
            }
        }
    }

    /// What became of the keys the kernel reported since the store was attached; nil before.
    public var bondCounters: KernelBondCounters? {
        guard case let .attached(bonds) = attachment.withLock({ $0 }) else { return nil }
        return bonds.counters
    }

    /// Why the kernel's keys are not kept in the bond store, if they are not.
    public var bondsProblem: String? {
        guard case let .failed(error) = attachment.withLock({ $0 }) else { return nil }
        return "the kernel's keys are not kept in the bond store (bonds last until the adapter is removed or the machine restarts): "
            + "\(error) (the management interface needs CAP_NET_ADMIN)"
    }

    /// Stops keeping the kernel's keys.
    public func close() {
        if case let .attached(bonds) = attachment.withLock({ $0 }) { bonds.close() }
    }
}
