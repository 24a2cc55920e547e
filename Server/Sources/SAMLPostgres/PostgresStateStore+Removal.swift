import AppleSSO
import PostgresNIO
import SAML

/// Logout and an operator's sign-out: profiles deleted from `saml_profiles`. Schema 6's trigger records
/// each deletion in `saml_profile_removals`, which every instance's profile directory follows: within
/// ``Configuration/profileDirectoryInterval`` times 4 (1 s by default) no instance answers the device as
/// signed in; `GET .../profiles` and the decisions read the table itself, at once.
extension PostgresStateStore: ProfileRemoval {
    public func removeProfiles(serviceProvider: String, device: String, mvpd: String?, now: SAMLInstant) async throws -> [String] {
        let removed = try await withConnection("remove profiles", servesRequest: true) { connection in
            let rows = try await connection.query(
                """
                DELETE FROM saml_profiles WHERE service_provider = \(serviceProvider) AND device = \(device)
                AND (\(mvpd)::text IS NULL OR mvpd = \(mvpd)) RETURNING mvpd, expires_at > now()
                """, logger: self.logger)
            var removed: [(String, Bool)] = []
            for try await (mvpd, live) in rows.decode((String, Bool).self) { removed.append((mvpd, live)) }
            return removed
        }
        for (id, _) in removed { directory?.noteRemoved(serviceProvider: serviceProvider, device: device, mvpd: id) }
        return removed.filter(\.1).map(\.0).sorted()
    }

    public func removeProfiles(serviceProvider: String, mvpd: String, attribute: String, value: String) async throws -> Int {
        // No index serves this: a scan of the MVPD's rows, run by an operator, under the store's deadline.
        let removed = try await withConnection("remove a subscriber's profiles") { connection in
            let rows = try await connection.query(
                """
                DELETE FROM saml_profiles WHERE service_provider = \(serviceProvider) AND mvpd = \(mvpd)
                AND (profile::jsonb -> 'attributes' -> \(attribute) -> 'value') @> to_jsonb(\(value)::text) RETURNING device
                """, logger: self.logger)
            var devices: [String] = []
            for try await device in rows.decode(String.self) { devices.append(device) }
            return devices
        }
        for device in removed { directory?.noteRemoved(serviceProvider: serviceProvider, device: device, mvpd: mvpd) }
        return removed.count
    }
}
