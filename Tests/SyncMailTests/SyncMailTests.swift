import SyncMail
import Testing

@Suite struct SyncMailModuleTests {
    @Test func moduleIsNamed() {
        #expect(String(describing: SyncMail.self) == "SyncMail")
    }
}
