import Configuration
import Foundation
import SAML
import Synchronization
import SystemPackage

/// Where the settings come from: swift-configuration's providers, the command line over the environment
/// over the JSON file, each refusing what it does not know.
extension ServiceConfiguration {
    /// Reads the service configuration from the JSON file at `path`, the environment's `SAML_SERVICE_*`
    /// variables over it, and `arguments` (`--store-timeout-seconds 3`, `--allow-development-keys`: every
    /// setting but the secrets) over both. The settings are the keys ``init(reading:)`` reads (one read
    /// line each, with whether it is a secret); ``ServiceSettings`` says how each provider spells them.
    ///
    /// Refused, with `configuration.invalid`: a member, a `SAML_SERVICE_*` variable or an option that is not
    /// a setting (a misspelt security setting must not be silently ignored), a secret on the command line, a
    /// value of the wrong type or out of range. No error quotes a secret.
    ///
    /// `accessReporter` sees every read (swift-configuration's `AccessLogger` logs where each value came
    /// from, secrets redacted).
    public static func load(
        contentsOf path: String, arguments: [String] = [], environment: [String: String] = ProcessInfo.processInfo.environment,
        accessReporter: (any AccessReporter)? = nil
    ) async throws -> ServiceConfiguration {
        let file = try ConfigurationFile(path: path)
        // The options by their variables' names, read with the environment's conversions: swift-configuration's
        // CommandLineArgumentsProvider splits every value at its commas, which cuts a multi-host PostgreSQL URL
        // (`--store postgres://u@db1,db2/saml`) or a URL's query in two; a list is still split at them.
        let options = try options(arguments)
        // Judged before anything is read: a secret on the command line is refused as such, whatever else is
        // wrong (a misspelt security setting must not be silently ignored).
        let known = ServiceSettings.known
        try refuseUnknown(options: options, known: known)
        try refuseUnknown(environment: environment, known: known)
        try file.refuseUnknown(known: known)
        let commandLine = EnvironmentVariablesProvider(environmentVariables: options.mapValues(\.value))
            .prefixKeys(with: ConfigKey(ServiceSettings.environmentScope))
        let environmentProvider = EnvironmentVariablesProvider(environmentVariables: environment)
            .prefixKeys(with: ConfigKey(ServiceSettings.environmentScope))
        let fileProvider: FileProvider<JSONSnapshot>
        do {
            fileProvider = try await FileProvider(filePath: FilePath(path))
        } catch {
            throw SAMLError(.configurationInvalid, "expected a JSON object of settings in \(quoted(path)), found another form")
        }
        let refused = RefusedValues(path: path)
        let reporter = accessReporter.map { BroadcastingAccessReporter(upstreams: [refused, $0]) as any AccessReporter } ?? refused
        let settings = SettingsReader(
            reader: ConfigReader(providers: [commandLine, environmentProvider, fileProvider], accessReporter: reporter),
            overrides: ConfigReader(providers: [commandLine, environmentProvider], accessReporter: reporter),
            file: file, environment: environment)
        let configuration = try ServiceConfiguration(reading: settings)
        try refused.check()
        return configuration
    }

    /// The options as `SAML_SERVICE_*` names, each with its value and the option as written: `--name value`,
    /// `--name=value`, several values after one option joined by commas, a flag alone `true`. A value comes
    /// only after an option; which options are settings is judged against ``ServiceSettings/known``.
    private static func options(_ arguments: [String]) throws -> [String: (option: String, value: String)] {
        var values: [String: (option: String, values: [String])] = [:]
        var current: String?
        for argument in arguments {
            guard argument.hasPrefix("--") else {
                guard let current else {
                    throw SAMLError(.configurationInvalid, "expected --setting [value] options, found a value before any option")
                }
                values[current]?.values.append(argument)
                continue
            }
            let name = String(argument.prefix { $0 != "=" })
            let variable = ServiceSettings.environmentName(option: name)
            values[variable, default: (name, [])].values += argument.count > name.count ? [String(argument.dropFirst(name.count + 1))] : []
            current = argument.count > name.count ? nil : variable
        }
        return values.mapValues { ($0.option, $0.values.isEmpty ? "true" : $0.values.joined(separator: ",")) }
    }

