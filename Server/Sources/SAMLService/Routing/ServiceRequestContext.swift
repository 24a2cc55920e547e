import Hummingbird
import Synchronization

/// What a request of the API has established as it goes through the middleware (``ServiceRoutes``): its
/// headers read once (``AnswerMiddleware``), the representation its answers take (``V1FormatMiddleware``),
/// its body read within the limit (``BodyMiddleware``), and, for ``AnswerMiddleware`` to read
/// after `next`, the answer it got (``Outcome``, a reference: a context is passed down by value).
public struct ServiceRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The headers the endpoints read.
    public internal(set) var headers = RequestHeaders()
    /// The body: a form, or JSON on the decisions (empty on the routes that read none).
    public internal(set) var body: [UInt8] = []
    /// The request's verification slot on the admitted routes (``AdmissionMiddleware``): given up when it
    /// reaches the store.
    var admission: AdmissionControl.Slot?
    /// REST API v2's JSON, or REST API v1's JSON or XML.
    public internal(set) var representation = Representation.v2
    /// The answer the request got, recorded when it is rendered.
    let outcome = Outcome()

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
    }

    /// How answers are written.
    public enum Representation: Sendable, Equatable {
        case v2
        case v1(V1Format)
    }

    /// REST API v1's representations.
    public enum V1Format: Sendable, Equatable {
        case json, xml
    }

    /// The answer of one request, as the access log, the verdict metric and the span need it.
    final class Outcome: Sendable {
        private let answer = Mutex<Recorded?>(nil)

        struct Recorded: Sendable {
            let status: Int
            let code: String
            let mvpd: String?
            let trace: String?
            let detail: String?
        }

        func record(_ recorded: Recorded) { answer.withLock { $0 = recorded } }
        var recorded: Recorded? { answer.withLock { $0 } }
    }
}
