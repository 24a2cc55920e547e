import AppleSSO
import HTTPTypes
import Hummingbird

/// The API's routes, family by family: each family a group of routes behind the same middleware
/// (``AnswerMiddleware``, then ``V1FormatMiddleware`` on REST API v1's, then ``BearerMiddleware`` unless
/// public), its routes adding their own (``BodyMiddleware``, ``AdmissionMiddleware``). Every path
/// registered through a family answers the methods it was not registered for with `405` and `Allow`,
/// after the family's middleware (an unauthenticated caller learns nothing of which methods a path
/// answers; a v1 client gets v1's format): the methods come from the routes themselves.
final class ServiceRoutes {
    private let router: Router<ServiceRequestContext>
    let service: TokenExchangeService
    /// The middleware the routes add, built once.
    let form: BodyMiddleware
    let json: BodyMiddleware
    let admission: AdmissionMiddleware
    private var families: [Family] = []

    init(router: Router<ServiceRequestContext>, service: TokenExchangeService, limit: Int, admission: AdmissionControl) {
        self.router = router
        self.service = service
        form = BodyMiddleware(limit: limit, mediaType: .form)
        json = BodyMiddleware(limit: limit, mediaType: .json)
        self.admission = AdmissionMiddleware(admission: admission, metrics: service.metrics)
    }

    /// A new family: `verdict` names the verdict metric's endpoint of its routes (the verifying ones),
    /// `v1` gives REST API v1's representations, `authenticated` false leaves out the bearer token.
    func family(verdict: String? = nil, v1: Bool = false, authenticated: Bool = true) -> Family {
        func group(verdict: String?) -> RouterGroup<ServiceRequestContext> {
            let group = router.group().add(middleware: AnswerMiddleware(service: service, verdict: verdict))
                .add(middleware: RequestTextMiddleware(v1: v1))
            if v1 { group.add(middleware: V1FormatMiddleware()) }
            if authenticated { group.add(middleware: BearerMiddleware(credentials: service.credentials)) }
            return group
        }
        // The 405s go through the same middleware but the verdict metric: a method probe, refused for its
        // token or its method, is not a verdict of the exchange.
        let family = Family(group(verdict: verdict), methods: group(verdict: nil))
        families.append(family)
        return family
    }

    /// `405 Method Not Allowed` with `Allow` for every method a registered path does not answer (the
    /// Enhanced Error Codes list has no code for it: `method_not_allowed`, an extension, docs/service.md).
    func addMethodNotAllowed() {
        let all: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch, .head, .options]
        var allowed: [String: [HTTPRequest.Method]] = [:]
        for family in families {
            for (path, method) in family.registered { allowed[path.description, default: []].append(method) }
        }
        var done: Set<String> = []
        for family in families {
            for (path, _) in family.registered where done.insert(path.description).inserted {
                let methods = allowed[path.description] ?? []
                let allow = methods.map(\.rawValue).joined(separator: ", ")
                for method in all where !methods.contains(method) {
                    family.methods.on(path, method: method) { _, _ in Self.methodNotAllowed(allow: allow) }
                }
            }
        }
    }

    private static func methodNotAllowed(allow: String) -> ServiceAnswer {
        var answer = ServiceAnswer.error(
            EnhancedError(
                status: 405, code: "method_not_allowed", message: "The HTTP method is not allowed for this resource.", details: nil))
        answer.allow = allow
        return answer
    }

    /// One family's group, recording the paths and methods registered through it (and through the groups
    /// made from it: a route's own middleware).
    final class Family: RouterMethods {
        typealias Context = ServiceRequestContext
        let inner: RouterGroup<Context>
        /// The family's middleware without the verdict metric: where its 405s are answered.
        let methods: RouterGroup<Context>
        private(set) var registered: [(path: RouterPath, method: HTTPRequest.Method)] = []

        init(_ group: RouterGroup<Context>, methods: RouterGroup<Context>) {
            inner = group
            self.methods = methods
        }

        @discardableResult func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: Responder) -> Self
        where Responder.Context == Context {
            registered.append((path, method))
            inner.on(path, method: method, responder: responder)
            return self
        }

        @discardableResult func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
            inner.add(middleware: middleware)
            return self
        }
    }
}
