import AppleSSO
import ArgumentParser
import Foundation
import SAML
import SAMLMockIdP
import SAMLPostgres
import SAMLService

struct ExchangeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "exchange",
        abstract: "The Token Exchange on a request body, with state in the store: the profile (exit 0) or the error object (exit 1).")

    @Option(help: "The MVPD configuration.") var config: String
    @Option(help: "The trust file (MVPD id -> IdP).") var trustFile: String
    @Option(help: "The AP-Partner-Framework-Status header value.") var pfs: String
    @Option(help: "The expected Audience.") var audience: String?
    @Flag(help: "Accept responses that answer no request (IdP-initiated).") var allowUnsolicited = false
    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The request body, or - for standard input.") var body: String = "-"

    func run() async throws {
        let input = try read(body)
        let configuration = try MVPDConfiguration.decode(try read(config))
        let identityProviders = try TrustFile.load(contentsOf: trustFile)
        let result: Result<AppleSSOProfile, EnhancedError> = try await storeOptions.with { store in
            let template = SAMLResponseVerifier.Configuration.template(
                audience: ExpectedValue(orSkip: audience), destination: .skip,
                replay: .store(store, unsolicited: allowUnsolicited ? .allow : .refuse))
            let exchange = TokenExchange(configuration: configuration, trust: try TrustRegistry(identityProviders, template: template))
            do throws(EnhancedError) {
                return .success(try await exchange.exchange(body: input, partnerFrameworkStatus: pfs))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let profile):
            FileHandle.standardOutput.write(Data(profile.json + [0x0A]))
        case .failure(let error):
            FileHandle.standardOutput.write(Data(error.json + [0x0A]))
            Foundation.exit(1)
        }
    }
}