    /// Every option names a setting that is not a secret (every user of the machine can read a process's
    /// arguments).
    private static func refuseUnknown(options: [String: (option: String, value: String)], known: [String: ServiceSettings.Setting]) throws {
        let byVariable = Dictionary(
            known.values.map { (ServiceSettings.environmentName($0.key), $0) }, uniquingKeysWith: { first, _ in first })
        for (variable, given) in options.sorted(by: { $0.key < $1.key }) {
            guard let setting = byVariable[variable], ServiceSettings.optionName(setting.key) == given.option else {
                throw SAMLError(
                    .configurationInvalid, "expected a setting's option (docs/service.md, \"Configuration\"), found \(quoted(given.option))"
                )
            }
            if setting.isSecret {
                throw SAMLError(
                    .configurationInvalid,
                    "expected \(setting.key) from \(variable) or \(setting.key)File, found \(given.option) on the command line, where any user of the machine can read it"
                )
            }
        }
    }

    /// Every `SAML_SERVICE_*` variable names a setting (or is `SAML_SERVICE_CONFIG`, the file's path).
    private static func refuseUnknown(environment: [String: String], known: [String: ServiceSettings.Setting]) throws {
        let names = Set(known.keys.map { ServiceSettings.environmentName($0) }).union(["SAML_SERVICE_CONFIG"])
        let prefix = ServiceSettings.environmentName("")  // "SAML_SERVICE_"
        if let unknown = environment.keys.filter({ $0.hasPrefix(prefix) && !names.contains($0) }).sorted().first {
            throw SAMLError(
                .configurationInvalid, "expected only settings' variables (docs/service.md, \"Configuration\"), found \(unknown)")
        }
    }
}

/// The settings as ``ServiceConfiguration/init(reading:)`` reads them: typed, ranged, paths from the file
/// relative to it.
struct SettingsReader {
    /// The command line, the environment, the file.
    let reader: ConfigReader
    /// The command line and the environment: a path from them is taken as given.
    let overrides: ConfigReader
    let file: ConfigurationFile
    /// For OpenTelemetry's standard variables.
    let environment: [String: String]
    /// Every key read, with how it may be given: the list of the settings.
    let catalogue = Catalogue()
    /// The object a component's keys are below (`tracing`), or none.
    private var scope: [String] = []

    init(reader: ConfigReader, overrides: ConfigReader, file: ConfigurationFile, environment: [String: String]) {
        self.reader = reader
        self.overrides = overrides
        self.file = file
        self.environment = environment
    }

    /// The reader of a component's own keys, below `name` (`tracing.endpoint` is `endpoint` there).
    func scoped(to name: String) -> SettingsReader {
        var scoped = self
        scoped.scope.append(name)
        return scoped
    }

    /// `key` with the scope's objects before it.
    private func full(_ key: String) -> String { (scope + [key]).joined(separator: ".") }

    /// The settings as they were read.
    final class Catalogue: Sendable {
        private let read = Mutex<[String: ServiceSettings.Setting]>([:])
        func note(_ setting: ServiceSettings.Setting) { read.withLock { $0[setting.key] = setting } }
        var settings: [String: ServiceSettings.Setting] { read.withLock { $0 } }
    }

    /// A secret (`secret`): never on the command line, never quoted, marked secret for
    /// swift-configuration's reporters.
    func string(_ name: String, secret: Bool = false) -> String? {
        let key = full(name)
        catalogue.note(.init(key: key, isSecret: secret))
        return reader.string(forKey: ConfigKey(key), isSecret: secret)
    }

