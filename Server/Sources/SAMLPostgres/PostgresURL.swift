import Foundation
import SAML

/// A libpq connection URL taken apart: user, password, the host list, database and parameters (each at
/// most once), percent-decoded.
struct PostgresURL {
    var username: String
    var password: String?
    var endpoints: [PostgresStateStore.Configuration.Endpoint]
    var database: String?
    var parameters: [(String, String)]

    init(_ url: String) throws {
        let form = SAMLError(
            .configurationInvalid, "expected postgres://user[:password]@host[:port][,host[:port]...]/database, found another form")
        var rest = Substring(url)
        if rest.hasPrefix("postgres://") {
            rest = rest.dropFirst("postgres://".count)
        } else if rest.hasPrefix("postgresql://") {
            rest = rest.dropFirst("postgresql://".count)
        } else {
            throw form
        }
        var query: Substring?
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        guard let at = rest.lastIndex(of: "@") else { throw form }
        let userInfo = rest[..<at]
        let hostList = rest[rest.index(after: at)...]
        func decode(_ text: Substring) throws -> String {
            guard let decoded = String(text).removingPercentEncoding else { throw form }
            return decoded
        }
        if let colon = userInfo.firstIndex(of: ":") {
            username = try decode(userInfo[..<colon])
            password = try decode(userInfo[userInfo.index(after: colon)...])
        } else {
            username = try decode(userInfo)
        }
        guard !username.isEmpty else { throw form }
        endpoints = []
        for item in hostList.split(separator: ",", omittingEmptySubsequences: false) {
            var host: Substring
            var portText: Substring?
            if item.hasPrefix("[") {
                guard let close = item.firstIndex(of: "]") else { throw form }
                host = item[item.index(after: item.startIndex)..<close]
                let after = item[item.index(after: close)...]
                if !after.isEmpty {
                    guard after.hasPrefix(":") else { throw form }
                    portText = after.dropFirst()
                }
            } else if let colon = item.firstIndex(of: ":") {
                host = item[..<colon]
                portText = item[item.index(after: colon)...]
            } else {
                host = item
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || "-._:".contains($0) }) else { throw form }
            var port = 5432
            if let portText {
                guard let value = Int(portText), (1...65535).contains(value) else { throw form }
                port = value
            }
            endpoints.append(.init(host: String(host), port: port))
        }
        guard !endpoints.isEmpty, endpoints.count <= 16 else { throw form }
        database = path.isEmpty ? nil : try decode(path)
        parameters = []
        var seen: Set<String> = []
        for pair in (query ?? "").split(separator: "&", omittingEmptySubsequences: false) where query != nil {
            let name = try decode(pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0])
            guard seen.insert(name).inserted else {
                throw SAMLError(.configurationInvalid, "expected each URL parameter of the store at most once, found one repeated")
            }
            guard let equals = pair.firstIndex(of: "=") else {
                throw SAMLError(.configurationInvalid, "expected name=value parameters in the store URL, found a name alone")
            }
            parameters.append((name, try decode(pair[pair.index(after: equals)...])))
        }
    }
}
