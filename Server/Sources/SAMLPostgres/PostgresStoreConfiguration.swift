import Foundation
import NIOSSL
import PostgresNIO
import SAML

extension PostgresStateStore {
    /// Where the store connects and how: one PostgreSQL server, or several of which one is the primary
    /// (libpq's multi-host URL and `target_session_attrs`), and the store's deadlines, pool and batching.
    public struct Configuration: Sendable {
        /// One server of the URL's host list.
        public struct Endpoint: Sendable, Hashable {
            public var host: String
            public var port: Int

            public init(host: String, port: Int = 5432) {
                self.host = host
                self.port = port
            }
        }

        /// libpq's `target_session_attrs` values a store that writes can use.
        public enum TargetSessionAttributes: String, Sendable, CaseIterable {
            /// The first server that accepts the connection (libpq's default). With several hosts, writes
            /// fail on a standby: use ``readWrite``.
            case any
            /// A server that accepts writes (`SHOW transaction_read_only` is `off`): after a failover,
            /// whichever node was promoted. The default when the URL lists several hosts.
            case readWrite = "read-write"
            /// A server not in recovery (`pg_is_in_recovery()` is false).
            case primary
        }

        /// The servers, tried in order for each new connection; the first one that matches
        /// ``targetSessionAttributes`` is used.
        public var endpoints: [Endpoint]
        public var username: String
        public var password: String?
        public var database: String?
        /// Which server of ``endpoints`` a connection must reach.
        public var targetSessionAttributes: TargetSessionAttributes
        /// The deadline of one operation, its wait in the queue included. Default 2 s.
        public var timeout: Duration = .seconds(2)
        /// The most connections to the database, each running one batch at a time. Default 4: with
        /// group commit, a few connections carry thousands of logins a second (BENCHMARKS.md), and fewer
        /// connections make larger batches.
        public var maximumConnections = 4
        /// The most consumes and profile saves one transaction carries. Default 64.
        public var maximumBatch = 64
        /// The batching window: while logins arrive, on average, more often than this (per instance), a
        /// transaction that would carry fewer than ``batchTarget`` writes waits until that many are
        /// queued, or this long, whichever comes first, then carries them too. Default 20 ms; zero: off;
        /// at most 50 ms. A quiet store (logins further apart) never waits; a busy one fills its target
        /// sooner. A commit with a synchronous standby costs the database far more than a login's rows:
        /// measured on one 2-core machine with two instances at 500 requests a second
        /// (`RATE=500 scripts/bench/store-bench`), 4.0 logins a commit and 355 µs of database CPU a
        /// login, against 1.0 and 923 µs without a window (BENCHMARKS.md, docs/service.md).
        public var batchWindow: Duration = .milliseconds(20)
        /// The transaction size a small transaction waits for, up to ``batchWindow``. Default 6.
        public var batchTarget = 6
        /// The most operations waiting for a connection; beyond it an operation fails closed at once
        /// (``SAMLError/Code/storeUnavailable``) instead of queueing past its deadline. Default 4096.
        public var maximumQueue = 4096
        /// How many assertion IDs this process remembers as used (accepted or refused as replays by the
        /// database), to refuse a known replay without a round trip. 0 turns it off. Default 65,536.
        public var recentlyUsedCapacity = 65_536
        /// How often expired rows are deleted. Default 60 s.
        public var cleanupInterval: Duration = .seconds(60)
        /// How many live profiles the profile directory (``ProfileDirectory``) holds in memory, about 40
        /// bytes each: with it, whether a device has a profile is answered without the database. 0 turns
        /// it off; when the live profiles outnumber it, it turns itself off (logged) and those questions
        /// read the database again. Default 1,000,000.
        public var profileDirectoryCapacity = 1_000_000
        /// How often the profile directory reads the profiles written since its last read: the longest a
        /// profile saved by another instance goes unseen here, while the database answers. Default 250 ms.
        public var profileDirectoryInterval: Duration = .milliseconds(250)
        /// The most changed profiles one read of the directory takes before it loads everything again
        /// instead (50,000); for tests.
        package var profileDirectoryChangesLimit = 50_000
        /// TLS to the database, as libpq's `sslmode`. Default ``SSLMode/prefer`` (libpq's default).
        public var sslMode: SSLMode = .prefer
        /// A PEM file of the certificate authorities that may sign the server's certificate (libpq's
        /// `sslrootcert`), for ``SSLMode/verifyCA`` and ``SSLMode/verifyFull``; nil: the system's trust roots.
        public var sslRootCertificatePath: String?