    /// `inFile` false: not from the file (``ServiceSettings/Setting/inFile``).
    func bool(_ name: String, inFile: Bool = true) -> Bool? {
        let key = full(name)
        catalogue.note(.init(key: key, inFile: inFile))
        return reader.bool(forKey: ConfigKey(key))
    }

    /// A list: a JSON array, or entries separated by commas (a secret's also by lines).
    func strings(_ name: String, secret: Bool = false) -> [String]? {
        let key = full(name)
        catalogue.note(.init(key: key, isSecret: secret))
        guard let values = reader.stringArray(forKey: ConfigKey(key), isSecret: secret) else { return nil }
        return secret ? values.flatMap(ServiceConfiguration.entries) : values
    }

    func int(_ name: String, in range: ClosedRange<Int>) throws -> Int? {
        let key = full(name)
        catalogue.note(.init(key: key))
        guard let value = reader.int(forKey: ConfigKey(key)) else { return nil }
        guard range.contains(value) else {
            throw outOfRange(
                key, lower: "\(range.lowerBound)", upper: range.upperBound == .max ? nil : "\(range.upperBound)", found: "\(value)")
        }
        return value
    }

    func double(_ name: String, in range: ClosedRange<Double>) throws -> Double? {
        let key = full(name)
        catalogue.note(.init(key: key))
        guard let value = reader.double(forKey: ConfigKey(key)) else { return nil }
        guard range.contains(value) else {
            throw outOfRange(key, lower: "\(range.lowerBound)", upper: "\(range.upperBound)", found: "\(value)")
        }
        return value
    }

    /// A duration given as a number of `unit`s (at most a century of them).
    func seconds(_ key: String, unit: Duration = .seconds(1), in range: ClosedRange<Double> = 0...3_155_760_000) throws -> Duration? {
        try double(key, in: range).map { unit * $0 }
    }

    /// A path: from the file, relative to the file's folder; from the command line or the environment, as given.
    func path(_ name: String) -> String? {
        let key = full(name)
        catalogue.note(.init(key: key))
        if let value = overrides.string(forKey: ConfigKey(key)) { return value }
        return reader.string(forKey: ConfigKey(key)).map(file.relative)
    }

    /// A map: `name=value` entries from any provider, else the file's JSON object.
    func map(_ name: String) throws -> [String: String]? {
        let key = full(name)
        catalogue.note(.init(key: key))
        guard let entries = reader.stringArray(forKey: ConfigKey(key)) else { return file.maps[key] }
        var map: [String: String] = [:]
        for entry in entries {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                throw SAMLError(.configurationInvalid, "expected \(key) as name=value entries, found another form")
            }
            map[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        return map
    }

    private func outOfRange(_ key: String, lower: String, upper: String?, found: String) -> SAMLError {
        SAMLError(
            .configurationInvalid,
            "expected \(key) " + (upper.map { "from \(lower) to \($0)" } ?? "of at least \(lower)") + ", found \(found)")
    }
}

/// swift-configuration's reporter of every read: a provider that failed (a value of the wrong type) is
/// kept, named by where it came from but never by its value, and ``check()`` throws the first.
final class RefusedValues: AccessReporter {
    private let sources: [String]
    private let refused = Mutex<[String]>([])

    init(path: String) {
        sources = ["the command line", "the environment", quoted(path)]
    }

    func report(_ event: AccessEvent) {
        let key = event.metadata.key.components.joined(separator: ".")
        let spellings = [ServiceSettings.optionName(key), ServiceSettings.environmentName(key), quoted(key)]
        for (index, result) in event.providerResults.enumerated() {
            guard case .failure = result.result else { continue }
            let source = index < sources.count ? "\(spellings[index]) in \(sources[index])" : key
            refused.withLock { $0.append("expected \(event.metadata.valueType) for \(source), found another value") }
        }
        if event.conversionError != nil {
            refused.withLock { $0.append("expected \(event.metadata.valueType) for \(key), found another value") }
        }
    }

    func check() throws {
        if let first = refused.withLock({ $0.first }) { throw SAMLError(.configurationInvalid, first) }
    }
}
