import Foundation

extension UUID {
    /// The UUID whose 16 bytes start at `bytes` (a raw baseline's stored key or blob); the nil UUID (all zeros),
    /// which no check accepts, when there are none.
    init(bytesAt bytes: UnsafeRawPointer?) {
        self.init(uuid: bytes?.loadUnaligned(as: uuid_t.self) ?? (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    }
}