        /// Told of each connection the store opens: whether it negotiated TLS (`yes`, `no`, or `unknown`
        /// when the server would not say); the service counts them (`saml_store_connections_total{tls}`).
        public var connectionObserver: (@Sendable (_ tls: String) -> Void)?

        /// The hosts of the list reached over the network (not loopback) while ``sslMode`` lets a
        /// connection go without TLS (`disable`, `prefer`): where a password and every login's row could
        /// cross a network in plaintext. The service refuses to start with any unless told otherwise.
        public var hostsWithoutRequiredTLS: [String] {
            guard sslMode == .disable || sslMode == .prefer else { return [] }
            return endpoints.map(\.host).filter { !Self.isLoopback($0) }
        }

        static func isLoopback(_ host: String) -> Bool {
            let lowered = host.lowercased()
            // Not `*.localhost`: the C library's resolver sends it to DNS like any other name.
            if lowered == "localhost" || lowered == "::1" { return true }
            let octets = lowered.split(separator: ".", omittingEmptySubsequences: false)
            return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
        }

        /// The first server's host (a URL with one host: its host).
        public var host: String {
            get { endpoints[0].host }
            set { endpoints[0].host = newValue }
        }
        /// The first server's port.
        public var port: Int {
            get { endpoints[0].port }
            set { endpoints[0].port = newValue }
        }

        /// libpq's `sslmode` values that postgres-nio can honour (`allow`, plaintext first, cannot be).
        public enum SSLMode: String, Sendable, CaseIterable {
            /// Plaintext only.
            case disable
            /// TLS when the server offers it, else plaintext; the certificate is not checked (protects
            /// against a passive eavesdropper only).
            case prefer
            /// TLS or no connection; the certificate is not checked (as libpq, unless a root certificate is
            /// given: then as ``verifyCA``).
            case require
            /// TLS, the certificate signed by a trusted authority; any host name.
            case verifyCA = "verify-ca"
            /// TLS, the certificate signed by a trusted authority and naming the host (DNS name, or IP
            /// address for an IP host). Use this across any network you do not control.
            case verifyFull = "verify-full"
        }

        public init(host: String, port: Int = 5432, username: String, password: String? = nil, database: String? = nil) {
            self.init(endpoints: [Endpoint(host: host, port: port)], username: username, password: password, database: database)
        }

        /// Several servers, of which the store uses the one that matches `targetSessionAttributes` (default:
        /// ``TargetSessionAttributes/readWrite`` with several servers, ``TargetSessionAttributes/any`` with one).
        public init(
            endpoints: [Endpoint], username: String, password: String? = nil, database: String? = nil,
            targetSessionAttributes: TargetSessionAttributes? = nil
        ) {
            precondition(!endpoints.isEmpty, "a PostgreSQL store needs at least one server")
            self.endpoints = endpoints
            self.username = username
            self.password = password
            self.database = database
            self.targetSessionAttributes = targetSessionAttributes ?? (endpoints.count > 1 ? .readWrite : .any)
        }

