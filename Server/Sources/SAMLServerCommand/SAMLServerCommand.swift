import AppleSSO
import ArgumentParser
import Foundation
import NIOCore
import NIOPosix
import SAML
import SAMLMockIdP
import SAMLPostgres
import SAMLService

/// `saml-server`: the commands that share state through a store, so that several processes given the
/// same `--store` URL act as several instances of one service. In this package (not in `saml`) because
/// PostgreSQL brings SwiftNIO. Exit status: 0 success, 1 rejected, 2 usage or I/O error.
@main
struct SAMLServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "saml-server",
        abstract: "The Token Exchange service, its load harness, and SAML requests and verification with state shared through PostgreSQL.",
        version: SAMLVersion.description,
        subcommands: [
            ServeCommand.self, LoadCommand.self, RequestCommand.self, VerifyCommand.self, ExchangeCommand.self, BenchCommand.self,
            ProbeCommand.self,
        ]
    )

    /// Swift concurrency's global executor is chosen and installed first (``GlobalExecutor``).
    static func main() async {
        if let mismatch = GlobalExecutor.selected.mismatch { FileHandle.standardError.write(Data("saml-server: \(mismatch)\n".utf8)) }
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

/// `--store postgres://user@host:port/db` or `memory`.
struct StoreOptions: ParsableArguments {
    @Option(help: "The state store: postgres://user[:password]@host[:port]/database, or memory (this process only).")
    var store: String = "memory"

    @Option(help: "Seconds before a store operation is abandoned (the verification then fails closed).")
    var storeTimeout: Double = 2

    /// Runs `body` with the store running and its schema prepared.
    func with<T: Sendable>(_ body: @Sendable (any SAMLStateStore) async throws -> T) async throws -> T {
        if store == "memory" { return try await body(InMemoryStateStore()) }
        var configuration = try PostgresStateStore.Configuration(url: store)
        configuration.timeout = .milliseconds(Int64(storeTimeout * 1000))
        let postgres = PostgresStateStore(configuration)
        let running = Task { await postgres.run() }
        defer { running.cancel() }
        try await postgres.prepare()
        return try await body(postgres)
    }
}

func fail(_ error: SAMLError, json: Bool = false) -> Never {
    if !json { FileHandle.standardError.write(Data("error: \(error.code): \(error.message)\n".utf8)) }
    Foundation.exit(1)
}

func read(_ path: String) throws -> [UInt8] {
    if path == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
    guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("cannot read \(path)") }
    return Array(data)
}