        /// libpq's URL: `postgres://user[:password]@host[:port][,host[:port]...]/database[?parameters]` (also
        /// `postgresql://`; an IPv6 host in brackets). Parameters:
        /// - `target_session_attrs`: `any`, `read-write` or `primary` (default `read-write` with several
        ///   hosts, `any` with one); `standby`, `read-only` and `prefer-standby` are refused (the store writes);
        /// - `sslmode`: one of libpq's `disable`, `prefer` (default), `require`, `verify-ca`, `verify-full`;
        /// - `sslrootcert`: a readable PEM file, or `system`; needs `require` or stronger.
        ///
        /// Any other parameter, a repeated one or another value is a configuration error, never ignored.
        /// Messages never quote the URL.
        public init(url: String) throws {
            let parsed = try PostgresURL(url)
            self.init(
                endpoints: parsed.endpoints, username: parsed.username, password: parsed.password, database: parsed.database)
            var rootCertificate: String?
            var mode: SSLMode?
            for (name, value) in parsed.parameters {
                switch name {
                case "sslmode":
                    guard let value = SSLMode(rawValue: value) else {
                        throw SAMLError(
                            .configurationInvalid,
                            "expected sslmode disable, prefer, require, verify-ca or verify-full in the store URL, found another value")
                    }
                    mode = value
                case "sslrootcert":
                    guard !value.isEmpty else {
                        throw SAMLError(
                            .configurationInvalid, "expected a file path or system for sslrootcert in the store URL, found none")
                    }
                    rootCertificate = value
                case "target_session_attrs":
                    guard let value = TargetSessionAttributes(rawValue: value) else {
                        throw SAMLError(
                            .configurationInvalid,
                            "expected target_session_attrs any, read-write or primary in the store URL (the store writes), found another value"
                        )
                    }
                    targetSessionAttributes = value
                default:
                    throw SAMLError(
                        .configurationInvalid,
                        "expected only sslmode, sslrootcert and target_session_attrs as parameters of the store URL, found another (not ignored: it could weaken the connection)"
                    )
                }
            }
            sslMode = mode ?? .prefer
            if let rootCertificate {
                guard sslMode != .disable && sslMode != .prefer else {
                    throw SAMLError(
                        .configurationInvalid,
                        "expected sslmode require, verify-ca or verify-full with sslrootcert, found \(sslMode.rawValue) (the certificate would not be checked)"
                    )
                }
                // libpq: require with a root certificate verifies the chain, as verify-ca.
                if sslMode == .require { sslMode = .verifyCA }
                if rootCertificate != "system" {
                    guard let certificates = try? NIOSSLCertificate.fromPEMFile(rootCertificate), !certificates.isEmpty else {
                        throw SAMLError(
                            .configurationInvalid,
                            "expected a readable PEM file of CA certificates for sslrootcert, found none at that path")
                    }
                    sslRootCertificatePath = rootCertificate
                }
            }
        }

        /// postgres-nio's TLS setting for ``sslMode`` (NIOSSL client configuration: TLS 1.2 or later).
        package func makeClientTLS() throws -> PostgresConnection.Configuration.TLS {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let sslRootCertificatePath { tls.trustRoots = .file(sslRootCertificatePath) }
            switch sslMode {
            case .disable:
                return .disable
            case .prefer:
                tls.certificateVerification = .none
                return .prefer(try NIOSSLContext(configuration: tls))
            case .require:
                tls.certificateVerification = .none
                return .require(try NIOSSLContext(configuration: tls))
            case .verifyCA:
                tls.certificateVerification = .noHostnameVerification
                return .require(try NIOSSLContext(configuration: tls))
            case .verifyFull:
                tls.certificateVerification = .fullVerification
                return .require(try NIOSSLContext(configuration: tls))
            }
        }

        /// The server-side `statement_timeout` (ms) for the deadline: at least 1 (0 would mean none).
        package var statementTimeoutMilliseconds: Int64 {
            let (seconds, attoseconds) = timeout.components
            return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        }

        /// postgres-nio's configuration of a connection to `endpoint`: TLS, and the deadline on the server
        /// too (postgres-nio never cancels a running statement, so a statement that outlives the deadline
        /// is ended by the server).
        package func connection(to endpoint: Endpoint, tls: PostgresConnection.Configuration.TLS) -> PostgresConnection.Configuration {
            var configuration = PostgresConnection.Configuration(
                host: endpoint.host, port: endpoint.port, username: username, password: password, database: database, tls: tls)
            configuration.options.connectTimeout = .init(timeout)
            configuration.options.additionalStartupParameters = [
                ("statement_timeout", "\(statementTimeoutMilliseconds)"),
                ("idle_in_transaction_session_timeout", "\(statementTimeoutMilliseconds * 2)"),
                ("application_name", "swift-saml"),
                // The batch statement is planned once per connection (a generic plan) instead of before each
                // run (about 0.2 ms a batch, more than running it). Its lookups are written so that this plan
                // reads an index per row even when it is made while the table is empty (GroupCommit).
                ("plan_cache_mode", "force_generic_plan"),
            ]
            return configuration
        }
    }
}
